"""Loading and validating a site plan per docs/CONTRACT.md, reprojected to the profile's area CRS."""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, Optional, Union

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS
from pyproj.exceptions import CRSError

from ..crs import crs_label, crs_of, epsg_code, to_crs, transformer
from ..dates import in_range, require_date
from ..errors import InputError
from ..geometry import in_family, polygon_part
from ..io.geopackage import with_stored_texts
from ..io.losses import DBF_NAME_LENGTH
from ..io.vector import LayerData, list_layers, read_layer
from ..profile import Inputs, RulesProfile
from ..values import feature_labels, has_text, present
from .cad import cad_areas, cad_layer_matches, none_matched
from .contract import (
    BOOLEAN,
    BOOLEAN_WORDS,
    CODED,
    DATE,
    INTEGER,
    REAL,
    SITE_PLAN_LAYERS,
    SPECS,
    FieldSpec,
    LayerSpec,
)
from .mapping import NO_MAPPING, FieldMap
from .schedule import dates_by_phase, phase_name, read_schedule

if TYPE_CHECKING:  # what CRS.area_of_use returns, as pyproj's stubs name it
    from pyproj._crs import AreaOfUse

__all__ = [
    "SitePlan",
    "Repair",
    "load_site_plan",
    "load_layers",
    "check_coordinates",
    "match_layer_names",
    "normalise_fields",
    "validate_spatial",
    "repair_invalid",
]

log = logging.getLogger(__name__)


# A file's path as the errors take it
PathArg = Union[str, "os.PathLike[str]"]


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
    project: dict[str, Any]
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


def load_site_plan(path: str | Path, profile: RulesProfile, mapping: Optional[FieldMap] = None) -> SitePlan:
    """Read and validate every contract layer of the site plan at ``path``.

    Each field's value is read once here as its contract type (:mod:`.contract`): numbers as
    floats, 0/1 as booleans, dates as ``datetime.date``, codes as the contract spells them.
    ``mapping`` (:mod:`.mapping`) names the source layers and fields that hold the contract's.
    Raises :class:`InputError` naming the file, layer, feature and field for anything that
    cannot be reviewed; invalid geometries are repaired and recorded, not refused.
    """
    path = Path(path)
    layers, input_crss, repairs, project = _load(path, profile, SITE_PLAN_LAYERS, mapping or NO_MAPPING)
    assert project is not None, "the project layer is required (SITE_PLAN_LAYERS)"
    input_crs = ", ".join(dict.fromkeys(input_crss))
    return SitePlan(
        path=str(path),
        area_crs=crs_of(profile.area_crs),
        input_crs=input_crs,
        project=project,
        layers=layers,
        repairs=repairs,
    )


def load_layers(
    path: str | Path, profile: RulesProfile, names: Collection[str], mapping: Optional[FieldMap] = None
) -> tuple[dict[str, pd.DataFrame], list[Repair]]:
    """Only the contract layers ``names`` of ``path`` (each optional), validated as a site plan's.

    Returns the layers (area CRS) and the repairs made; for an algorithm that needs a few
    layers (e.g. ``swppp:hydrology``), not a whole site plan.
    """
    specs = [replace(s, required=False) for s in SITE_PLAN_LAYERS if s.name in names]
    layers, _crss, repairs, _project = _load(Path(path), profile, specs, mapping or NO_MAPPING)
    return layers, repairs


CAD_SUFFIXES = (".dxf", ".dwg")  # drawings GDAL reads as one layer of entities


def _load(
    path: Path, profile: RulesProfile, specs: Sequence[LayerSpec], mapping: FieldMap
) -> tuple[dict[str, pd.DataFrame], list[str], list[Repair], Optional[dict[str, Any]]]:
    layer_names = match_layer_names(path, list_layers(path))
    area_crs = crs_of(profile.area_crs)
    layers: dict[str, pd.DataFrame] = {}
    actual_names: dict[str, str] = {}
    input_crss: list[str] = []
    repairs: list[Repair] = []
    project: Optional[dict[str, Any]] = None
    cad_entities: dict[str, LayerData] = {}  # the drawing's entities, read once
    main_path = path
    for spec in specs:
        path = main_path
        wanted = mapping.source_layer(spec.name)
        if spec.name in mapping.files:
            path = Path(mapping.files[spec.name])
            elsewhere = match_layer_names(path, list_layers(path))
            actual = elsewhere.get(wanted.lower()) or (
                next(iter(elsewhere.values())) if len(elsewhere) == 1 else None
            )
            if actual is None:
                raise InputError(
                    f"no layer '{wanted}' for '{spec.name}' (layers found: {', '.join(elsewhere.values())})",
                    path=path,
                    fix="give a file of one layer, or name its layer in [layers]",
                )
        elif spec.name in mapping.cad_layers:
            data = _cad_layer(path, layer_names, spec, mapping, cad_entities)
            actual = data.name
        else:
            actual = layer_names.get(wanted.lower())
        if actual is None:
            found = ", ".join(sorted(layer_names.values())) or "none"
            if wanted != spec.name:
                raise InputError(
                    f"the layer '{wanted}', which {mapping.given_by(spec.name)} "
                    f"names for '{spec.name}', is missing (layers found: {found})",
                    path=path,
                    fix="name one of the layers found in the mapping",
                )
            if spec.required and not mapping.cad_layers and path.suffix.lower() in CAD_SUFFIXES:
                raise InputError(
                    f"a CAD drawing holds no contract layers by name: GDAL reads it as one "
                    f"layer of entities ({found}), each on a CAD layer",
                    path=path,
                    parameter="map",
                    fix="give a mapping file whose [cad.layers] maps each contract layer to "
                    "its CAD layer names, with [cad] crs and schedule, and [files] project "
                    "(docs/CLI.md: 'A CAD export')",
                )
            if spec.required:
                raise InputError(
                    f"the required layer '{spec.name}' is missing (layers found: {found})",
                    path=path,
                    fix=f"add a layer named '{spec.name}' as docs/CONTRACT.md describes",
                )
            continue
        if spec.name not in mapping.cad_layers:
            data = read_layer(path, actual)
            data.frame = with_stored_texts(path, actual, data.frame)
        if spec.name in mapping.files:
            data.frame = _blank_as_missing(data.frame)
        frame = normalise_fields(path, actual, spec, data.frame, mapping)
        actual_names[spec.name] = actual
        if spec.geometry is None:
            if spec.name == "project":
                frame = _coerce(path, actual, spec, frame, profile.inputs)
                project = _validate_project(path, actual, frame)
            layers[spec.name] = pd.DataFrame(frame.drop(columns="geometry", errors="ignore"))
            continue
        given_by = (
            f"the [cad] crs of {mapping.source}"
            if spec.name in mapping.cad_layers and mapping.cad_crs
            else None
        )
        crs = layer_crs(path, actual, data.crs)
        frame = validate_spatial(path, actual, spec, frame, crs, profile, crs_given_by=given_by)
        input_crss.append(crs_label(crs))
        frame = to_crs(frame, area_crs)
        frame, layer_repairs = repair_invalid(spec, frame, path, actual)
        repairs.extend(layer_repairs)
        layers[spec.name] = frame
    path = main_path
    for spec in specs:
        if spec.name in layers and spec.name != "project":
            where = Path(mapping.files[spec.name]) if spec.name in mapping.files else path
            layers[spec.name] = _coerce(
                where, actual_names[spec.name], spec, layers[spec.name], profile.inputs
            )
            _validate_values(path, actual_names[spec.name], spec, layers[spec.name])
    return layers, input_crss, repairs, project


def check_coordinates(
    path: Optional[PathArg],
    layer: str,
    frame: gpd.GeoDataFrame,
    crs: CRS,
    profile: RulesProfile,
    crs_given_by: Optional[str] = None,
) -> None:
    """Every vertex a finite number, and each feature's extent inside the area where ``crs`` is
    used (EPSG's bounds, widened by the profile's [inputs] crs_area_margin_degrees): coordinates
    that do not fit their CRS (state-plane feet labelled EPSG:4326, UTM metres labelled
    EPSG:2260, a vertex typed as 1e15) are refused here, before any geometry work.
    ``crs_given_by`` names where the CRS was given (``--crs``, a mapping file's ``[cad] crs``):
    the fix then points there, not to the layer's properties in QGIS."""
    geometries = np.asarray(frame.geometry.values, dtype=object)
    if len(geometries) == 0:
        return
    coords = shapely.get_coordinates(geometries)
    finite = np.isfinite(coords).all(axis=1)
    if not finite.all():
        owner = np.repeat(np.arange(len(geometries)), shapely.get_num_coordinates(geometries))
        first = int(np.flatnonzero(~finite)[0])
        shown = ", ".join(repr(float(c)) for c in coords[first])
        raise InputError(
            f"a vertex at ({shown}) is not a finite number",
            path=path,
            layer=layer,
            feature=frame.index[owner[first]],
            fix="correct or delete that vertex in QGIS (Vertex Tool)",
        )
    bounds = shapely.bounds(geometries)  # minx, miny, maxx, maxy per feature
    xs = np.concatenate([bounds[:, 0], bounds[:, 0], bounds[:, 2], bounds[:, 2]])
    ys = np.concatenate([bounds[:, 1], bounds[:, 3], bounds[:, 1], bounds[:, 3]])
    # Layers hold x = easting or longitude (GIS order), whatever the CRS's axis order.
    with np.errstate(all="ignore"):
        lon, lat = transformer(crs, 4326).transform(xs, ys, errcheck=False)  # built once per CRS
    lon, lat = np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)
    margin = profile.inputs.crs_area_margin_degrees
    fix = (
        f"give {crs_given_by} the CRS the coordinates are really in (the area's is "
        f"{crs_label(profile.area_crs)}), or correct the coordinate"
        if crs_given_by
        else "set the CRS the coordinates are really in (QGIS: Layer Properties > Source, "
        "then save the layer again), or correct the coordinate"
    )
    # Two areas, for every CRS, coded or not (issue 36 items 10, 11): the layer's own CRS's
    # area of use where it declares one, and always the profile's: the area of use of its
    # area CRS, where the chapter applies. A CRS without declared bounds (a custom WKT) is
    # still checked against the profile's area, so that a vertex at 1e15 or metres read as
    # feet are refused here, before any geometry work.
    areas = []
    own = _area_of_use(crs)
    if own is not None:
        areas.append((own, f"the area where the layer's CRS {crs_label(crs)} ({crs.name}) is used"))
    profile_area = _area_of_use(crs_of(profile.area_crs))
    if profile_area is not None:
        areas.append(
            (
                profile_area,
                f"the area this rules profile reviews (the area of use of its [profile] area_crs "
                f"{crs_label(profile.area_crs)}; the layer's CRS is {crs_label(crs)} ({crs.name}))",
            )
        )
    for area, said in areas:
        inside = np.isfinite(lon) & np.isfinite(lat)
        inside &= (lat >= area.south - margin) & (lat <= area.north + margin)
        if area.west <= area.east:  # an area of use across the antimeridian: latitude only
            inside &= (lon >= area.west - margin) & (lon <= area.east + margin)
        outside = ~inside.reshape(4, len(geometries)).all(axis=0)
        if outside.any():
            i = int(np.flatnonzero(outside)[0])
            extent = ", ".join(f"{v:.6g}" for v in bounds[i])
            k = [i, i + len(geometries), i + 2 * len(geometries), i + 3 * len(geometries)]
            read = (
                f"read as longitude {np.nanmin(lon[k]):.4g} to {np.nanmax(lon[k]):.4g}, latitude "
                f"{np.nanmin(lat[k]):.4g} to {np.nanmax(lat[k]):.4g}"
                if np.isfinite(lon[k]).all() and np.isfinite(lat[k]).all()
                else "which no longitude and latitude can be made of"
            )
            raise InputError(
                f"the feature's coordinates ({extent}; {read}) lie outside {said} "
                f"(longitude {area.west:g} to {area.east:g}, latitude {area.south:g} to "
                f"{area.north:g}, widened by {margin:g} degree(s), the profile's [inputs] "
                "crs_area_margin_degrees): the coordinates are not in that CRS, "
                "or a coordinate is mistyped, or the site is not where this profile's chapter applies",
                path=path,
                layer=layer,
                feature=frame.index[i],
                parameter=("crs", "map") if crs_given_by else None,  # the command's, whichever
                fix=fix,
            )


def _area_of_use(crs: CRS) -> Optional[AreaOfUse]:
    """The CRS's area of use; a CRS read from WKT often lacks it, and its EPSG twin has it."""
    if crs.area_of_use is not None:
        return crs.area_of_use
    code = epsg_code(crs)
    return crs_of(code).area_of_use if code else None


def _coerce(
    path: PathArg, layer: str, spec: LayerSpec, frame: pd.DataFrame, inputs: Optional[Inputs] = None
) -> pd.DataFrame:
    """Each contract field of ``frame`` as its type; InputError naming the feature and field."""
    frame = frame.copy()
    for field_spec in spec.fields:
        if field_spec.name in frame.columns:
            read = _READERS.get(field_spec.type, _texts)
            where = _Where(path, layer, field_spec, inputs)
            frame[field_spec.name] = read(where, frame.index, frame[field_spec.name])
    return frame


@dataclass(frozen=True)
class _Where:
    """The file, layer and field whose values are being read, for the errors."""

    path: PathArg
    layer: str
    spec: FieldSpec
    inputs: Optional[Inputs] = None  # the profile's range of dates

    def refuse(self, fid: object, problem: str, fix: str) -> NoReturn:
        name = self.spec.name
        raise InputError(
            f"{name} is {problem}", path=self.path, layer=self.layer, feature=fid, field=name, fix=fix
        )

    def number(
        self, fid: object, value: object, word: str = "a number", minimum: Optional[float] = None
    ) -> Optional[float]:
        return _number(
            self.path,
            self.layer,
            fid,
            self.spec.name,
            value if present(value) else None,
            minimum=minimum,
            word=word,
        )


def _numbers(where: _Where, index: pd.Index, values: Iterable[object]) -> pd.Series:
    out: list[Optional[float]] = []
    for fid, value in zip(index, values):
        number = where.number(fid, value, minimum=where.spec.minimum)
        if where.spec.type == INTEGER and number is not None:
            if not number.is_integer():
                where.refuse(fid, f"{value!r}, not a whole number", "enter a whole number")
            number = int(number)
        out.append(number)
    if where.spec.type == REAL:
        return pd.Series([np.nan if v is None else v for v in out], index=index, dtype=float)
    return pd.Series(out, index=index, dtype=object if None in out else np.int64)


def _booleans(where: _Where, index: pd.Index, values: Iterable[object]) -> pd.Series:
    """0/1 (as numbers or text, or a spelling of BOOLEAN_WORDS) as False/True; empty is False."""
    out = []
    for fid, value in zip(index, values):
        word = BOOLEAN_WORDS.get(value.strip().lower()) if isinstance(value, str) else None
        if word is not None:
            out.append(word)
            continue
        number = where.number(fid, value, word="1 or 0 (or yes or no)")
        if number not in (None, 0, 1):
            where.refuse(
                fid, f"{value!r}; it must be 1 or 0 (or yes or no)", "use 1 for yes, 0 (or empty) for no"
            )
        out.append(bool(number))
    return pd.Series(out, index=index, dtype=bool)


def _dates(where: _Where, index: pd.Index, values: Iterable[object]) -> pd.Series:
    name = where.spec.name
    out = []
    for fid, value in zip(index, values):
        place = dict(path=where.path, layer=where.layer, feature=fid, field=name)
        day = require_date(value, name, fix="write the date as YYYY-MM-DD, or leave it empty", **place)
        if where.inputs is not None:
            day = in_range(
                day,
                where.inputs.earliest_date,
                where.inputs.latest_date,
                name,
                fix="correct the date (the profile's [inputs] gives the range)",
                **place,
            )
        out.append(day)
    return pd.Series(out, index=index, dtype=object)


def _codes(where: _Where, index: pd.Index, values: Iterable[object]) -> pd.Series:
    """A listed code, matched whatever its case and spacing, as the contract spells it."""
    allowed = where.spec.allowed
    canonical = {code.lower(): code for code in allowed}
    fix = f"set {where.spec.name} to one of the listed values"
    out = []
    for fid, value in zip(index, values):
        if not has_text(value):
            if not where.spec.may_be_empty:
                where.refuse(fid, f"empty, not one of {', '.join(allowed)}", fix)
            out.append(value)
            continue
        code = canonical.get(str(value).strip().lower())
        if code is None:
            where.refuse(fid, f"{value!r}, not one of {', '.join(allowed)}", fix)
        out.append(code)
    return pd.Series(out, index=index, dtype=object)


def _texts(where: _Where, index: pd.Index, values: pd.Series) -> pd.Series:
    """Text as read; where the field may not be empty, every feature must give some."""
    if not where.spec.may_be_empty:
        for fid, value in zip(index, values):
            if not has_text(value):
                where.refuse(fid, "empty", f"give every feature a {where.spec.name}")
    return values


_READERS: dict[str, Callable[[_Where, pd.Index, pd.Series], pd.Series]] = {
    REAL: _numbers,
    INTEGER: _numbers,
    BOOLEAN: _booleans,
    DATE: _dates,
    CODED: _codes,
}


def _validate_values(path: PathArg, layer: str, spec: LayerSpec, frame: pd.DataFrame) -> None:
    """What a field's type alone does not say: where the contract says so, ids are unique
    (findings name features by them; two easements both 'E-1' would be ambiguous)."""
    if not spec.unique_ids or spec.id_field not in frame.columns:
        return
    seen: dict[str, object] = {}
    for fid, value in zip(frame.index, frame[spec.id_field]):
        if not has_text(value):
            continue
        key = str(value).strip()
        if key in seen:
            raise InputError(
                f"{spec.id_field} '{key}' is also the {spec.id_field} of feature "
                f"{seen[key]}; findings name features by it",
                path=path,
                layer=layer,
                feature=fid,
                field=spec.id_field,
                fix=f"give each feature of '{layer}' a {spec.id_field} of its own",
            )
        seen[key] = fid


def _blank_as_missing(frame: pd.DataFrame) -> pd.DataFrame:
    """Blank text as a missing value (a CSV table's empty cells are empty text)."""
    for column in frame.columns:
        values = frame[column]
        if pd.api.types.is_object_dtype(values) or pd.api.types.is_string_dtype(values):
            blank = values.map(lambda v: isinstance(v, str) and not v.strip()).astype(bool)
            if blank.any():
                frame[column] = values.astype(object).where(~blank, None)
    return frame


def _cad_layer(
    path: Path, layer_names: dict[str, str], spec: LayerSpec, mapping: FieldMap, cache: dict[str, LayerData]
) -> LayerData:
    """The entities of a CAD export on the CAD layers ``mapping`` names for ``spec``, as a layer.

    Boundaries become polygons; the drawing's CRS is ``[cad] crs`` (a DXF has none); the
    disturbance's phase is the pattern's first group and its dates come from ``[cad] schedule``.
    The contract fields a drawing cannot give are empty.
    """
    pattern = mapping.cad_layers[spec.name]
    given_by = mapping.given_by(spec.name).replace("[layers]", "[cad.layers]")
    if "entities" not in cache:
        if len(layer_names) != 1:
            raise InputError(
                f"[cad.layers] maps CAD layer names, and the file has "
                f"{len(layer_names)} layers, not a drawing's one layer of entities",
                path=path,
                fix="give the DXF or DWG export itself",
            )
        cache["entities"] = read_layer(path, next(iter(layer_names.values())))
    entities = cache["entities"]
    layer_name = f"{entities.name} ({pattern})"
    matched, groups = cad_layer_matches(
        path, entities.name, entities.frame, pattern, parameter="map", given_by=given_by
    )
    if not matched.any():
        raise none_matched(
            path,
            entities.name,
            entities.frame,
            pattern,
            given_by,
            "map",
            fix=f"give [cad.layers] {spec.name} in {mapping.source} as the name "
            "of one of the drawing's CAD layers listed (or a pattern "
            "matching them)",
        )
    frame = entities.frame[matched]
    crs = entities.crs
    if mapping.cad_crs:
        try:
            crs = CRS.from_user_input(mapping.cad_crs)
        except CRSError as err:
            raise InputError(
                f"[cad] crs {mapping.cad_crs!r} is not a coordinate reference system ({err})",
                path=mapping.source,
                fix="give an EPSG code such as EPSG:2260",
            ) from None
    if crs is None:
        raise InputError(
            "the drawing has no coordinate reference system (a CAD export rarely has one)",
            path=path,
            parameter="map",
            fix=f'give it as crs = "EPSG:..." in the [cad] table of {mapping.source}',
        )
    geometry = (
        cad_areas(path, layer_name, frame)
        if spec.geometry == ("polygon",)
        else np.asarray(frame.geometry.values, dtype=object)
    )
    columns: dict[str, list[Any]] = {name: [None] * len(frame) for name in spec.field_names}
    if spec.name == "disturbance":
        phases = [phase_name(g) for g, hit in zip(groups, matched) if hit]
        columns["phase"] = phases
        if mapping.cad_schedule:
            columns["start_date"], columns["stabilized_date"] = dates_by_phase(
                phases, read_schedule(mapping.cad_schedule), path, mapping.cad_schedule, "map"
            )
    out = gpd.GeoDataFrame(columns, geometry=list(geometry), index=frame.index, crs=crs)
    return LayerData(name=layer_name, frame=out, crs=crs, spatial=True)


def match_layer_names(path: PathArg, names: Iterable[str]) -> dict[str, str]:
    """Lower-case name -> actual layer name, for matching case-insensitively."""
    matched: dict[str, str] = {}
    for name in names:
        key = name.lower()
        if key in matched:
            raise InputError(
                f"two layers differ only in case: '{matched[key]}' and '{name}'",
                path=path,
                layer=name,
                fix="rename or remove one of them",
            )
        matched[key] = name
    return matched


def normalise_fields(
    path: PathArg, layer: str, spec: LayerSpec, frame: pd.DataFrame, mapping: FieldMap = NO_MAPPING
) -> pd.DataFrame:
    """Contract fields renamed to their contract names (matched in any case, or as ``mapping``
    says); a missing one is an error naming it."""
    geometry_name = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    by_lower: dict[str, object] = {}
    for column in frame.columns:
        if column != geometry_name:
            by_lower.setdefault(str(column).lower(), column)
    mapped = mapping.source_fields(spec.name)
    wanted = {f: mapped.get(f, f).lower() for f in spec.field_names}
    found = ", ".join(map(str, by_lower.values())) or "none"
    for contract, source in mapped.items():
        if source.lower() not in by_lower:
            raise InputError(
                f"the field '{source}', which {mapping.given_by(spec.name, contract)} "
                f"names for '{contract}', is missing (fields found: {found})",
                path=path,
                layer=layer,
                field=source,
                fix="name one of the fields found in the mapping",
            )
    _refuse_cut_names(path, layer, spec, wanted, by_lower, mapped)
    missing = [f for f in spec.required_fields if wanted[f] not in by_lower]
    if missing:
        raise InputError(
            f"required field(s) {', '.join(repr(f) for f in missing)} missing (fields found: {found})",
            path=path,
            layer=layer,
            field=missing[0],
            fix=f"add the field(s) to layer '{layer}' as docs/CONTRACT.md describes"
            + (", or map them to fields of the layer" if mapping else ""),
            parameter="map" if mapping else None,
        )
    sources = {by_lower[wanted[f]] for f in mapped}
    # A column already named like a mapped contract field gives way to the mapped one.
    shadowed = [
        c for c in frame.columns if c != geometry_name and str(c).lower() in mapped and c not in sources
    ]
    renames = {
        by_lower[wanted[f]]: f for f in spec.field_names if wanted[f] in by_lower and by_lower[wanted[f]] != f
    }
    if shadowed:
        frame = frame.drop(columns=shadowed)
    return frame.rename(columns=renames) if renames else frame


def _refuse_cut_names(
    path: PathArg,
    layer: str,
    spec: LayerSpec,
    wanted: dict[str, str],
    by_lower: dict[str, object],
    mapped: dict[str, str],
) -> None:
    """Contract fields missing where fields hold their names cut to a .dbf's 10 characters
    (``pond_swamp`` for ``pond_swamp_pct``): refused naming each pair, an optional field
    included, which would otherwise be left out without a word."""
    cut: dict[str, str] = {}
    for name in spec.field_names:
        if name in mapped or wanted[name] in by_lower or len(name) <= DBF_NAME_LENGTH:
            continue
        found = by_lower.get(name[:DBF_NAME_LENGTH].lower())
        if found is not None:
            cut[str(found)] = name
    if cut:
        pairs = ", ".join(f"'{found}' looks like '{name}'" for found, name in cut.items())
        raise InputError(
            f"the field(s) {pairs} cut to {DBF_NAME_LENGTH} characters (as a "
            f"shapefile cuts field names), and {', '.join(map(repr, cut.values()))} "
            "missing",
            path=path,
            layer=layer,
            field=next(iter(cut)),
            fix="rename the field(s) to the contract's names and save the layer as "
            "GeoPackage, or map each contract field to its field in the "
            "mapping's [fields]",
        )


def _validate_project(path: PathArg, layer: str, frame: pd.DataFrame) -> dict[str, Any]:
    """The project table's one row, its fields already read as their types."""
    if len(frame) != 1:
        raise InputError(
            f"the project table has {len(frame)} rows; it must have exactly one",
            path=path,
            layer=layer,
            fix="keep one row describing the project",
        )
    return {
        k: (None if not present(v) else v.item() if isinstance(v, np.generic) else v)
        for k, v in frame.iloc[0].items()
        if k != "geometry"
    }


def layer_crs(path: Optional[PathArg], layer: str, crs: Optional[CRS]) -> CRS:
    """The layer's CRS; InputError where it has none."""
    if crs is None:
        raise InputError(
            "the layer has no coordinate reference system (or an undefined one)",
            path=path,
            layer=layer,
            fix="assign the layer's true CRS in QGIS (Layer Properties > Source) and save it again",
        )
    return crs


def validate_spatial(
    path: Optional[PathArg],
    layer: str,
    spec: LayerSpec,
    frame: pd.DataFrame,
    crs: Optional[CRS],
    profile: RulesProfile,
    crs_given_by: Optional[str] = None,
) -> gpd.GeoDataFrame:
    if spec.geometry is None:
        raise ValueError(f"'{spec.name}' is a table of the contract, not a spatial layer")
    crs = layer_crs(path, layer, crs)
    if not isinstance(frame, gpd.GeoDataFrame):
        raise InputError(
            "the layer has no geometry",
            path=path,
            layer=layer,
            fix=f"'{spec.name}' must hold {' or '.join(spec.geometry)} features",
        )
    if spec.required and len(frame) == 0:
        raise InputError(
            "the layer has no features",
            path=path,
            layer=layer,
            fix=f"draw the site's {spec.name.replace('_', ' ')} (SWPPP B(2))",
        )
    geometries = np.asarray(frame.geometry.values, dtype=object)
    missing = shapely.is_missing(geometries) | shapely.is_empty(geometries)
    if missing.any():
        fid = frame.index[np.flatnonzero(missing)[0]]
        raise InputError(
            f"{int(missing.sum())} feature(s) have no geometry",
            path=path,
            layer=layer,
            feature=fid,
            fix="draw the feature or delete it",
        )
    wrong = ~in_family(geometries, *spec.geometry)
    if wrong.any():
        fid = frame.index[np.flatnonzero(wrong)[0]]
        kind = shapely.get_type_id(geometries[np.flatnonzero(wrong)[0]])
        raise InputError(
            f"a {shapely.GeometryType(kind).name.title()} where "
            f"{' or '.join(spec.geometry)} geometry is required",
            path=path,
            layer=layer,
            feature=fid,
            fix="move the feature to the right layer",
        )
    check_coordinates(path, layer, frame, crs, profile, crs_given_by)
    return frame


def repair_invalid(
    spec: LayerSpec, frame: gpd.GeoDataFrame, path: Optional[PathArg], layer: str
) -> tuple[gpd.GeoDataFrame, list[Repair]]:
    """make_valid for invalid geometries only, keeping the layer's geometry family. A feature
    that repair leaves empty (a degenerate polygon: a curve of no area, a sliver of one line)
    is refused by its id (issue 36 item 13): reviewing the layer without it would read as if
    the feature were not drawn."""
    geometries = np.asarray(frame.geometry.values, dtype=object)
    invalid = ~shapely.is_valid(geometries)
    if not invalid.any():
        return frame, []
    reasons = shapely.is_valid_reason(geometries[invalid])
    fixed = shapely.make_valid(geometries[invalid])
    if spec.geometry == ("polygon",):
        fixed = np.array([polygon_part(g) for g in fixed], dtype=object)
    emptied = shapely.is_missing(fixed) | shapely.is_empty(fixed)
    if emptied.any():
        first = int(np.flatnonzero(emptied)[0])
        raise InputError(
            f"{int(emptied.sum())} feature(s) are invalid ({reasons[first]}) and repair leaves "
            f"nothing of them of the layer's kind ({' or '.join(spec.geometry or ())}): the feature "
            "would be reviewed as if it were not drawn",
            path=path,
            layer=layer,
            feature=frame.index[np.flatnonzero(invalid)[first]],
            fix="redraw the feature (QGIS: Vertex Tool, or Check Validity) or delete it",
        )
    geometries = geometries.copy()
    geometries[invalid] = fixed
    frame = frame.set_geometry(gpd.GeoSeries(geometries, index=frame.index, crs=frame.crs))
    labels = np.asarray(feature_labels(spec.name, frame, spec.id_field), dtype=object)
    repairs = [Repair(label, reason, geom) for label, reason, geom in zip(labels[invalid], reasons, fixed)]
    for r in repairs:
        log.info("repaired %s: %s", r.feature, r.reason)
    return frame, repairs


def _number(
    path: PathArg,
    layer: str,
    fid: object,
    field_name: str,
    value: Any,  # whatever the file holds: float() decides, its errors are the user's
    minimum: Optional[float] = None,
    word: str = "a number",
) -> Optional[float]:
    if value is None:
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(
            f"{field_name} is {value!r}, not {word}",
            path=path,
            layer=layer,
            feature=fid,
            field=field_name,
            fix=f"enter {word} or leave it empty",
        ) from None
    if not math.isfinite(number):
        shown = value.item() if isinstance(value, np.generic) else value  # inf, not np.float64(inf)
        raise InputError(
            f"{field_name} is {shown!r}, not a finite number",
            path=path,
            layer=layer,
            feature=fid,
            field=field_name,
            fix=f"enter {word} or leave it empty",
        )
    if minimum is not None and number < minimum:
        raise InputError(
            f"{field_name} is {number}, below {minimum}",
            path=path,
            layer=layer,
            feature=fid,
            field=field_name,
            fix="enter the true value",
        )
    return number
