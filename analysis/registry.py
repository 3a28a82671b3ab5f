"""Every check the review runs, in its order: where each rule lives and what it reads.

It sits above the three packages whose checks it lists (``checks``, ``checklist``, ``records``;
each check a :class:`~analysis.checks.base.Check`), so that ``checks`` imports neither of the
other two.

Each entry is a module's ``CHECKS`` (:class:`~analysis.checks.base.Check`): its name, the rule
ids it emits, what it reads, the checks it needs first, and its share of the progress bar.
The order is the review's: the conditions before the checks that read them, and the findings
come out in it (then sorted by ``findings.MAP_RULES``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Optional

from .checklist import contents
from .checks import (
    applicability,
    condition_a,
    conditions,
    easements,
    hydrology,
    input_geometry,
    map_scale,
    phasing,
    postconstruction,
    site_boundary,
    wetlands,
)
from .checks.base import Check
from .errors import InputError
from .records import inspections

__all__ = ["REGISTRY", "select"]

REGISTRY: tuple[Check, ...] = (
    *applicability.CHECKS,  # applicability: disturbed acres, whether a SWPPP is required
    *conditions.CHECKS,  # condition_b, condition_c
    *site_boundary.CHECKS,  # disturbance_outside_site
    *input_geometry.CHECKS,  # input_geometry: geometries repaired on loading
    *phasing.CHECKS,  # phasing_five_acres, phasing_sequence
    *map_scale.CHECKS,  # site_map_scale: plan sheets, stated scales, print layouts
    *wetlands.CHECKS,  # wetlands (reference)
    *condition_a.CHECKS,  # condition_a (reference)
    *postconstruction.CHECKS,  # postconstruction_controls (Conditions A, B, C)
    *easements.CHECKS,  # easement_coverage
    *hydrology.CHECKS,  # hydrology_pre_post, water_quality_volume (Conditions A, B, C)
    *contents.CHECKS,  # checklist: swppp_contents and the four it gathers
    *inspections.CHECKS,  # records: inspection_frequency, inspection_notice, sediment_cleanout
)


def select(rules: Optional[Iterable[str]] = None) -> list[tuple[Check, bool]]:
    """The checks to run for ``rules`` (check names or rule ids; None: all), in the review's
    order, with the checks they need; each as (check, asked): ``asked`` False for a check run
    only because another needs it (its findings are left out)."""
    if rules is None:
        return [(check, True) for check in REGISTRY]
    by_name = {check.name: check for check in REGISTRY}
    by_rule = {rule: check for check in REGISTRY for rule in check.rules}
    asked = set()
    for rule in rules:
        check = by_name.get(rule) or by_rule.get(rule)
        if check is None:
            raise InputError(
                f"no check emits the rule '{rule}'",
                fix="name one of: " + ", ".join(sorted(set(by_name) | set(by_rule))),
            )
        asked.add(check.name)
    wanted, stack = set(asked), list(asked)
    while stack:
        for need in by_name[stack.pop()].needs:
            if need not in wanted:
                wanted.add(need)
                stack.append(need)
    return [(check, check.name in asked) for check in REGISTRY if check.name in wanted]
