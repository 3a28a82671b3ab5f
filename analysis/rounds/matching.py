"""Which finding of the round before is this one: matched by rule and feature ids, else by rule
and place, else new; and whether its figure changed enough to be flagged.

Matching is one to one (a finding of the round before is matched at most once), in the
review's order. The tolerances are the profile's ``[rounds]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

import shapely

from ..profile import RulesProfile
from ..units import crs_units
from .decisions import finding_key

__all__ = ["Held", "Match", "match_findings", "BY_FEATURES", "BY_PLACE", "NEW", "figure_changed"]

BY_FEATURES, BY_PLACE, NEW = "rule_and_features", "rule_and_place", "new"


@dataclass(frozen=True)
class Held:
    """A finding as a round holds it: its number, rule, features, figure and place."""

    number: int
    rule: str
    features: tuple[str, ...]
    value: Optional[float]
    geometry: Any = None  # shapely, in the round's area CRS; None: no place
    status: str = ""
    message: str = ""


@dataclass(frozen=True)
class Match:
    by: str
    previous: Optional[Held]
    figure_changed: bool

    def to_dict(self, previous_round: int, value: Optional[float]) -> dict:
        return {
            "by": self.by,
            "round": previous_round if self.previous else None,
            "number": self.previous.number if self.previous else None,
            "figure_before": self.previous.value if self.previous else None,
            "figure_after": value,
            "figure_changed": self.figure_changed,
        }


def figure_changed(before: Optional[float], after: Optional[float], fraction: float) -> bool:
    """True where the figure appeared, went, or moved by more than ``fraction`` of ``before``
    (any move from 0)."""
    if before is None and after is None:
        return False
    if before is None or after is None:
        return True
    return abs(after - before) > fraction * abs(before)


def _same_place(a: Any, b: Any, tolerance: float) -> bool:
    if a is None or b is None or shapely.is_empty(a) or shapely.is_empty(b):
        return False
    if a.intersects(b) and (a.intersection(b).area > 0 or a.geom_type == b.geom_type == "Point"):
        return True
    return bool(a.centroid.distance(b.centroid) <= tolerance)


def match_findings(
    current: Sequence[Held],
    previous: Sequence[Held],
    profile: RulesProfile,
    area_crs: str,
    previous_area_crs: Optional[str] = None,
) -> list[Match]:
    """One :class:`Match` per finding of ``current``: to the finding of ``previous`` with its
    rule and feature ids; else (the ids changed) its rule and place (the geometries overlap, or
    their centroids lie within the profile's ``[rounds] place_tolerance_ft``); else new. Places are compared
    only where both rounds measured in one CRS."""
    free = {h.number: h for h in previous}
    found: list[Optional[Held]] = [None] * len(current)
    by: list[str] = [NEW] * len(current)
    for i, finding in enumerate(current):
        key = finding_key(finding.rule, finding.features)
        match = next((h for h in free.values() if finding_key(h.rule, h.features) == key), None)
        if match is not None:
            found[i], by[i] = free.pop(match.number), BY_FEATURES
    if previous_area_crs in (None, area_crs):
        tolerance = crs_units(profile.rounds.place_tolerance_ft, area_crs)
        for i, finding in enumerate(current):
            if found[i] is not None or finding.geometry is None:
                continue
            match = next(
                (
                    h
                    for h in free.values()
                    if h.rule == finding.rule and _same_place(finding.geometry, h.geometry, tolerance)
                ),
                None,
            )
            if match is not None:
                found[i], by[i] = free.pop(match.number), BY_PLACE
    return [
        Match(
            b,
            h,
            h is not None and figure_changed(h.value, f.value, profile.rounds.figure_change_fraction),
        )
        for f, h, b in zip(current, found, by)
    ]
