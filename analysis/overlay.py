"""Overlays of many small parts with few large polygons: the review's and the screen's one way
to measure what a site (or a downstream catchment) shares with the polygons it meets."""
from __future__ import annotations

import numpy as np
import shapely

from .threads import cores, each_piece

__all__ = ["shared_parts"]


def shared_parts(polygons: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """``polygons ∩ parts`` element-wise, where a part its polygon covers is itself: no overlay
    of a large polygon's every vertex (a catchment's thousands) for each small part (a site, a
    catchment inside a TMDL watershed) lying wholly in it.

    The test runs on prepared copies of the distinct polygons, in this thread: GEOS builds a
    prepared geometry's indexes on first use, so one prepared geometry used from two threads
    at once (or a caller's geometry prepared here and met later in ``threads``) is a data race.
    """
    if not len(polygons):
        return parts.copy()
    keys = np.fromiter(map(id, polygons), dtype=np.int64, count=len(polygons))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    copies = shapely.from_wkb(shapely.to_wkb(polygons[first]))
    shapely.prepare(copies)
    whole = np.asarray(shapely.covers(copies[np.ravel(inverse)], parts), dtype=bool)
    shared = parts.copy()
    # The rest overlaid in one share per core, however few: each pair may be large.
    rest = np.array_split(np.flatnonzero(~whole), cores())
    for at, done in zip(rest, each_piece(lambda at: shapely.intersection(polygons[at], parts[at]),
                                         rest)):
        shared[at] = done
    return shared
