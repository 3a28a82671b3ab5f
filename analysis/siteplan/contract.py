"""The site-plan contract (docs/CONTRACT.md), declared once: every layer, field, type, unit and code.

Loading (:mod:`analysis.siteplan.plan`), field mapping (:mod:`analysis.siteplan.mapping`), the
plugin's parameters and panel, and the test fixtures all read it from here. Nothing here reads
a file: the declarations are plain frozen dataclasses, cheap to import (the plugin imports them
when QGIS loads it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..tr55 import COVER_KEYS, HSG_GROUPS

__all__ = [
    "TEXT",
    "INTEGER",
    "REAL",
    "BOOLEAN",
    "DATE",
    "CODED",
    "TYPES",
    "FAMILIES",
    "FieldSpec",
    "LayerSpec",
    "LAND_USES",
    "HSG_CODES",
    "SITE_PLAN_LAYERS",
    "SPECS",
    "GROUPS",
    "layers_of",
    "layer_spec",
    "BOOLEAN_WORDS",
    "boolean_rule",
]

# Field types: what a value becomes once loaded (None where the field is empty).
TEXT = "text"  # str, as read
INTEGER = "integer"  # int
REAL = "real"  # float
BOOLEAN = "boolean"  # bool, from 0/1 (empty: False)
DATE = "date"  # datetime.date, from ISO YYYY-MM-DD text or a date field
CODED = "coded"  # one of FieldSpec.allowed, matched whatever its case, stored as listed there
# The spellings a BOOLEAN field accepts besides 1 and 0 (any case, spaces trimmed); anything
# else ("maybe", 2, 0.5) is refused naming the feature and field.
# The one yes/no rule of every input (issue 36 item 15): the site plan's boolean fields, the
# reference's flags (read and imported) and docs/CONTRACT.md (generated: BOOLEAN_RULE) all use it.
BOOLEAN_WORDS = {"yes": True, "no": False, "true": True, "false": False}


def boolean_rule() -> str:
    """The yes/no rule as the contract document states it, written from ``BOOLEAN_WORDS``."""
    words = ", ".join(f"`{word}` = {int(value)}" for word, value in BOOLEAN_WORDS.items())
    return (
        "A boolean field of the site plan and a flag of the reference hold 1 or 0, or one of "
        f"the words {words} (any case, spaces trimmed); any other value (`maybe`, 2, 0.5, a "
        "sentence) is refused naming the feature and field, never guessed. A coded field "
        "(`land_use`) is matched whatever its case and stored as the contract lists it; a "
        "number field holding text is refused."
    )


TYPES = (TEXT, INTEGER, REAL, BOOLEAN, DATE, CODED)
# Geometry families a layer may hold (None: a table without geometry).
FAMILIES = ("point", "line", "polygon")

LAND_USES = (
    "single_family_residential",
    "agricultural",
    "residential",
    "commercial",
    "industrial",
    "institutional",
    "mixed",
    "other",
)
# What a plan sheet is (SWPPP B(2): the site map, "a general location map", or another drawing).
DRAWINGS = ("site_map", "location_map", "other")
# Hydrologic soil groups: A to D, or a dual group (undrained D), TR-55 Appendix A.
HSG_CODES = HSG_GROUPS + tuple(f"{g}/D" for g in HSG_GROUPS[:3])


@dataclass(frozen=True)
class FieldSpec:
    """One field of a contract layer: its type, unit, allowed codes and whether it may be empty."""

    name: str
    type: str = TEXT
    unit: Optional[str] = None  # ft, acres, hours, cfs, cu ft, percent, USD, ...
    allowed: tuple[str, ...] = ()  # the codes of a CODED field
    may_be_empty: bool = True  # False: every feature must give a value
    minimum: Optional[float] = None  # the least value of a number
    column_required: bool = True  # False: the layer may leave the field out altogether
    description: str = ""

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"field {self.name}: type {self.type!r} is not one of {TYPES}")
        if (self.type == CODED) != bool(self.allowed):
            raise ValueError(f"field {self.name}: a coded field, and only one, lists its codes")


@dataclass(frozen=True)
class LayerSpec:
    """One layer of the site-plan contract."""

    name: str
    geometry: Optional[tuple[str, ...]]  # allowed families; None for a table without geometry
    fields: tuple[FieldSpec, ...]  # (a plain name is a text field)
    required: bool = False
    id_field: Optional[str] = None
    group: str = "site"  # one of GROUPS: which part of docs/CONTRACT.md declares it
    label: str = ""  # what a person calls it (the plugin's parameter and panel labels)
    unique_ids: bool = False  # True: two features may not share an id (findings name them by it)

    def __post_init__(self) -> None:
        # A plain name stands for a text field (the reference layers declare theirs so).
        object.__setattr__(
            self, "fields", tuple(FieldSpec(f) if isinstance(f, str) else f for f in self.fields)
        )
        unknown = set(self.geometry or ()) - set(FAMILIES)
        if unknown:
            raise ValueError(f"layer {self.name}: unknown geometry {sorted(unknown)}")
        if self.id_field is not None and self.id_field not in self.field_names:
            raise ValueError(f"layer {self.name}: id field {self.id_field} is not a field")
        if self.group not in GROUPS:
            raise ValueError(f"layer {self.name}: group {self.group!r} is not one of {GROUPS}")

    @property
    def field_names(self) -> tuple[str, ...]:
        """Every field's name, in the contract's order."""
        return tuple(f.name for f in self.fields)

    @property
    def required_fields(self) -> tuple[str, ...]:
        """The fields every copy of the layer must have as columns."""
        return tuple(f.name for f in self.fields if f.column_required)

    def field(self, name: str) -> FieldSpec:
        for spec in self.fields:
            if spec.name == name:
                return spec
        raise KeyError(f"layer {self.name} has no field {name}")


# docs/CONTRACT.md's sections: the site plan proper, "Hydrology inputs", "SWPPP contents checklist".
GROUPS = ("site", "hydrology", "checklist")

_F = FieldSpec
SITE_PLAN_LAYERS = (
    LayerSpec(
        "project",
        None,
        (
            _F("name"),
            _F("address"),
            _F("applicant"),
            _F("land_use", CODED, allowed=LAND_USES, may_be_empty=False),
            _F(
                "common_plan_acres",
                REAL,
                "acres",
                minimum=0.0,
                description="the larger common plan of development or sale (empty: none)",
            ),
            _F("five_acre_waiver", BOOLEAN, description="1: an approved waiver of the 5-acre limit"),
            _F("receiving_waters"),
            # The report's decision page (optional): the plan as the village files it.
            _F("tax_map_id", column_required=False, description="tax map / parcel id of the site"),
            _F("engineer_of_record", column_required=False),
            _F("submission_date", DATE, column_required=False),
        ),
        required=True,
        label="Project (one-row table)",
    ),
    LayerSpec(
        "site_boundary",
        ("polygon",),
        (_F("parcel_id"),),
        required=True,
        id_field="parcel_id",
        label="Site boundary",
    ),
    LayerSpec(
        "disturbance",
        ("polygon",),
        (
            _F("phase"),
            _F("start_date", DATE),
            _F("stabilized_date", DATE, description="empty: not yet scheduled"),
        ),
        required=True,
        label="Disturbance",
    ),
    LayerSpec(
        "smp",
        ("polygon", "point"),
        (_F("smp_id"), _F("practice")),
        id_field="smp_id",
        unique_ids=True,
        label="Stormwater management practices (SMP)",
    ),
    LayerSpec(
        "easement",
        ("polygon",),
        (
            _F("easement_id"),
            _F("recorded", BOOLEAN, description="1: recorded; 0 or empty: not yet"),
            _F("instrument", description="liber/page or document number"),
        ),
        id_field="easement_id",
        unique_ids=True,
        label="Maintenance easements",
    ),
    LayerSpec(
        "discharge_point",
        ("point",),
        (_F("receiving_water"), _F("waterbody_id")),
        id_field="waterbody_id",
        label="Discharge points",
    ),
    LayerSpec("public_row", ("polygon",), (_F("name"),), id_field="name", label="Public right-of-way"),
    LayerSpec(
        "layout_scale",
        None,
        (
            _F("sheet"),
            _F("scale_denominator", REAL, minimum=1.0, description="1:N as the sheet states it"),
            _F(
                "drawing",
                CODED,
                allowed=DRAWINGS,
                column_required=False,
                description="site_map or location_map (SWPPP B(2)); empty: read from the title",
            ),
            _F(
                "revision_date",
                DATE,
                column_required=False,
                description="the sheet's latest revision (the report's decision page)",
            ),
        ),
        id_field="sheet",
        label="Stated sheet scales (table)",
    ),
    # docs/CONTRACT.md "Hydrology inputs and API" (optional; needed for hydrology_pre_post).
    LayerSpec(
        "soils",
        ("polygon",),
        (_F("hsg", CODED, allowed=HSG_CODES, may_be_empty=False),),
        group="hydrology",
        label="Soils (hsg)",
    ),
    LayerSpec(
        "land_cover_pre",
        ("polygon",),
        (_F("cover", CODED, allowed=COVER_KEYS, may_be_empty=False),),
        group="hydrology",
        label="Land cover before development (cover)",
    ),
    LayerSpec(
        "land_cover_post",
        ("polygon",),
        (_F("cover", CODED, allowed=COVER_KEYS, may_be_empty=False),),
        group="hydrology",
        label="Land cover after development (cover)",
    ),
    LayerSpec(
        "drainage_area",
        ("polygon",),
        (
            _F("name", may_be_empty=False),
            _F("discharge_point"),
            _F("tc_hours", REAL, "hours", minimum=0.0, description="time of concentration"),
            _F("pond_swamp_pct", REAL, "percent", minimum=0.0, column_required=False),
        ),
        id_field="name",
        unique_ids=True,
        group="hydrology",
        label="Drainage areas",
    ),
    LayerSpec(
        "hydrology_claims",
        None,
        (
            _F("drainage_area"),
            _F("storm"),
            _F("pre_peak_cfs", REAL, "cfs", minimum=0.0),
            _F("post_peak_cfs", REAL, "cfs", minimum=0.0),
            _F("pre_volume_cf", REAL, "cu ft", minimum=0.0),
            _F("post_volume_cf", REAL, "cu ft", minimum=0.0),
            _F("wqv_cf", REAL, "cu ft", minimum=0.0),
        ),
        group="hydrology",
        label="The SWPPP's stated hydrology figures (table)",
    ),
    # docs/CONTRACT.md "SWPPP contents checklist" (optional): ESC practices, what the applicant's
    # documents cover, contractors' certifications (SWPPP G), guarantees (Inspections E).
    LayerSpec(
        "esc_practice",
        ("point", "line", "polygon"),
        (
            _F("practice"),
            _F("size"),
            _F("length_ft", REAL, "ft", minimum=0.0),
            _F("drainage_area_acres", REAL, "acres", minimum=0.0),
            _F("stage", CODED, allowed=("temporary", "permanent", "converted")),
            # A schedule: a date or an event ("before grading"), read as text.
            _F("install_by"),
            _F("remove_after"),
        ),
        group="checklist",
        label="Erosion and sediment control practices",
    ),
    LayerSpec(
        "submission",
        None,
        (_F("item"), _F("document"), _F("note")),
        group="checklist",
        label="Submitted documents per checklist item (table)",
    ),
    LayerSpec(
        "contractor_certification",
        None,
        (
            _F("name"),
            _F("title"),
            _F("firm_address"),
            _F("phone"),
            _F("site_address"),
            _F("signed_on", DATE),
            # G(1): each signs "before undertaking any land development activity": the phase the
            # contractor's own work starts with (empty: from the project's first day).
            _F(
                "phase",
                column_required=False,
                description="the phase the contractor's work starts with (empty: the first)",
            ),
        ),
        id_field="name",
        group="checklist",
        label="Contractor certifications (table)",
    ),
    LayerSpec(
        "guarantee",
        None,
        (
            _F("kind", CODED, allowed=("escrow", "letter_of_credit", "bond"), may_be_empty=False),
            _F("amount", REAL, "USD", minimum=0.0),
            _F("starts_on", DATE),
            _F("ends_on", DATE),
            _F("covers", CODED, allowed=("construction", "maintenance"), may_be_empty=False),
            _F(
                "estimated_cost",
                REAL,
                "USD",
                minimum=0.0,
                column_required=False,
                description="the estimate the amount must cover (E(2): maintaining the system for "
                "five years)",
            ),
        ),
        group="checklist",
        label="Guarantees: escrow, letter of credit, bond (table)",
    ),
)
del _F
SPECS = {spec.name: spec for spec in SITE_PLAN_LAYERS}


def layers_of(*groups: str) -> tuple[LayerSpec, ...]:
    """The contract's layers of ``groups`` (``site``, ``hydrology``, ``checklist``), in order."""
    unknown = set(groups) - set(GROUPS)
    if unknown:
        raise ValueError(f"unknown layer group(s) {sorted(unknown)}; the groups are {GROUPS}")
    return tuple(spec for spec in SITE_PLAN_LAYERS if spec.group in groups)


def layer_spec(name: str) -> LayerSpec:
    """The contract layer ``name`` (KeyError naming the layers where there is none)."""
    try:
        return SPECS[name]
    except KeyError:
        raise KeyError(f"no site-plan layer {name!r}; the layers are {', '.join(SPECS)}") from None
