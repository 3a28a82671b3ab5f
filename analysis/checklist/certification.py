"""Contractor certifications (SWPPP G): the records checked for G(2), and the printable form."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Optional

from ..dates import parse_date
from ..findings import BEFORE_CONSTRUCTION, INFO, NEEDS_REVIEW, PASS, WARN, Finding
from ..markup import escape_shown as _e
from ..profile import RulesProfile
from ..records.inspections import construction_period
from ..siteplan.plan import SitePlan
from ..values import feature_labels, has_text
from .items import checklist_items

__all__ = [
    "RULE",
    "G2_FIELDS",
    "CertificationResult",
    "certification_statement",
    "check_contractor_certification",
    "render_certification_form",
]

RULE = "contractor_certification"
LAYER = "contractor_certification"
# SWPPP G(2): each field of a certification with what it holds, in the chapter's order.
G2_FIELDS = (
    ("name", "name of the person providing the signature"),
    ("title", "title of the person providing the signature"),
    ("firm_address", "address of the contracting firm"),
    ("phone", "telephone number of the contracting firm"),
    ("site_address", "address (or other identifying description) of the site"),
    ("signed_on", "date the certification is made"),
)


@dataclass
class CertificationResult:
    """The certifications read: findings, and what the checklist's G(1) and G(2) need."""

    findings: list[Finding]
    records: int = 0
    complete: bool = False  # every record carries every G(2) field
    signed_in_time: bool = False  # every record dated on or before work started (G(1))
    problems: dict[str, list[str]] = field(default_factory=dict)  # feature label -> problems
    start: Optional[date] = None


def certification_statement() -> str:
    """The statement of SWPPP G(1), word for word from the checklist's text of the chapter.

    >>> certification_statement()[:48]
    'I certify under penalty of law that I understand'
    """
    text = next(i.text for i in checklist_items() if i.item == "G(1)")
    quoted = re.search(r'"(.+)"', text)
    if quoted is None:
        raise ValueError("the checklist's G(1) item quotes no statement")
    return quoted.group(1)


def check_contractor_certification(site: SitePlan, profile: RulesProfile) -> CertificationResult:
    """One finding per certification lacking a field of G(2) or signed after work started.

    A certification signed on the day work starts counts as signed before it (the record holds a
    date, not a time). The duty falls due "before undertaking any land development activity"
    (G(1)), not before approval: ``info`` where the plan holds no certification yet, ``warn``
    for one incomplete or signed late, ``needs_review`` where no start date says when work
    starts; ``pass`` (one finding) where every record is complete and in time. Every finding
    carries ``due = before_construction``.
    """
    section = profile.section(RULE)
    frame = site.layer(LAYER)
    start, _end = construction_period(site)
    if frame is None or len(frame) == 0:
        return CertificationResult(
            [
                Finding(
                    RULE,
                    INFO,
                    section,
                    "due before construction, not before approval: the site plan holds no contractor "
                    "certification yet (layer contractor_certification); each contractor and "
                    "subcontractor involved in soil disturbance or SMP installation shall sign and date "
                    'the statement of SWPPP G(1) "before undertaking any land development activity"; '
                    "`swppp certification-form` prints the form",
                    due=BEFORE_CONSTRUCTION,
                )
            ],
            start=start,
        )
    labels = feature_labels(LAYER, frame, "name")
    phase_starts = _phase_starts(site)
    problems, undecided = {}, []
    incomplete = late = False
    for label, (_fid, row) in zip(labels, frame.iterrows()):
        lacking = [f"no {what} ({name})" for name, what in G2_FIELDS if not has_text(row[name])]
        signed, readable = parse_date(row["signed_on"])
        if not readable:
            lacking.append(f"signed_on {row['signed_on']!r} is not a date (YYYY-MM-DD)")
        incomplete = incomplete or bool(lacking)
        late = late or signed is None
        # G(1) binds each contractor before its own work: the start of its phase where the
        # record names one, else the project's first day (round 3, point 11).
        phase = str(row["phase"]).strip() if "phase" in row and has_text(row["phase"]) else None
        own_start = phase_starts.get(phase) if phase is not None else start
        work = f"its phase {phase}'s work started" if phase is not None else "work started"
        if signed is not None and own_start is not None and signed > own_start:
            lacking.append(f"signed {signed.isoformat()}, after {work} on {own_start.isoformat()}")
            late = True
        elif signed is not None and own_start is None:
            undecided.append(label)
        if lacking:
            problems[label] = lacking
    findings = [
        Finding(
            RULE,
            WARN,
            section,
            f"contractor certification {label.split(':', 1)[1]} is incomplete: "
            + "; ".join(lacking)
            + ' (due before construction: G(1) "before '
            'undertaking any land development activity")',
            value=float(len(lacking)),
            limit=0.0,
            units="problems",
            features=[label],
            due=BEFORE_CONSTRUCTION,
        )
        for label, lacking in problems.items()
    ]
    if undecided:
        findings.append(
            Finding(
                RULE,
                NEEDS_REVIEW,
                section,
                "no disturbance start_date says when their work starts (for a "
                "record naming a phase: that phase's), so whether these "
                "certifications were signed before it is not known",
                features=undecided,
                due=BEFORE_CONSTRUCTION,
            )
        )
    if not findings:
        findings.append(
            Finding(
                RULE,
                PASS,
                section,
                f"{len(frame)} contractor certification{'s' * (len(frame) != 1)} carry every field "
                f"of SWPPP G(2) and were signed on or before work started"
                + (f" ({start.isoformat()})" if start is not None else ""),
                value=0.0,
                limit=0.0,
                units="problems",
                features=labels,
                due=BEFORE_CONSTRUCTION,
            )
        )
    return CertificationResult(
        findings,
        records=len(frame),
        complete=not incomplete,
        signed_in_time=not (late or undecided),
        problems=problems,
        start=start,
    )


def _phase_starts(site: SitePlan) -> dict[str, date]:
    """{phase: the first readable start_date of its disturbance}."""
    frame = site.layer("disturbance")
    starts: dict[str, date] = {}
    if frame is None or "phase" not in frame:
        return starts
    for phase, value in zip(frame["phase"], frame["start_date"]):
        day, _readable = parse_date(value)
        if has_text(phase) and day is not None:
            key = str(phase).strip()
            starts[key] = min(day, starts.get(key, day))
    return starts


def render_certification_form(profile: RulesProfile, site: Optional[SitePlan] = None) -> str:
    """The printable contractor certification: the statement of SWPPP G(1) word for word and a
    blank for every field of G(2); the site's name and address filled in where ``site`` is given.
    """
    project = site.project if site is not None else {}
    site_text = ", ".join(str(project[k]) for k in ("name", "address") if project.get(k))
    rows = "".join(
        f"<tr><th>{_e(what[0].upper() + what[1:])}</th>"
        f"<td>{_e(site_text) if name == 'site_address' and site_text else ''}</td></tr>"
        for name, what in G2_FIELDS
        if name != "signed_on"
    )
    village = profile.profile.title
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>Contractor certification (SWPPP G)</title>
<style>body{{font-family:"DejaVu Sans",Arial,sans-serif;margin:2em;max-width:44em;color:#212121}}
h1{{font-size:1.4em}}blockquote{{font-size:1.05em;border-left:3px solid #888;margin:1.2em 0;
padding:.2em 1em}}table{{border-collapse:collapse;width:100%}}th,td{{border:1px solid #999;
padding:.6em .5em;text-align:left;vertical-align:top}}th{{width:40%;background:#f2f2f2}}
td{{height:1.6em}}.muted{{color:#666;font-size:.9em}}</style></head>
<body>
<h1>Contractor certification</h1>
<p class="muted">{_e(village)}: stormwater pollution prevention plan (SWPPP), section G.
Each contractor and subcontractor who will be involved in soil disturbance and/or stormwater
management practice installation signs and dates a copy before undertaking any land development
activity. The signed certification becomes part of the SWPPP (G(3)).</p>
<blockquote>&ldquo;{_e(certification_statement())}&rdquo;</blockquote>
<table>{rows}
<tr><th>Signature</th><td></td></tr>
<tr><th>Date the certification is made</th><td></td></tr></table>
</body></html>
"""
