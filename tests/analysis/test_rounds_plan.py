"""The plan's geometry in each review round and its changes between rounds (issue 35, item 4).

Hand-made plans for the measures (a square of known acres added, an SMP moved beyond and within
the profile's tolerance, an easement widened), and real files and processes for the rest: the
shipped demo's two submittals recorded with ``swppp review --round``, the review file read back
with SQLite and GDAL, a format 1 file, and a save killed in the middle of writing the plan."""

from __future__ import annotations

import hashlib
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import numpy as np
import pytest
import shapely

from analysis.cli import main
from analysis.profile import load_profile
from analysis.rounds.contract import (
    FORMAT_TABLE,
    PLAN_LAYERS,
    PLAN_TABLES,
    PLANS_TABLE,
    ROUNDS_TABLE,
)
from analysis.rounds.matching import Held
from analysis.rounds.plan_changes import NO_CHANGE_HERE, Plan, PlanLayer, plan_changes, tie_changes
from analysis.rounds.record import read_round
from analysis.units import ACRE_M2, acres, crs_units, ellipsoidal_acres

from .test_rounds_faults import start_save

ROOT = Path(__file__).resolve().parents[2]
CHECK_RESULT = ROOT.parent.parent / "shared" / "tools" / "check_result.py"
CRS = "EPSG:2260"  # the shipped profile's area CRS: NAD83 / New York East, US survey feet
FT_US_M = 1200 / 3937


def run(args, capsys):
    status = main(["review", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def layer(features, keys, geometries, extra=None) -> PlanLayer:
    return PlanLayer(tuple(features), tuple(keys), np.asarray(geometries, dtype=object), tuple(extra or keys))


def plan(disturbance=(), smp=(), easement=()) -> Plan:
    """A plan from (key, geometry) pairs per layer."""

    def made(name, pairs):
        pairs = list(pairs)
        return layer(
            [f"{name}:{k if name != 'disturbance' else i}" for i, (k, _g) in enumerate(pairs)],
            [k for k, _g in pairs],
            [g for _k, g in pairs],
        )

    return Plan(
        CRS,
        {
            "disturbance": made("disturbance", disturbance),
            "smp": made("smp", smp),
            "easement": made("easement", easement),
        },
    )


@pytest.fixture(scope="module")
def profile():
    return load_profile()


# --- the measures, on hand-made plans -------------------------------------------------------
def test_a_square_of_one_acre_added_to_a_phase_is_measured_exactly(profile):
    side = math.sqrt(ACRE_M2) / FT_US_M  # one international acre, in US survey feet
    square = shapely.box(1000, 0, 1000 + side, side)
    base = shapely.box(0, 0, 1000, 500)
    gone = shapely.box(0, 2000, side, 2000 + side)  # phase 2, taken out whole
    before = plan(disturbance=[("1", base), ("2", gone)])
    after = plan(disturbance=[("1", base), ("1", square)])
    changes = plan_changes(before, after, profile)
    assert [c.kind for c in changes] == ["disturbance_added", "disturbance_removed"]
    added, removed = changes
    assert added.phase == "1" and removed.phase == "2" and added.id == "C1" and removed.id == "C2"
    assert float(acres(added.geometry, CRS)) == pytest.approx(1.0, rel=1e-12)  # the planar acre
    assert shapely.equals(shapely.normalize(added.geometry), shapely.normalize(square))
    # The acres the review decides on: on the ellipsoid, as the disturbed area is measured.
    assert added.acres == pytest.approx(ellipsoidal_acres(square, CRS)[0], rel=1e-12)
    assert added.acres == pytest.approx(1.0, rel=1e-3)
    assert removed.acres == pytest.approx(ellipsoidal_acres(gone, CRS)[0], rel=1e-12)
    assert "1.0000 planar" in added.message and "phase 1" in added.message
    assert added.to_dict()["acres"] == round(added.acres, 6)


def test_the_same_plan_has_no_changes(profile):
    same = plan(
        disturbance=[("1", shapely.box(0, 0, 100, 100))],
        smp=[("BR-1", shapely.Point(10, 10))],
        easement=[("E-1", shapely.box(0, 0, 30, 30))],
    )
    assert plan_changes(same, same, profile) == []


def test_round_off_between_two_drawings_of_one_plan_is_no_change(profile):
    # A resubmittal drawn in another CRS comes back a hair off: slivers thinner than the
    # profile's round-off tolerance are not a change; a strip wider than it is.
    hair = crs_units(profile.reference.geometry_change_tolerance_ft / 10, CRS)
    strip = crs_units(profile.reference.geometry_change_tolerance_ft * 5, CRS)
    before = plan(
        disturbance=[("1", shapely.box(0, 0, 300, 300))], easement=[("E-1", shapely.box(0, 0, 50, 50))]
    )
    nudged = plan(
        disturbance=[("1", shapely.box(hair, -hair, 300 + hair, 300 - hair))],
        easement=[("E-1", shapely.box(-hair, 0, 50, 50 + hair))],
    )
    assert plan_changes(before, nudged, profile) == []
    wider = plan(
        disturbance=[("1", shapely.box(0, 0, 300 + strip, 300))],
        easement=[("E-1", shapely.box(0, 0, 50, 50))],
    )
    (added,) = plan_changes(before, wider, profile)
    assert added.kind == "disturbance_added"
    assert float(acres(added.geometry, CRS)) == pytest.approx(
        float(acres(shapely.box(300, 0, 300 + strip, 300), CRS))
    )


def test_an_smp_moved_beyond_the_tolerance_is_moved_and_within_it_is_not(profile):
    tolerance = profile.rounds.place_tolerance_ft
    step_ft = tolerance + 5.0  # international feet, as the tolerance; the CRS's unit is the US survey foot
    step, near = crs_units(step_ft, CRS), crs_units(tolerance / 2, CRS)
    before = plan(
        smp=[("BR-1", shapely.Point(0, 0)), ("BR-2", shapely.Point(500, 0)), ("BR-3", shapely.Point(900, 0))]
    )
    after = plan(
        smp=[
            ("BR-1", shapely.Point(step, 0)),  # beyond
            ("BR-2", shapely.Point(500, near)),  # within: the same place
            ("BR-4", shapely.box(0, 900, 40, 940)),  # added (a polygon)
        ]
    )
    changes = plan_changes(before, after, profile)
    kinds = {c.kind: c for c in changes}
    assert sorted(kinds) == ["smp_added", "smp_moved", "smp_removed"]
    moved = kinds["smp_moved"]
    assert moved.feature == "smp:BR-1" and moved.distance_ft == pytest.approx(step_ft, rel=1e-9)
    assert f"beyond the {tolerance:g} ft" in moved.message
    assert kinds["smp_added"].feature == "smp:BR-4" and kinds["smp_added"].acres_after > 0
    assert kinds["smp_removed"].feature == "smp:BR-3" and kinds["smp_removed"].acres_before is None  # a point


def test_an_easement_widened_is_changed_with_its_area_before_and_after(profile):
    before = plan(easement=[("E-1", shapely.box(0, 0, 100, 100)), ("E-2", shapely.box(500, 0, 600, 100))])
    after = plan(easement=[("E-1", shapely.box(0, 0, 150, 100)), ("E-2", shapely.box(500, 0, 600, 100))])
    (change,) = plan_changes(before, after, profile)
    assert change.kind == "easement_changed" and change.feature == "easement:E-1"
    assert change.acres_before == pytest.approx(ellipsoidal_acres(shapely.box(0, 0, 100, 100), CRS)[0])
    assert change.acres_after == pytest.approx(ellipsoidal_acres(shapely.box(0, 0, 150, 100), CRS)[0])
    assert shapely.equals(change.geometry, shapely.box(100, 0, 150, 100))  # the area it gained


def test_a_finding_is_tied_to_the_changes_at_its_place_or_on_its_features(profile):
    before = plan(smp=[("BR-1", shapely.Point(0, 0))], easement=[("E-1", shapely.box(0, 0, 100, 100))])
    after = plan(smp=[("BR-1", shapely.Point(300, 0))], easement=[("E-1", shapely.box(0, 0, 100, 200))])
    changes = plan_changes(before, after, profile)
    moved = next(c for c in changes if c.kind == "smp_moved")
    widened = next(c for c in changes if c.kind == "easement_changed")
    by_feature = Held(1, "easement_coverage", ("smp:BR-1",), 1.0, None, "fail", "")
    ids, said = tie_changes(changes, None, by_feature, 0.0)
    assert ids == [moved.id] and said.startswith("plan changes at its place") and "BR-1 moved" in said
    at_place = Held(2, "wetlands", ("wetlands:W-9",), 1.0, shapely.box(20, 150, 40, 170), "warn", "")
    assert tie_changes(changes, at_place, None, 0.0)[0] == [widened.id]
    far = Held(3, "wetlands", ("wetlands:W-9",), 1.0, shapely.box(5000, 5000, 5010, 5010), "warn", "")
    assert tie_changes(changes, far, far, 0.0) == ([], NO_CHANGE_HERE)
    nowhere = Held(4, "swppp_contents", ("checklist:E",), 1.0, None, "fail", "")
    ids, said = tie_changes(changes, nowhere, nowhere, 0.0)
    assert ids == [] and said.startswith(NO_CHANGE_HERE) and "no place on the map" in said


# --- real files: the demo's two submittals -------------------------------------------------
@pytest.fixture
def demo(data_copy):
    return data_copy("demo_site.gpkg"), data_copy("demo_site_round2.gpkg"), data_copy("demo_reference.gpkg")


def test_a_round_records_its_plan_as_feature_tables_qgis_can_open(demo, tmp_path, capsys):
    site, _second, reference = demo
    file = tmp_path / "project.gpkg"
    status, _out, err = run([site, "--reference", reference, "--round", file], capsys)
    assert status == 1, err
    with closing(sqlite3.connect(file)) as con:
        kinds = dict(con.execute("SELECT table_name, data_type FROM gpkg_contents"))
        assert all(kinds[t] == "features" for t in PLAN_LAYERS.values())
        columns = {
            r[0]: (r[1], r[2])
            for r in con.execute("SELECT table_name, geometry_type_name, srs_id FROM gpkg_geometry_columns")
        }
        assert columns[PLAN_LAYERS["smp"]] == ("GEOMETRY", 2260) and columns[PLAN_LAYERS["easement"]] == (
            "MULTIPOLYGON",
            2260,
        )
        assert con.execute(
            "SELECT organization, organization_coordsys_id FROM gpkg_spatial_ref_sys WHERE srs_id = 2260"
        ).fetchone() == ("EPSG", 2260)
        counts = con.execute(
            f"SELECT disturbance, smp, easement, area_crs FROM {PLANS_TABLE} WHERE round = 1"
        ).fetchone()
        assert counts[3] == CRS
        ids = [
            r[0]
            for r in con.execute(f'SELECT smp_id FROM "{PLAN_LAYERS["smp"]}" WHERE round = 1 ORDER BY fid')
        ]
        assert "BR-1" in ids and "BR-2" in ids and len(ids) == counts[1]
        with pytest.raises(sqlite3.IntegrityError, match="never rewritten"):
            con.execute(f"UPDATE \"{PLAN_LAYERS['easement']}\" SET easement_id = 'X'")
        with pytest.raises(sqlite3.IntegrityError, match="never rewritten"):
            con.execute(f'DELETE FROM "{PLAN_LAYERS["disturbance"]}"')
        box = con.execute(
            "SELECT min_x, max_x FROM gpkg_contents WHERE table_name = ?", (PLAN_LAYERS["smp"],)
        ).fetchone()
        assert box[0] is not None and box[0] < box[1]
    # GDAL reads them as layers with the plan's geometries (what QGIS opens).
    import geopandas as gpd

    from analysis.io.vector import list_layers

    assert set(PLAN_LAYERS.values()) <= set(list_layers(file))
    read = gpd.read_file(file, layer=PLAN_LAYERS["easement"])
    plan = gpd.read_file(site, layer="easement")
    assert read.crs.to_epsg() == 2260 and len(read) == len(plan) == counts[2]
    assert sorted(read["easement_id"]) == sorted(plan["easement_id"])
    assert read.geometry.area.sum() == pytest.approx(plan.to_crs(2260).geometry.area.sum(), rel=1e-9)


def test_the_demo_resubmittal_names_the_plan_changes_that_caused_its_findings(demo, tmp_path, capsys):
    site, second, reference = demo
    file, result, html = tmp_path / "project.gpkg", tmp_path / "round2.json", tmp_path / "round2.html"
    run([site, "--reference", reference, "--round", file], capsys)
    status, out, err = run(
        [
            second,
            "--reference",
            reference,
            "--round",
            file,
            "--compare-to",
            "1",
            "--json",
            result,
            "--report",
            html,
        ],
        capsys,
    )
    assert status == 1, err
    compared = json.loads(result.read_text(encoding="utf-8"))["comparison"]
    changes = compared["plan_changes"]
    assert changes["compared"] is True and changes["note"] is None
    by_kind = {c["kind"]: c for c in changes["changes"]}
    assert sorted(by_kind) == ["easement_changed", "smp_moved"]
    moved, widened = by_kind["smp_moved"], by_kind["easement_changed"]
    assert moved["feature"] == "smp:BR-1" and moved["distance_ft"] == pytest.approx(40.0, abs=0.01)
    assert widened["feature"] == "easement:E-2" and widened["acres_after"] > widened["acres_before"]
    assert changes["counts"]["smp_moved"] == 1 and changes["counts"]["disturbance_added"] == 0
    # What caused them: BR-2's fail resolved by E-2 widened, BR-1's new fail by its move.
    resolved = next(i for i in compared["resolved"] if i["features"] == ["smp:BR-2"])
    assert resolved["caused_by"] == [widened["id"]] and "E-2 changed" in resolved["cause"]
    new = next(i for i in compared["new"] if i["features"] == ["smp:BR-1"])
    assert new["caused_by"] == [moved["id"]]
    assert all(i["caused_by"] == [] and i["cause"].startswith(NO_CHANGE_HERE) for i in compared["still_open"])
    if CHECK_RESULT.is_file():
        checked = subprocess.run(
            [sys.executable, str(CHECK_RESULT), str(result)], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout
    # Printed, and in the report's section.
    assert f"plan change {moved['id']}: SMP BR-1 moved 40.0 ft" in out
    assert "plan changes since round 1: 1 smp moved, 1 easement changed" in out
    assert (
        f"new: easement_coverage [smp:BR-1]: absent -> #10 fail 800 [plan changes here: {moved['id']}]" in out
    )
    page = html.read_text(encoding="utf-8")
    assert "Plan changes since round 1" in page and "Plan changes here" in page
    assert "SMP BR-1 moved 40.0 ft" in page


def test_the_site_map_draws_the_plan_changes_with_a_legend_entry_each(demo, tmp_path):
    from analysis.report.site_map import site_map_charts
    from analysis.review import review_paths
    from analysis.rounds.checksums import plan_files
    from analysis.rounds.record import record_round

    site, second, reference = demo
    file = tmp_path / "project.gpkg"
    record_round(file, review_paths(site, reference), plan_files(site))
    review = review_paths(second, reference)
    record_round(file, review, plan_files(second), compare_to=1)
    svg = "".join(chart.svg for _tile, chart in site_map_charts(review))
    for said in (
        "Since round 1: SMP moved, old -&gt; new",
        "Since round 1: SMP's old place",
        "Since round 1: easement area changed",
    ):
        assert f"<!-- {said} -->" in svg, said
    ids = [c.id for c in review.rounds["plan_changes"]]
    assert all(f"<!-- {i} -->" in svg for i in ids)  # each change labelled on the map
    assert "Since round 1: disturbance added" not in svg  # no such change, no legend entry


# --- a format 1 file -------------------------------------------------------------------------
def as_format_1(path: Path) -> None:
    """The review file as format 1 wrote it: no plan tables, ``format_version`` 1."""
    with closing(sqlite3.connect(path)) as con:
        for spec in PLAN_TABLES:
            con.execute(f'DROP TABLE "{spec.name}"')  # its triggers go with it
            con.execute("DELETE FROM gpkg_geometry_columns WHERE table_name = ?", (spec.name,))
            con.execute("DELETE FROM gpkg_contents WHERE table_name = ?", (spec.name,))
        con.execute(f"UPDATE {FORMAT_TABLE} SET value = '1' WHERE key = 'format_version'")
        con.commit()


def test_a_format_1_file_is_read_and_its_comparison_says_it_has_no_plan(demo, tmp_path, capsys):
    site, second, reference = demo
    file, result, html = tmp_path / "old.gpkg", tmp_path / "r2.json", tmp_path / "r2.html"
    run([site, "--reference", reference, "--round", file], capsys)
    as_format_1(file)
    before = sha(file)
    assert read_round(file, 1)["round"]["round"] == 1  # read as it is
    assert sha(file) == before  # and not changed by reading
    status, out, err = run(
        [
            second,
            "--reference",
            reference,
            "--round",
            file,
            "--compare-to",
            "1",
            "--json",
            result,
            "--report",
            html,
        ],
        capsys,
    )
    assert status == 1, err
    compared = json.loads(result.read_text(encoding="utf-8"))["comparison"]
    said = "round 1 recorded no plan geometry (review file format 1): the plan changes cannot be drawn"
    assert compared["plan_changes"]["compared"] is False and compared["plan_changes"]["changes"] == []
    assert compared["plan_changes"]["note"].startswith(said)
    assert all(
        i["caused_by"] == [] and i["cause"].startswith(said) for k in ("resolved", "new") for i in compared[k]
    )
    assert f"plan changes since round 1: needs review: {said}" in out
    assert said in html.read_text(encoding="utf-8")
    # The round recorded in it made it format 2: round 2 has its plan, round 1 still none.
    with closing(sqlite3.connect(file)) as con:
        assert dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}"))["format_version"] == "2"
        assert [r[0] for r in con.execute(f"SELECT round FROM {PLANS_TABLE}")] == [2]
        assert con.execute(f"SELECT count(*) FROM {ROUNDS_TABLE}").fetchone()[0] == 2
    # And round 3 compared with round 2 measures the plan (none changed).
    status, out, err = run([second, "--reference", reference, "--round", file, "--compare-to", "2"], capsys)
    assert status == 1, err
    assert "plan changes since round 2: none" in out


# --- faults ------------------------------------------------------------------------------------
def plan_state(path):
    with closing(sqlite3.connect(path)) as con:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return (
            con.execute(f"SELECT count(*) FROM {ROUNDS_TABLE}").fetchone()[0],
            dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}"))["format_version"],
            sorted(tables),
            [
                con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
                for t in (PLANS_TABLE, *PLAN_LAYERS.values())
                if t in tables
            ],
            con.execute("PRAGMA integrity_check").fetchone()[0],
        )


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL: POSIX")
@pytest.mark.parametrize("stop, old", [("plan smp", False), ("plan", False), ("plan easement", True)])
def test_a_save_killed_while_writing_the_plan_leaves_the_previous_state(demo, tmp_path, capsys, stop, old):
    site, second, reference = demo
    file = tmp_path / "project.gpkg"
    run([site, "--reference", reference, "--round", file], capsys)
    if old:  # a format 1 file, killed while it was being made format 2: still format 1
        as_format_1(file)
    before = plan_state(file)
    child = start_save(stop, 120, second, "--reference", reference, "--round", file, "--compare-to", "1")
    os.kill(child.pid, signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert plan_state(file) == before
    assert before[1] == ("1" if old else "2")
    # The next save goes through as if nothing had happened.
    status, out, err = run([second, "--reference", reference, "--round", file, "--compare-to", "1"], capsys)
    assert status == 1, err
    assert "round 2 recorded" in out


def test_the_findings_geopackage_holds_the_plan_changes_styled_by_kind(demo, tmp_path, capsys):
    """``--findings`` with ``--compare-to``: the plan's changes as layers beside the findings,
    the JSON's ids, kinds and figures, in the area CRS, opening in their style; a review that
    compared nothing has no such layer."""
    import geopandas as gpd

    from analysis.io.vector import list_layers

    site, second, reference = demo
    file, first_gpkg = tmp_path / "project.gpkg", tmp_path / "round1.gpkg"
    result, gpkg = tmp_path / "round2.json", tmp_path / "round2.gpkg"
    run([site, "--reference", reference, "--round", file, "--findings", first_gpkg], capsys)
    assert not [name for name in list_layers(first_gpkg) if name.startswith("plan_changes")]
    status, _out, err = run(
        [second, "--reference", reference, "--round", file, "--compare-to", "1", "--json", result,
         "--findings", gpkg],
        capsys,
    )  # fmt: skip
    assert status == 1, err
    listed = json.loads(result.read_text(encoding="utf-8"))["comparison"]["plan_changes"]["changes"]
    names = [name for name in list_layers(gpkg) if name.startswith("plan_changes")]
    assert names, list_layers(gpkg)
    layers = [gpd.read_file(gpkg, layer=name) for name in names]
    rows = sorted((r for frame in layers for _, r in frame.iterrows()), key=lambda r: r["change"])
    assert [(r["change"], r["kind"], r["feature"]) for r in rows] == sorted(
        (c["id"], c["kind"], c["feature"]) for c in listed
    )
    moved = next(r for r in rows if r["kind"] == "smp_moved")
    assert moved["distance_ft"] == pytest.approx(40.0, abs=0.01) and moved["since_round"] == 1
    assert all(frame.crs.to_epsg() == 2260 and not frame.geometry.is_empty.any() for frame in layers)
    with closing(sqlite3.connect(gpkg)) as con:
        styles = dict(con.execute("SELECT f_table_name, styleQML FROM layer_styles WHERE useAsDefault"))
    for name in names:
        assert 'attr="kind"' in styles[name] and 'value="smp_moved"' in styles[name]
        assert 'fieldName="change"' in styles[name]
