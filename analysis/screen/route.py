"""The screen's catchment route: ``drains_to`` followed downstream for all sites at once.

The review's rule (``checks.condition_a.receiving_waters`` / ``routed_watersheds``) for every
site together: the walk and the downstream catchments' shapes are
:mod:`analysis.reference.route`'s (one look-up by id per level, one read of shapes per level),
then one read of the TMDL watersheds around all the downstream catchments.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..profile import RulesProfile
from ..reference.route import Lookup, Read, overlapping, place, walk
from ..reference.window import search_distance

__all__ = ["Routes", "follow_routes"]


@dataclass
class Routes:
    """Per site, what the route downstream of its catchments adds (each list: site index first)."""

    waters: list = field(default_factory=list)      # (site, water id, catchment, route or None)
    sheds: list = field(default_factory=list)       # (site, id, stormwater_source, pollutants, route)
    unplaced: list = field(default_factory=list)    # (site, route to a catchment not found)
    notes: list = field(default_factory=list)       # (site, note)


@dataclass
class _Step:
    site: int
    route: str
    geometry: object


def follow_routes(starts: list, start_shapes: Callable[[], dict], lookup: Lookup, read: Read,
                  profile: RulesProfile, crs) -> Routes:
    """What the catchments ``starts`` ((site, catchment_id, drains_to), those each site lies
    in) name, and those downstream of them up to ``[condition_a] downstream_catchment_hops``.

    ``start_shapes()`` gives {catchment_id: shape} of the starting catchments; it is asked only
    where a route leaves them. Each site's catchments are taken by id (whichever store
    answered, the same first route is told)."""
    out = Routes()
    pad = search_distance(crs, profile)
    ordered = sorted(((int(s), str(c).strip(), d) for s, c, d in starts), key=lambda t: t[:2])
    met = walk([(s, c, d, f"the site lies in catchment {c}") for s, c, d in ordered], lookup,
               profile.condition_a.downstream_catchment_hops)
    for water in met.waters:  # a starting catchment's water needs no route told
        out.waters.append((water.step.key, water.water_id, water.step.catchment_id,
                           water.route if water.step.depth else None))
    out.notes += [(cut.step.key, cut.note) for cut in met.cut]
    if len(met.levels) < 2:
        return out
    known = start_shapes()  # {id: shape} of every catchment read around the sites, kept
    placed = place(met, [known.get(s.catchment_id) for s in met.levels[0]], read, pad, known)
    downstream = [_Step(s.key, s.route, g) for level, found in zip(met.levels[1:], placed[1:])
                  for s, g in zip(level, found)]
    out.unplaced += [(s.site, s.route) for s in downstream if s.geometry is None]
    _watersheds(out, [s for s in downstream if s.geometry is not None], read, pad, profile, crs)
    return out


def _watersheds(out: Routes, placed: list, read: Read, pad: float, profile, crs) -> None:
    """The TMDL watersheds each placed downstream catchment overlaps by ``[condition_a]
    min_overlap_sq_ft`` or more, per site by the first route that meets it: each TMDL (a
    row; a watershed with two TMDLs has two) as the review tells it. Each catchment is
    met with the watersheds once, however many sites' routes pass through it; a catchment a
    watershed covers is its own overlap (``analysis.overlay.shared_parts``)."""
    if not placed:
        return
    sheds, pairs = overlapping("tmdl_watersheds", [s.geometry for s in placed], read, pad,
                               profile.condition_a.min_overlap_sq_ft, crs)
    if not pairs:
        return
    ids = sheds["watershed_id"].to_numpy(dtype=object)
    sources = sheds["stormwater_source"].to_numpy(dtype=float)
    pollutants = sheds["pollutants"].to_numpy(dtype=object)
    taken = set()   # (site, feature): each TMDL (a watershed's row) told once per site
    for step, k in pairs:
        site = placed[step].site
        if (site, k) in taken:
            continue
        taken.add((site, k))
        out.sheds.append((site, ids[k], sources[k], pollutants[k], placed[step].route))
