"""The typed evidence the engine judges a site by: what it meets, and how.

Built by the adapters from what was measured (``checks``: one site's reads; ``screen``: every
site's pairs, from a GeoPackage or PostGIS) and judged by :mod:`.decide`; worded by
:mod:`.wording`. No anonymous tuples: each fact is a field.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Any, Optional

from ..values import has_text

__all__ = [
    "WetlandEvidence",
    "Reach",
    "CategoryKind",
    "ListedRecord",
    "WaterEvidence",
    "CatchmentShare",
    "WatershedEvidence",
    "ConditionAEvidence",
    "text_or_none",
]


def text_or_none(value: Any) -> Optional[str]:
    """A reference field's text, or None where it holds none (None, NaN, blank)."""
    return str(value) if has_text(value) else None


@dataclass(frozen=True)
class WetlandEvidence:
    """A wetland a site meets: its id (or ``#<feature id>`` where it has none), source, class,
    whether it is regulated and its adjacent area (feet; 0 where it has none)."""

    wetland_id: str
    source: Optional[str]
    wetland_class: Optional[str]
    regulated: bool
    adjacent_area_ft: float


class Reach(Enum):
    """How the site's runoff reaches a water."""

    DISCHARGE_POINT = "discharge point"  # a discharge point names its waterbody_id
    CATCHMENT = "catchment"  # a catchment the runoff starts in drains to it
    DOWNSTREAM = "downstream"  # a catchment downstream of those drains to it
    NAME = "name"  # a name given matches the water's name only


class CategoryKind(Enum):
    """An impaired water's category as C(1) reads it (``reference.categories.category_kind``)."""

    LISTED = "listed"
    TMDL = "tmdl"
    UNKNOWN = "unknown"
    B4 = "4b"
    C4 = "4c"
    OTHER = "other"
    UNRECOGNISED = "unrecognised"  # a category the profile does not name


@dataclass(frozen=True)
class ListedRecord:
    """A row of ``impaired_waters``: the water as recorded (id as written), its category's kind
    and its pollutants (the field's text, and the names they are folded to)."""

    waterbody_id: str
    name: Optional[str]
    listing_cycle: Optional[str]
    category: Optional[str]
    kind: CategoryKind
    pollutants_text: Optional[str]
    pollutants: tuple[str, ...]


@dataclass(frozen=True)
class WaterEvidence:
    """A water the runoff reaches (or may: by name only), how, and what the 303(d) list says
    of it (``record`` None: not on it)."""

    water_id: str
    reach: Reach
    came_from: tuple[str, ...] = ()  # the features that name it (labels)
    route: Optional[str] = None  # the route downstream to it, where it is downstream
    record: Optional[ListedRecord] = None


@dataclass(frozen=True)
class CatchmentShare:
    """How a downstream catchment on a site's route lies in a TMDL watershed: the acres of it
    inside the watershed and their percent of its area, whether that is a real share
    (``judge.decide.real_share``; not: it only grazes the watershed), and, where it only grazes
    it, where it drains (``outlet``: True into a catchment that lies in the watershed, False
    into catchments that all lie outside it, None not known from the reference layers: a
    water, a catchment not followed or not found)."""

    catchment_id: str
    acres: float
    percent: float
    real: bool
    outlet: Optional[bool] = None


@dataclass(frozen=True)
class WatershedEvidence:
    """A TMDL watershed a site meets: by overlap (``acres`` of the site in it, ``outfalls``:
    discharge points inside it) or through a downstream catchment (``route``; ``share``: how
    that catchment lies in it)."""

    watershed_id: str
    tmdl_id: Optional[str]
    name: Optional[str]
    pollutants_text: Optional[str]
    pollutants: tuple[str, ...]
    stormwater_source: Optional[bool]  # None: not recorded
    acres: float = 0.0
    outfalls: tuple[str, ...] = ()
    route: Optional[str] = None
    share: Optional[CatchmentShare] = None  # met downstream: the catchment's share of it
    label: str = ""  # the feature's label (``tmdl_watersheds:<id>``)
    geometry: Any = None
    tmdl_date: Optional[str] = None  # the TMDL's date(s), where the layer records them

    @property
    def routed(self) -> bool:
        return self.route is not None

    @staticmethod
    def source_of(value: Any) -> Optional[bool]:
        """``stormwater_source`` as recorded: 1 yes, another number no, empty None."""
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return None
        try:
            number = float(value)
        except (TypeError, ValueError):
            return None
        return None if math.isnan(number) else int(number) == 1


@dataclass(frozen=True)
class ConditionAEvidence:
    """Everything Condition A is decided by, for one site."""

    waters: tuple[WaterEvidence, ...] = ()
    watersheds: tuple[WatershedEvidence, ...] = ()  # overlapped (or an outfall inside)
    routed_watersheds: tuple[WatershedEvidence, ...] = ()  # met only downstream
    unplaced: tuple[str, ...] = ()  # routes to downstream catchments whose shape was not found
    cut: tuple[str, ...] = ()  # notes: routes cut at [condition_a] downstream_catchment_hops
    receiving_known: bool = False  # some water is known to receive the runoff
