"""The review file's tables and the review JSON's round fields, each declared once.

``scripts/contract_doc.py`` writes them into docs/CONTRACT.md ("Review rounds"); the review
file's schema (:data:`SCHEMA`) is built from the same declarations.
"""

from __future__ import annotations

from dataclasses import dataclass

from .decisions import RECORDED

__all__ = [
    "FORMAT",
    "FORMAT_TABLE",
    "FORMAT_VERSION",
    "ROUNDS_TABLE",
    "FINDINGS_TABLE",
    "DECISIONS_TABLE",
    "PLANS_TABLE",
    "PLAN_LAYERS",
    "CHANGE_KINDS",
    "PLAN_TABLES",
    "READABLE_VERSIONS",
    "TABLES",
    "upgrade_statements",
    "JSON_FIELDS",
    "SCHEMA",
    "Column",
    "TableSpec",
    "JsonField",
]

FORMAT = "swppp-review-rounds"
FORMAT_VERSION = 2  # raised whenever a table or column below changes meaning
# Format 1 (no plan geometry) is read, and made format 2 by the next round recorded in it.
READABLE_VERSIONS = (1, 2)
FORMAT_TABLE = "swppp_review_file"
ROUNDS_TABLE, FINDINGS_TABLE, DECISIONS_TABLE = "review_rounds", "round_findings", "finding_decisions"
PLANS_TABLE = "round_plans"
# The plan's layers each round records (format 2): site plan layer -> its review file table.
PLAN_LAYERS = {"disturbance": "round_disturbance", "smp": "round_smp", "easement": "round_easement"}
# A plan change's kind (``comparison.plan_changes.changes[].kind``, in this order) and its words
# (the report's table, the findings GeoPackage's ``plan_changes`` legend).
CHANGE_KINDS = {
    "disturbance_added": "disturbance added",
    "disturbance_removed": "disturbance removed",
    "smp_added": "SMP added",
    "smp_removed": "SMP removed",
    "smp_moved": "SMP moved",
    "easement_added": "easement added",
    "easement_removed": "easement removed",
    "easement_changed": "easement changed",
}


@dataclass(frozen=True)
class Column:
    name: str
    sql: str  # its SQLite declaration
    notes: str


@dataclass(frozen=True)
class TableSpec:
    name: str
    label: str
    columns: tuple[Column, ...]
    key: str = ""  # a table constraint (PRIMARY KEY ...)
    frozen: bool = True  # rows are never updated nor deleted (triggers refuse it)
    geometry: str = ""  # a feature table's GeoPackage geometry type (its `geom` column); "": attributes
    since: int = 1  # the format version that added it


@dataclass(frozen=True)
class JsonField:
    path: str
    kind: str
    notes: str


def _plan_table(
    layer: str, label: str, geometry: str, geom_doc: str, feature_doc: str, *more: Column
) -> TableSpec:
    """One round's plan layer as a feature table (format 2): its key, geometry, round and
    feature label, then ``more``."""
    return TableSpec(
        PLAN_LAYERS[layer],
        label,
        (
            Column("fid", "INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL", ""),
            Column("geom", geometry, geom_doc),
            Column("round", "INTEGER NOT NULL REFERENCES review_rounds(round)", ""),
            Column("feature", "TEXT NOT NULL", feature_doc),
            *more,
        ),
        geometry=geometry,
        since=2,
    )


TABLES = (
    TableSpec(
        FORMAT_TABLE,
        "What the file is (key, value): `format` = `swppp-review-rounds`, `format_version` = "
        f"{FORMAT_VERSION}, `written_by`, `created_at`; a file without it, or of a newer "
        "version, is refused by name; a format 1 file (no plan geometry) is read, and made format "
        "2 by the next round recorded in it (`upgraded_at`)",
        (Column("key", "TEXT NOT NULL PRIMARY KEY", ""), Column("value", "TEXT", "")),
        frozen=False,
    ),
    TableSpec(
        ROUNDS_TABLE,
        "One row per review round, written once and never rewritten",
        (
            Column("round", "INTEGER NOT NULL PRIMARY KEY", "1 for the first; the next is one more"),
            Column("recorded_at", "TEXT NOT NULL", "UTC, ISO 8601"),
            Column("reviewed_on", "TEXT NOT NULL", "the review JSON's `reviewed_on`"),
            Column("site_name", "TEXT", "the review JSON's `site.name`"),
            Column(
                "plan_sha256",
                "TEXT NOT NULL",
                "sha256 of the site plan file (of the `plan_files` "
                "listing, `sha256  name` lines, where the plan is read from several)",
            ),
            Column("plan_files", "TEXT NOT NULL", "JSON: each file read, `name` and `sha256`"),
            Column("profile", "TEXT NOT NULL", "the review JSON's `profile`"),
            Column("profile_sha256", "TEXT", "sha256 of the rules profile file read"),
            Column("tool_version", "TEXT NOT NULL", "the review JSON's `tool.version`"),
            Column(
                "reference_versions",
                "TEXT",
                "JSON: the review JSON's `reference.versions` (empty: no reference read)",
            ),
            Column("area_crs", "TEXT NOT NULL", "the CRS of `round_findings.geometry`"),
            Column("result", "TEXT NOT NULL", "the review's JSON result, as written without a round"),
        ),
    ),
    TableSpec(
        FINDINGS_TABLE,
        "The findings of each round, as the contract's JSON of each",
        (
            Column("round", "INTEGER NOT NULL REFERENCES review_rounds(round)", ""),
            Column(
                "finding",
                "INTEGER NOT NULL",
                "its number in the round, 1 for the first (the findings GeoPackage's `finding`)",
            ),
            Column("rule", "TEXT NOT NULL", ""),
            Column("features", "TEXT NOT NULL", "JSON list of `layer:id`"),
            Column("status", "TEXT NOT NULL", ""),
            Column("value", "REAL", "the finding's figure"),
            Column("json", "TEXT NOT NULL", "the finding as the review JSON gives it"),
            Column("geometry", "BLOB", "WKB in `area_crs`; empty where the finding has no place"),
            Column("matched_round", "INTEGER", "the round before's finding it was matched to"),
            Column("matched_finding", "INTEGER", ""),
            Column(
                "matched_by",
                "TEXT",
                "`rule_and_features`, `rule_and_place`, or `new`; empty on a first round",
            ),
        ),
        key="PRIMARY KEY (round, finding)",
    ),
    TableSpec(
        DECISIONS_TABLE,
        "The reviewer's decisions, appended: the latest on a finding wins",
        (
            Column("id", "INTEGER PRIMARY KEY AUTOINCREMENT", "the order they were made in"),
            Column("round", "INTEGER NOT NULL", ""),
            Column("finding", "INTEGER NOT NULL", ""),
            Column(
                "decision",
                "TEXT NOT NULL CHECK (decision IN (" + ", ".join(f"'{d}'" for d in RECORDED) + "))",
                "`withdraw`: the finding's decision taken back (undecided again)",
            ),
            Column("reason", "TEXT", "required for `override`"),
            Column("reviewer", "TEXT NOT NULL", "who decided"),
            Column("decided_at", "TEXT NOT NULL", "UTC, ISO 8601"),
            Column("source", "TEXT NOT NULL", "the decisions file and row, or `carried from round N`"),
            Column("carried_from", "INTEGER", "the round the decision was carried from"),
        ),
    ),
    TableSpec(
        PLANS_TABLE,
        "Which rounds recorded the plan's geometry (format 2), in which CRS: a round without a row "
        "here (recorded in format 1) has no plan to compare",
        (
            Column("round", "INTEGER NOT NULL PRIMARY KEY REFERENCES review_rounds(round)", ""),
            Column(
                "area_crs",
                "TEXT NOT NULL",
                "the CRS of the round's plan tables' `geom` (the first round's area CRS: a later "
                "round measured in another is reprojected into it)",
            ),
            Column("disturbance", "INTEGER NOT NULL", "its rows in `round_disturbance`"),
            Column("smp", "INTEGER NOT NULL", "its rows in `round_smp`"),
            Column("easement", "INTEGER NOT NULL", "its rows in `round_easement`"),
        ),
        since=2,
    ),
    _plan_table(
        "disturbance",
        "The plan's disturbance in each round, a feature table (open it in QGIS, filter by `round`)",
        "MULTIPOLYGON",
        "in `round_plans.area_crs`",
        "`disturbance:id` as the findings name it",
        Column("phase", "TEXT", "the plan's `phase`; its changes are measured per phase"),
    ),
    _plan_table(
        "smp",
        "The plan's stormwater management practices in each round (points or polygons)",
        "GEOMETRY",
        "a point or a (multi)polygon, in `round_plans.area_crs`",
        "`smp:id`",
        Column("smp_id", "TEXT", "the plan's `smp_id`: SMPs are compared by it"),
        Column("practice", "TEXT", ""),
    ),
    _plan_table(
        "easement",
        "The plan's maintenance easements in each round",
        "MULTIPOLYGON",
        "in `round_plans.area_crs`",
        "`easement:id`",
        Column("easement_id", "TEXT", "the plan's `easement_id`: easements are compared by it"),
        Column("recorded", "INTEGER", "1: recorded"),
    ),
)
PLAN_TABLES = tuple(t for t in TABLES if t.since == 2)

JSON_FIELDS = (
    JsonField("round", "object", "only with `--round`: the round this review was recorded as"),
    JsonField("round.file", "text", "the review file's name"),
    JsonField("round.number", "integer", "1 for the first"),
    JsonField("round.recorded_at", "text", "UTC, ISO 8601"),
    JsonField("round.plan_sha256", "text", "as `review_rounds.plan_sha256`"),
    JsonField("round.plan_files", "list", "each file read: `name`, `sha256`"),
    JsonField("round.profile_sha256", "text", "sha256 of the rules profile file"),
    JsonField("round.previous", "integer or null", "the round its findings were matched to"),
    JsonField(
        "round.decisions",
        "object",
        "findings by their latest decision: `accept`, `override`, `resolved`, `undecided`",
    ),
    JsonField("comparison", "object", "only with `--round` and `--compare-to N`: what changed since round N"),
    JsonField("comparison.round", "integer", "N"),
    JsonField(
        "comparison.resolved",
        "list",
        "findings open in round N (`fail`, `warn`, `needs_review`) paired now with one not open, "
        "or with none",
    ),
    JsonField("comparison.still_open", "list", "open in both rounds"),
    JsonField("comparison.new", "list", "open now, paired with nothing open in round N"),
    JsonField(
        "comparison.changed",
        "list",
        "paired, and the status changed or the figure moved beyond `[rounds] figure_change_fraction`",
    ),
    JsonField(
        "comparison.*[]",
        "object",
        "`rule`, `features`, `before` and `after` (each `number`, `status`, `figure`, `message`, or "
        "null where the finding is absent from that round), `matched_by`",
    ),
    JsonField(
        "comparison.*[].caused_by",
        "list",
        "the ids of the plan changes at the finding's place (its features, or its place before or "
        "after within `[rounds] place_tolerance_ft`); empty where none",
    ),
    JsonField(
        "comparison.*[].cause",
        "text",
        "the plan changes at its place in words, `no plan change at this finding's place`, or why "
        "it cannot be said",
    ),
    JsonField(
        "comparison.plan_changes",
        "object",
        "what changed in the plan's geometry since round N (disturbance, SMPs, easements)",
    ),
    JsonField(
        "comparison.plan_changes.compared",
        "boolean",
        "false where either round recorded no plan geometry: nothing below is measured, `note` says why",
    ),
    JsonField(
        "comparison.plan_changes.note",
        "text or null",
        "a needs-review statement where the changes could not be measured (a round recorded in "
        "review file format 1)",
    ),
    JsonField(
        "comparison.plan_changes.counts",
        "object",
        "changes by `kind`",
    ),
    JsonField(
        "comparison.plan_changes.changes",
        "list",
        "each change: `id` (`C1`, ...), `kind` ("
        + ", ".join(f"`{k}`" for k in CHANGE_KINDS)
        + "), `layer`, `feature` (`smp:BR-1`; for disturbance `phase P`), "
        "`phase`, `acres` (the change's true acres, as the review measures the disturbed area; "
        "null for an SMP point), `acres_before`, `acres_after` (easements, SMP polygons), "
        "`distance_ft` (an SMP's move, between its places' centroids), `message`",
    ),
    JsonField("findings[].round", "object", "only with `--round`: the finding in this round"),
    JsonField("findings[].round.number", "integer", "its number in the round (1 for the first)"),
    JsonField(
        "findings[].round.decision",
        "object or null",
        "the latest decision: `decision` "
        "(`accept`, `override`, `resolved`), `reason`, `reviewer`, `decided_at`, `source`, "
        "`carried_from` (a round, or null)",
    ),
    JsonField(
        "findings[].round.match",
        "object or null",
        "null on a first round; else `by` "
        "(`rule_and_features`, `rule_and_place`, `new`), `round`, `number` (the finding "
        "matched), `figure_before`, `figure_after`, `figure_changed` (beyond the profile's "
        "`[rounds] figure_change_fraction`)",
    ),
)


def _table_sql(spec: TableSpec) -> list[str]:
    """The statements that make ``spec``'s table (one a statement: the upgrade of a format 1
    file runs them inside its round's transaction, where ``executescript`` cannot)."""
    parts = [f'"{c.name}" {c.sql}' for c in spec.columns] + ([spec.key] if spec.key else [])
    label = spec.label.replace(chr(39), chr(39) * 2)
    out = [f'CREATE TABLE "{spec.name}" ({", ".join(parts)})']
    if spec.geometry:  # a feature table; its CRS is set by the first round that records a plan
        out += [
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, description, srs_id) VALUES "
            f"('{spec.name}', 'features', '{spec.name}', '{label}', -1)",
            f"INSERT INTO gpkg_geometry_columns VALUES ('{spec.name}', 'geom', '{spec.geometry}', -1, 0, 0)",
        ]
    else:
        out.append(
            "INSERT INTO gpkg_contents (table_name, data_type, identifier, description) VALUES "
            f"('{spec.name}', 'attributes', '{spec.name}', '{label}')"
        )
    if spec.frozen:
        for event in ("UPDATE", "DELETE"):
            out.append(
                f'CREATE TRIGGER "{spec.name}_never_{event.lower()}d" BEFORE {event} ON "{spec.name}" '
                f"BEGIN SELECT RAISE(ABORT, 'a review round is never rewritten ({spec.name})'); END"
            )
    return out


def upgrade_statements(version: int) -> list[str]:
    """What makes a review file of format ``version`` one of this format (its rounds kept as
    they are): the tables added since, one statement each."""
    return [sql for t in TABLES if t.since > version for sql in _table_sql(t)]


SCHEMA = "".join(f"{sql};\n" for t in TABLES for sql in _table_sql(t))
