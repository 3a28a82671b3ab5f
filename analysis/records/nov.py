"""The notice of violation of Enforcement C: a record with its five contents, written as HTML.

The analysis writes HTML only (it imports no Qt). The PDF is laid out from the same HTML by
the QGIS side (``swppp:nov``'s ``OUTPUT_PDF``, through ``qgis_plugin/report_pdf.py``); the
command line refuses ``--output NOTICE.pdf`` and says so.

The record (TOML)::

    notice_id = "NOV-2027-014"          # optional
    issued_on = 2027-06-02              # optional (default: today)
    issued_by = "Stormwater Management Administrator"   # optional
    [recipient]  # C(1)
    name = "..."
    address = "..."
    [property]   # C(2): address, or where there is none a description
    address = "..."
    description = "..."
    [violation]  # C(3)
    nature = "..."
    sections = ["Maintenance and repair A(2)"]   # the sections violated (at least one)
    found_at_inspection = true          # optional (default true): Inspections A(1)(b) applies
    [remedy]     # C(4)
    measures = "..."
    complete_by = 2027-06-09            # or schedule = "within 7 days of this notice"
    [penalties]  # C(5): the kinds that may be assessed, and/or a statement
    kinds = ["criminal", "civil"]
    offence_number = 1                  # optional, from `swppp penalty`
    statement = "..."                   # optional
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Optional

from ..dates import in_range, parse_date
from ..errors import InputError
from ..markup import escape_shown as _e
from ..profile import Inputs, RulesProfile, read_toml
from .penalty import KINDS

__all__ = ["NoticeOfViolation", "read_violation", "render_notice_html", "penalty_statements", "CONTENTS"]

# Enforcement C(1)-(5): each with the record's keys that hold it (any one of the keys will do).
CONTENTS = (
    (
        "C(1)",
        "name and address of the landowner, developer or applicant",
        (("recipient", "name"), ("recipient", "address")),
        "all",
    ),
    (
        "C(2)",
        "address or description of the land where the violation occurs",
        (("property", "address"), ("property", "description")),
        "any",
    ),
    (
        "C(3)",
        "statement of the nature of the violation",
        (("violation", "nature"), ("violation", "sections")),
        "all",
    ),
    (
        "C(4)",
        "remedial measures and a time schedule for completing them",
        (("remedy", "measures"), ("remedy", "complete_by|schedule")),
        "all",
    ),
    (
        "C(5)",
        "statement of the penalties that may be assessed",
        (("penalties", "kinds"), ("penalties", "statement")),
        "any",
    ),
)


@dataclass(frozen=True)
class NoticeOfViolation:
    source: str
    data: dict

    def get(self, table: str, key: str):
        return self.data.get(table, {}).get(key)


def _present(value) -> bool:
    if isinstance(value, str):
        return bool(value.strip())
    if isinstance(value, (list, tuple)):
        return bool(value) and all(_present(v) for v in value)
    return value is not None


def _has(record: dict, table: str, keys: str) -> bool:
    return any(_present(record.get(table, {}).get(k)) for k in keys.split("|"))


def read_violation(path: str | Path, limits: Optional[Inputs] = None) -> NoticeOfViolation:
    """Read and validate a violation record; refuse one lacking any of C(1)-(5), naming it.

    ``issued_on`` and ``remedy.complete_by`` must be dates (``2027-06-14``, a TOML date or ISO
    text: ``"tomorrow"`` is refused), inside the profile's range of dates (``limits``) where
    given.
    """
    path = Path(path)
    data = read_toml(path, "violation record")
    for table, key in ((None, "issued_on"), ("remedy", "complete_by")):
        holder = data if table is None else data.get(table)
        value = holder.get(key) if isinstance(holder, dict) else None
        name = key if table is None else f"{table}.{key}"
        if value is None:
            continue
        day, readable = parse_date(value) if isinstance(value, (str, date)) else (None, False)
        if not readable or day is None:
            raise InputError(
                f"{name} is {value!r}, not a date", path=path, field=name, fix=f"write {key} = YYYY-MM-DD"
            )
        if limits is not None:
            in_range(
                day,
                limits.earliest_date,
                limits.latest_date,
                name,
                path=path,
                field=name,
                fix="correct the date (the profile's [inputs] gives the range)",
            )
    for table in {t for _, _, keys, _ in CONTENTS for t, _ in keys}:
        if table in data and not isinstance(data[table], dict):
            raise InputError(
                f"'{table}' must be a table",
                path=path,
                field=table,
                fix=f"write it as [{table}] with its keys below",
            )
    for item, what, keys, mode in CONTENTS:
        present = [_has(data, t, k) for t, k in keys]
        if not (all(present) if mode == "all" else any(present)):
            lacking = [f"{t}.{k.replace('|', ' or ')}" for (t, k), p in zip(keys, present) if not p]
            needed = " and ".join(lacking) if mode == "all" else " or ".join(lacking)
            raise InputError(
                f"the notice lacks Enforcement {item}, the {what}",
                path=path,
                field=needed,
                fix=f"add {needed} (Enforcement {item})",
            )
    kinds = data.get("penalties", {}).get("kinds", [])
    if not isinstance(kinds, list) or any(k not in KINDS for k in kinds):
        raise InputError(
            f"penalties.kinds {kinds!r} must list criminal and/or civil",
            path=path,
            field="penalties.kinds",
            fix='write kinds = ["criminal", "civil"]',
        )
    found = data["violation"].get("found_at_inspection", True)
    if not isinstance(found, bool):
        raise InputError(
            f"violation.found_at_inspection {found!r} is not true or false",
            path=path,
            field="violation.found_at_inspection",
            fix="write found_at_inspection = true (or false where the violation was "
            "not found at an inspection of the site)",
        )
    sections = data["violation"]["sections"]
    if not isinstance(sections, list):
        raise InputError(
            "violation.sections must be a list",
            path=path,
            field="violation.sections",
            fix='write sections = ["Maintenance and repair A(2)"]',
        )
    number = data.get("penalties", {}).get("offence_number", 1)
    if not isinstance(number, int) or number < 1:
        raise InputError(
            f"penalties.offence_number {number!r} is not a whole number from 1",
            path=path,
            field="penalties.offence_number",
            fix="give the offence number the penalty assessment reports, or leave it out",
        )
    return NoticeOfViolation(str(path), data)


def _money(value: float) -> str:
    return f"${value:,.0f}"


def _ordinal(n: int) -> str:
    return {1: "first", 2: "second"}.get(n, "third or subsequent")


def penalty_statements(notice: NoticeOfViolation, profile: RulesProfile) -> list[str]:
    """The penalties that may be assessed, in words, from the profile's schedule."""
    number = notice.get("penalties", "offence_number") or 1
    out = []
    for kind in notice.get("penalties", "kinds") or []:
        fines = profile.penalty.fines(kind)
        low, high = fines[min(number, len(fines)) - 1]
        amount = (
            f"not exceeding {_money(high)}"
            if not low
            else f"of not less than {_money(low)} nor more than {_money(high)}"
        )
        unit = profile.penalty.separate_violation_days(kind)
        each = "day's" if unit == 1 else "week's" if unit == 7 else f"{unit} days'"
        if kind == "criminal":
            days = profile.penalty.criminal_imprisonment_max_days
            out.append(
                f"Criminal (Enforcement E), {_ordinal(number)} offence: a fine {amount} or "
                f"imprisonment for a period not to exceed {days} days, or both. Each "
                f"{each} continued violation is a separate additional violation."
            )
        else:
            out.append(
                f"Civil (Enforcement F), {_ordinal(number)} violation: a civil penalty "
                f"{amount}. Each {each} continued violation is a separate additional "
                "violation."
            )
    return out


# Inspections A(1)(b), in the chapter's words: what follows a violation found at an inspection.
STOP_BUT_STABILIZATION = (
    "Inspections A(1)(b): \u201cNo further work shall be conducted except for site stabilization "
    "until all violations are corrected and all work previously completed has received approval "
    "by the Stormwater Management Administrator.\u201d"
)


def render_notice_html(notice: NoticeOfViolation, profile: RulesProfile, today: Optional[date] = None) -> str:
    """The notice as one HTML document; every text from the record is escaped."""
    d = notice.data
    issued = d.get("issued_on") or (today or date.today())
    remedy_by = notice.get("remedy", "complete_by")
    schedule = (f"Complete by {remedy_by}." if remedy_by else "") + (
        f" {notice.get('remedy', 'schedule')}" if notice.get("remedy", "schedule") else ""
    )
    statements = [_e(s) for s in penalty_statements(notice, profile)]
    if notice.get("penalties", "statement"):
        statements.append(_e(notice.get("penalties", "statement")))
    sections = "".join(f"<li>{_e(s)}</li>" for s in notice.get("violation", "sections"))
    prop = notice.get("property", "address") or notice.get("property", "description")
    described = notice.get("property", "description") if notice.get("property", "address") else None
    title = "Notice of violation" + (f" {d['notice_id']}" if d.get("notice_id") else "")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{_e(title)}</title>
<style>body{{font-family:"DejaVu Sans",Arial,sans-serif;margin:2em;max-width:44em;color:#212121}}
h1{{font-size:1.4em}}h2{{font-size:1.05em;margin-top:1.3em}}.muted{{color:#666}}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="muted">{_e(profile.profile.title)}. Issued {_e(issued)}
by {_e(d.get("issued_by") or "the Stormwater Management Administrator")} under Enforcement C.</p>
<h2>To (C(1))</h2>
<p>{_e(notice.get("recipient", "name"))}<br>{_e(notice.get("recipient", "address"))}</p>
<h2>Land where the violation is occurring (C(2))</h2>
<p>{_e(prop)}{f"<br>{_e(described)}" if described else ""}</p>
<h2>Nature of the violation (C(3))</h2>
<p>{_e(notice.get("violation", "nature"))}</p>
<p>Sections of the chapter violated:</p><ul>{sections}</ul>
<h2>Remedial measures and schedule (C(4))</h2>
<p>{_e(notice.get("remedy", "measures"))}</p>
<p>{_e(schedule.strip())}</p>
{
        f"<p><strong>{_e(STOP_BUT_STABILIZATION)}</strong></p>"
        if notice.get("violation", "found_at_inspection") is not False
        else ""
    }
<h2>Penalties that may be assessed (C(5))</h2>
{"".join(f"<p>{s}</p>" for s in statements)}
<p class="muted">Failure to comply may also lead to a stop-work order (Enforcement D).</p>
</body></html>
"""
