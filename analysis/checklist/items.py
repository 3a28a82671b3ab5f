"""The checklist's items: what the chapter requires a SWPPP to contain, as data (checklist.csv)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from pathlib import Path

__all__ = ["ChecklistItem", "checklist_items", "item_ids", "site_map_contents"]

DATA = Path(__file__).resolve().parent.parent / "data" / "checklist.csv"
CONTENTS = DATA.parent / "site_map_contents.csv"
_APPLIES = ("always", "conditions", "facility", "required_facility", "on_request", "village_choice")
_DUE = ("approval", "before_construction", "during_construction", "completion")


@dataclass(frozen=True)
class ChecklistItem:
    """One item of the checklist, as ``analysis/data/checklist.csv`` holds it."""

    item: str
    due: str  # approval | before_construction | during_construction | completion
    applies: str  # always | conditions | facility | required_facility | on_request | village_choice
    evidence: str  # the rule that finds it in the site plan (see the CSV's header)
    text: str  # the chapter's words


@cache
def checklist_items() -> tuple[ChecklistItem, ...]:
    """The checklist's items, in the chapter's order."""
    with open(DATA, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(line for line in handle if not line.startswith("#")))
    items = tuple(ChecklistItem(**row) for row in rows)
    assert all(i.applies in _APPLIES and i.due in _DUE for i in items), DATA
    return items


@cache
def site_map_contents() -> tuple[dict[str, str], ...]:
    """SWPPP B(2)'s site-map contents: ``content``, ``evidence`` rule and the chapter's ``text``."""
    with open(CONTENTS, encoding="utf-8", newline="") as handle:
        return tuple(csv.DictReader(line for line in handle if not line.startswith("#")))


def item_ids() -> list[str]:
    """The items' ids, in the chapter's order.

    >>> item_ids()[:2], item_ids()[-1], len(item_ids())
    (['B(1)', 'B(2)'], 'Inspections E(2)', 35)
    """
    return [i.item for i in checklist_items()]
