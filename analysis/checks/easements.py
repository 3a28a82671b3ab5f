"""Maintenance easements over every SMP, reaching a public right-of-way (SWPPP D(8); Maintenance B).

Coverage: each SMP minus the union of the easements that hold it (an STRtree finds them; one
grouped union and one ``shapely.difference`` over arrays do the rest). An uncovered area up to
the larger of ``uncovered_tolerance_sq_ft`` and ``uncovered_tolerance_fraction`` of the SMP's
area is a digitising sliver, not a failure. A point SMP has no area: it is inside when it lies
within ``snap_tolerance_ft`` of an easement, and outside it fails with 0 sq ft uncovered and its
distance to the nearest easement in the message.

Access: easements within ``snap_tolerance_ft`` of each other form one connected group (the graph
is built once, its components labelled with vectorised union-find); an SMP is reachable when a
group holding it comes within the same tolerance of a ``public_row`` polygon.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional

import numpy as np
import pandas as pd
import shapely
from numpy.typing import ArrayLike

from ..errors import InputError
from ..findings import AFTER_APPROVAL, FAIL, INFO, NEEDS_REVIEW, NOT_APPLICABLE, PASS, WARN, Finding
from ..geometry import in_family
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import CrsLike, crs_units, feet, square_feet
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = [
    "CHECKS",
    "Coverage",
    "smp_coverage",
    "Access",
    "easement_access",
    "connected_components",
    "recorded_flags",
    "check_easement_coverage",
]

RULE = "easement_coverage"


@dataclass
class Coverage:
    """Each SMP against the maintenance easements; every array is aligned with the SMPs.

    ``holder_smp[k]`` and ``holder_easement[k]`` pair an SMP with an easement that holds it:
    shares area with a polygon SMP (touching along an edge is not holding), or lies within the
    snapping tolerance of a point SMP.
    """

    uncovered: np.ndarray  # the part outside every easement (area CRS), empty when covered
    uncovered_sq_ft: np.ndarray
    tolerance_sq_ft: np.ndarray
    failing: np.ndarray  # bool: uncovered beyond the tolerance (a point: outside at all)
    is_point: np.ndarray
    holder_smp: np.ndarray
    holder_easement: np.ndarray
    unrecorded_part: np.ndarray  # the part held only by easements not yet recorded
    unrecorded_sq_ft: np.ndarray
    relies_on_unrecorded: np.ndarray  # bool
    nearest_easement: np.ndarray  # uncovered points: index of the nearest easement, else -1
    nearest_distance_ft: np.ndarray  # uncovered points: distance to it, else NaN


@dataclass
class Access:
    """For each SMP, whether its easements reach a public right-of-way, and how near they come.

    ``gap_ft`` is the distance from the connected group of easements holding the SMP to the
    nearest right-of-way (0 when within the snapping tolerance; NaN for an SMP no easement
    holds), ``nearest_row`` that right-of-way's index (-1 where none).
    """

    held: np.ndarray
    reachable: np.ndarray
    gap_ft: np.ndarray
    nearest_row: np.ndarray
    component: np.ndarray  # per easement: the label of its connected group


def smp_coverage(
    smps: ArrayLike, easements: ArrayLike, recorded: ArrayLike, crs: CrsLike, profile: RulesProfile
) -> Coverage:
    """Measure each SMP against the union of the easements that hold it.

    Parameters
    ----------
    smps, easements : array of shapely geometries in ``crs`` (the area CRS)
    recorded : bool array, one per easement
    crs : the area CRS (a projected CRS; lengths and areas are converted to international feet)
    profile : the rules profile (``[easement_coverage]`` tolerances)

    Examples
    --------
    >>> from analysis.profile import load_profile
    >>> c = smp_coverage(np.array([shapely.box(0, 0, 10, 10)]),
    ...                  np.array([shapely.box(0, 0, 8, 10)]), np.array([True]), "EPSG:2260",
    ...                  load_profile())
    >>> round(float(c.uncovered_sq_ft[0]), 1), bool(c.failing[0])
    (20.0, True)
    """
    smps = np.asarray(smps, dtype=object)
    easements = np.asarray(easements, dtype=object)
    recorded = np.asarray(recorded, dtype=bool)
    n = len(smps)
    snap = crs_units(profile.easement_coverage.snap_tolerance_ft, crs)
    min_sq_ft = profile.easement_coverage.uncovered_tolerance_sq_ft
    fraction = profile.easement_coverage.uncovered_tolerance_fraction
    is_point = in_family(smps, "point")

    tree = shapely.STRtree(easements)
    s, e = _holders(tree, smps, easements, is_point, snap)
    uncovered = _outside(smps, _grown(_grouped_union(easements, s, e, n), is_point, snap))
    uncovered_sq_ft = np.asarray(square_feet(uncovered, crs), dtype=float)  # one per SMP
    tolerance = np.maximum(min_sq_ft, fraction * square_feet(smps, crs))
    failing = np.where(is_point, ~shapely.is_empty(uncovered), uncovered_sq_ft > tolerance)

    on_record = recorded[e]
    outside_recorded = _outside(
        smps, _grown(_grouped_union(easements, s[on_record], e[on_record], n), is_point, snap)
    )
    unrecorded_part = shapely.difference(outside_recorded, uncovered)
    unrecorded_sq_ft = np.asarray(square_feet(unrecorded_part, crs), dtype=float)
    relies = np.where(is_point, ~shapely.is_empty(unrecorded_part), unrecorded_sq_ft > tolerance)

    nearest = np.full(n, -1)
    distance_ft = np.full(n, np.nan)
    lost = np.flatnonzero(is_point & failing)
    if len(lost) and len(easements):
        (which, index), distance = tree.query_nearest(
            uncovered[lost], return_distance=True, all_matches=False
        )
        nearest[lost[which]] = index
        distance_ft[lost[which]] = feet(distance, crs)
    return Coverage(
        uncovered=uncovered,
        uncovered_sq_ft=uncovered_sq_ft,
        tolerance_sq_ft=tolerance,
        failing=failing,
        is_point=is_point,
        holder_smp=s,
        holder_easement=e,
        unrecorded_part=unrecorded_part,
        unrecorded_sq_ft=unrecorded_sq_ft,
        relies_on_unrecorded=relies,
        nearest_easement=nearest,
        nearest_distance_ft=distance_ft,
    )


def easement_access(
    easements: ArrayLike,
    rows: ArrayLike,
    holder_smp: np.ndarray,
    holder_easement: np.ndarray,
    n_smps: int,
    crs: CrsLike,
    profile: RulesProfile,
) -> Access:
    """Whether each SMP's easements connect to a public right-of-way (``rows``).

    Easements within the snapping tolerance of each other are connected; a connected group
    reaches the right-of-way when one of its easements comes within the tolerance of it.
    """
    easements = np.asarray(easements, dtype=object)
    rows = np.asarray(rows, dtype=object)
    snap = crs_units(profile.easement_coverage.snap_tolerance_ft, crs)
    m = len(easements)
    first, second = shapely.STRtree(easements).query(easements, predicate="dwithin", distance=snap)
    component = connected_components(m, first, second)

    gap = np.full(m, np.inf)
    row_of = np.full(m, -1)
    if len(rows) and m:
        row_tree = shapely.STRtree(rows)
        touching, row = row_tree.query(easements, predicate="dwithin", distance=snap)
        gap[touching], row_of[touching] = 0.0, row
        # How near the other groups come: only easements of groups that reach nothing.
        reaching = np.zeros(m, dtype=bool)
        reaching[component[touching]] = True
        apart = np.flatnonzero(~reaching[component])
        (index, row), distance = row_tree.query_nearest(
            easements[apart], return_distance=True, all_matches=False
        )
        gap[apart[index]], row_of[apart[index]] = distance, row
    # Each group's nearest approach is its member closest to a right-of-way; an SMP's, the
    # nearest approach of the groups holding it.
    group_best = np.full(m, -1)
    _, closest = _first_per_group(component, gap)
    group_best[component[closest]] = closest
    best_of_pair = group_best[component[holder_easement]]
    smps_held, pair = _first_per_group(holder_smp, gap[best_of_pair])
    best = best_of_pair[pair]

    held = np.zeros(n_smps, dtype=bool)
    held[smps_held] = True
    gap_ft = np.full(n_smps, np.nan)
    gap_ft[smps_held] = np.where(np.isfinite(gap[best]), feet(gap[best], crs), np.inf)
    nearest_row = np.full(n_smps, -1)
    nearest_row[smps_held] = row_of[best]
    reachable = held & (gap_ft == 0.0)
    return Access(held=held, reachable=reachable, gap_ft=gap_ft, nearest_row=nearest_row, component=component)


def connected_components(count: int, first: ArrayLike, second: ArrayLike) -> np.ndarray:
    """Label each of ``count`` nodes with the smallest node of its connected component.

    ``first[k]`` and ``second[k]`` are the ends of edge ``k``. Vectorised union-find: every
    round hooks each root onto the smallest root across its edges, then halves paths until
    every node points at its root; a round costs a few numpy passes over the edges.

    >>> connected_components(5, np.array([0, 3, 2]), np.array([1, 4, 3])).tolist()
    [0, 0, 2, 2, 2]
    """
    labels: np.ndarray = np.arange(count)
    first, second = np.asarray(first, dtype=np.intp), np.asarray(second, dtype=np.intp)
    while True:
        a, b = labels[first], labels[second]
        crossing = a != b
        if not crossing.any():
            return labels
        a, b = a[crossing], b[crossing]
        low = np.minimum(a, b)
        np.minimum.at(labels, np.maximum(a, b), low)  # hook the larger root onto the smaller
        while True:  # compress: each node points at its root
            jumped = labels[labels]
            if np.array_equal(jumped, labels):
                break
            labels = jumped


def recorded_flags(site: SitePlan) -> np.ndarray:
    """One bool per easement: ``recorded`` is 1 (0 or empty: not yet recorded)."""
    frame = site.layer("easement")
    if frame is None:
        return np.zeros(0, dtype=bool)
    raw = frame["recorded"]
    value = pd.to_numeric(raw, errors="coerce")
    bad = raw.notna().to_numpy() & ~value.isin([0, 1]).to_numpy()
    if bad.any():
        at = np.flatnonzero(bad)[0]
        raise InputError(
            f"recorded is {raw.iloc[at]!r}; it must be 1 or 0",
            path=site.path,
            layer="easement",
            feature=frame.index[at],
            field="recorded",
            fix="use 1 for a recorded easement, 0 (or empty) for one not yet recorded",
        )
    flags: np.ndarray = (value == 1).to_numpy()
    return flags


def check_easement_coverage(site: SitePlan, profile: RulesProfile) -> tuple[list[Finding], dict[str, float]]:
    """The ``easement_coverage`` findings and the ``uncovered_smp_sq_ft`` measurement.

    One ``fail`` per SMP outside the easements (its uncovered part as geometry), one ``warn``
    per SMP held only by easements not yet recorded, one ``warn`` per SMP whose easements do
    not reach a public right-of-way (``needs_review`` for access where the plan has no
    ``public_row``), and a ``pass`` for each part that holds for every SMP.
    """
    section = profile.section(RULE)
    smp_frame = site.layer("smp")
    if smp_frame is None or len(smp_frame) == 0:
        return [
            Finding(
                RULE,
                NOT_APPLICABLE,
                section,
                "the plan shows no SMP, so no maintenance easement is checked "
                "(postconstruction_controls says whether SMPs are required)",
            )
        ], {}
    crs = site.area_crs
    smps = _geometries(smp_frame)
    smp_labels = np.asarray(site.labels("smp"), dtype=object)
    easement_frame = site.layer("easement")
    easements = _geometries(easement_frame)
    easement_labels = np.asarray(site.labels("easement") if easement_frame is not None else [], dtype=object)
    recorded = recorded_flags(site)
    coverage = smp_coverage(smps, easements, recorded, crs, profile)
    holders = _members(coverage.holder_smp, coverage.holder_easement, len(smps))

    findings = _coverage_findings(coverage, smps, smp_labels, easement_labels, section)
    findings += _recording_findings(coverage, smp_labels, easement_labels, holders, recorded, section)
    findings += _access_findings(
        site, coverage, easements, smps, smp_labels, easement_labels, holders, profile, section
    )
    keys = _measurement_keys(smp_labels, smp_frame.index)
    return findings, dict(zip(keys, coverage.uncovered_sq_ft.tolist()))


# --- findings ------------------------------------------------------------------------------


def _coverage_findings(
    coverage: Coverage, smps: np.ndarray, smp_labels: np.ndarray, easement_labels: np.ndarray, section: str
) -> list[Finding]:
    failing = np.flatnonzero(coverage.failing)
    if not len(failing):
        worst = float(coverage.uncovered_sq_ft.max())
        return [
            Finding(
                RULE,
                PASS,
                section,
                f"every SMP ({len(smps)}) lies inside maintenance easements (largest "
                f"part outside: {_sq_ft(worst)} sq ft, within its tolerance)",
                value=worst,
                limit=float(coverage.tolerance_sq_ft.min()),
                units="sq ft",
                features=smp_labels.tolist(),
            )
        ]
    findings = []
    for k in failing:
        name = _name(smp_labels[k])
        sq_ft, tolerance = float(coverage.uncovered_sq_ft[k]), float(coverage.tolerance_sq_ft[k])
        if not len(easement_labels):
            message = (
                f"SMP {name} lies outside any maintenance easement: the plan shows no "
                f"easements (SWPPP D(8)); draw the easements over every SMP"
            )
        elif coverage.is_point[k]:
            near = coverage.nearest_easement[k]
            message = (
                f"SMP {name} is a point outside every maintenance easement, "
                f"{coverage.nearest_distance_ft[k]:,.1f} ft from the nearest "
                f"({_name(easement_labels[near])}); a point has no area, so its "
                f"uncovered area is 0 sq ft: draw the SMP's footprint inside an easement"
            )
        else:
            message = (
                f"SMP {name} has {_sq_ft(sq_ft)} sq ft outside any maintenance easement "
                f"(tolerance {_sq_ft(tolerance)} sq ft); extend the easement over it"
            )
        findings.append(
            Finding(
                RULE,
                FAIL,
                section,
                message,
                value=sq_ft,
                limit=tolerance,
                units="sq ft",
                features=[smp_labels[k]],
                geometry=coverage.uncovered[k],
            )
        )
    return findings


def _recording_findings(
    coverage: Coverage,
    smp_labels: np.ndarray,
    easement_labels: np.ndarray,
    holders: list[np.ndarray],
    recorded: np.ndarray,
    section: str,
) -> list[Finding]:
    findings = []
    for k in np.flatnonzero(coverage.relies_on_unrecorded):
        pending = [easement_labels[e] for e in holders[k] if not recorded[e]]
        part = coverage.unrecorded_part[k]
        value = None if coverage.is_point[k] else float(coverage.unrecorded_sq_ft[k])
        what = (
            f"SMP {_name(smp_labels[k])} is"
            if value is None
            else f"{_sq_ft(value)} sq ft of SMP {_name(smp_labels[k])} is"
        )
        findings.append(
            Finding(
                RULE,
                INFO,
                section,
                f"{what} held only by maintenance easement(s) shown on the plan but not yet recorded "
                f"with the County Clerk: {', '.join(_name(p) for p in pending)}. D(8) asks that "
                'easements "be recorded on the plan", which they are; Maintenance B has the '
                'easement declaration executed before approval and "recorded by the grantor in '
                'the office of the County Clerk after approval by the counsel for the Village": '
                "due after approval (confirm the declaration is executed)",
                value=value,
                units=None if value is None else "sq ft",
                features=[smp_labels[k], *pending],
                geometry=part,
                due=AFTER_APPROVAL,
            )
        )
    return findings


def _access_findings(
    site: SitePlan,
    coverage: Coverage,
    easements: np.ndarray,
    smps: np.ndarray,
    smp_labels: np.ndarray,
    easement_labels: np.ndarray,
    holders: list[np.ndarray],
    profile: RulesProfile,
    section: str,
) -> list[Finding]:
    held = np.zeros(len(smps), dtype=bool)
    held[coverage.holder_smp] = True
    if not held.any():
        return []  # no SMP lies in an easement: the coverage failures say it all
    row_frame = site.layer("public_row")
    if row_frame is None or len(row_frame) == 0:
        return [
            Finding(
                RULE,
                NEEDS_REVIEW,
                section,
                "the plan has no public_row layer, so whether the easements reach a "
                "public right-of-way for inspection and repair (Maintenance and repair B)"
                " cannot be checked; add the right-of-way polygons or check it by hand",
                features=smp_labels[held].tolist(),
            )
        ]
    row_labels = site.labels("public_row")
    access = easement_access(
        easements,
        _geometries(row_frame),
        coverage.holder_smp,
        coverage.holder_easement,
        len(smps),
        site.area_crs,
        profile,
    )
    snap_ft = profile.easement_coverage.snap_tolerance_ft
    unreachable = np.flatnonzero(access.held & ~access.reachable)
    if not len(unreachable):
        reached = sorted({_name(row_labels[r]) for r in access.nearest_row[access.held]})
        return [
            Finding(
                RULE,
                PASS,
                section,
                f"the easements of every SMP in an easement reach a public right-of-way "
                f"({', '.join(reached)}), directly or through touching easements",
                value=0.0,
                limit=snap_ft,
                units="ft",
                features=smp_labels[access.held].tolist(),
            )
        ]
    findings = []
    for k in unreachable:
        own = [easement_labels[e] for e in holders[k]]
        row = _name(row_labels[access.nearest_row[k]])
        findings.append(
            Finding(
                RULE,
                WARN,
                section,
                f"SMP {_name(smp_labels[k])} cannot be reached for inspection and repair: its "
                f"easement(s) {', '.join(_name(e) for e in own)}, with every easement connected to "
                f"them, stop {access.gap_ft[k]:,.1f} ft short of the public right-of-way ({row}); "
                f"extend an easement to the right-of-way",
                value=float(access.gap_ft[k]),
                limit=snap_ft,
                units="ft",
                features=[smp_labels[k], *own],
                geometry=smps[k],
            )
        )
    return findings


# --- helpers -------------------------------------------------------------------------------


def _geometries(frame: Optional[pd.DataFrame]) -> np.ndarray:
    if frame is None:
        return np.empty(0, dtype=object)
    return np.asarray(frame.geometry.values, dtype=object)


def _holders(
    tree: shapely.STRtree, smps: np.ndarray, easements: np.ndarray, is_point: np.ndarray, snap: float
) -> tuple[np.ndarray, np.ndarray]:
    """(SMP, easement) index pairs, sorted by SMP: a polygon SMP shares area with the easement
    (touching along an edge is not holding); a point lies within ``snap`` of it."""
    polygons, points = np.flatnonzero(~is_point), np.flatnonzero(is_point)
    s, e = tree.query(smps[polygons], predicate="intersects")
    shares_area = ~shapely.touches(smps[polygons[s]], easements[e])
    ps, pe = tree.query(smps[points], predicate="dwithin", distance=snap)
    s = np.concatenate([polygons[s[shares_area]], points[ps]])
    e = np.concatenate([e[shares_area], pe])
    order = np.argsort(s, kind="stable")
    return s[order], e[order]


def _outside(smps: np.ndarray, unions: np.ndarray) -> np.ndarray:
    """Each SMP minus its union; the overlay runs only where the union does not cover the SMP."""
    shapely.prepare(unions)
    outside = np.full(len(smps), shapely.from_wkt("GEOMETRYCOLLECTION EMPTY"), dtype=object)
    open_ = ~shapely.covers(unions, smps)
    outside[open_] = shapely.difference(smps[open_], unions[open_])
    return outside


def _grouped_union(geometries: np.ndarray, groups: np.ndarray, members: np.ndarray, n: int) -> np.ndarray:
    """For each group 0..n-1, the union of ``geometries[members]`` of its pairs (empty if none)."""
    collections = np.empty(n, dtype=object)
    if len(members):
        order = np.argsort(groups, kind="stable")
        shapely.geometrycollections(geometries[members[order]], indices=groups[order], out=collections)
    # union_all along axis 1 unions each row's collection: one GEOS call per SMP, no Python loop
    unions: np.ndarray = shapely.union_all(collections[:, None], axis=1)
    return unions


def _grown(unions: np.ndarray, is_point: np.ndarray, snap: float) -> np.ndarray:
    """The unions, grown by the snapping tolerance where the SMP is a point."""
    out: np.ndarray = unions.copy()
    if is_point.any():
        out[is_point] = shapely.buffer(unions[is_point], snap)
    return out


def _first_per_group(groups: ArrayLike, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(group ids, index of each group's smallest value), over parallel arrays."""
    groups = np.asarray(groups)
    if not len(groups):
        return groups, np.zeros(0, dtype=np.intp)
    order = np.lexsort((values, groups))
    ordered = groups[order]
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    return ordered[first], order[first]


def _members(groups: np.ndarray, members: np.ndarray, n: int) -> list[np.ndarray]:
    """For each group 0..n-1, its members (pairs given as two parallel arrays)."""
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(1, n))
    return np.split(np.asarray(members)[order], bounds)


def _measurement_keys(labels: Iterable[str], fids: Iterable[object]) -> list[str]:
    """smp_id per SMP (``#fid`` where it has none); a repeated id gets its row: ``BR-1#5``."""
    names = [_name(label) for label in labels]
    counts = Counter(names)
    return [
        f"{name}#{fid}" if counts[name] > 1 and not name.startswith("#") else name
        for name, fid in zip(names, fids)
    ]


def _name(label: str) -> str:
    return str(label).split(":", 1)[1]


def _sq_ft(value: float) -> str:
    return f"{value:,.0f}" if value >= 10 else f"{value:.2f}"


# --- the review's check ------------------------------------------------------------------

# Where no condition of SWPPP C applies, the SMPs are not the chapter's requirement: D(8) is one
# of the "SWPPP requirements for Conditions A, B and C", and Maintenance and repair B asks an
# easement of "any approval that has a stormwater management facility as one of the
# requirements". What the check finds is then told, as info, never failed (round 3, point 5).
NOT_REQUIRED = (
    '; not a requirement here: no condition of SWPPP C applies, and D(8) ("Maintenance '
    'easements to ensure access to all stormwater management practices") is one of '
    'the "SWPPP requirements for Conditions A, B and C" (Maintenance and repair B: an '
    'approval "that has a stormwater management facility as one of the '
    'requirements"; the profile\'s [easement_coverage] smps_held = "required"); told for the '
    "engineer, not failed"
)


def not_required(findings: list[Finding]) -> list[Finding]:
    """The findings as info where no condition applies: each ``fail`` or ``warn`` says why."""
    return [
        replace(f, status=INFO, message=f.message + NOT_REQUIRED) if f.status in (FAIL, WARN) else f
        for f in findings
    ]


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    findings, uncovered_smp_sq_ft = check_easement_coverage(context.site, context.profile)
    conditions = context.decided("A", "B", "C")
    if context.profile.easement_coverage.smps_held == "required" and all(
        c.decided and not c.applies for c in conditions.values()
    ):
        findings = not_required(findings)
    return CheckResult(findings, {"uncovered_smp_sq_ft": uncovered_smp_sq_ft})


CHECKS = (
    Check(
        "easement_coverage",
        regulated=True,
        rules=("easement_coverage",),
        reads=("site:smp", "site:easement", "site:public_row", "conditions"),
        run=_run,
        needs=("condition_a", "condition_b", "condition_c"),
        doing="checking maintenance easements over the SMPs",
        weight=3.0,
    ),
)
