"""Reading and writing vector layers, on either geopandas stack.

QGIS's Python on Debian 12 has geopandas 0.12 with fiona; a plain ``pip install`` has
geopandas 1.x with pyogrio. This module is the one place that knows which is present.
"""
from __future__ import annotations

import importlib.util
import logging
import sqlite3
import struct
import warnings
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from collections.abc import Iterator, Sequence
from itertools import islice

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..crs import crs_of
from ..errors import InputError

try:  # pragma: no cover - which branch runs depends on the stack
    import pyogrio

    ENGINE = "pyogrio"
except ImportError:  # pragma: no cover
    import fiona

    ENGINE = "fiona"
    # Fiona lists fewer drivers than its GDAL reads; the spreadsheet ones are read here too
    # (a phasing schedule table): read-only, as pyogrio reads them.
    for _driver in ("XLSX", "ODS"):
        fiona.supported_drivers.setdefault(_driver, "r")

__all__ = ["LayerData", "list_layers", "read_layer", "first_row", "refuse_misread_text",
           "altered_geometries", "warn_altered_geometries", "warn_unread_columns", "layer_crs",
           "write_geopackage", "ENGINE", "DBF_NAME_LENGTH",
           "read_geopackage_boxes", "read_geopackage_table", "geopackage_reader",
           "geopackage_layers", "gpkg_wkb",
           "read_layer_batches", "layer_feature_count", "stored_texts", "with_stored_texts",
           "geopackage_box_rows"]

log = logging.getLogger(__name__)

# The longest field name a shapefile's .dbf holds: GDAL cuts longer ones (disturbance_id ->
# disturban), so a reader that misses a field looks for its name cut to this length too.
DBF_NAME_LENGTH = 10

# GDAL's names for the GeoPackage srs_ids 0 and -1 ("undefined"), and for the srs_id 99999
# that GDAL 3.9+ writes for a layer without one: no CRS at all.
_UNDEFINED_CRS_NAMES = ("undefined geographic srs", "undefined cartesian srs", "undefined srs")


@dataclass
class LayerData:
    """One layer as read: attributes (and geometry), its CRS, and its feature ids."""

    name: str
    frame: pd.DataFrame  # a GeoDataFrame when the layer has geometry
    crs: Optional[CRS]
    spatial: bool


def list_layers(path: str | Path) -> list[str]:
    """Names of the layers in a vector data source; an unreadable file is an InputError."""
    path = Path(path)
    if not path.exists():
        raise InputError("the file does not exist", path=path, fix="check the path")
    try:
        if ENGINE == "pyogrio":
            return [str(row[0]) for row in pyogrio.list_layers(str(path))]
        return list(fiona.listlayers(str(path)))
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(f"not a readable vector data source ({_first_line(err)})", path=path,
                         fix="give a GeoPackage (.gpkg) or another OGR vector file") from None


def read_layer(path: str | Path, layer: str, bbox: Optional[Sequence[float]] = None,
               read_geometry: bool = True) -> LayerData:
    """Read one layer, indexed by feature id, with its CRS (None where it is undefined).

    ``bbox`` (minx, miny, maxx, maxy in the layer's CRS) reads only what lies in that box,
    through the data source's spatial index (a GeoPackage's R-tree). ``read_geometry=False``
    reads the attributes alone, as a plain DataFrame.
    """
    try:
        if ENGINE == "pyogrio":
            frame, crs_wkt = _read_pyogrio(path, layer, bbox, read_geometry)
        else:
            frame, crs_wkt = _read_fiona(path, layer, bbox, read_geometry)
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        for column, values in stored_texts(path, layer, dates_only=True).items():
            fid, value = next(iter(values.items()))  # pyogrio fails on '2027-02-30'
            raise InputError(f"{column} is {value!r}, not a date (YYYY-MM-DD)", path=path,
                             layer=layer, feature=fid, field=column,
                             fix="write the date as YYYY-MM-DD, or leave it empty") from None
        raise InputError(f"the layer could not be read ({_first_line(err)})", path=path,
                         layer=layer, fix="open it in QGIS and save it again as GeoPackage") from None
    spatial = isinstance(frame, gpd.GeoDataFrame) and frame.geometry.name in frame.columns
    crs = _defined_crs(path, layer, crs_wkt) if spatial else None
    if spatial and crs is not None:
        frame = frame.set_crs(crs, allow_override=True)
    if spatial:
        _warn_geopackage_losses(path, layer, frame)
    else:
        warn_unread_columns(path, layer, frame)
    refuse_misread_text(path, layer, frame)
    return LayerData(name=layer, frame=frame, crs=crs, spatial=spatial)


def refuse_misread_text(path: str | Path, layer: str, frame: pd.DataFrame) -> None:
    """Refuse a shapefile (or a lone .dbf) without a ``.cpg`` whose text is UTF-8 read as
    Latin-1: GDAL takes a .dbf without one (and without a code page in its header) to be
    ISO-8859-1, so "Kiryas Joël" written as UTF-8 reads "Kiryas JoÃ«l" on both stacks."""
    path = Path(path)
    if not _without_cpg(path):
        return
    geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    for column in frame.columns:
        if column == geometry or not (frame[column].dtype == object
                                      or pd.api.types.is_string_dtype(frame[column].dtype)):
            continue
        for fid, value in frame[column].items():
            if isinstance(value, str) and not value.isascii():
                try:
                    meant = value.encode("latin-1").decode("utf-8")
                except (UnicodeEncodeError, UnicodeDecodeError):
                    continue
                raise InputError(
                    f"the text {value!r} is UTF-8 read as Latin-1 ({meant!r} was meant): the "
                    f"shapefile has no {path.with_suffix('.cpg').name} to say its encoding",
                    path=path, layer=layer, feature=fid, field=str(column),
                    fix=f"put a file {path.with_suffix('.cpg').name} holding the word UTF-8 "
                        "beside it, or save the layer again as GeoPackage")


def _without_cpg(path: str | Path) -> bool:
    """Whether ``path`` is a shapefile (or a lone .dbf) without a .cpg beside it."""
    path = Path(path)
    return (path.suffix.lower() in (".shp", ".dbf")
            and not any(path.with_suffix(s).exists() for s in (".cpg", ".CPG")))


def read_layer_batches(path: str | Path, layer: str, size: int) -> Iterator[LayerData]:
    """One layer read ``size`` features at a time (each batch as :func:`read_layer` reads a
    layer, its text checked as there: :func:`refuse_misread_text`), so that a statewide layer
    is never whole in memory (:func:`_layer_batches`)."""
    for data in _layer_batches(path, layer, size):
        refuse_misread_text(path, layer, data.frame)
        yield data


def _layer_batches(path: str | Path, layer: str, size: int) -> Iterator[LayerData]:
    """The batches of :func:`read_layer_batches`. GDAL's own Arrow stream where
    it is there (GDAL >= 3.6 through ``osgeo.ogr``, as QGIS ships it; else pyogrio's, where
    pyarrow is installed): each batch comes as columns, its geometries as WKB made into shapely
    geometries in one vectorised call. Without either: pyogrio reads each batch in one call;
    fiona iterates GDAL's reader, ``size`` features per frame. A shapefile without a .cpg is
    read without Arrow: GDAL's Arrow stream passes its text through as bytes undecoded (UTF-8
    read right, Latin-1 made U+FFFD or refused), where its reader decodes it as Latin-1, as
    :func:`read_layer` reads it."""
    try:
        arrow = None if _without_cpg(path) else _arrow_batches(path, layer, size)
        if arrow is not None:
            yield from arrow
            return
        if ENGINE == "pyogrio":
            info = pyogrio.read_info(str(path), layer=layer)
            crs = _defined_crs(path, layer, info.get("crs"))
            start = 0
            while True:
                frame = pyogrio.read_dataframe(str(path), layer=layer, skip_features=start,
                                               max_features=size, fid_as_index=True)
                if not len(frame):
                    return
                frame.index.name = "fid"
                yield _batch(layer, frame, crs)
                start += len(frame)
                if len(frame) < size:
                    return
        with _gdal_log_muted(), fiona.open(str(path), layer=layer) as src:
            crs = _defined_crs(path, layer, src.crs_wkt or None)
            columns = list(src.schema["properties"])
            features = iter(src)
            while True:
                chunk = list(islice(features, size))
                if not chunk:
                    return
                fids = pd.Index([int(f.id) for f in chunk], name="fid")
                attributes = pd.DataFrame([dict(f.properties) for f in chunk], index=fids,
                                          columns=columns)
                geometries = [shapely.geometry.shape(f.geometry) if f.geometry else None
                              for f in chunk]
                yield _batch(layer, gpd.GeoDataFrame(
                    attributes, geometry=gpd.GeoSeries(geometries, index=fids)), crs)
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(f"the layer could not be read ({_first_line(err)})", path=path,
                         layer=layer, fix="open it in QGIS and save it again as GeoPackage") from None


def _arrow_batches(path, layer: str, size: int) -> Optional[Iterator[LayerData]]:
    """The layer's batches from an Arrow stream (None where neither reader is installed)."""
    try:
        from osgeo import ogr  # GDAL's own bindings (QGIS's Python has them)
    except ImportError:
        ogr = None
    if ogr is not None and hasattr(ogr.Layer, "GetArrowStreamAsNumPy"):
        return _ogr_arrow_batches(ogr, path, layer, size)
    if ENGINE == "pyogrio" and importlib.util.find_spec("pyarrow") is not None:
        return _pyogrio_arrow_batches(path, layer, size)
    return None


def _ogr_arrow_batches(ogr, path, layer: str, size: int) -> Iterator[LayerData]:
    from osgeo import gdal

    gdal.PushErrorHandler("CPLQuietErrorHandler")
    previous = gdal.GetConfigOption(_GPKG_THREADS)
    gdal.SetConfigOption(_GPKG_THREADS, "1")  # as for pyogrio below
    try:
        with warnings.catch_warnings():  # GDAL >= 3.8 asks for UseExceptions(): not ours to set
            warnings.simplefilter("ignore", FutureWarning)
            source = ogr.Open(str(path))
        found = source.GetLayerByName(layer) if source is not None else None
        if found is None:
            raise OSError(gdal.GetLastErrorMsg() or "GDAL cannot open it")
        crs = _defined_crs(path, layer, found.GetSpatialRef().ExportToWkt()
                           if found.GetSpatialRef() is not None else None)
        fid_name = found.GetFIDColumn() or "OGC_FID"
        geometry_name = found.GetGeometryColumn() or "wkb_geometry"
        definition = found.GetLayerDefn()
        columns = [definition.GetFieldDefn(i).GetName() for i in range(definition.GetFieldCount())]
        gdal.ErrorReset()
        stream = found.GetArrowStreamAsNumPy(options=[f"MAX_FEATURES_IN_BATCH={int(size)}"])
        for arrays in stream:
            fids = pd.Index(np.asarray(arrays[fid_name]), name="fid")
            attributes = pd.DataFrame({c: _plain_column(arrays[c]) for c in columns},
                                      index=fids, columns=columns)
            yield _batch(layer, _with_wkb(attributes, arrays[geometry_name]), crs)
        if gdal.GetLastErrorType() >= gdal.CE_Failure and gdal.GetLastErrorMsg():
            raise OSError(gdal.GetLastErrorMsg())
        del stream, found, source
    finally:
        gdal.SetConfigOption(_GPKG_THREADS, previous)
        gdal.PopErrorHandler()


def _pyogrio_arrow_batches(path, layer: str, size: int) -> Iterator[LayerData]:
    from pyogrio.raw import open_arrow

    # GDAL >= 3.8 reads a GeoPackage's Arrow batches ahead in worker threads, each holding
    # batches in memory: one thread keeps memory bounded by the batch (and costs little).
    previous = pyogrio.get_gdal_config_option(_GPKG_THREADS)
    pyogrio.set_gdal_config_options({_GPKG_THREADS: "1"})
    try:
        yield from _pyogrio_arrow_read(open_arrow, path, layer, size)
    finally:
        pyogrio.set_gdal_config_options({_GPKG_THREADS: previous})


_GPKG_THREADS = "OGR_GPKG_NUM_THREADS"


def _pyogrio_arrow_read(open_arrow, path, layer: str, size: int) -> Iterator[LayerData]:
    with open_arrow(str(path), layer=layer, batch_size=int(size), return_fids=True,
                    use_pyarrow=True) as (meta, reader):
        crs = _defined_crs(path, layer, meta.get("crs"))
        geometry_name = meta.get("geometry_name") or "wkb_geometry"
        columns = list(meta.get("fields", []))
        fid_name = meta.get("fid_column") or "OGC_FID"
        for batch in reader:
            table = batch.to_pandas(split_blocks=True, self_destruct=True)
            fids = pd.Index(table.pop(fid_name).to_numpy(), name="fid")
            wkb = table.pop(geometry_name).to_numpy()
            table.index = fids
            yield _batch(layer, _with_wkb(table[columns], wkb), crs)


def _plain_column(values) -> np.ndarray:
    """One column of GDAL's NumPy batch as pandas reads a layer: text decoded, nulls None/NaN."""
    mask = np.ma.getmaskarray(values) if isinstance(values, np.ma.MaskedArray) else None
    data = np.asarray(np.ma.getdata(values))
    if data.dtype.kind == "S":
        try:
            data = data.astype(str).astype(object)  # ASCII: numpy decodes it in one call
        except UnicodeDecodeError:
            data = np.char.decode(data, "utf-8", errors="replace").astype(object)
    elif data.dtype.kind == "O":
        data = np.array([v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v
                         for v in data], dtype=object)
    if mask is None or not mask.any():
        return data
    if data.dtype.kind == "f":
        return np.where(mask, np.nan, data)
    data = data.astype(object)
    data[mask] = None
    return data


def _with_wkb(attributes: pd.DataFrame, wkb) -> gpd.GeoDataFrame:
    """The batch's attributes with its WKB geometries (None where null), made in one call."""
    geometries = shapely.from_wkb(np.asarray(wkb, dtype=object))
    return gpd.GeoDataFrame(attributes, geometry=gpd.GeoSeries(geometries, index=attributes.index))


def layer_feature_count(path: str | Path, layer: str) -> Optional[int]:
    """How many features a layer says it holds (None where the driver cannot say cheaply)."""
    try:
        if ENGINE == "pyogrio":
            count = pyogrio.read_info(str(path), layer=layer).get("features")
        else:
            with _gdal_log_muted(), fiona.open(str(path), layer=layer) as src:
                count = len(src)
    except Exception:  # noqa: BLE001 - a count is for the progress bar only
        return None
    return int(count) if count is not None and count >= 0 else None


def _batch(layer, frame, crs) -> LayerData:
    if crs is not None:
        frame = frame.set_crs(crs, allow_override=True)
    return LayerData(name=layer, frame=frame, crs=crs, spatial=True)


def layer_crs(path: str | Path, layer: str, con: Optional[sqlite3.Connection] = None
              ) -> Optional[CRS]:
    """A spatial layer's CRS without reading its features (None where it has none).

    A GeoPackage's is read from its ``gpkg_spatial_ref_sys`` table (no driver opening), through
    ``con`` where given (:func:`geopackage_reader`).
    """
    stored = _geopackage_crs(path, layer, con)
    if stored is not None:
        return stored or None
    try:
        if ENGINE == "pyogrio":
            crs_wkt = pyogrio.read_info(str(path), layer=layer).get("crs")
        else:
            with _gdal_log_muted(), fiona.open(str(path), layer=layer) as src:
                crs_wkt = src.crs_wkt or None
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(f"the layer could not be read ({_first_line(err)})", path=path,
                         layer=layer, fix="open it in QGIS and save it again as GeoPackage") from None
    return _defined_crs(path, layer, crs_wkt)


def first_row(path: str | Path, layer: str) -> list[str]:
    """The cells of a spreadsheet sheet's first row as written (``HEADERS=DISABLE``: GDAL's
    XLSX/ODS drivers otherwise rename a repeated heading, or drop its column, so that what a
    header holds twice can only be seen here)."""
    try:
        if ENGINE == "pyogrio":
            # As the drivers' configuration options too: GDAL 3.12 applies the HEADERS open
            # option to a workbook's first sheet alone (a second is read with its header).
            with _gdal_config(OGR_XLSX_HEADERS="DISABLE", OGR_ODS_HEADERS="DISABLE"):
                frame = pyogrio.read_dataframe(str(path), layer=layer, max_features=1,
                                               read_geometry=False, HEADERS="DISABLE")
            cells = list(frame.iloc[0]) if len(frame) else []
        else:
            # Fiona's GDAL (3.6 on Debian 12) takes it as the drivers' configuration options.
            with _gdal_log_muted(), fiona.Env(OGR_XLSX_HEADERS="DISABLE",
                                              OGR_ODS_HEADERS="DISABLE"), \
                    fiona.open(str(path), layer=layer) as src:
                feature = next(iter(src), None)
                cells = list(feature.properties.values()) if feature is not None else []
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(f"the sheet could not be read ({_first_line(err)})", path=path,
                         layer=layer, fix="open it in a spreadsheet and save it again") from None
    return ["" if c is None or (isinstance(c, float) and c != c) else str(c) for c in cells]


@contextmanager
def _gdal_config(**options: str) -> Iterator[None]:
    """GDAL configuration options set (through pyogrio) for the block, then as they were."""
    previous = {name: pyogrio.get_gdal_config_option(name) for name in options}
    pyogrio.set_gdal_config_options(options)
    try:
        yield
    finally:
        pyogrio.set_gdal_config_options(previous)


def _read_pyogrio(path, layer, bbox, read_geometry=True):
    if bbox is not None:  # a spatial read of a spatial layer: one opening of the file, not two
        frame = pyogrio.read_dataframe(str(path), layer=layer, bbox=tuple(bbox), fid_as_index=True)
        frame.index.name = "fid"
        return frame, frame.crs.to_wkt() if frame.crs is not None else None
    info = pyogrio.read_info(str(path), layer=layer)
    has_geometry = info.get("geometry_type") is not None and read_geometry
    frame = pyogrio.read_dataframe(str(path), layer=layer, bbox=tuple(bbox) if bbox else None,
                                   fid_as_index=True, read_geometry=has_geometry)
    if not has_geometry:
        frame = pd.DataFrame(frame)
    frame.index.name = "fid"
    return frame, info.get("crs")


@contextmanager
def _gdal_log_muted():
    """Fiona logs GDAL's complaint about geometry-less tables as an error; real errors raise."""
    logger = logging.getLogger("fiona._env")
    previous, logger.disabled = logger.disabled, True
    try:
        yield
    finally:
        logger.disabled = previous


def _read_fiona(path, layer, bbox, read_geometry=True):
    with _gdal_log_muted(), fiona.open(str(path), layer=layer,
                                       ignore_geometry=not read_geometry) as src:
        try:
            schema = src.schema
        except fiona.errors.UnsupportedGeometryTypeError:
            # Fiona 1.9 has no name for a curved layer's type (CurvePolygon, MultiSurface...)
            # though it reads its features, arcs made straight by GDAL as pyogrio's are.
            schema = {"geometry": "Curved", "properties": _ogr_field_names(path, layer)}
        has_geometry = schema.get("geometry") not in (None, "None") and read_geometry
        features = list(src.filter(bbox=tuple(bbox)) if bbox else src)
        columns = list(schema["properties"])
        crs_wkt = (src.crs_wkt or None) if has_geometry else None  # fiona fails on a table's CRS
    fids = pd.Index([int(f.id) for f in features], name="fid")
    rows = [dict(f.properties) for f in features]
    attributes = pd.DataFrame(rows, index=fids, columns=columns)
    if not has_geometry:
        return attributes, None
    geometries = [shapely.geometry.shape(f.geometry) if f.geometry else None for f in features]
    return gpd.GeoDataFrame(attributes, geometry=gpd.GeoSeries(geometries, index=fids)), crs_wkt


def _ogr_field_names(path, layer) -> list[str]:
    """The attribute fields of ``layer`` as GDAL's own bindings list them (QGIS's Python)."""
    from osgeo import ogr

    source = ogr.Open(str(path))
    found = source.GetLayerByName(layer) if source is not None else None
    if found is None:
        raise OSError(f"GDAL cannot open layer {layer}")
    definition = found.GetLayerDefn()
    return [definition.GetFieldDefn(i).GetName() for i in range(definition.GetFieldCount())]


# WKB geometry types (ISO, without their Z/M thousands) that hold arcs or curves.
_CIRCULAR_STRING = 8
_LINEAR_POINTS = {1: 1, 2: None, 8: None}  # point: one; line and arc: counted
_RINGS = (3, 17)  # polygon, triangle: rings of counted points
_PARTS = (4, 5, 6, 7, 9, 10, 11, 12, 15, 16)  # multi-, collections, compound, curve polygon...
_CURVED_DECLARED = ("CIRCULARSTRING", "COMPOUNDCURVE", "CURVEPOLYGON", "MULTICURVE",
                    "MULTISURFACE", "CURVE", "SURFACE", "GEOMETRY", "GEOMETRYCOLLECTION")


def _wkb_arcs(wkb: bytes, at: int = 0) -> tuple[int, bool, bool]:
    """(the offset after the geometry at ``at``, whether it holds an arc, whether it has M)."""
    order = "<" if wkb[at] == 1 else ">"
    (code,) = struct.unpack_from(order + "I", wkb, at + 1)
    at += 5
    z_flag, m_flag = bool(code & 0x80000000), bool(code & 0x40000000)
    code &= 0x0FFFFFFF
    kind, dims = code % 1000, code // 1000
    z, m = z_flag or dims in (1, 3), m_flag or dims in (2, 3)
    point = 8 * (2 + z + m)
    if kind in _LINEAR_POINTS:
        count = 1 if kind == 1 else struct.unpack_from(order + "I", wkb, at)[0]
        at += 0 if kind == 1 else 4
        return at + count * point, kind == _CIRCULAR_STRING, m
    if kind in _RINGS:
        (rings,) = struct.unpack_from(order + "I", wkb, at)
        at += 4
        for _ in range(rings):
            (count,) = struct.unpack_from(order + "I", wkb, at)
            at += 4 + count * point
        return at, False, m
    if kind in _PARTS:
        (parts,) = struct.unpack_from(order + "I", wkb, at)
        at += 4
        arc = False
        for _ in range(parts):
            at, part_arc, part_m = _wkb_arcs(wkb, at)
            arc, m = arc or part_arc, m or part_m
        return at, arc, m
    raise ValueError(f"WKB geometry type {code}")


def _warn_geopackage_losses(path, layer: str, frame: pd.DataFrame) -> None:
    """:func:`warn_altered_geometries` and :func:`warn_unread_columns` of a layer just read,
    asked through one connection (a GeoPackage's; nothing for another source)."""
    if Path(path).suffix.lower() != ".gpkg":
        return
    try:
        with closing(geopackage_reader(path)) as con:
            warn_altered_geometries(path, layer, frame.index, con)
            warn_unread_columns(path, layer, frame, con)
    except sqlite3.Error:
        return


def altered_geometries(path: str | Path, layer: str, fids: Optional[Sequence[int]] = None,
                       con: Optional[sqlite3.Connection] = None) -> tuple[list[int], list[int]]:
    """(the features of GeoPackage layer ``layer`` with arcs, those with M values), among
    ``fids`` where given: what every reader here alters on reading. GDAL makes each arc
    straight segments (one every ``OGR_ARC_STEPSIZE`` degrees, 4 by default), on both stacks;
    shapely has no M, which is dropped. Only a layer whose declared type may hold either is
    scanned; any other source gives ([], []). Through ``con`` where given
    (:func:`geopackage_reader`)."""
    if Path(path).suffix.lower() != ".gpkg":
        return [], []
    arcs: list[int] = []
    measured: list[int] = []
    try:
        with _reading(path, con) as con:
            row = con.execute("SELECT table_name, column_name, geometry_type_name, m FROM "
                              "gpkg_geometry_columns WHERE lower(table_name) = lower(?)",
                              (layer,)).fetchone()
            if row is None or (str(row[2]).upper() not in _CURVED_DECLARED and not row[3]):
                return [], []
            table = _gpkg_table(con, row[0])
            key = table[2] if table is not None else "rowid"
            among = ""
            if fids is not None:
                con.execute("DROP TABLE IF EXISTS temp.swppp_fids")
                con.execute("CREATE TEMP TABLE swppp_fids (id INTEGER PRIMARY KEY)")
                con.executemany("INSERT OR IGNORE INTO temp.swppp_fids VALUES (?)",
                                [(int(f),) for f in fids])
                among = f" WHERE {_quoted(key)} IN (SELECT id FROM temp.swppp_fids)"
            for fid, blob in con.execute(f"SELECT {_quoted(key)}, {_quoted(row[1])} FROM "
                                         f"{_quoted(row[0])}{among} ORDER BY 1"):
                wkb = gpkg_wkb(blob)
                if not wkb:
                    continue
                try:
                    _end, arc, m = _wkb_arcs(wkb)
                except (ValueError, struct.error, IndexError):
                    continue  # not ours to judge here: the driver reads it, or refuses it
                if arc:
                    arcs.append(int(fid))
                if m:
                    measured.append(int(fid))
    except sqlite3.Error:
        return [], []
    return arcs, measured


def warn_altered_geometries(path: str | Path, layer: str, fids: Optional[Sequence[int]] = None,
                            con: Optional[sqlite3.Connection] = None) -> None:
    """A warning (logged, as the command line shows it) naming the features whose arcs were
    made straight segments or whose M values were dropped on reading (:func:`altered_geometries`)."""
    arcs, measured = altered_geometries(path, layer, fids, con)
    shown = lambda fids: ", ".join(map(str, fids[:10])) + (" ..." if len(fids) > 10 else "")  # noqa: E731
    if arcs:
        log.warning("%s", InputError(
            f"{len(arcs)} feature(s) ({shown(arcs)}) have arcs (curved geometry): each arc was "
            f"read as straight segments, one every {_arc_step()} degrees of arc (GDAL's "
            "OGR_ARC_STEPSIZE), and reviewed so: an area inside an arc is a little smaller (at "
            "most about 0.1% of a whole circle's)", path=path, layer=layer,
            fix="nothing, if that is close enough; else draw the arcs with more vertices "
                "(QGIS: Processing > Segmentize by maximum angle) and save the layer again"))
    if measured:
        log.warning("%s", InputError(
            f"{len(measured)} feature(s) ({shown(measured)}) have M (measure) values, which "
            "were not read: the review does not use them", path=path, layer=layer,
            fix="nothing, unless the measures matter; then put them in a field"))


def warn_unread_columns(path: str | Path, layer: str, frame: pd.DataFrame,
                        con: Optional[sqlite3.Connection] = None) -> None:
    """A warning naming the columns of GeoPackage layer ``layer`` that the driver left out of
    ``frame`` (read from it): GDAL reads one geometry column per table, and a second one
    (declared ``POLYGON``, say, but not registered as the layer's) is dropped without a word."""
    if Path(path).suffix.lower() != ".gpkg":
        return
    try:
        with _reading(path, con) as con:
            found = _gpkg_table(con, layer)
    except sqlite3.Error:
        return
    if found is None:
        return
    read = {str(c).lower() for c in frame.columns}
    unread = [c for c in found[3] if str(c).lower() not in read]
    if unread:
        log.warning("%s", InputError(
            f"the column(s) {', '.join(repr(c) for c in unread)} were not read (GDAL reads one "
            f"geometry column per layer, '{found[1]}' here): the review does not see them",
            path=path, layer=layer,
            fix="move what they hold into a layer of its own, or into fields of this one"))


def _arc_step() -> str:
    """GDAL's step along an arc when it makes it straight, in degrees (its default 4)."""
    try:
        if ENGINE == "pyogrio":
            value = pyogrio.get_gdal_config_option("OGR_ARC_STEPSIZE")
        else:
            from osgeo import gdal

            value = gdal.GetConfigOption("OGR_ARC_STEPSIZE")
    except Exception:  # noqa: BLE001 - the figure only describes what GDAL did
        value = None
    return str(value or 4)


def _defined_crs(path, layer, crs_wkt) -> Optional[CRS]:
    """The layer's CRS, or None where it has none or an undefined one (srs_id 0 or -1)."""
    if _geopackage_srs_id(path, layer) in (0, -1):
        return None
    if not crs_wkt:
        return None
    crs = crs_of(crs_wkt)
    if (crs.name or "").strip().lower() in _UNDEFINED_CRS_NAMES:
        return None
    return crs


_NUMERIC_TYPES = ("INT", "REAL", "FLOA", "DOUB", "BOOLEAN", "NUMERIC")


def stored_texts(path: str | Path, layer: str, fids: Optional[Sequence[int]] = None,
                 dates_only: bool = False) -> dict[str, dict[int, str]]:
    """Text that a GeoPackage holds in ``layer``'s numeric columns, or in its date columns
    where it is no ``YYYY-MM-DD`` day, by column and feature id (of the features ``fids`` only,
    where given: a few features of a large layer are looked up by their ids, the layer is not
    scanned).

    ``dates_only``: the date columns' alone.

    SQLite keeps ``'three'`` in a REAL column as text, and GDAL then reads it as 0.0; it keeps
    ``'04/01/2027'`` in a DATE column, and GDAL reads it as null (an empty date: "not yet
    scheduled"): read here as stored, the value can be refused (or read as a spelling of 1/0)
    instead of being taken silently. Any other source, or a file SQLite cannot open, gives
    ``{}``.
    """
    if Path(path).suffix.lower() != ".gpkg":
        return {}
    found: dict[str, dict[int, str]] = {}
    try:
        with closing(sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)) as con:
            table = con.execute("SELECT table_name FROM gpkg_contents WHERE lower(table_name) = "
                                "lower(?)", (layer,)).fetchone()
            if table is None:
                return {}
            quoted = _quoted(table[0])
            columns = con.execute(f"PRAGMA table_info({quoted})").fetchall()
            key = next((c[1] for c in columns if c[5]), None)  # the primary key: the fid
            among = ""
            if fids is not None and key is not None:
                con.execute("CREATE TEMP TABLE swppp_fids (id INTEGER PRIMARY KEY)")
                con.executemany("INSERT OR IGNORE INTO temp.swppp_fids VALUES (?)",
                                [(int(f),) for f in fids])
                among = f" AND {_quoted(key)} IN (SELECT id FROM temp.swppp_fids)"
            for column in columns:
                name, declared = column[1], str(column[2] or "").upper()
                if key is None or column[5]:
                    continue
                name_q = _quoted(name)
                if declared in ("DATE", "DATETIME"):
                    # GDAL reads a date it cannot parse ('04/01/2027', 'soon') as null.
                    day = f"substr({name_q}, 1, 10)"
                    unread = (f"typeof({name_q}) != 'null' AND NOT (typeof({name_q}) = 'text' "
                              f"AND length({name_q}) >= 10 AND date({day}, '+0 days') IS {day})")
                elif any(t in declared for t in _NUMERIC_TYPES) and not dates_only:
                    # A whole-number column read as int64 would drop a fraction (0.5 -> 0) too.
                    kinds = "('text', 'blob'" + (", 'real')" if "INT" in declared else ")")
                    unread = f"typeof({name_q}) IN {kinds}"
                else:
                    continue
                rows = con.execute(f"SELECT {_quoted(key)}, {name_q} FROM {quoted} "
                                   f"WHERE {unread}{among}").fetchall()
                if rows:
                    found[name] = {int(fid): value if isinstance(value, str) else repr(value)
                                   for fid, value in rows}
    except sqlite3.Error:
        return {}
    return found


def with_stored_texts(path: str | Path, layer: str, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` (read from ``layer``) with the text a GeoPackage holds in its numeric columns
    put back in place of what the driver made of it (``'three'`` read as 0.0), so that the
    contract's reader sees, and refuses or reads, what the user typed."""
    texts = stored_texts(path, layer, frame.index)
    if not texts:
        return frame
    frame = frame.copy()
    for column, values in texts.items():
        if column in frame.columns:
            series = frame[column].astype(object)
            for fid, text in values.items():
                if fid in series.index:
                    series.at[fid] = text
            frame[column] = series
    return frame


class _Reader(sqlite3.Connection):
    """A read-only connection that keeps what it was told of the file's tables (their names,
    geometry columns, keys and columns, R-trees, CRSs), asked once each: a reader's few
    questions in a row (a review's) do not change the schema under it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.known: dict = {}


def geopackage_reader(path: str | Path) -> sqlite3.Connection:
    """A read-only SQLite connection to the GeoPackage at ``path`` (close it after use), for a
    caller that asks several questions in a row: each new connection reads the file's schema
    again (about a millisecond), and it keeps what it learns of the tables (``_known``). The
    functions here that take ``con`` open their own without. It may be closed, or used, in
    another thread than the one that opened it (one at a time: a reference opened in one and
    reviewed in another; SQLite's serialized mode, the module's default, allows it)."""
    return sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True, factory=_Reader,
                           check_same_thread=False)


def _known(con, key: str, ask):
    """``ask(con)``, kept in ``con`` (a :func:`geopackage_reader`'s) under ``key``."""
    known = getattr(con, "known", None)
    if known is None:
        return ask(con)
    if key not in known:
        known[key] = ask(con)
    return known[key]


def geopackage_layers(path: str | Path, unlisted: Sequence[str] = (),
                      con: Optional[sqlite3.Connection] = None) -> Optional[list[str]]:
    """:func:`list_layers` of a plain GeoPackage answered by SQLite (no driver opening): its
    feature and attribute tables. None (ask the driver) for anything GDAL might list otherwise:
    a table or view not registered in gpkg_contents (but the ``unlisted`` ones the caller
    knows GDAL leaves out: a reference store's history), other content types, a registered
    table that is missing, a feature table without its geometry column row. Through ``con``
    where given (:func:`geopackage_reader`)."""
    if Path(path).suffix.lower() != ".gpkg" or not Path(path).is_file():
        return None
    try:
        with _reading(path, con) as con:
            contents = con.execute("SELECT table_name, data_type FROM gpkg_contents").fetchall()
            tables = {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE "
                "'gpkg_%' AND name NOT LIKE 'rtree_%' AND name NOT LIKE 'sqlite_%'")}
            geometries = {r[0] for r in con.execute("SELECT table_name FROM gpkg_geometry_columns")}
    except sqlite3.Error:
        return None
    names = [str(name) for name, _kind in contents]
    tables -= set(unlisted) - set(names)
    if (set(names) != tables or len(names) != len(tables)
            or any(kind not in ("features", "attributes") for _name, kind in contents)
            or any(kind == "features" and name not in geometries for name, kind in contents)):
        return None
    return names


@contextmanager
def _reading(path, con: Optional[sqlite3.Connection]) -> Iterator[sqlite3.Connection]:
    """``con``, or a connection of :func:`geopackage_reader` closed afterwards."""
    if con is not None:
        yield con
        return
    with closing(geopackage_reader(path)) as opened:
        yield opened


def _geopackage_crs(path, layer, con: Optional[sqlite3.Connection] = None):
    """The CRS a GeoPackage records for ``layer``: a CRS, False for none, None if not known."""
    if Path(path).suffix.lower() != ".gpkg":
        return None
    try:
        with _reading(path, con) as con:
            rows = _known(con, "srs", lambda con: {
                str(r[0]).lower(): r[1:] for r in con.execute(
                    "SELECT g.table_name, g.srs_id, s.organization, s.organization_coordsys_id, "
                    "s.definition FROM gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s ON "
                    "s.srs_id = g.srs_id ORDER BY g.rowid DESC")})
    except sqlite3.Error:
        return None
    row = rows.get(str(layer).lower())
    if row is None:
        return None
    srs_id, organization, code, definition = row
    if srs_id in (0, -1):
        return False
    try:
        if str(organization).upper() == "EPSG" and code:
            return crs_of(f"EPSG:{int(code)}")
        crs = crs_of(definition)
    except Exception:  # noqa: BLE001 - an odd definition: let the driver read it
        return None
    return False if (crs.name or "").strip().lower() in _UNDEFINED_CRS_NAMES else crs


def _geopackage_srs_id(path, layer) -> Optional[int]:
    if Path(path).suffix.lower() != ".gpkg":
        return None
    try:
        with closing(sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)) as con:
            row = con.execute("SELECT srs_id FROM gpkg_geometry_columns WHERE lower(table_name) = lower(?)",
                              (layer,)).fetchone()
    except sqlite3.Error:
        return None
    return int(row[0]) if row else None


# Bytes of a GeoPackage geometry blob's envelope, by the envelope code in its flags.
_ENVELOPE_BYTES = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}


def gpkg_wkb(blob) -> Optional[bytes]:
    """The WKB inside a GeoPackage geometry blob (after its header and envelope); None for none."""
    if blob is None:
        return None
    blob = bytes(blob)
    return blob[8 + _ENVELOPE_BYTES[(blob[3] >> 1) & 0b111]:]


def read_geopackage_boxes(path: str | Path, layer: str, boxes: Sequence[Sequence[float]],
                          con: Optional[sqlite3.Connection] = None) -> Optional[gpd.GeoDataFrame]:
    """The features of a GeoPackage layer whose envelope meets any of ``boxes`` (minx, miny,
    maxx, maxy in the layer's CRS), indexed by feature id, read in one query that joins the
    boxes with the layer's R-tree (one box: the R-tree asked directly); None where the layer
    has no R-tree (read it otherwise). Through ``con`` where given (:func:`geopackage_reader`).

    SQLite itself reads the file: the same on both stacks, and no feature passes through GDAL.
    """
    found = geopackage_box_rows(path, layer, boxes, con)
    if found is None:
        return None
    fids, names, rows, geometries = found
    frame = pd.DataFrame(rows, index=pd.Index(fids, name="fid"), columns=names)
    frame["geometry"] = gpd.array.from_shapely(geometries)  # an array: no Series re-indexed
    return gpd.GeoDataFrame(frame, geometry="geometry")


def geopackage_box_rows(path: str | Path, layer: str, boxes: Sequence[Sequence[float]],
                        con: Optional[sqlite3.Connection] = None
                        ) -> Optional[tuple[list[int], list[str], list[tuple], np.ndarray]]:
    """What :func:`read_geopackage_boxes` reads, before it is a frame: (the feature ids, the
    attribute columns' names, each feature's attributes as a tuple in that order, the
    geometries as an object array); None where it gives None. For a reader that picks
    features by their geometry before it makes a frame of the few it keeps."""
    boxes = [tuple(map(float, b)) for b in boxes]

    def meeting(con, table, column, key, names):
        if column is None:  # a table without geometry: no R-tree
            return None
        rtree = f"rtree_{table}_{column}"
        if rtree not in _known(con, "rtrees", lambda con: {r[0] for r in con.execute(
                "SELECT name FROM sqlite_master WHERE name LIKE 'rtree%'")}):
            return None
        parameters: tuple = ()
        if len(boxes) == 1:
            minx, miny, maxx, maxy = boxes[0]
            among, parameters = (f"SELECT id FROM {_quoted(rtree)} WHERE minx <= ? AND "
                                 "maxx >= ? AND miny <= ? AND maxy >= ?"), (maxx, minx, maxy, miny)
        else:
            meets = "r.minx <= b.maxx AND r.maxx >= b.minx AND r.miny <= b.maxy AND r.maxy >= b.miny"
            con.execute("DROP TABLE IF EXISTS temp.swppp_boxes")
            con.execute("CREATE TEMP TABLE swppp_boxes (minx REAL, miny REAL, maxx REAL, "
                        "maxy REAL)")
            con.executemany("INSERT INTO temp.swppp_boxes VALUES (?, ?, ?, ?)", boxes)
            among = f"SELECT r.id FROM temp.swppp_boxes b JOIN {_quoted(rtree)} r ON {meets}"
        return con.execute(
            f"SELECT {', '.join(_quoted(c) for c in [key, *names, column])} FROM "
            f"{_quoted(table)} WHERE {_quoted(key)} IN ({among}) ORDER BY {_quoted(key)}",
            parameters).fetchall()

    found = _table_rows(path, layer, con, meeting)
    if found is None:
        return None
    rows, names = found
    geometries = (shapely.from_wkb([gpkg_wkb(r[-1]) for r in rows]) if rows
                  else np.array([], dtype=object))
    return [int(r[0]) for r in rows], names, [r[1:-1] for r in rows], geometries


def read_geopackage_table(path: str | Path, layer: str,
                          con: Optional[sqlite3.Connection] = None,
                          rows: bool = True) -> Optional[pd.DataFrame]:
    """The attributes of a GeoPackage layer or table (no geometry), indexed by feature id, as
    stored (text in a numeric column stays text), read by SQLite in one query (through ``con``
    where given); None where ``path`` is no GeoPackage holding ``layer`` with an integer key
    (read it otherwise). ``rows=False``: its columns alone, no row read."""
    if Path(path).suffix.lower() != ".gpkg":
        return None
    found = _table_rows(path, layer, con, lambda con, table, _column, key, names: con.execute(
        f"SELECT {', '.join(_quoted(c) for c in [key, *names])} FROM {_quoted(table)} "
        f"ORDER BY {_quoted(key)}" + ("" if rows else " LIMIT 0")).fetchall())
    if found is None:
        return None
    read, names = found
    return pd.DataFrame([r[1:] for r in read], columns=names,
                        index=pd.Index([int(r[0]) for r in read], name="fid"))


def _table_rows(path, layer: str, con: Optional[sqlite3.Connection], read) -> Optional[tuple]:
    """(rows, the other columns' names) that ``read(con, table, geometry column, key, names)``
    returns for GeoPackage layer ``layer`` (through ``con`` where given); None where the layer
    is not one :func:`_gpkg_table` knows, ``read`` returns None, or SQLite fails."""
    try:
        with _reading(path, con) as con:
            found = _gpkg_table(con, layer)
            if found is None:
                return None
            rows = read(con, *found)
    except sqlite3.Error:
        return None
    return None if rows is None else (rows, found[3])


def _gpkg_table(con, layer: str) -> Optional[tuple[str, Optional[str], str, list[str]]]:
    """(table, geometry column or None, integer key, the other columns) of GeoPackage layer
    ``layer`` (matched in any case); None where it is not listed in gpkg_contents or has no
    integer primary key."""
    contents = _known(con, "contents", lambda con: {
        str(name).lower(): (name, column) for name, column in con.execute(
            "SELECT c.table_name, g.column_name FROM gpkg_contents c LEFT JOIN "
            "gpkg_geometry_columns g ON g.table_name = c.table_name ORDER BY c.rowid DESC")})
    found = contents.get(str(layer).lower())
    if found is None:
        return None
    table, column = found
    info = _known(con, f"columns {table}",
                  lambda con: con.execute(f"PRAGMA table_info({_quoted(table)})").fetchall())
    key = next((r[1] for r in info if r[5] and str(r[2]).upper() == "INTEGER"), None)
    if key is None:
        return None
    return table, column, key, [r[1] for r in info if r[1] not in (key, column)]


def _quoted(name: str) -> str:
    return '"' + str(name).replace('"', '""') + '"'


def write_geopackage(path: str | Path, layers: dict[str, pd.DataFrame]) -> None:
    """Write ``layers`` (name -> GeoDataFrame, or DataFrame for a table) to a new GeoPackage."""
    path = Path(path)
    if path.exists():
        path.unlink()
    for name, frame in layers.items():
        if isinstance(frame, gpd.GeoDataFrame):
            frame.to_file(path, layer=name, driver="GPKG")
        elif ENGINE == "pyogrio":
            pyogrio.write_dataframe(frame, str(path), layer=name, driver="GPKG")
        else:
            _write_table_fiona(path, name, frame)


def _write_table_fiona(path, name, frame):
    types = {"float64": "float", "int64": "int", "bool": "int"}
    schema = {"geometry": "None",
              "properties": {c: types.get(str(frame[c].dtype), "str") for c in frame.columns}}
    with fiona.open(str(path), "w", layer=name, driver="GPKG", schema=schema) as dst:
        for row in frame.itertuples(index=False):
            props = {c: (None if pd.isna(v) else v) for c, v in zip(frame.columns, row)}
            dst.write({"geometry": None, "properties": props})


def _first_line(err) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]
