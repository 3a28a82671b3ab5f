"""The route downstream, followed for sites (one: the review's; many: the screen's) at once.

From the catchments each site's runoff starts in (:class:`Start`), ``drains_to`` is followed
up to ``[condition_a] downstream_catchment_hops`` steps (:mod:`analysis.reference.route`: one
look-up by id per level, one read of shapes per level for all sites), then the TMDL watersheds
around every placed downstream catchment are read once and met with them. What it finds is
evidence (:class:`Routes`): the waters named on the way, the watersheds met downstream, the
routes cut at the last hop and the catchments whose shape was not found.

A downstream catchment that meets a TMDL watershed is told with its share of it
(:class:`~.evidence.CatchmentShare`): the acres inside and their percent of its area, and, where
that share is not a real one (``judge.decide.real_share``: it only grazes the watershed),
whether the catchment it drains into lies in the watershed (SWPPP C(1): runoff "discharging ...
to ... a TMDL designated watershed" goes where the catchment drains).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import pandas as pd

from ..profile import RulesProfile
from ..reference.catchments import drains_to_values
from ..reference.route import Links, Lookup, Read, overlapping, place, walk
from ..reference.window import search_distance
from ..units import SQ_FT_PER_ACRE, CrsLike, square_feet
from .decide import real_share
from .evidence import CatchmentShare
from .wording import in_catchment

__all__ = ["Start", "RoutedWater", "RoutedWatershed", "Routes", "follow_routes", "site_starts", "UNLINKED"]

# Where the route met no water and the reference links no catchment to the waters in it.
UNLINKED = (
    "no water is named by, or lies in, the catchments on this route (WBD's tohuc "
    "names only catchments; a catchment is linked to the listed waters whose shapes lie "
    "in it when impaired_waters is imported with --geometry, the PWL layer, into the "
    "store that holds the catchments)"
)


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
    depth: int  # 0: a catchment the runoff starts in names it
    start: int  # position of the start the route leaves from


@dataclass(frozen=True)
class RoutedWatershed:
    """A TMDL watershed a downstream catchment on a site's route meets (``feature``: its
    position in :attr:`Routes.watersheds`), by the first route whose catchment lies in it
    (else the first whose catchment may, else the first that meets it), and that catchment's
    ``share`` of it."""

    site: int
    feature: int
    route: str
    geometry: Any
    share: CatchmentShare


@dataclass
class Routes:
    """Per site (each item names its site), what the route downstream finds."""

    waters: list[RoutedWater] = field(default_factory=list)
    sheds: list[RoutedWatershed] = field(default_factory=list)
    watersheds: Optional[pd.DataFrame] = None  # the TMDL watersheds read around the route
    unplaced: list[tuple[int, str]] = field(default_factory=list)  # (site, route) not found
    cut: list[tuple[int, str]] = field(default_factory=list)  # (site, note) not followed


@dataclass
class _Step:
    site: int
    route: str
    geometry: Any
    catchment_id: str = ""
    drains_to: Any = None


def follow_routes(
    starts: Sequence[Start],
    start_shapes: Callable[[], tuple[list[Any], dict[str, Any]]],
    lookup: Lookup,
    read: Read,
    profile: RulesProfile,
    crs: CrsLike,
    links: Optional[Links] = None,
) -> Routes:
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
    met = walk(
        [(s.site, s.catchment_id, s.drains_to, s.route) for s in starts],
        lookup,
        profile.condition_a.downstream_catchment_hops,
        links,
    )
    out.waters = [
        RoutedWater(w.step.key, w.water_id, w.step.catchment_id, w.route, w.step.depth, w.step.start)
        for w in met.waters
    ]
    out.cut = [(cut.step.key, cut.note) for cut in met.cut]
    out.unplaced = [(left.step.key, left.note) for left in met.outside]
    if links is not None:
        reached = {w.site for w in out.waters}
        out.cut += [(site, UNLINKED) for site in dict.fromkeys(s.site for s in starts) if site not in reached]
    if len(met.levels) < 2:
        return out
    shapes, known = start_shapes()
    placed = place(met, shapes, read, pad, known)
    downstream = [
        _Step(s.key, s.route, g, s.catchment_id, s.drains_to)
        for level, found in zip(met.levels[1:], placed[1:])
        for s, g in zip(level, found)
    ]
    out.unplaced += [(s.site, s.route) for s in downstream if s.geometry is None]
    _watersheds(out, [s for s in downstream if s.geometry is not None], read, pad, profile, crs)
    return out


def _watersheds(
    out: Routes, placed: list[_Step], read: Read, pad: float, profile: RulesProfile, crs: CrsLike
) -> None:
    """The TMDL watersheds each placed downstream catchment meets, per site: each TMDL (a
    row; a watershed with two TMDLs has two) once per site, by the first route whose catchment
    lies in it (:class:`_Shares`), else the first whose catchment may, else the first that
    meets it. Each catchment is met with the watersheds once, however many sites' routes pass
    through it."""
    if not placed:
        return
    sheds, pairs = overlapping(
        "tmdl_watersheds", [s.geometry for s in placed], read, pad, profile.condition_a.min_overlap_sq_ft, crs
    )
    out.watersheds = sheds
    if not pairs:
        return
    shares = _Shares(placed, pairs, profile, crs)
    geometries = list(sheds["geometry"])
    # (site, feature) -> (rank, step): rank 0 lies in it, 1 may, 2 does not
    best: dict[tuple[int, int], tuple[int, int]] = {}
    for step, k, _ in pairs:
        rank = {True: 0, None: 1, False: 2}[shares.lies_in(step, k)]
        key = (placed[step].site, k)
        if key not in best or rank < best[key][0]:
            best[key] = (rank, step)
    for (site, k), (_, step) in best.items():
        out.sheds.append(RoutedWatershed(site, k, placed[step].route, geometries[k], shares.share(step, k)))


class _Shares:
    """Each placed downstream catchment's share of each TMDL watershed it meets, and whether
    the route's water goes into the watershed through it: by a real share of its area
    (``judge.decide.real_share``), else by the catchment its ``drains_to`` names on the same
    site's route (True where that one lies in the watershed; False where every catchment it
    names was placed and lies outside it; None where one is a water, or a catchment not
    followed or not found: the layers do not say where its outlet lies)."""

    def __init__(
        self, placed: list[_Step], pairs: list[tuple[int, int, float]], profile: RulesProfile, crs: CrsLike
    ):
        self._placed, self._profile = placed, profile
        self._shared = {(step, k): sq_ft for step, k, sq_ft in pairs}
        self._area = np.atleast_1d(square_feet(np.asarray([s.geometry for s in placed], dtype=object), crs))
        self._by_id: dict[tuple[int, str], int] = {}  # (site, catchment_id) -> its step
        for k, s in enumerate(placed):
            self._by_id.setdefault((s.site, s.catchment_id), k)
        self._known: dict[tuple[int, int], Optional[bool]] = {}

    def _measure(self, step: int, k: int) -> tuple[float, float]:
        shared = self._shared.get((step, k), 0.0)
        area = float(self._area[step])
        return shared / SQ_FT_PER_ACRE, 100.0 * shared / area if area > 0 else 0.0

    def lies_in(self, step: int, k: int, visiting: frozenset[int] = frozenset()) -> Optional[bool]:
        """Whether the route's water goes into watershed ``k`` through catchment ``step``."""
        if (step, k) in self._known:
            return self._known[(step, k)]
        if (step, k) not in self._shared:
            return False  # placed, and outside the watershed
        acres, percent = self._measure(step, k)
        found = (
            True if real_share(acres, percent, self._profile) else self._outlet(step, k, visiting | {step})
        )
        self._known[(step, k)] = found
        return found

    def _outlet(self, step: int, k: int, visiting: frozenset[int]) -> Optional[bool]:
        here = self._placed[step]
        told: list[Optional[bool]] = []
        for target in drains_to_values(here.drains_to):
            onward = self._by_id.get((here.site, target))
            told.append(None if onward is None or onward in visiting else self.lies_in(onward, k, visiting))
        if True in told:
            return True
        return False if told and all(t is False for t in told) else None

    def share(self, step: int, k: int) -> CatchmentShare:
        acres, percent = self._measure(step, k)
        real = real_share(acres, percent, self._profile)
        outlet = None if real else self._outlet(step, k, frozenset({step}))
        return CatchmentShare(self._placed[step].catchment_id, acres, percent, real, outlet)
