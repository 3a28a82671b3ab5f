"""Condition A (SWPPP C(1)): a pollutant of concern discharged to an impaired water or a TMDL watershed."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..findings import INFO, NEEDS_REVIEW, NOT_APPLICABLE, WARN, Finding
from ..judge.decide import ConditionADecision, Verdict, decide_condition_a
from ..judge.evidence import (
    CategoryKind,
    ConditionAEvidence,
    ListedRecord,
    Reach,
    WaterEvidence,
    WatershedEvidence,
    text_or_none,
)
from ..judge.pollutants import PollutantNames, normalise_name
from ..judge.route import Routes, Start, follow_routes
from ..judge.wording import (
    catchment_drains_to_listed,
    concern,
    in_catchment,
    no_reference,
    review_line,
    review_lines,
)
from ..overlay import overlap_pairs, shared_parts
from ..profile import RulesProfile
from ..reference.categories import category_kind
from ..reference.route import catchment_lookup, water_id
from ..siteplan.plan import SitePlan
from ..units import acres
from ..values import feature_labels, has_text
from .applicability import DisturbedArea
from .base import Check, CheckResult
from .conditions import Condition

__all__ = [
    "CHECKS",
    "ReceivingWaters",
    "receiving_waters",
    "check_condition_a",
    "routed_watersheds",
    "listed_record",
]

RULE = "condition_a"


@dataclass
class ReceivingWaters:
    """Which waters receive the site's discharge, and how that is known."""

    ids: dict = field(default_factory=dict)  # waterbody_id -> [feature labels it came from]
    names: dict = field(default_factory=dict)  # folded name -> [where it was given]
    route: str = "none"  # "discharge_point", "catchments" or "none"
    catchments: Optional[gpd.GeoDataFrame] = None  # the catchments the runoff starts in
    routes: Routes = field(default_factory=Routes)  # what the route downstream found
    water_routes: dict = field(default_factory=dict)  # waterbody_id -> how a catchment names it
    reaches: dict = field(default_factory=dict)  # waterbody_id -> Reach: how it is first reached


def receiving_waters(
    site: SitePlan,
    disturbed: DisturbedArea,
    catchments: Optional[gpd.GeoDataFrame],
    profile: RulesProfile,
    reference=None,
) -> ReceivingWaters:
    """The discharge points' ``waterbody_id``s, and the waters named by the catchments the
    runoff flows through: the catchment each discharge point lies in (with no discharge points,
    those the disturbance lies in) and, with ``reference``, those downstream of it by
    ``drains_to`` (:mod:`analysis.reference.catchments`), up to ``[condition_a]
    downstream_catchment_hops`` steps.

    Names (the project's ``receiving_waters``, the discharge points' ``receiving_water``) are
    kept to be matched against listed waters by name.
    """
    out = ReceivingWaters()
    points = site.layer("discharge_point")
    if points is not None and len(points):
        labels = feature_labels("discharge_point", points, "waterbody_id")
        for label, value in zip(labels, points["waterbody_id"]):
            if has_text(value):
                out.ids.setdefault(water_id(value), []).append(label)
                out.reaches.setdefault(water_id(value), Reach.DISCHARGE_POINT)
        for label, value in zip(labels, points["receiving_water"]):
            if has_text(value):
                out.names.setdefault(normalise_name(value), []).append(label)
    for part in str(site.project.get("receiving_waters") or "").split(";"):
        if part.strip():
            out.names.setdefault(normalise_name(part), []).append("project:receiving_waters")
    out.route = "discharge_point" if out.ids else "none"
    if catchments is None or not len(catchments):
        return out
    starts = _starting_catchments(catchments, points, disturbed, site, profile)
    picked = catchments.index.get_indexer(list(starts))
    # Every catchment read, in order (one, as a rule): the frame itself, which is only read;
    # a copy of some costs ~0.3 ms on geopandas 0.12.
    out.catchments = (
        catchments if np.array_equal(picked, np.arange(len(catchments))) else catchments.take(picked)
    )
    origin = feature_labels("catchments", out.catchments, "catchment_id")
    rows = list(out.catchments.iterrows())
    out.routes = follow_routes(
        [
            Start(
                0,
                row["catchment_id"],
                row["drains_to"],
                in_catchment(starts[fid], row["catchment_id"], row.get("name")),
            )
            for fid, row in rows
        ],
        lambda: (
            [row.geometry for _, row in rows],
            {str(c).strip(): g for c, g in zip(catchments["catchment_id"], catchments.geometry.values)},
        ),
        catchment_lookup(reference, "Condition A (SWPPP C(1))"),
        _reader(reference, site),
        profile,
        site.area_crs,
        None if reference is None else reference.water_links,
    )
    for water in out.routes.waters:
        out.ids.setdefault(water.water_id, []).append(
            origin[water.start] if water.depth == 0 else f"catchments:{water.catchment_id}"
        )
        out.water_routes.setdefault(water.water_id, water.route)
        out.reaches.setdefault(water.water_id, Reach.CATCHMENT if water.depth == 0 else Reach.DOWNSTREAM)
    if out.route == "none" and out.ids:
        out.route = "catchments"
    return out


def _starting_catchments(catchments, points, disturbed, site, profile) -> dict:
    """{catchment index: how the runoff is in it}: those the discharge points lie in, else (no
    discharge point placed) those the disturbance overlaps."""
    starts: dict = {}
    for label, k in _outfalls_in(catchments, points):
        fid = catchments.index[k]
        starts[fid] = f"{starts[fid]}, {label}" if fid in starts else f"{label} lies in"
    if not starts:
        for fid in catchments.index[_overlapping(catchments, disturbed, site, profile)]:
            starts[fid] = "the disturbance lies in"
    return starts


def _outfalls_in(polygons, points) -> list:
    """``(discharge point label, position in polygons)`` for each placed discharge point and
    each of ``polygons`` it lies in."""
    pairs: list = []
    if points is None or not len(points):
        return pairs
    geometries = np.asarray(polygons.geometry.values, dtype=object)
    labels = feature_labels("discharge_point", points, "waterbody_id")
    for label, point in zip(labels, points.geometry.values):
        if point is not None and not shapely.is_empty(point):
            pairs += [(label, int(k)) for k in np.flatnonzero(shapely.intersects(geometries, point))]
    return pairs


def _reader(reference, site):
    """The route's read of a layer (:data:`analysis.reference.route.Read`): one read of the
    box around the boxes given (one site's)."""

    def read(layer, boxes) -> gpd.GeoDataFrame:
        bounds = tuple(float(v) for v in shapely.total_bounds(shapely.box(*np.asarray(boxes).T)))
        frame = reference.read(layer, bounds, site.area_crs, needed_for="Condition A (SWPPP C(1))")
        return frame if frame.geometry.name == "geometry" else frame.rename_geometry("geometry")

    return read


def check_condition_a(
    site: SitePlan,
    disturbed: DisturbedArea,
    profile: RulesProfile,
    receiving: Optional[ReceivingWaters],
    listed_by_id: pd.DataFrame,
    listed_by_name: pd.DataFrame,
    tmdl_watersheds: Optional[gpd.GeoDataFrame],
    routed: Optional[list] = None,
) -> tuple[list[Finding], Condition, Optional[ConditionADecision]]:
    """The ``condition_a`` findings, Condition A with every piece of evidence, and the decision
    (None where no reference was given): the site's
    evidence (:mod:`analysis.judge.evidence`) decided by :func:`analysis.judge.decide.
    decide_condition_a`, as the screen decides it, and worded for findings.

    Parameters
    ----------
    receiving
        From :func:`receiving_waters`; None where no reference layers were given.
    listed_by_id, listed_by_name
        The ``impaired_waters`` rows whose ``waterbody_id`` is one of the receiving ids, and
        those whose ``name`` matches a receiving water's name.
    tmdl_watersheds
        The TMDL watersheds read around the site.
    routed
        From :func:`routed_watersheds`: a WatershedEvidence per TMDL watershed met only
        through a catchment downstream of the site's.
    """
    section = profile.section(RULE)
    if receiving is None:
        why = no_reference()
        return (
            [Finding(RULE, NEEDS_REVIEW, section, f"Condition A not decided: {why}")],
            Condition(False, [why], decided=False),
            None,
        )
    names = PollutantNames.from_profile(profile)
    waters = []
    found = set()
    for _, water in listed_by_id.iterrows():
        wid = water_id(water["waterbody_id"])
        found.add(wid)
        waters.append(
            WaterEvidence(
                wid,
                receiving.reaches.get(wid, Reach.CATCHMENT),
                tuple(receiving.ids.get(wid, [])),
                receiving.water_routes.get(wid),
                listed_record(water, names, profile),
            )
        )
    for _, water in listed_by_name.iterrows():
        wid = water_id(water["waterbody_id"])
        if wid in found:
            continue
        found.add(wid)
        given = sorted(
            {
                g
                for key, where in receiving.names.items()
                if key == normalise_name(water["name"])
                for g in where
            }
        )
        waters.append(
            WaterEvidence(wid, Reach.NAME, tuple(given), record=listed_record(water, names, profile))
        )
    waters += [
        WaterEvidence(wid, receiving.reaches.get(wid, Reach.CATCHMENT), tuple(receiving.ids[wid]))
        for wid in sorted(set(receiving.ids) - found)
    ]
    evidence = ConditionAEvidence(
        tuple(waters),
        tuple(_tmdl_overlaps(tmdl_watersheds, disturbed, site, profile, names)),
        tuple(routed or ()),
        tuple(route for _, route in receiving.routes.unplaced),
        tuple(note for _, note in receiving.routes.cut),
        bool(receiving.ids),
    )
    decision = decide_condition_a(evidence, profile, names.sediment)
    if decision.verdict is Verdict.APPLIES:
        triggers = [review_line(r, names) for r in decision.triggers]
        evidence_findings: list[Finding] = []
        for reason, line in zip(decision.triggers, triggers):
            if (
                reason.water is not None
                and reason.water.reach is not Reach.NAME
                and receiving.route == "catchments"
            ):
                evidence_findings += _catchment_findings(receiving, reason.water, section)
            if reason.watershed is not None:
                evidence_findings.append(
                    Finding(
                        RULE,
                        INFO,
                        section,
                        f"Condition A: {line}",
                        features=[reason.watershed.label],
                        geometry=reason.watershed.geometry,
                    )
                )
        tail = (
            (
                "; confirm that the water matched by name only receives the discharge (advice: "
                "the chapter says nothing of names)"
            )
            if decision.by_name_only
            else ""
        )
        main = Finding(
            RULE,
            WARN if decision.by_name_only else INFO,
            section,
            f"Condition A applies: {'; '.join(triggers)}{tail}",
            features=_features(receiving, evidence_findings),
        )
        return [main, *evidence_findings], Condition(True, triggers + [concern(decision)]), decision
    lines = review_lines(decision.why, names)
    why = "; ".join(lines)
    if decision.verdict is Verdict.NOT_DECIDED:
        return (
            [
                Finding(
                    RULE,
                    NEEDS_REVIEW,
                    section,
                    f"Condition A not decided: {why}",
                    features=_features(receiving, []),
                )
            ],
            Condition(False, lines, decided=False),
            decision,
        )
    return (
        [
            Finding(
                RULE,
                NOT_APPLICABLE,
                section,
                f"Condition A does not apply: {why}",
                features=_features(receiving, []),
            )
        ],
        Condition(False, [why]),
        decision,
    )


def listed_record(water: pd.Series, names: PollutantNames, profile: RulesProfile) -> ListedRecord:
    """A row of ``impaired_waters`` as evidence."""
    return ListedRecord(
        str(water["waterbody_id"]),
        text_or_none(water["name"]),
        text_or_none(water["listing_cycle"]),
        text_or_none(water["category"]),
        CategoryKind(category_kind(water.get("category"), profile)),
        text_or_none(water["pollutants"]),
        tuple(names.split(water["pollutants"])),
    )


def _catchment_findings(receiving, water: WaterEvidence, section) -> list[Finding]:
    frame = receiving.catchments
    out = []
    for fid, row in frame.iterrows():
        label = _label("catchments", fid, row["catchment_id"])
        if has_text(row["drains_to"]) and water.water_id in [
            water_id(w) for w in str(row["drains_to"]).split(";")
        ]:
            out.append(
                Finding(
                    RULE,
                    INFO,
                    section,
                    catchment_drains_to_listed(
                        row["catchment_id"],
                        row["name"],
                        water.water_id,
                        water.record.name if water.record else None,
                    ),
                    features=[label],
                    geometry=row.geometry,
                )
            )
    return out


def watershed_evidence(fid, shed, geometry, names: PollutantNames, **how) -> WatershedEvidence:
    """A TMDL watershed read (``fid``, its row and shape) as evidence; ``how``: its acres and
    outfalls (overlapped), or its route (met downstream)."""
    return WatershedEvidence(
        str(shed["watershed_id"]),
        str(shed["tmdl_id"]),
        text_or_none(shed["name"]),
        text_or_none(shed["pollutants"]),
        tuple(names.split(shed["pollutants"])),
        WatershedEvidence.source_of(shed["stormwater_source"]),
        label=_label("tmdl_watersheds", fid, shed["watershed_id"]),
        geometry=geometry,
        tmdl_date=text_or_none(shed.get("tmdl_date")),
        **how,
    )


def _tmdl_overlaps(watersheds, disturbed, site, profile, names) -> list[WatershedEvidence]:
    """The evidence (acres of disturbance held, discharge points inside) of each watershed
    the disturbance overlaps or a discharge point lies in: C(1) is about runoff "discharging
    ... to ... a TMDL designated watershed", so an outfall inside one counts though the site
    lies outside it."""
    if watersheds is None or not len(watersheds):
        return []
    inside = _overlapping(watersheds, disturbed, site, profile)
    points = site.layer("discharge_point")
    outfalls: list[list[str]] = [[] for _ in range(len(watersheds))]
    for label, k in _outfalls_in(watersheds, points):
        outfalls[k].append(label)
        inside[k] = True
    frame = watersheds[inside]
    kept = [o for o, keep in zip(outfalls, inside) if keep]
    geometries = np.asarray(frame.geometry.values, dtype=object)
    held = acres(
        shared_parts(geometries, np.full(len(geometries), disturbed.geometry, dtype=object)), site.area_crs
    )
    return [
        watershed_evidence(i, row, g, names, acres=float(a), outfalls=tuple(o))
        for (i, row), g, a, o in zip(frame.iterrows(), geometries, np.atleast_1d(held), kept)
    ]


def routed_watersheds(receiving: ReceivingWaters, profile: RulesProfile) -> list:
    """The evidence (its route, the catchment's share of it) of each TMDL watershed a
    catchment downstream of the site's meets (overlaps by ``[condition_a] min_overlap_sq_ft``
    or more), by the route ``judge.route.follow_routes`` tells (read around those
    catchments)."""
    frame = receiving.routes.watersheds
    if frame is None:
        return []
    names = PollutantNames.from_profile(profile)
    return [
        watershed_evidence(
            frame.index[met.feature],
            frame.iloc[met.feature],
            met.geometry,
            names,
            route=met.route,
            share=met.share,
        )
        for met in receiving.routes.sheds
    ]


def _overlapping(frame, disturbed, site, profile) -> np.ndarray:
    """Which polygons of ``frame`` the disturbance overlaps (``overlay.overlap_pairs``)."""
    keep = np.zeros(len(frame), dtype=bool)
    keep[
        overlap_pairs(
            [disturbed.geometry], frame.geometry.values, profile.condition_a.min_overlap_sq_ft, site.area_crs
        )[1]
    ] = True
    return keep


def _label(layer, fid, value) -> str:
    return f"{layer}:{value}" if has_text(value) else f"{layer}:#{fid}"


def _features(receiving, evidence_findings) -> list[str]:
    labels = [label for where in receiving.ids.values() for label in where]
    labels += [label for f in evidence_findings for label in f.features]
    return list(dict.fromkeys(labels))


# --- the review's check ------------------------------------------------------------------


def _run(context, progress) -> CheckResult:
    site, disturbed, profile, reference = (
        context.site,
        context.disturbed,
        context.profile,
        context.reference,
    )
    if reference is None:
        findings, a, _ = check_condition_a(site, disturbed, profile, None, None, None, None)
        return CheckResult(findings, conditions={"A": a})
    needed = "Condition A (SWPPP C(1))"
    sheds = context.read("tmdl_watersheds", needed_for=needed)
    receiving = receiving_waters(site, disturbed, None, profile)
    # The catchments the runoff flows through name more receiving waters; with no discharge
    # point naming its water, they are needed (an error names the missing layer).
    if receiving.route == "none" or reference.has("catchments"):
        catchments = context.read("catchments", needed_for=needed)
        receiving = receiving_waters(site, disturbed, catchments, profile, reference)
    routed = routed_watersheds(receiving, profile)
    by_id = reference.lookup(
        "impaired_waters", "waterbody_id", receiving.ids, normalise=water_id, needed_for=needed
    )
    by_name = reference.lookup(
        "impaired_waters", "name", receiving.names, normalise=normalise_name, needed_for=needed
    )
    findings, a, decision = check_condition_a(
        site, disturbed, profile, receiving, by_id, by_name, sheds, routed
    )
    return CheckResult(findings, conditions={"A": a}, extra={"condition_a": decision})


CHECKS = (
    Check(
        "condition_a",
        regulated=True,
        rules=("condition_a",),
        reads=(
            "site:disturbance",
            "site:discharge_point",
            "site:project",
            "reference:tmdl_watersheds",
            "reference:catchments",
            "reference:impaired_waters",
        ),
        run=_run,
        doing="deciding Condition A from the reference layers",
        weight=4.0,
    ),
)
