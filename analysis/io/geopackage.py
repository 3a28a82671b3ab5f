"""GeoPackage files read by SQLite itself, no driver: their layers, CRSs, feature ids, boxes
through the R-tree, attribute tables as stored (text in a numeric or date column kept as text).
The same on both stacks, and cheap: a reference's reads and a review's look-ups go through here.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from pathlib import Path
from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..crs import crs_of, epsg_code
from ..errors import InputError
from ..geometry import geometry_array
from ..limits import STORE_BUSY_NOTICE_S, STORE_BUSY_TIMEOUT_S

__all__ = [
    "geopackage_reader",
    "geopackage_connection",
    "WaitingConnection",
    "geopackage_layers",
    "rtree_disagreement",
    "write_packed_rtree",
    "rtree_boxes",
    "index_disagreement",
    "file_stamp",
    "rtrees_known_to_agree",
    "remember_agreeing_rtrees",
    "gpkg_wkb",
    "gpkg_blob",
    "read_geopackage_boxes",
    "geopackage_box_rows",
    "read_geopackage_table",
    "stored_texts",
    "with_stored_texts",
    "gpkg_table",
    "quote_name",
    "reader_connection",
    "UNDEFINED_CRS_NAMES",
    "geopackage_crs",
    "geopackage_srs_id",
    "GPKG_APPLICATION_ID",
    "GPKG_USER_VERSION",
    "GPKG_BASE_SCHEMA",
    "register_srs",
]


# A new GeoPackage: its application id, version, and the tables every one has (spec 1.2):
# the reference store and the review file are both made with them.
GPKG_APPLICATION_ID = 0x47504B47  # "GPKG"
GPKG_USER_VERSION = 10200
GPKG_BASE_SCHEMA = """
CREATE TABLE gpkg_spatial_ref_sys (srs_name TEXT NOT NULL, srs_id INTEGER NOT NULL PRIMARY KEY,
  organization TEXT NOT NULL, organization_coordsys_id INTEGER NOT NULL, definition TEXT NOT NULL,
  description TEXT);
INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined Cartesian SRS', -1, 'NONE', -1, 'undefined',
  'undefined Cartesian coordinate reference system');
INSERT INTO gpkg_spatial_ref_sys VALUES ('Undefined geographic SRS', 0, 'NONE', 0, 'undefined',
  'undefined geographic coordinate reference system');
INSERT INTO gpkg_spatial_ref_sys VALUES ('WGS 84 geodetic', 4326, 'EPSG', 4326, 'GEOGCS["WGS 84",DATUM["WGS_1984",SPHEROID["WGS 84",6378137,298.257223563,AUTHORITY["EPSG","7030"]],AUTHORITY["EPSG","6326"]],PRIMEM["Greenwich",0,AUTHORITY["EPSG","8901"]],UNIT["degree",0.0174532925199433,AUTHORITY["EPSG","9122"]],AXIS["Latitude",NORTH],AXIS["Longitude",EAST],AUTHORITY["EPSG","4326"]]',
  'longitude/latitude coordinates in decimal degrees on the WGS 84 spheroid');
CREATE TABLE gpkg_contents (table_name TEXT NOT NULL PRIMARY KEY, data_type TEXT NOT NULL,
  identifier TEXT UNIQUE, description TEXT DEFAULT '',
  last_change DATETIME NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
  min_x DOUBLE, min_y DOUBLE, max_x DOUBLE, max_y DOUBLE, srs_id INTEGER,
  CONSTRAINT fk_gc_r_srs_id FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys(srs_id));
CREATE TABLE gpkg_geometry_columns (table_name TEXT NOT NULL, column_name TEXT NOT NULL,
  geometry_type_name TEXT NOT NULL, srs_id INTEGER NOT NULL, z TINYINT NOT NULL, m TINYINT NOT NULL,
  CONSTRAINT pk_geom_cols PRIMARY KEY (table_name, column_name),
  CONSTRAINT uk_gc_table_name UNIQUE (table_name),
  CONSTRAINT fk_gc_tn FOREIGN KEY (table_name) REFERENCES gpkg_contents(table_name),
  CONSTRAINT fk_gc_srs FOREIGN KEY (srs_id) REFERENCES gpkg_spatial_ref_sys (srs_id));
CREATE TABLE gpkg_extensions (table_name TEXT, column_name TEXT, extension_name TEXT NOT NULL,
  definition TEXT NOT NULL, scope TEXT NOT NULL,
  CONSTRAINT ge_tce UNIQUE (table_name, column_name, extension_name));
"""


def register_srs(con: sqlite3.Connection, crs) -> int:
    """The ``srs_id`` of ``crs`` in the GeoPackage open on ``con``: its EPSG row where one is
    there, else a row added (its EPSG code as the id where free, else one above 100000)."""
    crs = crs_of(crs)
    epsg = epsg_code(crs)
    if epsg:
        found = con.execute(
            "SELECT srs_id FROM gpkg_spatial_ref_sys WHERE organization = "
            "'EPSG' AND organization_coordsys_id = ?",
            (epsg,),
        ).fetchone()
        if found:
            return int(found[0])
    taken = con.execute("SELECT 1 FROM gpkg_spatial_ref_sys WHERE srs_id = ?", (epsg,)).fetchone()
    srs_id = (
        epsg
        if epsg and not taken
        else max(100000, con.execute("SELECT max(srs_id) FROM gpkg_spatial_ref_sys").fetchone()[0] + 1)
    )
    con.execute(
        "INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, NULL)",
        (
            crs.name,
            srs_id,
            "EPSG" if epsg else "NONE",
            epsg or srs_id,
            crs.to_wkt("WKT1_GDAL") if crs.to_wkt("WKT1_GDAL") else crs.to_wkt(),
        ),
    )
    return srs_id


# GDAL's names for the GeoPackage srs_ids 0 and -1 ("undefined"), and for the srs_id 99999
# that GDAL 3.9+ writes for a layer without one: no CRS at all.
UNDEFINED_CRS_NAMES = ("undefined geographic srs", "undefined cartesian srs", "undefined srs")


_NUMERIC_TYPES = ("INT", "REAL", "FLOA", "DOUB", "BOOLEAN", "NUMERIC")


def stored_texts(
    path: str | Path, layer: str, fids: Optional[Sequence[int]] = None, dates_only: bool = False
) -> dict[str, dict[int, str]]:
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
            table = con.execute(
                "SELECT table_name FROM gpkg_contents WHERE lower(table_name) = lower(?)", (layer,)
            ).fetchone()
            if table is None:
                return {}
            quoted = quote_name(table[0])
            columns = con.execute(f"PRAGMA table_info({quoted})").fetchall()
            key = next((c[1] for c in columns if c[5]), None)  # the primary key: the fid
            among = ""
            if fids is not None and key is not None:
                con.execute("CREATE TEMP TABLE swppp_fids (id INTEGER PRIMARY KEY)")
                con.executemany("INSERT OR IGNORE INTO temp.swppp_fids VALUES (?)", [(int(f),) for f in fids])
                among = f" AND {quote_name(key)} IN (SELECT id FROM temp.swppp_fids)"
            for column in columns:
                name, declared = column[1], str(column[2] or "").upper()
                if key is None or column[5]:
                    continue
                name_q = quote_name(name)
                if declared in ("DATE", "DATETIME"):
                    # GDAL reads a date it cannot parse ('04/01/2027', 'soon') as null.
                    day = f"substr({name_q}, 1, 10)"
                    unread = (
                        f"typeof({name_q}) != 'null' AND NOT (typeof({name_q}) = 'text' "
                        f"AND length({name_q}) >= 10 AND date({day}, '+0 days') IS {day})"
                    )
                elif any(t in declared for t in _NUMERIC_TYPES) and not dates_only:
                    # A whole-number column read as int64 would drop a fraction (0.5 -> 0) too.
                    kinds = "('text', 'blob'" + (", 'real')" if "INT" in declared else ")")
                    unread = f"typeof({name_q}) IN {kinds}"
                else:
                    continue
                rows = con.execute(
                    f"SELECT {quote_name(key)}, {name_q} FROM {quoted} WHERE {unread}{among}"
                ).fetchall()
                if rows:
                    found[name] = {
                        int(fid): value if isinstance(value, str) else repr(value) for fid, value in rows
                    }
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
    declared = _declared(path, layer)
    dates = [c for c in texts if c in frame.columns and declared.get(c) in ("DATE", "DATETIME")]
    if dates:
        # One unreadable date can make the driver give up the whole column (GDAL 3.10's, in
        # QGIS 3.40: every value as its own text, '2027/04/01 00:00:00'): a date column holding
        # one is taken as the file stores it, each day as 'YYYY-MM-DD[THH:MM:SS...]', on every
        # stack.
        stored = read_geopackage_table(path, layer)
        if stored is not None:
            for column in dates:
                frame[column] = stored[column].reindex(frame.index).astype(object)
    for column, values in texts.items():
        if column in frame.columns and column not in dates:
            series = frame[column].astype(object)
            for fid, text in values.items():
                if fid in series.index:
                    series.at[fid] = text
            frame[column] = series
    return frame


def _declared(path: str | Path, layer: str) -> dict[str, str]:
    """{column: its declared type, upper case} of GeoPackage layer ``layer``."""
    try:
        with reader_connection(path, None) as con:
            found = gpkg_table(con, layer)
            if found is None:
                return {}
            return {
                str(r[1]): str(r[2] or "").upper()
                for r in con.execute(f"PRAGMA table_info({quote_name(found[0])})").fetchall()
            }
    except sqlite3.Error:
        return {}


# How long a connection to a GeoPackage waits, in all, for another process that holds the file
# (an import writing into a reference store, a BEGIN IMMEDIATE / EXCLUSIVE of another program)
# before it refuses, naming the file, and how often it says so meanwhile: analysis.limits.
_BUSY_TRY_S = 1.0  # SQLite's own busy wait per try; the loop below bounds the whole

_log = logging.getLogger(__name__)


class WaitingConnection(sqlite3.Connection):
    """A connection to a GeoPackage that, when another process holds the file ("database is
    locked"), waits for it at most :data:`STORE_BUSY_TIMEOUT_S` in all, saying it waits
    ("waiting for another import to finish ...") every :data:`STORE_BUSY_NOTICE_S`, then
    refuses (:class:`InputError`, naming the file and what to do). Every connection to a
    reference store (the store's own, a reader's) is one of these: the one place a locked
    store is met. A statement that meets the lock is asked again (a read, a BEGIN, a COMMIT:
    SQLite leaves each as it was before the statement when it answers busy)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.label = str(args[0]) if args else "the GeoPackage"
        self.waiting: Optional[Callable[[str], None]] = None  # told while waiting (progress)

    def _waited(self, run):
        deadline = said = None
        while True:
            try:
                return run()
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err):
                    raise
                now = time.monotonic()
                deadline = deadline or now + STORE_BUSY_TIMEOUT_S
                if now >= deadline:
                    raise InputError(
                        f"another process has held this GeoPackage for {STORE_BUSY_TIMEOUT_S:g} s "
                        "(another reference import writing into it, or a program holding it "
                        f"open for writing; SQLite: {err})",
                        path=self.label,
                        fix="wait for the other import to finish (or close the program holding "
                        "the file) and run this again",
                    ) from None
                if said is None or now - said >= STORE_BUSY_NOTICE_S:
                    said = now
                    left = deadline - now
                    message = (
                        f"waiting for another import to finish with {self.label} (another "
                        f"process holds it; giving up in {left:.0f} s)"
                    )
                    (self.waiting or _log.warning)(message)

    def execute(self, *args, **kwargs):
        return self._waited(lambda: super(WaitingConnection, self).execute(*args, **kwargs))

    def executemany(self, *args, **kwargs):
        return self._waited(lambda: super(WaitingConnection, self).executemany(*args, **kwargs))

    def executescript(self, *args, **kwargs):
        return self._waited(lambda: super(WaitingConnection, self).executescript(*args, **kwargs))


def geopackage_connection(
    path: str | Path, read_only: bool = False, label: Optional[str] = None, factory=WaitingConnection
) -> sqlite3.Connection:
    """A :class:`WaitingConnection` to the GeoPackage at ``path`` (autocommit: the caller says
    BEGIN), read-only where asked; the one way a connection to a reference store is opened."""
    target = f"file:{Path(path).resolve()}?mode=ro" if read_only else str(path)
    con = sqlite3.connect(
        target,
        uri=read_only,
        timeout=_BUSY_TRY_S,
        isolation_level=None,
        factory=factory,
        check_same_thread=False,
    )
    con.label = label or str(path)
    return con


class _Reader(WaitingConnection):
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
    return geopackage_connection(path, read_only=True, factory=_Reader)


_DATA_VERSION = "\0data_version"  # the key of SQLite's data_version the rest was kept at


def _kept(con) -> Optional[dict]:
    """What ``con`` (a :func:`geopackage_reader`'s) keeps of the file, emptied first where the
    file is no longer the one it was asked of: a commit by another connection (a re-import
    that changed a layer's CRS or its tables) changes SQLite's ``data_version``. None where
    ``con`` keeps nothing."""
    known = getattr(con, "known", None)
    if known is not None:
        version = con.execute("PRAGMA data_version").fetchone()[0]
        if known.get(_DATA_VERSION) != version:
            known.clear()
            known[_DATA_VERSION] = version
    return known


def _known(con, key: str, ask):
    """``ask(con)``, kept in ``con`` under ``key`` for as long as the file is the one it was
    asked of (:func:`_kept`)."""
    known = _kept(con)
    if known is None:
        return ask(con)
    if key not in known:
        known[key] = ask(con)
    return known[key]


def file_stamp(path) -> Optional[tuple]:
    """What changes whenever SQLite commits to the file at ``path``: the file's identity
    (device, inode), size and modification time, its header's file change counter (bytes 24-27,
    which every commit in rollback-journal mode increments) and, where the file has a write-ahead
    log, the log's size, time and header (a commit in WAL mode appends to the log, and a log
    started again gets new salts in its header). Two equal stamps are the same state of the
    file; None where the file cannot be read."""
    try:
        found = os.stat(path)
        with open(path, "rb") as file:
            header = file.read(100)
    except OSError:
        return None
    try:
        log = os.stat(f"{path}-wal")
        with open(f"{path}-wal", "rb") as file:
            wal: Optional[tuple] = (log.st_size, log.st_mtime_ns, file.read(32))
    except OSError:
        wal = None
    return (found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns, header[24:28], wal)


# The R-trees this process found agreeing with their layers (index_disagreement), by the stamp
# of the file when they were checked: a file opened again unchanged (the panel reviewing one
# site after another) is not checked again. A few files' worth, the oldest let go first.
_AGREEING: dict[tuple, frozenset] = {}
_AGREEING_FILES = 32
_AGREEING_LOCK = threading.Lock()  # reviews run in QGIS's task threads


def _agrees(table: str, column: str) -> str:
    """The key under which a reader keeps whether ``table``'s R-tree agrees with its layer."""
    return f"agrees:rtree_{table}_{column}"


def remember_agreeing_rtrees(stamp: Optional[tuple], path, rtrees: Sequence[tuple[str, str]]) -> None:
    """Keep that every R-tree of ``rtrees`` (their layers' (table, geometry column)) in the
    GeoPackage at ``path`` agreed with its layer, checked while the file's stamp was ``stamp`` (taken before the
    check): kept only where the file is still in that state now, so that no commit made while
    the check ran is vouched for."""
    if stamp is None or file_stamp(path) != stamp:
        return
    with _AGREEING_LOCK:
        _AGREEING.pop(stamp, None)
        while len(_AGREEING) >= _AGREEING_FILES:
            _AGREEING.pop(next(iter(_AGREEING)))
        _AGREEING[stamp] = frozenset(rtrees)


def rtrees_known_to_agree(con, path) -> bool:
    """True where this process found every R-tree of the GeoPackage at ``path`` agreeing with
    its layer (:func:`remember_agreeing_rtrees`) and the file is in the same state now
    (:func:`file_stamp`); ``con`` (a reader of that file) is then told so, and its
    :func:`index_disagreement` answers without reading the file."""
    known = _kept(con)  # data_version read before the stamp: a later commit still empties it
    rtrees = _AGREEING.get(file_stamp(path) or ())
    if rtrees is None:
        return False
    if known is not None:
        known.update((_agrees(table, column), None) for table, column in rtrees)
    return True


def geopackage_layers(
    path: str | Path, unlisted: Sequence[str] = (), con: Optional[sqlite3.Connection] = None
) -> Optional[list[str]]:
    """:func:`list_layers` of a plain GeoPackage answered by SQLite (no driver opening): its
    feature and attribute tables. None (ask the driver) for anything GDAL might list otherwise:
    a table or view not registered in gpkg_contents (but the ``unlisted`` ones the caller
    knows GDAL leaves out: a reference store's history), other content types, a registered
    table that is missing, a feature table without its geometry column row. Through ``con``
    where given (:func:`geopackage_reader`)."""
    if Path(path).suffix.lower() != ".gpkg" or not Path(path).is_file():
        return None
    try:
        with reader_connection(path, con) as con:
            contents = con.execute("SELECT table_name, data_type FROM gpkg_contents").fetchall()
            tables = {
                r[0]
                for r in con.execute(
                    "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE "
                    "'gpkg_%' AND name NOT LIKE 'rtree_%' AND name NOT LIKE 'sqlite_%'"
                )
            }
            geometries = {r[0] for r in con.execute("SELECT table_name FROM gpkg_geometry_columns")}
    except sqlite3.Error:
        return None
    names = [str(name) for name, _kind in contents]
    tables -= set(unlisted) - set(names)
    if (
        set(names) != tables
        or len(names) != len(tables)
        or any(kind not in ("features", "attributes") for _name, kind in contents)
        or any(kind == "features" and name not in geometries for name, kind in contents)
    ):
        return None
    return names


@contextmanager
def reader_connection(path, con: Optional[sqlite3.Connection]) -> Iterator[sqlite3.Connection]:
    """``con``, or a connection of :func:`geopackage_reader` closed afterwards."""
    if con is not None:
        yield con
        return
    with closing(geopackage_reader(path)) as opened:
        yield opened


def geopackage_crs(path, layer, con: Optional[sqlite3.Connection] = None):
    """The CRS a GeoPackage records for ``layer``: a CRS, False for none, None if not known."""
    if Path(path).suffix.lower() != ".gpkg":
        return None
    try:
        with reader_connection(path, con) as con:
            rows = _known(
                con,
                "srs",
                lambda con: {
                    str(r[0]).lower(): r[1:]
                    for r in con.execute(
                        "SELECT g.table_name, g.srs_id, s.organization, s.organization_coordsys_id, "
                        "s.definition FROM gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s ON "
                        "s.srs_id = g.srs_id ORDER BY g.rowid DESC"
                    )
                },
            )
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
    return False if (crs.name or "").strip().lower() in UNDEFINED_CRS_NAMES else crs


def geopackage_srs_id(path, layer) -> Optional[int]:
    if Path(path).suffix.lower() != ".gpkg":
        return None
    try:
        with closing(sqlite3.connect(f"file:{Path(path).resolve()}?mode=ro", uri=True)) as con:
            row = con.execute(
                "SELECT srs_id FROM gpkg_geometry_columns WHERE lower(table_name) = lower(?)", (layer,)
            ).fetchone()
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
    return blob[8 + _ENVELOPE_BYTES[(blob[3] >> 1) & 0b111] :]


_GPKG_HEAD = np.dtype(
    [("magic", "S2"), ("version", "u1"), ("flags", "u1"), ("srs_id", "<i4"), ("box", "<f8", (4,))]
)


def gpkg_blob(geoms, srs_id: int, wkb=None, bounds=None) -> list[Optional[bytes]]:
    """GeoPackage geometry blobs: header with the [minx, maxx, miny, maxy] envelope, then WKB
    (``wkb`` and ``bounds`` — [minx, miny, maxx, maxy] rows —, where already made, are not
    made again). The headers are made in one numpy array, each then joined to its WKB."""
    wkb = shapely.to_wkb(geoms, byte_order=1) if wkb is None else wkb
    bounds = shapely.bounds(geoms) if bounds is None else np.asarray(bounds)
    heads = np.zeros(len(wkb), dtype=_GPKG_HEAD)
    box = np.asarray(bounds, dtype=np.float64).reshape(-1, 4)[:, [0, 2, 1, 3]]
    heads["magic"], heads["srs_id"], heads["box"] = b"GP", srs_id, box
    heads["flags"] = np.where(np.isnan(box).any(axis=1), 0b10011, 0b011)  # 0x10: empty
    raw, width = heads.tobytes(), _GPKG_HEAD.itemsize
    return [None if w is None else raw[i * width : (i + 1) * width] + w for i, w in enumerate(wkb)]


def read_geopackage_boxes(
    path: str | Path,
    layer: str,
    boxes: Sequence[Sequence[float]],
    con: Optional[sqlite3.Connection] = None,
    via: Optional[tuple[str, str]] = None,
) -> Optional[gpd.GeoDataFrame]:
    """The features of a GeoPackage layer whose envelope meets any of ``boxes`` (minx, miny,
    maxx, maxy in the layer's CRS), indexed by feature id, read in one query that joins the
    boxes with the layer's R-tree (one box: the R-tree asked directly); None where the layer
    has no R-tree (read it otherwise). Through ``con`` where given (:func:`geopackage_reader`).

    SQLite itself reads the file: the same on both stacks, and no feature passes through GDAL.
    ``via``: as :func:`geopackage_box_rows`.
    """
    found = geopackage_box_rows(path, layer, boxes, con, via)
    if found is None:
        return None
    fids, names, rows, geometries = found
    frame = pd.DataFrame(rows, index=pd.Index(fids, name="fid"), columns=names)
    frame["geometry"] = geometry_array(geometries)  # an array: no Series re-indexed
    return gpd.GeoDataFrame(frame, geometry="geometry")


def geopackage_box_rows(
    path: str | Path,
    layer: str,
    boxes: Sequence[Sequence[float]],
    con: Optional[sqlite3.Connection] = None,
    via: Optional[tuple[str, str]] = None,
) -> Optional[tuple[list[int], list[str], list[tuple], np.ndarray]]:
    """What :func:`read_geopackage_boxes` reads, before it is a frame: (the feature ids, the
    attribute columns' names, each feature's attributes as a tuple in that order, the
    geometries as an object array); None where it gives None. For a reader that picks
    features by their geometry before it makes a frame of the few it keeps.

    ``via``: (a table of the layer's geometries in another CRS keyed by ``fid``, its R-tree):
    ``boxes`` are in that CRS, the geometries come from that table and the attributes from
    the layer (a reference store's area copy, ``analysis.reference.area_copy``)."""
    boxes = [tuple(map(float, b)) for b in boxes]

    def meeting(con, table, column, key, names):
        if column is None:  # a table without geometry: no R-tree
            return None
        if via is not None:
            return _rows_via(con, table, key, names, via)
        rtree = f"rtree_{table}_{column}"
        if rtree not in _known(
            con,
            "rtrees",
            lambda con: {
                r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE name LIKE 'rtree%'")
            },
        ):
            return None
        wrong = index_disagreement(con, table, column, key)
        if wrong is not None:
            raise InputError(
                f"its spatial index disagrees with its geometries ({wrong}): read through it, "
                "the layer would look empty where it is not",
                path=getattr(con, "label", path),
                layer=table,
                fix="open the store where it can be written (a review or an import rebuilds the "
                "index there), or import the layer again",
            )
        among, parameters = _among(con, rtree, boxes)
        return _decoded(
            con.execute(
                f"SELECT {', '.join(quote_name(c) for c in [key, *names, column])} FROM "
                f"{quote_name(table)} WHERE {quote_name(key)} IN ({among}) ORDER BY {quote_name(key)}",
                parameters,
            )
        )

    def _rows_via(con, table, key, names, via):
        copy, rtree = via
        among, parameters = _among(con, rtree, boxes)
        return _decoded(
            con.execute(
                f"SELECT {', '.join('m.' + quote_name(c) for c in [key, *names])}, c.geom FROM "
                f"{quote_name(copy)} c JOIN {quote_name(table)} m ON m.{quote_name(key)} = c.fid "
                f"WHERE c.fid IN ({among}) ORDER BY c.fid",
                parameters,
            )
        )

    found = _table_rows(path, layer, con, meeting)
    if found is None:
        return None
    (fids, attributes, geometries), names = found
    return fids, names, attributes, geometries


def _decoded(cursor, batch: int = 256) -> tuple[list[int], list[tuple], np.ndarray]:
    """(ids, attribute tuples, geometries) of a cursor's (id, attributes..., geometry blob)
    rows, a batch at a time: each batch's blobs are let go once decoded (the blobs of every
    feature near 10,000 sites and their geometries were held at once: twice the memory)."""
    fids: list[int] = []
    attributes: list[tuple] = []
    geometries = []
    while rows := cursor.fetchmany(batch):
        fids.extend(int(r[0]) for r in rows)
        attributes.extend(r[1:-1] for r in rows)
        geometries.append(shapely.from_wkb([gpkg_wkb(r[-1]) for r in rows]))
        del rows
    return fids, attributes, np.concatenate(geometries) if geometries else np.array([], dtype=object)


def _among(con, rtree: str, boxes: Sequence[Sequence[float]]) -> tuple[str, tuple]:
    """(a query of the ids R-tree ``rtree`` gives for ``boxes``, its parameters): one box asks
    the R-tree directly; many are joined with it from a temporary table."""
    if len(boxes) == 1:
        minx, miny, maxx, maxy = boxes[0]
        return (
            f"SELECT id FROM {quote_name(rtree)} WHERE minx <= ? AND maxx >= ? AND miny <= ? AND maxy >= ?",
            (maxx, minx, maxy, miny),
        )
    meets = "r.minx <= b.maxx AND r.maxx >= b.minx AND r.miny <= b.maxy AND r.maxy >= b.miny"
    con.execute("DROP TABLE IF EXISTS temp.swppp_boxes")
    con.execute("CREATE TEMP TABLE swppp_boxes (minx REAL, miny REAL, maxx REAL, maxy REAL)")
    con.executemany("INSERT INTO temp.swppp_boxes VALUES (?, ?, ?, ?)", boxes)
    return f"SELECT r.id FROM temp.swppp_boxes b JOIN {quote_name(rtree)} r ON {meets}", ()


# The GeoPackage geometry header's flags byte (its 4th) with the "empty geometry" bit (0x10)
# set, as hex() spells its first digit: an empty geometry has no R-tree entry.
_EMPTY_FLAG_DIGITS = "('1', '3', '5', '7', '9', 'B', 'D', 'F')"


_CELL = np.dtype([("id", ">i8"), ("box", ">f4", (4,))])  # an R-tree cell as SQLite stores it


def rtree_boxes(boxes: np.ndarray) -> np.ndarray:
    """[minx, maxx, miny, maxy] rows as the float32 boxes an R-tree keeps, each rounded outward
    (half the memory of the doubles: made piece by piece while a layer is written)."""
    boxes = np.asarray(boxes, dtype=np.float64)
    return np.column_stack(
        [
            _float32(boxes[:, 0], True),
            _float32(boxes[:, 1], False),
            _float32(boxes[:, 2], True),
            _float32(boxes[:, 3], False),
        ]
    )


def _float32(values: np.ndarray, down: bool) -> np.ndarray:
    """``values`` as the float32 SQLite's R-tree keeps: rounded outward (down for a minimum,
    up for a maximum), so that the stored box holds the true one."""
    rounded = values.astype(np.float32)
    wrong = rounded.astype(np.float64) > values if down else rounded.astype(np.float64) < values
    rounded[wrong] = np.nextafter(rounded[wrong], np.float32(-np.inf if down else np.inf))
    return rounded


def _str_groups(boxes: np.ndarray, per_node: int) -> np.ndarray:
    """Sort-Tile-Recursive packing: the order of ``boxes`` ([minx, maxx, miny, maxy] rows) in
    which each run of ``per_node`` makes one node (vertical slices by x, then y in each)."""
    count = len(boxes)
    nodes = -(-count // per_node)
    slices = max(1, int(np.ceil(np.sqrt(nodes))))
    per_slice = per_node * -(-nodes // slices)
    by_x = np.argsort(boxes[:, 0].astype(np.float64) + boxes[:, 1], kind="stable")
    slice_of = np.arange(count) // per_slice
    return by_x[np.lexsort((boxes[by_x, 2].astype(np.float64) + boxes[by_x, 3], slice_of))]


def write_packed_rtree(con: sqlite3.Connection, rtree: str, ids, boxes=None) -> None:
    """Fill the empty R-tree virtual table ``rtree`` (2-D, as the GeoPackage extension makes it)
    with ``ids`` and their ``boxes`` ([minx, maxx, miny, maxy] rows) in one go — or, ``boxes``
    None, with ``ids`` a list of (ids, boxes) pieces, emptied here (no second copy held) —, as GDAL's bulk
    loader does: the tree packed in numpy (Sort-Tile-Recursive, every node full but the last of
    each level) and written into the table's shadow tables (``_node``, ``_rowid``,
    ``_parent``), instead of a million inserts each walking and splitting the tree (34 s for
    1M features, against about 2 s). ``rtreecheck()`` finds the result well formed."""
    node_table, rowid_table, parent_table = (
        quote_name(f"{rtree}_{part}") for part in ("node", "rowid", "parent")
    )
    size = con.execute(f"SELECT length(data) FROM {node_table} WHERE nodeno = 1").fetchone()[0]
    per_node = (size - 4) // _CELL.itemsize
    con.execute(f"DELETE FROM {node_table}")
    con.execute(f"DELETE FROM {rowid_table}")
    con.execute(f"DELETE FROM {parent_table}")
    if boxes is None:
        pieces = ids
        ids = np.concatenate([i for i, _ in pieces]) if pieces else np.zeros(0, np.int64)
        boxes = np.concatenate([b for _, b in pieces]) if pieces else np.zeros((0, 4), np.float32)
        pieces.clear()
    if not len(ids):
        con.execute(f"INSERT INTO {node_table} VALUES (1, zeroblob({size}))")
        return
    if boxes.dtype != np.float32:  # doubles: rounded outward here (float32: already were)
        boxes = rtree_boxes(boxes)
    keys = np.asarray(ids, dtype=np.int64)
    del ids
    levels = []  # bottom up: (the cells' keys and boxes in node order, cells in each node)
    while True:
        order = _str_groups(boxes, per_node) if len(keys) > per_node else np.arange(len(keys))
        keys, boxes = keys[order], boxes[order]
        starts = np.arange(0, len(keys), per_node)
        levels.append((keys, boxes, np.diff(np.r_[starts, len(keys)])))
        if len(starts) == 1:
            break
        boxes = np.column_stack(
            [
                np.minimum.reduceat(boxes[:, 0], starts),
                np.maximum.reduceat(boxes[:, 1], starts),
                np.minimum.reduceat(boxes[:, 2], starts),
                np.maximum.reduceat(boxes[:, 3], starts),
            ]
        )
        keys = np.arange(len(starts), dtype=np.int64)  # the child's place; its number below
    # Numbers: the root 1, then each level's nodes from the top down.
    numbers, next_number = [], 2
    for depth, (_, _, counts) in enumerate(reversed(levels)):
        if depth == 0:
            numbers.append(np.array([1], dtype=np.int64))
        else:
            numbers.append(np.arange(next_number, next_number + len(counts), dtype=np.int64))
            next_number += len(counts)
    numbers.reverse()  # bottom up, as levels
    for level in range(1, len(levels)):  # an inner node's cells name its children
        levels[level][0][:] = numbers[level - 1][levels[level][0]]
    for level, (keys, boxes, counts) in enumerate(levels):
        for first in range(0, len(counts), 4096):  # 4,096 nodes (5 MB) at a time
            nodes = len(counts[first : first + 4096])
            taken = slice(first * per_node, (first + nodes) * per_node)
            cells = np.zeros(nodes * per_node, dtype=_CELL)
            cells["id"][: len(keys[taken])] = keys[taken]
            cells["box"][: len(keys[taken])] = boxes[taken]
            blob = np.zeros((nodes, size), dtype=np.uint8)
            blob[:, 2:4] = counts[first : first + nodes].astype(">u2").view(np.uint8).reshape(nodes, 2)
            if level == len(levels) - 1:  # the root says the tree's depth
                blob[0, 0:2] = np.array([len(levels) - 1], dtype=">u2").view(np.uint8)
            blob[:, 4 : 4 + per_node * _CELL.itemsize] = cells.view(np.uint8).reshape(nodes, -1)
            con.executemany(
                f"INSERT INTO {node_table} VALUES (?, ?)",
                zip(numbers[level][first : first + nodes].tolist(), map(bytes, blob)),
            )
        owner = np.repeat(numbers[level], counts)
        if level == 0:  # in id order, 100,000 at a time (no list of a million rows)
            by_id = np.argsort(keys, kind="stable")
            for start in range(0, len(by_id), 100_000):
                part = by_id[start : start + 100_000]
                con.executemany(
                    f"INSERT INTO {rowid_table} (rowid, nodeno) VALUES (?, ?)",
                    zip(keys[part].tolist(), owner[part].tolist()),
                )
        else:
            con.executemany(f"INSERT INTO {parent_table} VALUES (?, ?)", zip(keys.tolist(), owner.tolist()))


def rtree_disagreement(
    con, table: str, column: str, key: str, expected: Optional[int] = None
) -> Optional[str]:
    """What a check finds wrong with ``table``'s R-tree (None: it agrees): as many entries as
    non-empty geometries, every entry a feature, and its extent the layer's recorded one
    (``gpkg_contents``; float32 boxes: a little slack). A disagreeing index makes a reader
    through it find nothing where features are (issue 36, item 12).

    That check reads the whole layer (seconds at a million features: issue 37). Where the
    caller knows how many geometries the layer was written with (``expected``: the store's
    recorded count), :func:`rtree_agrees_at_a_glance` is asked first, in a few milliseconds
    whatever the size; only where it cannot vouch for the index is the whole layer read."""
    if expected is not None and rtree_agrees_at_a_glance(con, table, column, key, expected):
        return None
    rtree, t, c, k = (quote_name(n) for n in (f"rtree_{table}_{column}", table, column, key))
    indexed, minx, maxx, miny, maxy = con.execute(
        f"SELECT count(*), min(minx), max(maxx), min(miny), max(maxy) FROM {rtree}"
    ).fetchone()
    shapes = con.execute(
        f"SELECT count(*) FROM {t} WHERE {c} IS NOT NULL AND "
        f"substr(hex(substr({c}, 4, 1)), 1, 1) NOT IN {_EMPTY_FLAG_DIGITS}"
    ).fetchone()[0]
    if indexed != shapes:
        return f"{indexed} index entries for {shapes} geometries"
    strays = con.execute(
        f"SELECT count(*) FROM {rtree} r WHERE NOT EXISTS (SELECT 1 FROM {t} WHERE {k} = r.id)"
    ).fetchone()[0]
    if strays:
        return f"{strays} index entries name no feature"
    if not indexed:
        return None
    return _extent_disagreement(con, table, (minx, maxx, miny, maxy))


def _extent_disagreement(con, table: str, found) -> Optional[str]:
    """How the index's extent ``found`` (minx, maxx, miny, maxy) differs from the layer's
    recorded one (None: it does not, or none is recorded)."""
    recorded = con.execute(
        "SELECT min_x, max_x, min_y, max_y FROM gpkg_contents WHERE lower(table_name) = lower(?)", (table,)
    ).fetchone()
    if recorded is None or None in recorded:
        return None
    slack = 1e-5 * max(1.0, *(abs(float(v)) for v in recorded))
    if any(abs(float(a) - float(b)) > slack for a, b in zip(found, recorded)):
        minx, maxx, miny, maxy = found
        return (
            f"the index spans x {minx:.6g}..{maxx:.6g}, y {miny:.6g}..{maxy:.6g}, the layer "
            f"x {recorded[0]:.6g}..{recorded[1]:.6g}, y {recorded[2]:.6g}..{recorded[3]:.6g}"
        )
    return None


def rtree_agrees_at_a_glance(con, table: str, column: str, key: str, expected: int) -> bool:
    """True where ``table``'s R-tree shows, without reading the layer, what the whole check
    of :func:`rtree_disagreement` would find: ``expected`` entries (counted in the R-tree's own
    small id table), its lowest and highest ids the layer's lowest and highest feature ids
    (each one B-tree lookup), and its extent (the union of its root node's boxes) the layer's
    recorded one. An index emptied, shifted or renumbered fails it; False is no verdict, only
    "read the whole layer to know". Any SQLite refusal (an R-tree of another module's making)
    is False too."""
    rtree = f"rtree_{table}_{column}"
    try:
        ids, k, t = quote_name(rtree + "_rowid"), quote_name(key), quote_name(table)

        def one(sql: str):  # one aggregate per statement: SQLite answers each from its B-tree
            return con.execute(sql).fetchone()[0]

        indexed = one(f"SELECT count(*) FROM {ids}")
        if indexed != expected:
            return False
        if not indexed:
            return True
        ends = (one(f"SELECT min(rowid) FROM {ids}"), one(f"SELECT max(rowid) FROM {ids}"))
        if ends != (one(f"SELECT min({k}) FROM {t}"), one(f"SELECT max({k}) FROM {t}")):
            return False
        root = con.execute(f"SELECT data FROM {quote_name(rtree + '_node')} WHERE nodeno = 1").fetchone()
    except sqlite3.Error:
        return False
    extent = _root_extent(root[0] if root else None)
    return extent is not None and _extent_disagreement(con, table, extent) is None


def _root_extent(node: Optional[bytes]) -> Optional[tuple[float, float, float, float]]:
    """(minx, maxx, miny, maxy) spanned by an SQLite R-tree's root node (its blob: a 2-byte
    depth, a 2-byte cell count, then per cell an 8-byte id and four big-endian float32s, as
    sqlite's rtree.c lays a 2-D node out); None where it is not one such."""
    if not node or len(node) < 4:
        return None
    cells = int.from_bytes(node[2:4], "big")
    if not cells or len(node) < 4 + cells * 24:
        return None
    boxes = np.frombuffer(node, dtype=">f4", count=cells * 6, offset=4).reshape(cells, 6)[:, 2:]
    return (
        float(boxes[:, 0].min()),
        float(boxes[:, 1].max()),
        float(boxes[:, 2].min()),
        float(boxes[:, 3].max()),
    )


def index_disagreement(
    con, table: str, column: str, key: str, expected: Optional[int] = None
) -> Optional[str]:
    """:func:`rtree_disagreement`, asked once per connection and version of the file."""
    return _known(
        con,
        _agrees(table, column),
        lambda con: rtree_disagreement(con, table, column, key, expected),
    )


def read_geopackage_table(
    path: str | Path, layer: str, con: Optional[sqlite3.Connection] = None, rows: bool = True
) -> Optional[pd.DataFrame]:
    """The attributes of a GeoPackage layer or table (no geometry), indexed by feature id, as
    stored (text in a numeric column stays text), read by SQLite in one query (through ``con``
    where given); None where ``path`` is no GeoPackage holding ``layer`` with an integer key
    (read it otherwise). ``rows=False``: its columns alone, no row read."""
    if Path(path).suffix.lower() != ".gpkg":
        return None
    found = _table_rows(
        path,
        layer,
        con,
        lambda con, table, _column, key, names: con.execute(
            f"SELECT {', '.join(quote_name(c) for c in [key, *names])} FROM {quote_name(table)} "
            f"ORDER BY {quote_name(key)}" + ("" if rows else " LIMIT 0")
        ).fetchall(),
    )
    if found is None:
        return None
    read, names = found
    return pd.DataFrame(
        [r[1:] for r in read], columns=names, index=pd.Index([int(r[0]) for r in read], name="fid")
    )


def _table_rows(path, layer: str, con: Optional[sqlite3.Connection], read) -> Optional[tuple]:
    """(rows, the other columns' names) that ``read(con, table, geometry column, key, names)``
    returns for GeoPackage layer ``layer`` (through ``con`` where given); None where the layer
    is not one :func:`gpkg_table` knows, ``read`` returns None, or SQLite fails."""
    try:
        with reader_connection(path, con) as con:
            found = gpkg_table(con, layer)
            if found is None:
                return None
            rows = read(con, *found)
    except sqlite3.Error:
        return None
    return None if rows is None else (rows, found[3])


def gpkg_table(con, layer: str) -> Optional[tuple[str, Optional[str], str, list[str]]]:
    """(table, geometry column or None, integer key, the other columns) of GeoPackage layer
    ``layer`` (matched in any case); None where it is not listed in gpkg_contents or has no
    integer primary key."""
    contents = _known(
        con,
        "contents",
        lambda con: {
            str(name).lower(): (name, column)
            for name, column in con.execute(
                "SELECT c.table_name, g.column_name FROM gpkg_contents c LEFT JOIN "
                "gpkg_geometry_columns g ON g.table_name = c.table_name ORDER BY c.rowid DESC"
            )
        },
    )
    found = contents.get(str(layer).lower())
    if found is None:
        return None
    table, column = found
    info = _known(
        con, f"columns {table}", lambda con: con.execute(f"PRAGMA table_info({quote_name(table)})").fetchall()
    )
    key = next((r[1] for r in info if r[5] and str(r[2]).upper() == "INTEGER"), None)
    if key is None:
        return None
    return table, column, key, [r[1] for r in info if r[1] not in (key, column)]


def quote_name(name: str) -> str:
    """A table or column name quoted for SQLite (a double quote inside doubled)."""
    return '"' + str(name).replace('"', '""') + '"'
