"""The reference layers' contract (CONTRACT.md, "Reference layers"): declared once, here.

Each layer's id field, fields (name -> "text" | "integer" | "real", in contract order),
geometry types, and the fields added after the first release, which older stores may lack
(a review reads them where present; an import always writes them).
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ReferenceLayerSpec", "REFERENCE_LAYERS", "POLYGONS", "LINES", "ADDED_FIELDS",
           "OPTIONAL_VALUES", "NUMERIC_FIELDS", "FORMATS"]

# The source formats an import reads: any OGR file, EPA ATTAINS JSON, NYSDEC PWL tables.
FORMATS = ("ogr", "attains", "pwl")

POLYGONS = ("Polygon", "MultiPolygon")
LINES = ("LineString", "MultiLineString")


@dataclass(frozen=True)
class ReferenceLayerSpec:
    """One reference layer of the contract: its id field, fields (name -> type) and geometries."""

    name: str
    id_field: str
    fields: dict  # field -> "text" | "integer" | "real", in contract order
    geometry_types: tuple

    @property
    def required(self) -> list[str]:
        return list(self.fields)

    @property
    def families(self) -> tuple[str, ...]:
        """The geometry families (``analysis.siteplan.contract.FAMILIES``) the layer holds."""
        return tuple(f for f, kinds in (("line", LINES), ("polygon", POLYGONS))
                     if set(kinds) & set(self.geometry_types))


REFERENCE_LAYERS = {spec.name: spec for spec in (
    ReferenceLayerSpec("wetlands", "wetland_id",
                       {"wetland_id": "text", "source": "text", "wetland_class": "text",
                        "regulated": "integer", "adjacent_area_ft": "real"}, POLYGONS),
    # category: the Integrated Report category as "5", "4a", "4b", "4c" (5 = 303(d)-listed);
    # tmdl_id: the TMDL actions linked to the water's causes (ATTAINS associatedActions).
    ReferenceLayerSpec("impaired_waters", "waterbody_id",
                       {"waterbody_id": "text", "name": "text", "pollutants": "text",
                        "listing_cycle": "text", "category": "text", "tmdl_id": "text"},
                       LINES + POLYGONS),
    # stormwater_source: 1 a source, 0 not, NULL unknown (the review: needs_review);
    # stormwater_source_evidence: the source's own words that decided it.
    ReferenceLayerSpec("tmdl_watersheds", "watershed_id",
                       {"watershed_id": "text", "name": "text", "pollutants": "text",
                        "tmdl_id": "text", "stormwater_source": "integer",
                        "stormwater_source_evidence": "text"}, POLYGONS),
    ReferenceLayerSpec("catchments", "catchment_id",
                       {"catchment_id": "text", "name": "text", "drains_to": "text"}, POLYGONS),
)}
# Fields added after the first release: a store (or a hand-made layer) may lack the column.
ADDED_FIELDS = {"impaired_waters": ("tmdl_id",),
                "tmdl_watersheds": ("stormwater_source_evidence",)}
# Fields a source may leave out or empty; every other contract field must be present.
OPTIONAL_VALUES = {"adjacent_area_ft", "name", "drains_to", "listing_cycle", "category",
                   "wetland_class", "tmdl_id", "stormwater_source_evidence"}
# Numeric fields: read as numbers whatever type the source stored them in.
NUMERIC_FIELDS = {name for spec in REFERENCE_LAYERS.values()
                  for name, kind in spec.fields.items() if kind in ("integer", "real")}
