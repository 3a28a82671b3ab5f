"""The screen's catchment route: ``drains_to`` followed downstream for all sites at once.

The review's rule (``checks.condition_a.receiving_waters`` / ``routed_watersheds``), level by
level for every site together: one look-up by id per level (which ``drains_to`` values are
catchments, :func:`analysis.reference.catchments.split_drains_to`), one read of the downstream
catchments' shapes per level (around each site's catchments of the level above, as the review
places them), and one read of the TMDL watersheds around all the downstream catchments.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import shapely

from ..checks.condition_a import water_id
from ..profile import RulesProfile
from ..reference.catchments import drains_to_values, split_drains_to
from ..threads import each
from ..units import FOOT_M, square_feet, unit_metres
from .overlay import shared_parts

__all__ = ["Routes", "follow_routes"]

# lookup(ids) -> {catchment_id: drains_to} of the layer's catchments with those ids (no shape).
Lookup = Callable[[set], dict]
# read(layer, boxes) -> DataFrame of the layer's features meeting any box (area CRS), with a
# "geometry" column of shapely geometries.
Read = Callable[[str, np.ndarray], pd.DataFrame]


@dataclass
class Routes:
    """Per site, what the route downstream of its catchments adds (each list: site index first)."""

    waters: list = field(default_factory=list)      # (site, water id, catchment, route or None)
    sheds: list = field(default_factory=list)       # (site, id, stormwater_source, pollutants, route)
    undecided: list = field(default_factory=list)   # (site, why)
    notes: list = field(default_factory=list)       # (site, note)


@dataclass
class _Step:
    site: int
    catchment_id: str
    drains_to: object
    route: str
    geometry: object = None


def follow_routes(starts: list, start_shapes: Callable[[], dict], lookup: Lookup, read: Read,
                  profile: RulesProfile, crs) -> Routes:
    """What the catchments ``starts`` ((site, catchment_id, drains_to), those each site lies
    in) name, and those downstream of them up to ``[condition_a] downstream_catchment_hops``.

    ``start_shapes()`` gives {catchment_id: shape} of the starting catchments; it is asked only
    where a route leaves them. Each site's catchments are taken by id (whichever store
    answered, the same first route is told)."""
    out = Routes()
    pad = profile.reference.search_distance_ft * FOOT_M / unit_metres(crs)
    level = [_Step(int(s), str(c).strip(), d, f"the site lies in catchment {str(c).strip()}")
             for s, c, d in sorted(starts, key=lambda t: (t[0], str(t[1]).strip()))]
    seen = {(r.site, r.catchment_id) for r in level}
    hops = profile.condition_a.downstream_catchment_hops
    downstream: list[_Step] = []
    shaped = False
    known: dict = {}  # catchment id -> shape, of every catchment read so far
    for depth in range(hops + 1):
        targets = {v for r in level for v in drains_to_values(r.drains_to)}
        rows = lookup(targets) if targets else {}
        following: list[_Step] = []
        for here in level:
            onward, waters = split_drains_to(here.drains_to, rows, here.catchment_id)
            for water in waters:  # a starting catchment's water needs no route told
                out.waters.append((here.site, water_id(water), here.catchment_id,
                                   f"{here.route}, which drains to {water_id(water)}"
                                   if depth else None))
            for target in onward:
                if (here.site, target) in seen:
                    continue
                if depth == hops:
                    out.notes.append((here.site, f"{here.route}, which drains to catchment "
                                      f"{target}: not followed further ([condition_a] "
                                      f"downstream_catchment_hops = {hops})"))
                    continue
                seen.add((here.site, target))
                following.append(_Step(here.site, target, rows[target],
                                       f"{here.route}, which drains to catchment {target}"))
        if following and not shaped:
            known.update(start_shapes())
            for here in level:
                here.geometry = known.get(here.catchment_id)
            shaped = True
        _place(following, level, read, pad, known)
        downstream += following
        level = following
    for step in downstream:
        if step.geometry is None:
            out.undecided.append((step.site, f"{step.route}: its shape was not found next to the "
                                  "catchment it drains out of, so whether it lies in a TMDL "
                                  "watershed is not known"))
    _watersheds(out, [s for s in downstream if s.geometry is not None], read, pad, profile, crs)
    return out


def _site_boxes(steps: list, pad: float) -> dict:
    """{site: the box around its steps' shapes, widened by ``pad``} (the review's read box),
    all sites' boxes in one grouped reduction."""
    shaped = [s for s in steps if s.geometry is not None]
    if not shaped:
        return {}
    sites = np.array([s.site for s in shaped])
    order = np.argsort(sites, kind="stable")
    sites = sites[order]
    bounds = shapely.bounds(np.asarray([s.geometry for s in shaped], dtype=object))[order]
    starts = np.flatnonzero(np.r_[True, sites[1:] != sites[:-1]])
    boxes = np.column_stack([np.minimum.reduceat(bounds[:, 0], starts) - pad,
                             np.minimum.reduceat(bounds[:, 1], starts) - pad,
                             np.maximum.reduceat(bounds[:, 2], starts) + pad,
                             np.maximum.reduceat(bounds[:, 3], starts) + pad])
    return dict(zip(sites[starts].tolist(), boxes))


def _place(following: list, upstream: list, read: Read, pad: float, known: dict) -> None:
    """Each step of ``following`` gets its shape where found in its site's box around the
    catchments it drains out of; None elsewhere. Only the boxes of sites whose catchment has
    not been read yet are read (one read for all of them); ``known`` ({id: shape}) keeps what
    was read for the next level."""
    boxes = _site_boxes(upstream, pad)
    wanted = [s for s in following if s.site in boxes]
    if not wanted:
        return
    unread = sorted({s.site for s in wanted if s.catchment_id not in known})
    if unread:
        frame = read("catchments", np.array([boxes[site] for site in unread]))
        known.update({str(c).strip(): g for c, g in zip(frame["catchment_id"], frame["geometry"])})
    shapes = np.asarray([known.get(s.catchment_id) for s in wanted], dtype=object)
    there = np.flatnonzero(shapes != None)  # noqa: E711 - element-wise over the object array
    if not len(there):
        return
    around = shapely.box(*np.array([boxes[wanted[k].site] for k in there]).T)
    meets = each(shapely.intersects, shapes[there], around)
    for k, placed in zip(there.tolist(), np.atleast_1d(meets).tolist()):
        if placed:
            wanted[k].geometry = shapes[k]


def _watersheds(out: Routes, placed: list, read: Read, pad: float, profile, crs) -> None:
    """The TMDL watersheds each placed downstream catchment overlaps by ``[condition_a]
    min_overlap_sq_ft`` or more, per site by the first route that meets it. Each catchment is
    met with the watersheds once, however many sites' routes pass through it."""
    if not placed:
        return
    names, first, inverse = np.unique([s.catchment_id for s in placed], return_index=True,
                                      return_inverse=True)
    shapes = np.asarray([placed[k].geometry for k in first], dtype=object)
    boxes = shapely.bounds(shapes) + np.array([-pad, -pad, pad, pad])
    sheds = read("tmdl_watersheds", boxes)
    if not len(sheds):
        return
    geometries = np.asarray(list(sheds["geometry"]), dtype=object)
    d, w = shapely.STRtree(geometries).query(shapes, predicate="intersects")
    order = np.lexsort((w, d))
    d, w = d[order], w[order]
    shared = np.atleast_1d(square_feet(shared_parts(geometries[w], shapes[d]), crs))
    keep = shared >= profile.condition_a.min_overlap_sq_ft
    met: list[list[int]] = [[] for _ in names]  # per catchment, the watersheds it overlaps
    for catchment, k in zip(d[keep].tolist(), w[keep].tolist()):
        met[catchment].append(k)
    ids = sheds["watershed_id"].to_numpy(dtype=object)
    sources = sheds["stormwater_source"].to_numpy(dtype=float)
    pollutants = sheds["pollutants"].to_numpy(dtype=object)
    taken = set()
    for step, catchment in zip(placed, np.ravel(inverse).tolist()):
        for k in met[catchment]:
            if (step.site, str(ids[k])) in taken:
                continue
            taken.add((step.site, str(ids[k])))
            out.sheds.append((step.site, ids[k], sources[k], pollutants[k], step.route))
