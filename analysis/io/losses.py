"""What a driver alters or drops when it reads a layer, told (a warning naming the features)
or refused (an :class:`InputError` naming file, layer, feature and field): arcs made straight,
M values dropped, a second geometry column left out, a shapefile's UTF-8 text read as Latin-1.
A layer never loses something without a word."""

from __future__ import annotations

import logging
import sqlite3
import struct
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Optional

import geopandas as gpd
import pandas as pd

from ..errors import InputError
from .engine import ENGINE
from .geopackage import geopackage_reader, gpkg_table, gpkg_wkb, quote_name, reader_connection

__all__ = [
    "DBF_NAME_LENGTH",
    "refuse_misread_text",
    "altered_geometries",
    "warn_altered_geometries",
    "warn_unread_columns",
    "warn_geopackage_losses",
    "without_cpg",
]

log = logging.getLogger(__name__)


# The longest field name a shapefile's .dbf holds: GDAL cuts longer ones (disturbance_id ->
# disturban), so a reader that misses a field looks for its name cut to this length too.
DBF_NAME_LENGTH = 10


def refuse_misread_text(path: str | Path, layer: str, frame: pd.DataFrame) -> None:
    """Refuse a shapefile (or a lone .dbf) without a ``.cpg`` whose text is UTF-8 read as
    Latin-1: GDAL takes a .dbf without one (and without a code page in its header) to be
    ISO-8859-1, so "Kiryas Joël" written as UTF-8 reads "Kiryas JoÃ«l" on both stacks."""
    path = Path(path)
    if not without_cpg(path):
        return
    geometry = frame.geometry.name if isinstance(frame, gpd.GeoDataFrame) else None
    for column in frame.columns:
        if column == geometry or not (
            frame[column].dtype == object or pd.api.types.is_string_dtype(frame[column].dtype)
        ):
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
                    path=path,
                    layer=layer,
                    feature=fid,
                    field=str(column),
                    fix=f"put a file {path.with_suffix('.cpg').name} holding the word UTF-8 "
                    "beside it, or save the layer again as GeoPackage",
                )


def without_cpg(path: str | Path) -> bool:
    """Whether ``path`` is a shapefile (or a lone .dbf) without a .cpg beside it."""
    path = Path(path)
    return path.suffix.lower() in (".shp", ".dbf") and not any(
        path.with_suffix(s).exists() for s in (".cpg", ".CPG")
    )


# WKB geometry types (ISO, without their Z/M thousands) that hold arcs or curves.
_CIRCULAR_STRING = 8


_LINEAR_POINTS = {1: 1, 2: None, 8: None}  # point: one; line and arc: counted


_RINGS = (3, 17)  # polygon, triangle: rings of counted points


_PARTS = (4, 5, 6, 7, 9, 10, 11, 12, 15, 16)  # multi-, collections, compound, curve polygon...


_CURVED_DECLARED = (
    "CIRCULARSTRING",
    "COMPOUNDCURVE",
    "CURVEPOLYGON",
    "MULTICURVE",
    "MULTISURFACE",
    "CURVE",
    "SURFACE",
    "GEOMETRY",
    "GEOMETRYCOLLECTION",
)


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


def warn_geopackage_losses(path, layer: str, frame: pd.DataFrame) -> None:
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


def altered_geometries(
    path: str | Path,
    layer: str,
    fids: Optional[Sequence[int]] = None,
    con: Optional[sqlite3.Connection] = None,
) -> tuple[list[int], list[int]]:
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
        with reader_connection(path, con) as con:
            row = con.execute(
                "SELECT table_name, column_name, geometry_type_name, m FROM "
                "gpkg_geometry_columns WHERE lower(table_name) = lower(?)",
                (layer,),
            ).fetchone()
            if row is None or (str(row[2]).upper() not in _CURVED_DECLARED and not row[3]):
                return [], []
            table = gpkg_table(con, row[0])
            key = table[2] if table is not None else "rowid"
            among = ""
            if fids is not None:
                con.execute("DROP TABLE IF EXISTS temp.swppp_fids")
                con.execute("CREATE TEMP TABLE swppp_fids (id INTEGER PRIMARY KEY)")
                con.executemany("INSERT OR IGNORE INTO temp.swppp_fids VALUES (?)", [(int(f),) for f in fids])
                among = f" WHERE {quote_name(key)} IN (SELECT id FROM temp.swppp_fids)"
            for fid, blob in con.execute(
                f"SELECT {quote_name(key)}, {quote_name(row[1])} FROM {quote_name(row[0])}{among} ORDER BY 1"
            ):
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


def warn_altered_geometries(
    path: str | Path,
    layer: str,
    fids: Optional[Sequence[int]] = None,
    con: Optional[sqlite3.Connection] = None,
) -> None:
    """A warning (logged, as the command line shows it) naming the features whose arcs were
    made straight segments or whose M values were dropped on reading (:func:`altered_geometries`)."""
    arcs, measured = altered_geometries(path, layer, fids, con)
    shown = lambda fids: ", ".join(map(str, fids[:10])) + (" ..." if len(fids) > 10 else "")  # noqa: E731
    if arcs:
        log.warning(
            "%s",
            InputError(
                f"{len(arcs)} feature(s) ({shown(arcs)}) have arcs (curved geometry): each arc was "
                f"read as straight segments, one every {_arc_step()} degrees of arc (GDAL's "
                "OGR_ARC_STEPSIZE), and reviewed so: an area inside an arc is a little smaller (at "
                "most about 0.1% of a whole circle's)",
                path=path,
                layer=layer,
                fix="nothing, if that is close enough; else draw the arcs with more vertices "
                "(QGIS: Processing > Segmentize by maximum angle) and save the layer again",
            ),
        )
    if measured:
        log.warning(
            "%s",
            InputError(
                f"{len(measured)} feature(s) ({shown(measured)}) have M (measure) values, which "
                "were not read: the review does not use them",
                path=path,
                layer=layer,
                fix="nothing, unless the measures matter; then put them in a field",
            ),
        )


def warn_unread_columns(
    path: str | Path, layer: str, frame: pd.DataFrame, con: Optional[sqlite3.Connection] = None
) -> None:
    """A warning naming the columns of GeoPackage layer ``layer`` that the driver left out of
    ``frame`` (read from it): GDAL reads one geometry column per table, and a second one
    (declared ``POLYGON``, say, but not registered as the layer's) is dropped without a word."""
    if Path(path).suffix.lower() != ".gpkg":
        return
    try:
        with reader_connection(path, con) as con:
            found = gpkg_table(con, layer)
    except sqlite3.Error:
        return
    if found is None:
        return
    read = {str(c).lower() for c in frame.columns}
    unread = [c for c in found[3] if str(c).lower() not in read]
    if unread:
        log.warning(
            "%s",
            InputError(
                f"the column(s) {', '.join(repr(c) for c in unread)} were not read (GDAL reads one "
                f"geometry column per layer, '{found[1]}' here): the review does not see them",
                path=path,
                layer=layer,
                fix="move what they hold into a layer of its own, or into fields of this one",
            ),
        )


def _arc_step() -> str:
    """GDAL's step along an arc when it makes it straight, in degrees (its default 4)."""
    try:
        if ENGINE == "pyogrio":
            import pyogrio

            value = pyogrio.get_gdal_config_option("OGR_ARC_STEPSIZE")
        else:
            from osgeo import gdal

            value = gdal.GetConfigOption("OGR_ARC_STEPSIZE")
    except Exception:  # noqa: BLE001 - the figure only describes what GDAL did
        value = None
    return str(value or 4)
