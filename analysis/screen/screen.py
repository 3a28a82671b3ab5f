"""Condition A (SWPPP C(1)) and wetlands (SWPPP B(2); F) for many sites at once: the
engine's (``analysis.judge``) adapter to table rows.

Each site's polygon stands for its disturbance. The reference layers are read once, by the
sites' search windows (``reference.window``), and each layer is met with every site in one
STRtree query (``overlay.overlap_pairs``, ``judge.measure.measure_wetlands``). A site's
receiving waters are the waters named by the ``drains_to`` of the catchments it overlaps and of
those they drain into (``judge.route.follow_routes``, as for the review). Its measurements
become the engine's evidence and Condition A is decided by ``judge.decide.decide_condition_a``,
the review's one decision; the PostGIS screen (``screen.postgis``) measures in SQL into the
same :class:`Overlaps` and is decided here too. A screen has no discharge points or project
names: the catchment route is the only one (the review of a site plan prefers its discharge
points).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd

from ..judge.decide import Verdict, decide_condition_a
from ..judge.evidence import (
    CategoryKind,
    ConditionAEvidence,
    ListedRecord,
    Reach,
    WaterEvidence,
    WatershedEvidence,
    text_or_none,
)
from ..judge.measure import WetlandMeasures, adjacent_distances_ft, grouped_union, measure_wetlands
from ..judge.pollutants import PollutantNames
from ..judge.route import Routes, follow_routes, site_starts
from ..judge.wording import row_lines
from ..overlay import overlap_pairs
from ..profile import RulesProfile
from ..progress import SILENT, Progress
from ..reference.categories import category_kind
from ..reference.read import SPECS as REFERENCE_SPECS
from ..reference.read import LayersPresent, Reference
from ..reference.route import catchment_lookup, water_id
from ..reference.window import search_windows
from ..units import acres, crs_units
from .sites import Sites

__all__ = [
    "COLUMNS",
    "APPLIES",
    "NOT_DECIDED",
    "DOES_NOT_APPLY",
    "NOT_MEASURED",
    "Screen",
    "screen_sites",
    "decide",
    "Overlaps",
]

APPLIES, NOT_DECIDED, DOES_NOT_APPLY = (
    Verdict.APPLIES.value,
    Verdict.NOT_DECIDED.value,
    Verdict.DOES_NOT_APPLY.value,
)
# The screen's table, one row per site (CSV header, GeoPackage fields, JSON keys).
COLUMNS = (
    "site_id",
    "site_acres",
    "condition_a",
    "receiving_waters",
    "listed_waters",
    "tmdl_watersheds",
    "tmdl_acres",
    "pollutants",
    "why",
    "wetland_status",
    "wetlands",
    "wetland_acres",
    "adjacent_area_acres",
)
NEEDED = "the screen's Condition A (SWPPP C(1))"
# The layers Condition A reads: a store missing one leaves it not decided; a store missing the
# wetlands leaves their columns not measured (the screen uses what the store has, as a review).
CONDITION_A_LAYERS = ("catchments", "impaired_waters", "tmdl_watersheds")
NOT_MEASURED = "not measured"


@dataclass
class Overlaps:
    """What each site meets, as (site index, feature) pairs, from whichever store answered."""

    catchments: list = field(default_factory=list)  # (site, catchment_id, drains_to)
    routes: Routes = field(default_factory=Routes)  # the catchments' route downstream
    watersheds: list = field(default_factory=list)  # (site, id, stormwater_source, pollutants, acres)
    # per site, its acres in any TMDL watershed it overlaps, each acre counted once (watersheds
    # overlap: two TMDLs of one watershed are two rows of one shape, a lake's inside a basin's)
    tmdl_acres: np.ndarray = field(default_factory=lambda: np.zeros(0))
    listed: dict = field(default_factory=dict)  # water id -> [(waterbody_id, pollutants, category)]
    wetlands: WetlandMeasures = field(default_factory=lambda: WetlandMeasures.empty(0))


@dataclass
class Screen:
    """The screen's rows (``COLUMNS``), the sites' polygons, and what was read."""

    rows: list[dict]
    geometries: np.ndarray
    crs: object
    reference: dict = field(default_factory=dict)

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(COLUMNS))

    def by_site(self) -> dict[str, dict]:
        return {row["site_id"]: row for row in self.rows}


def screen_sites(
    sites: Sites, reference: Reference, profile: RulesProfile, progress: Progress = SILENT
) -> Screen:
    """Screen every site of ``sites`` against ``reference`` (a GeoPackage or any reader).

    A layer the reference lacks is read as empty, and what it would have decided is said in
    each row (:func:`_without`): Condition A not decided, or the wetlands not measured, naming
    the layer and what adds it."""
    lacking = [layer for layer in REFERENCE_SPECS if not reference.has(layer)]
    if lacking:
        reference = LayersPresent(reference, lacking)  # type: ignore[assignment]  # read as one
    crs = sites.crs
    boxes = search_windows(sites.boxes, crs, profile)
    geoms = sites.geometries
    overlaps = _condition_a_overlaps(sites, reference, profile, boxes, progress)
    progress.step(0.6, "reading wetlands")
    # A wetland is read only where it comes within its own reach (its adjacent area; 0 for one
    # not regulated) of a site's box: one farther away meets no site's ground or zone.
    to_units = crs_units(1.0, crs)
    wetlands = reference.read_boxes(
        "wetlands",
        boxes,
        crs,
        needed_for="the screen's wetlands",
        reach=(sites.boxes, lambda frame: adjacent_distances_ft(frame, profile) * to_units),
    )
    overlaps.wetlands = measure_wetlands(geoms, wetlands, profile, crs, boxes)
    progress.step(0.95, "deciding")
    rows = decide(sites.ids, geoms, overlaps, profile, crs)
    if lacking:
        rows = _without(rows, reference, lacking)
    return Screen(
        rows=rows,
        geometries=geoms,
        crs=crs,
        reference={
            "path": reference.label,
            "kind": reference.kind,
            "versions": reference.versions(),
            "read": reference.features_read,
        },
    )


def _without(rows: list[dict], reference: Reference, lacking: list[str]) -> list[dict]:
    """The rows where the reference lacks layers, each saying which layer and what adds it
    (``Reference.lacks``/``adds``):

    - where it lacks one Condition A reads, Condition A is not decided, unless it applies on
      the layers present: a layer added could only add evidence (any one trigger applies it,
      :func:`analysis.judge.decide.decide_condition_a`), so it applies, the row saying what
      was not read;
    - where it lacks the wetlands, their columns are not measured."""
    a_lacks = [layer for layer in CONDITION_A_LAYERS if layer in lacking]
    adds = f"({'; '.join(reference.adds(m) for m in a_lacks)}) and screen again"
    undecided = f"Condition A not decided: {reference.lacks(a_lacks)}; add it {adds}"
    decided = (
        f"Condition A applies on the layers the store has; {reference.lacks(a_lacks)}, "
        f"which could add waters or pollutants, not undo it: add it {adds}"
    )
    wetlands = (
        f"wetlands not measured: {reference.lacks(['wetlands'])}; add it "
        f"({reference.adds('wetlands')}) and screen again"
    )
    out = []
    for row in rows:
        row = dict(row)
        notes = []
        if a_lacks and row["condition_a"] == APPLIES:
            notes.append(decided)
        elif a_lacks:  # what was measured stays (facts); the decision and its reasons go
            row.update(condition_a=NOT_DECIDED, why="")
            notes.append(undecided)
        if "wetlands" in lacking:
            row.update(wetland_status=NOT_MEASURED, wetlands="", wetland_acres=None, adjacent_area_acres=None)
            notes.append(wetlands)
        row["why"] = "; ".join([*notes, *([row["why"]] if row["why"] else [])])
        out.append(row)
    return out


def _condition_a_overlaps(
    sites: Sites, reference, profile: RulesProfile, boxes: np.ndarray, progress: Progress
) -> Overlaps:
    """What Condition A is decided on, for every site: the catchments each overlaps and their
    route downstream, the TMDL watersheds, the listed waters. Its own function so that the
    catchments and watersheds read (thousands of vertices each) are let go before the wetlands
    are read (at 200,000 wetlands and 10,000 sites, the screen's peak fell from 536 MB to 444 MB)."""
    crs = sites.crs
    progress.step(0.05, "reading catchments")
    overlaps = Overlaps()
    geoms = sites.geometries
    minimum = profile.condition_a.min_overlap_sq_ft
    catchments = reference.read_boxes("catchments", boxes, crs, needed_for=NEEDED)
    s, f, _, _ = _overlapping(geoms, catchments, minimum, crs)
    ids = catchments["catchment_id"].to_numpy(dtype=object)
    drains = catchments["drains_to"].to_numpy(dtype=object)
    overlaps.catchments = list(zip(s.tolist(), ids[f], drains[f]))
    progress.step(0.2, "following the catchments downstream")
    read = _SharedRead(reference, crs, boxes, catchments)
    held = {str(c).strip(): g for c, g in zip(ids, catchments.geometry.values)}
    begin = site_starts(overlaps.catchments)
    overlaps.routes = follow_routes(
        begin,
        lambda: ([held.get(s.catchment_id) for s in begin], held),
        catchment_lookup(reference, NEEDED),
        read,
        profile,
        crs,
        reference.water_links,
    )
    progress.step(0.3, "reading TMDL watersheds")
    sheds = read.sheds()
    s, f, held, shared = _overlapping(geoms, sheds, minimum, crs)
    overlaps.watersheds = list(
        zip(
            s.tolist(),
            sheds["watershed_id"].to_numpy(dtype=object)[f],
            sheds["stormwater_source"].to_numpy(dtype=float)[f],
            sheds["pollutants"].to_numpy(dtype=object)[f],
            held.tolist(),
        )
    )
    overlaps.tmdl_acres = np.zeros(len(geoms))
    if len(s):
        starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]])
        overlaps.tmdl_acres[s[starts]] = acres(
            grouped_union(shared, starts, np.diff(np.r_[starts, len(s)])), crs
        )
    progress.step(0.5, "looking up 303(d)-listed waters")
    wanted = {w.water_id for w in overlaps.routes.waters}
    listed = reference.lookup(
        "impaired_waters", "waterbody_id", wanted, normalise=water_id, needed_for=NEEDED
    )
    for wid, pollutants, category in zip(listed["waterbody_id"], listed["pollutants"], listed["category"]):
        overlaps.listed.setdefault(water_id(wid), []).append((str(wid), pollutants, category))
    return overlaps


class _SharedRead:
    """The route's reads (``reference.route.Read``) for the screen, each feature read once:

    - a catchment the screen holds already (read around the sites, or by an earlier level of
      the route: the route keeps them all) is not read again (its ``known``);
    - the TMDL watersheds are read once for the route and the sites together: the route asks
      for those around the downstream catchments and is given, in the same read, those around
      the sites' boxes as well (one meeting a site's box but no downstream catchment meets none
      of them in the route's overlay: the route's answer is the same)."""

    def __init__(self, reference: Reference, crs, boxes: np.ndarray, catchments):
        self._reference, self._crs, self._boxes = reference, crs, boxes
        self._held = set(catchments.index)  # the catchments' ids (as the reads index them)
        self._sheds = None

    def __call__(self, layer: str, around: np.ndarray) -> pd.DataFrame:
        if layer == "tmdl_watersheds":
            self._sheds = self._read(
                layer, np.vstack([np.asarray(around, dtype=float).reshape(-1, 4), self._boxes])
            )
            return _frame(self._sheds)
        frame = self._read(layer, around, self._held if layer == "catchments" else None)
        if layer == "catchments":
            self._held.update(frame.index)
        return _frame(frame)

    def sheds(self):
        """The TMDL watersheds meeting the sites' boxes (read with the route's, where it read)."""
        return self._read("tmdl_watersheds", self._boxes) if self._sheds is None else self._sheds

    def _read(self, layer: str, boxes: np.ndarray, known: Optional[set] = None):
        return self._reference.read_boxes(layer, boxes, self._crs, needed_for=NEEDED, known=known)


def _frame(frame) -> pd.DataFrame:
    """A read layer as the route takes it: its fields and a column of shapely geometries."""
    out = pd.DataFrame(frame.drop(columns=frame.geometry.name))
    out["geometry"] = np.asarray(frame.geometry.values, dtype=object)
    return out


def _overlapping(sites, frame, minimum_sq_ft, crs):
    """(site index, feature position, acres shared, shared part) for each site and polygon of
    ``frame`` it overlaps (``overlay.overlap_pairs``), by site then feature."""
    s, f, shared, _ = overlap_pairs(sites, frame.geometry.values, minimum_sq_ft, crs)
    return s, f, np.atleast_1d(acres(shared, crs)) if len(s) else np.zeros(0), shared


def _told_order(shed) -> tuple:
    """A TMDL watershed's place in a row, (id, pollutants, stormwater_source, acres or route):
    whatever order the store gave the features in (a GeoPackage's, PostgreSQL's), one row."""
    shed_id, source, pollutants, last = shed[:4]
    return (str(shed_id), str(pollutants), -1.0 if np.isnan(source) else float(source), last)


def decide(site_ids, geometries, overlaps: Overlaps, profile: RulesProfile, crs) -> list[dict]:
    """Each site's row: its measurements as the engine's evidence, Condition A decided by
    ``judge.decide.decide_condition_a`` (the review's decision), worded as a row."""
    names = PollutantNames.from_profile(profile)
    records: dict[str, list[Optional[ListedRecord]]] = {
        wid: [
            ListedRecord(
                shown,
                None,
                None,
                text_or_none(category),
                CategoryKind(category_kind(category, profile)),
                text_or_none(pollutants),
                tuple(names.split(pollutants)),
            )
            for shown, pollutants, category in found
        ]
        for wid, found in overlaps.listed.items()
    }
    n = len(site_ids)
    receiving: list[dict] = [{} for _ in range(n)]  # water id -> catchments it came from
    routes: list[dict] = [{} for _ in range(n)]  # water id -> its route, if downstream
    for water in overlaps.routes.waters:  # a starting catchment's water needs no route told
        receiving[water.site].setdefault(water.water_id, []).append(str(water.catchment_id))
        if water.depth and water.water_id not in routes[water.site]:
            routes[water.site][water.water_id] = water.route
    split: dict = {}  # a pollutants field's names, each text split once

    def shed(watershed_id, source, pollutants, **how) -> WatershedEvidence:
        if pollutants not in split:
            split[pollutants] = tuple(names.split(pollutants))
        return WatershedEvidence(
            str(watershed_id),
            None,
            None,
            text_or_none(pollutants),
            split[pollutants],
            WatershedEvidence.source_of(source),
            **how,
        )

    sheds: list[list] = [[] for _ in range(n)]
    for site, *found in overlaps.watersheds:
        sheds[site].append(found)
    routed: list[list] = [[] for _ in range(n)]
    frame = overlaps.routes.watersheds
    if overlaps.routes.sheds and frame is not None:
        ids, sources, pollutants = (
            frame["watershed_id"].to_numpy(dtype=object),
            frame["stormwater_source"].to_numpy(dtype=float),
            frame["pollutants"].to_numpy(dtype=object),
        )
        for met in overlaps.routes.sheds:
            routed[met.site].append(
                (ids[met.feature], sources[met.feature], pollutants[met.feature], met.route, met.share)
            )
    unplaced: list[list] = [[] for _ in range(n)]
    for site, route in overlaps.routes.unplaced:
        unplaced[site].append(route)
    cut: list[list] = [[] for _ in range(n)]
    for site, note in overlaps.routes.cut:
        cut[site].append(note)
    wet = overlaps.wetlands
    wetland_status, wetlands_met = wet.status(profile), wet.met(profile)
    site_acres = np.atleast_1d(acres(geometries, crs)) if len(geometries) else np.zeros(0)
    rows = []
    for k, site_id in enumerate(site_ids):
        waters = []
        for wid in sorted(receiving[k]):
            downstream = routes[k].get(wid)
            came = tuple(receiving[k][wid])
            reach = Reach.DOWNSTREAM if downstream else Reach.CATCHMENT
            waters += [
                WaterEvidence(wid, reach, came, downstream, record) for record in records.get(wid) or [None]
            ]
        evidence = ConditionAEvidence(
            tuple(waters),
            tuple(shed(i, source, p, acres=a) for i, source, p, a in sorted(sheds[k], key=_told_order)),
            tuple(
                shed(i, source, p, route=r, share=share)
                for i, source, p, r, share in sorted(routed[k], key=_told_order)
            ),
            tuple(unplaced[k]),
            tuple(cut[k]),
            bool(receiving[k]),
        )
        decision = decide_condition_a(evidence, profile, names.sediment)
        applies = decision.verdict is Verdict.APPLIES
        triggers = decision.triggers
        rows.append(
            {
                "site_id": str(site_id),
                "site_acres": float(site_acres[k]),
                "condition_a": decision.verdict.value,
                "receiving_waters": ";".join(sorted(receiving[k])),
                "listed_waters": ";".join(
                    dict.fromkeys(r.record.waterbody_id for r in triggers if r.water is not None)
                ),
                "tmdl_watersheds": ";".join(
                    dict.fromkeys(r.watershed.watershed_id for r in triggers if r.watershed is not None)
                ),
                "tmdl_acres": float(overlaps.tmdl_acres[k]) if sheds[k] else 0.0,
                "pollutants": ";".join(decision.pollutants) if applies else "",
                "why": "; ".join(row_lines(decision, names)),
                "wetland_status": wetland_status[k].value,
                "wetlands": ";".join(wetlands_met[k]),
                "wetland_acres": float(wet.wetland_acres[k]),
                "adjacent_area_acres": float(wet.adjacent_acres[k]),
            }
        )
    return rows
