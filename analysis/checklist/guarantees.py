"""Performance guarantees (Inspections E): the construction guarantee and the maintenance bond."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Optional

import pandas as pd

from ..dates import parse_date
from ..findings import BEFORE_CONSTRUCTION, INFO, NEEDS_REVIEW, PASS, WARN, Finding
from ..profile import RulesProfile
from ..records.inspections import construction_period
from ..records.penalty import years_after
from ..siteplan.plan import SitePlan
from ..values import feature_labels, has_text

__all__ = ["GuaranteeResult", "check_guarantees", "COVERS"]

LAYER = "guarantee"
# covers -> (rule, profile key of the years, what the chapter calls it, the date it runs from)
COVERS = {
    "construction": (
        "construction_guarantee",
        "construction_years_after_acceptance",
        "construction completion guarantee",
        "final acceptance",
    ),
    "maintenance": (
        "maintenance_bond",
        "maintenance_years_after_completion",
        "maintenance bond",
        "substantial completion",
    ),
}


@dataclass
class GuaranteeResult:
    """Findings, and per ``covers`` whether a guarantee meets the chapter (for the checklist)."""

    findings: list[Finding]
    met: dict[str, bool] = field(default_factory=dict)  # covers -> bool
    evidence: dict[str, str] = field(default_factory=dict)  # covers -> text for the checklist


def check_guarantees(site: SitePlan, profile: RulesProfile) -> GuaranteeResult:
    """``construction_guarantee`` (Inspections E(1)) and ``maintenance_bond`` (E(2)) findings.

    Both are due "prior to construction", not before approval, and E(1)'s guarantee is one the
    Village "may require": every finding carries ``due = before_construction`` and none fails
    an application. Each guarantee of the ``guarantee`` layer gets a finding: ``warn`` where it
    has no amount, an amount under its ``estimated_cost`` (E(2): "shall cover the estimated
    cost of properly maintaining the system for five years"), starts after construction starts,
    or ends before the years the profile asks after the last stabilisation date (which stands
    for final acceptance and substantial completion); ``needs_review`` where a date needed, or
    a maintenance bond's estimate, is missing. A kind of cover with no guarantee is one ``info``
    (E(1): the Village's choice; E(2): not yet due).
    """
    frame = site.layer(LAYER)
    start, end = construction_period(site)
    result = GuaranteeResult([])
    for covers, (rule, key, name, runs_from) in COVERS.items():
        section = profile.section(rule)
        years = getattr(profile.guarantees, key)  # key: a Guarantees field (COVERS)
        rows = (
            []
            if frame is None
            else [
                (label, row)
                for label, (_fid, row) in zip(feature_labels(LAYER, frame, None), frame.iterrows())
                if str(row["covers"]).strip().lower() == covers
            ]
        )
        if not rows:
            result.findings.append(
                Finding(
                    rule,
                    INFO,
                    section,
                    f"the site plan records no {name} (layer guarantee, covers = {covers}): "
                    + _ABSENT[covers].format(years=years, s="s" * (years != 1), runs_from=runs_from),
                    value=0.0,
                    limit=float(years),
                    units="years",
                    due=BEFORE_CONSTRUCTION,
                )
            )
            result.met[covers], result.evidence[covers] = False, f"no {name} recorded"
            continue
        findings = [
            _one(label, row, covers, name, runs_from, years, start, end, rule, section, profile)
            for label, row in rows
        ]
        result.findings += findings
        # Provided for the checklist where recorded without a fault (warn); a length the plan
        # cannot show (needs_review) is the finding's to settle, not a missing item.
        passed = [f for f in findings if f.status in (PASS, NEEDS_REVIEW)]
        result.met[covers] = bool(passed)
        result.evidence[covers] = (passed or findings)[0].message
    return result


# What the chapter says where no guarantee is recorded: neither is owed before approval.
_ABSENT = {
    "construction": (
        'Inspections E(1) says the Village "may require" one, "prior to '
        "construction\": whether to require it is the Village's choice (a "
        "reviewer's decision, not a requirement of the chapter); if required, it "
        "lasts at least {years} year{s} after {runs_from}"
    ),
    "maintenance": (
        'Inspections E(2) requires one "prior to construction", not before '
        'approval (due before construction): it shall "cover the estimated cost of '
        "properly maintaining the system for five years after substantial completion "
        'of construction"'
    ),
}


# The securities in the chapter's words, per cover (the profile's kinds are checked against them).
_KIND_WORDS = {
    "construction": 'E(1): "a cash escrow, or irrevocable letter of credit"',
    "maintenance": 'E(2): "a performance and maintenance bond"',
}


def _one(
    label: str,
    row: pd.Series,
    covers: str,
    name: str,
    runs_from: str,
    years: int,
    start: Optional[date],
    end: Optional[date],
    rule: str,
    section: str,
    profile: RulesProfile,
) -> Finding:
    code = str(row["kind"]).strip().lower()
    kind = code.replace("_", " ")
    amount = row["amount"]
    what = f"{name} {label.split(':', 1)[1]} ({kind}" + (
        f", ${float(amount):,.0f})" if has_text(amount) else ")"
    )
    starts, starts_ok = parse_date(row["starts_on"])
    ends, ends_ok = parse_date(row["ends_on"])
    problems = []
    accepted = (
        profile.guarantees.construction_kinds
        if covers == "construction"
        else profile.guarantees.maintenance_kinds
    )
    if code not in accepted:
        problems.append(
            f"a {kind} is not the security {_KIND_WORDS[covers]} (the profile's "
            f"[guarantees] {covers}_kinds: {', '.join(accepted)})"
        )
    if not has_text(amount) or float(amount) <= 0:
        problems.append("it states no amount")
    estimate = row.get("estimated_cost")
    short_of_estimate = (
        covers == "maintenance"
        and has_text(amount)
        and has_text(estimate)
        and float(amount) < float(estimate)
    )
    if short_of_estimate:
        problems.append(
            f"its amount ${float(amount):,.0f} is less than the estimated cost "
            f"${float(estimate):,.0f}: E(2)'s bond \"shall cover the estimated cost "
            f'of properly maintaining the system for five years"'
        )
    if not starts_ok or not ends_ok:
        bad = "starts_on" if not starts_ok else "ends_on"
        problems.append(f"{bad} {row[bad]!r} is not a date (YYYY-MM-DD)")
    if starts is not None and start is not None and starts > start:
        problems.append(
            f"it starts {starts.isoformat()}, after construction starts "
            f"({start.isoformat()}); it is due prior to construction"
        )
    needed = years_after(end, years) if end is not None else None
    covered = (ends - end).days / 365.25 if ends is not None and end is not None else None
    stands = profile.guarantees.stabilization_stands_for_acceptance
    # Without the reading, short is certain only against the earliest the date can be: final
    # acceptance follows the last stabilisation; substantial completion follows the start.
    floor = end if stands or covers == "construction" else start
    least = years_after(floor, years) if floor is not None else None
    if floor is not None and least is not None and ends is not None and ends < least:
        since = (ends - floor).days / 365.25
        basis = (
            "the last stabilisation date"
            if floor == end and stands
            else "the last stabilisation date, before which it cannot be"
            if floor == end
            else "the start of construction, before which it cannot be"
        )
        problems.append(
            f"it ends {ends.isoformat()}, {since:.1f} years after {runs_from} at "
            f"the earliest ({floor.isoformat()}, {basis}); {section} requires "
            f"{years} year{'s' * (years != 1)}, to {least.isoformat()} at least"
        )
    if problems:
        return Finding(
            rule,
            WARN,
            section,
            f"{what}: " + "; ".join(problems) + " (due prior to construction)",
            value=covered,
            limit=float(years),
            units="years",
            features=[label],
            due=BEFORE_CONSTRUCTION,
        )
    unknown = [
        why
        for missing, why in (
            (
                covers == "maintenance" and has_text(amount) and not has_text(estimate),
                "the plan gives no estimated cost of maintaining the system for five years "
                "(guarantee.estimated_cost), so whether the amount covers it (E(2)) is not known",
            ),
            (ends is None, "it has no end date (ends_on)"),
            (end is None, "no stabilisation date says when construction ends"),
            (
                starts is None,
                "it has no start date (starts_on): whether it is in place prior to construction is not known",
            ),
        )
        if missing
    ]
    # with nothing unknown every date is there (unknown names each missing one)
    if not stands and not unknown and end is not None and ends is not None and needed is not None:
        unknown.append(
            f"the plan does not record {runs_from}; the last stabilisation date "
            f"({end.isoformat()}) is not it (the profile's reading: [guarantees] "
            f"stabilization_stands_for_acceptance = false), so whether a guarantee "
            f"ending {ends.isoformat()} lasts the {years} year{'s' * (years != 1)} is "
            f"not known: confirm it runs to {runs_from} + {years} "
            f"(to {needed.isoformat()} if {runs_from} were that date)"
        )
    if unknown:
        return Finding(
            rule,
            NEEDS_REVIEW,
            section,
            f"{what}: " + "; ".join(unknown) + f" (it must last {years} "
            f"year{'s' * (years != 1)} after {runs_from})",
            value=covered,
            limit=float(years),
            units="years",
            features=[label],
            due=BEFORE_CONSTRUCTION,
        )
    assert ends is not None and end is not None and covered is not None, "unknown names each"
    return Finding(
        rule,
        PASS,
        section,
        f"{what} runs to {ends.isoformat()}, {covered:.1f} years after {runs_from} "
        f"({end.isoformat()}, the last stabilisation date); at least {years} required"
        + (f"; it covers the estimated cost ${float(estimate):,.0f}" if covers == "maintenance" else ""),
        value=covered,
        limit=float(years),
        units="years",
        features=[label],
        due=BEFORE_CONSTRUCTION,
    )
