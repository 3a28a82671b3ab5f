"""Disturbance phasing (SWPPP B(4); Definitions, "Phasing"): acres per phase and disturbed at once.

A disturbance polygon counts from its ``start_date`` until its ``stabilized_date`` (half-open:
ground stabilised on the day another phase starts is not counted with it); one with no
``stabilized_date`` counts until the plan's last date. At every moment the disturbed area is the
area of the union of the polygons active then, so ground cleared in two phases counts once.

How it is computed (close to linear in the number of polygons): the polygons that overlap
(interiors intersecting, found once with an ``STRtree``) are cut into the faces of their
arrangement (noded boundaries, polygonised); every other polygon is a face of its own. A face is
disturbed while any polygon covering it is, so each face contributes its area over the union of
its polygons' intervals, and the timeline is a cumulative sum of face areas over dated events:
no union is recomputed per moment. Per-phase acres and new acres come from the same faces.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pandas as pd
import shapely
from numpy.typing import ArrayLike
from pyproj import CRS

from ..crs import to_crs
from ..dates import parse_date
from ..findings import FAIL, INFO, NEEDS_REVIEW, PASS, WARN, Finding
from ..phasing.measure import dissolve_faces, faces, merge_intervals, natural_key
from ..profile import RulesProfile
from ..progress import SILENT, Progress
from ..siteplan.contract import SPECS
from ..units import CrsLike, acres_text, ellipsoidal_acres
from ..values import feature_labels
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    import os

    import geopandas as gpd

    from ..charts import Chart
    from ..siteplan.plan import Repair
    from .context import ReviewContext

Phase = Optional[str]  # a phase's name; None for polygons that name none

__all__ = [
    "CHECKS",
    "DateProblem",
    "Phasing",
    "phasing_timeline",
    "review_phasing",
    "open_phases",
    "disturbance_from_frame",
    "check_phasing",
    "timeline_chart",
    "proposed_phasing",
    "FIELDS",
]

FIELDS = SPECS["disturbance"].field_names  # phase, start_date, stabilized_date
# Floating-point noise of summing face areas (acres), for "when does the maximum first occur".
_TIE_ACRES = 1e-9
# Earlier phases named in one phasing_sequence warning (the rest are counted).
NAMED_EARLIER = 5


@dataclass(frozen=True)
class DateProblem:
    """A polygon that cannot be placed in time: which feature, which field, and why."""

    feature: str
    field: str
    reason: str


@dataclass
class Phasing:
    """Phases, the disturbed-at-once timeline and its worst moment, for one disturbance layer."""

    phases: list[dict[str, Any]]  # phase, acres, new_acres, start_date, stabilized_date (ISO or None)
    # date, acres, polygons (the state from that date on), started, stabilized (the phases that
    # open and close that day): each phase appears once per spell, so the timeline stays linear.
    # Its acres are on the decision's measure (``timeline_method``): the worst row is decided_acres.
    timeline: list[dict[str, Any]]
    max_acres: Optional[float]  # planar, in the area CRS; None where nothing can be placed in time
    max_at: Optional[date]
    worst_phases: list[Phase] = field(default_factory=list)
    worst_features: list[str] = field(default_factory=list)
    worst_geometry: object = None  # the union of the polygons active at the worst moment
    plan_end: Optional[date] = None
    open_ended: list[str] = field(default_factory=list)  # counted until plan_end
    problems: list[DateProblem] = field(default_factory=list)
    # later phase -> (earlier phases it runs alongside, first shared day, earlier's stabilisation)
    overlaps: list[dict[str, Any]] = field(default_factory=list)
    # The worst moment's ground on the ellipsoid (applicability's method): the five-acre
    # decision reads it; None where nothing can be placed in time.
    max_true_acres: Optional[float] = None
    area_method: str = "planar"

    @property
    def decided_acres(self) -> Optional[float]:
        """The acres the five-acre limit is decided on: ellipsoidal where measured, else planar.
        Every place that shows the worst moment's acres shows this figure."""
        return self.max_true_acres if self.max_true_acres is not None else self.max_acres

    @property
    def timeline_method(self) -> str:
        """How the timeline's acres are measured, in words."""
        if self.area_method == "planar":
            return "planar"
        return (
            f"{self.area_method}; each moment's planar acres scaled by the worst moment's "
            f"ellipsoidal/planar ratio"
        )

    def measurements(self) -> dict[str, Any]:
        """docs/CONTRACT.md's names: max_concurrent_disturbed_acres (planar), max_concurrent_at,
        phases (planar), timeline; and max_concurrent_disturbed_acres_ellipsoidal (the
        decision's, which the timeline's worst row equals), timeline_area_method."""
        return {
            "max_concurrent_disturbed_acres": self.max_acres,
            "max_concurrent_disturbed_acres_ellipsoidal": self.max_true_acres,
            "max_concurrent_at": self.max_at.isoformat() if self.max_at else None,
            "phases": self.phases,
            "timeline": self.timeline,
            "timeline_area_method": self.timeline_method,
        }


def _parse_column(values: Iterable[object]) -> tuple[list[Optional[date]], list[bool]]:
    """Parsed dates and readability of a column, each distinct value parsed once."""
    cache: dict[tuple[type, str], tuple[Optional[date], bool]] = {}
    dates: list[Optional[date]] = []
    readable: list[bool] = []
    for value in values:
        key = (type(value), str(value))
        if key not in cache:
            cache[key] = parse_date(value)
        parsed, ok = cache[key]
        dates.append(parsed)
        readable.append(ok)
    return dates, readable


def phasing_timeline(
    geometries: ArrayLike,
    phases: Iterable[object],
    starts: Sequence[object],
    stabilized: Sequence[object],
    labels: Sequence[str],
    crs: CrsLike,
    progress: Optional[Progress] = None,
) -> Phasing:
    """Phases, the disturbed-at-once timeline and its worst moment.

    Parameters
    ----------
    geometries : array of (Multi)Polygons in ``crs`` (a projected CRS; areas are planar in it)
    phases, starts, stabilized : the phase and date values of each polygon, as read
        (text, dates, datetimes; missing values as None/NaN)
    labels : the name of each polygon for people (``disturbance:3``)
    crs : the area CRS

    Returns
    -------
    Phasing
        Polygons whose dates cannot be read, or that are stabilised before they start, are
        left out of the timeline and listed in ``problems``.
    """
    progress = progress or SILENT
    geometries = np.asarray(geometries, dtype=object)
    named = np.asarray(labels, dtype=object)  # indexable by masks
    names = np.array(
        [None if not isinstance(p, str) and pd.isna(p) else str(p) for p in phases], dtype=object
    )
    start, start_ok = _parse_column(starts)
    end, end_ok = _parse_column(stabilized)
    problems = _date_problems(named, starts, stabilized, start, start_ok, end, end_ok)
    bad = {p.feature for p in problems}
    dated = np.array([label not in bad for label in named], dtype=bool)
    open_ended = dated & np.array([e is None for e in end], dtype=bool)
    # a dated polygon has its start (a missing one is a date problem)
    plan_dates = [d for d, ok in zip(start, dated) if ok and d is not None] + [
        e for e, ok in zip(end, dated) if ok and e is not None
    ]
    plan_end = max(plan_dates) if plan_dates else None
    # Days as ordinals; an open end is one day past the plan's last date (never reached).
    never = plan_end.toordinal() + 1 if plan_end else 0
    s = np.array(
        [d.toordinal() if (ok and d is not None) else 0 for d, ok in zip(start, dated)], dtype=np.int64
    )
    e = np.array(
        [d.toordinal() if (ok and d is not None) else never for d, ok in zip(end, dated)], dtype=np.int64
    )
    placed = dated & (e > s)  # stabilised the day it starts: never disturbed at a moment

    progress.check_canceled()
    present = ~(shapely.is_missing(geometries) | shapely.is_empty(geometries))
    index = np.flatnonzero(present)
    face_area, pair_face, pair_polygon, face_geometry, face_tile = faces(geometries[index], crs)
    pair_polygon = index[pair_polygon]
    progress.check_canceled()

    phase_keys, rank = _phase_ranks(names, s, dated)
    phase_of = rank[pair_polygon]
    ordered_phases = list(phase_keys)
    unique_pairs = np.unique(np.stack([pair_face, phase_of]), axis=1)
    phase_area = np.bincount(unique_pairs[1], weights=face_area[unique_pairs[0]], minlength=len(phase_keys))
    first_phase = np.full(len(face_area), len(phase_keys), dtype=np.int64)
    np.minimum.at(first_phase, pair_face, phase_of)
    covered = first_phase < len(phase_keys)
    new_area = np.bincount(first_phase[covered], weights=face_area[covered], minlength=len(phase_keys))
    summary = _phase_rows(ordered_phases, rank, phase_area, new_area, s, e, dated, open_ended, never)

    if not placed.any():
        return Phasing(
            phases=summary,
            timeline=[],
            max_acres=None,
            max_at=None,
            plan_end=plan_end,
            open_ended=list(named[open_ended]),
            problems=problems,
        )
    timed = placed[pair_polygon]
    face, fs, fe = merge_intervals(pair_face[timed], s[pair_polygon[timed]], e[pair_polygon[timed]])
    moments = np.unique(np.concatenate([s[placed], e[placed & ~open_ended]]))
    change = np.zeros(len(moments))
    np.add.at(change, np.searchsorted(moments, fs), face_area[face])
    ends = fe < never
    np.subtract.at(change, np.searchsorted(moments, fe[ends]), face_area[face][ends])
    total = np.cumsum(change)
    total[np.abs(total) < _TIE_ACRES] = 0.0
    polygon_count = np.cumsum(
        np.bincount(np.searchsorted(moments, s[placed]), minlength=len(moments))
        - np.bincount(np.searchsorted(moments, e[placed & ~open_ended]), minlength=len(moments))
    )
    progress.check_canceled()

    p_rank, p_start, p_end = merge_intervals(rank[placed], s[placed], e[placed])
    started, stabilized, overlaps = _phase_sweep(moments, p_rank, p_start, p_end, ordered_phases, never)
    by_rank = np.argsort(rank, kind="stable")
    members = np.split(named[by_rank], np.flatnonzero(np.diff(rank[by_rank])) + 1)
    for overlap in overlaps:
        overlap["features"] = list(members[overlap.pop("rank")])
    worst = int(np.flatnonzero(total >= total.max() - _TIE_ACRES)[0])
    moment = moments[worst]
    active = placed & (s <= moment) & (e > moment)
    worst_ranks = np.unique(p_rank[(p_start <= moment) & (p_end > moment)])
    worst_geometry = dissolve_faces(face_geometry, face_tile, np.unique(pair_face[active[pair_polygon]]))
    # The worst moment is found on the planar sweep: across one site the ellipsoid's ratio to
    # the grid is the same to many decimals, so it is the worst moment on the ellipsoid too.
    true, method = ellipsoidal_acres(worst_geometry, crs)
    shown = _on_the_decisions_measure(total, worst, true)
    timeline = [
        {
            "date": date.fromordinal(int(t)).isoformat(),
            "acres": float(a),
            "polygons": int(n),
            "started": opened,
            "stabilized": closed,
        }
        for t, a, n, opened, closed in zip(moments, shown, polygon_count, started, stabilized)
    ]
    return Phasing(
        phases=summary,
        timeline=timeline,
        max_acres=float(total[worst]),
        max_at=date.fromordinal(int(moment)),
        worst_phases=[ordered_phases[r] for r in worst_ranks],
        worst_features=list(named[active]),
        worst_geometry=worst_geometry,
        plan_end=plan_end,
        open_ended=list(named[open_ended]),
        problems=problems,
        overlaps=overlaps,
        max_true_acres=float(true),
        area_method=method,
    )


def _on_the_decisions_measure(total: np.ndarray, worst: int, true: float) -> np.ndarray:
    """The timeline's planar acres on the five-acre decision's measure: each moment scaled by
    the worst moment's ellipsoidal/planar ratio (constant across one site to many decimals), the
    worst moment itself exactly the decision's figure, so the chart, the timeline and the verdict
    show one number."""
    planar = float(total[worst])
    shown = total * (true / planar) if planar > 0 else total.astype(float)
    shown[total >= planar - _TIE_ACRES] = true  # the worst moment (and its ties): the decision's
    return shown


def _date_problems(
    labels: Iterable[str],
    starts: Iterable[object],
    stabilized: Iterable[object],
    start: Iterable[Optional[date]],
    start_ok: Iterable[bool],
    end: Iterable[Optional[date]],
    end_ok: Iterable[bool],
) -> list[DateProblem]:
    problems = []
    for label, raw_s, raw_e, s, s_ok, e, e_ok in zip(
        labels, starts, stabilized, start, start_ok, end, end_ok
    ):
        if not s_ok:
            problems.append(
                DateProblem(label, "start_date", f"start_date {raw_s!r} is not a date (YYYY-MM-DD)")
            )
        elif s is None:
            problems.append(DateProblem(label, "start_date", "start_date is missing"))
        if not e_ok:
            problems.append(
                DateProblem(label, "stabilized_date", f"stabilized_date {raw_e!r} is not a date (YYYY-MM-DD)")
            )
        elif s is not None and e is not None and e < s:
            problems.append(
                DateProblem(label, "stabilized_date", f"stabilized on {e} before it starts on {s}")
            )
    return problems


def _phase_ranks(names: np.ndarray, start: np.ndarray, placed: np.ndarray) -> tuple[list[Phase], np.ndarray]:
    """Phases in the plan's sequence (first start, then name) and each polygon's phase rank.

    "Earlier phase" means this order: a phase's new acres are the ground no earlier phase
    disturbs. Phases none of whose polygons have a usable date come last, by name.
    """
    keys = list(dict.fromkeys(names.tolist()))
    first = {k: np.iinfo(np.int64).max for k in keys}
    for name, day, ok in zip(names, start, placed):
        if ok and day < first[name]:
            first[name] = day
    keys.sort(key=lambda k: (first[k], k is None, natural_key(k) if k is not None else []))
    position = {k: i for i, k in enumerate(keys)}
    return keys, np.array([position[n] for n in names], dtype=np.int64)


def _phase_rows(
    phases: Sequence[Phase],
    rank: np.ndarray,
    phase_area: np.ndarray,
    new_area: np.ndarray,
    s: np.ndarray,
    e: np.ndarray,
    placed: np.ndarray,
    open_ended: np.ndarray,
    never: int,
) -> list[dict[str, Any]]:
    """One row per phase: acres, new acres, first start, last stabilisation (None if any is open)."""
    count = len(phases)
    first = np.full(count, np.iinfo(np.int64).max)
    last = np.zeros(count, dtype=np.int64)
    np.minimum.at(first, rank[placed], s[placed])
    np.maximum.at(last, rank[placed & ~open_ended], e[placed & ~open_ended])
    unscheduled = np.bincount(rank[open_ended], minlength=count) > 0

    def iso(day: int) -> str:
        return date.fromordinal(int(day)).isoformat()

    return [
        {
            "phase": phase,
            "acres": float(phase_area[i]),
            "new_acres": float(new_area[i]),
            "start_date": iso(first[i]) if first[i] < never else None,
            "stabilized_date": iso(last[i]) if last[i] and not unscheduled[i] else None,
        }
        for i, phase in enumerate(phases)
    ]


def _phase_sweep(
    moments: np.ndarray,
    rank: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    phases: Sequence[Phase],
    never: int,
) -> tuple[list[list[Phase]], list[list[Phase]], list[dict[str, Any]]]:
    """The phases opening and closing at each moment, and each later phase cleared alongside
    earlier ones.

    A loop over dated events (two per phase spell), not over polygons or geometry; the open
    phases are kept sorted by rank, so "earlier" and "later" ones are slices. Only what changes
    is kept per moment (and at most :data:`NAMED_EARLIER` earlier phases per overlap, with their
    count), so the result grows with the number of phases, not with phases x moments.
    """
    events = sorted(
        [(int(t), 1, int(r)) for t, r in zip(start, rank)]
        + [(int(t), 0, int(r)) for t, r in zip(end, rank) if t < never]
    )
    slot = {int(t): i for i, t in enumerate(moments)}
    started: list[list[Phase]] = [[] for _ in moments]
    stabilized: list[list[Phase]] = [[] for _ in moments]
    active: list[int] = []
    first: dict[int, tuple[int, list[int], int]] = {}  # later rank -> (day, earlier ranks, count)
    for day, starting, r in events:
        if not starting:
            active.pop(bisect.bisect_left(active, r))
            stabilized[slot[day]].append(phases[r])
            continue
        started[slot[day]].append(phases[r])
        at = bisect.bisect_left(active, r)
        if at and r not in first:
            first[r] = (day, active[:NAMED_EARLIER], at)
        for later in active[at:]:  # a later phase already open while an earlier one resumes
            if later not in first:
                first[later] = (day, [r], 1)
        active.insert(at, r)
    overlaps = [
        {
            "phase": phases[r],
            "rank": r,
            "earlier": [phases[q] for q in earlier],
            "earlier_count": count,
            "from": date.fromordinal(day).isoformat(),
        }
        for r, (day, earlier, count) in sorted(first.items())
    ]
    return started, stabilized, overlaps


def open_phases(timeline: Sequence[dict[str, Any]]) -> Iterator[list[Phase]]:
    """The phases open from each moment of a timeline, replayed from what starts and stops.

    Yields one list per row, in the plan's order of phases as first started (for tables of a
    few phases: over a long plan with many open phases, the lists together grow quadratically).
    """
    order: dict[Phase, int] = {}
    for row in timeline:
        for phase in row["started"]:
            order.setdefault(phase, len(order))
    open_now: set[Phase] = set()
    for row in timeline:
        open_now.difference_update(row["stabilized"])
        open_now.update(row["started"])
        yield sorted(open_now, key=order.__getitem__)


def review_phasing(
    disturbance: gpd.GeoDataFrame,
    profile: RulesProfile,
    waiver: bool = False,
    progress: Optional[Progress] = None,
) -> tuple[Phasing, list[Finding]]:
    """The phasing of a disturbance layer (area CRS, docs/CONTRACT.md fields) and its findings.

    The full review and ``swppp:phasing`` both call this.
    """
    labels = feature_labels("disturbance", disturbance, None)
    plan = phasing_timeline(
        np.asarray(disturbance.geometry.values, dtype=object),
        disturbance["phase"],
        disturbance["start_date"],
        disturbance["stabilized_date"],
        labels,
        disturbance.crs,
        progress=progress,
    )
    return plan, check_phasing(plan, profile, waiver)


def disturbance_from_frame(
    frame: pd.DataFrame,
    crs: Optional[CRS],
    fields: dict[str, str],
    profile: RulesProfile,
    path: Optional[str | os.PathLike[str]] = None,
    layer: str = "disturbance",
    crs_given_by: Optional[str] = None,
) -> tuple[gpd.GeoDataFrame, list[Repair]]:
    """A disturbance layer read elsewhere (any CRS, its own field names) as ``review_phasing`` takes it.

    ``fields`` maps each of :data:`FIELDS` to the frame's column holding it. The layer is
    validated, reprojected to the profile's area CRS and repaired as a site plan's is; returns
    ``(frame, repairs)``. Raises :class:`InputError` naming the layer and field at fault (and
    ``crs_given_by``, where the CRS was given, when the coordinates do not fit it).
    """
    import geopandas as gpd

    from ..errors import InputError
    from ..siteplan.plan import repair_invalid, validate_spatial

    for key in FIELDS:
        if fields.get(key) not in frame.columns:
            raise InputError(
                f"the field {fields.get(key)!r} chosen for {key} is not in the layer "
                f"(fields: {', '.join(map(str, frame.columns))})",
                path=path,
                layer=layer,
                field=fields.get(key),
                fix=f"choose the field holding {key}",
            )
    geometry = (
        np.asarray(frame.geometry.values, dtype=object) if isinstance(frame, gpd.GeoDataFrame) else None
    )
    chosen = (
        gpd.GeoDataFrame(
            {key: frame[fields[key]] for key in FIELDS}, index=frame.index, geometry=geometry, crs=crs
        )
        if geometry is not None
        else frame
    )
    spec = SPECS["disturbance"]
    chosen = validate_spatial(path, layer, spec, chosen, crs, profile, crs_given_by=crs_given_by)
    return repair_invalid(spec, to_crs(chosen, profile.area_crs), path, layer)


def _phase_list(phases: Sequence[Phase]) -> str:
    names = ["(no phase)" if p is None else str(p) for p in phases]
    return ("phase " if len(names) == 1 else "phases ") + ", ".join(names)


def _features_text(labels: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(labels[:most])
    return shown + (f" and {len(labels) - most} more" if len(labels) > most else "")


def check_phasing(plan: Phasing, profile: RulesProfile, waiver: bool = False) -> list[Finding]:
    """``phasing_five_acres`` (SWPPP B(4)) and ``phasing_sequence`` (Definitions, "Phasing").

    five acres: ``pass`` within the limit; ``fail`` over it (``warn`` with an approved waiver);
    ``needs_review`` naming the polygons whose dates are missing or unreadable, or that are
    stabilised before they start; ``info`` naming polygons with no stabilisation date.
    sequence: ``warn`` for each phase cleared while an earlier phase's ground is unstabilised.
    """
    rule, limit = "phasing_five_acres", profile.phasing.max_concurrent_acres
    section = profile.section(rule)
    bad = list(dict.fromkeys(p.feature for p in plan.problems))
    why = "; ".join(f"{p.feature}: {p.reason}" for p in plan.problems[:5])
    why += f"; and {len(plan.problems) - 5} more" if len(plan.problems) > 5 else ""
    findings = []
    decided, max_at = plan.decided_acres, plan.max_at  # both None where nothing is placed
    if decided is None or max_at is None:
        findings.append(
            Finding(
                rule,
                NEEDS_REVIEW,
                section,
                f"no disturbance polygon can be placed in time "
                f"({why or 'each is stabilised the day it starts'}): give each "
                f"an ISO start_date (YYYY-MM-DD) and stabilized_date",
                limit=limit,
                units="acres",
                features=bad,
            )
        )
    else:
        at = f"on {max_at.isoformat()} ({_phase_list(plan.worst_phases)})"
        size = f"{acres_text(decided, limit)} acres ({plan.area_method})"
        common: dict[str, Any] = dict(value=decided, limit=limit, units="acres", geometry=plan.worst_geometry)
        if profile.near(decided, limit):
            findings.append(
                Finding(
                    rule,
                    NEEDS_REVIEW,
                    section,
                    f"{size} disturbed and not yet stabilised {at}, within the measurement's "
                    f"uncertainty ({profile.measurement.threshold_tolerance_acres:g} acre) of the "
                    f'{limit:g} acres allowed at any one time ("not more than five acres shall be '
                    f'disturbed at any one time"): confirm the disturbed area',
                    features=plan.worst_features,
                    **common,
                )
            )
            if bad:
                findings.append(
                    Finding(
                        rule,
                        NEEDS_REVIEW,
                        section,
                        f"{len(bad)} polygon(s) left out of the timeline ({why})",
                        features=bad,
                    )
                )
        elif profile.exceeds(decided, limit):
            text = (
                f"{size} disturbed and not yet stabilised {at}, more than "
                f"the {limit:g} acres allowed at any one time"
            )
            if waiver:
                findings.append(
                    Finding(
                        rule,
                        WARN,
                        section,
                        text + "; the project records an "
                        "approved waiver (five_acre_waiver): confirm the approved "
                        "SWPPP allows it",
                        features=plan.worst_features,
                        **common,
                    )
                )
            else:
                # B(4)'s proviso carried, so that the finding reads as the plan's state, not as
                # a violation already committed (issue 33, round 3, point 10).
                findings.append(
                    Finding(
                        rule,
                        FAIL,
                        section,
                        text
                        + (
                            ' as planned (SWPPP B(4): "not more than five acres shall be disturbed at '
                            'any one time unless pursuant to an approved SWPPP"): re-phase the plan, or '
                            "seek the SWPPP's approval for more (five_acre_waiver, once approved)"
                        ),
                        features=plan.worst_features,
                        **common,
                    )
                )
            if bad:
                findings.append(
                    Finding(
                        rule,
                        NEEDS_REVIEW,
                        section,
                        f"{len(bad)} polygon(s) left out of the timeline ({why}); "
                        f"the limit is exceeded without them",
                        features=bad,
                    )
                )
        elif bad:
            findings.append(
                Finding(
                    rule,
                    NEEDS_REVIEW,
                    section,
                    f"cannot decide: {len(bad)} polygon(s) cannot be placed in "
                    f"time ({why}); the others reach at most "
                    f"{size} {at}, within {limit:g}",
                    features=bad,
                    **common,
                )
            )
        else:
            findings.append(
                Finding(
                    rule,
                    PASS,
                    section,
                    f"at most {size} disturbed and not yet "
                    f"stabilised at any one time, first {at}; the limit is "
                    f"{limit:g}",
                    features=plan.worst_features,
                    **common,
                )
            )
    if plan.open_ended and plan.plan_end is not None:  # an open end has a plan end to run to
        findings.append(
            Finding(
                rule,
                INFO,
                section,
                f"{len(plan.open_ended)} polygon(s) have no stabilized_date and "
                f"count as disturbed until the plan's last date, "
                f"{plan.plan_end.isoformat()}: {_features_text(plan.open_ended)}",
                features=plan.open_ended,
            )
        )
    findings += _sequence_findings(plan, profile)
    return findings


def _sequence_findings(plan: Phasing, profile: RulesProfile) -> list[Finding]:
    rule = "phasing_sequence"
    section = profile.section(rule)
    if plan.max_acres is None:
        return [Finding(rule, NEEDS_REVIEW, section, "no phase can be placed in time")]
    if not plan.overlaps:
        return [Finding(rule, PASS, section, "each phase is stabilised before the next is cleared")]
    stabilised = {p["phase"]: p["stabilized_date"] for p in plan.phases}
    findings = []
    for overlap in plan.overlaps:
        earlier, count = overlap["earlier"], overlap["earlier_count"]
        named = ", ".join(
            f"{'(no phase)' if p is None else p} (until "
            f"{stabilised[p] or 'the plan ends: no stabilisation scheduled'})"
            for p in earlier[:NAMED_EARLIER]
        )
        more = f" and {count - NAMED_EARLIER} more" if count > NAMED_EARLIER else ""
        verb = "is" if count == 1 else "are"
        findings.append(
            Finding(
                rule,
                WARN,
                section,
                f"{_phase_list([overlap['phase']])} is cleared from {overlap['from']} while "
                f"{'phase' if count == 1 else 'phases'} {named}{more} {verb} not yet "
                f'stabilised. The chapter\'s definition of "Phasing" is "with the stabilization of '
                f'each piece completed before the clearing of the next"; no section states it as a '
                f"duty, so this is a warning about the plan's phasing, not a failure",
                features=overlap["features"],
            )
        )
    return findings


def timeline_chart(
    plan: Phasing,
    limit: float,
    title: str = "Disturbed and not yet stabilised",
    proposed: Optional[Phasing] = None,
) -> Optional[Chart]:
    """A step plot of disturbed acres over time: the limit, the phases as bands, the worst moment;
    with ``proposed`` (the plan on the proposed schedule, :func:`proposed_phasing`) a second
    panel below it on the same dates, so the two schedules are read side by side.

    Returns an :class:`analysis.charts.Chart`, or None where the plan has no timeline.
    """
    worst, max_at = plan.decided_acres, plan.max_at  # the verdict's figure and its day
    if not plan.timeline or worst is None or max_at is None:
        return None
    from ..charts import figure_chart, new_figure

    plans = [(plan, "as planned")] + (
        [(proposed, "as proposed")] if proposed is not None and proposed.timeline else []
    )
    days = [date.fromisoformat(row["date"]) for p, _ in plans for row in p.timeline]  # ISO
    first, last = min(days), max(days)
    span = max((last - first).days, 1)
    tail = date.fromordinal(last.toordinal() + max(1, span // 20))
    figure = new_figure(width=8.0, height=3.6 * len(plans))
    top = max(max(limit, p.decided_acres or 0.0) for p, _ in plans) * 1.4
    for i, (shown, label) in enumerate(plans):
        axes = figure.add_subplot(len(plans), 1, i + 1)
        _draw_timeline(axes, shown, limit, tail, top)
        axes.set_xlim(first, tail)
        axes.set_title(title if len(plans) == 1 else f"{title}: {label}", fontsize=10)
    bottom = 0.2 if len(plans) == 1 else 0.1
    figure.subplots_adjust(
        left=0.08, right=0.98, top=0.92, bottom=bottom, hspace=0.45
    )  # fixed: no layout engine
    return figure_chart(figure, title)


def _draw_timeline(axes: Any, plan: Phasing, limit: float, tail: date, top: float) -> None:
    days = [date.fromisoformat(row["date"]) for row in plan.timeline]  # written ISO above
    values = [row["acres"] for row in plan.timeline]
    bands = _phase_bands(plan)
    colours = ("#90caf9", "#a5d6a7", "#ffe082", "#ce93d8", "#ffab91", "#80deea")
    for i, (phase, first, last) in enumerate(bands):
        axes.axvspan(
            first,
            last or tail,
            ymin=0,
            ymax=1,
            color=colours[i % len(colours)],
            alpha=0.35,
            linewidth=0,
            label=f"phase {phase}" if len(bands) <= len(colours) else None,
        )
    axes.step(
        days + [tail],
        values + [values[-1]],
        where="post",
        color="#212121",
        linewidth=1.6,
        label="disturbed acres",
    )
    axes.axhline(limit, color="#c62828", linestyle="--", linewidth=1.2, label=f"limit {limit:g} ac")
    worst, max_at = plan.decided_acres, plan.max_at  # the verdict's figure and its day
    if worst is not None and max_at is not None:
        axes.plot([max_at], [worst], marker="o", color="#c62828", markersize=6)
        axes.annotate(
            f"max {acres_text(worst, limit)} ac\n{max_at.isoformat()}",
            (max_at, worst),
            textcoords="offset points",
            xytext=(6, 6),
            fontsize=8,
        )
    axes.set_ylim(0, top)  # room for the legend above the limit
    axes.set_ylabel("acres (ellipsoidal)" if plan.timeline_method != "planar" else "acres (planar)")
    axes.legend(loc="upper right", fontsize=7, ncol=2, frameon=False)
    axes.tick_params(axis="x", labelrotation=30, labelsize=8)


def proposed_phasing(frame: pd.DataFrame, proposal: Any, profile: RulesProfile) -> Optional[Phasing]:
    """The plan with the proposal's dates (each phase moved by its delay), checked as the plan
    is: what the chart shows beside the planned schedule. None where no phase moves.

    ``proposal`` is a :class:`analysis.phasing.proposal.Proposal` (typed ``Any``: the phasing
    package sits above the checks, which cannot import it even for a type)."""
    from ..phasing.proposal import shifted_dates

    if not any(proposal.shifts.values()):
        return None
    moved = frame.copy()
    moved["start_date"], moved["stabilized_date"] = shifted_dates(
        list(frame["phase"]), list(frame["start_date"]), list(frame["stabilized_date"]), proposal.shifts
    )
    plan, _findings = review_phasing(moved, profile)
    return plan


def _phase_bands(plan: Phasing) -> list[tuple[Phase, Optional[date], Optional[date]]]:
    """(phase, first start, last stabilisation or None) of each phase with dates."""
    return [
        (p["phase"], parse_date(p["start_date"])[0], parse_date(p["stabilized_date"])[0])
        for p in plan.phases
        if p["start_date"]
    ]


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    site, profile = context.site, context.profile
    plan, findings = review_phasing(
        site.layer("disturbance"),
        profile,
        waiver=bool(site.project.get("five_acre_waiver")),
        progress=progress,
    )
    return CheckResult(
        findings, plan.measurements(), extra={"charts": lambda: _phasing_charts(plan, profile)}
    )


def _phasing_charts(phasing: Phasing, profile: RulesProfile) -> dict[str, Chart]:
    chart = timeline_chart(phasing, profile.phasing.max_concurrent_acres)
    return {"phasing_timeline": chart} if chart else {}


CHECKS = (
    Check(
        "phasing",
        regulated=True,
        rules=("phasing_five_acres", "phasing_sequence"),
        reads=("site:disturbance", "site:project"),
        run=_run,
        doing="sweeping the phasing timeline",
        weight=4.0,
    ),
)
