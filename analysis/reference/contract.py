"""The reference layers' contract (docs/CONTRACT.md, "Reference layers"): one entry per layer, here.

Each :class:`ReferenceLayerSpec` says everything the code knows of a reference layer: its id
field, its fields (type, and whether a source may leave one out, whether it was added after
the first release, whether it is a flag or an Integrated Report category), its geometry
types, how a review reads it (features in a box around the sites, or looked up by id
wherever they lie), its name for people, the field a map labels it with and its style. The
importer's field checks, the stores' tables, the readers' checks, the diff, the screen's
layer list, the site map's and the report's styles and the plugin's reference parameters
are all derived from these entries: adding a reference layer type is one entry here plus
the check that reads it (docs/DESIGN.md, "How to add a reference layer type").

Nothing here reads a file: plain frozen dataclasses, cheap to import (the plugin and
``swppp --help`` import them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, Optional

__all__ = [
    "ReferenceField",
    "ReferenceLayerSpec",
    "LayerSpec",
    "Style",
    "REFERENCE_LAYERS",
    "LAYER_NAMES",
    "POLYGONS",
    "LINES",
    "ADDED_FIELDS",
    "OPTIONAL_VALUES",
    "NUMERIC_FIELDS",
    "FLAG_FIELDS",
    "FORMATS",
    "BOX",
    "BY_ID",
    "layer_spec",
]

# The source formats an import reads: any OGR file, EPA ATTAINS JSON, NYSDEC PWL tables.
FORMATS = ("ogr", "attains", "pwl")

POLYGONS = ("Polygon", "MultiPolygon")
LINES = ("LineString", "MultiLineString")

FieldKind = Literal["text", "integer", "real"]
ReadBy = Literal["box", "id"]
# How a review reads a layer: the features in a box around the sites (a GeoPackage's R-tree,
# a PostGIS GiST index answers), or looked up by id (and name) wherever they lie.
BOX: Final = "box"
BY_ID: Final = "id"


@dataclass(frozen=True)
class ReferenceField:
    """One field of a reference layer.

    ``optional``: a source may leave the field out or empty (every other field must be
    present). ``added``: added after the first release, so an older store (or a layer made by
    hand) may lack the column: a review reads it where present. ``flag``: 1 or 0 (a review
    also reads yes/no, true/false). ``category``: an Integrated Report category, read through
    the rules profile's ``[categories]`` (an import refuses a spelling the profile does not name).
    ``pollutants``: ``;``-separated pollutant names, folded at import by the profile's
    ``[reference] pollutant_synonyms`` (a diff lists the names added and removed).
    """

    name: str
    kind: FieldKind = "text"
    optional: bool = False
    added: bool = False
    flag: bool = False
    category: bool = False
    pollutants: bool = False

    @property
    def numeric(self) -> bool:
        """Read as a number whatever type the source stored it in."""
        return self.kind in ("integer", "real")


@dataclass(frozen=True)
class Style:
    """How the layer is drawn (the report's site map, the PDF, QGIS): its colour, its
    outline's colour (default: the colour), filled or an outline only, the opacity, the
    outline's pattern and width (points), a hatch, and its place in the map's drawing order
    among the context layers (bottom first)."""

    colour: str
    order: int
    outline: str = ""
    filled: bool = False
    opacity: float = 1.0
    pattern: Literal["solid", "dash", "dot"] = "solid"
    width_pt: float = 1.0
    hatch: Literal["", "dots", "diagonal"] = ""

    @property
    def outline_colour(self) -> str:
        return self.outline or self.colour


@dataclass(frozen=True)
class ReferenceLayerSpec:
    """One reference layer of the contract."""

    name: str
    label: str  # for people: the plugin's parameter, the panel
    legend: str  # the map's legend
    id_field: str
    columns: tuple[ReferenceField, ...]  # in contract order
    geometry_types: tuple[str, ...]
    read: ReadBy
    style: Style
    label_field: str  # the field a map labels features with
    lookup_fields: tuple[str, ...] = ()  # the fields a review looks features up by
    change_words: tuple[str, str] = ("added", "removed")  # a diff's words for a new, gone feature
    geometry_optional: bool = False  # a source may give the features without geometry

    def __post_init__(self) -> None:
        names = [f.name for f in self.columns]
        for name in (self.id_field, self.label_field) + self.lookup_fields:
            if name not in names:
                raise ValueError(f"reference layer {self.name}: {name} is not one of its fields")

    @property
    def fields(self) -> dict[str, str]:
        """Field name -> ``"text"`` | ``"integer"`` | ``"real"``, in contract order."""
        return {f.name: f.kind for f in self.columns}

    @property
    def required(self) -> list[str]:
        return list(self.fields)

    @property
    def optional_values(self) -> tuple[str, ...]:
        """The fields a source may leave out or empty."""
        return tuple(f.name for f in self.columns if f.optional)

    @property
    def added_fields(self) -> tuple[str, ...]:
        """The fields an older store may lack."""
        return tuple(f.name for f in self.columns if f.added)

    @property
    def numeric_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.columns if f.numeric)

    @property
    def flag_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.columns if f.flag)

    @property
    def category_fields(self) -> tuple[str, ...]:
        """The fields holding an Integrated Report category (the profile's [categories])."""
        return tuple(f.name for f in self.columns if f.category)

    @property
    def pollutant_fields(self) -> tuple[str, ...]:
        """The fields holding ``;``-separated pollutant names."""
        return tuple(f.name for f in self.columns if f.pollutants)

    @property
    def families(self) -> tuple[str, ...]:
        """The geometry families (``analysis.siteplan.contract.FAMILIES``) the layer holds."""
        return tuple(
            f
            for f, kinds in (("line", LINES), ("polygon", POLYGONS))
            if set(kinds) & set(self.geometry_types)
        )


LayerSpec = ReferenceLayerSpec
_F = ReferenceField

REFERENCE_LAYERS: dict[str, ReferenceLayerSpec] = {
    spec.name: spec
    for spec in (
        ReferenceLayerSpec(
            "wetlands",
            "Wetlands",
            "Wetlands (reference)",
            "wetland_id",
            (
                _F("wetland_id"),
                _F("source"),
                _F("wetland_class", optional=True),
                _F("regulated", "integer", flag=True),
                _F("adjacent_area_ft", "real", optional=True),
            ),
            POLYGONS,
            BOX,
            Style("#81d4fa", 30, outline="#0277bd", filled=True, opacity=0.45, width_pt=0.6, hatch="dots"),
            label_field="wetland_id",
        ),
        # category: the Integrated Report category (5 = 303(d)-listed; the profile's [categories]);
        # tmdl_id: the TMDL actions linked to the water's causes (ATTAINS associatedActions).
        ReferenceLayerSpec(
            "impaired_waters",
            "303(d) impaired waters",
            "Impaired water (reference)",
            "waterbody_id",
            (
                _F("waterbody_id"),
                _F("name", optional=True),
                _F("pollutants", pollutants=True),
                _F("listing_cycle", optional=True),
                _F("category", optional=True, category=True),
                _F("tmdl_id", optional=True, added=True),
            ),
            LINES + POLYGONS,
            BY_ID,
            Style("#1565c0", 60, width_pt=2.5),
            label_field="name",
            lookup_fields=("waterbody_id", "name"),
            geometry_optional=True,
            change_words=("newly listed", "delisted"),
        ),
        # stormwater_source: 1 a source, 0 not, NULL unknown (the review: needs_review);
        # stormwater_source_evidence: the source's own words that decided it; tmdl_date: the date
        # of each TMDL of tmdl_id, in its order (ATTAINS actions' completionDate), YYYY-MM-DD.
        ReferenceLayerSpec(
            "tmdl_watersheds",
            "TMDL watersheds",
            "TMDL watershed (reference)",
            "watershed_id",
            (
                _F("watershed_id"),
                _F("name", optional=True),
                _F("pollutants", pollutants=True),
                _F("tmdl_id", optional=True),
                _F("stormwater_source", "integer", flag=True),
                _F("stormwater_source_evidence", optional=True, added=True),
                _F("tmdl_date", optional=True, added=True),
            ),
            POLYGONS,
            BOX,
            Style("#00838f", 20, opacity=0.5, hatch="diagonal"),
            label_field="watershed_id",
        ),
        # drains_to: the catchment (or water) each catchment drains into: routes are looked up by it.
        ReferenceLayerSpec(
            "catchments",
            "Catchments",
            "Catchment (reference)",
            "catchment_id",
            (_F("catchment_id"), _F("name", optional=True), _F("drains_to", optional=True)),
            POLYGONS,
            BOX,
            Style("#8d6e63", 10, pattern="dot"),
            label_field="catchment_id",
            lookup_fields=("catchment_id",),
        ),
    )
}
LAYER_NAMES: tuple[str, ...] = tuple(REFERENCE_LAYERS)

# Derived from the entries (the names other modules have imported since the first release).
ADDED_FIELDS: dict[str, tuple[str, ...]] = {
    spec.name: spec.added_fields for spec in REFERENCE_LAYERS.values() if spec.added_fields
}
OPTIONAL_VALUES: frozenset[str] = frozenset(
    name for spec in REFERENCE_LAYERS.values() for name in spec.optional_values
)
NUMERIC_FIELDS: frozenset[str] = frozenset(
    name for spec in REFERENCE_LAYERS.values() for name in spec.numeric_fields
)
FLAG_FIELDS: frozenset[str] = frozenset(
    name for spec in REFERENCE_LAYERS.values() for name in spec.flag_fields
)


def layer_spec(name: str) -> Optional[ReferenceLayerSpec]:
    """The contract's entry for ``name``; None where it is not a reference layer."""
    return REFERENCE_LAYERS.get(name)
