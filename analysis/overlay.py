"""Overlays of many small parts with few large polygons: the review's and the screen's one way
to measure what a site (or a downstream catchment) shares with the polygons it meets."""

from __future__ import annotations

import numpy as np
import shapely
from numpy.typing import ArrayLike, NDArray

from .threads import cores, each_piece, query
from .units import CrsLike, square_feet

__all__ = ["shared_parts", "meets_minimum", "overlap_pairs"]

_EMPTY = shapely.Polygon()
# DE-9IM: the interiors meet. Two polygons share an area (however small) exactly when they do.
_INTERIORS_MEET = "T********"
# A part of this many vertices or more is tested for meeting its polygon's interior before the
# overlay (a catchment drawn from the same lines as a TMDL watershed shares long stretches of
# its boundary); a smaller one (a site) is overlaid straight away: the test would cost more
# than it spares, and its prepared structures hold memory for every polygon it meets (a few
# hundred MB for 10,000 sites on statewide catchments). Speed only: the answer is the same.
_MANY_VERTICES = 64
# A polygon met by this many parts or more is prepared (GEOS's indexes of its edges, built once)
# for the covers test; one met by fewer is tested as it is: building the indexes of a catchment's
# thousands of vertices costs more than it spares a few tests (measured on GEOS 3.11 and 3.14:
# 10,344 sites on 4,521 statewide catchments, 2.3 each, 0.37 s unprepared against 2.1 s
# prepared; 3,314 catchments on 312 TMDL watersheds, 11 each, 2.0 s against 3.2 s). Speed only.
_PREPARED_FROM = 32


def shared_parts(polygons: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """``polygons ∩ parts`` element-wise, where it has an area; an empty polygon where the two
    share none (they touch along an edge, or do not meet).

    Two tests spare most overlays of a large polygon's every vertex (a catchment's thousands):
    a part its polygon covers is itself (a site, or a catchment, lying wholly in it); a part
    whose interior does not meet the polygon's shares no area (the catchments next to a TMDL
    watershed, which share its boundary: the costliest overlay of all, noding thousands of
    coincident edges, for nothing; tested for parts of many vertices, ``_MANY_VERTICES``). Only
    the rest is overlaid.

    The work is cut into one share per core by polygon. A polygon met by many parts
    (``_PREPARED_FROM``) is tested prepared, as its own copy in the share's thread: GEOS builds a
    prepared geometry's indexes on first use, so one prepared geometry used from two threads at
    once (or a caller's geometry prepared here and met later in ``threads``) is a data race.
    The interiors test and the overlay take the polygons unprepared (prepared, GEOS's relate is
    no faster for two polygons of thousands of vertices).
    """
    parts = np.asarray(parts, dtype=object)
    if not len(polygons):
        return np.array(parts, dtype=object)
    keys = np.fromiter(map(id, polygons), dtype=np.int64, count=len(polygons))
    order = np.argsort(keys, kind="stable")  # a polygon's pairs together, in one share
    shares = [at for at in np.array_split(order, cores()) if len(at)]
    shared = np.empty(len(parts), dtype=object)
    for at, done in zip(shares, each_piece(lambda at: _shared(polygons[at], parts[at], keys[at]), shares)):
        shared[at] = done
    return shared


def _shared(polygons: np.ndarray, parts: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """One share of :func:`shared_parts`, in the thread that runs it."""
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    inverse = np.ravel(inverse)
    plain = polygons[first]
    own = np.asarray(shapely.is_prepared(plain), dtype=bool)  # a caller's prepared one: a copy
    if own.any():
        plain = plain.copy()
        plain[own] = shapely.from_wkb(shapely.to_wkb(plain[own]))
    many = np.bincount(inverse, minlength=len(first)) >= _PREPARED_FROM
    tested = plain
    if many.any():
        tested = plain.copy()
        tested[many] = shapely.from_wkb(shapely.to_wkb(plain[many]))
        shapely.prepare(tested[many])
    out = parts.copy()
    rest = np.flatnonzero(~np.asarray(shapely.covers(tested[inverse], parts), dtype=bool))
    del tested  # the prepared indexes freed before the overlay
    mine = plain[inverse]
    large = rest[shapely.get_num_coordinates(parts[rest]) >= _MANY_VERTICES]
    apart = large[~np.asarray(shapely.relate_pattern(mine[large], parts[large], _INTERIORS_MEET), dtype=bool)]
    out[apart] = _EMPTY
    overlaid = np.setdiff1d(rest, apart)
    out[overlaid] = shapely.intersection(mine[overlaid], parts[overlaid])
    return np.asarray(out, dtype=object)


def meets_minimum(shared_sq_ft: ArrayLike, minimum_sq_ft: float) -> NDArray[np.bool_]:
    """Which shared areas (square feet) count as an overlap: at least the profile's minimum
    (``[condition_a] min_overlap_sq_ft``, ``[wetlands] min_overlap_sq_ft``); a touch along an
    edge, or a sliver below it, does not. The one test of "overlaps" for every layer."""
    return np.atleast_1d(np.asarray(shared_sq_ft, dtype=float)) >= minimum_sq_ft


def overlap_pairs(
    shapes: ArrayLike, polygons: ArrayLike, minimum_sq_ft: float, crs: CrsLike
) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.object_], NDArray[np.float64]]:
    """``(shape, polygon, shared part, square feet shared)`` for each of ``shapes`` (sites, a
    disturbance, downstream catchments) and each of ``polygons`` it overlaps
    (:func:`meets_minimum`), by shape then polygon: one STRtree query of all pairs, the shared
    parts measured by :func:`shared_parts` (a shape a polygon covers is its own overlap)."""
    shapes = np.asarray(shapes, dtype=object)
    polygons = np.asarray(polygons, dtype=object)
    if not len(shapes) or not len(polygons):
        return (
            np.array([], dtype=np.int64),
            np.array([], dtype=np.int64),
            np.array([], dtype=object),
            np.array([], dtype=float),
        )
    s, f = query(shapely.STRtree(shapes), polygons, predicate="intersects")[::-1]
    order = np.lexsort((f, s))
    s, f = s[order].astype(np.int64), f[order].astype(np.int64)
    shared = shared_parts(polygons[f], shapes[s])
    sq_ft = np.atleast_1d(np.asarray(square_feet(shared, crs), dtype=float))
    keep = meets_minimum(sq_ft, minimum_sq_ft)
    return s[keep], f[keep], shared[keep], sq_ft[keep]
