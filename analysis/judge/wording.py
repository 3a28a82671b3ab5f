"""Every sentence the engine says about a water, a watershed or a wetland: the review's
findings and the screen's rows are worded here, from the typed evidence (:mod:`.evidence`)
and the decision (:mod:`.decide`). What each category kind means for C(1) is
``reference.categories.CATEGORY_WORDS``'.
"""

from __future__ import annotations

from typing import Any, Optional

import pandas as pd

from ..reference.categories import CATEGORY_WORDS
from ..values import has_text
from .decide import ConditionADecision, Reason, Why
from .evidence import (
    CatchmentShare,
    CategoryKind,
    ListedRecord,
    Reach,
    WaterEvidence,
    WatershedEvidence,
    WetlandEvidence,
    text_or_none,
)
from .pollutants import PollutantNames

__all__ = [
    "F_ASSURANCE",
    "permits",
    "wetland_evidence",
    "inside_wetland",
    "inside_adjacent_area",
    "wider_than_search",
    "no_wetland_met",
    "review_lines",
    "review_line",
    "row_lines",
    "concern",
    "unplaced",
    "no_reference",
    "catchment_drains_to_listed",
    "in_catchment",
]

# --- wetlands (SWPPP B(2); F) ----------------------------------------------------------------

# SWPPP F, the chapter's words: what the SWPPP must assure of the permits a wetland may need.
F_ASSURANCE = (
    'SWPPP F: the applicant "shall assure that all other applicable environmental '
    "permits have been or will be acquired for the land development activity prior "
    'to approval of the final stormwater design plan"'
)


def permits(wetland: WetlandEvidence) -> str:
    """What a wetland met says of permits, per what the layer records of its regulation (it
    records whether the wetland is regulated, not by whom): no permit is claimed where the data
    cannot tell, and F's assurance is asked for whatever permits apply."""
    if wetland.regulated:
        said = (
            "the reference records the wetland as regulated (not by whom), so a permit for "
            "this work may apply"
        )
    else:
        said = (
            "the reference does not record the wetland as regulated; a mapped wetland may or "
            "may not be regulated (as a federal wetland, under Clean Water Act section 404, "
            "or by the State), so whether a permit applies is not known from the data"
        )
    return f"{said}; {F_ASSURANCE}"


def wetland_evidence(row: pd.Series, adjacent_area_ft: float) -> WetlandEvidence:
    """A wetland read (a row of the layer, its adjacent area in feet) as evidence."""
    name = row["wetland_id"] if has_text(row["wetland_id"]) else f"#{row.name}"
    return WetlandEvidence(
        str(name),
        text_or_none(row["source"]),
        text_or_none(row["wetland_class"]),
        adjacent_area_ft > 0,
        float(adjacent_area_ft),
    )


def _wetland(wetland: WetlandEvidence) -> str:
    facts = [wetland.source] if wetland.source is not None else []
    if wetland.wetland_class is not None:
        facts.append(f"class {wetland.wetland_class}")
    return f"{wetland.wetland_id} ({', '.join(facts)})" if facts else wetland.wetland_id


def inside_wetland(acres: float, wetland: WetlandEvidence) -> str:
    return f"{acres:.2f} acres of disturbance lie inside wetland {_wetland(wetland)}"


def inside_adjacent_area(acres: float, wetland: WetlandEvidence) -> str:
    return (
        f"{acres:.2f} acres of disturbance lie inside the {wetland.adjacent_area_ft:g}-ft "
        f"adjacent area of regulated wetland {_wetland(wetland)} (outside any wetland)"
    )


def wider_than_search(label: Any, reach_ft: float, search_ft: float) -> str:
    return (
        f"{label} has a {reach_ft:g}-ft adjacent area, wider than the {search_ft:g} ft "
        f"around the site that reference wetlands are read from: a wetland farther away "
        f"may reach the site; raise [reference] search_distance_ft in the profile"
    )


def no_wetland_met(read: int, search_ft: float) -> str:
    return (
        f"no disturbance inside a wetland or a regulated wetland's adjacent area "
        f"({read} reference wetland(s) within {search_ft:g} ft of the site)"
    )


# --- Condition A (SWPPP C(1)) ------------------------------------------------------------------


def _name(value: Optional[str]) -> str:
    return value.strip() if value is not None and has_text(value) else "(no name)"


def _category(record: ListedRecord) -> str:
    return f"category {record.category}" if record.category is not None else "category not recorded"


def in_catchment(how: str, catchment_id: Any, name: Any = None) -> str:
    """Where a route starts: ``how`` the runoff is in the catchment (``the site lies in``,
    ``discharge_point:DP-1 lies in``), the catchment and its name."""
    named = f" ({str(name).strip()})" if has_text(name) else ""
    return f"{how} catchment {str(catchment_id).strip()}{named}"


def unplaced(route: str) -> str:
    """Why a downstream catchment whose shape was not found leaves Condition A open."""
    return (
        f"{route}: its shape was not found next to the catchment it drains out of, so "
        "whether it lies in a TMDL watershed is not known"
    )


def no_reference() -> str:
    return (
        "no reference layers were given: check the receiving waters against the 303(d) "
        "list and TMDL watersheds by hand, or give the reference layers"
    )


CONCERN = "pollutants of concern: "  # the evidence line's start (the comment letter reads it)


def concern(decision: ConditionADecision) -> str:
    return CONCERN + ", ".join(decision.pollutants)


def catchment_drains_to_listed(
    catchment_id: Any, catchment_name: Any, water_id: str, water_name: Optional[str]
) -> str:
    return (
        f"Condition A: catchment {catchment_id} {_name(text_or_none(catchment_name))}, "
        f"where the disturbance lies, drains to {water_id} {_name(water_name)}, which is "
        f"303(d)-listed"
    )


def _review_water(water: WaterEvidence, names: PollutantNames) -> str:
    record = water.record
    assert record is not None
    cycle = (
        f"listing cycle {record.listing_cycle}"
        if record.listing_cycle is not None
        else "listing cycle not recorded"
    )
    listed = "is 303(d)-listed" if record.kind is CategoryKind.LISTED else "is impaired"
    if water.reach is Reach.NAME:
        how = f"matched by name only ({', '.join(water.came_from)}): confirm it receives the discharge"
    else:
        how = f"receives the discharge ({', '.join(water.came_from)})" + (
            f": {water.route}" if water.route else ""
        )
    return (
        f"{record.waterbody_id} {_name(record.name)} {listed} ({cycle}, {_category(record)}) "
        f"for {names.describe(record.pollutants_text) or 'no pollutant'}; it {how}"
    )


def _inside(share: Optional[CatchmentShare]) -> str:
    """How the last catchment of a route lies in a watershed: "inside" (by a real share of
    its area, ``judge.decide.real_share``: the share is not told), or, where it only grazes it, its
    share ("3.8% (0.46 acres) of it inside")."""
    if share is None or share.real:
        return "inside"
    percent = f"{share.percent:.0f}" if share.percent >= 10 else f"{share.percent:.2g}"
    return f"{percent}% ({share.acres:.2f} acres) of it inside"


# Why a downstream catchment's share of a watershed does not decide alone (SWPPP C(1)).
_GRAZES = (
    "less than [condition_a] routed_watershed_min_share_percent and "
    "routed_watershed_min_share_acres: the catchment only grazes the watershed, and"
)
_GRAZED = {
    Why.GRAZED_OUTSIDE: f"{_GRAZES} the catchment(s) its drains_to names lie outside it, so the "
    f'runoff is not "discharging ... to" the watershed',
    Why.GRAZED_UNKNOWN: f"{_GRAZES} where it drains is not known from the reference layers (its "
    f"drains_to names a water, whose place they do not give, or a catchment "
    f"not followed or not found): confirm whether the runoff is "
    f'"discharging ... to" the watershed',
}
_BY_OUTLET = "; the catchment only grazes it, but drains into a catchment that lies in it"


def _review_watershed(shed: WatershedEvidence, names: PollutantNames) -> str:
    dated = f" of {shed.tmdl_date.replace(';', ', ')}" if shed.tmdl_date else ""
    told = f"TMDL {shed.tmdl_id}{dated} for {names.describe(shed.pollutants_text) or 'no pollutant'}"
    if shed.routed:
        outlet = _BY_OUTLET if shed.share is not None and shed.share.outlet else ""
        return (
            f"{told}: {shed.route}, {_inside(shed.share)} TMDL watershed {shed.watershed_id} "
            f"{_name(shed.name)}{outlet}"
        )
    outfalls = ", ".join(shed.outfalls)
    where = (
        f"holds {shed.acres:.2f} acres of the disturbance"
        if shed.acres > 0
        else f"receives the site's runoff at its discharge point(s) {outfalls}"
    )
    if shed.acres > 0 and shed.outfalls:
        where += f" and its discharge point(s) {outfalls}"
    return f"{told}: watershed {shed.watershed_id} {_name(shed.name)} {where}"


def review_line(reason: Reason, names: PollutantNames) -> str:
    """A reason as the review tells it (a finding's evidence)."""
    why = reason.why
    if reason.water is not None and why is not Why.NOT_LISTED:
        line = _review_water(reason.water, names)
        if why is Why.CATEGORY:
            return f"{line}: {CATEGORY_WORDS[reason.record.kind.value]}"
        return line if why is Why.LISTED else f"{line}, but no pollutant is recorded for it"
    if reason.watershed is not None:
        line = _review_watershed(reason.watershed, names)
        if why in _GRAZED:
            return f"{line}: {_GRAZED[why]}"
        if why is Why.SOURCE_NOT_RECORDED:
            return f"{line}, but whether stormwater is a source is not recorded"
        if why is Why.NOT_A_SOURCE:
            return f"{line}, but stormwater is not a source of its impairment"
        if why is Why.ROUTED_NEEDS_REVIEW:
            return (
                f"{line}; stormwater is a source of the impairment, but the watershed is "
                f"met only through the catchments' drains_to: confirm the runoff reaches "
                f"it ([condition_a] routed_tmdl_watershed = needs_review)"
            )
        if reason.watershed.routed:
            return (
                f"{line}; stormwater is a source of the impairment (met only through the "
                f'catchments\' drains_to: the runoff is "discharging ... to" the '
                f"watershed, [condition_a] routed_tmdl_watershed = applies)"
            )
        return f"{line}; stormwater is a source of the impairment"
    return (
        _route_line(reason)
        or {
            Why.RECEIVING_UNKNOWN: "the receiving waters are not known: no discharge point has a "
            "waterbody_id and the disturbance lies in no catchment with "
            "drains_to",
            Why.NO_WATERSHED: "the disturbance lies in no TMDL watershed",
        }[why]
    )


def _route_line(reason: Reason) -> str:
    if reason.why is Why.UNPLACED and reason.route is not None:
        return unplaced(reason.route)
    return reason.route if reason.why is Why.CUT and reason.route is not None else ""


def review_lines(reasons: list[Reason], names: PollutantNames) -> list[str]:
    """``reasons`` as the review tells them: the receiving waters not on the 303(d) list
    (given together, after the others) in one sentence."""
    out: list[str] = []
    unlisted: list[str] = []
    at = 0
    for reason in reasons:
        if reason.why is Why.NOT_LISTED and reason.water is not None:
            if not unlisted:
                at = len(out)
                out.append("")
            unlisted.append(reason.water.water_id)
            out[at] = f"receiving water(s) {', '.join(unlisted)} not on the 303(d) list"
        else:
            out.append(review_line(reason, names))
    return out


def _row_line(reason: Reason, names: PollutantNames) -> Optional[str]:
    why = reason.why
    water = reason.water
    if water is not None:
        if why is Why.NOT_LISTED:
            return f"{water.water_id} is not on the 303(d) list"
        record = reason.record
        how = f" ({water.route})" if water.route else ""
        if why is Why.CATEGORY:
            return (
                f"{record.waterbody_id} is impaired ({_category(record)}) for "
                f"{names.describe(record.pollutants_text) or 'no pollutant'}{how}: "
                f"{CATEGORY_WORDS[record.kind.value]}"
            )
        if why is Why.LISTED:
            return f"{record.waterbody_id} is 303(d)-listed for {names.describe(record.pollutants_text)}{how}"
        return f"{record.waterbody_id} is 303(d)-listed, but no pollutant is recorded for it"
    shed = reason.watershed
    if shed is not None:
        described = names.describe(shed.pollutants_text) or "no pollutant"
        if not shed.routed:
            return {
                Why.SOURCE_NOT_RECORDED: f"TMDL watershed {shed.watershed_id}: whether "
                f"stormwater is a source is not recorded",
                Why.NOT_A_SOURCE: f"TMDL watershed {shed.watershed_id}: stormwater is not a source",
                Why.SOURCE: f"TMDL watershed {shed.watershed_id} ({shed.acres:.2f} acres) "
                f"for {described}; stormwater is a source",
            }[why]
        outlet = _BY_OUTLET if shed.share is not None and shed.share.outlet else ""
        line = (
            f"TMDL watershed {shed.watershed_id} for {described}: {shed.route}, "
            f"{_inside(shed.share)} it{outlet}"
        )
        if why in _GRAZED:
            return f"{line}: {_GRAZED[why]}"
        return {
            Why.SOURCE_NOT_RECORDED: f"{line}, but whether stormwater is a source is not recorded",
            Why.NOT_A_SOURCE: f"{line}, but stormwater is not a source",
            Why.SOURCE: f"{line}; stormwater is a source (met only through the catchments' "
            f"drains_to: [condition_a] routed_tmdl_watershed = applies)",
            Why.ROUTED_NEEDS_REVIEW: f"{line}; stormwater is a source, but the watershed "
            f"is met only through the catchments' drains_to: "
            f"confirm the runoff reaches it ([condition_a] "
            f"routed_tmdl_watershed = needs_review)",
        }[why]
    if why is Why.RECEIVING_UNKNOWN:
        return "the receiving waters are not known: the site lies in no catchment with drains_to"
    return _route_line(reason) or None  # NO_WATERSHED: a row's acres say it


def row_lines(decision: ConditionADecision, names: PollutantNames) -> list[str]:
    """What the screen's row says of the decision (its ``why``)."""
    return [line for line in (_row_line(r, names) for r in decision.why) if line]
