"""Condition A (SWPPP C(1)) decided from a site's evidence: the one decision of the review and
the screen.

C(1) applies where the site's runoff discharges to a water on the 303(d) list for a pollutant
(its category read by ``reference.categories.category_kind``: a water with no category, or
impaired with a TMDL (4a), leaves it not decided; 4b, 4c and others do not count), or to a TMDL
watershed whose stormwater is a source of the impairment (a watershed met only downstream
counts per ``[condition_a] routed_tmdl_watershed``, where the catchment lies in it: by a real
share of its area, :func:`lies_in`, or draining into a catchment that does). It is not decided
where a listed water records no pollutant, a watershed does not record whether stormwater is a
source, a downstream catchment's shape was not found, a downstream catchment only grazes a
watershed and where it drains is not known, or no water is known to receive the runoff.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Optional

from ..profile import RulesProfile
from ..reference.categories import UNDECIDED
from .evidence import (
    CatchmentShare,
    CategoryKind,
    ConditionAEvidence,
    ListedRecord,
    Reach,
    WaterEvidence,
    WatershedEvidence,
)

__all__ = [
    "Verdict",
    "Weight",
    "Why",
    "Reason",
    "ConditionADecision",
    "decide_condition_a",
    "UNDECIDED_KINDS",
    "real_share",
    "lies_in",
]

# The category kinds that cannot decide Condition A alone: a person confirms the category.
UNDECIDED_KINDS = tuple(CategoryKind(kind) for kind in UNDECIDED)


class Verdict(Enum):
    APPLIES = "applies"
    NOT_DECIDED = "not decided"
    DOES_NOT_APPLY = "does not apply"


class Weight(Enum):
    """What a reason does to the decision."""

    TRIGGER = "trigger"  # Condition A applies by it
    UNDECIDED = "undecided"  # it leaves Condition A open (a person decides)
    NOTE = "note"  # told, decides nothing


class Why(Enum):
    LISTED = "a receiving water is 303(d)-listed for a pollutant"
    NO_POLLUTANT = "a listed water records no pollutant"
    CATEGORY = "a water's category is not 303(d)-listed"
    NOT_LISTED = "a receiving water is not on the 303(d) list"
    SOURCE = "stormwater is a source of a TMDL watershed's impairment"
    SOURCE_NOT_RECORDED = "whether stormwater is a source is not recorded"
    NOT_A_SOURCE = "stormwater is not a source"
    ROUTED_NEEDS_REVIEW = "a TMDL watershed is met only downstream"
    GRAZED_OUTSIDE = "a downstream catchment grazes a TMDL watershed and drains outside it"
    GRAZED_UNKNOWN = "a downstream catchment grazes a TMDL watershed; where it drains is unknown"
    UNPLACED = "a downstream catchment's shape was not found"
    CUT = "the route downstream was cut"
    RECEIVING_UNKNOWN = "no water is known to receive the runoff"
    NO_WATERSHED = "the site lies in no TMDL watershed"


@dataclass(frozen=True)
class Reason:
    """One piece of evidence as it weighs in the decision."""

    weight: Weight
    why: Why
    water: Optional[WaterEvidence] = None
    watershed: Optional[WatershedEvidence] = None
    route: Optional[str] = None  # UNPLACED: the route; CUT: the note

    @property
    def record(self) -> ListedRecord:
        """The 303(d) record of a water reason (one with a record)."""
        assert self.water is not None and self.water.record is not None
        return self.water.record


@dataclass(frozen=True)
class ConditionADecision:
    verdict: Verdict
    reasons: tuple[Reason, ...]
    pollutants: tuple[str, ...]  # of concern where it applies: the sediment family first
    by_name_only: bool  # a water matched by name only is among the triggers

    def weighed(self, weight: Weight) -> list[Reason]:
        return [r for r in self.reasons if r.weight is weight]

    @property
    def triggers(self) -> list[Reason]:
        return self.weighed(Weight.TRIGGER)

    @property
    def why(self) -> list[Reason]:
        """What the decision rests on: its triggers where it applies, else what leaves it open
        and then the notes."""
        if self.verdict is Verdict.APPLIES:
            return self.triggers
        return self.weighed(Weight.UNDECIDED) + self.weighed(Weight.NOTE)


def real_share(acres: float, percent: float, profile: RulesProfile) -> bool:
    """A downstream catchment's share of a TMDL watershed is a real one: ``[condition_a]
    routed_watershed_min_share_percent`` of its area or ``routed_watershed_min_share_acres``."""
    return (
        percent >= profile.condition_a.routed_watershed_min_share_percent
        or acres >= profile.condition_a.routed_watershed_min_share_acres
    )


def lies_in(share: CatchmentShare) -> Optional[bool]:
    """Whether the route's water goes into the watershed through this catchment (SWPPP C(1):
    "discharging ... to ... a TMDL designated watershed"): by a real share of its area, or by
    its outlet (the catchment it drains into lies in the watershed); False where it only
    grazes the watershed and drains outside it; None where it grazes it and where it drains
    is not known."""
    if share.real or share.outlet:
        return True
    return None if share.outlet is None else False


def decide_condition_a(
    evidence: ConditionAEvidence, profile: RulesProfile, sediment: str
) -> ConditionADecision:
    """Condition A for one site, every reason in the order of its evidence (waters,
    watersheds overlapped, watersheds met downstream, the route's gaps)."""
    reasons: list[Reason] = []
    concern = [sediment]
    by_name_only = False
    for water in evidence.waters:
        record = water.record
        if record is None:
            reasons.append(Reason(Weight.NOTE, Why.NOT_LISTED, water))
        elif record.kind is not CategoryKind.LISTED:
            reasons.append(
                Reason(
                    Weight.UNDECIDED if record.kind in UNDECIDED_KINDS else Weight.NOTE, Why.CATEGORY, water
                )
            )
        elif record.pollutants:
            reasons.append(Reason(Weight.TRIGGER, Why.LISTED, water))
            concern += record.pollutants
            by_name_only = by_name_only or water.reach is Reach.NAME
        else:
            reasons.append(Reason(Weight.UNDECIDED, Why.NO_POLLUTANT, water))
    # a watershed the site overlaps is told as overlapped, not again as met downstream
    met = {shed.watershed_id for shed in evidence.watersheds}
    applies = profile.condition_a.routed_tmdl_watershed == "applies"
    for shed in evidence.watersheds + tuple(
        s for s in evidence.routed_watersheds if s.watershed_id not in met
    ):
        inside = True if shed.share is None else lies_in(shed.share)
        if inside is False:
            reasons.append(Reason(Weight.NOTE, Why.GRAZED_OUTSIDE, watershed=shed))
        elif shed.stormwater_source is None:
            reasons.append(Reason(Weight.UNDECIDED, Why.SOURCE_NOT_RECORDED, watershed=shed))
        elif not shed.stormwater_source:
            reasons.append(Reason(Weight.NOTE, Why.NOT_A_SOURCE, watershed=shed))
        elif inside is None:
            reasons.append(Reason(Weight.UNDECIDED, Why.GRAZED_UNKNOWN, watershed=shed))
        elif shed.routed and not applies:
            reasons.append(Reason(Weight.UNDECIDED, Why.ROUTED_NEEDS_REVIEW, watershed=shed))
        else:
            reasons.append(Reason(Weight.TRIGGER, Why.SOURCE, watershed=shed))
            concern += shed.pollutants
    reasons += [Reason(Weight.UNDECIDED, Why.UNPLACED, route=route) for route in evidence.unplaced]
    reasons += [Reason(Weight.NOTE, Why.CUT, route=note) for note in evidence.cut]
    if not evidence.receiving_known:
        reasons.append(Reason(Weight.UNDECIDED, Why.RECEIVING_UNKNOWN))
    weights = {r.weight for r in reasons}
    verdict = (
        Verdict.APPLIES
        if Weight.TRIGGER in weights
        else Verdict.NOT_DECIDED
        if Weight.UNDECIDED in weights
        else Verdict.DOES_NOT_APPLY
    )
    if verdict is Verdict.DOES_NOT_APPLY and not evidence.watersheds:
        reasons.append(Reason(Weight.NOTE, Why.NO_WATERSHED))
    return ConditionADecision(verdict, tuple(reasons), tuple(dict.fromkeys(concern)), by_name_only)
