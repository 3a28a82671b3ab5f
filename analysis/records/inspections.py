"""Construction-phase records: inspection frequency, 48-hour milestone notices, sediment cleanout.

Decisions taken from the chapter's text (docs/DESIGN.md, "Construction-phase records"):

- Land development is under way from the first ``start_date`` to the last ``stabilized_date``
  of the site plan, both days included (or ``--from``/``--to``, both included).
- Any inspection report (routine, storm or other) is an inspection report: it restarts the
  7-day clock and answers a storm. The first report is due 7 days after the period starts;
  after a missed due date the next falls 7 days later ("every seven days").
- Storms from daily rainfall: with ``storm_days = "consecutive"`` a run of consecutive wet
  days is one storm event, its depth their sum; its 24 hours run from its last wet day to the
  end of the following day, and a report dated on either day answers it. A storm on any day of
  the period creates the duty, even where its 24 hours end after the period.
- A day whose rainfall is unknown (absent, blank, or failing NOAA's quality check) leaves the
  storm duty undecided for it: ``needs_review`` names the days.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Optional

from ..about import TOOL_NAME, __version__
from ..checks.base import Check, CheckResult
from ..dates import in_range
from ..dates import parse_date as parse_field_date
from ..errors import InputError
from ..findings import FAIL, NEEDS_REVIEW, PASS, WARN, Finding, HasFindings
from ..io.csv_rows import parse_date, parse_datetime, parse_number, read_csv
from ..profile import Inputs, RulesProfile
from .rainfall import Rainfall

__all__ = [
    "CHECKS",
    "InspectionReport",
    "Storm",
    "Notice",
    "TrapReading",
    "RecordsCheck",
    "read_inspection_log",
    "read_notices",
    "read_traps",
    "construction_period",
    "find_storms",
    "check_inspection_frequency",
    "check_inspection_notice",
    "check_sediment_cleanout",
    "check_records",
    "check_record_files",
]

LOG_KINDS = ("routine", "storm", "other")
_EPS = 1e-9  # float round-off when a depth or fraction is compared with its threshold


@dataclass(frozen=True)
class InspectionReport:
    at: datetime
    inspector: str
    kind: str
    timed: bool = True  # False where the log gives a date only

    def within(self, start: datetime, end: datetime) -> bool:
        """Whether the report may fall from ``start`` to ``end`` (a date-only one: its day)."""
        if self.timed:
            return start <= self.at <= end
        return start.date() <= self.day <= end.date()

    @property
    def day(self) -> date:
        return self.at.date()


@dataclass(frozen=True)
class Storm:
    """A storm event: first and last wet day, depth (inches), the hours a report has after it;
    from hourly rain also the moments its first wet hour began and its last ended."""

    first_day: date
    last_day: date
    precip_in: float
    report_hours: int
    starts_at: Optional[datetime] = None
    ends_at: Optional[datetime] = None

    @property
    def window(self) -> tuple[datetime, datetime]:
        """When a report answers it: from the storm's end for ``report_hours`` (daily rain: from
        the start of its last wet day to the end of the day those hours reach from its end)."""
        if self.ends_at is not None:
            return self.ends_at, self.ends_at + timedelta(hours=self.report_hours)
        start = datetime.combine(self.last_day, datetime.min.time())
        days = 1 + -(-self.report_hours // 24)  # the wet day, then whole days the hours reach
        return start, start + timedelta(days=days) - timedelta(microseconds=1)

    @property
    def due(self) -> date:
        """The day its report hours end."""
        return self.window[1].date()

    def describe(self) -> str:
        if self.starts_at is not None:
            return f"from {self.starts_at:%Y-%m-%d %H:%M} to {self.ends_at:%Y-%m-%d %H:%M}"
        if self.first_day == self.last_day:
            return f"on {self.first_day}"
        return f"on {self.first_day} to {self.last_day}"


@dataclass(frozen=True)
class Notice:
    line: int
    milestone: str
    milestone_at: Optional[datetime]
    notified_at: Optional[datetime]


@dataclass(frozen=True)
class TrapReading:
    line: int
    trap_id: str
    day: date
    design_capacity_cf: float
    sediment_cf: float
    cleaned_on: Optional[date]


# Reading ---------------------------------------------------------------------------------
def read_inspection_log(path: str | Path, limits: Optional[Inputs] = None) -> list[InspectionReport]:
    """LOG.csv: ``date`` (ISO date or date-time), ``inspector``, ``kind`` (routine/storm/other);
    ``limits``: the profile's [inputs] (the range of dates)."""
    rows = read_csv(path, ("date", "inspector", "kind"), "inspection log", limits)
    reports = []
    for line, row in rows.rows:
        kind = row["kind"].lower()
        if kind not in LOG_KINDS:
            raise rows.error(
                f"kind '{row['kind']}' is not one of {', '.join(LOG_KINDS)}",
                line,
                "kind",
                "write routine, storm or other",
            )
        reports.append(
            InspectionReport(
                parse_datetime(rows, line, "date", row["date"]),
                row["inspector"],
                kind,
                timed=len(row["date"]) > 10,
            )
        )
    return sorted(reports, key=lambda r: r.at)


def read_notices(path: str | Path, profile: RulesProfile) -> list[Notice]:
    """NOTICES.csv: ``milestone`` (a key of the profile's milestones), ``milestone_at``,
    ``notified_at``; a blank ``milestone_at`` is a milestone not reached, a blank
    ``notified_at`` a notice never given."""
    rows = read_csv(path, ("milestone", "milestone_at", "notified_at"), "notices record", profile.inputs)
    known = dict(profile.inspections.milestones)
    notices = []
    for line, row in rows.rows:
        key = row["milestone"].lower()
        if key not in known:
            raise rows.error(
                f"milestone '{row['milestone']}' is not one of Inspections A(1)(a)'s eight",
                line,
                "milestone",
                "use one of " + ", ".join(known),
            )
        at, notified = (
            parse_datetime(rows, line, c, row[c]) if row[c] else None for c in ("milestone_at", "notified_at")
        )
        notices.append(Notice(line, key, at, notified))
    return notices


def read_traps(path: str | Path, limits: Optional[Inputs] = None) -> list[TrapReading]:
    """TRAPS.csv: ``trap_id``, ``date`` (of the measurement), ``design_capacity_cf``,
    ``sediment_cf``, ``cleaned_on`` (blank = not cleaned out)."""
    rows = read_csv(
        path,
        ("trap_id", "date", "design_capacity_cf", "sediment_cf", "cleaned_on"),
        "sediment trap record",
        limits,
    )
    readings = []
    for line, row in rows.rows:
        if not row["trap_id"]:
            raise rows.error("the trap has no id", line, "trap_id", "name the trap or pond")
        day = parse_date(rows, line, "date", row["date"])
        cleaned = parse_date(rows, line, "cleaned_on", row["cleaned_on"]) if row["cleaned_on"] else None
        if cleaned is not None and cleaned < day:
            raise rows.error(
                f"cleaned_on {cleaned} is before the measurement on {day}",
                line,
                "cleaned_on",
                "give the clean-out that followed this measurement",
            )
        readings.append(
            TrapReading(
                line,
                row["trap_id"],
                day,
                parse_number(rows, line, "design_capacity_cf", row["design_capacity_cf"], above_minimum=True),
                parse_number(rows, line, "sediment_cf", row["sediment_cf"]),
                cleaned,
            )
        )
    return readings


def construction_period(site) -> tuple[Optional[date], Optional[date]]:
    """First ``start_date`` and last ``stabilized_date`` of the site plan's disturbance.

    The end is None where any disturbance has no stabilisation date yet. Dates are read as the
    phasing check reads them; one it cannot read is left out here (``phasing_five_acres``
    reports it as ``needs_review``, naming the feature).
    """
    frame = site.layer("disturbance")

    def days(column):
        return [day for day, _readable in map(parse_field_date, frame[column]) if day is not None]

    starts, ends = days("start_date"), days("stabilized_date")
    end = max(ends) if ends and len(ends) == len(frame) else None
    return (min(starts) if starts else None), end


# Checks ----------------------------------------------------------------------------------
def find_storms(rain: Rainfall, start: date, end: date, profile: RulesProfile) -> list[Storm]:
    """Storms of at least the profile's depth whose rain fell from ``start`` to ``end``."""
    wet_min = profile.inspections.wet_day_min_in
    threshold = profile.inspections.storm_precip_in
    rule = profile.inspections.storm_days  # "consecutive" or "each_day" (checked at load)
    if rain.hourly is not None:
        return _hourly_storms(rain.hourly, start, end, profile)
    wet = sorted(d for d, inches in rain.daily.items() if start <= d <= end and inches >= wet_min - _EPS)
    runs: list[list[date]] = []
    for day in wet:
        if rule == "consecutive" and runs and day - runs[-1][-1] == timedelta(days=1):
            runs[-1].append(day)
        else:
            runs.append([day])
    hours = profile.inspections.storm_report_within_hours
    storms = [Storm(run[0], run[-1], sum(rain.daily[d] for d in run), hours) for run in runs]
    return [s for s in storms if s.precip_in >= threshold - _EPS]


def _hourly_storms(
    hourly: dict[datetime, float], start: date, end: date, profile: RulesProfile
) -> list[Storm]:
    """Runs of wet hours apart by fewer than ``storm_dry_hours`` dry hours are one storm."""
    wet_min = profile.inspections.wet_hour_min_in
    gap = timedelta(hours=profile.inspections.storm_dry_hours)
    threshold = profile.inspections.storm_precip_in
    hour = timedelta(hours=1)
    wet = sorted(
        at for at, inches in hourly.items() if inches >= wet_min - _EPS and start <= (at - hour).date() <= end
    )
    runs: list[list[datetime]] = []
    for at in wet:
        if runs and at - runs[-1][-1] <= gap:  # fewer than `gap` dry hours between
            runs[-1].append(at)
        else:
            runs.append([at])
    storms = [
        Storm(
            (run[0] - hour).date(),
            (run[-1] - hour).date(),
            sum(hourly[t] for t in hourly if run[0] <= t <= run[-1]),
            profile.inspections.storm_report_within_hours,
            starts_at=run[0] - hour,
            ends_at=run[-1],
        )
        for run in runs
    ]
    return [s for s in storms if s.precip_in >= threshold - _EPS]


def check_inspection_frequency(
    reports: Sequence[InspectionReport], rain: Rainfall, start: date, end: date, profile: RulesProfile
) -> tuple[list[Finding], dict]:
    """Maintenance and repair A(2): a report every ``interval_days`` and within
    ``storm_report_within_hours`` of each storm of ``storm_precip_in`` or more."""
    rule, section = "inspection_frequency", profile.section("inspection_frequency")
    interval = timedelta(days=profile.inspections.interval_days)
    threshold = profile.inspections.storm_precip_in
    reports = sorted(reports, key=lambda r: r.at)
    days = sorted({r.day for r in reports if start <= r.day})
    findings = []

    def late(due, came):
        if came is None:
            return "no report came after it", None
        n = (came - due).days
        when = f"{n} day{'s' * (n != 1)} late" if n else "later that day"
        return f"the next report came on {came}, {when}", float(n)

    due, within = start + interval, [d for d in days if d <= end]
    for report_day in within + [None]:
        while due <= end and (report_day is None or due < report_day):
            text, value = late(due, report_day)
            findings.append(
                Finding(
                    rule,
                    FAIL,
                    section,
                    f"no inspection report in the {interval.days} days up to {due}; {text}",
                    value=value,
                    units="days late",
                    features=[f"due:{due}"],
                )
            )
            due += interval
        if report_day is not None:
            due = report_day + interval
    storms = find_storms(rain, start, end, profile)
    storm_rows = []
    for storm in storms:
        opens, closes = storm.window
        answered = [r for r in reports if r.within(opens, closes)]
        storm_rows.append(
            {
                "first_day": storm.first_day.isoformat(),
                "last_day": storm.last_day.isoformat(),
                "precip_in": storm.precip_in,
                "due": storm.due.isoformat(),
                "reported_on": answered[0].day.isoformat() if answered else None,
            }
        )
        if answered:
            continue
        came = next(
            (
                r.day
                for r in reports
                if (r.at if r.timed else datetime.combine(r.day, datetime.max.time())) > closes
            ),
            None,
        )
        text, value = late(storm.due, came)
        by = f"{closes:%Y-%m-%d %H:%M}" if storm.ends_at is not None else f"the end of {storm.due}"
        findings.append(
            Finding(
                rule,
                FAIL,
                section,
                f"storm of {storm.precip_in:.2f} inch {storm.describe()}: no inspection report "
                f"within {storm.report_hours} hours (by {by}); {text}",
                value=value,
                units="days late",
                features=[f"due:{storm.due}", f"storm:{storm.first_day}"],
            )
        )
    if not findings:
        findings.append(
            Finding(
                rule,
                PASS,
                section,
                f"{len(within)} inspection report(s) from {start} to {end}: none more than "
                f"{interval.days} days apart; {len(storms)} storm(s) of {threshold} inch or more, "
                f"each reported on within {profile.inspections.storm_report_within_hours} hours",
            )
        )
    unknown = rain.unknown_days(start, end)
    if unknown:
        shown = ", ".join(d.isoformat() for d in unknown[:8]) + (" ..." if len(unknown) > 8 else "")
        why = "; ".join(f"{d}: {rain.rejected[d]}" for d in unknown[:3] if d in rain.rejected)
        findings.append(
            Finding(
                rule,
                NEEDS_REVIEW,
                section,
                f"rainfall unknown on {len(unknown)} day(s) of the period ({shown})"
                + (f" [{why}]" if why else "")
                + ": a storm of "
                f"{threshold} inch or more on those days cannot be ruled out; check another gauge",
                value=float(len(unknown)),
                units="days",
                features=[f"rain:{d}" for d in unknown],
            )
        )
    measurements = {
        "inspection_reports": len(within),
        "storms": storm_rows,
        "rain_unknown_days": len(unknown),
    }
    return findings, measurements


def check_inspection_notice(
    notices: Sequence[Notice], profile: RulesProfile
) -> tuple[list[Finding], list[dict]]:
    """Inspections A(1)(a): each milestone notified at least 48 hours before it."""
    rule, section = "inspection_notice", profile.section("inspection_notice")
    need = profile.inspections.notice_hours_before_milestone
    titles = dict(profile.inspections.milestones)
    findings, rows = [], []
    for n in notices:
        if n.milestone_at is None:
            continue
        due = n.milestone_at - timedelta(hours=need)
        ahead = None if n.notified_at is None else (n.milestone_at - n.notified_at).total_seconds() / 3600
        rows.append(
            {
                "milestone": n.milestone,
                "milestone_at": n.milestone_at.isoformat(sep=" "),
                "notified_at": n.notified_at and n.notified_at.isoformat(sep=" "),
                "hours_ahead": ahead,
            }
        )
        features = [f"milestone:{n.milestone}", f"due:{due.date()}"]
        title = f"{titles[n.milestone]} ({n.milestone_at:%Y-%m-%d %H:%M})"
        if ahead is None:
            findings.append(
                Finding(
                    rule,
                    FAIL,
                    section,
                    f"{title}: no notice was given ({need:g} hours short)",
                    value=None,
                    limit=need,
                    units="hours ahead",
                    features=features,
                )
            )
        elif ahead < need - _EPS:
            given = f"notified {_hours(ahead)} ahead" if ahead >= 0 else f"notified {_hours(-ahead)} after it"
            findings.append(
                Finding(
                    rule,
                    FAIL,
                    section,
                    f"{title}: {given}, {_hours(need - ahead)} short of {need:g}",
                    value=ahead,
                    limit=need,
                    units="hours ahead",
                    features=features,
                )
            )
    reached = {n.milestone for n in notices if n.milestone_at is not None}
    if not findings and reached:
        findings.append(
            Finding(rule, PASS, section, f"{len(rows)} milestone(s) notified at least {need:g} hours ahead")
        )
    absent = [key for key in titles if key not in reached]
    if absent:
        findings.append(
            Finding(
                rule,
                NEEDS_REVIEW,
                section,
                "no milestone date recorded for: "
                + "; ".join(titles[k] for k in absent)
                + " (not reached yet, or not recorded): check when they happen",
                features=[f"milestone:{k}" for k in absent],
            )
        )
    return findings, rows


# Maintenance and repair A(1): "Sediment shall be removed from sediment traps or sediment ponds
# whenever their design capacity has been reduced by 50%." The chapter gives no time; allowing
# until the next inspection is this tool's reading, and every finding says so.
CLEANOUT_READING = (
    ' (Maintenance and repair A(1): removed "whenever their design capacity has '
    'been reduced by 50%"; the chapter sets no time, and "by the next '
    "inspection\" is this tool's reading)"
)


def check_sediment_cleanout(
    readings: Sequence[TrapReading], reports: Sequence[InspectionReport], profile: RulesProfile
) -> tuple[list[Finding], list[dict]]:
    """Maintenance and repair A(1): a trap at 50% of design capacity cleaned out by the next
    inspection (the first report dated after the measurement)."""
    rule, section = "sediment_cleanout", profile.section("sediment_cleanout")
    fraction = profile.inspections.sediment_cleanout_fraction
    days = sorted({r.day for r in reports})
    findings, rows = [], []
    for t in readings:
        filled = t.sediment_cf / t.design_capacity_cf
        reached = filled >= fraction - _EPS
        following = next((d for d in days if d > t.day), None)
        rows.append(
            {
                "trap_id": t.trap_id,
                "date": t.day.isoformat(),
                "filled": filled,
                "reached": reached,
                "next_inspection": following and following.isoformat(),
                "cleaned_on": t.cleaned_on and t.cleaned_on.isoformat(),
            }
        )
        if not reached:
            continue
        what = (
            f"trap {t.trap_id} held {t.sediment_cf:g} of {t.design_capacity_cf:g} cu ft "
            f"({filled:.0%} of design capacity) on {t.day}"
        )
        features = [f"trap:{t.trap_id}"]
        if t.cleaned_on is not None and (following is None or t.cleaned_on <= following):
            continue
        if following is None:
            findings.append(
                Finding(
                    rule,
                    WARN,
                    section,
                    f"{what}: not yet cleaned out; it must be by the next inspection" + CLEANOUT_READING,
                    value=filled,
                    limit=fraction,
                    units="fraction",
                    features=features,
                )
            )
            continue
        done = f"cleaned out only on {t.cleaned_on}" if t.cleaned_on else "not cleaned out"
        findings.append(
            Finding(
                rule,
                FAIL,
                section,
                f"{what}: {done} by the next inspection on {following}" + CLEANOUT_READING,
                value=filled,
                limit=fraction,
                units="fraction",
                features=features + [f"due:{following}"],
            )
        )
    if not [f for f in findings if f.status == FAIL]:
        findings.insert(
            0,
            Finding(
                rule,
                PASS,
                section,
                f"{len(readings)} measurement(s) of {len({t.trap_id for t in readings})} trap(s): "
                f"each that reached {fraction:.0%} of its design capacity was cleaned out by the "
                "next inspection"
                + (" (or has no next inspection yet)" if findings else "")
                + CLEANOUT_READING,
            ),
        )
    return findings, rows


def _hours(value: float) -> str:
    return f"{value:g} hour{'' if value == 1 else 's'}"


# All records together -------------------------------------------------------------------
@dataclass
class RecordsCheck(HasFindings):
    """The construction-phase checks of one site's records: findings and measurements."""

    profile: RulesProfile
    period: dict
    records: dict
    measurements: dict
    findings: list[Finding] = field(default_factory=list)
    reviewed_on: str = field(default_factory=lambda: date.today().isoformat())

    def to_dict(self) -> dict:
        return {
            "tool": {"name": TOOL_NAME, "version": __version__},
            "profile": self.profile.name,
            "reviewed_on": self.reviewed_on,
            "records": {**self.records, "period": self.period},
            "measurements": self.measurements,
            "findings": [f.to_dict() for f in self.findings],
        }


def check_records(
    profile: RulesProfile,
    log: str | Path,
    rain: Rainfall,
    start: Optional[date],
    end: Optional[date],
    notices: str | Path | None = None,
    traps: str | Path | None = None,
    progress=None,
) -> RecordsCheck:
    """Read the records and run the three checks over the period ``start``..``end``.

    ``end`` None (no final stabilisation scheduled) checks up to the rainfall record's last
    day and says so.
    """
    from ..progress import SILENT

    progress = progress or SILENT
    progress.step(0.1, "reading the inspection log")
    reports = read_inspection_log(log, profile.inputs)
    if start is None:
        raise InputError(
            "the construction period has no start",
            path=log,
            fix="give the period's first day, or a site plan whose disturbance has start dates",
            parameter=("start", "site"),
        )
    period = {"from": start.isoformat(), "to": None, "to_from": "final stabilisation"}
    if end is None:
        if not rain.daily:
            raise InputError(
                "the construction period has no end and the rainfall record no days",
                path=rain.source,
                fix="give the period's last day",
                parameter="end",
            )
        end = max(rain.daily)
        period["to_from"] = "last day of the rainfall record (no final stabilisation scheduled)"
    if end < start:
        raise InputError(
            f"the construction period ends ({end}) before it starts ({start})",
            fix="make the period's first day on or before its last day",
            parameter=("start", "end"),
        )
    period["to"] = end.isoformat()
    progress.step(0.4, "checking inspection frequency")
    findings, frequency = check_inspection_frequency(reports, rain, start, end, profile)
    records = {"log": Path(log).name, "rain": rain.describe()}
    measurements = {**frequency}
    for name, path, check in (
        ("notices", notices, "inspection_notice"),
        ("traps", traps, "sediment_cleanout"),
    ):
        progress.step(0.6 if name == "notices" else 0.8, f"checking {name}")
        if path is None:
            findings.append(
                Finding(
                    check, NEEDS_REVIEW, profile.section(check), f"not checked: no {name} record was given"
                )
            )
            continue
        records[name] = Path(path).name
        if name == "notices":
            more, rows = check_inspection_notice(read_notices(path, profile), profile)
        else:
            more, rows = check_sediment_cleanout(read_traps(path, profile.inputs), reports, profile)
        findings += more
        measurements[name] = rows
    return RecordsCheck(profile, period, records, measurements, findings)


def check_record_files(
    profile: RulesProfile,
    log: str | Path,
    rain: str | Path,
    site=None,
    start: Optional[date] = None,
    end: Optional[date] = None,
    notices: str | Path | None = None,
    traps: str | Path | None = None,
    station: Optional[str] = None,
    rain_units: Optional[str] = None,
    progress=None,
) -> RecordsCheck:
    """The records check from files: the period from ``site`` (a site-plan path or a loaded
    ``SitePlan``) or from ``start``/``end``, never both. The one call the CLI, the review and
    the QGIS algorithm make."""
    from ..siteplan.plan import SitePlan, load_site_plan
    from .rainfall import read_rainfall

    if site is not None and (start is not None or end is not None):
        raise InputError(
            "give the construction period either as a site plan or as its first and last days, not both",
            parameter=("site", "start", "end"),
            fix="leave out the site plan, or the first and last days",
        )
    if site is not None:
        plan = site if isinstance(site, SitePlan) else load_site_plan(site, profile)
        start, end = construction_period(plan)
        if start is None:
            raise InputError(
                "no disturbance of the site plan has a start_date",
                path=plan.path,
                layer="disturbance",
                field="start_date",
                fix="give start dates, or the period's first and last days",
                parameter=("start", "end"),
            )
    elif start is None:
        raise InputError(
            "the construction period is not given",
            fix="give a site plan (its disturbance's dates), or the period's first "
            "day (and last day) as YYYY-MM-DD",
            parameter=("site", "start", "end"),
        )
    for day, option in ((start, "start"), (end, "end")):
        in_range(
            day,
            profile.inputs.earliest_date,
            profile.inputs.latest_date,
            f"the period's {'first' if option == 'start' else 'last'} day",
            parameter=option,
            fix="correct the date (the profile's [inputs] gives the range)",
        )
    rainfall = read_rainfall(rain, station=station, units=rain_units, limits=profile.inputs)
    return check_records(profile, log, rainfall, start, end, notices=notices, traps=traps, progress=progress)


# --- the review's check ------------------------------------------------------------------


def _run(context, progress) -> CheckResult:
    """The records given to the review (``check_record_files``' keyword arguments), over the
    site plan's period."""
    records = context.records
    if not records.get("log") or not records.get("rain"):
        raise InputError(
            "the inspection log and the rainfall record are both needed to check construction-phase records",
            fix="give both",
            parameter=("log", "rain"),
        )
    result = check_record_files(context.profile, site=context.site, progress=progress, **records)
    return CheckResult(
        result.findings,
        extra={"records": {**result.records, "period": result.period, "measurements": result.measurements}},
    )


CHECKS = (
    Check(
        "records",
        rules=("inspection_frequency", "inspection_notice", "sediment_cleanout"),
        reads=("site:disturbance", "records"),
        run=_run,
        only_with="records",
        doing="checking the construction-phase records",
        weight=5.0,
    ),
)
