"""Is this a land development activity that needs a SWPPP? (Definitions; SWPPP A)"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import shapely

from ..findings import INFO, NEEDS_REVIEW, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import acres, acres_text, ellipsoidal_acres
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = ["CHECKS", "DisturbedArea", "disturbed_area", "check_applicability"]


@dataclass
class DisturbedArea:
    """The union of all disturbance: ground disturbed in two polygons counts once."""

    geometry: object
    acres: float  # planar, in the area CRS (the measurements' disturbed_acres)
    true_acres: float = float("nan")  # on the ellipsoid: the threshold decisions read it
    method: str = ""  # how true_acres was measured, for the findings

    def __post_init__(self) -> None:
        if self.true_acres != self.true_acres:  # not given: the planar area stands
            self.true_acres = self.acres
            self.method = self.method or "planar"


def disturbed_area(site: SitePlan) -> DisturbedArea:
    frame = site.layers["disturbance"]
    union = shapely.union_all(np.asarray(frame.geometry.values, dtype=object))
    true, method = ellipsoidal_acres(union, site.area_crs)
    return DisturbedArea(
        geometry=union, acres=float(acres(union, site.area_crs)), true_acres=true, method=method
    )


def check_applicability(
    site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile
) -> tuple[Finding, bool]:
    """The ``applicability`` finding and whether a SWPPP is required."""
    limit = profile.applicability.min_disturbed_acres
    plan_limit = profile.applicability.min_common_plan_acres
    common_plan = site.project.get("common_plan_acres")
    true = disturbed.true_acres
    by_area = profile.at_least(true, limit)
    by_plan = common_plan is not None and profile.at_least(common_plan, plan_limit)
    near = profile.near(true, limit) and not by_plan
    required = by_area or by_plan
    size = f"{acres_text(true, limit)} acres disturbed ({disturbed.method})"
    if near:
        why = (
            f"{size}, within the measurement's uncertainty "
            f"({profile.measurement.threshold_tolerance_acres:g} acre) of the {limit:g}-acre "
            "threshold: taken as a land development activity; confirm the disturbed area"
        )
    elif by_area:
        why = f"{size}, at or above the {limit:g}-acre threshold"
    elif by_plan:
        why = (
            f"{size}, but part of a common plan of development "
            f"or sale of {common_plan:.2f} acres (at or above {plan_limit:g} acre)"
        )
    else:
        why = f"{size}, under the {limit:g}-acre threshold, and no common plan of {plan_limit:g} acre or more"
    verdict = "a SWPPP is required" if required else "no SWPPP is required"
    finding = Finding(
        "applicability",
        NEEDS_REVIEW if near else INFO,
        profile.section("applicability"),
        f"{why}: {verdict}",
        value=true,
        limit=limit,
        units="acres",
        features=site.labels("disturbance"),
        geometry=disturbed.geometry,
    )
    return finding, required


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    finding, required = check_applicability(context.site, context.disturbed, context.profile)
    disturbed = context.disturbed
    return CheckResult(
        [finding],
        {
            "disturbed_acres": disturbed.acres,
            "disturbed_acres_ellipsoidal": disturbed.true_acres,
            "threshold_area_method": disturbed.method,
        },
        {"swppp_required": required},
    )


CHECKS = (
    Check(
        "applicability",
        rules=("applicability",),
        reads=("site:disturbance", "site:project"),
        run=_run,
        doing="measuring disturbed area",
        weight=1.0,
    ),
)
