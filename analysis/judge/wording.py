"""Every sentence the engine says about a water, a watershed or a wetland: the review's
findings and the screen's rows are worded here, from the typed evidence (:mod:`.evidence`)
and the decision (:mod:`.decide`). What each category kind means for C(1) is
``reference.categories.CATEGORY_WORDS``'.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..siteplan.plan import has_text
from .evidence import WetlandEvidence, text_or_none

__all__ = ["PERMITS", "wetland_evidence", "inside_wetland", "inside_adjacent_area",
           "wider_than_search", "no_wetland_met"]

# --- wetlands (SWPPP B(2); F) ----------------------------------------------------------------

PERMITS = "other environmental permits are needed before approval (SWPPP F)"


def wetland_evidence(row: pd.Series, adjacent_area_ft: float) -> WetlandEvidence:
    """A wetland read (a row of the layer, its adjacent area in feet) as evidence."""
    name = row["wetland_id"] if has_text(row["wetland_id"]) else f"#{row.name}"
    return WetlandEvidence(str(name), text_or_none(row["source"]),
                           text_or_none(row["wetland_class"]), adjacent_area_ft > 0,
                           float(adjacent_area_ft))


def _wetland(wetland: WetlandEvidence) -> str:
    facts = [wetland.source] if wetland.source is not None else []
    if wetland.wetland_class is not None:
        facts.append(f"class {wetland.wetland_class}")
    return f"{wetland.wetland_id} ({', '.join(facts)})" if facts else wetland.wetland_id


def inside_wetland(acres: float, wetland: WetlandEvidence) -> str:
    return f"{acres:.2f} acres of disturbance lie inside wetland {_wetland(wetland)}"


def inside_adjacent_area(acres: float, wetland: WetlandEvidence) -> str:
    return (f"{acres:.2f} acres of disturbance lie inside the {wetland.adjacent_area_ft:g}-ft "
            f"adjacent area of regulated wetland {_wetland(wetland)} (outside any wetland)")


def wider_than_search(label: Any, reach_ft: float, search_ft: float) -> str:
    return (f"{label} has a {reach_ft:g}-ft adjacent area, wider than the {search_ft:g} ft "
            f"around the site that reference wetlands are read from: a wetland farther away "
            f"may reach the site; raise [reference] search_distance_ft in the profile")


def no_wetland_met(read: int, search_ft: float) -> str:
    return (f"no disturbance inside a wetland or a regulated wetland's adjacent area "
            f"({read} reference wetland(s) within {search_ft:g} ft of the site)")
