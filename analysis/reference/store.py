"""Where reference layers are kept, version by version: a GeoPackage or a PostGIS schema.

A store holds, for each of the four reference layers, the current version as an ordinary
spatial table (what reviews read), every imported version's features in ``reference_history``
(what ``diff`` compares), and one ``layer_versions`` row per import. An import is one
transaction: a reader sees the previous version or the new one, never a mixture; an import
killed at any moment leaves the previous version as it was.

GeoPackage: one SQLite transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``). The new table, its
GeoPackage metadata and R-tree are written with the standard library's ``sqlite3``; the
R-tree triggers call ``ST_IsEmpty``/``ST_MinX``..., which plain SQLite lacks, so this module
registers them (they read the envelope in the GeoPackage geometry header).
"""

from __future__ import annotations

import errno
import json
import logging
import os
import queue
import re
import shutil
import sqlite3
import struct
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import closing
from dataclasses import asdict, dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import geopandas as gpd
import numpy as np
import shapely

from ..crs import crs_of, epsg_code, transform_geometries
from ..dates import parse_date
from ..errors import InputError
from ..io.files import discard, publish_new, stage
from ..io.geopackage import (
    GPKG_APPLICATION_ID,
    GPKG_BASE_SCHEMA,
    GPKG_USER_VERSION,
    file_stamp,
    geopackage_connection,
    geopackage_crs,
    gpkg_blob,
    gpkg_table,
    gpkg_wkb,
    index_disagreement,
    register_srs,
    remember_agreeing_rtrees,
    rtree_boxes,
    rtree_disagreement,
    rtrees_known_to_agree,
    write_packed_rtree,
)
from ..progress import SILENT, Progress
from .area_copy import COPIES_TABLE, AreaCopy, build_gpkg_copy, drop_gpkg_copy, gpkg_copies
from .contract import REFERENCE_LAYERS
from .links import LINKS_TABLE, link_note, links

if TYPE_CHECKING:  # the importer is loaded by an import, not by every review reading a store
    from .importer import Candidate

__all__ = [
    "VersionRow",
    "ImportResult",
    "ReferenceStore",
    "GeoPackageStore",
    "is_postgres",
    "status",
    "HISTORY_TABLE",
    "VERSIONS_TABLE",
    "written_batches",
    "read_ahead",
    "history_rows",
    "finish_version",
    "ADDED_VERSION_COLUMNS",
]

VERSIONS_TABLE = "layer_versions"
HISTORY_TABLE = "reference_history"
VERSION_FIELDS = (
    "layer",
    "version",
    "source",
    "source_date",
    "imported_at",
    "feature_count",
    "sha256",
    "crs",
    "source_date_from",
    "rejected_count",
    "rejected_with_tmdl",
    "rejections_accepted",
    "method",
    "stable_ids",
)
# Columns added to layer_versions after the first release (added to an older store on import).
ADDED_VERSION_COLUMNS = {
    "crs": "TEXT",
    "source_date_from": "TEXT",
    "rejected_count": "INTEGER",
    "rejected_with_tmdl": "INTEGER",
    "rejections_accepted": "INTEGER",
    "method": "TEXT",
    "stable_ids": "INTEGER",
}
_INTEGERS = (
    "version",
    "feature_count",
    "rejected_count",
    "rejected_with_tmdl",
    "rejections_accepted",
    "stable_ids",
)
_log = logging.getLogger(__name__)
CHUNK = 500  # features written between progress reports
CACHE_KIB = 128 * 1024  # SQLite's page cache while importing (KiB): beyond it, pages spill
# Test hook (kill -9 tests): after this many features, touch SWPPP_IMPORT_PAUSE_FILE and wait.
PAUSE_AFTER_ENV, PAUSE_FILE_ENV = "SWPPP_IMPORT_PAUSE_AFTER", "SWPPP_IMPORT_PAUSE_FILE"


@dataclass
class VersionRow:
    """One ``layer_versions`` row: one import of one layer."""

    layer: str
    version: int
    source: str
    source_date: Optional[str]
    imported_at: str
    feature_count: int
    sha256: str
    crs: Optional[str] = None
    source_date_from: Optional[str] = None  # where the source date was read ("given" by the user)
    rejected_count: Optional[int] = None  # features the import rejected (None: not recorded)
    rejected_with_tmdl: Optional[int] = None  # of those, units that have a TMDL
    rejections_accepted: Optional[int] = None  # 1 where the user accepted rejections over the limit
    method: Optional[str] = None  # how a derived layer was made (None: imported as published)
    stable_ids: Optional[int] = None  # 0 where ids were made from feature numbers ({fid})

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ImportResult:
    """What an import did: the version now current, and whether it was new."""

    version: VersionRow
    new: bool


def is_postgres(target) -> bool:
    """Whether ``target`` names a PostgreSQL connection (``postgresql://...``, ``service=...``).

    >>> [is_postgres(t) for t in ("service=gis", "postgresql://h/db", "ref.gpkg", "/d/a=b.gpkg")]
    [True, True, False, False]
    """
    text = str(target).strip()
    return text.startswith(("postgresql://", "postgres://")) or bool(re.match(r"[A-Za-z_]+\s*=", text))


class ReferenceStore:
    """What both stores share: versions, the sha256 check, the next version number."""

    label = "store"

    def versions(self, layer: Optional[str] = None) -> list[VersionRow]:
        raise NotImplementedError

    def current(self, layer: str) -> Optional[VersionRow]:
        rows = self.versions(layer)
        return rows[-1] if rows else None

    def import_candidate(
        self, candidate: Candidate, source_date: Optional[str] = None, progress: Optional[Progress] = None
    ) -> ImportResult:
        """Store ``candidate`` as the layer's new current version (one transaction).

        A source whose sha256 is the current version's is not imported again.
        """
        progress = progress or SILENT
        current = self.current(candidate.layer)
        if current is not None and current.sha256 == candidate.sha256:
            return ImportResult(current, new=False)
        row = VersionRow(
            layer=candidate.layer,
            version=(current.version + 1) if current else 1,
            source=candidate.source,
            source_date=source_date,
            imported_at=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            feature_count=0,
            sha256=candidate.sha256,  # counted as written
            crs=_crs_text(candidate.crs),
            source_date_from=candidate.source_date_from,
            method=candidate.method,
            stable_ids=int(candidate.stable_ids),
        )
        self._write(candidate, row, progress)
        return ImportResult(row, new=True)

    def read_version(self, layer: str, version: int) -> gpd.GeoDataFrame:
        """Every feature of one stored version, in the CRS it was stored in."""
        raise NotImplementedError

    def max_value(self, layer: str, field: str) -> Optional[str]:
        """The largest value of ``field`` in the current version (None where there is none)."""
        raise NotImplementedError

    def _write(self, candidate, row, progress):
        raise NotImplementedError

    def area_copies(self) -> dict[str, AreaCopy]:
        """The layers' area copies (``analysis.reference.area_copy``); a store that keeps none: {}."""
        return {}

    def make_area_copies(self, area_crs, progress: Progress = SILENT) -> list[AreaCopy]:
        raise InputError(
            "area copies are kept in a GeoPackage store only, as yet",
            path=self.label,
            fix="screen against this store as it is (the features are moved as they are read)",
        )

    def drop_area_copies(self) -> list[str]:
        return []

    def version_row(self, layer: str, version: Optional[int]) -> VersionRow:
        rows = self.versions(layer)
        if not rows:
            raise InputError(
                f"no version of '{layer}' is stored",
                path=self.label,
                layer=layer,
                fix=f"import a version of '{layer}' into the store first",
            )
        if version is None:
            return rows[-1]
        for item in rows:
            if item.version == version:
                return item
        raise InputError(
            f"there is no version {version} of '{layer}'",
            path=self.label,
            layer=layer,
            fix="versions stored: " + ", ".join(str(r.version) for r in rows),
        )


def check_still_current(layer: str, expected: Optional[int], found: Optional[int]) -> None:
    """Inside the import's transaction: no other import of ``layer`` finished meanwhile."""
    if found != expected:
        raise InputError(
            f"another import of '{layer}' finished while this one ran (version "
            f"{found} is current now); nothing was written",
            fix="run this import again",
        )


def _crs_text(crs) -> Optional[str]:
    if crs is None:
        return None
    crs = crs_of(crs)
    epsg = epsg_code(crs)
    return f"EPSG:{epsg}" if epsg else crs.to_wkt()


def history_rows(layer: str, frame: gpd.GeoDataFrame, version: int, wkb=None):
    """(layer, version, feature_id, attributes JSON, WKB) for every feature of ``frame`` (one
    batch of the version being imported; ``wkb``: its geometries' WKB, where already made; a
    missing geometry stays None)."""
    spec = REFERENCE_LAYERS[layer]
    if wkb is None:
        wkb = shapely.to_wkb(np.asarray(frame.geometry.array), byte_order=1)
    attributes = frame[list(spec.fields)].to_dict("records")
    return [
        (layer, version, str(a[spec.id_field]), json.dumps(a, sort_keys=True), g)
        for a, g in zip(attributes, wkb)
    ]


def written_batches(candidate: Candidate, progress: Progress, srid: Optional[int] = None):
    """The candidate's batches, each cut in ``chunk_size()`` pieces: (features written once
    the piece is, its contract fields' values as an object array of rows, its geometries' WKB,
    their [minx, miny, maxx, maxy] bounds), with the progress bar and the kill tests' pause
    between pieces. The values, WKB and bounds are made once a batch, in the reading thread
    (:func:`read_ahead`), not by the writer, and pieces are slices of them (no frame a piece).
    With ``srid``, the WKB is PostGIS's extended WKB carrying that SRID, as hex text (what its
    text COPY reads into a typed geometry column, as GDAL's PostgreSQL driver writes it)."""
    step = chunk_size()
    written = 0
    expected = candidate.expected
    columns = list(REFERENCE_LAYERS[candidate.layer].fields)
    for values, wkb, bounds in read_ahead(_with_wkb(candidate.chunks(), columns, srid)):
        for start in range(0, len(values), step):
            stop = start + step
            written += len(values[start:stop])
            yield written, values[start:stop], wkb[start:stop], bounds[start:stop]
            fraction = min(1.0, written / expected) if expected else 0.5
            progress.step(0.1 + 0.8 * fraction, f"{written} features written")
            debug_pause(written)


def _with_wkb(
    batches: Iterator[gpd.GeoDataFrame], columns: list, srid: Optional[int] = None
) -> Iterator[tuple]:
    for batch in batches:
        geoms = np.asarray(batch.geometry.array)
        if srid is None:
            wkb = shapely.to_wkb(geoms, byte_order=1)
        else:  # GEOS's hex writer is slow: binary, then Python's bytes.hex
            binary = shapely.to_wkb(shapely.set_srid(geoms, srid), byte_order=1, include_srid=True)
            wkb = np.array([None if w is None else w.hex() for w in binary], dtype=object)
        yield batch[columns].to_numpy(dtype=object), wkb, shapely.bounds(geoms)


def read_ahead(batches: Iterator, depth: int = 1) -> Iterator:
    """``batches``, the next one read (and validated) in a thread while the caller writes this
    one: GDAL, GEOS and SQLite release the GIL, so reading and writing overlap; at most
    ``depth`` batches wait, so memory stays bounded by the batch. An error while reading is
    raised here, in the caller; a caller that stops early stops the reading too."""
    waiting: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def put(item) -> bool:
        while not stop.is_set():
            try:
                waiting.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def read() -> None:
        try:
            for batch in batches:
                if not put((batch, None)):
                    return
            put((done, None))
        except BaseException as err:  # noqa: BLE001 - handed to the caller, raised there
            put((None, err))
        finally:
            close = getattr(batches, "close", None)
            if close is not None:
                close()

    reader = threading.Thread(target=read, name="swppp-import-read", daemon=True)
    reader.start()
    try:
        while True:
            batch, err = waiting.get()
            if err is not None:
                raise err
            if batch is done:
                return
            yield batch
    finally:
        stop.set()
        reader.join()


def finish_version(candidate: Candidate, row: VersionRow) -> None:
    """Once every feature is written, inside the import's transaction: the candidate's check
    (the rejection limits, on the counts of the whole source; it raises to refuse, and the
    transaction is rolled back), then the rejection counts into the version row."""
    if candidate.on_written is not None:
        candidate.on_written()
    report = candidate.report
    row.rejected_count = len(report.rejected)
    row.rejected_with_tmdl = len(report.rejected_with_tmdl)
    row.rejections_accepted = int(candidate.rejections_accepted)


def frame_from_history(layer: str, rows, crs) -> gpd.GeoDataFrame:
    """A version read back from (attributes JSON, WKB) rows."""
    spec = REFERENCE_LAYERS[layer]
    records = [json.loads(a) for a, _ in rows]
    reals = [name for name, kind in spec.fields.items() if kind == "real"]
    for record in records:  # PostGIS's JSON writes a whole real as 100, not 100.0: a float again
        for name in reals:
            if isinstance(record.get(name), int):
                record[name] = float(record[name])
    geoms = shapely.from_wkb([None if g is None else bytes(g) for _, g in rows]) if rows else []
    return gpd.GeoDataFrame(records, columns=list(spec.fields), geometry=list(geoms), crs=crs)


def chunk_size() -> int:
    """Features per batch: smaller under the kill tests' hook, so the pause comes after N."""
    limit = os.environ.get(PAUSE_AFTER_ENV)
    return max(1, min(CHUNK, int(limit))) if limit else CHUNK


def debug_pause(written: int) -> None:
    """For the kill tests only: stop (forever) once ``written`` features are in the transaction."""
    limit = os.environ.get(PAUSE_AFTER_ENV)
    if limit is not None and written >= int(limit):
        Path(os.environ[PAUSE_FILE_ENV]).write_text(str(written))
        while True:
            time.sleep(1)


# --- GeoPackage --------------------------------------------------------------------------------

# The GeoPackage R-tree extension's triggers (spec 1.2, as GDAL writes them).
_RTREE_TRIGGERS = """
CREATE TRIGGER "rtree_{t}_geom_insert" AFTER INSERT ON "{t}" WHEN (new."geom" NOT NULL AND NOT ST_IsEmpty(NEW."geom")) BEGIN INSERT OR REPLACE INTO "rtree_{t}_geom" VALUES (NEW."fid",ST_MinX(NEW."geom"), ST_MaxX(NEW."geom"),ST_MinY(NEW."geom"), ST_MaxY(NEW."geom")); END;
CREATE TRIGGER "rtree_{t}_geom_update1" AFTER UPDATE OF "geom" ON "{t}" WHEN OLD."fid" = NEW."fid" AND (NEW."geom" NOTNULL AND NOT ST_IsEmpty(NEW."geom")) BEGIN INSERT OR REPLACE INTO "rtree_{t}_geom" VALUES (NEW."fid",ST_MinX(NEW."geom"), ST_MaxX(NEW."geom"),ST_MinY(NEW."geom"), ST_MaxY(NEW."geom")); END;
CREATE TRIGGER "rtree_{t}_geom_update2" AFTER UPDATE OF "geom" ON "{t}" WHEN OLD."fid" = NEW."fid" AND (NEW."geom" ISNULL OR ST_IsEmpty(NEW."geom")) BEGIN DELETE FROM "rtree_{t}_geom" WHERE id = OLD."fid"; END;
CREATE TRIGGER "rtree_{t}_geom_update3" AFTER UPDATE ON "{t}" WHEN OLD."fid" != NEW."fid" AND (NEW."geom" NOTNULL AND NOT ST_IsEmpty(NEW."geom")) BEGIN DELETE FROM "rtree_{t}_geom" WHERE id = OLD."fid"; INSERT OR REPLACE INTO "rtree_{t}_geom" VALUES (NEW."fid",ST_MinX(NEW."geom"), ST_MaxX(NEW."geom"),ST_MinY(NEW."geom"), ST_MaxY(NEW."geom")); END;
CREATE TRIGGER "rtree_{t}_geom_update4" AFTER UPDATE ON "{t}" WHEN OLD."fid" != NEW."fid" AND (NEW."geom" ISNULL OR ST_IsEmpty(NEW."geom")) BEGIN DELETE FROM "rtree_{t}_geom" WHERE id IN (OLD."fid", NEW."fid"); END;
CREATE TRIGGER "rtree_{t}_geom_delete" AFTER DELETE ON "{t}" WHEN old."geom" NOT NULL BEGIN DELETE FROM "rtree_{t}_geom" WHERE id = OLD."fid"; END;
"""
_SQL_TYPES = {"text": "TEXT", "integer": "INTEGER", "real": "REAL"}


def _q(name: str) -> str:
    """A quoted SQLite identifier (the layer names are the contract's, checked before)."""
    return '"' + name.replace('"', '""') + '"'


def _version_row(row: Sequence[Any]) -> VersionRow:
    """A ``layer_versions`` row as read (``VERSION_FIELDS`` in order), its counts as numbers."""
    values: list[Any] = [
        int(v) if k in _INTEGERS and v is not None else v for k, v in zip(VERSION_FIELDS, row)
    ]
    return VersionRow(*values)


def _envelope(blob):
    """(minx, maxx, miny, maxy) of a GeoPackage geometry blob, or None when empty."""
    if blob is None:
        return None
    blob = bytes(blob)
    flags = blob[3]
    if flags & 0x10:
        return None
    order = "<" if flags & 1 else ">"
    kind = (flags >> 1) & 0b111
    if kind:
        return struct.unpack_from(order + "4d", blob, 8)
    geom = shapely.from_wkb(blob[8:])
    if geom.is_empty:
        return None
    minx, miny, maxx, maxy = geom.bounds
    return minx, maxx, miny, maxy


def _register_gpkg_functions(con: sqlite3.Connection) -> None:
    """The ST_* functions GeoPackage R-tree triggers call, which plain SQLite lacks."""
    con.create_function("gpkg_wkb", 1, gpkg_wkb, deterministic=True)
    con.create_function(
        "ST_IsEmpty", 1, lambda b: None if b is None else int(_envelope(b) is None), deterministic=True
    )
    for index, name in enumerate(("ST_MinX", "ST_MaxX", "ST_MinY", "ST_MaxY")):
        con.create_function(
            name,
            1,
            lambda b, i=index: (lambda e: None if e is None else e[i])(_envelope(b)),
            deterministic=True,
        )


def disk_full(err: BaseException) -> bool:
    """Whether ``err`` is a full disk: SQLite's "database or disk is full" (SQLITE_FULL), an
    ``OSError`` ENOSPC (or EDQUOT, a quota)."""
    if isinstance(err, sqlite3.Error):
        return getattr(err, "sqlite_errorcode", None) == 13 or "disk is full" in str(err)
    return isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT)


class GeoPackageStore(ReferenceStore):
    """Reference layers and their versions in one GeoPackage file."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.label = str(self.path)
        if self.path.suffix.lower() != ".gpkg":
            raise InputError(
                "a reference GeoPackage must end in .gpkg",
                path=self.path,
                fix="name the target NAME.gpkg, or give postgresql://... / service=NAME",
            )

    def _connect(self, write: bool = False) -> sqlite3.Connection:
        if not write and not self.path.exists():
            raise InputError(
                "the reference GeoPackage does not exist",
                path=self.path,
                fix="import a reference layer into it first",
            )
        con = geopackage_connection(self.path, label=self.label)
        try:  # a text file, a truncated or zeroed GeoPackage: refused here, by name
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master")}
            if "gpkg_contents" not in tables:  # an empty or foreign SQLite file
                raise sqlite3.DatabaseError("it has no GeoPackage tables")
        except InputError:  # held by another process past the wait: refused by name
            con.close()
            raise
        except sqlite3.DatabaseError as err:
            con.close()
            raise InputError(
                f"not a readable GeoPackage (SQLite: {err})",
                path=self.path,
                fix="give the reference GeoPackage itself, or restore it from a "
                "backup; a new store is made where no file is yet",
            ) from None
        _register_gpkg_functions(con)
        return con

    def recover(self) -> None:
        """Roll back what a killed import left (a hot journal) before a read-only reader opens it.

        GDAL opens a GeoPackage read-only to read it, and a read-only connection cannot roll
        back a killed writer's journal ("attempt to write a readonly database"); any connection
        that may write does so on its first read.
        """
        if self.path.exists() and Path(f"{self.path}-journal").exists():
            with closing(self._connect(write=True)) as con:
                con.execute("SELECT count(*) FROM sqlite_master").fetchone()

    def repair_indexes(self, reader: sqlite3.Connection) -> None:
        """Rebuild each layer's R-tree that disagrees with its geometries (the cheap check of
        :func:`index_disagreement`, asked through ``reader``, whose answer readers reuse), where
        the file can be written; where it cannot, a read through it is refused by name."""
        if rtrees_known_to_agree(reader, self.path):  # found so in this process, file unchanged
            return
        stamp = file_stamp(self.path)
        writable = os.access(self.path, os.W_OK) and os.access(self.path.parent, os.W_OK)
        # Each layer's count as its current version recorded it: the check at a glance
        # (io.geopackage.rtree_agrees_at_a_glance) vouches for an index that shows it.
        counts: dict[str, int] = {}
        for row in self.versions_through(reader):
            counts[row.layer] = row.feature_count
        wrong, checked = [], []
        for table, column in reader.execute(
            "SELECT g.table_name, g.column_name FROM gpkg_geometry_columns g JOIN sqlite_master m "
            "ON m.name = 'rtree_' || g.table_name || '_' || g.column_name"
        ).fetchall():
            found = gpkg_table(reader, table)
            if not found:
                continue
            checked.append((table, column))
            problem = index_disagreement(reader, table, column, found[2], counts.get(table))
            if problem:
                wrong.append((table, column, found[2], problem))
        if not wrong:
            remember_agreeing_rtrees(stamp, self.path, checked)
        if not wrong or not writable:
            return
        with closing(self._connect(write=True)) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                for table, column, key, problem in wrong:
                    rtree, t, c = _q(f"rtree_{table}_{column}"), _q(table), _q(column)
                    con.execute(f"DELETE FROM {rtree}")
                    con.execute(
                        f"INSERT INTO {rtree} SELECT {_q(key)}, ST_MinX({c}), ST_MaxX({c}), ST_MinY({c}), "
                        f"ST_MaxY({c}) FROM {t} WHERE {c} IS NOT NULL AND NOT ST_IsEmpty({c})"
                    )
                    con.execute(  # the layer's recorded extent: its geometries', as indexed now
                        "UPDATE gpkg_contents SET (min_x, max_x, min_y, max_y) = (SELECT min(minx), "
                        f"max(maxx), min(miny), max(maxy) FROM {rtree}) WHERE table_name = ?",
                        (table,),
                    )
                    _log.warning(
                        "rebuilt the spatial index of layer '%s' in %s: it disagreed with its geometries (%s)",
                        table,
                        self.label,
                        problem,
                    )
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise

    def _tables(self, con) -> set[str]:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type IN ('table','view')")}

    # Area copies (analysis.reference.area_copy) -------------------------------------------
    def area_copies(self) -> dict[str, AreaCopy]:
        """The layers' area copies, as recorded (none where the store keeps none)."""
        with closing(self._connect()) as con:
            return gpkg_copies(con)

    def make_area_copies(self, area_crs, progress: Progress = SILENT) -> list[AreaCopy]:
        """Each layer with geometry copied into ``area_crs`` from its current version, in one
        transaction (a copy there before, in any CRS, replaced); what was made."""
        # The store must exist (write=False): a missing path is refused, not made empty.
        with closing(self._connect()) as con:
            con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            con.execute("BEGIN IMMEDIATE")
            try:
                current = {r.layer: r.version for r in self.versions_through(con)}  # the last: newest
                layers = [
                    name
                    for name in REFERENCE_LAYERS
                    if (found := gpkg_table(con, name)) is not None and found[1] is not None
                ]
                made = [
                    build_gpkg_copy(
                        con,
                        self.path,
                        layer,
                        area_crs,
                        current.get(layer),
                        progress.sub(k / len(layers), (k + 1) / len(layers)),
                    )
                    for k, layer in enumerate(layers)
                ]
                progress.check_canceled()
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        return made

    def drop_area_copies(self) -> list[str]:
        """Every area copy removed, in one transaction; the layers whose copy it was."""
        # The store must exist (write=False): a missing path is refused, not made empty.
        with closing(self._connect()) as con:
            con.execute("BEGIN IMMEDIATE")
            try:
                dropped = sorted(gpkg_copies(con))
                for layer in dropped:
                    drop_gpkg_copy(con, layer)
                con.execute(f"DROP TABLE IF EXISTS {_q(COPIES_TABLE)}")
                con.execute("COMMIT")
            except BaseException:
                if con.in_transaction:
                    con.execute("ROLLBACK")
                raise
        return dropped

    def versions(self, layer: Optional[str] = None) -> list[VersionRow]:
        if not self.path.exists():
            return []
        with closing(self._connect()) as con:
            return self.versions_through(con, layer)

    def versions_through(self, con: sqlite3.Connection, layer: Optional[str] = None) -> list[VersionRow]:
        """:meth:`versions` read through ``con``, a connection already open to the file (a
        reader's: no second connection, whose first question reads the file's schema again)."""
        if VERSIONS_TABLE not in self._tables(con):
            return []
        columns = [r[1] for r in con.execute(f"PRAGMA table_info({_q(VERSIONS_TABLE)})")]
        fields = [f if f in columns else f"NULL AS {f}" for f in VERSION_FIELDS]
        sql = f"SELECT {', '.join(fields)} FROM {_q(VERSIONS_TABLE)}"
        rows = con.execute(
            sql + (" WHERE layer = ?" if layer else "") + " ORDER BY layer, version",
            (layer,) if layer else (),
        ).fetchall()
        return [_version_row(r) for r in rows]

    def read_version(self, layer: str, version: int) -> gpd.GeoDataFrame:
        row = self.version_row(layer, version)
        with closing(self._connect()) as con:
            rows = (
                []
                if HISTORY_TABLE not in self._tables(con)
                else con.execute(
                    f"SELECT attributes, geometry FROM {_q(HISTORY_TABLE)} WHERE layer = ? AND version = ? "
                    "ORDER BY feature_id",
                    (layer, row.version),
                ).fetchall()
            )
            crs = row.crs
            if not rows:  # the current version: in the layer table until the next import
                rows = self._current_rows(con, layer, row)
                # A store made before versions recorded their CRS: the layer table's is this one's.
                crs = crs or geopackage_crs(self.path, layer, con) or None
        if crs is None and rows:
            raise InputError(
                f"version {row.version} of '{layer}' does not record its CRS (a store made by an "
                "earlier release keeps its older versions so)",
                path=self.path,
                layer=layer,
                fix="compare versions imported by this release (import the layer again)",
            )
        if not rows and row.feature_count:
            raise InputError(
                f"version {row.version} of '{layer}' was not imported by SWPPP "
                "Review's reference import: its features were not kept",
                path=self.path,
                layer=layer,
                fix="compare versions made by a reference import",
            )
        return frame_from_history(layer, rows, crs)

    def max_value(self, layer: str, field: str) -> Optional[str]:
        with closing(self._connect()) as con:
            if layer not in self._tables(con):
                return None
            value = con.execute(f"SELECT max({_q(field)}) FROM {_q(layer)}").fetchone()[0]
        return None if value is None else str(value)

    # Writing ------------------------------------------------------------------------------------
    def _create_empty(self) -> bool:
        """A new, empty GeoPackage at ``path``, built beside it and moved in whole: True where
        this call made it, False where another import made it first."""
        temp = stage(self.path)
        try:
            with closing(sqlite3.connect(temp, isolation_level=None)) as con:
                con.execute(f"PRAGMA application_id = {GPKG_APPLICATION_ID}")
                con.execute(f"PRAGMA user_version = {GPKG_USER_VERSION}")
                con.executescript("BEGIN;" + GPKG_BASE_SCHEMA + "COMMIT;")
            # Never over a store another import created meanwhile: its layer would be lost.
            return publish_new(temp, self.path)
        finally:
            discard(temp)

    def _write(self, candidate: Candidate, row: VersionRow, progress: Progress) -> None:
        try:
            created = not self.path.exists() and self._create_empty()
        except (OSError, sqlite3.Error) as err:
            if disk_full(err):
                raise self._full(candidate.layer, 0) from None
            raise
        layer, spec = candidate.layer, REFERENCE_LAYERS[candidate.layer]
        inode = self.path.stat().st_ino
        with closing(self._connect(write=True)) as con:
            # The batches are written inside one transaction; SQLite's page cache is bounded
            # (it spills to the file beyond it, which the rollback journal still undoes): memory
            # stays bounded whatever the layer's size. While a spilled import runs, readers wait.
            con.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
            con.execute("BEGIN IMMEDIATE")  # one writer; readers keep reading the old version
            if not self.path.exists() or self.path.stat().st_ino != inode:
                # The first import into this new store was refused and removed the store it
                # began while this one waited: writing into the removed file would be lost.
                con.execute("ROLLBACK")
                raise InputError(
                    "another import that was creating this store was refused, and "
                    "the store it began was removed while this import waited",
                    path=self.path,
                    fix="run this import again",
                )
            try:
                srs_id = self._srs_id(con, candidate.crs)
                self._ensure_side_tables(con)
                check_still_current(
                    layer,
                    row.version - 1 or None,
                    con.execute(
                        f"SELECT max(version) FROM {_q(VERSIONS_TABLE)} WHERE layer = ?", (layer,)
                    ).fetchone()[0],
                )
                self._archive_unkept(con, layer, spec, row.version - 1)
                self._drop_layer(con, layer)
                self._create_layer(con, layer, spec, candidate.geometry_type(), srs_id)
                columns = list(spec.fields)
                insert = (
                    f"INSERT INTO {_q(layer)} (fid, geom, {', '.join(_q(c) for c in columns)}) "
                    f"VALUES (?, ?{', ?' * len(columns)})"
                )
                # The version is not copied into the history here: the layer table holds it
                # while it is current (read_version reads it there), and the next import
                # archives it (_archive_unkept, in SQL) before replacing it. The R-tree is
                # built after the features, in one go, from the envelopes already known
                # (write_packed_rtree, as GDAL does); its triggers come after it.
                indexed: list = []  # (fids, [minx, maxx, miny, maxy] float32 boxes) of each piece
                bounds = None  # [minx, miny, maxx, maxy] of the features written
                fid = 0
                for row.feature_count, values, wkb, envelopes in written_batches(candidate, progress):
                    fids = np.arange(fid + 1, fid + 1 + len(values), dtype=np.int64)
                    fid += len(values)
                    con.executemany(
                        insert,
                        zip(fids.tolist(), gpkg_blob(None, srs_id, wkb, envelopes), *values.T.tolist()),
                    )
                    kept = np.array([w is not None for w in wkb], dtype=bool)
                    kept &= ~np.isnan(envelopes).any(axis=1)  # an empty geometry: not indexed
                    if kept.any():
                        box = envelopes[kept]
                        indexed.append((fids[kept], rtree_boxes(box[:, [0, 2, 1, 3]])))
                        box = np.r_[box[:, :2].min(axis=0), box[:, 2:].max(axis=0)]
                        bounds = (
                            box
                            if bounds is None
                            else np.r_[np.fmin(bounds[:2], box[:2]), np.fmax(bounds[2:], box[2:])]
                        )
                write_packed_rtree(con, f"rtree_{layer}_geom", indexed)  # (emptied there)
                finish_version(candidate, row)  # may refuse: rolled back below
                self._link_waters(con, layer, candidate)
                for statement in _RTREE_TRIGGERS.format(t=layer).strip().split(";\n"):
                    con.execute(statement.rstrip(";"))
                if bounds is not None and not np.isnan(bounds).any():
                    con.execute(
                        "UPDATE gpkg_contents SET min_x = ?, min_y = ?, max_x = ?, "
                        "max_y = ? WHERE table_name = ?",
                        (*map(float, bounds), layer),
                    )
                con.execute(
                    f"INSERT INTO {_q(VERSIONS_TABLE)} ({', '.join(VERSION_FIELDS)}) "
                    f"VALUES ({', '.join('?' * len(VERSION_FIELDS))})",
                    tuple(getattr(row, f) for f in VERSION_FIELDS),
                )
                con.execute(
                    "UPDATE gpkg_contents SET last_change = strftime('%Y-%m-%dT%H:%M:%fZ', "
                    "'now') WHERE table_name = ?",
                    (VERSIONS_TABLE,),
                )
                wrong = rtree_disagreement(con, layer, "geom", "fid", row.feature_count)
                if wrong is not None:  # written here from the same envelopes: never expected
                    raise RuntimeError(f"the spatial index just written for '{layer}' disagrees ({wrong})")
                copy = gpkg_copies(con).get(layer)
                if copy is not None:  # the store keeps the layer's area copy: made for this version
                    build_gpkg_copy(con, self.path, layer, copy.crs, row.version, progress)
                progress.check_canceled()  # the last moment a cancel leaves nothing written
                con.execute("COMMIT")
            except BaseException as err:
                if con.in_transaction:  # not after a failed COMMIT: keep its error
                    con.execute("ROLLBACK")
                if created:
                    self.path.unlink(missing_ok=True)  # the store this import began: none
                if disk_full(err):  # rolled back: the previous version stands
                    raise self._full(layer, row.version - 1) from None
                raise

    def _full(self, layer: str, kept: int) -> InputError:
        """The refusal of an import the full disk under the store stopped (rolled back)."""
        try:
            free = f"{shutil.disk_usage(self.path.parent).free / 1e6:.1f} MB free"
        except OSError:
            free = "free space not known"
        return InputError(
            f"the disk holding the store is full ({free}); the import of '{layer}' was rolled "
            + (f"back and version {kept} is kept" if kept else "back and nothing was imported"),
            path=self.path,
            layer=layer,
            fix="free space on that disk (the import needs about the size of the new layer, "
            "twice over while it commits) or move the store to a larger one, and import again",
        )

    def _link_waters(self, con, layer: str, candidate: Candidate) -> None:
        """The route from catchments to the waters in them (:mod:`analysis.reference.links`),
        built inside the import's transaction where the store holds both layers: a catchments
        import rebuilds every link, an impaired_waters import adds its waters' links."""
        if layer not in ("catchments", "impaired_waters"):
            return
        tables = self._tables(con)
        if layer == "catchments" and LINKS_TABLE in tables:
            con.execute(f"DELETE FROM {_q(LINKS_TABLE)}")
        if not {"catchments", "impaired_waters"} <= tables:
            return
        if LINKS_TABLE not in tables:  # not in gpkg_contents: QGIS lists only the layers
            con.execute(
                f"CREATE TABLE {_q(LINKS_TABLE)} (catchment_id TEXT NOT NULL, "
                "waterbody_id TEXT NOT NULL, basis TEXT, "
                "PRIMARY KEY (catchment_id, waterbody_id))"
            )
        waters = con.execute("SELECT waterbody_id, gpkg_wkb(geom) FROM impaired_waters").fetchall()
        shapes = shapely.from_wkb(np.array([w for _, w in waters], dtype=object))
        found: list = []
        placed: set = set()
        to_crs = self._table_crs(con, "catchments")
        if len(waters):
            shapes = transform_geometries(shapes, self._table_crs(con, "impaired_waters"), to_crs)
            box = (
                "SELECT c.catchment_id, gpkg_wkb(c.geom) FROM catchments c JOIN "
                f"{_q('rtree_catchments_geom')} r ON c.fid = r.id WHERE r.maxx >= ? AND "
                "r.minx <= ? AND r.maxy >= ? AND r.miny <= ?"
            )
            for (wid, _), shape in zip(waters, shapes):
                if shape is None or shape.is_empty:
                    continue
                near = con.execute(box, tuple(shapely.bounds(shape).tolist())).fetchall()
                pairs = links(
                    [c for c, _ in near],
                    shapely.from_wkb(np.array([g for _, g in near], dtype=object)),
                    [wid],
                    [shape],
                )
                placed.update(w for _, w in pairs)
                found += pairs
        con.executemany(f"INSERT OR IGNORE INTO {_q(LINKS_TABLE)} VALUES (?, ?, 'shape')", found)
        candidate.report.note(
            link_note(len(found), len(placed), sum(1 for s in shapes if s is None or s.is_empty))
        )

    def _table_crs(self, con, table: str):
        srs = con.execute(
            "SELECT s.organization, s.organization_coordsys_id, s.definition FROM "
            "gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s USING (srs_id) "
            "WHERE lower(g.table_name) = lower(?)",
            (table,),
        ).fetchone()
        return f"EPSG:{srs[1]}" if str(srs[0]).upper() == "EPSG" else srs[2]

    def _srs_id(self, con, crs) -> int:
        return register_srs(con, crs)

    def _ensure_side_tables(self, con) -> None:
        tables = self._tables(con)
        if VERSIONS_TABLE not in tables:
            con.execute(
                f"CREATE TABLE {_q(VERSIONS_TABLE)} (fid INTEGER PRIMARY KEY AUTOINCREMENT "
                "NOT NULL, layer TEXT, version INTEGER, source TEXT, source_date TEXT, "
                "imported_at TEXT, feature_count INTEGER, sha256 TEXT, "
                + ", ".join(f"{c} {t}" for c, t in ADDED_VERSION_COLUMNS.items())
                + ")"
            )
            con.execute(
                "INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) "
                "VALUES (?, 'attributes', ?, 0)",
                (VERSIONS_TABLE, VERSIONS_TABLE),
            )
        else:
            columns = {r[1] for r in con.execute(f"PRAGMA table_info({_q(VERSIONS_TABLE)})")}
            for column, kind in ADDED_VERSION_COLUMNS.items():  # a layer_versions made before
                if column not in columns:
                    con.execute(f"ALTER TABLE {_q(VERSIONS_TABLE)} ADD COLUMN {column} {kind}")
        if HISTORY_TABLE not in tables:
            # Not registered in gpkg_contents: QGIS lists only the layers, not the archive.
            con.execute(
                f"CREATE TABLE {_q(HISTORY_TABLE)} (layer TEXT NOT NULL, version INTEGER "
                "NOT NULL, feature_id TEXT NOT NULL, attributes TEXT NOT NULL, geometry BLOB)"
            )
            con.execute(f"CREATE INDEX reference_history_version ON {_q(HISTORY_TABLE)} (layer, version)")

    def _archive_unkept(self, con, layer, spec, version) -> None:
        """Keep the current version's features in the history where no import kept them."""
        if (
            not version
            or layer not in self._tables(con)
            or con.execute(
                f"SELECT 1 FROM {_q(HISTORY_TABLE)} WHERE layer = ? AND version = ? LIMIT 1", (layer, version)
            ).fetchone()
        ):
            return
        con.execute(
            f"INSERT INTO {_q(HISTORY_TABLE)} SELECT ?, ?, CAST({_q(spec.id_field)} AS TEXT), "
            f"{_layer_rows(con, layer, spec)}",
            (layer, version),
        )
        srs = con.execute(
            "SELECT s.organization, s.organization_coordsys_id, s.definition FROM "
            "gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s USING (srs_id) WHERE "
            "lower(g.table_name) = lower(?)",
            (layer,),
        ).fetchone()
        if srs:
            crs = f"EPSG:{srs[1]}" if str(srs[0]).upper() == "EPSG" else srs[2]
            con.execute(
                f"UPDATE {_q(VERSIONS_TABLE)} SET crs = ? WHERE layer = ? AND version = ? AND crs IS NULL",
                (crs, layer, version),
            )

    def _current_rows(self, con, layer: str, row: VersionRow) -> list:
        """The current version's (attributes JSON, WKB) rows, from the layer table, where this
        store's import wrote it (it has a sha256) and it is still the newest."""
        newest = con.execute(
            f"SELECT max(version) FROM {_q(VERSIONS_TABLE)} WHERE layer = ?", (layer,)
        ).fetchone()[0]
        if not row.sha256 or newest != row.version or layer not in self._tables(con):
            return []
        spec = REFERENCE_LAYERS[layer]
        return con.execute(
            f"SELECT {_layer_rows(con, layer, spec)} ORDER BY CAST({_q(spec.id_field)} AS TEXT)"
        ).fetchall()

    def _drop_layer(self, con, layer: str) -> None:
        tables = self._tables(con)
        names = {
            r[0]
            for r in con.execute(
                "SELECT table_name FROM gpkg_contents WHERE lower(table_name) = lower(?)", (layer,)
            )
        } | {layer}
        for name in sorted(names):
            if name in tables:
                con.execute(f"DROP TABLE {_q(name)}")
            if f"rtree_{name}_geom" in tables:
                con.execute(f"DROP TABLE {_q(f'rtree_{name}_geom')}")
            for meta in ("gpkg_extensions", "gpkg_geometry_columns", "gpkg_contents", "gpkg_ogr_contents"):
                if meta in tables:
                    con.execute(f"DELETE FROM {meta} WHERE lower(table_name) = lower(?)", (name,))

    def _create_layer(self, con, layer, spec, geometry_type, srs_id) -> None:
        columns = ", ".join(f"{_q(c)} {_SQL_TYPES[t]}" for c, t in spec.fields.items())
        con.execute(
            f"CREATE TABLE {_q(layer)} (fid INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "
            f"geom {geometry_type}, {columns})"
        )
        con.execute(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, srs_id) "
            "VALUES (?, 'features', ?, ?)",
            (layer, layer, srs_id),
        )  # extent: once written
        con.execute(
            "INSERT INTO gpkg_geometry_columns VALUES (?, 'geom', ?, ?, 0, 0)", (layer, geometry_type, srs_id)
        )
        con.execute(
            f"CREATE VIRTUAL TABLE {_q(f'rtree_{layer}_geom')} USING rtree(id, minx, maxx, miny, maxy)"
        )
        con.execute(
            "INSERT INTO gpkg_extensions VALUES (?, 'geom', 'gpkg_rtree_index', "
            "'http://www.geopackage.org/spec120/#extension_rtree', 'write-only')",
            (layer,),
        )
        if "gpkg_ogr_contents" in self._tables(con):
            con.execute(
                "INSERT INTO gpkg_ogr_contents (table_name, feature_count) VALUES (?, NULL)", (layer,)
            )


def _layer_rows(con, layer: str, spec) -> str:
    """SQL selecting a layer table's features as history rows: attributes as a JSON object of
    the contract's fields (NULL where the table lacks one), geometry as WKB (NULL stays)."""
    present = {r[1] for r in con.execute(f"PRAGMA table_info({_q(layer)})")}
    pairs = ", ".join(f"'{c}', {_q(c) if c in present else 'NULL'}" for c in spec.fields)
    return f"json_object({pairs}), gpkg_wkb(geom) FROM {_q(layer)}"


def status(store: ReferenceStore, profile, today: Optional[date] = None) -> dict:
    """Each layer's versions and age, and warnings (a missing layer, an outdated 303(d) list)."""
    today = today or date.today()
    if isinstance(store, GeoPackageStore) and not store.path.exists():
        raise InputError(
            "the reference GeoPackage does not exist",
            path=store.path,
            fix="check the path, or import a layer into it first",
        )
    current_cycle = profile.reference.current_listing_cycle
    rows = store.versions()
    copies = store.area_copies()
    layers: list[dict[str, object]] = []
    warnings: list[str] = []
    for layer in REFERENCE_LAYERS:
        mine = [r for r in rows if r.layer == layer]
        if not mine:
            warnings.append(f"{layer}: no version stored; the checks that read it say needs_review")
            layers.append({"layer": layer, "current": None, "versions": []})
            continue
        current = mine[-1]
        entry = {
            "layer": layer,
            "current": current.version,
            "versions": [r.to_dict() for r in mine],
            "imported_days_ago": _days(current.imported_at, today),
            "source_days_old": _days(current.source_date, today),
        }
        if layer == "impaired_waters":
            cycle = store.max_value(layer, "listing_cycle")
            entry["listing_cycle"] = cycle
            if cycle is None or _cycle_year(cycle) < _cycle_year(current_cycle):
                warnings.append(
                    f"impaired_waters: version {current.version} lists cycle {cycle or 'unknown'}, "
                    f"older than the current listing cycle {current_cycle} the profile names "
                    f"([reference] current_listing_cycle): import the current 303(d) list"
                )
        copy = copies.get(layer)
        if copy is not None:
            entry["area_copy"] = copy.to_dict()
            why = copy.why_not(current.version, profile.area_crs)
            if why is not None:
                warnings.append(
                    f"{layer}: its area copy is not read ({why}): reviews and screens move the "
                    "features themselves until `swppp reference area-copy` makes it again"
                )
        if current.rejected_count:
            warnings.append(
                f"{layer}: version {current.version} rejected {current.rejected_count} feature(s) "
                f"of the source ({current.rejected_with_tmdl or 0} with a TMDL)"
                + (", accepted by the user" if current.rejections_accepted else "")
                + ": reviews do not see them"
            )
        layers.append(entry)
    return {
        "store": store.label,
        "current_listing_cycle": current_cycle,
        "layers": layers,
        "warnings": warnings,
    }


def _days(stamp: Optional[str], today: date) -> Optional[int]:
    if not stamp:
        return None
    day, _readable = parse_date(str(stamp))
    return (today - day).days if day is not None else None


def _cycle_year(text) -> int:
    digits = [int(d) for d in re.findall(r"\d{4}", str(text))]
    return max(digits) if digits else 0
