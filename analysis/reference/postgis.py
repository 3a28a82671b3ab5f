"""Reference layers in a PostGIS schema: connections, reading around a site, storing versions.

A connection is ``postgresql://...`` (or ``postgres://``) or libpq key/value text such as
``service=NAME``; the schema comes separately (``--schema``) or inside the text as
``schema=NAME`` (a URI query parameter or a key/value pair), which is taken out before libpq
sees it. psycopg 3 is needed only here, and is imported only when a PostgreSQL target is used.
Every schema and table name is a quoted identifier (``psycopg.sql.Identifier``); every value
is a query parameter.
"""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Optional
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import geopandas as gpd
import numpy as np
import shapely

from ..crs import crs_of, epsg_code, to_crs
from ..errors import InputError
from ..progress import SILENT, Progress
from .area_copy import COPIES_TABLE, RECORD_COLUMNS, AreaCopy, copy_table
from .area_copy import now as _now
from .contract import REFERENCE_LAYERS
from .importer import Candidate
from .links import LINKS_TABLE, link_note
from .store import (
    ADDED_VERSION_COLUMNS,
    HISTORY_TABLE,
    VERSION_FIELDS,
    VERSIONS_TABLE,
    ReferenceStore,
    VersionRow,
    check_still_current,
    finish_version,
    frame_from_history,
    written_batches,
)

__all__ = [
    "split_schema",
    "connect",
    "PostgisStore",
    "PostgisReference",
    "DEFAULT_SCHEMA",
    "psycopg_modules",
    "open_connection",
    "without_password",
    "first_line",
    "FIXED_POLYGON",
    "COPIED_IN_POSTGIS",
]

DEFAULT_SCHEMA = "public"
# A reference polygon as the reader keeps it: itself where valid, else its repaired polygons
# (the PostGIS screen's repair, and its area copies').
FIXED_POLYGON = "CASE WHEN ST_IsValid({g}) THEN {g} ELSE ST_CollectionExtract(ST_MakeValid({g}), 3) END"
# The layers the PostGIS screen reads with their geometry, and so keeps area copies of.
COPIED_IN_POSTGIS = tuple(name for name, spec in REFERENCE_LAYERS.items() if spec.families == ("polygon",))
_STALE_FUNCTION = (
    "swppp_area_stale"  # the trigger function (and each layer's trigger) that marks a copy stale
)
_PG_TYPES = {"text": "text", "integer": "integer", "real": "double precision"}


def psycopg_modules():
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        raise InputError(
            "a PostgreSQL reference needs psycopg 3, which this Python lacks",
            fix="install it: pip install 'psycopg[binary]' (or apt install "
            "python3-psycopg), or use a GeoPackage",
        ) from None
    return psycopg, sql


def split_schema(target: str, schema: Optional[str] = None) -> tuple[str, str]:
    """(libpq connection text, schema): ``schema=`` taken out of ``target`` where it is there.

    >>> split_schema("postgresql://u@db.example/gis?schema=reference&sslmode=require")
    ('postgresql://u@db.example/gis?sslmode=require', 'reference')
    >>> split_schema("service=gis schema=wetlands_2026", None)
    ('service=gis', 'wetlands_2026')
    >>> split_schema("service=gis", "ref")
    ('service=gis', 'ref')
    """
    text = str(target).strip()
    found = None
    if text.startswith(("postgresql://", "postgres://")):
        parts = urlsplit(text)
        query = parse_qsl(parts.query, keep_blank_values=True)
        found = next((v for k, v in query if k == "schema"), None)
        text = urlunsplit(parts._replace(query=urlencode([(k, v) for k, v in query if k != "schema"])))
    else:
        match = re.search(r"(?:^|\s)schema\s*=\s*('(?:[^'\\]|\\.)*'|\S+)", text)
        if match:
            found = match.group(1).strip("'").replace("\\'", "'")
            text = (text[: match.start()] + text[match.end() :]).strip()
    return text, (schema or found or DEFAULT_SCHEMA)


def open_connection(conninfo: str, autocommit: bool = False):
    """A psycopg connection; a failure to connect is an InputError (no password shown)."""
    psycopg, _ = psycopg_modules()
    try:
        return psycopg.connect(conninfo, autocommit=autocommit, connect_timeout=15)
    except psycopg.Error as err:
        raise InputError(
            f"could not connect to PostgreSQL ({first_line(err)})",
            path=without_password(conninfo),
            fix="check the connection (host, database, user, password or service)",
        ) from None


@contextmanager
def connect(conninfo: str):
    """A psycopg connection (closed after the block); a failure to connect is an InputError."""
    con = open_connection(conninfo)
    try:
        yield con
    finally:
        con.close()


def without_password(conninfo: str) -> str:
    """The connection text without a password, for messages."""
    text = re.sub(r"(postgres(?:ql)?://[^:/@]*):[^@]*@", r"\1:***@", conninfo)
    return re.sub(r"(password\s*=\s*)\S+", r"\1***", text)


def first_line(err) -> str:
    return (str(err).strip().splitlines() or [type(err).__name__])[0]


class _Schema:
    """Identifiers of one schema's tables, always quoted by psycopg."""

    def __init__(self, schema: str):
        _, self.sql = psycopg_modules()
        self.name = schema

    def table(self, name: str):
        return self.sql.Identifier(self.name, name)


class PostgisStore(ReferenceStore):
    """Reference layers and their versions in one PostGIS schema."""

    def __init__(self, target: str, schema: Optional[str] = None):
        self.conninfo, self.schema = split_schema(target, schema)
        self.ids = _Schema(self.schema)
        self.sql = self.ids.sql
        self.label = f"{without_password(self.conninfo)} schema {self.schema}"

    _held = None  # the connection of snapshot(), while one is open

    @contextmanager
    def connection(self):
        """The connection of :meth:`snapshot` while one is open, else a new one (closed after)."""
        if self._held is not None:
            yield self._held
            return
        with connect(self.conninfo) as con:
            yield con

    @contextmanager
    def snapshot(self, layers=()):
        """One read-only REPEATABLE READ transaction held while inside: every read through
        :meth:`connection` (the versions, the features) sees one version of the schema. The
        ``layers`` tables are locked for share first (before the snapshot is taken), so an
        import's DROP / RENAME of one waits for the reads to end instead of handing them a
        table their snapshot cannot see."""
        if self._held is not None:
            yield self._held
            return
        psycopg, _ = psycopg_modules()
        with connect(self.conninfo) as con:
            con.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            con.read_only = True
            present = {
                r[0]
                for r in con.execute(  # a catalog question: it takes no snapshot's rows of the layers
                    "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "WHERE n.nspname = %s AND c.relkind IN ('r', 'p')",
                    (self.schema,),
                ).fetchall()
            }
            con.rollback()  # the snapshot begins after the locks
            locked = [layer for layer in layers if layer in present]
            if locked:
                con.execute(
                    self.sql.SQL("LOCK TABLE {} IN ACCESS SHARE MODE").format(
                        self.sql.SQL(", ").join(self.ids.table(layer) for layer in locked)
                    )
                )
            self._held = con
            try:
                yield con
            finally:
                self._held = None
                con.rollback()

    def _exists(self, con, table: str) -> bool:
        return con.execute(
            "SELECT to_regclass(%s) IS NOT NULL", (self.sql.Identifier(self.schema, table).as_string(con),)
        ).fetchone()[0]

    def versions(self, layer: Optional[str] = None) -> list[VersionRow]:
        with self.connection() as con:
            if not self._exists(con, VERSIONS_TABLE):
                return []
            query = self.sql.SQL("SELECT {} FROM {}").format(
                self.sql.SQL(", ").join(map(self.sql.Identifier, VERSION_FIELDS)),
                self.ids.table(VERSIONS_TABLE),
            )
            if layer:
                query += self.sql.SQL(" WHERE layer = %s")
            rows = con.execute(
                query + self.sql.SQL(" ORDER BY layer, version"), (layer,) if layer else ()
            ).fetchall()
        return [VersionRow(*r) for r in rows]

    def read_version(self, layer: str, version: int) -> gpd.GeoDataFrame:
        row = self.version_row(layer, version)
        # One snapshot, the layer's table locked for share before it is taken: an import
        # archiving this version and replacing the table commits wholly before or after it.
        with self.snapshot([layer]) as con:
            rows = (
                []
                if not self._exists(con, HISTORY_TABLE)
                else con.execute(
                    self.sql.SQL(
                        "SELECT attributes::text, ST_AsBinary(geom) FROM {} WHERE layer = %s "
                        "AND version = %s ORDER BY feature_id"
                    ).format(self.ids.table(HISTORY_TABLE)),
                    (layer, row.version),
                ).fetchall()
            )
            if not rows:  # the current version: in the layer table until the next import
                rows = self._current_rows(con, layer, row)
        return frame_from_history(layer, rows, row.crs)

    def _current_rows(self, con, layer: str, row: VersionRow) -> list:
        """The current version's (attributes JSON, WKB) rows, from the layer table, where this
        store's import wrote it (it has a sha256) and it is still the newest (the history
        receives it when the next import replaces it: :meth:`_archive_unkept`)."""
        sql, ids = self.sql, self.ids
        newest = (
            con.execute(
                sql.SQL("SELECT max(version) FROM {} WHERE layer = %s").format(ids.table(VERSIONS_TABLE)),
                (layer,),
            ).fetchone()[0]
            if self._exists(con, VERSIONS_TABLE)
            else None
        )
        if not row.sha256 or newest != row.version or not self._exists(con, layer):
            return []
        spec = REFERENCE_LAYERS[layer]
        return con.execute(
            sql.SQL("SELECT {}::text, ST_AsBinary(geom) FROM {} ORDER BY {}::text").format(
                self._attributes(con, layer, spec), ids.table(layer), sql.Identifier(spec.id_field)
            )
        ).fetchall()

    def _attributes(self, con, table: str, spec):
        """SQL making a feature's attributes JSON from ``table``'s columns (NULL where it lacks one)."""
        sql = self.sql
        present = {
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = %s AND table_name = %s",
                (self.schema, table),
            )
        }
        pairs = sql.SQL(", ").join(
            sql.SQL("{}, {}").format(sql.Literal(c), sql.Identifier(c) if c in present else sql.SQL("NULL"))
            for c in spec.fields
        )
        return sql.SQL("jsonb_build_object({})").format(pairs)

    def max_value(self, layer: str, field: str) -> Optional[str]:
        with connect(self.conninfo) as con:
            if not self._exists(con, layer):
                return None
            value = con.execute(
                self.sql.SQL("SELECT max({}) FROM {}").format(
                    self.sql.Identifier(field), self.ids.table(layer)
                )
            ).fetchone()[0]
        return None if value is None else str(value)

    def _write(self, candidate: Candidate, row: VersionRow, progress: Progress) -> None:
        """One transaction: new table filled and indexed, then swapped in with the version row."""
        sql, ids = self.sql, self.ids
        layer, spec = candidate.layer, REFERENCE_LAYERS[candidate.layer]
        srid = _srid(candidate.crs)
        staged = f"{layer}__v{row.version}"
        columns = list(spec.fields)
        with connect(self.conninfo) as con, con.transaction():
            # Advisory locks, held to the transaction's end: one import creates the schema and
            # side tables at a time (two concurrent CREATE ... IF NOT EXISTS can both fail), and
            # one import per layer.
            for key in (self.schema, f"{self.schema}.{layer}"):
                con.execute("SELECT pg_advisory_xact_lock(hashtext('swppp_review'), hashtext(%s))", (key,))
            con.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(self.schema)))
            self._ensure_side_tables(con)
            # One import at a time per schema; readers are not blocked by this lock.
            con.execute(
                sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(ids.table(VERSIONS_TABLE))
            )
            check_still_current(
                layer,
                row.version - 1 or None,
                con.execute(
                    sql.SQL("SELECT max(version) FROM {} WHERE layer = %s").format(ids.table(VERSIONS_TABLE)),
                    (layer,),
                ).fetchone()[0],
            )
            self._archive_unkept(con, layer, spec, row.version - 1)
            con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ids.table(staged)))
            # No index while loading (the key and the GiST index are built after the features, as
            # GDAL's driver does); the features come by COPY (text, geometries as hex EWKB).
            con.execute(
                sql.SQL("CREATE TABLE {} (fid serial NOT NULL, {}, geom geometry(Geometry, {}))").format(
                    ids.table(staged),
                    sql.SQL(", ").join(
                        sql.SQL("{} {}").format(sql.Identifier(c), sql.SQL(_PG_TYPES[t]))
                        for c, t in spec.fields.items()
                    ),
                    sql.Literal(srid),
                )
            )
            copy = sql.SQL("COPY {} ({}, geom) FROM STDIN").format(
                ids.table(staged), sql.SQL(", ").join(map(sql.Identifier, columns))
            )
            kinds = [spec.fields[c] for c in columns]
            with con.cursor() as cur, cur.copy(copy) as pipe:
                for row.feature_count, values, wkb, _ in written_batches(candidate, progress, srid):
                    pipe.write(copy_text(values, kinds, wkb))
            con.execute(sql.SQL("ALTER TABLE {} ADD PRIMARY KEY (fid)").format(ids.table(staged)))
            # The version is not copied into the history here (as in the GeoPackage store): the
            # layer table holds it while it is current (read_version reads it there), and the
            # next import archives it (_archive_unkept, one INSERT ... SELECT) before replacing it.
            finish_version(candidate, row)  # may refuse: the transaction is rolled back
            con.execute(
                sql.SQL("CREATE INDEX {} ON {} USING gist (geom)").format(
                    sql.Identifier(f"{staged}_geom_idx"), ids.table(staged)
                )
            )
            con.execute(
                sql.SQL("INSERT INTO {} ({}) VALUES ({})").format(
                    ids.table(VERSIONS_TABLE),
                    sql.SQL(", ").join(map(sql.Identifier, VERSION_FIELDS)),
                    sql.SQL(", ").join(sql.Placeholder() * len(VERSION_FIELDS)),
                ),
                tuple(getattr(row, f) for f in VERSION_FIELDS),
            )
            # The swap: readers wait here for a moment at most, then see the new table.
            con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ids.table(layer)))
            con.execute(
                sql.SQL("ALTER TABLE {} RENAME TO {}").format(ids.table(staged), sql.Identifier(layer))
            )
            con.execute(
                sql.SQL("ALTER INDEX {} RENAME TO {}").format(
                    sql.Identifier(self.schema, f"{staged}_geom_idx"), sql.Identifier(f"{layer}_geom_idx")
                )
            )
            con.execute(sql.SQL("ANALYZE {}").format(ids.table(layer)))
            self._link_waters(con, layer, candidate)
            copy = self._copies(con).get(layer)
            if copy is not None:  # the schema keeps the layer's area copy: made for this version
                self._make_copy(con, layer, _srid(copy.crs), row.version)
            progress.check_canceled()  # the last moment a cancel leaves nothing written

    def _link_waters(self, con, layer: str, candidate: Candidate) -> None:
        """The route from catchments to the waters in them (:mod:`analysis.reference.links`,
        the GeoPackage store's rule: a water whose shape meets a catchment's interior), in the
        import's transaction: a catchments import rebuilds every link, an impaired_waters
        import adds its waters'."""
        if layer not in ("catchments", "impaired_waters"):
            return
        sql, ids = self.sql, self.ids
        con.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (catchment_id text NOT NULL, "
                "waterbody_id text NOT NULL, basis text, "
                "PRIMARY KEY (catchment_id, waterbody_id))"
            ).format(ids.table(LINKS_TABLE))
        )
        if layer == "catchments":
            con.execute(sql.SQL("DELETE FROM {}").format(ids.table(LINKS_TABLE)))
        if not (self._exists(con, "catchments") and self._exists(con, "impaired_waters")):
            return
        found = con.execute(
            sql.SQL(
                "WITH w AS (SELECT waterbody_id, ST_Transform(geom, Find_SRID(%s, 'catchments', 'geom')) "
                "AS g FROM {w} WHERE geom IS NOT NULL AND NOT ST_IsEmpty(geom)), "
                "l AS (SELECT DISTINCT btrim(c.catchment_id::text) AS c, btrim(w.waterbody_id::text) AS w "
                "FROM w JOIN {c} c ON c.geom && w.g AND ST_Intersects(c.geom, w.g) "
                "AND NOT ST_Touches(c.geom, w.g)), "
                "n AS (INSERT INTO {t} SELECT c, w, 'shape' FROM l ON CONFLICT DO NOTHING) "
                "SELECT (SELECT count(*) FROM l), (SELECT count(DISTINCT w) FROM l), "
                "(SELECT count(*) FROM {w} WHERE geom IS NULL OR ST_IsEmpty(geom))"
            ).format(w=ids.table("impaired_waters"), c=ids.table("catchments"), t=ids.table(LINKS_TABLE)),
            (self.schema,),
        ).fetchone()
        candidate.report.note(link_note(int(found[0]), int(found[1]), int(found[2])))

    def links(self, wanted: set) -> Optional[dict]:
        """{catchment_id: [waterbody_id]} of ``wanted`` (trimmed ids) from the route table;
        None where the schema has none."""
        with self.connection() as con:
            if not self._exists(con, LINKS_TABLE):
                return None
            rows = (
                con.execute(
                    self.sql.SQL(
                        "SELECT btrim(catchment_id), waterbody_id FROM {} WHERE btrim(catchment_id) = "
                        "ANY(%s) ORDER BY 1, 2"
                    ).format(self.ids.table(LINKS_TABLE)),
                    (sorted(wanted),),
                ).fetchall()
                if wanted
                else []
            )
        out: dict = {}
        for catchment, water in rows:
            out.setdefault(str(catchment).strip(), []).append(str(water).strip())
        return out

    def _archive(self, con, layer: str, spec, version: int) -> None:
        """The layer table's features as ``layer``'s history rows of ``version``, in one
        statement (those without a geometry too: a version keeps every feature)."""
        con.execute(
            self.sql.SQL("INSERT INTO {} SELECT %s, %s, {}::text, {}, geom FROM {}").format(
                self.ids.table(HISTORY_TABLE),
                self.sql.Identifier(spec.id_field),
                self._attributes(con, layer, spec),
                self.ids.table(layer),
            ),
            (layer, version),
        )

    def _archive_unkept(self, con, layer, spec, version) -> None:
        """Keep the current version's features in the history where no import kept them."""
        sql, ids = self.sql, self.ids
        if (
            not version
            or not self._exists(con, layer)
            or con.execute(
                sql.SQL("SELECT 1 FROM {} WHERE layer = %s AND version = %s LIMIT 1").format(
                    ids.table(HISTORY_TABLE)
                ),
                (layer, version),
            ).fetchone()
        ):
            return
        self._archive(con, layer, spec, version)
        con.execute(
            sql.SQL(
                "UPDATE {} SET crs = 'EPSG:' || Find_SRID(%s, %s, 'geom') WHERE layer = %s "
                "AND version = %s AND crs IS NULL"
            ).format(ids.table(VERSIONS_TABLE)),
            (self.schema, layer, layer, version),
        )

    # Area copies (analysis.reference.area_copy) -------------------------------------------
    def area_copies(self) -> dict[str, AreaCopy]:
        with self.connection() as con:
            return self._copies(con)

    def _copies(self, con) -> dict[str, AreaCopy]:
        """The area copies the schema records, by layer (none where it records none)."""
        if not self._exists(con, COPIES_TABLE):
            return {}
        return {
            row[0]: AreaCopy.of_row(row)
            for row in con.execute(
                self.sql.SQL("SELECT {} FROM {}").format(
                    self.sql.SQL(", ").join(map(self.sql.Identifier, RECORD_COLUMNS)),
                    self.ids.table(COPIES_TABLE),
                )
            ).fetchall()
        }

    def make_area_copies(self, area_crs, progress: Progress = SILENT) -> list[AreaCopy]:
        """Each polygon layer copied into ``area_crs`` from its current version by the server
        (``ST_Transform``, repaired as the PostGIS screen repairs), GiST-indexed, in one
        transaction; what was made."""
        area = _srid(area_crs)
        with connect(self.conninfo) as con, con.transaction():
            self._lock_for_writing(con)
            versions = self.sql.SQL("SELECT layer, max(version) FROM {} GROUP BY layer")
            current = dict(con.execute(versions.format(self.ids.table(VERSIONS_TABLE))).fetchall())
            layers = [name for name in COPIED_IN_POSTGIS if self._exists(con, name)]
            made = []
            for k, layer in enumerate(layers):
                progress.step(k / max(len(layers), 1), f"{layer}: moved into EPSG:{area} by the server")
                made.append(self._make_copy(con, layer, area, current.get(layer)))
                progress.check_canceled()
        return made

    def drop_area_copies(self) -> list[str]:
        sql, ids = self.sql, self.ids
        with connect(self.conninfo) as con, con.transaction():
            self._lock_for_writing(con)
            dropped = sorted(self._copies(con))
            for layer in dropped:
                self._drop_copy(con, layer)
            con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ids.table(COPIES_TABLE)))
            con.execute(sql.SQL("DROP FUNCTION IF EXISTS {}()").format(ids.table(_STALE_FUNCTION)))
        return dropped

    def _lock_for_writing(self, con) -> None:
        """The locks an import takes (one writer per schema at a time; readers go on)."""
        sql = self.sql
        con.execute("SELECT pg_advisory_xact_lock(hashtext('swppp_review'), hashtext(%s))", (self.schema,))
        self._ensure_side_tables(con)
        con.execute(
            sql.SQL("LOCK TABLE {} IN SHARE ROW EXCLUSIVE MODE").format(self.ids.table(VERSIONS_TABLE))
        )

    def _drop_copy(self, con, layer: str) -> None:
        sql, ids = self.sql, self.ids
        con.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ids.table(copy_table(layer))))
        if self._exists(con, layer):
            con.execute(
                sql.SQL("DROP TRIGGER IF EXISTS {} ON {}").format(
                    sql.Identifier(_STALE_FUNCTION), ids.table(layer)
                )
            )
        if self._exists(con, COPIES_TABLE):
            con.execute(sql.SQL("DELETE FROM {} WHERE layer = %s").format(ids.table(COPIES_TABLE)), (layer,))

    def _make_copy(self, con, layer: str, area: int, version: Optional[int]) -> AreaCopy:
        """``layer``'s area copy in EPSG ``area`` made (any other replaced) and recorded, and the
        layer given the trigger that marks it stale when the table is edited."""
        sql, ids = self.sql, self.ids
        self._drop_copy(con, layer)
        copy = ids.table(copy_table(layer))
        con.execute(
            sql.SQL(
                "CREATE TABLE {copy} AS SELECT fid, {fixed} AS geom, NOT ST_IsValid(t) AS repaired FROM "
                "(SELECT fid, ST_Transform(geom, %(area)s) AS t FROM {layer} WHERE geom IS NOT NULL "
                "OFFSET 0) m"
            ).format(copy=copy, fixed=sql.SQL(FIXED_POLYGON.format(g="t")), layer=ids.table(layer)),
            {"area": area},
        )
        con.execute(sql.SQL("ALTER TABLE {} ADD PRIMARY KEY (fid)").format(copy))
        con.execute(sql.SQL("CREATE INDEX ON {} USING gist (geom)").format(copy))
        con.execute(sql.SQL("ANALYZE {}").format(copy))
        features, repaired = con.execute(
            sql.SQL("SELECT count(*), count(*) FILTER (WHERE repaired) FROM {}").format(copy)
        ).fetchone()
        made = AreaCopy(layer, version, f"EPSG:{area}", int(features), int(repaired), _now(), False)
        con.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (layer text PRIMARY KEY, version integer, crs text NOT NULL, "
                "features integer NOT NULL, repaired integer NOT NULL, made_at text NOT NULL, "
                "stale boolean NOT NULL)"
            ).format(ids.table(COPIES_TABLE))
        )
        con.execute(
            sql.SQL("INSERT INTO {} VALUES (%s, %s, %s, %s, %s, %s, false)").format(ids.table(COPIES_TABLE)),
            (layer, version, made.crs, made.features, made.repaired, made.made_at),
        )
        # One function per schema; it finds the copies' table by the schema of the table edited.
        con.execute(
            sql.SQL(
                "CREATE OR REPLACE FUNCTION {}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                "EXECUTE format('UPDATE %I.%I SET stale = true WHERE layer = $1', TG_TABLE_SCHEMA, "
                "{}) USING TG_TABLE_NAME; RETURN NULL; END $$"
            ).format(ids.table(_STALE_FUNCTION), sql.Literal(COPIES_TABLE))
        )
        con.execute(
            sql.SQL(
                "CREATE TRIGGER {} AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON {} "
                "FOR EACH STATEMENT EXECUTE FUNCTION {}()"
            ).format(sql.Identifier(_STALE_FUNCTION), ids.table(layer), ids.table(_STALE_FUNCTION))
        )
        return made

    def _ensure_side_tables(self, con) -> None:
        sql, ids = self.sql, self.ids
        con.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (fid serial PRIMARY KEY, layer text NOT NULL, "
                "version integer NOT NULL, source text, source_date text, imported_at text, "
                "feature_count integer, sha256 text, crs text, UNIQUE (layer, version))"
            ).format(ids.table(VERSIONS_TABLE))
        )
        present = {
            r[0]
            for r in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND "
                "table_name = %s",
                (self.schema, VERSIONS_TABLE),
            ).fetchall()
        }
        for column, kind in ADDED_VERSION_COLUMNS.items():  # a layer_versions made before
            if column not in present:  # (ALTER locks the table: only where a column is missing)
                con.execute(
                    sql.SQL("ALTER TABLE {} ADD COLUMN {} " + kind.lower()).format(
                        ids.table(VERSIONS_TABLE), sql.Identifier(column)
                    )
                )
        con.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} (layer text NOT NULL, version integer NOT NULL, "
                "feature_id text NOT NULL, attributes jsonb NOT NULL, geom geometry)"
            ).format(ids.table(HISTORY_TABLE))
        )
        con.execute(
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (layer, version)").format(
                sql.Identifier("reference_history_version"), ids.table(HISTORY_TABLE)
            )
        )


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


def copy_text(values: np.ndarray, kinds: list, geometries) -> bytes:
    """Rows in COPY's text format: ``values`` (an object array of rows, its columns of the
    contract's ``kinds``), then the geometry (``geometries``: hex EWKB, None for none). Made
    column by column; NULL is ``\\N``, text escaped as COPY reads it, a real as Python's repr
    (the shortest text that reads back as the same double)."""
    cells = []
    for column, kind in zip(values.T, kinds):
        if kind == "text":
            cells.append(["\\N" if v is None else str(v).translate(_COPY_ESCAPES) for v in column])
        else:
            number = int if kind == "integer" else float
            cells.append(["\\N" if v is None else repr(number(v)) for v in column])
    cells.append(["\\N" if g is None else g for g in geometries])
    return ("\n".join(map("\t".join, zip(*cells))) + "\n").encode("utf-8")


def _srid(crs) -> int:
    epsg = epsg_code(crs) if crs is not None else None
    if not epsg:
        raise InputError(
            "PostGIS stores a layer in an EPSG coordinate system; this source's CRS has no EPSG code",
            fix="reproject the source to an EPSG CRS first",
        )
    return int(epsg)


class PostgisReference:
    """Reading reference layers of a PostGIS schema around a site, for a review.

    ``read(layer, bounds, area_crs)`` returns the features intersecting ``bounds`` (a box in
    the area CRS) as a GeoDataFrame in the area CRS, invalid geometries repaired for those
    features only: the same as the GeoPackage reader.
    """

    def __init__(self, target: str, schema: Optional[str] = None):
        self.store = PostgisStore(target, schema)
        self.source = self.store.label

    def layers(self) -> list[str]:
        with self.store.connection() as con:
            rows = con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
                (self.store.schema,),
            ).fetchall()
        return sorted(r[0] for r in rows if r[0] in REFERENCE_LAYERS or r[0] == VERSIONS_TABLE)

    def links(self, wanted: set) -> Optional[dict]:
        return self.store.links(wanted)

    def versions(self) -> dict[str, int]:
        """The current version of each layer (where ``layer_versions`` has one)."""
        return {r.layer: r.version for r in self.store.versions()}

    def read(self, layer: str, bounds, area_crs) -> gpd.GeoDataFrame:
        sql, ids = self.store.sql, self.store.ids
        spec = REFERENCE_LAYERS.get(layer)
        area = crs_of(area_crs)
        area_srid = epsg_code(area)
        if area_srid is None:
            raise InputError(
                "the area CRS has no EPSG code, which PostGIS needs to transform to",
                fix="use an EPSG area CRS in the profile",
            )
        with self.store.connection() as con:
            found = con.execute(
                "SELECT srid FROM geometry_columns WHERE f_table_schema = %s AND "
                "f_table_name = %s AND f_geometry_column = 'geom'",
                (self.store.schema, layer),
            ).fetchone()
            if found is None:
                raise InputError(
                    f"the PostGIS schema has no layer '{layer}'",
                    path=self.source,
                    layer=layer,
                    fix=f"import '{layer}' into the schema first",
                )
            columns = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND "
                    "table_name = %s AND column_name NOT IN ('geom', 'fid') ORDER BY ordinal_position",
                    (self.store.schema, layer),
                ).fetchall()
            ]
            if spec:
                columns = [c for c in spec.fields if c in columns] + [
                    c for c in columns if c not in spec.fields
                ]
            # The box, densified, in the table's SRID: the GiST index answers && / ST_Intersects.
            box = sql.SQL("ST_Transform(ST_Segmentize(ST_MakeEnvelope(%s, %s, %s, %s, %s), %s), %s)")
            query = sql.SQL("SELECT {}, ST_AsBinary(geom) FROM {} WHERE ST_Intersects(geom, {})").format(
                sql.SQL(", ").join(map(sql.Identifier, columns)), ids.table(layer), box
            )
            minx, miny, maxx, maxy = (float(v) for v in bounds)
            step = max(maxx - minx, maxy - miny, 1e-9) / 32
            rows = con.execute(  # binary: the shapes come as bytes, not hex text
                query, (minx, miny, maxx, maxy, area_srid, step, found[0]), binary=True
            ).fetchall()
        geoms = shapely.from_wkb([bytes(r[-1]) for r in rows]) if rows else []
        frame = gpd.GeoDataFrame(
            [r[:-1] for r in rows], columns=columns, geometry=list(geoms), crs=crs_of(f"EPSG:{found[0]}")
        )
        frame = to_crs(frame, area)
        invalid = ~frame.geometry.is_valid
        if invalid.any():
            frame.loc[invalid, frame.geometry.name] = shapely.make_valid(
                np.asarray(frame.geometry[invalid].array)
            )
        return frame
