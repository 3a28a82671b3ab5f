"""Reading a reference-layer source (OGR file, ATTAINS JSON, PWL table) into the contract, validated.

Every source becomes one :class:`Candidate`: a GeoDataFrame with exactly the contract's fields
for the layer (CONTRACT.md, "Reference layers"), its CRS, the sha256 of what was read, and an
:class:`ImportReport` saying what was repaired and what was rejected and why. Nothing here
writes; :mod:`analysis.reference.store` stores a candidate as a new version.
"""
from __future__ import annotations

import csv
import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional
from collections.abc import Iterator

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..errors import InputError
from ..geometry import as_multi, in_family
from ..profile import read_toml
from ..io.vector import layer_feature_count, list_layers, read_layer, read_layer_batches
from ..siteplan.mapping import fill_template, template_fields

__all__ = ["REFERENCE_LAYERS", "ReferenceLayerSpec", "Candidate", "ImportReport", "FORMATS",
           "read_candidate", "stream_candidate", "normalize_pollutants", "source_sha256", "BATCH"]

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


REFERENCE_LAYERS = {spec.name: spec for spec in (
    ReferenceLayerSpec("wetlands", "wetland_id",
                       {"wetland_id": "text", "source": "text", "wetland_class": "text",
                        "regulated": "integer", "adjacent_area_ft": "real"}, POLYGONS),
    ReferenceLayerSpec("impaired_waters", "waterbody_id",
                       {"waterbody_id": "text", "name": "text", "pollutants": "text",
                        "listing_cycle": "text", "category": "text"}, LINES + POLYGONS),
    ReferenceLayerSpec("tmdl_watersheds", "watershed_id",
                       {"watershed_id": "text", "name": "text", "pollutants": "text",
                        "tmdl_id": "text", "stormwater_source": "integer"}, POLYGONS),
    ReferenceLayerSpec("catchments", "catchment_id",
                       {"catchment_id": "text", "name": "text", "drains_to": "text"}, POLYGONS),
)}
# Fields that may be empty in a source; every other contract field must be present and filled.
OPTIONAL_VALUES = {"adjacent_area_ft", "name", "drains_to", "listing_cycle", "category",
                   "wetland_class"}
FORMATS = ("ogr", "attains", "pwl")
_MAX_LISTED = 20  # rejected features listed by label; the rest are counted
# Features read, validated, repaired and written per batch by a streamed import: its memory.
BATCH = 20_000


@dataclass
class ImportReport:
    """What validation did: features read, repaired and rejected (with the reason for each)."""

    read: int = 0
    repaired: list = field(default_factory=list)  # labels
    rejected: list = field(default_factory=list)  # (label, reason)
    skipped: list = field(default_factory=list)  # (label, reason): not part of this layer
    notes: list = field(default_factory=list)

    def clear(self) -> None:
        """Empty again, for a streamed candidate read once more."""
        self.read = 0
        for items in (self.repaired, self.rejected, self.skipped, self.notes):
            items.clear()

    def note(self, text: str) -> None:
        if text not in self.notes:  # a streamed source says it once, not once per batch
            self.notes.append(text)

    def reject(self, label, reason):
        self.rejected.append((str(label), reason))

    def lines(self) -> list[str]:
        out = [f"{self.read} feature(s) read, {len(self.repaired)} invalid geometry(ies) repaired "
               f"with make_valid, {len(self.rejected)} rejected, {len(self.skipped)} skipped"]
        for kind, rows in (("rejected", self.rejected), ("skipped", self.skipped)):
            for label, reason in rows[:_MAX_LISTED]:
                out.append(f"  {kind} {label}: {reason}")
            if len(rows) > _MAX_LISTED:
                out.append(f"  ... and {len(rows) - _MAX_LISTED} more {kind}")
        out += [f"  note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict:
        return {"read": self.read, "repaired": list(self.repaired),
                "rejected": [{"feature": f, "reason": r} for f, r in self.rejected],
                "skipped": [{"feature": f, "reason": r} for f, r in self.skipped],
                "notes": list(self.notes)}


@dataclass
class Candidate:
    """A validated layer ready to be stored as a new version: whole (``frame``), or streamed
    (``stream`` yields it batch by batch, validated as it is read; the report is complete, and
    a repeated id or an empty layer raised, only once the last batch is read)."""

    layer: str
    frame: Optional[gpd.GeoDataFrame]  # contract fields + geometry, ids unique, geometries valid
    source: str
    sha256: str
    report: ImportReport
    crs: object = None
    stream: Optional[Callable[[], Iterator[gpd.GeoDataFrame]]] = None
    expected: Optional[int] = None  # features in the source, where it says

    def chunks(self, size: int = BATCH) -> Iterator[gpd.GeoDataFrame]:
        """The features, ``size`` at a time (a streamed candidate: its batches)."""
        if self.stream is not None:
            yield from self.stream()
            return
        assert self.frame is not None
        for start in range(0, len(self.frame), size):
            yield self.frame.iloc[start:start + size]

    def geometry_type(self) -> str:
        """The layer's geometry type as a GeoPackage names it (GEOMETRY where mixed)."""
        if self.stream is not None:  # streamed: polygon layers only, promoted to multi
            return "MULTIPOLYGON"
        assert self.frame is not None
        kinds = set(self.frame.geom_type)
        return kinds.pop().upper() if len(kinds) == 1 else "GEOMETRY"


def read_candidate(layer: str, source: str | Path, fmt: str = "ogr", *,
                   geometry: str | Path | None = None, mapping: str | Path | None = None,
                   synonyms: Optional[dict] = None) -> Candidate:
    """Read ``source`` as reference layer ``layer`` and validate it against the contract.

    Parameters
    ----------
    layer : one of :data:`REFERENCE_LAYERS`.
    source : an OGR vector file (``path`` or ``path|layername=NAME``), an ATTAINS JSON
        response, or a PWL table (CSV), as ``fmt`` says.
    geometry : for ``attains`` and ``pwl``, the vector file whose features carry the
        geometries, joined by id (``NY`` + PWL id is the same water as the PWL id).
    mapping : a TOML field mapping (docs/REFERENCE.md, "Field mappings"), applied to the OGR source or
        to the geometry file.
    synonyms : pollutant name -> the name it is stored as (profile ``[reference]``).

    Raises
    ------
    InputError
        Where the layer cannot be imported at all (no CRS, a required field missing, ids
        repeated, nothing left): nothing is written then.
    """
    spec = _spec(layer)
    if fmt not in FORMATS:
        raise InputError(f"unknown source format '{fmt}'", fix="use one of " + ", ".join(FORMATS),
                         parameter="format")
    path, source_layer = _split_source(source)
    hashed = [path] + ([Path(geometry)] if geometry else []) + ([Path(mapping)] if mapping else [])
    rules = _load_mapping(mapping) if mapping else {}
    report = ImportReport()
    if fmt == "ogr":
        if geometry:
            raise InputError("a geometry file is only for the attains and pwl formats",
                             path=geometry, parameter="geometry",
                             fix="leave it out: an OGR source carries its own geometries")
        frame = _apply_mapping(_read_vector(path, source_layer, layer), rules, spec, path)
    else:
        if not geometry:
            raise InputError(f"the {fmt} format needs a geometry file: the file whose features "
                             "carry the geometries, joined by id", path=path, parameter="geometry",
                             fix="give a vector file with the ids as the geometry file")
        table = (_attains_table(path, spec, report) if fmt == "attains"
                 else _pwl_table(path, spec, report))
        shapes = _apply_mapping(_read_vector(Path(geometry), None, layer), rules, spec, geometry,
                                only_id=True)
        frame = _join_geometry(table, shapes, spec, report, geometry)
    frame = _validate(frame, spec, report, str(path), synonyms or {})
    return Candidate(layer=layer, frame=frame, source=str(path), sha256=source_sha256(hashed),
                     report=report, crs=frame.crs, expected=len(frame))


def stream_candidate(layer: str, source: str | Path, fmt: str = "ogr", *,
                     geometry: str | Path | None = None, mapping: str | Path | None = None,
                     synonyms: Optional[dict] = None, batch: int = BATCH) -> Candidate:
    """:func:`read_candidate`, streamed where the layer is large: an OGR source of a polygon
    layer (wetlands, TMDL watersheds, catchments) is read, validated and repaired ``batch``
    features at a time as the store writes it, so that memory is bounded by the batch. The
    source's layer, CRS, fields and mapping are checked here, on its first batch, before
    anything is written; a repeated id, a bad number or an empty layer raises while the store
    writes, inside its transaction, which then changes nothing. Other sources (ATTAINS and PWL
    tables joined to geometries, impaired waters) are read whole, as :func:`read_candidate`.
    """
    spec = _spec(layer)
    if fmt != "ogr" or geometry or tuple(spec.geometry_types) != POLYGONS:
        return read_candidate(layer, source, fmt, geometry=geometry, mapping=mapping,
                              synonyms=synonyms)
    path, source_layer = _split_source(source)
    source_layer = _source_layer(path, source_layer, layer)
    rules = _load_mapping(mapping) if mapping else {}
    report = ImportReport()
    synonyms = synonyms or {}

    def stream() -> Iterator[gpd.GeoDataFrame]:
        report.clear()
        seen: set = set()
        repeated: set = set()
        kept = 0
        for data in read_layer_batches(path, source_layer, batch):
            frame = _checked_source(data, path, source_layer)
            frame = _apply_mapping(frame, rules, spec, path)
            frame = _validate_batch(frame, spec, report, str(path), synonyms)
            ids = frame[spec.id_field]
            repeated.update(ids[ids.duplicated()])
            repeated.update(i for i in ids if i in seen)
            seen.update(ids)
            kept += len(frame)
            yield frame
        if repeated:
            raise _repeated_ids(spec, repeated, path, source_layer)
        if not kept:
            raise _nothing_left(spec, path, source_layer)

    first = next(iter(read_layer_batches(path, source_layer, 1)), None)
    if first is None:
        raise _nothing_left(spec, path, source_layer)
    first_frame = _apply_mapping(_checked_source(first, path, source_layer), rules, spec, path)
    _validate_batch(first_frame, spec, ImportReport(), str(path), synonyms)  # fields, CRS: now
    hashed = [path] + ([Path(mapping)] if mapping else [])
    return Candidate(layer=layer, frame=None, source=str(path), sha256=source_sha256(hashed),
                     report=report, crs=first.crs, stream=stream,
                     expected=_feature_count(path, source_layer))

def _spec(layer) -> ReferenceLayerSpec:
    if layer not in REFERENCE_LAYERS:
        raise InputError(f"'{layer}' is not a reference layer",
                         fix="use one of " + ", ".join(REFERENCE_LAYERS))
    return REFERENCE_LAYERS[layer]


def _split_source(source) -> tuple[Path, Optional[str]]:
    text = str(source)
    match = re.match(r"^(.*)\|layername=(.+)$", text)
    if match:
        return Path(match.group(1)), match.group(2)
    return Path(text), None


def source_sha256(paths) -> str:
    """sha256 over the bytes of every file read (a shapefile's side files included), in order."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise InputError("the file does not exist", path=path, fix="check the path")
        files = ([p for p in sorted(path.parent.glob(path.stem + ".*")) if p.is_file()]
                 if path.suffix.lower() == ".shp" else [path])
        for item in files:
            digest.update(item.name.encode() + b"\0")
            with open(item, "rb") as handle:
                for block in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(block)
    return digest.hexdigest()


# --- OGR sources and field mappings ----------------------------------------------------------

def _read_vector(path: Path, source_layer: Optional[str], layer: str) -> gpd.GeoDataFrame:
    source_layer = _source_layer(path, source_layer, layer)
    return _checked_source(read_layer(path, source_layer), path, source_layer)


def _source_layer(path: Path, source_layer: Optional[str], layer: str) -> str:
    """The source's layer to read: the one named, else the one named like ``layer``, else the
    only one."""
    names = list_layers(path)
    if source_layer is None:
        matching = [n for n in names if n.lower() == layer] or (names if len(names) == 1 else [])
        if not matching:
            raise InputError(f"the file has {len(names)} layers ({', '.join(names[:8])}) and none "
                             f"is named '{layer}'", path=path,
                             fix="name one as SOURCE|layername=NAME")
        source_layer = matching[0]
    elif source_layer not in names:
        raise InputError("no such layer in the file", path=path, layer=source_layer,
                         fix="use one of " + ", ".join(names[:8]))
    return source_layer


def _checked_source(data, path: Path, source_layer: str) -> gpd.GeoDataFrame:
    """The source layer's features, refused where it has no geometry or no CRS."""
    if not data.spatial:
        raise InputError("the layer has no geometry", path=path, layer=source_layer,
                         fix="give a layer with geometries (or a geometry file for a table)",
                         parameter=("source", "geometry"))
    if data.crs is None:
        raise InputError("the layer has no CRS", path=path, layer=source_layer,
                         fix="assign the layer's CRS in QGIS (Layer properties > Source) and save")
    frame = data.frame
    frame.attrs["source_layer"] = source_layer
    return frame


def _load_mapping(path) -> dict:
    path = Path(path)
    rules = read_toml(path, "mapping", fix="correct the TOML syntax (docs/REFERENCE.md, 'Field mappings')")
    unknown = set(rules) - {"fields", "constants", "templates"}
    if unknown:
        raise InputError("the mapping has unknown section(s) " + ", ".join(sorted(unknown)),
                         path=path, fix="use [fields], [constants] and [templates] only")
    for table in ("fields", "constants", "templates"):  # each a table; names and templates text
        given = rules.get(table, {})
        if not isinstance(given, dict) or (table != "constants" and not all(
                isinstance(v, str) for v in given.values())):
            raise InputError(f"[{table}] must be a table of contract field = "
                             + ("value" if table == "constants" else '"text"')
                             + f", not {given!r}", path=path, field=table,
                             fix="see docs/REFERENCE.md, 'Field mappings'")
    rules["_path"] = path
    return rules


def _apply_mapping(frame: gpd.GeoDataFrame, rules: dict, spec: ReferenceLayerSpec, path,
                   only_id: bool = False) -> gpd.GeoDataFrame:
    """Contract fields from the source: [fields] renames, [constants], [templates] ("{fid}")."""
    by_lower = {str(c).lower(): c for c in frame.columns if c != frame.geometry.name}
    out = pd.DataFrame(index=frame.index)
    mapped = {}
    for target, source_field in rules.get("fields", {}).items():
        column = by_lower.get(str(source_field).lower())
        if column is None:
            raise InputError(f"the mapping names source field '{source_field}' for '{target}', "
                             "which the source lacks", path=path, field=source_field,
                             fix="correct [fields] in " + str(rules.get("_path")))
        mapped[target] = frame[column]
    for target, template in rules.get("templates", {}).items():
        mapped[target] = _fill_template(frame, template, by_lower, path, rules.get("_path"))
    for target, value in rules.get("constants", {}).items():
        mapped[target] = pd.Series([value] * len(frame), index=frame.index, dtype=object)
    wanted = [spec.id_field] if only_id else list(spec.fields)
    for name in wanted:
        if name in mapped:
            out[name] = mapped[name]
        elif name in by_lower:
            out[name] = frame[by_lower[name]]
    if only_id:
        for name in ("name",):  # a geometry file may name the water; the table may not
            if name in spec.fields and name in by_lower:
                out[name] = frame[by_lower[name]]
    result = gpd.GeoDataFrame(out, geometry=frame.geometry.values, crs=frame.crs)
    result.attrs.update(frame.attrs)
    return result


def _fill_template(frame, template, by_lower, path, mapping_path):
    try:
        names = template_fields(template)
    except ValueError as err:
        raise InputError(f"the template {err}", path=mapping_path, field="templates",
                         fix='write a template as text with field names in braces, e.g. '
                             '"NWI-{fid}"') from None
    values = {}
    for name in names:
        if name == "fid":
            values[name] = frame.index.to_numpy()
        elif name.lower() in by_lower:
            values[name] = frame[by_lower[name.lower()]].to_numpy()
        else:
            raise InputError(f"the template '{template}' names field '{name}', which the source "
                             "lacks", path=path, field=name, fix=f"correct [templates] in {mapping_path}")
    rows = [dict(zip(values, row)) for row in zip(*values.values())] if values else [{}] * len(frame)
    return pd.Series([fill_template(template, row) for row in rows], index=frame.index,
                     dtype=object)


# --- ATTAINS and PWL tables ------------------------------------------------------------------

def _attains_table(path: Path, spec: ReferenceLayerSpec, report: ImportReport) -> pd.DataFrame:
    """ATTAINS ``assessments`` (impaired waters) or ``actions`` (TMDL watersheds), one row per id."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("the file does not exist", path=path, fix="check the path") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"not JSON ({err})", path=path, fix="give an ATTAINS response (JSON)") from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError("not an ATTAINS response: no 'items' list", path=path,
                         fix="save the ATTAINS service's JSON response as it comes")
    if not all(isinstance(item, dict) for item in items):
        raise InputError("not an ATTAINS response: its 'items' are not all objects", path=path,
                         field="items", fix="save the ATTAINS service's JSON response as it comes")
    if spec.name not in ("impaired_waters", "tmdl_watersheds"):
        raise InputError(f"the attains format gives impaired_waters or tmdl_watersheds, not "
                         f"{spec.name}", path=path, fix="import this layer with the ogr format",
                         parameter="format")
    try:  # an item whose parts are not the lists and objects ATTAINS sends
        if spec.name == "impaired_waters":
            rows = [row for item in items for row in _assessment_rows(item, report)]
            kind = "assessments"
        else:
            rows = _tmdl_rows(items, report)
            kind = "actions"
    except (TypeError, AttributeError) as err:
        raise InputError(f"not an ATTAINS response: an item is not shaped as ATTAINS sends it "
                         f"({err})", path=path, field="items",
                         fix="save the ATTAINS service's JSON response as it comes") from None
    if not rows and not report.skipped:
        raise InputError(f"the response has no {kind}", path=path, field=kind,
                         fix=f"give the ATTAINS {kind} response for {spec.name}")
    return pd.DataFrame(rows, columns=list(spec.fields))


def _assessment_rows(item: dict, report: ImportReport):
    cycle = item.get("reportingCycleText")
    for unit in item.get("assessments") or []:
        unit_id = unit.get("assessmentUnitIdentifier")
        causes = [p.get("parameterName") for p in unit.get("parameters") or []
                  if str(p.get("parameterStatusName", "")).strip().lower() == "cause"]
        if not causes:
            report.skipped.append((str(unit_id), "no parameter with status 'Cause' (not impaired)"))
            continue
        yield {"waterbody_id": unit_id, "name": unit.get("assessmentUnitName"),
               "pollutants": ";".join(c for c in causes if c), "listing_cycle": cycle,
               "category": unit.get("epaIRCategory")}


def _tmdl_rows(items, report: ImportReport) -> list[dict]:
    """One row per assessment unit a TMDL action names: its actions, pollutants, sources."""
    units: dict = {}
    for item in items:
        for action in item.get("actions") or []:
            action_id = action.get("actionIdentifier")
            if str(action.get("actionTypeCode", "")).upper() != "TMDL":
                report.skipped.append((str(action_id), f"action type {action.get('actionTypeCode')}"
                                                       " is not TMDL"))
                continue
            waters = (action.get("associatedWaters") or {}).get("specificWaters") or []
            for water in waters:
                unit = units.setdefault(water.get("assessmentUnitIdentifier"),
                                        {"actions": [], "names": [], "pollutants": [], "point": 0})
                unit["actions"].append(str(action_id))
                unit["names"].append(action.get("actionName") or "")
                for pollutant in water.get("associatedPollutants") or []:
                    unit["pollutants"].append(pollutant.get("pollutantName"))
                    source_type = str(pollutant.get("pollutantSourceTypeCode") or "").lower()
                    # Point sources (stormwater permits) are part of the load: "Point source", "Both".
                    if ("point source" in source_type and "nonpoint" not in source_type) \
                            or source_type == "both" or pollutant.get("permits"):
                        unit["point"] = 1
    return [{"watershed_id": unit_id, "name": "; ".join(dict.fromkeys(u["names"])),
             "pollutants": ";".join(p for p in u["pollutants"] if p),
             "tmdl_id": ";".join(dict.fromkeys(u["actions"])), "stormwater_source": u["point"]}
            for unit_id, u in units.items()]


PWL_CAUSE_COLUMNS = ("causes", "cause", "pollutants", "pollutant")


def _pwl_table(path: Path, spec: ReferenceLayerSpec, report: ImportReport) -> pd.DataFrame:
    """NYSDEC PWL rows (``PWL_ID``, ``WIN``, ``NAME``, causes) as impaired waters, ``NY`` + PWL id."""
    if spec.name != "impaired_waters":
        raise InputError(f"the pwl format gives impaired_waters, not {spec.name}", path=path,
                         fix="import this layer with the ogr format", parameter="format")
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            columns = {c.strip().lower(): c for c in (rows[0].keys() if rows else [])}
    except FileNotFoundError:
        raise InputError("the file does not exist", path=path, fix="check the path") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(f"not a readable CSV table ({err})", path=path,
                         fix="save the PWL table as UTF-8 CSV") from None
    for needed in ("pwl_id", "name"):
        if needed not in columns:
            raise InputError("the PWL table lacks a required column", path=path,
                             field=needed.upper(), fix=f"add a {needed.upper()} column")
    cause = next((columns[c] for c in PWL_CAUSE_COLUMNS if c in columns), None)
    if cause is None:
        raise InputError("the PWL table has no causes column, so no water in it can be called "
                         "impaired", path=path, field="CAUSES",
                         fix="add a CAUSES column (pollutants separated by ';')")
    cycle = columns.get("listing_cycle") or columns.get("cycle") or columns.get("year")
    category = columns.get("category")
    out = []
    for row in rows:
        pwl_id = (row[columns["pwl_id"]] or "").strip()
        causes = [c.strip() for c in (row[cause] or "").split(";") if c.strip()]
        if not causes:
            report.skipped.append((pwl_id, "no causes (not impaired)"))
            continue
        out.append({"waterbody_id": pwl_id if pwl_id.upper().startswith("NY") else "NY" + pwl_id,
                    "name": row[columns["name"]], "pollutants": ";".join(causes),
                    "listing_cycle": row[cycle] if cycle else None,
                    "category": row[category] if category else None})
    return pd.DataFrame(out, columns=list(spec.fields))


def _join_key(ids: pd.Series) -> pd.Series:
    """The id both systems share: New York's ATTAINS ids are ``NY`` + the PWL id."""
    return ids.astype(str).str.strip().str.upper().str.replace(r"^NY", "", regex=True)


def _join_geometry(table: pd.DataFrame, shapes: gpd.GeoDataFrame, spec, report, geometry_path):
    """Attach the geometry file's features to the table's rows by id."""
    if spec.id_field not in shapes.columns:
        raise InputError("the geometry file lacks the id field", path=geometry_path,
                         field=spec.id_field,
                         fix=f"add '{spec.id_field}' or map it in a field mapping ([fields] "
                             f"{spec.id_field} = \"YOUR_FIELD\")", parameter="mapping")
    shapes = shapes.assign(_key=_join_key(shapes[spec.id_field])).drop_duplicates("_key")
    keyed = shapes.set_index("_key")
    keys = _join_key(table[spec.id_field])
    found = keys.isin(keyed.index).to_numpy()
    frame = gpd.GeoDataFrame(table.reset_index(drop=True),
                             geometry=keyed.geometry.reindex(keys).to_numpy(), crs=shapes.crs)
    if "name" in frame.columns and "name" in keyed.columns:
        names = keyed["name"].reindex(keys).to_numpy()
        empty = frame["name"].isna().to_numpy() | (frame["name"].astype(str).str.strip() == "").to_numpy()
        frame["name"] = np.where(empty, names, frame["name"].to_numpy())
    for unit_id in frame.loc[~found, spec.id_field]:
        report.reject(unit_id, f"no feature with this id in {Path(geometry_path).name}")
    frame = frame[found]
    frame.attrs["source_layer"] = shapes.attrs.get("source_layer")
    return frame


# --- validation -------------------------------------------------------------------------------

def normalize_pollutants(text, synonyms: dict) -> Optional[str]:
    """``;``-separated pollutant names, upper case, synonyms folded, sorted, each once.

    >>> normalize_pollutants("Phosphorus, total;PHOSPHORUS; sulfates",
    ...                      {"PHOSPHORUS, TOTAL": "PHOSPHORUS", "SULFATES": "SULFATE"})
    'PHOSPHORUS;SULFATE'
    """
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    folded = {str(k).upper(): str(v).upper() for k, v in synonyms.items()}
    names = [re.sub(r"\s+", " ", part).strip().upper() for part in str(text).split(";")]
    names = [folded.get(n, n) for n in names if n]
    return ";".join(sorted(set(names))) or None


def _validate(frame: gpd.GeoDataFrame, spec: ReferenceLayerSpec, report: ImportReport,
              path: str, synonyms: dict) -> gpd.GeoDataFrame:
    """The whole layer in the contract: each feature as :func:`_validate_batch` has it, ids
    unique, something left."""
    layer_label = frame.attrs.get("source_layer")
    rejected_before = len(report.rejected)  # rows the table refused before the join
    frame = _validate_batch(frame, spec, report, path, synonyms)
    report.read += rejected_before
    repeated = frame[spec.id_field][frame[spec.id_field].duplicated(keep=False)]
    if len(repeated):
        raise _repeated_ids(spec, set(repeated), path, layer_label)
    if frame.empty:
        raise _nothing_left(spec, path, layer_label)
    return frame


def _repeated_ids(spec, repeated, path, layer_label) -> InputError:
    shown = sorted(repeated)[:10]
    return InputError(f"{spec.id_field} is not unique: {len(repeated)} id(s) repeat "
                      f"({', '.join(shown)})", path=path, layer=layer_label, field=spec.id_field,
                      fix="give every feature its own id (or merge the repeated ones)")


def _nothing_left(spec, path, layer_label) -> InputError:
    return InputError(f"no feature of the source can be imported into '{spec.name}'",
                      path=path, layer=layer_label, fix="see the rejected features above")


def _feature_count(path, layer) -> Optional[int]:
    """How many features the source says it holds (None where it does not say)."""
    return layer_feature_count(path, layer)


def _validate_batch(frame: gpd.GeoDataFrame, spec: ReferenceLayerSpec, report: ImportReport,
                    path: str, synonyms: dict) -> gpd.GeoDataFrame:
    """One batch's features in the contract: ids present, geometries checked and repaired,
    values typed, pollutants folded (what does not need the whole layer)."""
    layer_label = frame.attrs.get("source_layer")
    if frame.crs is None:
        raise InputError("the source has no CRS", path=path, layer=layer_label,
                         fix="assign the CRS in QGIS and save the layer again")
    missing = [f for f in spec.fields if f not in frame.columns and f not in OPTIONAL_VALUES]
    if missing:
        raise InputError(f"a required field of '{spec.name}' is missing ({', '.join(missing)})",
                         path=path, layer=layer_label, field=missing[0],
                         fix=f"add the field, or map a source field to it in a field mapping "
                             f"([fields] {missing[0]} = \"SOURCE_FIELD\")", parameter="mapping")
    report.read += len(frame)
    for name in spec.fields:
        if name not in frame.columns:
            frame[name] = None
            report.note(f"the source has no '{name}'; it is left empty")
    frame = frame[list(spec.fields) + [frame.geometry.name]].copy()
    ids = frame[spec.id_field]
    blank = ids.isna() | (ids.astype(str).str.strip() == "")
    for fid in frame.index[blank]:
        report.reject(f"feature {fid}", f"no {spec.id_field}")
    frame = frame[~blank]
    frame[spec.id_field] = frame[spec.id_field].astype(str).str.strip()
    frame = frame.set_geometry(_checked_geometries(frame, spec, report))
    frame = frame[frame.geometry.notna()]
    for name, kind in spec.fields.items():  # object columns: an empty value stays None, not NaN
        frame[name] = pd.Series(_typed(frame[name], kind, name, path, layer_label),
                                index=frame.index, dtype=object)
    for name in ("pollutants",):
        if name in frame.columns:
            frame[name] = pd.Series([normalize_pollutants(v, synonyms) for v in frame[name]],
                                    index=frame.index, dtype=object)
    return frame.reset_index(drop=True)


def _checked_geometries(frame, spec, report) -> gpd.GeoSeries:
    """Null, empty and wrongly typed geometries rejected; invalid ones repaired (counted)."""
    geoms = np.array(list(frame.geometry.array), dtype=object)  # a copy: repairs go in here
    labels = frame[spec.id_field].to_numpy()
    missing = shapely.is_missing(geoms) | shapely.is_empty(geoms)
    invalid = ~missing & ~shapely.is_valid(geoms)
    for index in np.flatnonzero(invalid):
        geoms[index] = _allowed_parts(shapely.make_valid(geoms[index]), spec.geometry_types)
        report.repaired.append(str(labels[index]))
    kinds = np.array([None if g is None else g.geom_type for g in geoms], dtype=object)
    wrong = ~missing & ~np.isin(kinds, spec.geometry_types)
    for index in np.flatnonzero(missing):
        report.reject(labels[index], "no geometry (null or empty)")
    for index in np.flatnonzero(wrong & (kinds != None)):  # noqa: E711 - numpy comparison
        report.reject(labels[index], f"{kinds[index]} is not a {' or '.join(spec.geometry_types)}")
    for index in np.flatnonzero(wrong & (kinds == None)):  # noqa: E711
        report.reject(labels[index], "nothing of the allowed type left after repair")
    geoms[missing | wrong] = None
    return gpd.GeoSeries(_promoted(geoms), index=frame.index, crs=frame.crs)


def _allowed_parts(geom, allowed):
    """The parts of a repaired geometry of the layer's kind (make_valid may add lines/points)."""
    if geom.geom_type in allowed:
        return geom
    parts = [p for p in shapely.get_parts(geom) if p.geom_type in allowed]
    if not parts:
        return None
    polygons = [p for p in parts if in_family([p], "polygon")[0]]
    return shapely.union_all(polygons if polygons else parts)


def _promoted(geoms) -> np.ndarray:
    """Polygons as MultiPolygons and lines as MultiLineStrings: one geometry type per family."""
    return as_multi(geoms, ("polygon", "line"))


def _typed(column: pd.Series, kind: str, name, path, layer_label) -> list:
    """Values as Python text / int / float (None where empty); a bad number is an error."""
    out: list[object] = []
    for label, value in column.items():
        if value is None or (isinstance(value, float) and np.isnan(value)) or \
                (isinstance(value, str) and value.strip() == "") or value is pd.NA:
            out.append(None)
        elif kind == "text":
            plain = value.item() if hasattr(value, "item") and not isinstance(value, str) else value
            out.append(str(plain).strip())
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InputError(f"'{value}' is not a number", path=path, layer=layer_label,
                                 feature=label, field=name, fix=f"give {name} as a number") from None
            out.append(int(number) if kind == "integer" else number)
    return out
