"""Which file is a review file: one GeoPackage per project holding its review rounds.

The file says what it is in its own table, ``swppp_review_file`` (``format`` and
``format_version``): a GeoPackage without it (a site plan, a reference store), a file written
by a newer version of the format (or of a version never made), or a file that is no GeoPackage
is refused by name (exit 2), never read as if it were this one, and never written into. A
format 1 file (its rounds recorded no plan geometry) is read; the next round recorded in it
adds the plan tables and makes it format 2 (:func:`upgrade_review_file`), in that round's
transaction.

Where the village keeps its reference in PostGIS, the project's review file may be a PostgreSQL
schema instead (``postgresql://...?schema=NAME`` or ``service=NAME schema=NAME``:
:mod:`.reviewfile_pg`), the same tables and rules. Either is opened as a
:class:`ReviewConnection`: ``execute`` with ``?`` parameters, ``begin`` (the one writer: a
second save waits, then is refused by name), ``commit``, ``rollback``, and the few things the
two stores do their own way (a table's presence, the plan tables' CRS and geometry encoding).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional, Protocol

import shapely

from ..about import __version__
from ..crs import crs_of
from ..errors import InputError
from ..io.files import discard, publish_new, stage
from ..io.geopackage import (
    GPKG_APPLICATION_ID,
    GPKG_BASE_SCHEMA,
    GPKG_USER_VERSION,
    WaitingConnection,
    geopackage_connection,
    gpkg_blob,
    gpkg_wkb,
    register_srs,
)
from ..reference.store import is_postgres
from .contract import (
    FORMAT,
    FORMAT_TABLE,
    FORMAT_VERSION,
    PLAN_LAYERS,
    SCHEMA,
    upgrade_statements,
)
from .fileformat import FIX_FOREIGN, check_format

__all__ = [
    "ReviewConnection",
    "open_review_file",
    "review_file_exists",
    "review_file_label",
    "review_file_name",
    "check_review_file",
    "upgrade_review_file",
    "FORMAT",
    "FORMAT_VERSION",
]


class ReviewConnection(Protocol):
    """What the rounds code asks of an open review file, GeoPackage or PostGIS."""

    label: str  # the file (or the schema, without a password), for messages
    geometry_in: str  # the plan tables' ``geom`` parameter (``?``, or an SQL function of it)
    geometry_out: str  # the plan tables' ``geom`` as a query reads it

    def execute(self, sql: str, parameters: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, rows: Any) -> Any: ...
    @property
    def in_transaction(self) -> bool: ...
    def begin(self) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...
    def has_table(self, name: str) -> bool: ...
    def upgrade(self) -> int: ...
    def plan_crs(self) -> Optional[str]: ...
    def set_plan_crs(self, crs: str) -> None: ...
    def plan_values(self, table: str, geometries, crs: str) -> list: ...
    def wkb_of(self, value) -> Optional[bytes]: ...


class GeoPackageReviewFile(WaitingConnection):
    """A review file that is a GeoPackage (:class:`ReviewConnection`): SQLite's lock makes the
    one writer (``BEGIN IMMEDIATE``; a second save waits, :class:`WaitingConnection`)."""

    geometry_in = "?"
    geometry_out = "geom"

    def begin(self) -> None:
        self.execute("BEGIN IMMEDIATE")

    def commit(self) -> None:
        self.execute("COMMIT")

    def rollback(self) -> None:
        self.execute("ROLLBACK")

    def has_table(self, name: str) -> bool:
        return bool(
            self.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone()
        )

    def upgrade(self) -> int:
        return upgrade_review_file(self)

    def _plan_srs(self) -> tuple[int, Optional[str]]:
        """The plan tables' srs_id and CRS (None: not set yet, no plan recorded)."""
        row = self.execute(
            "SELECT g.srs_id, s.organization, s.organization_coordsys_id, s.definition FROM "
            "gpkg_geometry_columns g JOIN gpkg_spatial_ref_sys s USING (srs_id) WHERE g.table_name = ?",
            (PLAN_LAYERS["disturbance"],),
        ).fetchone()
        srs_id, organization, code, definition = row
        if srs_id in (-1, 0):
            return srs_id, None
        return srs_id, f"EPSG:{code}" if str(organization).upper() == "EPSG" else definition

    def plan_crs(self) -> Optional[str]:
        return self._plan_srs()[1]

    def set_plan_crs(self, crs: str) -> None:
        srs_id = register_srs(self, crs_of(crs))
        for table in PLAN_LAYERS.values():
            self.execute("UPDATE gpkg_contents SET srs_id = ? WHERE table_name = ?", (srs_id, table))
            self.execute("UPDATE gpkg_geometry_columns SET srs_id = ? WHERE table_name = ?", (srs_id, table))

    def plan_values(self, table: str, geometries, crs: str) -> list:
        """GeoPackage geometry blobs of ``geometries`` (in the tables' CRS), the table's extent
        in gpkg_contents widened to hold them."""
        if not len(geometries):
            return []
        box = shapely.total_bounds(geometries)
        self.execute(
            "UPDATE gpkg_contents SET min_x = min(coalesce(min_x, ?), ?), "
            "min_y = min(coalesce(min_y, ?), ?), max_x = max(coalesce(max_x, ?), ?), "
            "max_y = max(coalesce(max_y, ?), ?), "
            "last_change = strftime('%Y-%m-%dT%H:%M:%fZ','now') WHERE table_name = ?",
            (box[0], box[0], box[1], box[1], box[2], box[2], box[3], box[3], table),
        )
        return gpkg_blob(geometries, self._plan_srs()[0])

    def wkb_of(self, value) -> Optional[bytes]:
        return gpkg_wkb(value)


def review_file_exists(target: str | Path) -> bool:
    """Whether there is a review file at ``target`` yet (a PostgreSQL schema: whether it holds
    one; nothing is made)."""
    if is_postgres(target):
        from .reviewfile_pg import pg_review_file_exists

        return pg_review_file_exists(str(target))
    return Path(target).exists()


def review_file_label(target: str | Path) -> str:
    """The review file as messages name it: its path, or the schema and the connection
    without its password."""
    if is_postgres(target):
        from .reviewfile_pg import pg_label

        return pg_label(str(target))
    return str(target)


def review_file_name(target: str | Path) -> str:
    """The review file as the JSON's ``round.file`` names it: the file's name, or the schema
    and the connection without its password."""
    if is_postgres(target):
        from .reviewfile_pg import pg_label

        return pg_label(str(target))
    return Path(target).name


def open_review_file(target: str | Path, create: bool = True) -> ReviewConnection:
    """The review file at ``target``, open: a GeoPackage (it waits for another save) or a
    PostgreSQL schema (:mod:`.reviewfile_pg`), made empty where none is yet (``create``),
    checked to be a review file of this format."""
    if is_postgres(target):
        from .reviewfile_pg import open_pg_review_file

        return open_pg_review_file(str(target), create)
    path = Path(target)
    if path.suffix.lower() != ".gpkg":
        raise InputError(
            "a review file is a GeoPackage and must end in .gpkg", path=path, fix="name it NAME.gpkg"
        )
    if not path.exists():
        if not create:
            raise InputError("the review file does not exist", path=path, fix="check the path")
        _create(path)
    con: GeoPackageReviewFile = geopackage_connection(path, label=str(path), factory=GeoPackageReviewFile)  # type: ignore[assignment]
    try:
        check_review_file(con, path)
    except BaseException:
        con.close()
        raise
    return con


def check_review_file(con: sqlite3.Connection, path: str | Path) -> int:
    """The file's format version, where it is this format's; else an :class:`InputError`
    naming the file and what it is instead."""
    try:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except InputError:
        raise
    except sqlite3.DatabaseError as err:
        raise InputError(f"not a readable GeoPackage (SQLite: {err})", path=path, fix=FIX_FOREIGN) from None
    if "gpkg_contents" not in tables:
        raise InputError("not a GeoPackage (it has no gpkg_contents table)", path=path, fix=FIX_FOREIGN)
    if FORMAT_TABLE not in tables:
        raise InputError(
            f"a GeoPackage, but not a SWPPP review file (it has no {FORMAT_TABLE} table: a site "
            "plan, a reference store or a findings GeoPackage?); nothing was written into it",
            path=path,
            fix=FIX_FOREIGN,
        )
    held = dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}").fetchall())
    return check_format(held, path)


def upgrade_review_file(con: sqlite3.Connection) -> int:
    """Make the review file open on ``con`` (checked, inside the caller's transaction) one of
    this format: the tables added since its version, its version raised; its rounds are kept as
    they are (a format 1 round has no plan geometry, and says so when compared). Returns the
    version it was."""
    held = dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}").fetchall())
    version = int(held["format_version"])
    if version == FORMAT_VERSION:
        return version
    for sql in upgrade_statements(version):
        con.execute(sql)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    con.executemany(
        f"INSERT OR REPLACE INTO {FORMAT_TABLE} (key, value) VALUES (?, ?)",
        [
            ("format_version", str(FORMAT_VERSION)),
            ("written_by", f"SWPPP Review {__version__}"),
            ("upgraded_at", f"{now}: format {version} to {FORMAT_VERSION}"),
        ],
    )
    return version


def _create(path: Path) -> None:
    """A new, empty review file at ``path``, built beside it and moved in whole (another save
    that made it first wins: its file is used)."""
    temp = stage(path)
    try:
        with closing(sqlite3.connect(temp, isolation_level=None)) as con:
            con.execute(f"PRAGMA application_id = {GPKG_APPLICATION_ID}")
            con.execute(f"PRAGMA user_version = {GPKG_USER_VERSION}")
            now = datetime.now(timezone.utc).isoformat(timespec="seconds")
            con.executescript("BEGIN;" + GPKG_BASE_SCHEMA + SCHEMA + "COMMIT;")
            con.executemany(
                f"INSERT INTO {FORMAT_TABLE} (key, value) VALUES (?, ?)",
                [
                    ("format", FORMAT),
                    ("format_version", str(FORMAT_VERSION)),
                    ("written_by", f"SWPPP Review {__version__}"),
                    ("created_at", now),
                ],
            )
        publish_new(temp, path)
    except OSError as err:
        raise InputError(
            f"the review file could not be made ({err.strerror or err})",
            path=path,
            fix="choose a file path in a folder you can write to",
        ) from None
    finally:
        discard(temp)
