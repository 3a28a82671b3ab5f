"""Checks that apply only to a land development activity: their verdict where the site is none."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Optional

from ..findings import NEEDS_REVIEW, NOT_APPLICABLE, Finding
from ..profile import RulesProfile
from ..reference.read import LayersPresent, Reference
from .base import Check, CheckResult
from .conditions import Condition

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = ["QUOTE", "not_regulated", "missing_reference_layers", "on_layers_present", "without_layers"]

# SWPPP C, and the definitions: the chapter's requirements are for "land development
# activities as defined herein" (the definition of "Land development activity").
QUOTE = (
    "the chapter's SWPPP requirements, Conditions A-C and the performance criteria "
    'apply to "land development activities as defined herein" (SWPPP C; Definitions, '
    '"Land development activity")'
)


def not_regulated(check: Check, why: str, profile: RulesProfile) -> CheckResult:
    """``check``'s result where the site is not a land development activity: each of its rules
    ``not_applicable``, quoting the chapter, and the conditions it decides as not applying.

    ``why`` is the applicability finding's reason (the acres and common plan measured).
    """
    findings = []
    conditions = {}
    for rule in check.rules:
        if rule.startswith("condition_"):
            letter = rule[-1].upper()
            head = f"Condition {letter} does not apply"
            conditions[letter] = Condition(False, [])
        else:
            head = f"{profile.title(rule)}: not applicable"
        findings.append(
            Finding(
                rule,
                NOT_APPLICABLE,
                profile.section(rule),
                f"{head}: the site is not a land development activity ({why}); {QUOTE}",
            )
        )
    return CheckResult(findings, conditions=conditions)


def missing_reference_layers(check: Check, reference: Optional[Reference]) -> list[str]:
    """The reference layers ``check`` reads (its ``reads``: ``reference:<layer>``) that the
    given reference lacks; none without a reference (each check says that itself)."""
    if reference is None:
        return []
    return [
        r.split(":", 1)[1]
        for r in check.reads
        if r.startswith("reference:") and not reference.has(r.split(":", 1)[1])
    ]


def without_layers(
    check: Check, missing: list[str], reference: Reference, profile: RulesProfile
) -> CheckResult:
    """``check``'s result where the reference lacks layers it reads: each of its rules
    ``needs_review`` naming them and the import that adds each (the review uses what the store
    has; the other checks run), and the conditions it decides left not decided."""
    lacks = reference.lacks(missing)
    adds = "; ".join(reference.adds(m) for m in missing)
    findings, conditions = [], {}
    for rule in check.rules:
        head = (
            f"Condition {rule[-1].upper()} not decided"
            if rule.startswith("condition_")
            else f"{profile.title(rule)}: not checked"
        )
        if rule.startswith("condition_"):
            conditions[rule[-1].upper()] = Condition(False, [lacks], decided=False)
        findings.append(
            Finding(
                rule,
                NEEDS_REVIEW,
                profile.section(rule),
                f"{head}: {lacks}; decide it by hand, or add the layer ({adds}) and review again",
            )
        )
    return CheckResult(findings, conditions=conditions)


def on_layers_present(
    check: Check, missing: list[str], context: ReviewContext, progress: Progress
) -> CheckResult:
    """``check``'s result where the reference lacks layers it reads (issue 34, item 4).

    A check that decides conditions runs on the layers present, the missing ones read as
    empty: where every condition it decides applies on them, it applies, since a layer added
    could only add evidence (any one trigger applies Condition A: :func:`analysis.judge.
    decide.decide_condition_a`); its first finding says what was not read. Otherwise, and for
    every other check, :func:`without_layers`."""
    reference = context.reference
    assert reference is not None  # (missing: only with a reference)
    if any(rule.startswith("condition_") for rule in check.rules):
        result = check.run(replace(context, reference=LayersPresent(reference, missing)), progress)  # type: ignore[arg-type]
        if result.conditions and all(c.applies and c.decided for c in result.conditions.values()):
            adds = "; ".join(reference.adds(m) for m in missing)
            note = (
                f"decided on the layers the reference has: {reference.lacks(missing)}, which "
                f"could add waters or pollutants, not undo it; add it ({adds}) and review again"
            )
            first = result.findings[0]
            result.findings[0] = replace(first, message=f"{first.message}; {note}")
            return result
    return without_layers(check, missing, reference, context.profile)
