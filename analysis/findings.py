"""A finding: one rule's verdict on one thing, with the section it cites."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

__all__ = [
    "Finding",
    "HasFindings",
    "STATUSES",
    "STATUS_COLOURS",
    "PASS",
    "FAIL",
    "WARN",
    "INFO",
    "NEEDS_REVIEW",
    "DUES",
    "BEFORE_APPROVAL",
    "BEFORE_CONSTRUCTION",
    "DURING_CONSTRUCTION",
    "AFTER_APPROVAL",
    "NOT_APPLICABLE",
    "MAP_RULES",
    "REPORT_ORDER",
    "sorted_findings",
]

PASS, FAIL, WARN, INFO = "pass", "fail", "warn", "info"
NEEDS_REVIEW, NOT_APPLICABLE = "needs_review", "not_applicable"
STATUSES = (FAIL, WARN, NEEDS_REVIEW, PASS, INFO, NOT_APPLICABLE)
# The order findings are shown in (the report, the plugin's list): the worst first. The JSON
# keeps the review's order.
REPORT_ORDER = (FAIL, NEEDS_REVIEW, WARN, PASS, INFO, NOT_APPLICABLE)
# One palette for the report and the findings layer: fail red, warn amber, pass green.
STATUS_COLOURS = {
    FAIL: "#c62828",
    WARN: "#ef8f00",
    NEEDS_REVIEW: "#6a1b9a",
    PASS: "#2e7d32",
    INFO: "#1565c0",
    NOT_APPLICABLE: "#757575",
}

# When the duty a finding judges falls due (the JSON's optional "due"; absent: before approval).
BEFORE_APPROVAL, BEFORE_CONSTRUCTION = "before_approval", "before_construction"
DURING_CONSTRUCTION, AFTER_APPROVAL = "during_construction", "after_approval"
DUES = (BEFORE_APPROVAL, BEFORE_CONSTRUCTION, DURING_CONSTRUCTION, AFTER_APPROVAL)

# The map checks (docs/CHECKS.md): each yields at least one finding on every review.
MAP_RULES = (
    "applicability",
    "site_map_scale",
    "phasing_five_acres",
    "condition_a",
    "condition_b",
    "condition_c",
    "postconstruction_controls",
    "easement_coverage",
    "wetlands",
    "disturbance_outside_site",
)


def sorted_findings(findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``findings`` (dicts) in :data:`REPORT_ORDER`, the worst first: fail, needs review, warn,
    pass, info, not applicable; the review's order within a status."""
    rank = {s: i for i, s in enumerate(REPORT_ORDER)}
    return sorted(findings, key=lambda f: rank.get(str(f.get("status")), len(rank)))


@dataclass
class Finding:
    """One verdict. ``geometry`` (in the review's area CRS) shows where, when it has a place."""

    rule: str
    status: str
    section: str
    message: str
    value: Optional[float] = None
    limit: Optional[float] = None
    units: Optional[str] = None
    features: list[str] = field(default_factory=list)
    geometry: Any = None
    due: Optional[str] = None  # one of DUES; None: before approval (the JSON leaves it out)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, not {self.status!r}")
        if self.due is not None and self.due not in DUES:
            raise ValueError(f"due must be one of {DUES}, not {self.due!r}")

    def to_dict(self) -> dict[str, Any]:
        out = {
            "rule": self.rule,
            "status": self.status,
            "section": self.section,
            "message": self.message,
            "value": self.value,
            "limit": self.limit,
            "units": self.units,
            "features": list(self.features),
        }
        if self.due is not None and self.due != BEFORE_APPROVAL:
            out["due"] = self.due
        return out


class HasFindings:
    """Exit status and counts of a result holding ``findings`` (a review, a records check)."""

    findings: list[Finding]

    @property
    def exit_status(self) -> int:
        """0 when nothing failed, 1 when at least one finding is ``fail`` (docs/CONTRACT.md)."""
        return 1 if any(f.status == FAIL for f in self.findings) else 0

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for f in self.findings:
            out[f.status] = out.get(f.status, 0) + 1
        return out
