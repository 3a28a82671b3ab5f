"""``input_geometry``: each invalid geometry of the site plan, repaired on loading, as a warning."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..findings import WARN, Finding
from ..profile import RulesProfile
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from ..siteplan.plan import Repair
    from .context import ReviewContext

__all__ = ["CHECKS", "repair_finding"]


def repair_finding(repair: Repair, profile: RulesProfile) -> Finding:
    """The ``input_geometry`` warning of one repaired feature (``SitePlan.repairs``)."""
    return Finding(
        "input_geometry",
        WARN,
        profile.section("input_geometry"),
        f"{repair.feature} had an invalid geometry ({repair.reason}); it was repaired "
        f"with make_valid and reviewed as repaired: correct it in the plan",
        features=[repair.feature],
        geometry=repair.geometry,
    )


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    return CheckResult([repair_finding(r, context.profile) for r in context.site.repairs])


CHECKS = (
    Check(
        "input_geometry",
        rules=("input_geometry",),
        reads=("site:*",),
        run=_run,
        doing="listing the geometries repaired on loading",
        weight=0.1,
    ),
)
