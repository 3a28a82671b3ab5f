"""CAD exports (DXF, DWG through GDAL): entities picked by CAD layer name, boundaries as polygons.

GDAL reads a drawing as one layer of entities whose ``Layer`` field holds each entity's CAD layer
name; a closed polyline (how CAD draws a boundary) is read as a closed line, and becomes the
polygon it encloses here.
"""

from __future__ import annotations

import re
from typing import Optional

import numpy as np
import shapely

from ..errors import InputError
from ..geometry import in_family

__all__ = ["CAD_LAYER_FIELD", "cad_areas", "cad_layer_matches"]

CAD_LAYER_FIELD = "Layer"  # GDAL's DXF/DWG field holding each entity's CAD layer name


def cad_layer_matches(
    path, layer, frame, pattern: str, parameter: Optional[str] = "pattern", given_by: str = "the pattern"
):
    """Which entities' CAD layer names match ``pattern`` (whole name) and each one's first group
    (None where the pattern has none or the entity does not match)."""
    try:
        regex = re.compile(pattern)
    except re.error as err:
        raise InputError(
            f"{given_by} {pattern!r} is not a regular expression ({err})",
            parameter=parameter,
            fix="e.g. 'C-PHAS-(\\d+)'",
        ) from None
    column = next((str(c) for c in frame.columns if str(c).lower() == CAD_LAYER_FIELD.lower()), None)
    if column is None:
        raise InputError(
            f"no field '{CAD_LAYER_FIELD}' holding CAD layer names: not a CAD export",
            path=path,
            layer=layer,
            field=CAD_LAYER_FIELD,
            parameter=parameter,
            fix="give a DXF or DWG drawing, or take the phase from a field",
        )
    matched, groups = [], []
    for name in frame[column]:
        match = regex.fullmatch(str(name)) if name is not None else None
        matched.append(match is not None)
        groups.append(match.group(1) if match and regex.groups else None)
    return np.array(matched, dtype=bool), groups


def cad_layer_names(frame) -> list[str]:
    """The CAD layer names the drawing's entities are on, sorted, each once."""
    column = next((str(c) for c in frame.columns if str(c).lower() == CAD_LAYER_FIELD.lower()), None)
    if column is None:
        return []
    return sorted({str(name) for name in frame[column] if name is not None})


def none_matched(
    path, layer, frame, pattern: str, given_by: str, parameter: Optional[str], fix: str
) -> InputError:
    """The error of a CAD layer pattern no entity's layer matches: it lists the layers present."""
    names = cad_layer_names(frame)
    shown = ", ".join(names[:30]) + (f" and {len(names) - 30} more" if len(names) > 30 else "")
    return InputError(
        f"no entity's CAD layer matches {given_by} {pattern!r} (the whole name "
        f"must match; the drawing's CAD layers: {shown or 'none'})",
        path=path,
        layer=layer,
        parameter=parameter,
        fix=fix,
    )


def cad_areas(path, layer, frame) -> np.ndarray:
    """Polygons as they are; a closed line (a CAD polyline boundary) as the polygon it encloses.

    Anything else is an :class:`InputError` naming the feature (a feature without geometry is
    left for the layer's own validation).
    """
    geometries = np.asarray(frame.geometry.values, dtype=object)
    lines = in_family(geometries, "line") & (shapely.get_num_geometries(geometries) == 1)
    closed = np.zeros(len(geometries), dtype=bool)
    single = np.array(
        [shapely.get_geometry(g, 0) if ok else None for g, ok in zip(geometries, lines)], dtype=object
    )
    closed[lines] = shapely.is_closed(single[lines]) & (shapely.get_num_coordinates(single[lines]) >= 4)
    out = geometries.copy()
    rings = np.empty(int(closed.sum()), dtype=object)
    rings[:] = [shapely.Polygon(shapely.get_coordinates(g)) for g in single[closed]]
    out[closed] = rings
    area = in_family(out, "polygon") | shapely.is_missing(out) | shapely.is_empty(out)
    if not area.all():
        bad = int(np.flatnonzero(~area)[0])
        kind = shapely.get_type_id(out[bad])
        raise InputError(
            f"a {shapely.GeometryType(kind).name.title()} where a boundary (a "
            f"polygon or a closed polyline) is required",
            path=path,
            layer=layer,
            feature=frame.index[bad],
            fix="close the polyline, or move the entity to another CAD layer",
        )
    return out
