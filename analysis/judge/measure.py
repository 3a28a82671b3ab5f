"""Wetlands met by sites (SWPPP B(2); F): the one measure of the review and the screen.

For sites (one: a review's disturbance; many: a screen's polygons) and the wetlands read
around them: per pair that meets (the site meets the wetland or, for a regulated wetland, its
adjacent area), the ground inside the wetland and the ground inside its adjacent area outside
every wetland the site meets; per site, its acres in wetlands and in adjacent areas, each acre
counted once. Vectorised: one STRtree query of the pairs within reach, each regulated wetland
buffered once. PostGIS measures the same pairs in SQL (``screen.postgis``) into the same
:class:`WetlandMeasures`; :meth:`WetlandMeasures.status` decides from either.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional

import numpy as np
import pandas as pd
import shapely
from numpy.typing import NDArray

from ..overlay import meets_minimum
from ..profile import RulesProfile
from ..threads import each, query
from ..units import CrsLike, acres, crs_units, square_feet

__all__ = ["WetlandStatus", "WetlandMeasures", "adjacent_distances_ft", "measure_wetlands", "grouped_union"]

_EMPTY = shapely.Polygon()


class WetlandStatus(Enum):
    """What a site's disturbance meets: a wetland, only a regulated one's adjacent area, neither."""

    WETLAND = "wetland"
    ADJACENT_AREA = "adjacent area"
    NONE = "none"


def adjacent_distances_ft(wetlands: pd.DataFrame, profile: RulesProfile) -> NDArray[np.float64]:
    """Each wetland's adjacent area in feet: its ``adjacent_area_ft``, the profile's default where
    that is empty, and 0 for a wetland that is not regulated."""
    default = profile.wetlands.default_adjacent_area_ft
    given = pd.to_numeric(wetlands["adjacent_area_ft"], errors="coerce").to_numpy(dtype=float)
    regulated = pd.to_numeric(wetlands["regulated"], errors="coerce").fillna(0).to_numpy() == 1
    distances = np.where(np.isnan(given) | (given <= 0), default, given)
    return np.asarray(np.where(regulated, distances, 0.0), dtype=float)


@dataclass(frozen=True)
class WetlandMeasures:
    """What each site shares with each wetland it meets (pairs by site, then wetland), and each
    site's totals. Areas are square feet per pair and acres per site; the shapes (``inside``,
    ``adjacent``, ``zone``) are given by the local measure only (PostGIS gives areas)."""

    site: NDArray[np.int64]  # per pair: the site's position
    wetland: NDArray[np.int64]  # per pair: the wetland's position in the frame measured
    wetland_id: NDArray[np.object_]  # per pair: its wetland_id
    inside_sq_ft: NDArray[np.float64]  # per pair: ground inside the wetland
    adjacent_sq_ft: NDArray[np.float64]  # per pair: inside its adjacent area, outside all wetlands
    wetland_acres: NDArray[np.float64]  # per site: ground inside any wetland, counted once
    adjacent_acres: NDArray[np.float64]  # per site: inside any adjacent area outside wetlands
    inside: Optional[NDArray[np.object_]] = None
    adjacent: Optional[NDArray[np.object_]] = None
    zone: Optional[NDArray[np.object_]] = None  # the wetland with its adjacent area

    @classmethod
    def empty(cls, n: int) -> WetlandMeasures:
        """No pair for ``n`` sites."""
        none = np.array([], dtype=object)
        return cls(
            np.array([], dtype=np.int64),
            np.array([], dtype=np.int64),
            none,
            np.zeros(0),
            np.zeros(0),
            np.zeros(n),
            np.zeros(n),
            none,
            none,
            none,
        )

    def in_wetland(self, profile: RulesProfile) -> NDArray[np.bool_]:
        """Per pair: the site lies in the wetland (by ``[wetlands] min_overlap_sq_ft``)."""
        return meets_minimum(self.inside_sq_ft, profile.wetlands.min_overlap_sq_ft)

    def in_adjacent_area(self, profile: RulesProfile) -> NDArray[np.bool_]:
        """Per pair: the site lies in the wetland's adjacent area, outside every wetland."""
        return meets_minimum(self.adjacent_sq_ft, profile.wetlands.min_overlap_sq_ft)

    def status(self, profile: RulesProfile) -> list[WetlandStatus]:
        """Per site: :class:`WetlandStatus`."""
        out = [WetlandStatus.NONE] * len(self.wetland_acres)
        wet, near = self.in_wetland(profile), self.in_adjacent_area(profile)
        for site in self.site[near].tolist():
            out[site] = WetlandStatus.ADJACENT_AREA
        for site in self.site[wet].tolist():
            out[site] = WetlandStatus.WETLAND
        return out

    def met(self, profile: RulesProfile) -> list[list[str]]:
        """Per site: the ids of the wetlands it lies in or in whose adjacent area it lies, sorted."""
        out: list[list[str]] = [[] for _ in range(len(self.wetland_acres))]
        keep = self.in_wetland(profile) | self.in_adjacent_area(profile)
        for site, wetland in zip(self.site[keep].tolist(), self.wetland_id[keep].tolist()):
            out[site].append(str(wetland))
        for ids in out:
            ids.sort()
        return out


def measure_wetlands(
    sites: NDArray[np.object_],
    wetlands: pd.DataFrame,
    profile: RulesProfile,
    crs: CrsLike,
    windows: Optional[NDArray[np.float64]] = None,
) -> WetlandMeasures:
    """:class:`WetlandMeasures` of ``sites`` (polygons, ``crs``) and ``wetlands`` (a frame with
    the contract's fields and a geometry column, ``crs``).

    ``windows``: each site's search window (``reference.window.search_windows`` of its box).
    A site meets only the wetlands its own review reads, those meeting its window: a wetland
    whose adjacent area is wider than the search distance, read for a site nearby, is not met
    by a site farther away (its answer does not hang on the other sites measured with it).
    None: every wetland given was read for these sites (a review's)."""
    sites = np.asarray(sites, dtype=object)
    n = len(sites)
    geometries = np.asarray(
        wetlands.geometry.values if hasattr(wetlands, "geometry") else wetlands["geometry"], dtype=object
    )
    if not len(geometries) or not n:
        return WetlandMeasures.empty(n)
    reach = adjacent_distances_ft(wetlands, profile) * crs_units(1.0, crs)
    # Pairs within reach first (no buffer needed), then the overlay of their zones only (each
    # site's pairs together, sorted by wetland).
    s, w = query(shapely.STRtree(sites), geometries, predicate="dwithin", distance=reach)[::-1]
    order = np.lexsort((w, s))
    s, w = s[order].astype(np.int64), w[order].astype(np.int64)
    if windows is not None:
        # Within its reach of a site, a wetland whose reach is the search distance or less
        # meets the site's window; a wider one is tested against the window.
        wide = reach[w] > profile.reference.search_distance_ft * crs_units(1.0, crs)
        if wide.any():
            keep = ~wide
            keep[wide] = each(
                shapely.intersects,
                geometries[w[wide]],
                shapely.box(*np.asarray(windows, dtype=float)[s[wide]].T),
            )
            s, w = s[keep], w[keep]
    # A wetland that is not regulated has no adjacent area (reach 0): it is not buffered.
    used = np.unique(w[reach[w] > 0])
    zones = geometries.copy()
    zones[used] = each(shapely.buffer, geometries[used], reach[used])
    meet = each(shapely.intersects, zones[w], sites[s])
    s, w = s[meet], w[meet]
    if not len(s):
        return WetlandMeasures.empty(n)
    inside = each(shapely.intersection, geometries[w], sites[s])
    near = np.full(len(s), _EMPTY, dtype=object)
    zoned = reach[w] > 0
    near[zoned] = each(shapely.intersection, zones[w[zoned]], sites[s[zoned]])
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
    counts = np.diff(np.r_[starts, len(s)])
    group = np.repeat(np.arange(len(starts)), counts)
    wet = grouped_union(inside, starts, counts)
    wet_each = wet[group]
    adjacent = near.copy()
    cut = ~shapely.is_empty(wet_each) & ~shapely.is_empty(near)
    adjacent[cut] = each(shapely.difference, near[cut], wet_each[cut])
    wetland_acres, adjacent_acres = np.zeros(n), np.zeros(n)
    wetland_acres[s[starts]] = acres(wet, crs)
    adjacent_acres[s[starts]] = acres(grouped_union(adjacent, starts, counts), crs)
    ids = wetlands["wetland_id"].to_numpy(dtype=object)
    return WetlandMeasures(
        s,
        w,
        ids[w],
        np.atleast_1d(np.asarray(square_feet(inside, crs), dtype=float)),
        np.atleast_1d(np.asarray(square_feet(adjacent, crs), dtype=float)),
        wetland_acres,
        adjacent_acres,
        inside,
        adjacent,
        zones[w],
    )


def grouped_union(
    pieces: NDArray[np.object_], starts: NDArray[np.int64], counts: NDArray[np.int64]
) -> NDArray[np.object_]:
    """Per group of consecutive ``pieces`` (``starts``, ``counts``), the union of its non-empty
    pieces (one C call for all groups: a table of them, one row per group, None elsewhere); a
    group with one such piece is that piece, one with none an empty polygon."""
    present = ~shapely.is_empty(pieces)
    group = np.repeat(np.arange(len(starts)), counts)
    kept = np.bincount(group[present], minlength=len(starts))
    result = np.full(len(starts), _EMPTY, dtype=object)
    one = kept == 1
    result[group[present & one[group]]] = pieces[present & one[group]]
    many = present & (kept > 1)[group]
    if many.any():
        rows = np.unique(group[many], return_inverse=True)[1].ravel()
        columns = np.arange(len(rows)) - np.searchsorted(rows, rows)
        table = np.full((rows.max() + 1, columns.max() + 1), None, dtype=object)
        table[rows, columns] = pieces[many]
        result[np.unique(group[many])] = each(shapely.union_all, table, axis=1)
    return result
