"""What changed since the round compared with (the review JSON's ``round.comparison``,
docs/CONTRACT.md "Review rounds") in one line, as ``swppp review --compare-to N`` prints it and
``swppp:review`` returns it (COMPARISON)."""

from __future__ import annotations

__all__ = ["COMPARED", "comparison_summary"]

# The comparison's lists, in the order they are said, and their words.
COMPARED = (
    ("resolved", "resolved"),
    ("still_open", "still open"),
    ("new", "new"),
    ("changed", "changed"),
)


def comparison_summary(comparison: dict) -> str:
    """``compared with round N: 1 resolved, 2 still open, 1 new, 3 changed``.

    >>> comparison_summary({"round": 1, "resolved": [{}], "still_open": [], "new": [], "changed": []})
    'compared with round 1: 1 resolved, 0 still open, 0 new, 0 changed'
    """
    return f"compared with round {int(comparison['round'])}: " + ", ".join(
        f"{len(comparison.get(key) or [])} {label}" for key, label in COMPARED
    )
