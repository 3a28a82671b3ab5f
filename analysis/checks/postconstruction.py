"""Where Condition A, B or C applies, the plan shows postconstruction SMPs and easements."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..findings import FAIL, NEEDS_REVIEW, NOT_APPLICABLE, PASS, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from .base import Check, CheckResult
from .conditions import Condition

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from ..progress import Progress
    from .context import ReviewContext

__all__ = ["CHECKS", "check_postconstruction_controls"]

RULE = "postconstruction_controls"
LETTERS = ("A", "B", "C")


def check_postconstruction_controls(
    site: SitePlan, conditions: Mapping[str, Condition], profile: RulesProfile
) -> Finding:
    """The ``postconstruction_controls`` finding.

    Parameters
    ----------
    site : the loaded site plan
    conditions : ``{"A": Condition, "B": ..., "C": ...}``; a condition with ``decided=False``
        is unknown, not "does not apply"
    profile : the rules profile (the rule's section)

    Returns
    -------
    Finding
        ``pass`` where a condition applies and the plan shows at least one SMP and at least one
        maintenance easement, ``fail`` where it applies and either is missing,
        ``not_applicable`` where no condition applies, and ``needs_review`` where none applies
        but one is undecided (the requirement then rests on it).
    """
    section = profile.section(RULE)
    applying = [k for k in LETTERS if k in conditions and conditions[k].decided and conditions[k].applies]
    undecided = [k for k in LETTERS if k in conditions and not conditions[k].decided]
    smp_count, easement_count = _count(site, "smp"), _count(site, "easement")
    shows = (
        f"the plan shows {smp_count} SMP{'s' * (smp_count != 1)} and {easement_count} "
        f"maintenance easement{'s' * (easement_count != 1)}"
    )
    smp_labels = site.labels("smp") if smp_count else []
    if applying:
        which = _named(applying)
        verb = "applies" if len(applying) == 1 else "apply"
        missing = [
            what
            for what, count in (("SMP", smp_count), ("maintenance easement", easement_count))
            if not count
        ]
        if not missing:
            return Finding(
                RULE,
                PASS,
                section,
                f"{which} {verb}, and {shows}",
                value=float(smp_count),
                limit=1.0,
                units="SMPs",
                features=smp_labels,
            )
        return Finding(
            RULE,
            FAIL,
            section,
            f"{which} {verb}, so the plan must show postconstruction SMPs (SWPPP "
            f"D(2)-(3)) and their maintenance easements (D(8)); it shows no "
            f"{' and no '.join(missing)}",
            value=float(smp_count),
            limit=1.0,
            units="SMPs",
            features=smp_labels,
        )
    if undecided:
        evidence = "; ".join(e for k in undecided for e in conditions[k].evidence)
        return Finding(
            RULE,
            NEEDS_REVIEW,
            section,
            f"{_named(undecided)} {'is' if len(undecided) == 1 else 'are'} not decided"
            f"{f' ({evidence})' if evidence else ''}, and no other condition applies: "
            f"whether postconstruction controls are required rests on it; {shows}",
            value=float(smp_count),
            units="SMPs",
            features=smp_labels,
        )
    return Finding(
        RULE,
        NOT_APPLICABLE,
        section,
        f"no condition (A, B or C) applies, so postconstruction controls are not required; {shows}",
        value=float(smp_count),
        units="SMPs",
    )


def _count(site: SitePlan, layer: str) -> int:
    frame = site.layer(layer)
    return 0 if frame is None else len(frame)


def _named(letters: Sequence[str]) -> str:
    return ("Condition " if len(letters) == 1 else "Conditions ") + " and ".join(letters)


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    return CheckResult(
        [check_postconstruction_controls(context.site, context.decided("A", "B", "C"), context.profile)]
    )


CHECKS = (
    Check(
        "postconstruction_controls",
        regulated=True,
        rules=("postconstruction_controls",),
        reads=("site:smp", "site:easement", "conditions"),
        run=_run,
        needs=("condition_a", "condition_b", "condition_c"),
        doing="checking postconstruction controls",
        weight=0.5,
    ),
)
