"""The route downstream, followed for sites (one: the review's; many: the screen's) at once.

From the catchments each site's runoff starts in (:class:`Start`), ``drains_to`` is followed
up to ``[condition_a] downstream_catchment_hops`` steps (:mod:`analysis.reference.route`: one
look-up by id per level, one read of shapes per level for all sites), then the TMDL watersheds
around every placed downstream catchment are read once and met with them. What it finds is
evidence (:class:`Routes`): the waters named on the way, the watersheds met downstream, the
routes cut at the last hop and the catchments whose shape was not found.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import pandas as pd

from ..profile import RulesProfile
from ..reference.route import Links, Lookup, Read, overlapping, place, walk
from ..reference.window import search_distance
from ..units import CrsLike
from .wording import in_catchment

__all__ = ["Start", "RoutedWater", "RoutedWatershed", "Routes", "follow_routes", "site_starts",
           "UNLINKED"]

# Where the route met no water and the reference links no catchment to the waters in it.
UNLINKED = ("no water is named by, or lies in, the catchments on this route (WBD's tohuc "
            "names only catchments; a catchment is linked to the listed waters whose shapes lie "
            "in it when impaired_waters is imported with --geometry, the PWL layer, into the "
            "store that holds the catchments)")


@dataclass(frozen=True)
class Start:
    """A catchment a site's runoff starts in, and how it is in it (the route's first words)."""

    site: int
    catchment_id: Any
    drains_to: Any
    route: str


def site_starts(pairs: Sequence[tuple[int, Any, Any]]) -> list[Start]:
    """The starts of sites that are their own disturbance (a screen's): per (site, catchment_id,
    drains_to) of each catchment a site overlaps, by site then id (whichever store answered,
    the same first route is told)."""
    ordered = sorted(((int(s), str(c).strip(), d) for s, c, d in pairs), key=lambda t: t[:2])
    return [Start(s, c, d, in_catchment("the site lies in", c)) for s, c, d in ordered]


@dataclass(frozen=True)
class RoutedWater:
    """A water a catchment on a site's route names."""

    site: int
    water_id: str
    catchment_id: str
    route: str
    depth: int    # 0: a catchment the runoff starts in names it
    start: int    # position of the start the route leaves from


@dataclass(frozen=True)
class RoutedWatershed:
    """A TMDL watershed a downstream catchment on a site's route lies in, by the first route
    that meets it (``feature``: its position in :attr:`Routes.watersheds`)."""

    site: int
    feature: int
    route: str
    geometry: Any


@dataclass
class Routes:
    """Per site (each item names its site), what the route downstream finds."""

    waters: list[RoutedWater] = field(default_factory=list)
    sheds: list[RoutedWatershed] = field(default_factory=list)
    watersheds: Optional[pd.DataFrame] = None   # the TMDL watersheds read around the route
    unplaced: list[tuple[int, str]] = field(default_factory=list)  # (site, route) not found
    cut: list[tuple[int, str]] = field(default_factory=list)       # (site, note) not followed


@dataclass
class _Step:
    site: int
    route: str
    geometry: Any


def follow_routes(starts: Sequence[Start],
                  start_shapes: Callable[[], tuple[list[Any], dict[str, Any]]],
                  lookup: Lookup, read: Read, profile: RulesProfile, crs: CrsLike,
                  links: Optional[Links] = None) -> Routes:
    """What the catchments ``starts`` name, and those downstream of them.

    ``links``: the waters the import placed in each catchment (the reference's
    ``water_links``). A route leaving the catchments layer (a catchment code not in it) is
    told as unplaced (Condition A not decided), and a site whose route met no water where the
    reference links none says what import links them (:data:`UNLINKED`).

    ``start_shapes()`` gives the starts' shapes (in their order) and {catchment_id: shape} of
    every catchment held already (not read again); it is asked only where a route leaves
    them. ``read`` reads a layer around boxes (the caller's: one box for a review, the sites'
    boxes for a screen)."""
    out = Routes()
    pad = search_distance(crs, profile)
    met = walk([(s.site, s.catchment_id, s.drains_to, s.route) for s in starts], lookup,
               profile.condition_a.downstream_catchment_hops, links)
    out.waters = [RoutedWater(w.step.key, w.water_id, w.step.catchment_id, w.route, w.step.depth,
                              w.step.start) for w in met.waters]
    out.cut = [(cut.step.key, cut.note) for cut in met.cut]
    out.unplaced = [(left.step.key, left.note) for left in met.outside]
    if links is not None:
        reached = {w.site for w in out.waters}
        out.cut += [(site, UNLINKED) for site in dict.fromkeys(s.site for s in starts)
                    if site not in reached]
    if len(met.levels) < 2:
        return out
    shapes, known = start_shapes()
    placed = place(met, shapes, read, pad, known)
    downstream = [_Step(s.key, s.route, g) for level, found in zip(met.levels[1:], placed[1:])
                  for s, g in zip(level, found)]
    out.unplaced += [(s.site, s.route) for s in downstream if s.geometry is None]
    _watersheds(out, [s for s in downstream if s.geometry is not None], read, pad, profile, crs)
    return out


def _watersheds(out: Routes, placed: list[_Step], read: Read, pad: float,
                profile: RulesProfile, crs: CrsLike) -> None:
    """The TMDL watersheds each placed downstream catchment overlaps, per site by the first
    route that meets it: each TMDL (a row; a watershed with two TMDLs has two) once per site.
    Each catchment is met with the watersheds once, however many sites' routes pass through
    it."""
    if not placed:
        return
    sheds, pairs = overlapping("tmdl_watersheds", [s.geometry for s in placed], read, pad,
                               profile.condition_a.min_overlap_sq_ft, crs)
    out.watersheds = sheds
    if not pairs:
        return
    geometries = list(sheds["geometry"])
    taken = set()   # (site, feature)
    for step, k in pairs:
        site = placed[step].site
        if (site, k) not in taken:
            taken.add((site, k))
            out.sheds.append(RoutedWatershed(site, k, placed[step].route, geometries[k]))
