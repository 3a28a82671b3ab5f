"""The search window around a site: where the reference layers are read for it.

One rule for the review, the screen, the route downstream and PostGIS: a site's box (or any
box: a downstream catchment's) widened on every side by ``[reference] search_distance_ft``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..profile import RulesProfile
from ..units import CrsLike, crs_units

__all__ = ["search_distance", "search_windows"]


def search_distance(crs: CrsLike, profile: RulesProfile) -> float:
    """``[reference] search_distance_ft`` in the linear unit of ``crs``."""
    return crs_units(profile.reference.search_distance_ft, crs)


def search_windows(boxes: ArrayLike, crs: CrsLike, profile: RulesProfile) -> NDArray[np.float64]:
    """Each of ``boxes`` ((n, 4) or one box: minx, miny, maxx, maxy in ``crs``) widened by the
    search distance on every side.

    >>> from analysis.profile import load_profile
    >>> search_windows([0, 0, 10, 10], "EPSG:32618", load_profile()).round(2).tolist()
    [-91.44, -91.44, 101.44, 101.44]
    """
    distance = search_distance(crs, profile)
    widened: NDArray[np.float64] = np.asarray(boxes, dtype=float) + np.array(
        [-distance, -distance, distance, distance]
    )
    return widened
