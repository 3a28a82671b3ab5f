"""The chapter's duties no check covers (``analysis/data/not_checked.csv``), said in every review."""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path

__all__ = ["NOT_CHECKED", "not_checked"]

NOT_CHECKED = Path(__file__).resolve().parent.parent / "data" / "not_checked.csv"


@cache
def _rows() -> tuple[tuple[str, str, str], ...]:
    with open(NOT_CHECKED, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    return tuple((r["section"], r["duty"], r["reason"]) for r in rows)


def not_checked() -> list[dict]:
    """``[{"section", "duty", "reason"}]``: the review JSON's ``not_checked``, in the chapter's
    order.

    >>> not_checked()[0]["section"]
    'Performance and design criteria B'
    """
    return [{"section": s, "duty": d, "reason": r} for s, d, r in _rows()]
