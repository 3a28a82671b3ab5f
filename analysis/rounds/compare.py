"""What changed between two rounds: the findings of round N resolved, still open or changed in
this one, and the findings new in it (``swppp review --round FILE --compare-to N``).

A finding is open when it asks something of the applicant or the reviewer: ``fail``, ``warn``
or ``needs_review``. The findings are paired by :func:`~analysis.rounds.matching.match_findings`
(the same rule and feature ids, else the same rule and place), and the pairing is stated.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Optional

from ..findings import FAIL, NEEDS_REVIEW, WARN
from .matching import NEW, Held, Match

__all__ = ["OPEN", "compare_rounds"]

OPEN = (FAIL, WARN, NEEDS_REVIEW)


# (before, after) -> the ids of the plan changes at the finding's place, and that in words.
Tie = Callable[[Optional[Held], Optional[Held]], tuple[list, str]]


def _item(
    before: Optional[Held], after: Optional[Held], by: Optional[str], tie: Optional[Tie] = None
) -> dict:
    out = {
        "rule": (after or before).rule,  # type: ignore[union-attr]
        "features": list((after or before).features),  # type: ignore[union-attr]
        "before": _side(before),
        "after": _side(after),
        "matched_by": by,
    }
    if tie is not None:
        out["caused_by"], out["cause"] = tie(before, after)
    return out


def _side(held: Optional[Held]) -> Optional[dict]:
    """One round's side of a compared finding (None where it is absent from that round)."""
    if held is None:
        return None
    return {"number": held.number, "status": held.status, "figure": held.value, "message": held.message}


def compare_rounds(
    number: int,
    current: Sequence[Held],
    before: Sequence[Held],
    matches: Sequence[Match],
    tie: Optional[Tie] = None,
) -> dict:
    """``resolved`` (open in round ``number``; now matched to a finding that is not open, or to
    none), ``still_open`` (open in both), ``new`` (open now, matched to nothing open before),
    ``changed`` (matched, and its status or its figure changed beyond the profile's
    ``[rounds] figure_change_fraction``), each with the figures before and after, and (``tie``)
    the plan changes at its place (``caused_by``, ``cause``)."""
    out: dict = {"round": number, "resolved": [], "still_open": [], "new": [], "changed": []}
    matched = set()
    for now, m in zip(current, matches):
        was = m.previous
        if was is not None:
            matched.add(was.number)
        if was is None or m.by == NEW:
            if now.status in OPEN:
                out["new"].append(_item(None, now, NEW, tie=tie))
            continue
        if was.status in OPEN and now.status in OPEN:
            out["still_open"].append(_item(was, now, m.by, tie=tie))
        elif was.status in OPEN:
            out["resolved"].append(_item(was, now, m.by, tie=tie))
        elif now.status in OPEN:
            out["new"].append(_item(was, now, m.by, tie=tie))
        if m.figure_changed or was.status != now.status:
            out["changed"].append(_item(was, now, m.by, tie=tie))
    for was in before:
        if was.number not in matched and was.status in OPEN:
            out["resolved"].append(_item(was, None, None, tie=tie))
    return out
