"""The penalty schedule of Enforcement E (criminal) and F (civil): offence number, ranges,
continuing violations.

Decisions taken from the chapter's text (docs/DESIGN.md, "Construction-phase records"):

- An earlier offence counts when the offence assessed falls within five years of it, the
  day five years on included (2021-03-01 counts for an offence on 2026-03-01, not 2026-03-02;
  from 29 February, five years end on 28 February). Only earlier offences of the same kind
  (criminal or civil) by the same person count; names match ignoring case and spacing; an
  entry dated the day assessed is taken to be that offence itself and is not counted.
- A continuing violation from ``on`` to ``until`` (both days included) is one violation for
  each day (criminal) or each week or part of a week (civil) it lasts: "each day's (week's)
  continued violation" is a separate violation added to the first, so 15 days are 3 civil
  violations (the first, and two weeks' continuation), 7 days are 1.
- With ``[penalty] <kind>_continuing_violations_escalate`` the separate violations are numbered
  on after the offences counted (the second is a second violation within five years of the
  first); without it each is priced at the offence number the history gives. The default
  profile escalates civil violations (F counts "violations") and not criminal ones (E prices
  offences "for conviction of" them; a day's continuation is no further conviction). The
  output states the reading applied and cites only the section of the kind assessed.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Optional

from ..errors import InputError
from ..io.csv_rows import parse_date, read_csv
from ..profile import Inputs, RulesProfile

__all__ = ["KINDS", "SECTIONS", "Offence", "Assessment", "read_history", "years_after", "assess_penalty"]

KINDS = ("criminal", "civil")
SECTIONS = {"criminal": "Enforcement E", "civil": "Enforcement F"}  # the section each applies
_READINGS = {
    ("criminal", False): (
        "each day's continued violation is a separate additional violation, "
        "priced at the offence number the conviction history gives: the "
        'higher ranges are "for conviction of" a second or third offence'
    ),
    ("criminal", True): (
        "each day's continued violation is numbered on as a further offence "
        "(the profile's reading; Enforcement E prices offences \"for "
        'conviction of" them)'
    ),
    ("civil", True): (
        "each week's continued violation is a separate additional violation, "
        "numbered on after the violations counted (Enforcement F counts "
        "violations committed within five years of the first)"
    ),
    ("civil", False): (
        "each week's continued violation is a separate additional violation, "
        "priced at the violation number the history gives"
    ),
}


@dataclass(frozen=True)
class Offence:
    person: str
    day: date
    kind: str


@dataclass
class Assessment:
    """What may be assessed for one offence (and its continuation)."""

    person: str
    on: date
    kind: str
    offence_number: int
    fine_min: float
    fine_max: float
    imprisonment_max_days: int
    counted: list[date] = field(default_factory=list)
    continuing: Optional[dict] = None

    def to_dict(self) -> dict:
        """docs/CONTRACT.md's ``penalty --json`` (``continuing`` only where an end date is given)."""
        out = {
            "person": self.person,
            "on": self.on.isoformat(),
            "kind": self.kind,
            "section": SECTIONS[self.kind],
            "offence_number": self.offence_number,
            "fine_min": self.fine_min,
            "fine_max": self.fine_max,
            "imprisonment_max_days": self.imprisonment_max_days,
            "counted": [d.isoformat() for d in self.counted],
        }
        if self.continuing is not None:
            out["continuing"] = self.continuing
        return out


def read_history(path: str | Path, limits: Optional[Inputs] = None) -> list[Offence]:
    """HISTORY.csv: ``person``, ``date``, ``kind`` (criminal or civil); ``limits``: the
    profile's [inputs] (the range of dates)."""
    rows = read_csv(path, ("person", "date", "kind"), "offence history", limits)
    history = []
    for line, row in rows.rows:
        kind = row["kind"].lower()
        if kind not in KINDS:
            raise rows.error(
                f"kind '{row['kind']}' is not criminal or civil", line, "kind", "write criminal or civil"
            )
        if not row["person"]:
            raise rows.error("the offence names no person", line, "person", "name the person")
        history.append(Offence(row["person"], parse_date(rows, line, "date", row["date"]), kind))
    return history


def years_after(day: date, years: int) -> date:
    """The same calendar day ``years`` later; 29 February gives 28 February.

    >>> years_after(date(2020, 2, 29), 5)
    datetime.date(2025, 2, 28)
    """
    year = day.year + years
    return day.replace(year=year, day=min(day.day, calendar.monthrange(year, day.month)[1]))


def _same_person(a: str, b: str) -> bool:
    return " ".join(a.split()).casefold() == " ".join(b.split()).casefold()


def _schedule(profile: RulesProfile, kind: str, number: int) -> tuple[float, float]:
    fines = profile.penalty.fines(kind)
    low, high = fines[min(number, len(fines)) - 1]
    return float(low), float(high)


def assess_penalty(
    history: list[Offence],
    person: str,
    on: date,
    kind: str,
    profile: RulesProfile,
    until: Optional[date] = None,
) -> Assessment:
    """The offence number of ``person``'s ``kind`` offence on ``on``, its ranges, and, with
    ``until``, the separate violations of a continuing violation and their total range.

    >>> from analysis.profile import load_profile
    >>> a = assess_penalty([Offence("A", date(2021, 3, 1), "civil")], "a", date(2026, 3, 1),
    ...                    "civil", load_profile())
    >>> a.offence_number, a.fine_min, a.fine_max
    (2, 350.0, 700.0)
    """
    if kind not in KINDS:
        raise InputError(
            f"kind '{kind}' is not criminal or civil",
            field="kind",
            fix="choose criminal or civil",
            parameter="kind",
        )
    years = profile.penalty.lookback_years
    counted = sorted(
        o.day
        for o in history
        if o.kind == kind and _same_person(o.person, person) and o.day < on <= years_after(o.day, years)
    )
    number = len(counted) + 1
    fine_min, fine_max = _schedule(profile, kind, number)
    jail = profile.penalty.criminal_imprisonment_max_days if kind == "criminal" else 0
    assessment = Assessment(person, on, kind, number, fine_min, fine_max, jail, counted)
    if until is not None:
        if until < on:
            raise InputError(
                f"the continuing violation ends ({until}) before it starts ({on})",
                field="until",
                parameter=("until", "on"),
                fix="make its last day on or after its first day",
            )
        unit = profile.penalty.separate_violation_days(kind)
        days = (until - on).days + 1
        separate = 1 + (days - 1) // unit  # the first, and one per whole unit it continued
        escalate = profile.penalty.escalates(kind)
        ranges = [_schedule(profile, kind, number + i if escalate else number) for i in range(separate)]
        assessment.continuing = {
            "from": on.isoformat(),
            "until": until.isoformat(),
            "days": days,
            "separate_violations": separate,
            "reading": _READINGS[(kind, escalate)],
            "total_fine_min": sum(r[0] for r in ranges),
            "total_fine_max": sum(r[1] for r in ranges),
            "total_imprisonment_max_days": jail * separate,
            "last_day_of_each": [
                (on + timedelta(days=min(unit * (i + 1), days) - 1)).isoformat() for i in range(separate)
            ],
        }
    return assessment
