"""Disturbance that reaches beyond the site boundary (SWPPP B(2))."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import shapely

from ..findings import PASS, WARN, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import square_feet
from .applicability import DisturbedArea
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = ["CHECKS", "check_disturbance_outside_site"]


def check_disturbance_outside_site(
    site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile
) -> tuple[Finding, float]:
    """One finding, and the square feet of disturbance outside the site boundary."""
    tolerance = profile.measurement.outside_site_tolerance_sq_ft
    boundary = site.layers["site_boundary"]
    site_area = shapely.union_all(np.asarray(boundary.geometry.values, dtype=object))
    outside = shapely.difference(disturbed.geometry, site_area)
    outside_sq_ft = float(square_feet(outside, site.area_crs))  # one geometry: one area
    section = profile.section("disturbance_outside_site")
    if outside_sq_ft <= tolerance:
        return Finding(
            "disturbance_outside_site",
            PASS,
            section,
            "all disturbance lies within the site boundary",
            value=outside_sq_ft,
            limit=tolerance,
            units="sq ft",
        ), outside_sq_ft
    disturbance = site.layers["disturbance"]
    reaching = ~shapely.covered_by(
        np.asarray(disturbance.geometry.values, dtype=object), shapely.buffer(site_area, np.sqrt(tolerance))
    )
    labels = np.asarray(site.labels("disturbance"), dtype=object)[reaching].tolist()
    return Finding(
        "disturbance_outside_site",
        WARN,
        section,
        f"{outside_sq_ft:,.0f} sq ft of disturbance lies outside the site boundary "
        f'({", ".join(labels)}). B(2) asks the site map to show "the total site '
        f'area" and "areas of disturbance"; the chapter says nothing of disturbance '
        f"beyond the site, so this is the tool's warning, not its words: redraw the "
        f"boundary or the disturbance, or note why the work leaves the site",
        value=outside_sq_ft,
        limit=tolerance,
        units="sq ft",
        features=labels,
        geometry=outside,
    ), outside_sq_ft


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    finding, outside_sq_ft = check_disturbance_outside_site(context.site, context.disturbed, context.profile)
    return CheckResult([finding], {"disturbed_outside_site_sq_ft": outside_sq_ft})


CHECKS = (
    Check(
        "disturbance_outside_site",
        regulated=True,
        rules=("disturbance_outside_site",),
        reads=("site:disturbance", "site:site_boundary"),
        run=_run,
        doing="checking disturbance against the site boundary",
        weight=1.0,
    ),
)
