"""Loading and validating a site plan per CONTRACT.md, reprojected to the profile's area CRS."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..errors import InputError
from ..geometry import in_family, polygon_part
from ..profile import RulesProfile
from ..io.vector import list_layers, read_layer
from ..tr55 import COVER_KEYS, valid_hsg

__all__ = ["LayerSpec", "SITE_PLAN_LAYERS", "LAND_USES", "SitePlan", "Repair", "load_site_plan",
           "load_layers", "crs_label", "has_text"]

log = logging.getLogger(__name__)

LAND_USES = ("single_family_residential", "agricultural", "residential", "commercial",
             "industrial", "institutional", "mixed", "other")


@dataclass(frozen=True)
class LayerSpec:
    """One layer of the site-plan contract."""

    name: str
    geometry: Optional[tuple[str, ...]]  # allowed families; None for a table without geometry
    fields: tuple[str, ...]
    required: bool = False
    id_field: Optional[str] = None


SITE_PLAN_LAYERS = (
    LayerSpec("project", None, ("name", "address", "applicant", "land_use", "common_plan_acres",
                                "five_acre_waiver", "receiving_waters"), required=True),
    LayerSpec("site_boundary", ("polygon",), ("parcel_id",), required=True, id_field="parcel_id"),
    LayerSpec("disturbance", ("polygon",), ("phase", "start_date", "stabilized_date"), required=True),
    LayerSpec("smp", ("polygon", "point"), ("smp_id", "practice"), id_field="smp_id"),
    LayerSpec("easement", ("polygon",), ("easement_id", "recorded", "instrument"),
              id_field="easement_id"),
    LayerSpec("discharge_point", ("point",), ("receiving_water", "waterbody_id"),
              id_field="waterbody_id"),
    LayerSpec("public_row", ("polygon",), ("name",), id_field="name"),
    LayerSpec("layout_scale", None, ("sheet", "scale_denominator"), id_field="sheet"),
    # CONTRACT.md "Hydrology inputs and API" (optional; needed for hydrology_pre_post).
    LayerSpec("soils", ("polygon",), ("hsg",)),
    LayerSpec("land_cover_pre", ("polygon",), ("cover",)),
    LayerSpec("land_cover_post", ("polygon",), ("cover",)),
    LayerSpec("drainage_area", ("polygon",), ("name", "discharge_point", "tc_hours"),
              id_field="name"),
    LayerSpec("hydrology_claims", None, ("drainage_area", "storm", "pre_peak_cfs",
                                         "post_peak_cfs", "pre_volume_cf", "post_volume_cf",
                                         "wqv_cf")),
    # CONTRACT.md "SWPPP contents checklist" (optional): ESC practices, what the applicant's
    # documents cover, contractors' certifications (SWPPP G), guarantees (Inspections E).
    LayerSpec("esc_practice", ("point", "line", "polygon"),
              ("practice", "size", "length_ft", "drainage_area_acres", "stage", "install_by",
               "remove_after")),
    LayerSpec("submission", None, ("item", "document", "note")),
    LayerSpec("contractor_certification", None, ("name", "title", "firm_address", "phone",
                                                 "site_address", "signed_on"), id_field="name"),
    LayerSpec("guarantee", None, ("kind", "amount", "starts_on", "ends_on", "covers")),
)
SPECS = {spec.name: spec for spec in SITE_PLAN_LAYERS}
# Coded fields of the checklist's layers: (field, allowed values (any case), may be empty).
CODED_VALUES = {
    "esc_practice": (("stage", ("temporary", "permanent", "converted"), True),),
    "guarantee": (("kind", ("escrow", "letter_of_credit", "bond"), False),
                  ("covers", ("construction", "maintenance"), False)),
}


@dataclass
class Repair:
    """An invalid geometry that was repaired with make_valid."""

    feature: str  # "layer:id"
    reason: str
    geometry: object  # the repaired geometry, in the area CRS


@dataclass
class SitePlan:
    """A validated site plan: every spatial layer in the area CRS, ids and repairs recorded."""

    path: str
    area_crs: CRS
    input_crs: str
    project: dict
    layers: dict[str, pd.DataFrame] = field(default_factory=dict)
    repairs: list[Repair] = field(default_factory=list)

    def layer(self, name: str) -> Optional[pd.DataFrame]:
        return self.layers.get(name)

    def labels(self, name: str) -> list[str]:
        """``layer:id`` for every feature of a layer, ``layer:#fid`` where the id is missing."""
        frame = self.layers[name]
        return feature_labels(name, frame, SPECS[name].id_field)

    @property
    def name(self) -> str:
        return str(self.project.get("name") or Path(self.path).stem)


def feature_labels(layer: str, frame: pd.DataFrame, id_field: Optional[str]) -> list[str]:
    if id_field is None or id_field not in frame.columns:
        return [f"{layer}:{fid}" for fid in frame.index]
    return [f"{layer}:{value}" if _present(value) else f"{layer}:#{fid}"
            for fid, value in zip(frame.index, frame[id_field])]


def crs_label(crs: CRS) -> str:
    authority = crs.to_authority()
    return ":".join(authority) if authority else crs.name


def load_site_plan(path: str | Path, profile: RulesProfile) -> SitePlan:
    """Read and validate every contract layer of the site plan at ``path``.

    Raises :class:`InputError` naming the file, layer, feature and field for anything that
    cannot be reviewed; invalid geometries are repaired and recorded, not refused.
    """
    path = Path(path)
    layers, input_crss, repairs, project = _load(path, profile, SITE_PLAN_LAYERS)
    input_crs = ", ".join(dict.fromkeys(input_crss))
    return SitePlan(path=str(path), area_crs=CRS.from_user_input(profile.area_crs),
                    input_crs=input_crs, project=project, layers=layers, repairs=repairs)


def load_layers(path: str | Path, profile: RulesProfile, names) -> tuple[dict, list]:
    """Only the contract layers ``names`` of ``path`` (each optional), validated as a site plan's.

    Returns the layers (area CRS) and the repairs made; for an algorithm that needs a few
    layers (e.g. ``swppp:hydrology``), not a whole site plan.
    """
    specs = [LayerSpec(s.name, s.geometry, s.fields, False, s.id_field)
             for s in SITE_PLAN_LAYERS if s.name in names]
    layers, _crss, repairs, _project = _load(Path(path), profile, specs)
    return layers, repairs


def _load(path, profile, specs):
    present = _match_layer_names(path, list_layers(path))
    area_crs = CRS.from_user_input(profile.area_crs)
    layers, input_crss, repairs = {}, [], []
    project = None
    for spec in specs:
        actual = present.get(spec.name)
        if actual is None:
            if spec.required:
                raise InputError(f"the required layer '{spec.name}' is missing (layers found: "
                                 f"{', '.join(sorted(present.values())) or 'none'})", path=path,
                                 fix=f"add a layer named '{spec.name}' as CONTRACT.md describes")
            continue
        data = read_layer(path, actual)
        frame = _normalise_fields(path, actual, spec, data.frame)
        if spec.geometry is None:
            if spec.name == "project":
                project = _validate_project(path, actual, frame)
            layers[spec.name] = pd.DataFrame(frame.drop(columns="geometry", errors="ignore"))
            continue
        frame = _validate_spatial(path, actual, spec, frame, data.crs)
        input_crss.append(crs_label(data.crs))
        frame = frame.to_crs(area_crs)
        frame, layer_repairs = _repair(spec, frame)
        repairs.extend(layer_repairs)
        layers[spec.name] = frame
    for spec in specs:
        if spec.name in layers:
            _validate_values(path, present[spec.name], spec.name, layers[spec.name])
    return layers, input_crss, repairs, project


def _validate_values(path, layer, name, frame):
    """Coded values of the hydrology layers: cover keys, soil groups, numbers."""
    checks = {"soils": ("hsg", valid_hsg, "A, B, C, D or a dual group A/D, B/D, C/D"),
              "land_cover_pre": ("cover", COVER_KEYS.__contains__,
                                 "a TR-55 cover key of CONTRACT.md: " + ", ".join(COVER_KEYS)),
              "land_cover_post": ("cover", COVER_KEYS.__contains__,
                                  "a TR-55 cover key of CONTRACT.md: " + ", ".join(COVER_KEYS))}
    if name in checks:
        field_name, ok, allowed = checks[name]
        bad = [(fid, v) for fid, v in zip(frame.index, frame[field_name])
               if not (_present(v) and ok(str(v).strip() if name == "soils" else v))]
        if bad:
            fid, value = bad[0]
            raise InputError(f"{field_name} is {value!r}, not {allowed}", path=path, layer=layer,
                             feature=fid, field=field_name,
                             fix=f"set {field_name} of every feature to one of the listed values")
    for field_name, allowed, may_be_empty in CODED_VALUES.get(name, ()):
        for fid, value in zip(frame.index, frame[field_name]):
            if may_be_empty and not _present(value):
                continue
            if not _present(value) or str(value).strip().lower() not in allowed:
                raise InputError(f"{field_name} is {value if _present(value) else None!r}, not "
                                 f"one of {', '.join(allowed)}", path=path, layer=layer,
                                 feature=fid, field=field_name,
                                 fix=f"set {field_name} to one of the listed values")
    numbers = {"drainage_area": ("tc_hours", "pond_swamp_pct"),
               "esc_practice": ("length_ft", "drainage_area_acres"),
               "guarantee": ("amount",),
               "hydrology_claims": ("pre_peak_cfs", "post_peak_cfs", "pre_volume_cf",
                                    "post_volume_cf", "wqv_cf")}
    for field_name in numbers.get(name, ()):
        if field_name in frame.columns:
            for fid, value in zip(frame.index, frame[field_name]):
                _number(path, layer, fid, field_name, value if _present(value) else None,
                        minimum=0.0)
    if name == "drainage_area":
        names = [str(v) for v in frame["name"]]
        missing = [fid for fid, v in zip(frame.index, frame["name"]) if not _present(v)]
        if missing or len(set(names)) != len(names):
            fid = missing[0] if missing else frame.index[
                [i for i, n in enumerate(names) if names.count(n) > 1][1]]
            raise InputError("every drainage area needs a name of its own", path=path,
                             layer=layer, feature=fid, field="name",
                             fix="give each drainage area a unique name")


def _match_layer_names(path, names) -> dict[str, str]:
    """Contract name -> actual layer name, matched case-insensitively."""
    matched = {}
    for name in names:
        key = name.lower()
        if key in matched:
            raise InputError(f"two layers differ only in case: '{matched[key]}' and '{name}'",
                             path=path, layer=name, fix="rename or remove one of them")
        matched[key] = name
    return matched


def _normalise_fields(path, layer, spec, frame):
    """Contract fields renamed to lower case; a missing one is an error naming it."""
    geometry_name = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    by_lower = {}
    for column in frame.columns:
        if column != geometry_name:
            by_lower.setdefault(str(column).lower(), column)
    missing = [f for f in spec.fields if f not in by_lower]
    if missing:
        raise InputError(f"required field(s) {', '.join(repr(f) for f in missing)} missing "
                         f"(fields found: {', '.join(map(str, by_lower.values())) or 'none'})",
                         path=path, layer=layer, field=missing[0],
                         fix=f"add the field(s) to layer '{layer}' as CONTRACT.md describes")
    return frame.rename(columns={by_lower[f]: f for f in spec.fields if by_lower[f] != f})


def _validate_project(path, layer, frame) -> dict:
    if len(frame) != 1:
        raise InputError(f"the project table has {len(frame)} rows; it must have exactly one",
                         path=path, layer=layer, fix="keep one row describing the project")
    fid = frame.index[0]
    row = {k: (None if not _present(v) else v) for k, v in frame.iloc[0].items() if k != "geometry"}
    land_use = row.get("land_use")
    if land_use not in LAND_USES:
        raise InputError(f"land_use is {land_use!r}, not one of {', '.join(LAND_USES)}",
                         path=path, layer=layer, feature=fid, field="land_use",
                         fix="set land_use to one of the listed values")
    row["common_plan_acres"] = _number(path, layer, fid, "common_plan_acres",
                                       row.get("common_plan_acres"), minimum=0.0)
    waiver = _number(path, layer, fid, "five_acre_waiver", row.get("five_acre_waiver"))
    if waiver not in (None, 0, 1):
        raise InputError(f"five_acre_waiver is {waiver!r}; it must be 0 or 1", path=path,
                         layer=layer, feature=fid, field="five_acre_waiver",
                         fix="use 1 for an approved waiver, 0 (or empty) for none")
    row["five_acre_waiver"] = bool(waiver)
    return row


def _validate_spatial(path, layer, spec, frame, crs) -> gpd.GeoDataFrame:
    if crs is None:
        raise InputError("the layer has no coordinate reference system (or an undefined one)",
                         path=path, layer=layer,
                         fix="assign the layer's true CRS in QGIS (Layer Properties > Source) "
                             "and save it again")
    if not isinstance(frame, gpd.GeoDataFrame):
        raise InputError("the layer has no geometry", path=path, layer=layer,
                         fix=f"'{spec.name}' must hold {' or '.join(spec.geometry)} features")
    if spec.required and len(frame) == 0:
        raise InputError("the layer has no features", path=path, layer=layer,
                         fix=f"draw the site's {spec.name.replace('_', ' ')} (SWPPP B(2))")
    geometries = np.asarray(frame.geometry.values, dtype=object)
    missing = shapely.is_missing(geometries) | shapely.is_empty(geometries)
    if missing.any():
        fid = frame.index[np.flatnonzero(missing)[0]]
        raise InputError(f"{int(missing.sum())} feature(s) have no geometry", path=path,
                         layer=layer, feature=fid, fix="draw the feature or delete it")
    wrong = ~in_family(geometries, *spec.geometry)
    if wrong.any():
        fid = frame.index[np.flatnonzero(wrong)[0]]
        kind = shapely.get_type_id(geometries[np.flatnonzero(wrong)[0]])
        raise InputError(f"a {shapely.GeometryType(kind).name.title()} where "
                         f"{' or '.join(spec.geometry)} geometry is required", path=path,
                         layer=layer, feature=fid, fix="move the feature to the right layer")
    return frame


def _repair(spec, frame):
    """make_valid for invalid geometries only, keeping the layer's geometry family."""
    geometries = np.asarray(frame.geometry.values, dtype=object)
    invalid = ~shapely.is_valid(geometries)
    if not invalid.any():
        return frame, []
    reasons = shapely.is_valid_reason(geometries[invalid])
    fixed = shapely.make_valid(geometries[invalid])
    if spec.geometry == ("polygon",):
        fixed = np.array([polygon_part(g) for g in fixed], dtype=object)
    geometries = geometries.copy()
    geometries[invalid] = fixed
    frame = frame.set_geometry(gpd.GeoSeries(geometries, index=frame.index, crs=frame.crs))
    labels = np.asarray(feature_labels(spec.name, frame, spec.id_field), dtype=object)
    repairs = [Repair(label, reason, geom) for label, reason, geom in zip(labels[invalid], reasons, fixed)]
    for r in repairs:
        log.info("repaired %s: %s", r.feature, r.reason)
    return frame, repairs


def _number(path, layer, fid, field_name, value, minimum=None):
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{field_name} is {value!r}, not a number", path=path, layer=layer,
                         feature=fid, field=field_name, fix="enter a number or leave it empty") from None
    if minimum is not None and number < minimum:
        raise InputError(f"{field_name} is {number}, below {minimum}", path=path, layer=layer,
                         feature=fid, field=field_name, fix="enter the true value")
    return number


def _present(value) -> bool:
    if value is None:
        return False
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):
        return True


def has_text(value) -> bool:
    """Whether a field's value says something: not null, not NaN, not blank.

    >>> [has_text(v) for v in (None, float("nan"), "  ", "E-2", 0)]
    [False, False, False, True, True]
    """
    return _present(value) and bool(str(value).strip())
