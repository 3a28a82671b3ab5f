"""Which file is a review file: one GeoPackage per project holding its review rounds.

The file says what it is in its own table, ``swppp_review_file`` (``format`` and
``format_version``): a GeoPackage without it (a site plan, a reference store), a file written
by a newer version of the format (or of a version never made), or a file that is no GeoPackage
is refused by name (exit 2), never read as if it were this one, and never written into. A
format 1 file (its rounds recorded no plan geometry) is read; the next round recorded in it
adds the plan tables and makes it format 2 (:func:`upgrade_review_file`), in that round's
transaction.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

from ..about import __version__
from ..errors import InputError
from ..io.files import discard, publish_new, stage
from ..io.geopackage import GPKG_APPLICATION_ID, GPKG_BASE_SCHEMA, GPKG_USER_VERSION, geopackage_connection
from .contract import FORMAT, FORMAT_TABLE, FORMAT_VERSION, READABLE_VERSIONS, SCHEMA, upgrade_statements

__all__ = ["open_review_file", "check_review_file", "upgrade_review_file", "FORMAT", "FORMAT_VERSION"]

# Said by every front end that opens a review file (review --round, letter, the panel's Review
# file, swppp:review's ROUND_FILE): no one option is named.
_FIX_FOREIGN = (
    "give the project's review file (the NAME.gpkg that swppp review --round or the QGIS "
    "panel's Review file wrote), or, to record a review, a new file name: a review file is "
    "made where none is yet"
)


def open_review_file(path: str | Path, create: bool = True) -> sqlite3.Connection:
    """A connection (:func:`~analysis.io.geopackage.geopackage_connection`: it waits for
    another save) to the review file at ``path``, made empty where none is yet (``create``),
    checked to be a review file of this format."""
    path = Path(path)
    if path.suffix.lower() != ".gpkg":
        raise InputError(
            "a review file is a GeoPackage and must end in .gpkg", path=path, fix="name it NAME.gpkg"
        )
    if not path.exists():
        if not create:
            raise InputError("the review file does not exist", path=path, fix="check the path")
        _create(path)
    con = geopackage_connection(path, label=str(path))
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
        raise InputError(f"not a readable GeoPackage (SQLite: {err})", path=path, fix=_FIX_FOREIGN) from None
    if "gpkg_contents" not in tables:
        raise InputError("not a GeoPackage (it has no gpkg_contents table)", path=path, fix=_FIX_FOREIGN)
    if FORMAT_TABLE not in tables:
        raise InputError(
            f"a GeoPackage, but not a SWPPP review file (it has no {FORMAT_TABLE} table: a site "
            "plan, a reference store or a findings GeoPackage?); nothing was written into it",
            path=path,
            fix=_FIX_FOREIGN,
        )
    held = dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}").fetchall())
    if held.get("format") != FORMAT:
        raise InputError(
            f"its {FORMAT_TABLE} table says format {held.get('format')!r}, not {FORMAT!r}",
            path=path,
            field="format",
            fix=_FIX_FOREIGN,
        )
    try:
        version = int(str(held.get("format_version")))
    except ValueError:
        version = None
    if version is None or version not in READABLE_VERSIONS:
        newer = version is not None and version > FORMAT_VERSION
        raise InputError(
            f"review file format version {held.get('format_version')!r}: this version of SWPPP "
            f"Review ({__version__}) reads versions "
            + " and ".join(str(v) for v in READABLE_VERSIONS)
            + (
                ", and the file was written by a newer one"
                if newer
                else ", and the file was written by an older one"
                if version is not None
                else ""
            ),
            path=path,
            field="format_version",
            fix="open it with the version of SWPPP Review that wrote it ("
            + str(held.get("written_by") or "its version is not recorded")
            + "); nothing in it was changed",
        )
    return version


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
