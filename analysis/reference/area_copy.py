"""A reference layer kept also in the rules profile's area CRS: its area copy (issue 37).

A review and a screen measure every area in the profile's area CRS, so each reference feature
they read is moved into it and repaired where invalid (``reference.read``). For a statewide
layer most of a screen's time went there (the catchments' and watersheds' thousands of vertices
each, moved on every run). A store may keep, beside a layer's current version, its geometries
already moved into one area CRS and repaired as a reader repairs them, with their own spatial
index: a reader whose area CRS it is reads the copy instead, and gets the same geometries, vertex
for vertex, with nothing moved or repaired on the way (the repaired ones still recorded as such).

The copy belongs to the version it was made from, and is recorded with it (``COPIES_TABLE``:
layer, version, CRS, features, how many repaired, when made). It is used only while it is that
version's and is in the reader's area CRS; an import of the layer makes the copy of the new version
in the same transaction (the store keeps its copies current); an edit of the layer table by hand
(QGIS, ogr2ogr) marks it stale through triggers on the table, and readers then move the features
themselves until the copy is made again (``swppp reference area-copy``), which is also how a
copy follows a profile whose area CRS changed. A copy is never needed: without one, or with one
that does not serve, a reader does what it always did.

GeoPackage: the copy is the table ``swppp_area_<layer>`` (``fid``, ``geom`` a GeoPackage geometry
blob in the area CRS, ``repaired`` 0/1) and its R-tree ``rtree_swppp_area_<layer>_geom``, neither
registered in ``gpkg_contents`` (QGIS lists the layers, not their copies).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Optional

import numpy as np
import shapely

from ..crs import crs_label, crs_of, same_crs, transform_geometries
from ..errors import InputError
from ..geometry import non_finite_vertex, repaired
from ..io.geopackage import (
    geopackage_crs,
    gpkg_blob,
    gpkg_table,
    gpkg_wkb,
    quote_name,
    register_srs,
    rtree_boxes,
    write_packed_rtree,
)
from ..limits import IMPORT_BATCH_VERTICES
from ..progress import SILENT, Progress
from .contract import REFERENCE_LAYERS

__all__ = [
    "COPIES_TABLE",
    "RECORD_COLUMNS",
    "AREA_TABLES",
    "AreaCopy",
    "copy_table",
    "copy_rtree",
    "gpkg_copies",
    "build_gpkg_copy",
    "drop_gpkg_copy",
    "now",
    "check_finite",
]

COPIES_TABLE = "swppp_area_copies"
# A copy's record, in the order both stores keep and read it.
RECORD_COLUMNS = ("layer", "version", "crs", "features", "repaired", "made_at", "stale")
# Features moved at once: the first batch, and the most (the others are bounded by vertices).
_FIRST_BATCH, _BATCH = 256, 20_000


def copy_table(layer: str) -> str:
    """The table holding ``layer``'s area copy."""
    return f"swppp_area_{layer}"


def copy_rtree(layer: str) -> str:
    """The R-tree of ``layer``'s area copy."""
    return f"rtree_{copy_table(layer)}_geom"


# The tables a store's area copies add (none of them a layer): readers list the layers without them.
AREA_TABLES = (COPIES_TABLE, *(copy_table(name) for name in REFERENCE_LAYERS))


@dataclass(frozen=True)
class AreaCopy:
    """One layer's area copy, as recorded."""

    layer: str
    version: Optional[int]  # the layer's version it was made from
    crs: str  # the area CRS (EPSG:NNNN, or WKT where it has no code)
    features: int
    repaired: int
    made_at: str
    stale: bool  # the layer table was edited since (its triggers said so)

    def serves(self, version: Optional[int], area_crs) -> bool:
        """Whether a reader of ``version`` of the layer, measuring in ``area_crs``, may read
        this copy instead of the layer."""
        return self.why_not(version, area_crs) is None

    def why_not(self, version: Optional[int], area_crs) -> Optional[str]:
        """Why this copy does not serve a reader of ``version`` in ``area_crs``; None where it does."""
        if self.stale:
            return "the layer was edited after the copy was made"
        if self.version != version:
            return f"it was made from version {self.version}, and version {version} is current"
        if not same_crs(crs_of(self.crs), area_crs):
            return f"it is in {self.crs}, not in the area CRS {crs_label(area_crs)}"
        return None

    @classmethod
    def of_row(cls, row) -> AreaCopy:
        """A record's row (``RECORD_COLUMNS``, from either store) as an AreaCopy."""
        layer, version, crs, features, repaired, made_at, stale = row
        return cls(layer, version, crs, int(features), int(repaired), made_at, bool(stale))

    def to_dict(self) -> dict:
        return {
            "version": self.version,
            "crs": self.crs,
            "features": self.features,
            "repaired": self.repaired,
            "made_at": self.made_at,
            "stale": self.stale,
        }


# GeoPackage ---------------------------------------------------------------------------------


def gpkg_copies(con: sqlite3.Connection) -> dict[str, AreaCopy]:
    """The area copies a GeoPackage store records, by layer (none where it records none)."""
    if not con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (COPIES_TABLE,)).fetchone():
        return {}
    return {
        row[0]: AreaCopy.of_row(row)
        for row in con.execute(f"SELECT {', '.join(RECORD_COLUMNS)} FROM {quote_name(COPIES_TABLE)}")
    }


def drop_gpkg_copy(con: sqlite3.Connection, layer: str) -> None:
    """``layer``'s area copy removed, with its record and its triggers (inside the caller's
    transaction)."""
    for name in (copy_rtree(layer), copy_table(layer)):
        con.execute(f"DROP TABLE IF EXISTS {quote_name(name)}")
    for event in _EVENTS:
        con.execute(f"DROP TRIGGER IF EXISTS {quote_name(_trigger(layer, event))}")
    if con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (COPIES_TABLE,)).fetchone():
        con.execute(f"DELETE FROM {quote_name(COPIES_TABLE)} WHERE layer = ?", (layer,))


def build_gpkg_copy(
    con: sqlite3.Connection,
    path,
    layer: str,
    area_crs,
    version: Optional[int],
    progress: Progress = SILENT,
) -> AreaCopy:
    """Make ``layer``'s area copy in ``area_crs`` from its table as it is now (``version``),
    replacing any other, inside the caller's write transaction; recorded, and the layer table
    given the triggers that mark it stale when the table is edited. An InputError, naming the
    feature, for a vertex that is not a finite number or a layer with no CRS (as a reader
    refuses them)."""
    area_crs = crs_of(area_crs)
    found = gpkg_table(con, layer)
    if found is None or found[1] is None:
        raise InputError(
            "the store holds no such layer with geometry",
            path=path,
            layer=layer,
            fix=f"import '{layer}' first",
        )
    table, column, key, _names = found
    assert column is not None  # (refused above)
    crs = geopackage_crs(path, table, con)
    if not crs:
        raise InputError(
            "the layer has no coordinate reference system (or an undefined one)",
            path=path,
            layer=layer,
            fix="import the layer again with its CRS",
        )
    drop_gpkg_copy(con, layer)
    copy, rtree = copy_table(layer), copy_rtree(layer)
    srs_id = register_srs(con, area_crs)
    con.execute(
        f"CREATE TABLE {quote_name(copy)} (fid INTEGER PRIMARY KEY, geom BLOB, repaired INTEGER NOT NULL)"
    )
    con.execute(f"CREATE VIRTUAL TABLE {quote_name(rtree)} USING rtree(id, minx, maxx, miny, maxy)")
    polygons_only = REFERENCE_LAYERS[layer].families == ("polygon",)
    total = con.execute(f"SELECT count(*) FROM {quote_name(table)}").fetchone()[0] or 1
    indexed: list = []
    done = fixed = 0
    last = None
    batch = _FIRST_BATCH
    while True:
        rows = con.execute(
            f"SELECT {quote_name(key)}, {quote_name(column)} FROM {quote_name(table)}"
            + ("" if last is None else f" WHERE {quote_name(key)} > ?")
            + f" ORDER BY {quote_name(key)} LIMIT {batch}",
            () if last is None else (last,),
        ).fetchall()
        if not rows:
            break
        last = rows[-1][0]
        fids = np.array([r[0] for r in rows], dtype=np.int64)
        geometries = shapely.from_wkb([gpkg_wkb(r[1]) for r in rows])
        del rows
        # The next batch holds about IMPORT_BATCH_VERTICES vertices, as an import's batches do
        # (statewide catchments and watersheds hold thousands each).
        mean = max(float(shapely.get_num_coordinates(geometries).mean()), 1.0)
        batch = max(1, min(_BATCH, int(IMPORT_BATCH_VERTICES // mean)))
        check_finite(path, layer, fids.tolist(), geometries)
        unrepaired = transform_geometries(geometries, crs, area_crs)
        moved, invalid = repaired(unrepaired, polygons_only)
        # Indexed by the envelope before the repair (a repair never leaves it): a feature that
        # a repair empties is still found where a reader of the layer finds it, and recorded as
        # repaired as that reader records it.
        bounds = shapely.bounds(unrepaired)
        con.executemany(
            f"INSERT INTO {quote_name(copy)} (fid, geom, repaired) VALUES (?, ?, ?)",
            zip(fids.tolist(), gpkg_blob(moved, srs_id), invalid.astype(int).tolist()),
        )
        kept = ~shapely.is_missing(moved) & ~np.isnan(bounds).any(axis=1)
        if kept.any():
            indexed.append((fids[kept], rtree_boxes(bounds[kept][:, [0, 2, 1, 3]])))
        done += len(fids)
        fixed += int(invalid.sum())
        progress.step(min(done / total, 1.0), f"{layer}: {done} of {total} features moved")
        progress.check_canceled()
    write_packed_rtree(con, rtree, indexed)
    # The few repaired, found without reading the copy through (a reader asks for them).
    con.execute(
        f"CREATE INDEX {quote_name(copy + '_repaired')} ON {quote_name(copy)} (fid) WHERE repaired = 1"
    )
    made = AreaCopy(layer, version, _crs_text(area_crs), done, fixed, now(), False)
    con.execute(
        f"CREATE TABLE IF NOT EXISTS {quote_name(COPIES_TABLE)} (layer TEXT PRIMARY KEY, version INTEGER, "
        "crs TEXT NOT NULL, features INTEGER NOT NULL, repaired INTEGER NOT NULL, made_at TEXT NOT NULL, "
        "stale INTEGER NOT NULL)"
    )
    con.execute(
        f"INSERT INTO {quote_name(COPIES_TABLE)} VALUES (?, ?, ?, ?, ?, ?, 0)",
        (layer, version, made.crs, made.features, made.repaired, made.made_at),
    )
    for event in _EVENTS:
        con.execute(
            f"CREATE TRIGGER {quote_name(_trigger(layer, event))} AFTER {_event(event, column, key)} "
            f"ON {quote_name(table)} "
            f"BEGIN UPDATE {quote_name(COPIES_TABLE)} SET stale = 1 WHERE layer = '{layer}'; END"
        )
    return made


# What of an edit by hand makes the copy stale: a feature added or removed, or its geometry or
# id changed (the attributes are read from the layer itself).
_EVENTS = ("insert", "delete", "update")


def now() -> str:
    """When a copy is made, as recorded (UTC, to the second)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _trigger(layer: str, event: str) -> str:
    return f"swppp_area_{layer}_{event}"


def _event(event: str, column: str, key: str) -> str:
    return f"UPDATE OF {quote_name(column)}, {quote_name(key)}" if event == "update" else event.upper()


def _crs_text(crs) -> str:
    """How a copy's CRS is recorded: EPSG:NNNN where it has an EPSG code, else its WKT."""
    from ..crs import epsg_code

    code = epsg_code(crs)
    return f"EPSG:{code}" if code is not None else crs_of(crs).to_wkt()


def check_finite(path, layer: str, fids, geometries: np.ndarray) -> None:
    """An InputError naming the first of ``geometries`` (the features ``fids``) with a NaN or
    infinite vertex (no geometry to use): the reader's refusal, and the copy's."""
    found = non_finite_vertex(geometries)
    if found is not None:
        position, x, y = found
        raise InputError(
            f"a vertex at ({x!r}, {y!r}) is not a finite number",
            path=path,
            layer=layer,
            feature=fids[position],
            fix="correct or delete that vertex, and import the layer again",
        )
