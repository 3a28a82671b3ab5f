"""The screen's overlays of many small parts with few large polygons."""
from __future__ import annotations

import numpy as np
import shapely

from ..threads import each

__all__ = ["shared_parts"]


def shared_parts(polygons: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """``polygons ∩ parts`` element-wise, where a part its polygon covers is itself: no overlay
    of a large polygon's every vertex (a catchment's thousands) for each small part (a site, a
    catchment inside a TMDL watershed) lying wholly in it. The polygons are prepared (in place)
    for the test."""
    shapely.prepare(polygons)
    whole = np.asarray(each(shapely.covers, polygons, parts), dtype=bool)
    shared = parts.copy()
    shared[~whole] = each(shapely.intersection, polygons[~whole], parts[~whole])
    return shared
