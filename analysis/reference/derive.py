"""TMDL watershed polygons derived from catchments: the unit's own catchments and all upstream.

ATTAINS keys a TMDL by assessment unit (the lake or stream itself), not by its watershed. A
watershed is derived here from a catchments layer whose ``drains_to`` names the catchment
each drains into (WBD HUC-12 ``tohuc``, or NHDPlus catchments keyed by their flowlines'
routing): the catchments the unit's geometry meets, and every catchment whose ``drains_to``
chain leads into one of them, dissolved. The method is recorded with the version.
"""

from __future__ import annotations

import numpy as np
import shapely

from .catchments import drains_to_values

__all__ = ["upstream_watersheds", "METHOD"]

METHOD = (
    "derived: union of the catchments (store layer 'catchments', version {version}) that "
    "the assessment unit's geometry meets and every catchment upstream of them "
    "(drains_to chains)"
)


def upstream_watersheds(unit_geometries, catchments) -> list:
    """Per unit geometry (same CRS as ``catchments``), its derived watershed (None where the
    unit meets no catchment).

    ``catchments``: a GeoDataFrame with ``catchment_id``, ``drains_to`` and polygons.

    >>> import geopandas as gpd
    >>> from shapely import box, Point
    >>> c = gpd.GeoDataFrame({"catchment_id": ["a", "b", "c"], "drains_to": ["c", "c", None]},
    ...                      geometry=[box(0, 0, 1, 1), box(1, 0, 2, 1), box(2, 0, 3, 1)])
    >>> [g.bounds for g in upstream_watersheds([Point(2.5, 0.5)], c)]
    [(0.0, 0.0, 3.0, 1.0)]
    >>> [g.bounds for g in upstream_watersheds([Point(0.5, 0.5)], c)]
    [(0.0, 0.0, 1.0, 1.0)]
    """
    ids = [str(v) for v in catchments["catchment_id"]]
    into: dict[str, list[int]] = {}  # catchment id -> the catchments draining into it
    for index, target in enumerate(catchments["drains_to"]):
        for value in drains_to_values(target):  # a value naming no catchment is a water's id
            into.setdefault(value, []).append(index)
    polygons = np.asarray(catchments.geometry.array, dtype=object)
    tree = shapely.STRtree(polygons)
    out: list = []
    for geometry in unit_geometries:
        if geometry is None or shapely.is_empty(geometry):
            out.append(None)
            continue
        seeds = [int(i) for i in tree.query(geometry, predicate="intersects")]
        if not seeds:
            out.append(None)
            continue
        found, todo = set(seeds), list(seeds)
        while todo:
            for upstream in into.get(ids[todo.pop()], []):
                if upstream not in found:
                    found.add(upstream)
                    todo.append(upstream)
        out.append(shapely.union_all(polygons[sorted(found)]))
    return out
