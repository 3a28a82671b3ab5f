"""Issue 35 item 1 in PostGIS: the project's review file kept as a PostgreSQL schema, against a
real PostgreSQL/PostGIS (tests/postgis.py). The same two rounds of the shipped demo recorded in a
GeoPackage and in PostGIS give the same answers; the server keeps the rules (a round never
rewritten, one writer, a save killed part way leaves nothing, a foreign schema refused)."""

from __future__ import annotations

import json
import os
import signal
import uuid

import pytest

import analysis.rounds.reviewfile_pg as reviewfile_pg
from analysis.cli import main
from analysis.errors import InputError
from analysis.rounds.decisions import Decision
from analysis.rounds.record import add_decisions, read_round
from analysis.rounds.reviewfile import open_review_file
from tests.analysis.test_rounds import DECISIONS, write
from tests.analysis.test_rounds_faults import start_save

psycopg = pytest.importorskip("psycopg")


@pytest.fixture
def review_schema(postgis_server):
    """A PostgreSQL review file target (its own new schema), and the plain connection text."""
    schema = f"review_{uuid.uuid4().hex[:8]}"
    return f"{postgis_server.uri()}&schema={schema}", postgis_server.conninfo(), schema


def review(capsys, *args):
    status = main(["review", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def two_rounds(data_copy, tmp_path, capsys, target, tag):
    """Round 1 of the demo with decisions, round 2 of the resubmitted plan compared to it."""
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    site2 = data_copy("demo_site_round2.gpkg")
    (tmp_path / tag).mkdir()
    decisions = write(tmp_path / tag / "decisions.toml", DECISIONS)
    first, second = tmp_path / f"{tag}1.json", tmp_path / f"{tag}2.json"
    options = ["--reference", reference, "--round", target]
    status, out, err = review(capsys, site, *options, "--decisions", decisions, "--json", first)
    assert status in (0, 1), err
    status, out, err = review(capsys, site2, *options, "--compare-to", 1, "--json", second)
    assert status in (0, 1), err
    return json.loads(first.read_text()), json.loads(second.read_text()), out


def comparable(result):
    """A review's round answers without when and where they were recorded."""
    out = json.loads(json.dumps({k: result.get(k) for k in ("findings", "comparison", "status")}))
    for f in out["findings"]:
        decision = f["round"]["decision"]
        if decision:
            decision.pop("decided_at")
    return out


def test_postgis_rounds_give_the_geopackage_rounds_answers(data_copy, tmp_path, capsys, review_schema):
    target, conninfo, schema = review_schema
    pg1, pg2, said = two_rounds(data_copy, tmp_path, capsys, target, "pg")
    gp1, gp2, _ = two_rounds(data_copy, tmp_path, capsys, tmp_path / "project.gpkg", "gp")
    assert comparable(pg1) == comparable(gp1)
    assert comparable(pg2) == comparable(gp2)
    assert pg2["comparison"]["plan_changes"]["compared"] is True
    assert pg2["comparison"]["plan_changes"]["changes"] == gp2["comparison"]["plan_changes"]["changes"]
    assert pg2["round"]["number"] == 2 and pg2["round"]["previous"] == 1
    assert f"schema {schema} of" in pg2["round"]["file"] and "password" not in pg2["round"]["file"]
    assert f"round 2 recorded in schema {schema}" in said
    # The plan tables are PostGIS geometry in the plan's CRS, as QGIS opens them.
    with psycopg.connect(conninfo) as con:
        srid, kinds = con.execute(
            f'SELECT DISTINCT ST_SRID(geom), GeometryType(geom) FROM "{schema}".round_disturbance'
        ).fetchone()
        assert srid > 0 and kinds == "MULTIPOLYGON", (srid, kinds)
    # Decisions appended and withdrawn, read back; the letter is written from the schema.
    held = read_round(target, 2)["findings"]
    decided = next(f["number"] for f in held if f["decision"])
    add_decisions(target, 2, {decided: Decision("withdraw", None, "B. Second", "test")})
    assert read_round(target, 2)["findings"][decided - 1]["decision"] is None
    letter = tmp_path / "letter.json"
    assert main(["letter", target, "--json", str(letter), "--quiet"]) == 0, capsys.readouterr()
    written = json.loads(letter.read_text())
    assert written["round"] == 2 and written["previous"] == 1 and schema in written["review_file"]


def test_the_server_keeps_a_round_from_being_rewritten(data_copy, tmp_path, capsys, review_schema):
    target, conninfo, schema = review_schema
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    assert review(capsys, site, "--reference", reference, "--round", target)[0] in (0, 1)
    with psycopg.connect(conninfo, autocommit=True) as con:
        for statement in (
            f'UPDATE "{schema}".review_rounds SET plan_sha256 = %s',
            f'DELETE FROM "{schema}".round_findings WHERE rule <> %s',
            f'TRUNCATE "{schema}".finding_decisions',
            f'UPDATE "{schema}".round_smp SET smp_id = %s',
        ):
            with pytest.raises(psycopg.errors.RaiseException, match="never rewritten"):
                con.execute(statement, ("x",) if "%s" in statement else None)
        assert con.execute(f'SELECT count(*) FROM "{schema}".review_rounds').fetchone()[0] == 1


def test_a_foreign_schema_or_a_target_without_one_is_refused_by_name(
    postgis_server, tmp_path, capsys, data_copy
):
    site = data_copy("demo_site.gpkg")
    schema = f"other_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(postgis_server.conninfo(), autocommit=True) as con:
        con.execute(f'CREATE SCHEMA "{schema}"')
        con.execute(f'CREATE TABLE "{schema}".wetlands (id integer)')
    status, out, err = review(capsys, site, "--round", f"{postgis_server.uri()}&schema={schema}")
    assert status == 2 and "not a SWPPP review file" in err and "wetlands" in err and "Traceback" not in err
    with psycopg.connect(postgis_server.conninfo()) as con:  # nothing written into it
        assert (
            con.execute(
                "SELECT count(*) FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchone()[0]
            == 1
        )
    status, out, err = review(capsys, site, "--round", postgis_server.uri())
    assert status == 2 and "needs its own schema" in err and "?schema=NAME" in err
    # A newer format is refused by name and left as it is.
    target = f"{postgis_server.uri()}&schema=newer_{uuid.uuid4().hex[:8]}"
    open_review_file(target).close()
    with psycopg.connect(postgis_server.conninfo(), autocommit=True) as con:
        con.execute(
            f"UPDATE \"{target.rsplit('=', 1)[1]}\".swppp_review_file SET value = '99' "
            "WHERE key = 'format_version'"
        )
    with pytest.raises(InputError, match="format version '99'"):
        open_review_file(target, create=False)


def test_a_save_killed_part_way_leaves_nothing_and_two_saves_take_turns(
    data_copy, tmp_path, capsys, review_schema, monkeypatch
):
    target, conninfo, schema = review_schema
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    assert review(capsys, site, "--reference", reference, "--round", target)[0] in (0, 1)
    # Refused inside its transaction (no round 5 to compare with): rolled back, said, exit 2.
    status, out, err = review(capsys, site, "--reference", reference, "--round", target, "--compare-to", 5)
    assert status == 2 and "there is no round 5 to compare with" in err and "Traceback" not in err
    assert read_round(target)["round"]["round"] == 1
    # Killed with SIGKILL inside its transaction, after its round row and some findings.
    child = start_save("finding 5", 60, site, "--reference", reference, "--round", target)
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    with psycopg.connect(conninfo) as con:
        assert con.execute(f'SELECT count(*) FROM "{schema}".review_rounds').fetchone()[0] == 1
        assert con.execute(f'SELECT max(round) FROM "{schema}".round_findings').fetchone()[0] == 1
    # A save holding the file: a second waits its turn, then is refused by name in time.
    holding = start_save("finding 2", 30, site, "--reference", reference, "--round", target)
    try:
        monkeypatch.setattr(reviewfile_pg, "STORE_BUSY_TIMEOUT_S", 1.0)
        status, out, err = review(capsys, site, "--reference", reference, "--round", target)
        assert status == 2 and "another save has held this review file" in err, err
    finally:
        holding.kill()
        holding.wait(timeout=30)
    monkeypatch.undo()
    # A save holding the file for 3 s: the second waits its turn and becomes the round after.
    holding = start_save("finding 2", 3, site, "--reference", reference, "--round", target)
    status, out, err = review(capsys, site, "--reference", reference, "--round", target)
    assert holding.wait(timeout=60) in (0, 1), holding.stderr.read()
    assert status in (0, 1), err
    assert "another save recorded round 2" in out + err and "this review is round 3" in out + err
    assert read_round(target)["round"]["round"] == 3
