"""Overlays of many small parts with few large polygons: the review's and the screen's one way
to measure what a site (or a downstream catchment) shares with the polygons it meets."""
from __future__ import annotations

import numpy as np
import shapely

from .threads import cores, each_piece

__all__ = ["shared_parts"]

_EMPTY = shapely.Polygon()
# DE-9IM: the interiors meet. Two polygons share an area (however small) exactly when they do.
_INTERIORS_MEET = "T********"
# A part of this many vertices or more is tested for meeting its polygon's interior before the
# overlay (a catchment drawn from the same lines as a TMDL watershed shares long stretches of
# its boundary); a smaller one (a site) is overlaid straight away: the test would cost more
# than it spares, and its prepared structures hold memory for every polygon it meets (a few
# hundred MB for 10,000 sites on statewide catchments). Speed only: the answer is the same.
_MANY_VERTICES = 64


def shared_parts(polygons: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """``polygons ∩ parts`` element-wise, where it has an area; an empty polygon where the two
    share none (they touch along an edge, or do not meet).

    Two tests spare most overlays of a large polygon's every vertex (a catchment's thousands):
    a part its polygon covers is itself (a site, or a catchment, lying wholly in it); a part
    whose interior does not meet the polygon's shares no area (the catchments next to a TMDL
    watershed, which share its boundary: the costliest overlay of all, noding thousands of
    coincident edges, for nothing; tested for parts of many vertices, ``_MANY_VERTICES``). Only
    the rest is overlaid.

    The work is cut into one share per core by polygon; each share tests prepared copies of its
    own polygons in its own thread: GEOS builds a prepared geometry's indexes on first use, so
    one prepared geometry used from two threads at once (or a caller's geometry prepared here
    and met later in ``threads``) is a data race.
    """
    parts = np.asarray(parts, dtype=object)
    if not len(polygons):
        return parts.copy()
    keys = np.fromiter(map(id, polygons), dtype=np.int64, count=len(polygons))
    order = np.argsort(keys, kind="stable")  # a polygon's pairs together, in one share
    shares = [at for at in np.array_split(order, cores()) if len(at)]
    shared = np.empty(len(parts), dtype=object)
    for at, done in zip(shares, each_piece(lambda at: _shared(polygons[at], parts[at],
                                                              keys[at]), shares)):
        shared[at] = done
    return shared


def _shared(polygons: np.ndarray, parts: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """One share of :func:`shared_parts`, in the thread that runs it."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    copies = shapely.from_wkb(shapely.to_wkb(polygons[first]))
    shapely.prepare(copies)
    mine = copies[np.ravel(inverse)]
    out = parts.copy()
    rest = np.flatnonzero(~np.asarray(shapely.covers(mine, parts), dtype=bool))
    large = rest[shapely.get_num_coordinates(parts[rest]) >= _MANY_VERTICES]
    apart = large[~np.asarray(shapely.relate_pattern(mine[large], parts[large], _INTERIORS_MEET),
                              dtype=bool)]
    out[apart] = _EMPTY
    del mine, copies  # their prepared indexes freed before the overlay (peak memory: 837 -> 758 MB
    #                   at 200k wetlands / 10,000 sites)
    overlaid = np.setdiff1d(rest, apart)
    out[overlaid] = shapely.intersection(polygons[overlaid], parts[overlaid])
    return out
