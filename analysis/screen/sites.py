"""The sites to screen: any vector layer, one polygon feature per site, with its id."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..crs import crs_of, to_crs
from ..errors import InputError
from ..geometry import in_family, polygon_part
from ..io.vector import layer_crs, list_layers, read_layer
from ..values import has_text

__all__ = ["Sites", "read_sites", "ID_FIELDS"]

# The id field looked for where none is named (in this order, any case): else the feature id.
ID_FIELDS = ("site_id", "parcel_id", "permit_id", "id")


@dataclass
class Sites:
    """Sites in the area CRS: ids (text, unique), polygons, and the repairs made."""

    path: str
    layer: str
    id_field: Optional[str]
    ids: np.ndarray
    geometries: np.ndarray
    crs: CRS
    repaired: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def boxes(self) -> np.ndarray:
        """Each site's (minx, miny, maxx, maxy)."""
        return shapely.bounds(self.geometries)


def read_sites(
    path: str | Path, area_crs, layer: Optional[str] = None, id_field: Optional[str] = None
) -> Sites:
    """The sites of ``path`` (its ``layer``; by default the only layer with geometry: two are refused) in
    ``area_crs``. Each feature must be a polygon with an id (``id_field``, else the first of
    ``ID_FIELDS`` present, else its feature id); a site without a CRS, a geometry or an id, or
    with an id another site has, is an InputError naming it. Invalid polygons are repaired."""
    path = Path(path)
    names = list_layers(path)
    if layer is None:
        layer = _first_spatial(path, names)
    elif layer not in names:
        raise InputError(
            f"the layer '{layer}' is missing (layers found: {', '.join(names)})",
            path=path,
            fix="name one of the layers found",
            parameter="layer",
        )
    data = read_layer(path, layer)
    frame = data.frame
    if not data.spatial or not len(frame):
        raise InputError(
            "the layer holds no site polygons",
            path=path,
            layer=layer,
            fix="give a polygon layer, one feature per site",
        )
    if data.crs is None:
        raise InputError(
            "the layer has no coordinate reference system (or an undefined one)",
            path=path,
            layer=layer,
            fix="assign the layer's true CRS in QGIS and save it again",
        )
    id_field = _id_field(path, layer, frame, id_field)
    ids = (
        frame.index.astype(str).to_numpy(dtype=object)
        if id_field is None
        else frame[id_field].to_numpy(dtype=object)
    )
    for fid, value in zip(frame.index, ids):
        if not has_text(value):
            raise InputError(
                "the site has no id",
                path=path,
                layer=layer,
                feature=fid,
                field=id_field,
                fix=f"give every site its {id_field}",
            )
    ids = np.array([_text(v) for v in ids], dtype=object)
    repeated = pd.Index(ids)[pd.Index(ids).duplicated()]
    if len(repeated):
        fid = frame.index[np.flatnonzero(ids == repeated[0])[1]]
        raise InputError(
            f"the site id {repeated[0]!r} is given twice",
            path=path,
            layer=layer,
            feature=fid,
            field=id_field,
            fix="give every site its own id",
        )
    geometries = np.asarray(frame.geometry.values, dtype=object)
    missing = shapely.is_missing(geometries) | shapely.is_empty(geometries)
    wrong = ~missing & ~in_family(geometries, "polygon")
    for bad, why in ((missing, "has no geometry"), (wrong, "is not a polygon")):
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(
                f"site {ids[k]} {why}",
                path=path,
                layer=layer,
                feature=frame.index[k],
                fix="give each site as one polygon (its parcel or permit area)",
            )
    frame = to_crs(frame, crs_of(area_crs))
    geometries = np.asarray(frame.geometry.values, dtype=object)
    invalid = ~shapely.is_valid(geometries)
    if invalid.any():
        geometries = geometries.copy()
        geometries[invalid] = [polygon_part(g) for g in shapely.make_valid(geometries[invalid])]
    return Sites(
        path=str(path),
        layer=layer,
        id_field=id_field,
        ids=ids,
        geometries=geometries,
        crs=crs_of(area_crs),
        repaired=[str(i) for i in ids[invalid]],
    )


def _first_spatial(path, names) -> str:
    """The only layer, else the only one with a CRS (a table has none); two or more with one
    are refused: which holds the sites would be a guess (the first was read without a word)."""
    if not names:
        raise InputError(
            "the file holds no layer", path=path, fix="give a polygon layer, one feature per site"
        )
    if len(names) == 1:
        return names[0]
    spatial = [n for n in names if layer_crs(path, n) is not None]
    if len(spatial) > 1:
        raise InputError(
            f"the file has {len(spatial)} layers with geometry "
            f"({', '.join(spatial)}): which one holds the sites is not said",
            path=path,
            parameter="layer",
            fix="name the layer of the sites",
        )
    return spatial[0] if spatial else names[0]


def _id_field(path, layer, frame, given) -> Optional[str]:
    columns = {str(c).lower(): c for c in frame.columns if c != frame.geometry.name}
    if given is not None:
        if given.lower() not in columns:
            raise InputError(
                f"the id field '{given}' is missing (fields found: "
                f"{', '.join(map(str, columns.values())) or 'none'})",
                path=path,
                layer=layer,
                field=given,
                fix="name one of the fields found",
                parameter="id_field",
            )
        return str(columns[given.lower()])
    return next((str(columns[n]) for n in ID_FIELDS if n in columns), None)


def _text(value) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value).strip()
