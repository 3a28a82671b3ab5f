"""Is this a land development activity that needs a SWPPP? (Definitions; SWPPP A)"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import shapely

from ..units import acres
from .base import Check, CheckResult
from ..findings import INFO, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan

__all__ = ["CHECKS", "DisturbedArea", "disturbed_area", "check_applicability"]


@dataclass
class DisturbedArea:
    """The union of all disturbance: ground disturbed in two polygons counts once."""

    geometry: object
    acres: float


def disturbed_area(site: SitePlan) -> DisturbedArea:
    frame = site.layers["disturbance"]
    union = shapely.union_all(np.asarray(frame.geometry.values, dtype=object))
    return DisturbedArea(geometry=union, acres=acres(union, site.area_crs))


def check_applicability(site: SitePlan, disturbed: DisturbedArea,
                        profile: RulesProfile) -> tuple[Finding, bool]:
    """The ``applicability`` finding and whether a SWPPP is required."""
    limit = profile.applicability.min_disturbed_acres
    plan_limit = profile.applicability.min_common_plan_acres
    common_plan = site.project.get("common_plan_acres")
    by_area = profile.at_least(disturbed.acres, limit)
    by_plan = common_plan is not None and profile.at_least(common_plan, plan_limit)
    required = by_area or by_plan
    if by_area:
        why = f"{disturbed.acres:.2f} acres disturbed, at or above the {limit:g}-acre threshold"
    elif by_plan:
        why = (f"{disturbed.acres:.2f} acres disturbed, but part of a common plan of development "
               f"or sale of {common_plan:.2f} acres (at or above {plan_limit:g} acre)")
    else:
        why = (f"{disturbed.acres:.2f} acres disturbed, under the {limit:g}-acre threshold, and "
               f"no common plan of {plan_limit:g} acre or more")
    verdict = "a SWPPP is required" if required else "no SWPPP is required"
    finding = Finding("applicability", INFO, profile.section("applicability"),
                      f"{why}: {verdict}", value=disturbed.acres, limit=limit, units="acres",
                      features=site.labels("disturbance"), geometry=disturbed.geometry)
    return finding, required


# --- the review's check ------------------------------------------------------------------

def _run(context, progress) -> CheckResult:
    finding, required = check_applicability(context.site, context.disturbed, context.profile)
    return CheckResult([finding], {"disturbed_acres": context.disturbed.acres},
                       {"swppp_required": required})


CHECKS = (Check("applicability", rules=("applicability",),
                reads=("site:disturbance", "site:project"), run=_run,
                doing="measuring disturbed area", weight=1.0),)
