"""Disturbance polygons of a phasing plan from any vector file GDAL reads, DXF included.

The phase comes from a field, or from the CAD layer name (DXF's ``Layer`` field) by a regular
expression whose first group is the phase (``C-PHAS-(\\d+)``); the dates from the layer's own
fields or from a schedule table (:mod:`.schedule`). Closed polylines (a CAD boundary) become
polygons; a DXF has no CRS of its own, so one must be given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import geopandas as gpd
import numpy as np
from pyproj import CRS
from pyproj.exceptions import CRSError

from ..errors import InputError
from ..siteplan.cad import CAD_LAYER_FIELD, cad_areas, cad_layer_matches, none_matched
from ..siteplan.schedule import dates_by_phase, phase_name, read_schedule

__all__ = ["PhasingSource", "read_phasing_source"]


@dataclass
class PhasingSource:
    """The polygons with ``phase``, ``start_date``, ``stabilized_date``, in their own CRS."""

    frame: gpd.GeoDataFrame
    crs: CRS
    path: str
    layer: str


def read_phasing_source(
    path: str | Path,
    *,
    layer: Optional[str] = None,
    phase_from: str = "field",
    phase_field: str = "phase",
    pattern: Optional[str] = None,
    start_field: str = "start_date",
    stabilized_field: str = "stabilized_date",
    schedule: Optional[str | Path] = None,
    crs: Optional[str] = None,
    sheet: Optional[str] = None,
) -> PhasingSource:
    """The phasing plan of one layer of ``path`` (where ``layer`` is None: the only layer, or
    the contract's ``disturbance`` layer of a site plan with several).

    ``phase_from`` is ``"field"`` (``phase_field``) or ``"layer"`` (the CAD layer name matched
    by ``pattern``; entities on other CAD layers are left out). With ``schedule`` the dates come
    from that table by phase (``sheet``: a workbook's sheet), otherwise from ``start_field``
    and ``stabilized_field``. ``crs``
    overrides the file's and is required where it has none. Raises :class:`InputError` naming
    the file, layer, feature or field at fault.
    """
    from ..io.geopackage import with_stored_texts
    from ..io.vector import list_layers, read_layer

    path = Path(path)
    layers = list_layers(path)
    if layer is None:
        contract = [name for name in layers if name.lower() == "disturbance"]
        if len(layers) == 1:
            layer = layers[0]
        elif len(contract) == 1:  # a site plan in the project's contract
            layer = contract[0]
        else:
            raise InputError(
                f"the file has {len(layers)} layers ({', '.join(layers)})",
                path=path,
                parameter="layer",
                fix="choose the layer holding the phases",
            )
    elif layer not in layers:
        raise InputError(
            f"no layer '{layer}' (layers: {', '.join(layers)})",
            path=path,
            parameter="layer",
            fix="name one of the file's layers",
        )
    data = read_layer(path, layer)
    area_crs = _crs(path, data.crs, crs)
    # A date GDAL could not read ('04/01/2027' in a DATE column) as written, not as empty.
    frame = with_stored_texts(path, layer, data.frame)
    if not isinstance(frame, gpd.GeoDataFrame):
        raise InputError(
            "the layer has no geometry",
            path=path,
            layer=layer,
            fix="choose the layer holding the phase boundaries",
        )
    frame = frame.set_crs(area_crs, allow_override=True)
    if phase_from == "layer":
        phases = _phases_from_cad_layers(path, layer, frame, pattern)
    else:
        column = _column(path, layer, frame, phase_field, "phase_field")
        phases = [phase_name(v) for v in frame[column]]
    keep = np.array([p is not None or phase_from == "field" for p in phases], dtype=bool)
    frame = frame[keep]
    phases = [p for p, k in zip(phases, keep) if k]
    if len(frame) == 0 and phase_from != "layer":
        raise InputError(
            "the layer has no features",
            path=path,
            layer=layer,
            fix="choose the layer holding the phase boundaries",
        )
    if len(frame) == 0:
        raise none_matched(
            path,
            layer,
            data.frame,
            str(pattern),
            "the pattern",
            "pattern",
            fix="give the pattern of the phase layers' names (one of those "
            "listed), its first group the phase: C-PHAS-(\\d+)",
        )
    geometry = cad_areas(path, layer, frame)
    if schedule is not None:
        starts, ends = dates_by_phase(phases, read_schedule(schedule, sheet), path, schedule, "schedule")
    else:
        starts = list(frame[_column(path, layer, frame, start_field, "start_field")])
        ends = list(frame[_column(path, layer, frame, stabilized_field, "stabilized_field")])
    out = gpd.GeoDataFrame(
        {"phase": phases, "start_date": starts, "stabilized_date": ends},
        geometry=list(geometry),
        crs=area_crs,
        index=frame.index,
    )
    return PhasingSource(out, area_crs, str(path), layer)


def _crs(path, own: Optional[CRS], given: Optional[str]) -> CRS:
    if given:
        try:
            return CRS.from_user_input(given)
        except CRSError as err:
            raise InputError(
                f"{given!r} is not a coordinate reference system ({err})",
                parameter="crs",
                fix="give an EPSG code such as EPSG:2260",
            ) from None
    if own is None:
        raise InputError(
            "the file has no coordinate reference system (a CAD export rarely has one)",
            path=path,
            parameter="crs",
            fix="give the drawing's CRS, e.g. EPSG:2260 (NAD83 / New York East, US survey feet)",
        )
    return own


def _column(path, layer, frame, name, parameter) -> str:
    for column in frame.columns:
        if str(column).lower() == str(name).lower() and column != frame.geometry.name:
            return str(column)
    from ..io.losses import DBF_NAME_LENGTH

    fields = [str(c) for c in frame.columns if c != frame.geometry.name]
    cut = next(
        (
            f
            for f in fields
            if len(str(name)) > DBF_NAME_LENGTH and f.lower() == str(name)[:DBF_NAME_LENGTH].lower()
        ),
        None,
    )
    raise InputError(
        f"no field '{name}' (fields: {', '.join(fields)})"
        + (
            f"; '{cut}' looks like it cut to {DBF_NAME_LENGTH} characters, as a shapefile cuts field names"
            if cut
            else ""
        ),
        path=path,
        layer=layer,
        field=name,
        parameter=parameter,
        fix=f"name the field holding it ('{cut}')" if cut else "name the field holding it",
    )


def _phases_from_cad_layers(path, layer, frame, pattern: Optional[str]) -> list:
    if not pattern:
        raise InputError(
            "the phase is taken from the CAD layer name, and no pattern is given",
            parameter="pattern",
            fix="give a pattern whose first group is the phase, e.g. 'C-PHAS-(\\d+)'",
        )
    matched, groups = cad_layer_matches(path, layer, frame, pattern, given_by="the pattern")
    return [
        phase_name(g if g is not None else name) if hit else None
        for hit, g, name in zip(
            matched, groups, frame[_column(path, layer, frame, CAD_LAYER_FIELD, "pattern")]
        )
    ]
