"""A project's review file kept in PostGIS: one PostgreSQL schema holding the review file's tables.

Where the village keeps its reference layers in PostGIS, the project's review rounds may be kept
there too: ``--round 'postgresql://HOST/DB?schema=NAME'`` (or ``'service=NAME schema=NAME'``)
instead of ``--round NAME.gpkg``. The schema holds the same tables as the GeoPackage
(:data:`~analysis.rounds.contract.TABLES`; their SQLite declarations translated once here:
``BLOB`` is ``bytea``, ``REAL`` ``double precision``, an ``AUTOINCREMENT`` key an identity, a
plan table's ``geom`` a PostGIS ``geometry`` with a GiST index, in the EPSG code of the plan's
CRS where the server knows it, else SRID 0 with the CRS in ``round_plans.area_crs``), the same
format row, and the same rules, kept by the server:

- a round is never rewritten: a trigger refuses UPDATE, DELETE and TRUNCATE on every frozen
  table (``swppp_review_never_rewritten``);
- one writer at a time: a save locks ``review_rounds`` (``EXCLUSIVE``: readers go on); a second
  save waits for it at most :data:`~analysis.io.geopackage.STORE_BUSY_TIMEOUT_S`, then is
  refused by name;
- a save killed part way leaves nothing: the server rolls its transaction back;
- a schema that holds other tables (a reference store) or a newer format is refused by name,
  never written into; the schema is made, with its tables in one transaction, where none is.

The schema is the connection's ``search_path`` (a quoted identifier, ``psycopg.sql``), so the
rounds code's SQL names its tables as it does in a GeoPackage; every value is a parameter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any, Optional

import shapely

from ..about import __version__
from ..crs import epsg_code
from ..errors import InputError
from ..io.geopackage import STORE_BUSY_TIMEOUT_S
from ..reference.postgis import first_line, open_connection, psycopg_modules, split_schema, without_password
from .contract import FORMAT, FORMAT_TABLE, FORMAT_VERSION, ROUNDS_TABLE, TABLES, TableSpec
from .fileformat import check_format

__all__ = ["open_pg_review_file", "pg_review_file_exists", "pg_label", "pg_schema_statements"]

_TRIGGER = "swppp_review_never_rewritten"
_GEOMETRY = {"MULTIPOLYGON": "geometry(MultiPolygon)", "GEOMETRY": "geometry"}
# A column's SQLite declaration (rounds.contract) -> PostgreSQL's: its leading type only.
_TYPES = (
    (
        re.compile(r"^INTEGER PRIMARY KEY AUTOINCREMENT( NOT NULL)?$"),
        "bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY",
    ),
    (re.compile(r"^BLOB\b"), "bytea"),
    (re.compile(r"^REAL\b"), "double precision"),
)


def _target(target: str) -> tuple[str, str]:
    """(libpq connection text, schema) of a review file target; the schema is required."""
    conninfo, schema = split_schema(target)
    if not re.search(r"(?:[?&\s]|^)schema\s*=", target):
        raise InputError(
            "a review file in PostgreSQL needs its own schema, and the connection names none",
            path=without_password(conninfo),
            fix="add the project's schema: postgresql://HOST/DB?schema=NAME or 'service=NAME "
            "schema=NAME' (made where it is not yet)",
        )
    return conninfo, schema


def pg_label(target: str) -> str:
    """``schema NAME of CONNECTION`` (no password): the review file as messages name it."""
    conninfo, schema = split_schema(target)
    return f"schema {schema} of {without_password(conninfo)}"


def _pg_decl(spec: TableSpec, column) -> str:
    if spec.geometry and column.name == "geom":
        return _GEOMETRY[spec.geometry]
    decl = column.sql
    for pattern, replacement in _TYPES:
        decl = pattern.sub(replacement, decl)
    return decl


def pg_schema_statements(schema: str, tables: Sequence[TableSpec] = TABLES) -> list:
    """The statements that make ``tables`` in ``schema`` (``psycopg.sql`` compositions: the
    schema and table names quoted identifiers; the declarations are the contract's own text)."""
    _, sql = psycopg_modules()
    out = []
    for spec in tables:
        parts = [
            sql.SQL("{} {}").format(sql.Identifier(c.name), sql.SQL(_pg_decl(spec, c))) for c in spec.columns
        ]
        if spec.key:
            parts.append(sql.SQL(spec.key))
        table = sql.Identifier(schema, spec.name)
        out.append(sql.SQL("CREATE TABLE {} ({})").format(table, sql.SQL(", ").join(parts)))
        out.append(sql.SQL("COMMENT ON TABLE {} IS {}").format(table, sql.Literal(spec.label)))
        if spec.geometry:
            out.append(
                sql.SQL("CREATE INDEX {} ON {} USING gist (geom)").format(
                    sql.Identifier(f"{spec.name}_geom"), table
                )
            )
            out.append(
                sql.SQL("CREATE INDEX {} ON {} (round)").format(sql.Identifier(f"{spec.name}_round"), table)
            )
        if spec.frozen:
            function = sql.Identifier(schema, _TRIGGER)
            out.append(
                sql.SQL(
                    "CREATE TRIGGER {} BEFORE UPDATE OR DELETE ON {} FOR EACH ROW EXECUTE FUNCTION {}()"
                ).format(sql.Identifier(f"{spec.name}_never_rewritten"), table, function)
            )
            out.append(
                sql.SQL(
                    "CREATE TRIGGER {} BEFORE TRUNCATE ON {} FOR EACH STATEMENT EXECUTE FUNCTION {}()"
                ).format(sql.Identifier(f"{spec.name}_never_truncated"), table, function)
            )
    return out


def _trigger_function(schema: str):
    _, sql = psycopg_modules()
    return sql.SQL(
        "CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
        "RAISE EXCEPTION 'a review round is never rewritten (%)', TG_TABLE_NAME; END $$"
    ).format(sql.Identifier(schema, _TRIGGER))


class PostgisReviewFile:
    """A review file that is a PostgreSQL schema (:class:`~.reviewfile.ReviewConnection`)."""

    geometry_in = "ST_GeomFromEWKB(?)"
    geometry_out = "ST_AsBinary(geom)"

    def __init__(self, con, schema: str, label: str):
        self._con = con
        self.schema = schema
        self.label = label
        self.waiting = None  # told while a save waits for another (record_round sets it)
        self._srid: dict[str, int] = {}

    # --- the connection --------------------------------------------------------------------
    def execute(self, query, parameters: Sequence[Any] = ()):
        """``query`` with ``?`` parameters (the rounds code's SQLite style), or a composed one."""
        if isinstance(query, str):
            query = query.replace("?", "%s")
        try:
            return self._con.execute(query, tuple(parameters) or None)
        except self._psycopg.OperationalError as err:
            raise InputError(
                f"PostgreSQL: {first_line(err)}",
                path=self.label,
                fix="check the connection and run this again; nothing was recorded",
            ) from None

    def executemany(self, query: str, rows) -> None:
        with self._con.cursor() as cursor:
            cursor.executemany(query.replace("?", "%s"), rows)

    @property
    def _psycopg(self):
        return psycopg_modules()[0]

    @property
    def in_transaction(self) -> bool:
        return self._con.info.transaction_status != self._psycopg.pq.TransactionStatus.IDLE

    def begin(self) -> None:
        """The one writer: ``review_rounds`` locked (readers go on), waiting at most
        :data:`STORE_BUSY_TIMEOUT_S` for another save (told to ``waiting``), then refused by name."""
        psycopg, sql = psycopg_modules()
        lock = sql.SQL("LOCK TABLE {} IN EXCLUSIVE MODE").format(sql.Identifier(self.schema, ROUNDS_TABLE))
        for wait in (False, True):
            self._con.execute("BEGIN")
            self._con.execute(f"SET LOCAL lock_timeout = '{int(STORE_BUSY_TIMEOUT_S * 1000)}ms'")
            try:
                self._con.execute(lock if wait else lock + sql.SQL(" NOWAIT"))
                return
            except psycopg.errors.LockNotAvailable:
                self._con.execute("ROLLBACK")
            if not wait and self.waiting is not None:
                self.waiting("another save holds it")
        raise InputError(
            f"another save has held this review file for {STORE_BUSY_TIMEOUT_S:g} s",
            path=self.label,
            fix="wait for the other save to finish and run this again",
        )

    def commit(self) -> None:
        self._con.execute("COMMIT")

    def rollback(self) -> None:
        self._con.execute("ROLLBACK")

    def close(self) -> None:
        self._con.close()

    def has_table(self, name: str) -> bool:
        _, sql = psycopg_modules()
        return bool(
            self._con.execute(
                "SELECT to_regclass(%s) IS NOT NULL",
                (sql.Identifier(self.schema, name).as_string(self._con),),
            ).fetchone()[0]
        )

    def upgrade(self) -> int:
        version = int(
            self.execute(f"SELECT value FROM {FORMAT_TABLE} WHERE key = 'format_version'").fetchone()[0]
        )
        if version == FORMAT_VERSION:
            return version
        for statement in pg_schema_statements(self.schema, [t for t in TABLES if t.since > version]):
            self._con.execute(statement)
        self.execute(
            f"UPDATE {FORMAT_TABLE} SET value = ? WHERE key = 'format_version'", (str(FORMAT_VERSION),)
        )
        return version

    # --- the plan tables --------------------------------------------------------------------
    def plan_crs(self) -> Optional[str]:
        row = self.execute("SELECT area_crs FROM round_plans ORDER BY round LIMIT 1").fetchone()
        return None if row is None else row[0]

    def set_plan_crs(self, crs: str) -> None:
        """Nothing to set: each row carries its SRID, and ``round_plans`` the CRS."""

    def _srid_of(self, crs: str) -> int:
        """The EPSG code of ``crs`` where the server's spatial_ref_sys has it, else 0."""
        if crs not in self._srid:
            code = epsg_code(crs)
            known = (
                code is not None
                and self._con.execute(
                    "SELECT 1 FROM spatial_ref_sys WHERE auth_name = 'EPSG' AND auth_srid = %s", (code,)
                ).fetchone()
            )
            self._srid[crs] = int(code) if known and code is not None else 0
        return self._srid[crs]

    def plan_values(self, table: str, geometries, crs: str) -> list:
        """Extended WKB of ``geometries`` with their SRID (``ST_GeomFromEWKB``)."""
        if not len(geometries):
            return []
        return list(shapely.to_wkb(shapely.set_srid(geometries, self._srid_of(crs)), include_srid=True))

    def wkb_of(self, value) -> Optional[bytes]:
        return None if value is None else bytes(value)


def _tables_in(con, schema: str) -> set[str]:
    return {
        r[0]
        for r in con.execute(
            "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relkind IN ('r', 'p', 'v')",
            (schema,),
        ).fetchall()
    }


def pg_review_file_exists(target: str) -> bool:
    conninfo, schema = _target(target)
    con = open_connection(conninfo, autocommit=True)
    try:
        return FORMAT_TABLE in _tables_in(con, schema)
    finally:
        con.close()


def _create(con, schema: str, label: str) -> None:
    """The review file's tables in ``schema`` (made where it is not), in one transaction; a
    save that made them first wins (the schema is checked again under an advisory lock)."""
    _, sql = psycopg_modules()
    con.execute("BEGIN")
    try:
        con.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"swppp review file {schema}",))
        tables = _tables_in(con, schema)
        if FORMAT_TABLE in tables:
            con.execute("ROLLBACK")
            return
        if tables:
            raise _foreign(label, f"it holds other tables ({', '.join(sorted(tables)[:4])})")
        con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        con.execute(sql.SQL("SET LOCAL search_path TO {}, public").format(sql.Identifier(schema)))
        con.execute(_trigger_function(schema))
        for statement in pg_schema_statements(schema):
            con.execute(statement)
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with con.cursor() as cursor:
            cursor.executemany(
                sql.SQL("INSERT INTO {} (key, value) VALUES (%s, %s)").format(
                    sql.Identifier(schema, FORMAT_TABLE)
                ),
                [
                    ("format", FORMAT),
                    ("format_version", str(FORMAT_VERSION)),
                    ("written_by", f"SWPPP Review {__version__}"),
                    ("created_at", now),
                ],
            )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _foreign(label: str, what: str) -> InputError:
    return InputError(
        f"a PostgreSQL schema, but not a SWPPP review file: {what}; nothing was written into it",
        path=label,
        fix="give the project's own schema (a new schema name makes a new review file), not the "
        "reference store's",
    )


def open_pg_review_file(target: str, create: bool = True) -> PostgisReviewFile:
    """The review file in the schema ``target`` names, open (made where none is yet, ``create``),
    checked to be one of this format."""
    _, sql = psycopg_modules()
    conninfo, schema = _target(target)
    label = pg_label(target)
    con = open_connection(conninfo, autocommit=True)
    try:
        tables = _tables_in(con, schema)
        if FORMAT_TABLE not in tables:
            if tables:
                raise _foreign(
                    label,
                    f"it has no {FORMAT_TABLE} table but other tables ({', '.join(sorted(tables)[:4])})",
                )
            if not create:
                raise InputError(
                    "the review file does not exist (the schema holds none)",
                    path=label,
                    fix="check the connection and the schema",
                )
            _create(con, schema, label)
        con.execute(sql.SQL("SET search_path TO {}, public").format(sql.Identifier(schema)))
        held = dict(
            con.execute(
                sql.SQL("SELECT key, value FROM {}").format(sql.Identifier(schema, FORMAT_TABLE))
            ).fetchall()
        )
        check_format(held, label)
    except BaseException:
        con.close()
        raise
    return PostgisReviewFile(con, schema, label)
