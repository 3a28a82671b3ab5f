"""Element-wise shapely and pyproj work shared among the machine's cores (GEOS and PROJ release
the GIL; pyproj's transformers are thread-safe from 3.1): the same answers as one call, in about
1/n of the wall time on n free cores."""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Optional

import numpy as np

__all__ = ["each", "each_piece", "query", "cores"]

# Below this many elements a call is not split: starting the threads costs more than it saves.
_SMALLEST_SHARE = 512


def cores() -> int:
    """The cores this process may run on (at most 8)."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        available = os.cpu_count() or 1
    return max(1, min(available, 8))


def _bounds(n: int) -> Optional[np.ndarray]:
    """Where ``n`` elements are cut into one share per core (None: not worth cutting)."""
    shares = min(cores(), n // _SMALLEST_SHARE)
    return np.linspace(0, n, shares + 1).astype(int) if shares >= 2 else None


@lru_cache(maxsize=1)
def _pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=cores(), thread_name_prefix="swppp-geos")


def each(function: Callable, *arrays, **keywords) -> np.ndarray:
    """``function(*arrays, **keywords)`` for an element-wise shapely function, the arrays (of
    one length; a scalar is passed whole) cut into one share per core and the shares run in
    threads; the result is the shares' results in order, equal to the single call's."""
    lengths = {len(a) for a in arrays if isinstance(a, np.ndarray) and a.ndim}
    if len(lengths) != 1:
        return function(*arrays, **keywords)
    bounds = _bounds(lengths.pop())
    if bounds is None:
        return function(*arrays, **keywords)
    shares = len(bounds) - 1

    def share(k: int):
        return function(
            *(a[bounds[k] : bounds[k + 1]] if isinstance(a, np.ndarray) and a.ndim else a for a in arrays),
            **keywords,
        )

    return np.concatenate(list(_pool().map(share, range(shares))))


def each_piece(function: Callable, pieces: list) -> list:
    """``[function(p) for p in pieces]``, the pieces run in threads where there are several."""
    if len(pieces) < 2 or cores() < 2:
        return [function(p) for p in pieces]
    return list(_pool().map(function, pieces))


def query(tree, geometries: np.ndarray, **keywords) -> np.ndarray:
    """``tree.query(geometries, **keywords)`` (a shapely STRtree; ``distance`` may be an array
    along ``geometries``) with ``geometries`` cut into one share per core: the (2, n) pairs in
    the single call's order (by input geometry, the tree's order within one)."""
    bounds = _bounds(len(geometries))
    if bounds is None:
        return tree.query(geometries, **keywords)
    shares = len(bounds) - 1
    distance = keywords.pop("distance", None)

    def share(k: int):
        start, end = bounds[k], bounds[k + 1]
        more = dict(keywords)
        if distance is not None:
            more["distance"] = distance[start:end] if np.ndim(distance) else distance
        pairs = tree.query(geometries[start:end], **more)
        pairs[0] += start
        return pairs

    return np.concatenate(list(_pool().map(share, range(shares))), axis=1)
