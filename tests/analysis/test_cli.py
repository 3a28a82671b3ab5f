"""``swppp review``: the contract's options, exit statuses, outputs written all or none."""

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.findings import MAP_RULES
from analysis.io.vector import read_layer
from tests.analysis.conftest import square
from tests.conftest import shared_path


def run(args, capsys):
    status = main(["review", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def test_demo_review_writes_json_report_and_findings(data_copy, tmp_path, capsys):
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    out_json, html, gpkg = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "f.gpkg"
    status, out, _ = run(
        [site, "--reference", reference, "--json", out_json, "--report", html, "--findings", gpkg], capsys
    )
    assert status == 1  # BR-2 fails easement_coverage; C-001 (1" = 200') site_map_scale
    assert "Forest Road Commons" in out and "acres disturbed" in out
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert {f["rule"] for f in result["findings"]} >= set(MAP_RULES)
    assert result["site"]["area_crs"] == "EPSG:2260"
    assert result["conditions"]["C"]["applies"] is True
    findings = read_layer(gpkg, "findings")
    assert len(findings.frame) == len(result["findings"])
    failed = findings.frame[findings.frame["status"] == "fail"]
    [br2] = failed[failed["rule"] == "easement_coverage"].geometry  # the part outside, drawn
    assert br2.area * (1200 / 3937 / 0.3048) ** 2 == pytest.approx(
        result["measurements"]["uncovered_smp_sq_ft"]["BR-2"], rel=1e-9
    )
    assert findings.crs.to_epsg() == 2260
    with closing(sqlite3.connect(gpkg)) as con:
        styles = con.execute("SELECT f_table_name, useAsDefault, styleQML FROM layer_styles").fetchall()
    # The site's layers beside the findings, each with its default style (issue 7).
    assert [(name, default) for name, default, _ in styles] == [
        ("findings", 1),
        ("disturbance", 1),
        ("smp", 1),
        ("easement", 1),
    ]
    assert 'attr="status"' in styles[0][2] and 'attr="phase"' in styles[1][2]
    assert list(read_layer(gpkg, "disturbance").frame["phase"]) == ["1", "1", "2", "2", "3"]
    assert read_layer(gpkg, "easement").crs.to_epsg() == 2260
    assert "<table>" in html.read_text(encoding="utf-8")


def test_point_findings_get_their_own_layer(data_copy, tmp_path, capsys):
    """A layer holds one geometry type: point findings (point SMPs) go to findings_points,
    numbered as in the review, and the findings layer still has a row for every finding."""
    out_json, gpkg = tmp_path / "r.json", tmp_path / "f.gpkg"
    run([data_copy("variants/smp_points.gpkg"), "--json", out_json, "--findings", gpkg], capsys)
    result = json.loads(out_json.read_text(encoding="utf-8"))["findings"]
    findings = read_layer(gpkg, "findings").frame
    points = read_layer(gpkg, "findings_points").frame
    assert list(findings["finding"]) == list(range(1, len(result) + 1))
    assert len(points) > 0 and set(points.geometry.geom_type) == {"Point"}
    for _, row in points.iterrows():  # the same finding, by its number
        assert result[row["finding"] - 1]["rule"] == row["rule"]
        assert result[row["finding"] - 1]["message"] == row["message"]
        assert findings.geometry.iloc[row["finding"] - 1] is None
    assert set(findings.geometry.dropna().geom_type) <= {"MultiPolygon"}
    with closing(sqlite3.connect(gpkg)) as con:
        styled = {name for (name,) in con.execute("SELECT f_table_name FROM layer_styles")}
    assert {"findings", "findings_points", "smp"} <= styled


def test_demo_result_keeps_the_contract(data_copy, tmp_path, capsys):
    checker_path = shared_path("tools/check_result.py")
    spec = importlib.util.spec_from_file_location("check_result", checker_path)
    checker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(checker)
    out_json = tmp_path / "r.json"
    run([data_copy("demo_site.gpkg"), "--json", out_json, "--quiet"], capsys)
    implemented = {
        "applicability",
        "condition_a",
        "condition_b",
        "condition_c",
        "disturbance_outside_site",
        "postconstruction_controls",
        "easement_coverage",
        "site_map_scale",
        "wetlands",
    }
    assert checker.check(json.loads(out_json.read_text()), implemented) == []


def test_json_to_stdout_keeps_stdout_pure_json(data_copy, capsys):
    status, out, err = run([data_copy("demo_site.gpkg"), "--json", "-"], capsys)
    assert status == 1  # the demo's BR-2 fails easement_coverage
    assert json.loads(out)["tool"]["name"] == "swppp-review"
    assert "acres disturbed" in err


@pytest.mark.parametrize(
    "variant, named",
    [
        ("no_crs.gpkg", "layer 'disturbance'"),
        ("missing_layer.gpkg", "'disturbance'"),
        ("missing_field.gpkg", "field 'land_use'"),
        ("empty_disturbance.gpkg", "layer 'disturbance'"),
    ],
)
def test_bad_input_exits_2_names_the_fault_and_writes_nothing(data_copy, tmp_path, capsys, variant, named):
    outputs = [tmp_path / "out" / "r.json", tmp_path / "out" / "r.html", tmp_path / "out" / "f.gpkg"]
    status, out, err = run(
        [
            data_copy(f"variants/{variant}"),
            "--json",
            outputs[0],
            "--report",
            outputs[1],
            "--findings",
            outputs[2],
        ],
        capsys,
    )
    assert status == 2
    assert variant in err and named in err
    assert "Traceback" not in err
    assert not any(p.exists() for p in outputs)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_report_escapes_text_from_the_site_plan(make_site, tmp_path, capsys):
    site = make_site(
        [square(2.0)], filename="evil.gpkg", name="<script>alert(1)</script>", applicant="A & B <b>"
    )
    html = tmp_path / "r.html"
    run([site, "--report", html, "--quiet"], capsys)
    text = html.read_text(encoding="utf-8")
    assert "<script" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text and "A &amp; B &lt;b&gt;" in text


def test_wrong_report_suffix_is_refused_before_any_work(data_copy, tmp_path, capsys):
    status, _, err = run([data_copy("demo_site.gpkg"), "--report", tmp_path / "r.pdf"], capsys)
    assert status == 2 and "--report must name a .html file" in err


def test_unknown_profile_exits_2(data_copy, capsys):
    status, _, err = run([data_copy("demo_site.gpkg"), "--profile", "atlantis"], capsys)
    assert status == 2 and "kiryas_joel" in err


def test_console_script_runs_as_a_user_runs_it(data_copy, tmp_path):
    """The installed entry point, in a subprocess: exit status and no traceback."""
    swppp = Path(sys.executable).with_name("swppp")
    if not swppp.exists():
        pytest.skip("the swppp entry point is not installed in this environment")
    reviewed = subprocess.run(
        [swppp, "review", data_copy("demo_site.gpkg"), "--quiet"], capture_output=True, text=True
    )
    bad = subprocess.run([swppp, "review", data_copy("variants/no_crs.gpkg")], capture_output=True, text=True)
    assert reviewed.returncode == 1, reviewed.stderr  # ran; the demo's BR-2 fails
    assert reviewed.stderr == ""
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.strip().splitlines()[-1].startswith("swppp: error:")


def test_unwritable_output_exits_2_and_writes_none(data_copy, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where a folder is needed\n")
    report = tmp_path / "r.html"
    status, _, err = run(
        [data_copy("demo_site.gpkg"), "--report", report, "--json", blocker / "r.json"], capsys
    )
    assert status == 2 and "could not write" in err and "Traceback" not in err
    assert not report.exists()


def test_outputs_get_ordinary_file_permissions(data_copy, tmp_path, capsys):
    result = tmp_path / "r.json"
    run([data_copy("demo_site.gpkg"), "--json", result, "--quiet"], capsys)
    umask = os.umask(0)
    os.umask(umask)
    assert result.stat().st_mode & 0o777 == 0o666 & ~umask


def test_a_reference_missing_a_layer_serves_the_checks_it_can(data_copy, tmp_path, capsys):
    """Issue 34, item 4: a store without one layer is not refused whole: the checks that read
    the missing layer say needs_review, naming it and the import that adds it; the others run."""
    reference = data_copy("variants/reference_missing_layer.gpkg")
    status, _, err = run(
        [data_copy("demo_site.gpkg"), "--reference", reference, "--json", tmp_path / "r.json"], capsys
    )
    assert status in (0, 1) and "Traceback" not in err
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    # Condition A applies on the layers present (the demo's listed receiving water): a missing
    # layer could only add evidence, so it applies, saying what was not read and what adds it
    a = next(f for f in result["findings"] if f["rule"] == "condition_a")
    assert a["status"] == "info" and a["message"].startswith("Condition A applies: ")
    assert "decided on the layers the reference has" in a["message"]
    assert "no 'tmdl_watersheds' layer" in a["message"]
    assert f"swppp reference import tmdl_watersheds SOURCE --reference {reference}" in a["message"]
    assert result["conditions"]["A"]["applies"] is True
    assert result["conditions"]["A"].get("decided", True) is True
    assert {f["status"] for f in result["findings"] if f["rule"] == "wetlands"} == {"warn"}


def test_a_reference_lacking_what_would_apply_condition_a_leaves_it_not_decided(data_copy, tmp_path, capsys):
    """Issue 34, item 4: where Condition A does not apply on the layers present, a layer
    missing could still apply it: not decided, naming each missing layer and its import."""
    store = tmp_path / "ref.gpkg"
    for layer in ("catchments", "wetlands"):
        source = f"{data_copy('demo_reference.gpkg')}|layername={layer}"
        command = ["reference", "import", layer, source, "--reference", str(store)]
        assert main([*command, "--source-date", "2026-01-01", "--quiet"]) == 0
    status, _, err = run(
        [data_copy("demo_site.gpkg"), "--reference", store, "--json", tmp_path / "r.json"], capsys
    )
    assert status in (0, 1) and "Traceback" not in err
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    [a] = [f for f in result["findings"] if f["rule"] == "condition_a"]
    assert a["status"] == "needs_review" and a["message"].startswith("Condition A not decided: ")
    for layer in ("impaired_waters", "tmdl_watersheds"):
        assert f"swppp reference import {layer} SOURCE --reference {store}" in a["message"]
    assert result["conditions"]["A"]["decided"] is False


def test_reference_status_says_which_checks_a_store_serves(data_copy, tmp_path, capsys):
    """Issue 34, item 4: `reference status` names, for each check that reads reference layers,
    whether the store holds them all, and which it lacks."""
    store = tmp_path / "ref.gpkg"
    assert (
        main(
            [
                "reference",
                "import",
                "wetlands",
                f"{data_copy('demo_reference.gpkg')}|layername=wetlands",
                "--reference",
                str(store),
                "--source-date",
                "2026-01-01",
                "--quiet",
            ]
        )
        == 0
    )
    out = tmp_path / "status.json"
    assert main(["reference", "status", "--reference", str(store), "--json", str(out)]) == 0
    checks = {c["check"]: c for c in json.loads(out.read_text(encoding="utf-8"))["checks"]}
    assert checks["wetlands"]["serves"] and not checks["condition_a"]["serves"]
    assert set(checks["condition_a"]["lacks"]) == {"impaired_waters", "tmdl_watersheds", "catchments"}
    assert "condition_a      no: lacks" in capsys.readouterr().out


def test_needs_review_findings_are_printed_and_counted(data_copy, capsys):
    """Issue 34, item 11: what the tool could not decide is on the console, where the decision
    is made, beside the failures; the illustrative design rainfall is named with the way out."""
    status, out, _ = run(
        [data_copy("demo_site.gpkg"), "--reference", data_copy("demo_reference.gpkg")], capsys
    )
    assert status == 1
    lines = out.splitlines()
    review = [line for line in lines if line.startswith("  NEEDS REVIEW ")]
    assert any(
        "hydrology_pre_post" in line
        and "illustrative" in line
        and "NOAA Atlas 14" in line
        and "illustrative_rainfall = false" in line
        for line in review
    )
    # fail first, then needs review, then warn
    kinds = [
        line.split()[0]
        for line in lines[1:]
        if line.startswith("  ") and line.split()[0] in ("FAIL", "NEEDS", "WARN")
    ]
    assert kinds == sorted(kinds, key=["FAIL", "NEEDS", "WARN"].index) and "NEEDS" in kinds
    count = next(line for line in lines if line.startswith("  findings: "))
    assert f"{len(review)} needs_review" in count
    assert f"  {len(review)} finding(s) need review: the tool could not decide them" in out
