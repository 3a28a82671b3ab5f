"""A fix, not only a verdict: the smallest delays of phase start dates that keep the site within the limit.

Reading (stated in every proposal): a phase moves as a whole (each of its polygons by the same
number of days, so its duration is kept), never earlier than planned, and the phases keep the
order in which the engineer starts them (a phase never starts before the one planned ahead of
it). Phases are placed one by one in that order, each on the earliest day from which the
ground disturbed and not yet stabilised (the union of the open polygons, as the check counts it)
never exceeds the profile's limit; that gives each phase the smallest delay the ones before it
allow, and the completion date that follows. A phase whose own ground exceeds the limit can be
moved nowhere: it must be split.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from typing import Optional

import numpy as np
import shapely

from ..dates import parse_date
from ..profile import RulesProfile
from ..units import acres, acres_text, ellipsoidal_acres
from .measure import faces, merge_intervals, natural_key

__all__ = ["Proposal", "propose_schedule", "shifted_dates", "NOT_NEEDED", "PROPOSED", "SPLIT", "CANNOT"]

NOT_NEEDED, PROPOSED, SPLIT, CANNOT = "not_needed", "proposed", "split", "cannot_propose"
READING = (
    "each phase moves as a whole (its duration kept), never earlier than planned, and the "
    "phases start in the order planned; each is placed on the earliest day the ones "
    "before it allow"
)


@dataclass
class Proposal:
    """The proposed schedule: one row per phase, the completion dates and why."""

    status: str  # NOT_NEEDED, PROPOSED, SPLIT, CANNOT
    message: str
    rows: list[dict] = field(default_factory=list)
    completion: Optional[str] = None  # the plan's last stabilisation, as planned (ISO)
    proposed_completion: Optional[str] = None
    too_big: list[dict] = field(default_factory=list)  # phase, acres: over the limit alone
    shifts: dict = field(default_factory=dict)  # phase -> days of delay

    def to_dict(self) -> dict:
        return {
            "status": self.status,
            "message": self.message,
            "reading": READING,
            "completion": self.completion,
            "proposed_completion": self.proposed_completion,
            "phases": self.rows,
            "split": self.too_big,
        }


def shifted_dates(phases, starts, ends, shifts: dict):
    """Each polygon's start and stabilisation dates moved by its phase's delay (ISO text)."""

    def move(value, phase):
        day, ok = parse_date(value)
        if day is None or not ok:
            return value
        return (day + timedelta(days=int(shifts.get(phase, 0)))).isoformat()

    return ([move(v, p) for v, p in zip(starts, phases)], [move(v, p) for v, p in zip(ends, phases)])


def propose_schedule(disturbance, profile: RulesProfile) -> Proposal:
    """The proposal for a disturbance layer as the check reads it (area CRS, contract fields)."""
    limit = profile.phasing.max_concurrent_acres
    names = [None if p is None or p != p else str(p) for p in disturbance["phase"]]
    start = [parse_date(v) for v in disturbance["start_date"]]
    end = [parse_date(v) for v in disturbance["stabilized_date"]]
    undated = [
        i
        for i, ((s, s_ok), (e, e_ok)) in enumerate(zip(start, end))
        if s is None or e is None or not s_ok or not e_ok or e < s
    ]
    if undated:
        return Proposal(
            CANNOT,
            f"no proposal: {len(undated)} polygon(s) have no readable start "
            f"and stabilisation dates, so their phases' durations are unknown; "
            f"give every polygon both dates",
        )
    s = np.array([d.toordinal() for d, _ in start if d is not None], dtype=np.int64)
    e = np.array([d.toordinal() for d, _ in end if d is not None], dtype=np.int64)
    keys = list(dict.fromkeys(names))
    seen = {k: i for i, k in enumerate(keys)}
    code = np.array([seen[n] for n in names], dtype=np.int64)
    earliest = np.full(len(keys), np.iinfo(np.int64).max)
    np.minimum.at(earliest, code, s)
    first = dict(zip(keys, earliest.tolist()))
    keys.sort(key=lambda k: (first[k], k is None, natural_key(k) if k is not None else []))
    position = {k: i for i, k in enumerate(keys)}
    rank = np.array([position[n] for n in names], dtype=np.int64)
    phase_start = np.array([first[k] for k in keys], dtype=np.int64)
    phase_end = np.zeros(len(keys), dtype=np.int64)
    np.maximum.at(phase_end, rank, e)
    geometries = np.asarray(disturbance.geometry.values, dtype=object)
    present = ~(shapely.is_missing(geometries) | shapely.is_empty(geometries))
    index = np.flatnonzero(present)
    face_area, pair_face, pair_polygon, _, _ = faces(geometries[index], disturbance.crs)
    face_area = face_area * _ellipsoid_ratio(geometries[index], disturbance.crs)
    pair_polygon = index[pair_polygon]
    placed = e > s
    keep = placed[pair_polygon]
    ph = rank[pair_polygon[keep]]
    face = pair_face[keep]
    rel_a = s[pair_polygon[keep]] - phase_start[ph]
    rel_b = e[pair_polygon[keep]] - phase_start[ph]
    n_faces = max(len(face_area), 1)
    group, a, b = merge_intervals(ph * n_faces + face, rel_a, rel_b)
    piece_phase, piece_face = group // n_faces, group % n_faces
    bounds = np.searchsorted(piece_phase, np.arange(len(keys) + 1))
    pieces = [
        (piece_face[bounds[i] : bounds[i + 1]], a[bounds[i] : bounds[i + 1]], b[bounds[i] : bounds[i + 1]])
        for i in range(len(keys))
    ]
    last_end = int(e[placed].max()) if placed.any() else int(s.max())

    def iso(day):
        return date.fromordinal(int(day)).isoformat()

    alone = [_peak(face_area[f], a_, b_) for f, a_, b_ in pieces]
    over = [(k, float(peak)) for k, peak in zip(keys, alone) if profile.exceeds(peak, limit)]
    too_big = [{"phase": k, "acres": peak} for k, peak in over]
    if too_big:
        # ellipsoidal acres, with the decimals that keep 5.0009 from reading as the limit's 5.00
        named = ", ".join(f"phase {k} ({acres_text(peak, limit)} acres, ellipsoidal)" for k, peak in over[:5])
        return Proposal(
            SPLIT,
            f"no shift of start dates can work: {named} alone "
            f"disturb{'s' if len(too_big) == 1 else ''} more than the "
            f"{limit:g} acres allowed at any one time; split "
            f"{'it' if len(too_big) == 1 else 'each'} into pieces of at most "
            f"{limit:g} acres, each stabilised before the next is cleared",
            completion=iso(last_end),
            too_big=too_big,
        )
    sweep = _Sweep(face_area, limit, profile)
    shifts: dict = {}
    previous = None
    for i, key in enumerate(keys):
        f, a_, b_ = pieces[i]
        lowest = int(phase_start[i]) if previous is None else max(int(phase_start[i]), previous)
        chosen = sweep.earliest(f, a_, b_, lowest)
        sweep.place(f, a_ + chosen, b_ + chosen)
        shifts[key] = chosen - int(phase_start[i])
        previous = chosen
    shift_of = np.array([shifts[k] for k in keys], dtype=np.int64)
    moved_end = int((e[placed] + shift_of[rank[placed]]).max()) if placed.any() else last_end
    if moved_end > date.max.toordinal():
        return Proposal(
            CANNOT,
            f"no proposal: one phase after another, the plan would not be "
            f"complete before the year {date.max.year}; shorten the phases "
            f"or split them",
            completion=iso(last_end),
        )
    rows = []
    for i, key in enumerate(keys):
        first_s, last_e = int(phase_start[i]), int(phase_end[i])
        rows.append(
            {
                "phase": key,
                "start_date": iso(first_s),
                "stabilized_date": iso(last_e),
                "duration_days": last_e - first_s,
                "shift_days": int(shift_of[i]),
                "proposed_start": iso(first_s + shift_of[i]),
                "proposed_stabilized": iso(last_e + shift_of[i]),
            }
        )
    if not any(shifts.values()):
        return Proposal(
            NOT_NEEDED,
            f"the plan stays within {limit:g} acres at any one time; no shift is needed",
            rows,
            iso(last_end),
            iso(last_end),
            shifts=shifts,
        )
    moved = sum(1 for v in shifts.values() if v)
    return Proposal(
        PROPOSED,
        f"{moved} phase(s) start later so that at most {limit:g} acres are "
        f"disturbed at any one time; the plan completes on "
        f"{iso(moved_end)} instead of {iso(last_end)} ({READING})",
        rows,
        iso(last_end),
        iso(moved_end),
        shifts=shifts,
    )


def _peak(area, start, end) -> float:
    """The most acres open at once of pieces ``[start, end)`` of faces with ``area``."""
    if len(start) == 0:
        return 0.0
    times = np.concatenate([start, end])
    change = np.concatenate([area, -area])
    order = np.lexsort((change, times))  # ends (negative) before starts on the same day
    running = np.cumsum(change[order])
    return float(running.max())


class _Sweep:
    """The placed phases: the disturbed acres over time and, per face, the days it is covered."""

    def __init__(self, face_area, limit: float, profile: RulesProfile) -> None:
        self.area, self.limit, self.profile = face_area, limit, profile
        self.times = np.zeros(0, dtype=np.int64)  # change days of the placed total
        self.deltas = np.zeros(0)
        self.steps = np.zeros(0, dtype=np.int64)  # distinct change days
        self.totals = np.zeros(0)  # the placed total from each of those days on
        self.covered: dict[int, list[tuple[int, int]]] = {}
        self.ends = np.zeros(0, dtype=np.int64)  # days some face stops being covered

    def total_at(self, days):
        if len(self.steps) == 0:
            return np.zeros(len(days))
        at = np.searchsorted(self.steps, days, side="right") - 1
        return np.where(at >= 0, self.totals[np.maximum(at, 0)], 0.0)

    def _uncovered(self, faces_, start, end):
        """Pieces of ``[start, end)`` per face not already covered: (face, start, end) lists."""
        out_f, out_s, out_e = [], [], []
        for f, lo, hi in zip(faces_.tolist(), start.tolist(), end.tolist()):
            spans = self.covered.get(f)
            if not spans:
                out_f.append(f)
                out_s.append(lo)
                out_e.append(hi)
                continue
            cursor = lo
            for c_lo, c_hi in sorted(spans):
                if c_hi <= cursor or c_lo >= hi:
                    continue
                if c_lo > cursor:
                    out_f.append(f)
                    out_s.append(cursor)
                    out_e.append(c_lo)
                cursor = max(cursor, c_hi)
                if cursor >= hi:
                    break
            if cursor < hi:
                out_f.append(f)
                out_s.append(cursor)
                out_e.append(hi)
        return (
            np.array(out_f, dtype=np.int64),
            np.array(out_s, dtype=np.int64),
            np.array(out_e, dtype=np.int64),
        )

    def fits(self, faces_, start, end) -> bool:
        f, lo, hi = self._uncovered(faces_, start, end)
        if len(f) == 0:
            return True
        first, last = int(start.min()), int(end.max())
        inside = self.steps[(self.steps >= first) & (self.steps < last)]
        points = np.unique(np.concatenate([lo, inside]))
        times = np.concatenate([lo, hi])
        change = np.concatenate([self.area[f], -self.area[f]])
        order = np.argsort(times, kind="stable")
        days, running = times[order], np.cumsum(change[order])
        # The added acres from each point on: the running sum after every change up to it.
        at = np.searchsorted(days, points, side="right") - 1
        added = np.where(at >= 0, running[np.maximum(at, 0)], 0.0)
        worst = float((self.total_at(points) + added).max())
        return not self.profile.exceeds(worst, self.limit)

    def earliest(self, faces_, start, end, lowest: int) -> int:
        """The earliest day from ``lowest`` on where the phase's pieces (days relative to its
        start) fit: ``lowest``, or the day some placed ground is stabilised, minus an offset."""
        offsets = np.unique(start)
        day = lowest
        while not self.fits(faces_, start + day, end + day):
            following = [
                self.ends[i] - o
                for o in offsets.tolist()
                for i in [int(np.searchsorted(self.ends, day + o, side="right"))]
                if i < len(self.ends)
            ]
            if not following:  # nothing placed is stabilised later: the phase fits alone
                raise RuntimeError("a phase within the limit alone must fit after the rest")
            day = max(int(min(following)), day + 1)
        return day

    def place(self, faces_, start, end) -> None:
        f, lo, hi = self._uncovered(faces_, start, end)
        # The new pieces' changes merged into the placed ones (both sorted): O(n), no re-sort.
        times = np.concatenate([lo, hi])
        deltas = np.concatenate([self.area[f], -self.area[f]])
        order = np.argsort(times, kind="stable")
        times, deltas = times[order], deltas[order]
        at = np.searchsorted(self.times, times, side="right")
        self.times = np.insert(self.times, at, times)
        self.deltas = np.insert(self.deltas, at, deltas)
        running = np.cumsum(self.deltas)
        last = np.ones(len(self.times), dtype=bool)
        last[:-1] = self.times[1:] != self.times[:-1]
        self.steps, self.totals = self.times[last], running[last]
        for face_, lo_, hi_ in zip(faces_.tolist(), start.tolist(), end.tolist()):
            self.covered.setdefault(face_, []).append((lo_, hi_))
        ends = np.unique(end)
        self.ends = np.insert(self.ends, np.searchsorted(self.ends, ends), ends)


def _ellipsoid_ratio(geometries, crs) -> float:
    """Ellipsoidal over planar area around the site (the check decides the limit on the
    ellipsoid, applicability's method): across one site the ratio is constant to many decimals,
    so face areas scaled by it are their ellipsoidal areas."""
    if not len(geometries):
        return 1.0
    envelope = shapely.box(*shapely.total_bounds(geometries))
    planar = float(acres(envelope, crs))
    return ellipsoidal_acres(envelope, crs)[0] / planar if planar > 0 else 1.0
