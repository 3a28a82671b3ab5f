"""Conditions B and C of SWPPP C: which sites need postconstruction controls by their size."""
from __future__ import annotations

from dataclasses import dataclass, field

from .applicability import DisturbedArea
from .base import Check, CheckResult
from ..findings import INFO, NOT_APPLICABLE, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan

__all__ = ["CHECKS", "Condition", "check_condition_b", "check_condition_c"]


@dataclass
class Condition:
    """Whether a condition applies, with every piece of evidence, and whether it was decided."""

    applies: bool
    evidence: list[str] = field(default_factory=list)
    decided: bool = True

    def to_dict(self) -> dict:
        out = {"applies": self.applies, "evidence": list(self.evidence)}
        if not self.decided:
            out["decided"] = False
        return out


def check_condition_b(site: SitePlan, disturbed: DisturbedArea,
                      profile: RulesProfile) -> tuple[Finding, Condition]:
    """Condition B: disturbance of five acres or more (SWPPP C(2))."""
    limit = profile.condition_b.min_disturbed_acres
    applies = profile.at_least(disturbed.acres, limit)
    why = (f"{disturbed.acres:.2f} acres disturbed, "
           f"{'at least' if applies else 'under'} {limit:g} acres")
    return _decided("condition_b", applies, why, site, disturbed, limit, profile)


def check_condition_c(site: SitePlan, disturbed: DisturbedArea,
                      profile: RulesProfile) -> tuple[Finding, Condition]:
    """Condition C: one to five acres, not single-family residential or agricultural (SWPPP C(3))."""
    low = profile.condition_c.min_disturbed_acres
    high = profile.condition_c.max_disturbed_acres
    exempt = profile.condition_c.exempt_land_uses
    land_use = site.project["land_use"]
    in_range = profile.at_least(disturbed.acres, low) and not profile.at_least(disturbed.acres, high)
    applies = in_range and land_use not in exempt
    size = f"{disturbed.acres:.2f} acres disturbed"
    if applies:
        why = f"{size}; land use {land_use}"
    elif in_range:
        why = f"{size}, but land use {land_use} is exempt"
    else:
        why = f"{size}, outside {low:g} to under {high:g} acres"
    return _decided("condition_c", applies, why, site, disturbed, low, profile)


def _decided(rule, applies, why, site, disturbed, limit, profile) -> tuple[Finding, Condition]:
    """The finding and condition for a size-based condition (B or C) that was decided."""
    letter = rule[-1].upper()
    finding = Finding(rule, INFO if applies else NOT_APPLICABLE, profile.section(rule),
                      f"Condition {letter} {'applies' if applies else 'does not apply'}: {why}",
                      value=disturbed.acres, limit=limit, units="acres",
                      features=site.labels("disturbance") if applies else [])
    return finding, Condition(applies, [why] if applies else [])


# --- the review's checks -----------------------------------------------------------------

def _run_b(context, progress) -> CheckResult:
    finding, b = check_condition_b(context.site, context.disturbed, context.profile)
    return CheckResult([finding], conditions={"B": b})


def _run_c(context, progress) -> CheckResult:
    finding, c = check_condition_c(context.site, context.disturbed, context.profile)
    return CheckResult([finding], conditions={"C": c})


CHECKS = (Check("condition_b", regulated=True, rules=("condition_b",),
                reads=("site:disturbance",), run=_run_b, doing="deciding Condition B", weight=0.5),
          Check("condition_c", regulated=True, rules=("condition_c",),
                reads=("site:disturbance", "site:project"), run=_run_c,
                doing="deciding Condition C", weight=0.5))
