"""Conditions B and C of SWPPP C: which sites need postconstruction controls by their size."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd

from ..findings import INFO, NEEDS_REVIEW, NOT_APPLICABLE, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import acres_text
from .applicability import DisturbedArea
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = ["CHECKS", "Condition", "ProjectSize", "project_size", "check_condition_b", "check_condition_c"]


@dataclass
class Condition:
    """Whether a condition applies, with every piece of evidence, and whether it was decided."""

    applies: bool
    evidence: list[str] = field(default_factory=list)
    decided: bool = True

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"applies": self.applies, "evidence": list(self.evidence)}
        if not self.decided:
            out["decided"] = False
        return out


@dataclass(frozen=True)
class ProjectSize:
    """The project's disturbance as Conditions B and C read it: ``low`` to ``high`` acres (one
    number where known), and how it was found."""

    low: float
    high: float
    said: str

    @property
    def known(self) -> bool:
        return self.low == self.high

    def said_for(self, threshold: float) -> ProjectSize:
        """``said`` with the acres written so as not to read as ``threshold``."""
        return ProjectSize(self.low, self.high, self.said.replace("{acres}", acres_text(self.low, threshold)))


def _uncertain(size: ProjectSize, threshold: float, profile: RulesProfile) -> str:
    return (
        f"{size.said}, within the measurement's uncertainty "
        f"({profile.measurement.threshold_tolerance_acres:g} acre) of the {threshold:g}-acre "
        "threshold: confirm the disturbed area"
    )


def project_size(site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile) -> ProjectSize:
    """The site's disturbance, or its larger common plan's (Definitions, "Land development
    activity": it includes the common plan of development or sale), per the profile's reading
    of ``common_plan_acres`` (``[applicability] common_plan_acres_means``)."""
    own = disturbed.true_acres
    plan = site.project.get("common_plan_acres")
    if plan is None or pd.isna(plan) or float(plan) <= own:
        return ProjectSize(own, own, f"{{acres}} acres disturbed ({disturbed.method})")
    plan = float(plan)
    if profile.applicability.common_plan_acres_means == "disturbed":
        return ProjectSize(
            plan,
            plan,
            (
                f"{plan:.2f} acres disturbed by the larger common plan of development or sale this "
                f"site's {own:.2f} acres are part of (a land development activity includes the common "
                "plan: Definitions)"
            ),
        )
    return ProjectSize(
        own,
        plan,
        (
            f"{own:.2f} acres disturbed on this site, part of a common plan of development or sale "
            f"of {plan:.2f} acres in total whose own disturbance the plan does not give (a land "
            "development activity includes the common plan: Definitions)"
        ),
    )


def check_condition_b(
    site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile
) -> tuple[Finding, Condition]:
    """Condition B: disturbance of five acres or more (SWPPP C(2)), the common plan's included."""
    limit = profile.condition_b.min_disturbed_acres
    size = project_size(site, disturbed, profile).said_for(limit)
    low, high = (profile.at_least(size.low, limit), profile.at_least(size.high, limit))
    if size.known and profile.near(size.low, limit):
        return _undecided("condition_b", _uncertain(size, limit, profile), site, size, limit, profile)
    if low != high:
        why = (
            f"{size.said}: whether the project disturbs {limit:g} acres or more is not known; "
            "give the common plan's disturbed acres"
        )
        return _undecided("condition_b", why, site, size, limit, profile)
    why = f"{size.said}, {'at least' if low else 'under'} {limit:g} acres"
    return _decided("condition_b", low, why, site, size, limit, profile)


def check_condition_c(
    site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile
) -> tuple[Finding, Condition]:
    """Condition C: one to five acres, not single-family residential or agricultural (SWPPP C(3)),
    the common plan's disturbance included."""
    low = profile.condition_c.min_disturbed_acres
    high = profile.condition_c.max_disturbed_acres
    exempt = profile.condition_c.exempt_land_uses
    land_use = site.project["land_use"]
    size = project_size(site, disturbed, profile)
    near = next((t for t in (low, high) if size.known and profile.near(size.low, t)), None)
    size = size.said_for(near if near is not None else low)

    def in_range(acres: float) -> bool:
        return profile.at_least(acres, low) and not profile.at_least(acres, high)

    ends = (in_range(size.low), in_range(size.high))
    straddles = ends[0] != ends[1] or (
        not any(ends) and not profile.at_least(size.low, low) and profile.at_least(size.high, high)
    )
    if land_use in exempt:
        why = f"{size.said}, but land use {land_use} is exempt"
        return _decided("condition_c", False, why, site, size, low, profile)
    if near is not None:
        return _undecided("condition_c", _uncertain(size, near, profile), site, size, low, profile)
    if straddles:
        why = (
            f"{size.said}: whether the project disturbs between {low:g} and {high:g} acres is "
            "not known; give the common plan's disturbed acres"
        )
        return _undecided("condition_c", why, site, size, low, profile)
    applies = ends[0]
    why = (
        f"{size.said}; land use {land_use}"
        if applies
        else f"{size.said}, outside {low:g} to under {high:g} acres"
    )
    return _decided("condition_c", applies, why, site, size, low, profile)


def _decided(
    rule: str, applies: bool, why: str, site: SitePlan, size: ProjectSize, limit: float, profile: RulesProfile
) -> tuple[Finding, Condition]:
    """The finding and condition for a size-based condition (B or C) that was decided."""
    letter = rule[-1].upper()
    finding = Finding(
        rule,
        INFO if applies else NOT_APPLICABLE,
        profile.section(rule),
        f"Condition {letter} {'applies' if applies else 'does not apply'}: {why}",
        value=size.high,
        limit=limit,
        units="acres",
        features=site.labels("disturbance") if applies else [],
    )
    return finding, Condition(applies, [why] if applies else [])


def _undecided(
    rule: str, why: str, site: SitePlan, size: ProjectSize, limit: float, profile: RulesProfile
) -> tuple[Finding, Condition]:
    """The finding and condition for a size-based condition the plan leaves open."""
    letter = rule[-1].upper()
    finding = Finding(
        rule,
        NEEDS_REVIEW,
        profile.section(rule),
        f"Condition {letter} not decided: {why}",
        value=size.low,
        limit=limit,
        units="acres",
        features=site.labels("disturbance"),
    )
    return finding, Condition(False, [why], decided=False)


# --- the review's checks -----------------------------------------------------------------


def _run_b(context: ReviewContext, progress: Progress) -> CheckResult:
    finding, b = check_condition_b(context.site, context.disturbed, context.profile)
    return CheckResult([finding], conditions={"B": b})


def _run_c(context: ReviewContext, progress: Progress) -> CheckResult:
    finding, c = check_condition_c(context.site, context.disturbed, context.profile)
    return CheckResult([finding], conditions={"C": c})


CHECKS = (
    Check(
        "condition_b",
        regulated=True,
        rules=("condition_b",),
        reads=("site:disturbance",),
        run=_run_b,
        doing="deciding Condition B",
        weight=0.5,
    ),
    Check(
        "condition_c",
        regulated=True,
        rules=("condition_c",),
        reads=("site:disturbance", "site:project"),
        run=_run_c,
        doing="deciding Condition C",
        weight=0.5,
    ),
)
