"""Reading and writing vector layers, on either geopandas stack.

QGIS's Python on Debian 12 has geopandas 0.12 with fiona; a plain ``pip install`` has
geopandas 1.x with pyogrio (``io.engine`` says which is present); this module reads through
either.
"""

from __future__ import annotations

import importlib.util
import logging
import sqlite3
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..crs import crs_of
from ..errors import InputError
from ..geometry import geometry_array
from .drawings import check_drawing, check_drawing_coordinates
from .engine import ENGINE
from .geopackage import UNDEFINED_CRS_NAMES, geopackage_crs, geopackage_srs_id, stored_texts
from .losses import refuse_misread_text, warn_geopackage_losses, warn_unread_columns, without_cpg
from .sheets import check_sheet, check_workbook

if ENGINE == "pyogrio":  # pragma: no cover - which branch runs depends on the stack
    import pyogrio
else:  # pragma: no cover
    import fiona

__all__ = [
    "LayerData",
    "list_layers",
    "read_layer",
    "first_row",
    "layer_crs",
    "write_geopackage",
    "ENGINE",
    "read_layer_batches",
    "layer_feature_count",
]


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
    check_workbook(path)
    check_drawing(path)
    try:
        if ENGINE == "pyogrio":
            return [str(row[0]) for row in pyogrio.list_layers(str(path))]
        return list(fiona.listlayers(str(path)))
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(
            f"not a readable vector data source ({_first_line(err)})",
            path=path,
            fix="give a GeoPackage (.gpkg) or another OGR vector file",
        ) from None


def read_layer(
    path: str | Path, layer: str, bbox: Optional[Sequence[float]] = None, read_geometry: bool = True
) -> LayerData:
    """Read one layer, indexed by feature id, with its CRS (None where it is undefined).

    ``bbox`` (minx, miny, maxx, maxy in the layer's CRS) reads only what lies in that box,
    through the data source's spatial index (a GeoPackage's R-tree). ``read_geometry=False``
    reads the attributes alone, as a plain DataFrame. A workbook's sheet with merged cells is
    refused, and so is one GDAL would misread or could not hold (:func:`~analysis.io.sheets.check_sheet`).
    """
    check_sheet(path, layer)
    check_drawing(path)
    try:
        if ENGINE == "pyogrio":
            frame, crs_wkt = _read_pyogrio(path, layer, bbox, read_geometry)
        else:
            frame, crs_wkt = _read_fiona(path, layer, bbox, read_geometry)
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        for column, values in stored_texts(path, layer, dates_only=True).items():
            fid, value = next(iter(values.items()))  # pyogrio fails on '2027-02-30'
            raise InputError(
                f"{column} is {value!r}, not a date (YYYY-MM-DD)",
                path=path,
                layer=layer,
                feature=fid,
                field=column,
                fix="write the date as YYYY-MM-DD, or leave it empty",
            ) from None
        raise InputError(
            f"the layer could not be read ({_first_line(err)})",
            path=path,
            layer=layer,
            fix="open it in QGIS and save it again as GeoPackage",
        ) from None
    spatial = isinstance(frame, gpd.GeoDataFrame) and frame.geometry.name in frame.columns
    if spatial:
        check_drawing_coordinates(path, layer, frame)
    crs = _defined_crs(path, layer, crs_wkt) if spatial else None
    if spatial and crs is not None:
        frame = frame.set_crs(crs, allow_override=True)
    if spatial:
        warn_geopackage_losses(path, layer, frame)
    else:
        warn_unread_columns(path, layer, frame)
    refuse_misread_text(path, layer, frame)
    return LayerData(name=layer, frame=frame, crs=crs, spatial=spatial)


def read_layer_batches(path: str | Path, layer: str, size: int) -> Iterator[LayerData]:
    """One layer read ``size`` features at a time (each batch as :func:`read_layer` reads a
    layer, its text checked as there: :func:`refuse_misread_text`), so that a statewide layer
    is never whole in memory (:func:`_layer_batches`)."""
    check_sheet(path, layer)
    check_drawing(path)
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
        arrow = None if without_cpg(path) else _arrow_batches(path, layer, size)
        if arrow is not None:
            yield from arrow
            return
        if ENGINE == "pyogrio":
            info = pyogrio.read_info(str(path), layer=layer)
            crs = _defined_crs(path, layer, info.get("crs"))
            start = 0
            while True:
                frame = pyogrio.read_dataframe(
                    str(path), layer=layer, skip_features=start, max_features=size, fid_as_index=True
                )
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
                attributes = pd.DataFrame([dict(f.properties) for f in chunk], index=fids, columns=columns)
                geometries = [shapely.geometry.shape(f.geometry) if f.geometry else None for f in chunk]
                yield _batch(
                    layer, gpd.GeoDataFrame(attributes, geometry=gpd.GeoSeries(geometries, index=fids)), crs
                )
    except InputError:
        raise
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(
            f"the layer could not be read ({_first_line(err)})",
            path=path,
            layer=layer,
            fix="open it in QGIS and save it again as GeoPackage",
        ) from None


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
        crs = _defined_crs(
            path, layer, found.GetSpatialRef().ExportToWkt() if found.GetSpatialRef() is not None else None
        )
        fid_name = found.GetFIDColumn() or "OGC_FID"
        geometry_name = found.GetGeometryColumn() or "wkb_geometry"
        definition = found.GetLayerDefn()
        columns = [definition.GetFieldDefn(i).GetName() for i in range(definition.GetFieldCount())]
        gdal.ErrorReset()
        stream = found.GetArrowStreamAsNumPy(options=[f"MAX_FEATURES_IN_BATCH={int(size)}"])
        for arrays in stream:
            fids = pd.Index(np.asarray(arrays[fid_name]), name="fid")
            attributes = pd.DataFrame(
                {c: _plain_column(arrays[c]) for c in columns}, index=fids, columns=columns
            )
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
    with open_arrow(str(path), layer=layer, batch_size=int(size), return_fids=True, use_pyarrow=True) as (
        meta,
        reader,
    ):
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
        data = np.array(
            [v.decode("utf-8", errors="replace") if isinstance(v, bytes) else v for v in data], dtype=object
        )
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
    return gpd.GeoDataFrame(
        attributes, geometry=gpd.GeoSeries(geometry_array(geometries), index=attributes.index)
    )


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


def layer_crs(path: str | Path, layer: str, con: Optional[sqlite3.Connection] = None) -> Optional[CRS]:
    """A spatial layer's CRS without reading its features (None where it has none).

    A GeoPackage's is read from its ``gpkg_spatial_ref_sys`` table (no driver opening), through
    ``con`` where given (:func:`geopackage_reader`).
    """
    stored = geopackage_crs(path, layer, con)
    if stored is not None:
        return stored or None
    try:
        if ENGINE == "pyogrio":
            crs_wkt = pyogrio.read_info(str(path), layer=layer).get("crs")
        else:
            with _gdal_log_muted(), fiona.open(str(path), layer=layer) as src:
                crs_wkt = src.crs_wkt or None
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(
            f"the layer could not be read ({_first_line(err)})",
            path=path,
            layer=layer,
            fix="open it in QGIS and save it again as GeoPackage",
        ) from None
    return _defined_crs(path, layer, crs_wkt)


def first_row(path: str | Path, layer: str) -> list[str]:
    """The cells of a spreadsheet sheet's first row as written (``HEADERS=DISABLE``: GDAL's
    XLSX/ODS drivers otherwise rename a repeated heading, or drop its column, so that what a
    header holds twice can only be seen here)."""
    check_workbook(path)
    try:
        if ENGINE == "pyogrio":
            # As the drivers' configuration options too: GDAL 3.12 applies the HEADERS open
            # option to a workbook's first sheet alone (a second is read with its header).
            with _gdal_config(OGR_XLSX_HEADERS="DISABLE", OGR_ODS_HEADERS="DISABLE"):
                frame = pyogrio.read_dataframe(
                    str(path), layer=layer, max_features=1, read_geometry=False, HEADERS="DISABLE"
                )
            cells = list(frame.iloc[0]) if len(frame) else []
        else:
            # Fiona's GDAL (3.6 on Debian 12) takes it as the drivers' configuration options.
            with (
                _gdal_log_muted(),
                fiona.Env(OGR_XLSX_HEADERS="DISABLE", OGR_ODS_HEADERS="DISABLE"),
                fiona.open(str(path), layer=layer) as src,
            ):
                feature = next(iter(src), None)
                cells = list(feature.properties.values()) if feature is not None else []
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(
            f"the sheet could not be read ({_first_line(err)})",
            path=path,
            layer=layer,
            fix="open it in a spreadsheet and save it again",
        ) from None
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
    frame = pyogrio.read_dataframe(
        str(path),
        layer=layer,
        bbox=tuple(bbox) if bbox else None,
        fid_as_index=True,
        read_geometry=has_geometry,
    )
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
    with _gdal_log_muted(), fiona.open(str(path), layer=layer, ignore_geometry=not read_geometry) as src:
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


def _defined_crs(path, layer, crs_wkt) -> Optional[CRS]:
    """The layer's CRS, or None where it has none or an undefined one (srs_id 0 or -1)."""
    if geopackage_srs_id(path, layer) in (0, -1):
        return None
    if not crs_wkt:
        return None
    crs = crs_of(crs_wkt)
    if (crs.name or "").strip().lower() in UNDEFINED_CRS_NAMES:
        return None
    return crs


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
    schema = {
        "geometry": "None",
        "properties": {c: types.get(str(frame[c].dtype), "str") for c in frame.columns},
    }
    with fiona.open(str(path), "w", layer=name, driver="GPKG", schema=schema) as dst:
        for row in frame.itertuples(index=False):
            props = {c: (None if pd.isna(v) else v) for c, v in zip(frame.columns, row)}
            dst.write({"geometry": None, "properties": props})


def _first_line(err) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]
