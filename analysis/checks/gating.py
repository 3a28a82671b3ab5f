"""Checks that apply only to a land development activity: their verdict where the site is none."""
from __future__ import annotations

from .base import Check, CheckResult
from .conditions import Condition
from ..findings import NOT_APPLICABLE, Finding
from ..profile import RulesProfile

__all__ = ["QUOTE", "not_regulated"]

# SWPPP C, and the definitions: the chapter's requirements are for "land development
# activities as defined herein" (the definition of "Land development activity").
QUOTE = ('the chapter\'s SWPPP requirements, Conditions A-C and the performance criteria '
         'apply to "land development activities as defined herein" (SWPPP C; Definitions, '
         '"Land development activity")')


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
        findings.append(Finding(rule, NOT_APPLICABLE, profile.section(rule),
                                f"{head}: the site is not a land development activity ({why}); "
                                f"{QUOTE}"))
    return CheckResult(findings, conditions=conditions)
