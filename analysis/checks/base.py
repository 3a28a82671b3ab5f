"""The one shape of a check: what it reads and emits (``Check``), and what it returns (``CheckResult``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..findings import Finding

__all__ = ["CheckResult", "Check", "INPUTS"]

# What a check can read besides site-plan layers ("site:<layer>") and reference layers
# ("reference:<layer>"): the review's other inputs, and the conditions decided before it.
INPUTS = ("sheets", "layout_maps", "land_cover", "confirmations", "records", "conditions", "swppp_required")


@dataclass
class CheckResult:
    """What every check returns.

    ``findings`` join the review's; ``measurements`` its measurements; ``conditions`` are the
    conditions the check decided (``"A"``, ``"B"``, ``"C"``: a ``Condition``; and
    ``"swppp_required"``: a bool), which later checks read from the review's context;
    ``extra`` holds what only the report shows: ``"charts"`` (a callable returning
    ``{name: Chart}``, drawn when read), ``"hydrology"``, ``"checklist"``, ``"wetlands"``,
    ``"records"``.
    """

    findings: list[Finding] = field(default_factory=list)
    measurements: dict[str, Any] = field(default_factory=dict)
    conditions: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One check as the review runs it.

    ``name`` names it in ``review(rules=[...])`` (as do the rule ids it emits, ``rules``);
    ``reads`` says what it reads: ``"site:<layer>"``, ``"reference:<layer>"`` and the inputs
    of :data:`INPUTS`; ``needs`` names the checks whose conditions it reads (they run first);
    ``only_with`` names an input without which it does not run (``"records"``);
    ``regulated`` True: it applies only to a land development activity as the chapter defines
    it, so where applicability finds none the review reports each of its rules
    ``not_applicable`` instead of running it; ``weight`` is
    its share of the progress bar, ``doing`` what the bar says meanwhile;
    ``run(context, progress)`` returns a :class:`CheckResult`.
    """

    name: str
    rules: tuple[str, ...]
    reads: tuple[str, ...]
    run: Callable[..., CheckResult]
    doing: str = ""
    weight: float = 1.0
    needs: tuple[str, ...] = ()
    only_with: Optional[str] = None
    regulated: bool = False
