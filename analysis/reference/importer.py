"""Reading a reference-layer source (OGR file, ATTAINS JSON, PWL table) into the contract, validated.

Every source becomes one :class:`Candidate`: a GeoDataFrame with exactly the contract's fields
for the layer (docs/CONTRACT.md, "Reference layers"), its CRS, the sha256 of what was read, and an
:class:`ImportReport` saying what was repaired and what was rejected and why. Nothing here
writes; :mod:`analysis.reference.store` stores a candidate as a new version.
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Callable, Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..errors import InputError
from ..geometry import as_multi, geometry_array, in_family
from ..io.vector import layer_feature_count, list_layers, read_layer, read_layer_batches
from ..limits import IMPORT_BATCH_VERTICES
from ..profile import Categories, load_profile, read_toml
from ..siteplan.contract import BOOLEAN_WORDS
from ..siteplan.mapping import fill_template, template_fields
from .contract import FORMATS, POLYGONS, REFERENCE_LAYERS, ReferenceLayerSpec
from .derive import upstream_watersheds

__all__ = [
    "REFERENCE_LAYERS",
    "ReferenceLayerSpec",
    "Candidate",
    "ImportReport",
    "FORMATS",
    "StormwaterReading",
    "read_candidate",
    "stream_candidate",
    "normalize_pollutants",
    "source_sha256",
    "normalize_category",
    "BATCH",
]


@dataclass(frozen=True)
class StormwaterReading:
    """How an ATTAINS TMDL's pollutant source type is read ([reference] profile switches).

    ``point_source``: a "Point source" or "Both" load counts as stormwater being a source (the
    point sources of a TMDL's wasteload allocation include permitted stormwater discharges).
    ``nonpoint_source``: a "Nonpoint source" load counts as stormwater being a source. Where a
    reading is off, the unit's ``stormwater_source`` stays NULL (unknown), never 0.
    """

    point_source: bool = True
    nonpoint_source: bool = False


_MAX_LISTED = 20  # rejected features listed by label; the rest are counted
# Features read, validated, repaired and written per batch by a streamed import: its memory.
BATCH = 5_000


@dataclass
class ImportReport:
    """What validation did: features read, repaired and rejected (with the reason for each)."""

    read: int = 0
    repaired: list = field(default_factory=list)  # labels
    rejected: list = field(default_factory=list)  # (label, reason)
    skipped: list = field(default_factory=list)  # (label, reason): not part of this layer
    notes: list = field(default_factory=list)
    tmdl_ids: set = field(default_factory=set)  # ids of the source's units that have a TMDL
    rejected_geometries: dict = field(default_factory=dict)  # label -> the geometry rejected

    def clear(self) -> None:
        """Empty again, for a streamed candidate read once more."""
        self.read = 0
        for items in (
            self.repaired,
            self.rejected,
            self.skipped,
            self.notes,
            self.tmdl_ids,
            self.rejected_geometries,
        ):
            items.clear()

    def note(self, text: str) -> None:
        if text not in self.notes:  # a streamed source says it once, not once per batch
            self.notes.append(text)

    def reject(self, label, reason, geometry=None):
        self.rejected.append((str(label), reason))
        if geometry is not None:
            self.rejected_geometries[str(label)] = geometry

    @property
    def rejected_with_tmdl(self) -> list[str]:
        """The rejected units that have a TMDL (what a review would miss)."""
        return [label for label, _ in self.rejected if label in self.tmdl_ids]

    def lines(self) -> list[str]:
        out = [
            f"{self.read} feature(s) read, {len(self.repaired)} invalid geometry(ies) repaired "
            f"with make_valid, {len(self.rejected)} rejected "
            f"({len(self.rejected_with_tmdl)} with a TMDL), {len(self.skipped)} skipped"
        ]
        for kind, rows in (("rejected", self.rejected), ("skipped", self.skipped)):
            for label, reason in rows[:_MAX_LISTED]:
                out.append(f"  {kind} {label}: {reason}")
            if len(rows) > _MAX_LISTED:
                out.append(f"  ... and {len(rows) - _MAX_LISTED} more {kind}")
        out += [f"  note: {n}" for n in self.notes]
        return out

    def to_dict(self) -> dict:
        return {
            "read": self.read,
            "repaired": list(self.repaired),
            "rejected": [
                {"feature": f, "reason": r, "has_tmdl": f in self.tmdl_ids} for f, r in self.rejected
            ],
            "rejected_with_tmdl": len(self.rejected_with_tmdl),
            "skipped": [{"feature": f, "reason": r} for f, r in self.skipped],
            "notes": list(self.notes),
        }


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
    source_date: Optional[str] = None  # as the source itself dates it (None: it does not)
    source_date_from: Optional[str] = None  # where in the source that date was read
    method: Optional[str] = None  # how a derived layer was made (None: as published)
    rejections_accepted: bool = False  # the user accepted rejections over the profile's limit
    stable_ids: bool = True  # False where the ids are feature numbers ({fid}): diff by geometry
    # Called once every feature is written, inside the store's transaction (the counts of a
    # streamed import are complete only then): raising refuses the import (rolled back).
    on_written: Optional[Callable[[], None]] = None
    cleanup: Optional[Callable[[], None]] = None  # what the source left (a zip's extraction)

    def chunks(self, size: int = BATCH) -> Iterator[gpd.GeoDataFrame]:
        """The features, ``size`` at a time (a streamed candidate: its batches)."""
        if self.stream is not None:
            yield from self.stream()
            return
        assert self.frame is not None
        for start in range(0, len(self.frame), size):
            yield self.frame.iloc[start : start + size]

    def geometry_type(self) -> str:
        """The layer's geometry type as a GeoPackage names it (GEOMETRY where mixed)."""
        if self.stream is not None:  # streamed: polygon layers only, promoted to multi
            return "MULTIPOLYGON"
        assert self.frame is not None
        kinds = set(self.frame.geom_type.dropna())  # waters imported without geometry have none
        return kinds.pop().upper() if len(kinds) == 1 else "GEOMETRY"

    def close(self) -> None:
        """Remove what reading the source left behind (a zip member extracted)."""
        if self.cleanup is not None:
            self.cleanup()
            self.cleanup = None


def read_candidate(
    layer: str,
    source: str | Path,
    fmt: str = "ogr",
    *,
    geometry: str | Path | None = None,
    mapping: str | Path | None = None,
    synonyms: Optional[dict] = None,
    causes: str | Path | None = None,
    reading: Optional[StormwaterReading] = None,
    catchments: Optional[gpd.GeoDataFrame] = None,
    categories: Optional[Categories] = None,
) -> Candidate:
    """Read ``source`` as reference layer ``layer`` and validate it against the contract.

    Parameters
    ----------
    layer : one of :data:`REFERENCE_LAYERS`.
    source : an OGR vector file (``path``, ``path|layername=NAME``, a zip as published:
        ``x.zip``, ``zip://x.zip!inner.shp``, ``/vsizip/x.zip/inner.shp``), an ATTAINS JSON
        response, or a PWL table (CSV), as ``fmt`` says.
    geometry : for ``attains`` and ``pwl``, the vector file whose features carry the
        geometries, joined by id (``NY`` + PWL id is the same water as the PWL id). Optional
        for ``impaired_waters``: without it the waters are stored without geometry and a
        review looks them up by id and name.
    mapping : a TOML field mapping (docs/REFERENCE.md, "Field mappings"), applied to the OGR
        source or to the geometry file (every field it maps, not the id alone).
    synonyms : pollutant name -> the name it is stored as (profile ``[reference]``).
    causes : for ``pwl``, an ATTAINS ``assessments`` response whose causes, category and
        TMDL links are joined to the PWL rows by id.
    reading : how ATTAINS pollutant source types are read for ``stormwater_source``.
    catchments : for ``tmdl_watersheds`` from ``attains``: catchments (``catchment_id``,
        ``drains_to``) from which each unit's watershed is derived; ``geometry`` then gives
        the assessment units themselves (lines or polygons), not their watersheds.
    categories : the rules profile's ``[categories]`` (by default the shipped profile's): a
        water of a ``not_impaired`` category is skipped (reported); one of a category the
        profile does not name is refused, naming the water, the value and the fix.

    Raises
    ------
    InputError
        Where the layer cannot be imported at all (no CRS, a required field missing, ids
        repeated, nothing left): nothing is written then.
    """
    spec = _spec(layer)
    categories = categories or load_profile().categories
    if fmt not in FORMATS:
        raise InputError(
            f"unknown source format '{fmt}'", fix="use one of " + ", ".join(FORMATS), parameter="format"
        )
    path, source_layer, inner = _split_source(source)
    hashed = (
        [path]
        + ([Path(geometry)] if geometry else [])
        + ([Path(mapping)] if mapping else [])
        + ([Path(causes)] if causes else [])
    )
    rules = _load_mapping(mapping) if mapping else {}
    report = ImportReport()
    dated: tuple[Optional[str], Optional[str]] = (None, None)
    if causes and fmt != "pwl":
        raise InputError(
            "a causes file is only for the pwl format", path=causes, parameter="causes", fix="leave it out"
        )
    if fmt == "ogr":
        if geometry:
            raise InputError(
                "a geometry file is only for the attains and pwl formats",
                path=geometry,
                parameter="geometry",
                fix="leave it out: an OGR source carries its own geometries",
            )
        with _Opened(path, inner, layer) as opened:
            frame = _apply_mapping(_read_vector(opened, source_layer, layer), rules, spec, path)
            dated = _ogr_date(path, opened, frame.attrs.get("source_layer"))
        if spec.name == "tmdl_watersheds":
            report.tmdl_ids.update(_ids(frame, spec))
    else:
        if fmt == "attains":
            table, dated = _attains_table(path, spec, report, reading or StormwaterReading(), categories)
        else:
            table = _pwl_table(path, spec, report, categories, causes)
        if spec.name == "tmdl_watersheds":
            report.tmdl_ids.update(_ids(table, spec))
        elif "tmdl_id" in table.columns:
            report.tmdl_ids.update(_ids(table[table["tmdl_id"].map(_filled)], spec))
        if geometry:
            shapes = _apply_mapping(
                _read_vector(Path(geometry), None, layer), rules, spec, geometry, only_id=True
            )
            frame = _join_geometry(table, shapes, spec, report, geometry)
            if catchments is not None and spec.name == "tmdl_watersheds":
                frame = _derived(frame, catchments, spec, report)
        elif spec.name == "impaired_waters":
            frame = gpd.GeoDataFrame(
                table.reset_index(drop=True), geometry=[None] * len(table), crs=NO_GEOMETRY_CRS
            )
            frame.attrs["no_geometry"] = True
            report.notes.append(
                "no geometry file: the waters are stored without geometry; a "
                "review finds them by waterbody_id and name"
            )
        else:
            raise InputError(
                f"the {fmt} format needs a geometry file for {spec.name}: the file "
                "whose features carry the geometries, joined by id",
                path=path,
                parameter="geometry",
                fix="give a vector file with the ids as the geometry file (see "
                "docs/REFERENCE.md, 'TMDL watershed polygons')",
            )
    frame = _validate(frame, spec, report, str(path), synonyms or {}, categories)
    return Candidate(
        layer=layer,
        frame=frame,
        source=str(source),
        sha256=source_sha256(hashed),
        report=report,
        crs=frame.crs,
        expected=len(frame),
        source_date=dated[0],
        source_date_from=dated[1],
        stable_ids=not (fmt == "ogr" and _fid_ids(rules, spec)),
    )


# Waters imported without a geometry file carry none; the store still needs a CRS to declare.
NO_GEOMETRY_CRS = "EPSG:4326"


def _filled(value) -> bool:
    return (
        value is not None and not (isinstance(value, float) and np.isnan(value)) and str(value).strip() != ""
    )


def _ids(frame, spec) -> set:
    return (
        {str(v).strip() for v in frame[spec.id_field] if _filled(v)}
        if spec.id_field in frame.columns
        else set()
    )


def _fid_ids(rules: dict, spec: ReferenceLayerSpec) -> bool:
    """Whether the mapping makes the ids from feature numbers (``{fid}``): not stable."""
    return "{fid" in str(rules.get("templates", {}).get(spec.id_field, ""))


def stream_candidate(
    layer: str,
    source: str | Path,
    fmt: str = "ogr",
    *,
    geometry: str | Path | None = None,
    mapping: str | Path | None = None,
    synonyms: Optional[dict] = None,
    causes: str | Path | None = None,
    reading: Optional[StormwaterReading] = None,
    catchments: Optional[gpd.GeoDataFrame] = None,
    batch: Optional[int] = None,
    categories: Optional[Categories] = None,
) -> Candidate:
    """:func:`read_candidate`, streamed where the layer is large: an OGR source of a polygon
    layer (wetlands, TMDL watersheds, catchments; a zip as published included) is read,
    validated and repaired ``batch`` features at a time as the store writes it, so that memory
    is bounded by the batch. The source's layer, CRS, fields, mapping and date are checked
    here, on its first feature, before anything is written; a repeated id, a bad number or an
    empty layer raises while the store writes, inside its transaction, which then changes
    nothing. The report (read, repaired, rejected, units with a TMDL) is complete once the last
    batch is written. Other sources (ATTAINS and PWL tables, small, joined to geometries;
    impaired waters) are read whole, as :func:`read_candidate`. Call :meth:`Candidate.close`
    once done (a zip's member is extracted to a temporary directory).
    """
    spec = _spec(layer)
    if fmt != "ogr" or geometry or causes or catchments is not None or tuple(spec.geometry_types) != POLYGONS:
        return read_candidate(
            layer,
            source,
            fmt,
            geometry=geometry,
            mapping=mapping,
            synonyms=synonyms,
            causes=causes,
            reading=reading,
            catchments=catchments,
            categories=categories,
        )
    batch = batch or BATCH
    path, source_layer, inner = _split_source(source)
    hashed = [path] + ([Path(mapping)] if mapping else [])
    sha256 = source_sha256(hashed)  # the file as given (a zip: the zip), before it is opened
    rules = _load_mapping(mapping) if mapping else {}
    report = ImportReport()
    synonyms = synonyms or {}
    categories = categories or load_profile().categories
    opener = _Opened(path, inner, layer)
    opened = opener.__enter__()
    try:
        source_layer = _source_layer(opened, source_layer, layer)
        first = next(iter(read_layer_batches(opened, source_layer, 1)), None)
        if first is None:
            raise _nothing_left(spec, path, source_layer, ImportReport())
        first_frame = _apply_mapping(_checked_source(first, path, source_layer), rules, spec, path)
        _validate_batch(first_frame, spec, ImportReport(), str(path), synonyms, categories)  # fields, CRS
        dated = _ogr_date(path, opened, source_layer)
        expected = _feature_count(opened, source_layer)
        # Features read at once: as many as hold IMPORT_BATCH_VERTICES vertices, by the first
        # features' size (each read is cut to that bound as well, for the larger ones later).
        sample = next(iter(read_layer_batches(opened, source_layer, 100)), None)
        size = batch
        if sample is not None and sample.spatial and len(sample.frame):
            mean = float(np.mean(shapely.get_num_coordinates(np.asarray(sample.frame.geometry.array))))
            size = max(1, min(batch, int(IMPORT_BATCH_VERTICES // max(mean, 1.0))))
    except BaseException:
        opener.__exit__(None, None, None)
        raise

    def batches(into: ImportReport) -> Iterator[gpd.GeoDataFrame]:
        from .store import read_ahead  # (store imports this module)

        # GDAL reads the next batch in a thread of its own while this one is validated (and
        # the store's writer writes the one before): three stages, one batch waiting in each.
        for data in read_ahead(read_layer_batches(opened, source_layer, size)):
            whole = _apply_mapping(_checked_source(data, path, source_layer), rules, spec, path)
            for frame in vertex_bounded(whole, IMPORT_BATCH_VERTICES):
                if spec.name == "tmdl_watersheds":  # every unit of this layer has a TMDL
                    into.tmdl_ids.update(_ids(frame, spec))
                yield _validate_batch(frame, spec, into, str(path), synonyms, categories)

    def stream() -> Iterator[gpd.GeoDataFrame]:
        report.clear()
        hashes = []  # the ids' 64-bit hashes (8 bytes a feature, not the ids themselves)
        for frame in batches(report):
            hashes.append(_id_hashes(frame[spec.id_field]))
            yield frame
        hashed = np.sort(np.concatenate(hashes)) if hashes else np.zeros(0, np.uint64)
        if not len(hashed):
            raise _nothing_left(spec, path, source_layer, report)
        twice = np.unique(hashed[1:][hashed[1:] == hashed[:-1]])
        if len(twice):  # rare: the ids behind the repeated hashes, read again to name them
            counts: dict = {}
            for frame in batches(ImportReport()):
                ids = frame[spec.id_field]
                for i in ids[np.isin(_id_hashes(ids), twice)]:
                    counts[i] = counts.get(i, 0) + 1
            repeated = {i for i, n in counts.items() if n > 1}
            if repeated:
                raise _repeated_ids(spec, repeated, path, source_layer)

    return Candidate(
        layer=layer,
        frame=None,
        source=str(source),
        sha256=sha256,
        report=report,
        crs=first.crs,
        stream=stream,
        expected=expected,
        source_date=dated[0],
        source_date_from=dated[1],
        stable_ids=not _fid_ids(rules, spec),
        cleanup=lambda: opener.__exit__(None, None, None),
    )


def vertex_bounded(frame: gpd.GeoDataFrame, limit: int) -> Iterator[gpd.GeoDataFrame]:
    """``frame`` in consecutive pieces of at most ``limit`` vertices (a feature with more is a
    piece of its own), whole where it holds no more."""
    counts = shapely.get_num_coordinates(np.asarray(frame.geometry.array))
    if int(counts.sum()) <= limit:
        yield frame
        return
    ends = np.cumsum(counts)
    start = 0
    while start < len(frame):
        before = int(ends[start - 1]) if start else 0
        end = max(start + 1, int(np.searchsorted(ends, before + limit, side="right")))
        yield frame.iloc[start:end]
        start = end


def _id_hashes(ids: pd.Series) -> np.ndarray:
    """64-bit hashes of ids (text), to find repeats across batches in bounded memory."""
    return pd.util.hash_array(ids.to_numpy(dtype=object))


def _spec(layer) -> ReferenceLayerSpec:
    if layer not in REFERENCE_LAYERS:
        raise InputError(
            f"'{layer}' is not a reference layer", fix="use one of " + ", ".join(REFERENCE_LAYERS)
        )
    return REFERENCE_LAYERS[layer]


def _split_source(source) -> tuple[Path, Optional[str], Optional[str]]:
    """(the file as given, the layer name, the member inside a zip) of a source text.

    >>> _split_source("zip:///d/nwi.zip!DC/DC_Wetlands.shp")
    (PosixPath('/d/nwi.zip'), None, 'DC/DC_Wetlands.shp')
    >>> _split_source("/vsizip//d/nwi.zip/DC/DC_Wetlands.shp|layername=DC_Wetlands")
    (PosixPath('/d/nwi.zip'), 'DC_Wetlands', 'DC/DC_Wetlands.shp')
    """
    text = str(source)
    layer = None
    match = re.match(r"^(.*)\|layername=(.+)$", text)
    if match:
        text, layer = match.group(1), match.group(2)
    match = re.match(r"^zip://(.+?\.zip)(?:!(.*))?$", text, re.IGNORECASE) or re.match(
        r"^/vsizip/(.+?\.zip)(?:/(.*))?$", text, re.IGNORECASE
    )
    if match:  # /vsizip/ then the zip's path: /vsizip//abs/x.zip/member, /vsizip/rel.zip/member
        return Path(match.group(1)), layer, (match.group(2) or None)
    return Path(text), layer, None


class _Opened:
    """The vector file to read: the path itself, or a zip's member extracted to a temporary
    directory (both engines read a plain file; the sha256 is taken of the zip as given)."""

    def __init__(self, path: Path, inner: Optional[str], layer: str = ""):
        self.path, self.inner, self.layer = path, inner, layer
        self._temp: Optional[tempfile.TemporaryDirectory] = None

    def __enter__(self) -> Path:
        if self.path.suffix.lower() != ".zip" and self.inner is None:
            return self.path
        if not self.path.exists():
            raise InputError("the file does not exist", path=self.path, fix="check the path")
        try:
            archive = zipfile.ZipFile(self.path)
        except zipfile.BadZipFile as err:
            raise InputError(
                f"not a readable zip file ({err})", path=self.path, fix="download the file again"
            ) from None
        with archive:
            names = archive.namelist()
            member = self.inner or _zip_member(names, self.path, self.layer)
            if member not in names:
                raise InputError(
                    f"the zip holds no '{member}'",
                    path=self.path,
                    fix="name one of " + ", ".join(n for n in names if _vector_name(n))[:300],
                )
            self._temp = tempfile.TemporaryDirectory(prefix="swppp-zip-")
            stem = member.rsplit(".", 1)[0]
            for name in names:  # a shapefile's side files (.dbf, .prj, .shx, ...)
                if name == member or (name.rsplit(".", 1)[0] == stem and not name.endswith("/")):
                    archive.extract(name, self._temp.name)
        return Path(self._temp.name) / member

    def __exit__(self, *exc) -> None:
        if self._temp is not None:
            self._temp.cleanup()


def _vector_name(name: str) -> bool:
    return name.lower().endswith((".shp", ".gpkg", ".geojson", ".json", ".gdb", ".fgb"))


def _zip_member(names, path, layer: str = "") -> str:
    """The one vector file in a zip, or the one named like the layer (NWI's ``XX_Wetlands.shp``)."""
    found = [n for n in names if _vector_name(n) and not n.startswith("__MACOSX")]
    if len(found) > 1 and layer:
        found = [
            n for n in found if n.rsplit("/", 1)[-1].rsplit(".", 1)[0].lower().endswith(layer.lower())
        ] or found
    if len(found) != 1:
        raise InputError(
            f"the zip holds {len(found)} vector files ({', '.join(found[:8])})",
            path=path,
            fix="name one as zip://FILE.zip!MEMBER",
        )
    return found[0]


def _ogr_date(path: Path, opened: Path, source_layer: Optional[str]) -> tuple[Optional[str], Optional[str]]:
    """The date the source gives itself: a GeoPackage layer's last_change, a shapefile's DBF
    header date, or a zip member's date; (None, None) where the file says nothing."""
    if opened.suffix.lower() == ".gpkg":
        try:
            with closing(sqlite3.connect(f"file:{opened}?mode=ro", uri=True)) as con:
                row = con.execute(
                    "SELECT last_change FROM gpkg_contents WHERE lower(table_name) = lower(?)",
                    (source_layer or "",),
                ).fetchone()
        except sqlite3.Error:
            row = None
        if row and row[0]:
            return str(row[0])[:10], "gpkg_contents.last_change"
    if opened.suffix.lower() == ".shp":
        dbf = opened.with_suffix(".dbf")
        if not dbf.exists():
            dbf = opened.with_suffix(".DBF")
        if dbf.exists():
            head = dbf.read_bytes()[:4]
            try:
                day = date(1900 + head[1], head[2], head[3])
            except (ValueError, IndexError):
                day = None
            if day is not None:
                return day.isoformat(), "the DBF header's date of last update"
    if path.suffix.lower() == ".zip":
        parts = opened.parts
        for start in range(len(parts)):  # the member's name: the extracted path's tail
            member = "/".join(parts[start:])
            with zipfile.ZipFile(path) as archive:
                if member in archive.namelist():
                    stamp = archive.getinfo(member).date_time
                    return date(*stamp[:3]).isoformat(), f"the date of {member} in the zip"
    return None, None


def source_sha256(paths) -> str:
    """sha256 over the bytes of every file read (a shapefile's side files included), in order."""
    digest = hashlib.sha256()
    for path in paths:
        path = Path(path)
        if not path.exists():
            raise InputError("the file does not exist", path=path, fix="check the path")
        files = (
            [p for p in sorted(path.parent.glob(path.stem + ".*")) if p.is_file()]
            if path.suffix.lower() == ".shp"
            else [path]
        )
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
            raise InputError(
                f"the file has {len(names)} layers ({', '.join(names[:8])}) and none is named '{layer}'",
                path=path,
                fix="name one as SOURCE|layername=NAME",
            )
        source_layer = matching[0]
    elif source_layer not in names:
        raise InputError(
            "no such layer in the file",
            path=path,
            layer=source_layer,
            fix="use one of " + ", ".join(names[:8]),
        )
    return source_layer


def _checked_source(data, path: Path, source_layer: str) -> gpd.GeoDataFrame:
    """The source layer's features, refused where it has no geometry or no CRS."""
    if not data.spatial:
        raise InputError(
            "the layer has no geometry",
            path=path,
            layer=source_layer,
            fix="give a layer with geometries (or a geometry file for a table)",
            parameter=("source", "geometry"),
        )
    if data.crs is None:
        raise InputError(
            "the layer has no CRS",
            path=path,
            layer=source_layer,
            fix="assign the layer's CRS in QGIS (Layer properties > Source) and save",
        )
    frame = data.frame
    frame.attrs["source_layer"] = source_layer
    return frame


def _load_mapping(path) -> dict:
    path = Path(path)
    rules = read_toml(path, "mapping", fix="correct the TOML syntax (docs/REFERENCE.md, 'Field mappings')")
    unknown = set(rules) - {"fields", "constants", "templates"}
    if unknown:
        raise InputError(
            "the mapping has unknown section(s) " + ", ".join(sorted(unknown)),
            path=path,
            fix="use [fields], [constants] and [templates] only",
        )
    for table in ("fields", "constants", "templates"):  # each a table; names and templates text
        given = rules.get(table, {})
        if not isinstance(given, dict) or (
            table != "constants" and not all(isinstance(v, str) for v in given.values())
        ):
            raise InputError(
                f"[{table}] must be a table of contract field = "
                + ("value" if table == "constants" else '"text"')
                + f", not {given!r}",
                path=path,
                field=table,
                fix="see docs/REFERENCE.md, 'Field mappings'",
            )
    rules["_path"] = path
    return rules


def _apply_mapping(
    frame: gpd.GeoDataFrame, rules: dict, spec: ReferenceLayerSpec, path, only_id: bool = False
) -> gpd.GeoDataFrame:
    """Contract fields from the source: [fields] renames, [constants], [templates] ("{fid}")."""
    by_lower = {str(c).lower(): c for c in frame.columns if c != frame.geometry.name}
    out = pd.DataFrame(index=frame.index)
    mapped = {}
    for target, source_field in rules.get("fields", {}).items():
        column = by_lower.get(str(source_field).lower())
        if column is None:
            raise InputError(
                f"the mapping names source field '{source_field}' for '{target}', which the source lacks",
                path=path,
                field=source_field,
                fix="correct [fields] in " + str(rules.get("_path")),
            )
        mapped[target] = frame[column]
    for target, template in rules.get("templates", {}).items():
        mapped[target] = _fill_template(frame, template, by_lower, path, rules.get("_path"))
    for target, value in rules.get("constants", {}).items():
        mapped[target] = pd.Series([value] * len(frame), index=frame.index, dtype=object)
    # A geometry file gives the id, and every field it maps or names (the table's own values
    # come first where it has them: _join_geometry fills only what the table leaves empty).
    for name in spec.fields:
        if name in mapped:
            out[name] = mapped[name]
        elif name in by_lower and (not only_id or name in (spec.id_field, "name")):
            out[name] = frame[by_lower[name]]
    result = gpd.GeoDataFrame(out, geometry=frame.geometry.values, crs=frame.crs)
    result.attrs.update(frame.attrs)
    return result


def _fill_template(frame, template, by_lower, path, mapping_path):
    try:
        names = template_fields(template)
    except ValueError as err:
        raise InputError(
            f"the template {err}",
            path=mapping_path,
            field="templates",
            fix='write a template as text with field names in braces, e.g. "NWI-{fid}"',
        ) from None
    values = {}
    for name in names:
        if name == "fid":
            values[name] = frame.index.to_numpy()
        elif name.lower() in by_lower:
            values[name] = frame[by_lower[name.lower()]].to_numpy()
        else:
            raise InputError(
                f"the template '{template}' names field '{name}', which the source lacks",
                path=path,
                field=name,
                fix=f"correct [templates] in {mapping_path}",
            )
    rows = [dict(zip(values, row)) for row in zip(*values.values())] if values else [{}] * len(frame)
    return pd.Series([fill_template(template, row) for row in rows], index=frame.index, dtype=object)


# --- ATTAINS and PWL tables ------------------------------------------------------------------


def _read_json(path: Path, what: str) -> list:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("the file does not exist", path=path, fix="check the path") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(
            f"not JSON ({err})", path=path, fix=f"give an ATTAINS {what} response (JSON)"
        ) from None
    items = data.get("items") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(
            "not an ATTAINS response: no 'items' list",
            path=path,
            fix="save the ATTAINS service's JSON response as it comes",
        )
    if not all(isinstance(item, dict) for item in items):
        raise InputError(
            "not an ATTAINS response: its 'items' are not all objects",
            path=path,
            field="items",
            fix="save the ATTAINS service's JSON response as it comes",
        )
    return items


def _attains_table(
    path: Path,
    spec: ReferenceLayerSpec,
    report: ImportReport,
    reading: StormwaterReading,
    categories: Categories,
) -> tuple[pd.DataFrame, tuple]:
    """ATTAINS ``assessments`` (impaired waters) or ``actions`` (TMDL watersheds), one row per
    id, and the date the response gives itself (its reporting cycle; the latest action's)."""
    if spec.name not in ("impaired_waters", "tmdl_watersheds"):
        raise InputError(
            f"the attains format gives impaired_waters or tmdl_watersheds, not {spec.name}",
            path=path,
            fix="import this layer with the ogr format",
            parameter="format",
        )
    kind = "assessments" if spec.name == "impaired_waters" else "actions"
    items = _read_json(path, kind)
    try:  # an item whose parts are not the lists and objects ATTAINS sends
        if spec.name == "impaired_waters":
            rows = [row for item in items for row in _assessment_rows(item, report, categories, path)]
            cycles = sorted({str(i.get("reportingCycleText")) for i in items if i.get("reportingCycleText")})
            dated = (cycles[-1], "the reporting cycle (reportingCycleText)") if cycles else (None, None)
        else:
            rows = _tmdl_rows(items, report, reading)
            days = sorted(
                {
                    str(a.get("completionDate"))[:10]
                    for i in items
                    for a in i.get("actions") or []
                    if a.get("completionDate")
                }
            )
            dated = (days[-1], "the latest action's completionDate") if days else (None, None)
    except (TypeError, AttributeError) as err:
        raise InputError(
            f"not an ATTAINS response: an item is not shaped as ATTAINS sends it ({err})",
            path=path,
            field="items",
            fix="save the ATTAINS service's JSON response as it comes",
        ) from None
    if not rows and not report.skipped:
        raise InputError(
            f"the response has no {kind}",
            path=path,
            field=kind,
            fix=f"give the ATTAINS {kind} response for {spec.name}",
        )
    return pd.DataFrame(rows, columns=list(spec.fields)), dated


def normalize_category(text) -> Optional[str]:
    """An Integrated Report category as stored: ``"5"``, ``"4a"``, ... (None where absent).

    >>> [normalize_category(c) for c in ("4A", " 5 ", None, "")]
    ['4a', '5', None, None]
    """
    if text is None or str(text).strip() == "":
        return None
    return str(text).strip().lower()


def _assessment_rows(item: dict, report: ImportReport, categories: Categories, path):
    """Impaired units (a category of the profile's impaired kinds, or no category and a
    cause) with their causes, category and the TMDL actions linked to the causes."""
    cycle = item.get("reportingCycleText")
    for unit in item.get("assessments") or []:
        unit_id = unit.get("assessmentUnitIdentifier")
        category = normalize_category(unit.get("epaIRCategory"))
        causes = [
            p
            for p in unit.get("parameters") or []
            if str(p.get("parameterStatusName", "")).strip().lower() == "cause"
        ]
        skip = _not_impaired(unit.get("epaIRCategory"), unit_id, categories, path, "epaIRCategory")
        if skip:
            report.skipped.append((str(unit_id), skip))
            continue
        if category is None and not causes:
            report.skipped.append((str(unit_id), "no parameter with status 'Cause' (not impaired)"))
            continue
        actions = [
            str(a.get("associatedActionIdentifier"))
            for p in causes
            for a in p.get("associatedActions") or []
            if a.get("associatedActionIdentifier")
        ]
        yield {
            "waterbody_id": unit_id,
            "name": unit.get("assessmentUnitName"),
            "pollutants": ";".join(p.get("parameterName") for p in causes if p.get("parameterName")) or None,
            "listing_cycle": cycle,
            "category": category,
            "tmdl_id": ";".join(dict.fromkeys(actions)) or None,
        }


_POINT = ("point source", "both")


def _tmdl_rows(items, report: ImportReport, reading: StormwaterReading) -> list[dict]:
    """One row per assessment unit a TMDL action names: its actions, pollutants, and whether
    stormwater is a source: 1 where the action says so (as ``reading`` reads its source
    types), NULL where it does not; never 0, which no ATTAINS action states."""
    units: dict = {}
    for item in items:
        for action in item.get("actions") or []:
            action_id = action.get("actionIdentifier")
            if str(action.get("actionTypeCode", "")).upper() != "TMDL":
                report.skipped.append(
                    (str(action_id), f"action type {action.get('actionTypeCode')} is not TMDL")
                )
                continue
            waters = (action.get("associatedWaters") or {}).get("specificWaters") or []
            for water in waters:
                unit = units.setdefault(
                    water.get("assessmentUnitIdentifier"),
                    {
                        "actions": [],
                        "names": [],
                        "dates": {},
                        "pollutants": [],
                        "source": None,
                        "evidence": {},
                    },
                )
                unit["actions"].append(str(action_id))
                completed = str(action.get("completionDate") or "")[:10]
                if completed:
                    unit["dates"].setdefault(str(action_id), completed)
                unit["names"].append(action.get("actionName") or "")
                for pollutant in water.get("associatedPollutants") or []:
                    name = pollutant.get("pollutantName")
                    unit["pollutants"].append(name)
                    said = str(pollutant.get("pollutantSourceTypeCode") or "").strip()
                    permits = [
                        str(p.get("NPDESIdentifier") or p.get("permitIdentifier") or p)
                        for p in pollutant.get("permits") or []
                    ]
                    if permits:
                        said = f"{said or 'source type not given'}, permits {', '.join(permits)}"
                    key = f"action {action_id}: {said or 'no pollutantSourceTypeCode'}"
                    unit["evidence"].setdefault(key, []).append(str(name))
                    if _is_stormwater(said, bool(permits), reading):
                        unit["source"] = 1
    return [
        {
            "watershed_id": unit_id,
            "name": "; ".join(dict.fromkeys(u["names"])),
            "pollutants": ";".join(p for p in u["pollutants"] if p),
            "tmdl_id": ";".join(dict.fromkeys(u["actions"])),
            "stormwater_source": u["source"],
            "stormwater_source_evidence": _evidence(u["evidence"], u["source"], reading),
            "tmdl_date": ";".join(u["dates"].get(a, "") for a in dict.fromkeys(u["actions"])).strip(";")
            or None,
        }
        for unit_id, u in units.items()
    ]


def _is_stormwater(said: str, permits: bool, reading: StormwaterReading) -> bool:
    kind = said.lower()
    if permits:
        return True
    if kind.startswith("nonpoint"):
        return reading.nonpoint_source
    if kind.startswith(_POINT):
        return reading.point_source
    return False


def _evidence(said: dict, source, reading: StormwaterReading) -> str:
    parts = [f"{key} ({', '.join(dict.fromkeys(p for p in names if p))})" for key, names in said.items()]
    if source == 1:
        why = (
            "read as stormwater being a source: point source or both ([reference] "
            "tmdl_point_source_is_stormwater)"
            if reading.point_source
            else "read as stormwater being a source"
        ) + (
            "; nonpoint source too ([reference] tmdl_nonpoint_source_is_stormwater)"
            if reading.nonpoint_source
            else ""
        )
    else:
        why = (
            "not decided: ATTAINS does not say whether stormwater is a source (the chapter "
            "counts 'point source or nonpoint source pollution inputs to stormwater runoff')"
        )
    return "ATTAINS " + "; ".join(parts) + " - " + why


PWL_CAUSE_COLUMNS = ("causes", "cause", "pollutants", "pollutant")


def _pwl_table(
    path: Path, spec: ReferenceLayerSpec, report: ImportReport, categories: Categories, causes_path=None
) -> pd.DataFrame:
    """NYSDEC PWL rows (``PWL_ID``, ``WIN``, ``NAME``, causes) as impaired waters, ``NY`` + PWL
    id. Without a causes column, the causes come from an ATTAINS ``assessments`` response
    (``causes_path``) joined by id, or every row is listed without causes (pollutants empty,
    which a review reports as needs_review)."""
    if spec.name != "impaired_waters":
        raise InputError(
            f"the pwl format gives impaired_waters, not {spec.name}",
            path=path,
            fix="import this layer with the ogr format",
            parameter="format",
        )
    try:
        with open(path, newline="", encoding="utf-8-sig") as handle:
            rows = list(csv.DictReader(handle))
            columns = {c.strip().lower(): c for c in (rows[0].keys() if rows else [])}
    except FileNotFoundError:
        raise InputError("the file does not exist", path=path, fix="check the path") from None
    except (UnicodeDecodeError, csv.Error) as err:
        raise InputError(
            f"not a readable CSV table ({err})", path=path, fix="save the PWL table as UTF-8 CSV"
        ) from None
    for needed in ("pwl_id", "name"):
        if needed not in columns:
            raise InputError(
                "the PWL table lacks a required column",
                path=path,
                field=needed.upper(),
                fix=f"add a {needed.upper()} column",
            )
    cause = next((columns[c] for c in PWL_CAUSE_COLUMNS if c in columns), None)
    attains = None
    if causes_path is not None:
        attains_report = ImportReport()
        attains = {
            _join_key(pd.Series([r["waterbody_id"]])).iloc[0]: r
            for item in _read_json(Path(causes_path), "assessments")
            for r in _assessment_rows(item, attains_report, categories, causes_path)
        }
        not_impaired = {
            _join_key(pd.Series([label])).iloc[0]: reason for label, reason in attains_report.skipped
        }
    elif cause is None:
        report.notes.append(
            "the PWL table has no causes column and no ATTAINS causes file was "
            "given: every water is imported listed without causes (pollutants "
            "empty; a review says needs_review)"
        )
    cycle = columns.get("listing_cycle") or columns.get("cycle") or columns.get("year")
    category = columns.get("category")
    out: list[dict] = []
    uncaused: list[str] = []
    for row in rows:
        pwl_id = (row[columns["pwl_id"]] or "").strip()
        unit_id = pwl_id if pwl_id.upper().startswith("NY") else "NY" + pwl_id
        record = {
            "waterbody_id": unit_id,
            "name": row[columns["name"]],
            "listing_cycle": row[cycle] if cycle else None,
            "category": normalize_category(row[category]) if category else None,
            "pollutants": None,
            "tmdl_id": None,
        }
        if attains is not None:
            key = _join_key(pd.Series([unit_id])).iloc[0]
            if key in not_impaired:
                report.skipped.append((unit_id, "ATTAINS: " + not_impaired[key]))
                continue
            found = attains.get(key)
            if found is None:
                uncaused.append(unit_id)
            else:
                record.update({k: found[k] for k in ("pollutants", "category", "tmdl_id")})
                record["listing_cycle"] = record["listing_cycle"] or found["listing_cycle"]
        elif cause is not None:
            causes = [c.strip() for c in (row[cause] or "").split(";") if c.strip()]
            if not causes:
                report.skipped.append((pwl_id, "no causes (not impaired)"))
                continue
            record["pollutants"] = ";".join(causes)
        out.append(record)
    if uncaused:
        report.notes.append(
            f"{len(uncaused)} water(s) not in the ATTAINS causes file, listed "
            f"without causes (a review says needs_review): "
            f"{', '.join(uncaused[:_MAX_LISTED])}" + (" ..." if len(uncaused) > _MAX_LISTED else "")
        )
    return pd.DataFrame(out, columns=list(spec.fields))


def _derived(frame: gpd.GeoDataFrame, catchments: gpd.GeoDataFrame, spec, report):
    """Each unit's watershed derived from ``catchments`` (analysis.reference.derive)."""
    units = frame.to_crs(catchments.crs)
    sheds = upstream_watersheds(list(units.geometry.array), catchments)
    found = np.array([g is not None for g in sheds], dtype=bool)
    for unit_id in units.loc[~found, spec.id_field]:
        report.reject(unit_id, "the unit meets no catchment: no watershed can be derived")
    out = gpd.GeoDataFrame(
        units.drop(columns=units.geometry.name)[found],
        geometry=[g for g in sheds if g is not None],
        crs=catchments.crs,
    )
    out.attrs.update(frame.attrs)
    return out


def _join_key(ids: pd.Series) -> pd.Series:
    """The id both systems share: New York's ATTAINS ids are ``NY`` + the PWL id."""
    return ids.astype(str).str.strip().str.upper().str.replace(r"^NY", "", regex=True)


def _join_geometry(table: pd.DataFrame, shapes: gpd.GeoDataFrame, spec, report, geometry_path):
    """Attach the geometry file's features to the table's rows by id."""
    if spec.id_field not in shapes.columns:
        raise InputError(
            "the geometry file lacks the id field",
            path=geometry_path,
            field=spec.id_field,
            fix=f"add '{spec.id_field}' or map it in a field mapping ([fields] "
            f'{spec.id_field} = "YOUR_FIELD")',
            parameter="mapping",
        )
    shapes = shapes.assign(_key=_join_key(shapes[spec.id_field])).drop_duplicates("_key")
    keyed = shapes.set_index("_key")
    keys = _join_key(table[spec.id_field])
    found = keys.isin(keyed.index).to_numpy()
    frame = gpd.GeoDataFrame(
        table.reset_index(drop=True), geometry=keyed.geometry.reindex(keys).to_numpy(), crs=shapes.crs
    )
    for name in spec.fields:  # what the table leaves empty, the geometry file may give
        if name == spec.id_field or name not in keyed.columns:
            continue
        given = keyed[name].reindex(keys).to_numpy()
        if name not in frame.columns:
            frame[name] = given
            continue
        empty = ~frame[name].map(_filled).to_numpy()
        frame[name] = np.where(empty, given, frame[name].to_numpy())
    if spec.geometry_optional:
        # A water the source lists is kept whatever the geometry file holds: without a shape,
        # a review finds it by id and name (dropped, a diff would call it delisted).
        kept = [str(i) for i in frame.loc[~found, spec.id_field]]
        if kept:
            report.notes.append(
                f"{len(kept)} of the source's {spec.name} have no feature in "
                f"{Path(geometry_path).name}: kept without geometry (a review finds them by "
                f"{' and '.join(spec.lookup_fields)}): {', '.join(kept[:10])}"
                + (f" and {len(kept) - 10} more" if len(kept) > 10 else "")
            )
    else:
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


def _validate(
    frame: gpd.GeoDataFrame,
    spec: ReferenceLayerSpec,
    report: ImportReport,
    path: str,
    synonyms: dict,
    categories: Categories,
) -> gpd.GeoDataFrame:
    """The whole layer in the contract: each feature as :func:`_validate_batch` has it, ids
    unique, something left."""
    layer_label = frame.attrs.get("source_layer")
    rejected_before = len(report.rejected)  # rows the table refused before the join
    frame = _validate_batch(frame, spec, report, path, synonyms, categories)
    report.read += rejected_before
    repeated = frame[spec.id_field][frame[spec.id_field].duplicated(keep=False)]
    if len(repeated):
        raise _repeated_ids(spec, set(repeated), path, layer_label)
    if frame.empty:
        raise _nothing_left(spec, path, layer_label, report)
    return frame


def _repeated_ids(spec, repeated, path, layer_label) -> InputError:
    shown = sorted(repeated)[:10]
    return InputError(
        f"{spec.id_field} is not unique: {len(repeated)} id(s) repeat ({', '.join(shown)})",
        path=path,
        layer=layer_label,
        field=spec.id_field,
        fix="give every feature its own id (or merge the repeated ones)",
    )


def _nothing_left(spec, path, layer_label, report: ImportReport) -> InputError:
    """Nothing to import: the reasons are in the message (the import stops before its report or
    rejections file is written, so there is nothing "above" to see)."""
    if not report.rejected:
        return InputError(
            f"the source holds no feature to import into '{spec.name}'",
            path=path,
            layer=layer_label,
            fix="check that the file (and its layer) is the one meant",
        )
    shown = "; ".join(f"{label}: {reason}" for label, reason in report.rejected[:3])
    more = len(report.rejected) - 3
    return InputError(
        f"no feature of the source can be imported into '{spec.name}': all "
        f"{len(report.rejected)} were rejected ({shown}" + (f"; and {more} more" if more > 0 else "") + ")",
        path=path,
        layer=layer_label,
        fix="correct the features as their reasons say (or the mapping file's field names), and import again",
    )


def _feature_count(path, layer) -> Optional[int]:
    """How many features the source says it holds (None where it does not say)."""
    return layer_feature_count(path, layer)


def _validate_batch(
    frame: gpd.GeoDataFrame,
    spec: ReferenceLayerSpec,
    report: ImportReport,
    path: str,
    synonyms: dict,
    categories: Categories,
) -> gpd.GeoDataFrame:
    """One batch's features in the contract: ids present, geometries checked and repaired,
    values typed, pollutants folded (what does not need the whole layer)."""
    layer_label = frame.attrs.get("source_layer")
    if frame.crs is None:
        raise InputError(
            "the source has no CRS",
            path=path,
            layer=layer_label,
            fix="assign the CRS in QGIS and save the layer again",
        )
    missing = [f for f in spec.fields if f not in frame.columns and f not in spec.optional_values]
    if missing:
        raise InputError(
            f"a required field of '{spec.name}' is missing ({', '.join(missing)})",
            path=path,
            layer=layer_label,
            field=missing[0],
            fix=f"add the field, or map a source field to it in a field mapping "
            f'([fields] {missing[0]} = "SOURCE_FIELD")',
            parameter="mapping",
        )
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
    if not frame.attrs.get("no_geometry"):
        absent = frame.geometry.isna().to_numpy() if spec.geometry_optional else None
        _refuse_non_finite(frame, spec, path, layer_label)
        frame = frame.set_geometry(_checked_geometries(frame, spec, report))
        # Rejected shapes go; a layer whose geometry is optional keeps the rows that had none.
        frame = frame[frame.geometry.notna().to_numpy() | (absent if absent is not None else False)]
    for name, kind in spec.fields.items():  # object columns: an empty value stays None, not NaN
        column = frame[name]
        if name in spec.flag_fields:  # yes/no/true/false spell 1/0: the contract's one rule
            column = column.map(_flag_word)
        frame[name] = pd.Series(
            _typed(column, kind, name, path, layer_label), index=frame.index, dtype=object
        )
    for name in spec.pollutant_fields:
        if name in frame.columns:
            frame[name] = pd.Series(
                [normalize_pollutants(v, synonyms) for v in frame[name]], index=frame.index, dtype=object
            )
    for name in spec.category_fields:  # the profile's vocabulary: skip not impaired, refuse unknown
        skip = [
            _not_impaired(c, i, categories, path, name, layer_label)
            for c, i in zip(frame[name], frame[spec.id_field])
        ]
        frame[name] = pd.Series([normalize_category(v) for v in frame[name]], index=frame.index, dtype=object)
        for unit_id, why in zip(frame[spec.id_field], skip):
            if why:
                report.skipped.append((str(unit_id), why))
        frame = frame[np.array([not why for why in skip], dtype=bool)]
    return frame.reset_index(drop=True)


def _not_impaired(
    given, unit_id, categories: Categories, path, field: str, layer_label: Optional[str] = None
) -> Optional[str]:
    """Why a water of category ``given`` is not imported (its kind is ``not_impaired``), None
    where it is; a category the profile's ``[categories]`` does not name is refused by name."""
    category = normalize_category(given)
    if category is None:
        return None
    kind = categories.kind_of(category)
    if kind is None:
        raise InputError(
            f"water {unit_id} has category '{str(given).strip()}', which the rules "
            "profile's "
            "[categories] does not name (a category is never dropped unread)",
            path=path,
            layer=layer_label,
            feature=unit_id,
            field=field,
            fix=f"add the spelling '{str(given).strip()}' to the list of its kind in the "
            f"profile's [categories] ({categories.spellings()}), or correct "
            "the value, and import again",
        )
    if kind == "not_impaired":
        return (
            f"category {str(given).strip()} is not impaired (the rules profile's [categories] "
            f"not_impaired: {', '.join(categories.not_impaired)})"
        )
    return None


def _refuse_non_finite(frame, spec, path, layer_label) -> None:
    """A NaN or infinite vertex refused by its feature's id before GEOS sees it (issue 36 item
    10: validity and repair of such a geometry crash GEOS on some stacks)."""
    geoms = np.asarray(frame.geometry.array, dtype=object)
    coords = shapely.get_coordinates(geoms)
    finite = np.isfinite(coords).all(axis=1)
    if finite.all():
        return
    owner = np.repeat(np.arange(len(geoms)), shapely.get_num_coordinates(geoms))
    first = int(np.flatnonzero(~finite)[0])
    raise InputError(
        f"a vertex at ({coords[first][0]!r}, {coords[first][1]!r}) is not a finite number",
        path=path,
        layer=layer_label,
        feature=frame[spec.id_field].iloc[owner[first]],
        fix="correct or delete that vertex in the source, and import the layer again",
    )


def _checked_geometries(frame, spec, report) -> gpd.GeoSeries:
    """Null, empty and wrongly typed geometries rejected; invalid ones repaired (counted)."""
    geoms = np.asarray(frame.geometry.array, dtype=object).copy()  # a copy: repairs go in here
    labels = frame[spec.id_field].to_numpy()
    missing = shapely.is_missing(geoms) | shapely.is_empty(geoms)
    invalid = ~missing & ~_valid(geoms)
    # A layer whose geometry is optional keeps a row given none (found by id); empty: rejected.
    absent = shapely.is_missing(geoms) if spec.geometry_optional else np.zeros(len(geoms), bool)
    missing &= ~absent
    for index in np.flatnonzero(invalid):
        geoms[index] = _allowed_parts(shapely.make_valid(geoms[index]), spec.geometry_types)
        report.repaired.append(str(labels[index]))
    type_ids = shapely.get_type_id(geoms)  # -1 where missing
    kinds = np.where(type_ids < 0, None, np.array(_GEOMETRY_NAMES, dtype=object)[type_ids])
    wrong = ~missing & ~absent & ~np.isin(kinds, spec.geometry_types)
    for index in np.flatnonzero(missing):
        report.reject(labels[index], "no geometry (null or empty)")
    for index in np.flatnonzero(wrong & (kinds != None)):  # noqa: E711 - numpy comparison
        report.reject(
            labels[index],
            f"{kinds[index]} is not a {' or '.join(spec.geometry_types)}",
            geometry=geoms[index],
        )
    for index in np.flatnonzero(wrong & (kinds == None)):  # noqa: E711
        report.reject(labels[index], "nothing of the allowed type left after repair")
    geoms[missing | wrong] = None
    return gpd.GeoSeries(geometry_array(_promoted(geoms), crs=frame.crs), index=frame.index)


_GEOMETRY_NAMES = (
    "Point",
    "LineString",
    "LinearRing",
    "Polygon",
    "MultiPoint",
    "MultiLineString",
    "MultiPolygon",
    "GeometryCollection",
)  # by shapely's type id


_VALIDATORS: list = []  # the pool of _valid, made on first use


def _valid(geoms: np.ndarray) -> np.ndarray:
    """``shapely.is_valid`` of ``geoms``, split over the machine's cores where the batch is
    heavy (GEOS releases the GIL: 5,382 catchments of 4,000 vertices take about 10 ms each,
    66 s in one thread, 32 s in two); a batch of small polygons (a wetlands layer's 5,000 of
    20 vertices) is checked in this thread, the writer busy on the other core."""
    cores = min(4, os.cpu_count() or 1)
    if cores < 2 or len(geoms) < 2 or int(shapely.get_num_coordinates(geoms).sum()) < 250_000:
        return shapely.is_valid(geoms)
    if not _VALIDATORS:
        _VALIDATORS.append(ThreadPoolExecutor(cores, thread_name_prefix="swppp-validate"))
    parts = np.array_split(geoms, min(cores, len(geoms)))
    return np.concatenate(list(_VALIDATORS[0].map(shapely.is_valid, parts)))


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


def _flag_word(value):
    """A flag's word (BOOLEAN_WORDS: yes, no, true, false, any case) as 1 or 0; else as given."""
    if isinstance(value, str):
        word = BOOLEAN_WORDS.get(value.strip().lower())
        if word is not None:
            return int(word)
    return value


def _typed(column: pd.Series, kind: str, name, path, layer_label) -> list:
    """Values as Python text / int / float (None where empty); a bad number is an error."""
    fast = _typed_vectorised(column, kind)
    if fast is not None:
        return fast
    out: list[object] = []
    for label, value in column.items():
        if (
            value is None
            or (isinstance(value, float) and np.isnan(value))
            or (isinstance(value, str) and value.strip() == "")
            or value is pd.NA
        ):
            out.append(None)
        elif kind == "text":
            plain = value.item() if hasattr(value, "item") and not isinstance(value, str) else value
            out.append(str(plain).strip())
        else:
            try:
                number = float(value)
            except (TypeError, ValueError):
                raise InputError(
                    f"'{value}' is not a number",
                    path=path,
                    layer=layer_label,
                    feature=label,
                    field=name,
                    fix=f"give {name} as a number",
                ) from None
            out.append(int(number) if kind == "integer" else number)
    return out


def _typed_vectorised(column: pd.Series, kind: str) -> Optional[list]:
    """:func:`_typed` in whole-column steps where the column's type allows it (numbers as
    numbers, text as text: a streamed batch as GDAL reads it); None where it does not."""
    values = column.to_numpy()
    if kind in ("integer", "real") and values.dtype.kind in "iuf":
        missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), bool)
        if values.dtype.kind == "f" and not np.isfinite(values[~missing]).all():
            return None  # an infinite number: as the row-by-row path says it
        out = np.full(len(values), None, dtype=object)
        kept = values[~missing]
        out[~missing] = list((kept.astype(np.int64) if kind == "integer" else kept.astype(float)).tolist())
        return out.tolist()
    if kind == "text" and values.dtype.kind == "O":
        text = [v if isinstance(v, str) else None for v in values]
        others = values[np.array([t is None for t in text], dtype=bool)]
        if len(others) and not pd.isna(pd.Series(others, dtype=object)).all():
            return None  # numbers or dates in a text field: as the row-by-row path says them
        return [(t.strip() or None) if t is not None else None for t in text]
    return None
