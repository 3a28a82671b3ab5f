"""Review rounds (issue 35, items 1-3): the review file, decisions, and carrying them.

Real files and real subprocesses: ``swppp review --round`` is run as a user runs it, and the
review file is read back with SQLite."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.rounds.contract import DECISIONS_TABLE, FINDINGS_TABLE, FORMAT_TABLE, ROUNDS_TABLE
from analysis.rounds.decisions import Decision
from analysis.rounds.record import add_decisions, read_round

ROOT = Path(__file__).resolve().parents[2]
CHECK_RESULT = ROOT.parent.parent / "shared" / "tools" / "check_result.py"

# The demo's findings this test speaks of (tests/golden/review_demo_site.json's order).
EASEMENT_FAIL = ("easement_coverage", ["smp:BR-2"])
OUTSIDE_SITE = 15  # disturbance_outside_site, warn


def swppp(*args, cwd=ROOT):
    """``swppp`` in a subprocess (this checkout's package), as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "analysis.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
    )


def run(args, capsys):
    status = main(["review", *map(str, args)])
    out, err = capsys.readouterr()
    return status, out, err


def rounds_in(path) -> int:
    with closing(sqlite3.connect(path)) as con:
        return con.execute(f"SELECT count(*) FROM {ROUNDS_TABLE}").fetchone()[0]


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


DECISIONS = """reviewer = "A. Reviewer"

[[decision]]
rule = "easement_coverage"
features = ["smp:BR-2"]
decision = "override"
reason = "Easement for BR-2 recorded 2026-11-30, liber 1234 page 56"

[[decision]]
finding = 15
decision = "accept"
"""


@pytest.fixture
def demo(data_copy):
    return data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")


def test_a_round_is_recorded_with_its_decisions_and_the_json_shows_them(demo, tmp_path):
    site, reference = demo
    file, result, html = tmp_path / "project.gpkg", tmp_path / "r1.json", tmp_path / "r1.html"
    decisions = write(tmp_path / "d.toml", DECISIONS)
    done = swppp(
        "review", site, "--reference", reference, "--round", file, "--decisions", decisions,
        "--json", result, "--report", html,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr  # a fail stands (swppp_contents), exit status as documented
    assert "Traceback" not in done.stderr
    assert "round 1 recorded in" in done.stdout
    assert "override by A. Reviewer: Easement for BR-2 recorded" in done.stdout
    data = json.loads(result.read_text(encoding="utf-8"))
    head = data["round"]
    assert head["number"] == 1 and head["previous"] is None and head["file"] == "project.gpkg"
    assert head["plan_sha256"] == sha(site)  # one file: what sha256sum prints
    assert head["decisions"] == {"accept": 1, "override": 1, "resolved": 0, "undecided": 29}
    by_key = {(f["rule"], tuple(f["features"])): f for f in data["findings"]}
    overridden = by_key[(EASEMENT_FAIL[0], tuple(EASEMENT_FAIL[1]))]
    assert overridden["status"] == "fail"  # never hidden: still there, still fail
    decision = overridden["round"]["decision"]
    assert decision["decision"] == "override" and decision["reviewer"] == "A. Reviewer"
    assert decision["reason"].startswith("Easement for BR-2") and decision["carried_from"] is None
    assert decision["source"] == "d.toml [[decision]] 1"
    assert data["findings"][OUTSIDE_SITE - 1]["round"]["decision"]["decision"] == "accept"
    assert all(f["round"]["match"] is None for f in data["findings"])  # the first round
    if CHECK_RESULT.is_file():
        checked = subprocess.run(
            [sys.executable, str(CHECK_RESULT), str(result)], capture_output=True, text=True
        )
        assert checked.returncode == 0, checked.stdout
    # The file holds the round, its findings as the contract's JSON, and the decisions.
    with closing(sqlite3.connect(file)) as con:
        assert dict(con.execute(f"SELECT key, value FROM {FORMAT_TABLE}"))["format_version"] == "2"
        row = con.execute(f"SELECT plan_sha256, profile, tool_version, result FROM {ROUNDS_TABLE}").fetchone()
        assert row[0] == sha(site) and row[1] == data["profile"] and row[2] == data["tool"]["version"]
        assert "round" not in json.loads(row[3])  # the review as written without a round
        held = [json.loads(t) for (t,) in con.execute(f"SELECT json FROM {FINDINGS_TABLE} ORDER BY finding")]
        assert held == [{k: v for k, v in f.items() if k != "round"} for f in data["findings"]]
        assert con.execute(f"SELECT count(*) FROM {DECISIONS_TABLE}").fetchone()[0] == 2
        kinds = dict(con.execute("SELECT table_name, data_type FROM gpkg_contents"))
        assert kinds[ROUNDS_TABLE] == kinds[FINDINGS_TABLE] == kinds[DECISIONS_TABLE] == "attributes"
    # The decision page: the override listed with its reason and who; it no longer blocks.
    page = html.read_text(encoding="utf-8")
    assert "Overridden by the reviewer" in page
    assert "Easement for BR-2 recorded 2026-11-30, liber 1234 page 56" in page
    assert "Changes required: 1 finding(s) must change before approval" in page  # 2 without it


def test_an_overridden_fail_no_longer_blocks_approvable(data_copy, tmp_path, capsys):
    """The demo's two fails overridden: the decision page says Approvable (once the warnings
    and needs-review findings are settled), and lists both as overridden."""
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    decisions = write(
        tmp_path / "d.csv",
        "finding,rule,features,decision,reason,reviewer\n"
        ",easement_coverage,smp:BR-2,override,Easement recorded since,A. Reviewer\n"
        "27,,,override,Items confirmed on the drawings,A. Reviewer\n",
    )
    html = tmp_path / "r.html"
    status, out, err = run(
        [
            site,
            "--reference",
            reference,
            "--round",
            tmp_path / "p.gpkg",
            "--decisions",
            decisions,
            "--report",
            html,
        ],
        capsys,
    )
    assert status == 1, err  # the findings are still fail: the exit status says so
    page = html.read_text(encoding="utf-8")
    assert "Changes required" not in page
    assert "Approvable once the reviewer has settled" in page
    assert "2 finding(s) overridden by the reviewer" in page
    assert "Items confirmed on the drawings" in page


def test_without_round_the_json_has_no_round_fields(demo, tmp_path, capsys):
    site, reference = demo
    result = tmp_path / "r.json"
    run([site, "--reference", reference, "--json", result], capsys)
    data = json.loads(result.read_text(encoding="utf-8"))
    assert "round" not in data and not any("round" in f for f in data["findings"])


def test_the_next_round_carries_decisions_and_says_how_each_was_matched(demo, tmp_path, capsys):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    decisions = write(tmp_path / "d.toml", DECISIONS)
    run([site, "--reference", reference, "--round", file, "--decisions", decisions], capsys)
    result = tmp_path / "r2.json"
    status, out, _ = run([site, "--reference", reference, "--round", file, "--json", result], capsys)
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["round"]["number"] == 2 and data["round"]["previous"] == 1
    assert all(f["round"]["match"]["by"] == "rule_and_features" for f in data["findings"])
    carried = [f for f in data["findings"] if f["round"]["decision"]]
    assert len(carried) == 2
    assert all(f["round"]["decision"]["carried_from"] == 1 for f in carried)
    assert all(f["round"]["decision"]["source"] == "carried from round 1" for f in carried)
    assert "override by A. Reviewer, carried from round 1" in out
    assert "matched to round 1: 31 by rule and features" in out
    assert rounds_in(file) == 2


def _moved_plan(site: Path) -> None:
    """The next submittal: SMP BR-2 renamed BR-9 and drawn 6 ft larger all round (its id
    changed, its place did not; the uncovered area grows)."""
    ogr = pytest.importorskip("osgeo.ogr", reason="the plan is edited with GDAL's bindings")

    ds = ogr.Open(str(site), 1)
    layer = ds.GetLayerByName("smp")
    for feature in layer:
        if feature.GetField("smp_id") == "BR-2":
            feature.SetField("smp_id", "BR-9")
            feature.SetGeometry(feature.GetGeometryRef().Buffer(6.0))
            layer.SetFeature(feature)
    ds = None


def test_a_finding_whose_ids_changed_is_matched_by_place_and_its_figure_change_flagged(
    demo, tmp_path, capsys
):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    run(
        [
            site,
            "--reference",
            reference,
            "--round",
            file,
            "--decisions",
            write(tmp_path / "d.toml", DECISIONS),
        ],
        capsys,
    )
    _moved_plan(site)
    result = tmp_path / "r2.json"
    _, out, _ = run([site, "--reference", reference, "--round", file, "--json", result], capsys)
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["round"]["plan_sha256"] == sha(site)
    renamed = next(f for f in data["findings"] if f["rule"] == "easement_coverage" and f["status"] == "fail")
    assert renamed["features"] == ["smp:BR-9"]
    match = renamed["round"]["match"]
    assert match["by"] == "rule_and_place" and match["round"] == 1 and match["number"] == 10
    assert match["figure_changed"] is True and match["figure_after"] > match["figure_before"]
    assert renamed["round"]["decision"]["decision"] == "override"  # carried, flagged
    assert renamed["round"]["decision"]["carried_from"] == 1
    assert "by rule and place" in out and "easement_coverage figure changed" in out


def test_decisions_are_appended_and_the_latest_wins(demo, tmp_path, capsys):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    run(
        [
            site,
            "--reference",
            reference,
            "--round",
            file,
            "--decisions",
            write(tmp_path / "d.toml", DECISIONS),
        ],
        capsys,
    )
    add_decisions(file, 1, {10: Decision("resolved", None, "B. Second", "test")})
    held = read_round(file, 1)
    assert held["findings"][9]["decision"]["decision"] == "resolved"
    assert held["findings"][9]["decision"]["reviewer"] == "B. Second"
    with closing(sqlite3.connect(file)) as con:
        assert con.execute(f"SELECT count(*) FROM {DECISIONS_TABLE} WHERE finding = 10").fetchone()[0] == 2
        # A round is never rewritten: the file refuses it.
        for sql in (
            f"UPDATE {ROUNDS_TABLE} SET plan_sha256 = 'x'",
            f"DELETE FROM {FINDINGS_TABLE}",
            f"UPDATE {DECISIONS_TABLE} SET reason = 'changed'",
        ):
            with pytest.raises(sqlite3.DatabaseError, match="never rewritten"):
                con.execute(sql)


def test_a_withdrawn_decision_leaves_the_finding_undecided_and_is_not_carried(demo, tmp_path, capsys):
    """``withdraw`` takes a decision back: the finding is undecided in the JSON and the counts,
    its earlier rows kept; the next round carries nothing for it, and a decisions file may
    withdraw too."""
    site, reference = demo
    file = tmp_path / "p.gpkg"
    decisions = write(tmp_path / "d.toml", DECISIONS)
    run([site, "--reference", reference, "--round", file, "--decisions", decisions], capsys)
    held = read_round(file, 1)["findings"]
    overridden = next(f["number"] for f in held if f["decision"] and f["decision"]["decision"] == "override")
    add_decisions(file, 1, {overridden: Decision("withdraw", None, "B. Second", "test")})
    held = read_round(file, 1)["findings"]
    assert held[overridden - 1]["decision"] is None
    assert held[OUTSIDE_SITE - 1]["decision"]["decision"] == "accept"  # the others kept
    with closing(sqlite3.connect(file)) as con:
        rows = con.execute(
            f"SELECT decision FROM {DECISIONS_TABLE} WHERE round = 1 AND finding = ? ORDER BY id",
            (overridden,),
        ).fetchall()
    assert rows == [("override",), ("withdraw",)]  # the history kept
    out_json = tmp_path / "r2.json"
    status, out, err = run([site, "--reference", reference, "--round", file, "--json", out_json], capsys)
    assert status in (0, 1), err
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert result["round"]["decisions"]["override"] == 0 and result["round"]["decisions"]["accept"] == 1
    assert result["findings"][overridden - 1]["round"]["decision"] is None
    # A decisions file withdraws the carried accept in round 2.
    withdraw = write(
        tmp_path / "w.toml",
        f'reviewer = "C"\n[[decision]]\nfinding = {OUTSIDE_SITE}\ndecision = "withdraw"\n',
    )
    run([site, "--reference", reference, "--round", file, "--decisions", withdraw], capsys)
    assert all(f["decision"] is None for f in read_round(file, 3)["findings"])


@pytest.mark.parametrize(
    "text, named",
    [
        (
            '[[decision]]\nfinding = 10\ndecision = "override"\nreviewer = "A"\n',
            "[[decision]] 1, key 'reason': an override needs a reason",
        ),
        (
            'reviewer = "A"\n[[decision]]\nfinding = 1\ndecision = "accept"\n'
            '[[decision]]\nrule = "easement_coverage"\nfeatures = ["smp:NOPE"]\ndecision = "accept"\n',
            "[[decision]] 2, key 'features': no finding of this round is easement_coverage [smp:NOPE]",
        ),
        (
            'reviewer = "A"\n[[decision]]\nfinding = 99\ndecision = "accept"\n',
            "finding 99 is not in this round",
        ),
        ('reviewer = "A"\n[[decision]]\nfinding = 1\ndecision = "approve"\n', "decision is 'approve'"),
        ('[[decision]]\nfinding = 1\ndecision = "accept"\n', "no reviewer made this decision"),
        (
            'reviewer = "A"\n[[decision]]\nrule = "hydrology_pre_post"\nfeatures = ["drainage_area:DA-1"]\n'
            'decision = "accept"\n',
            "names 2 findings of this round",
        ),
        ('reviewer = "A"\n[[decision]]\nrule = "no_such_rule"\ndecision = "accept"\n', "no finding of rule"),
    ],
)
def test_bad_decisions_are_refused_by_row_and_nothing_is_recorded(demo, tmp_path, capsys, text, named):
    site, reference = demo
    file, result = tmp_path / "p.gpkg", tmp_path / "r.json"
    run([site, "--reference", reference, "--round", file], capsys)
    before = sha(file)
    status, out, err = run(
        [site, "--reference", reference, "--round", file, "--decisions", write(tmp_path / "d.toml", text),
         "--json", result],
        capsys,
    )  # fmt: skip
    assert status == 2, err
    assert named in err and "d.toml" in err and "Fix:" in err and "Traceback" not in err
    assert not result.exists() and sha(file) == before and rounds_in(file) == 1


def test_a_csv_decision_is_refused_naming_its_line(demo, tmp_path):
    site, reference = demo
    decisions = write(tmp_path / "d.csv", "finding,decision,reason,reviewer\n1,accept,,A\n\n4,override,,A\n")
    done = swppp(
        "review", site, "--reference", reference, "--round", tmp_path / "p.gpkg", "--decisions", decisions
    )
    assert done.returncode == 2
    assert "d.csv, row 4, column 'reason': an override needs a reason" in done.stderr
    assert not (tmp_path / "p.gpkg").exists() or rounds_in(tmp_path / "p.gpkg") == 0


@pytest.mark.parametrize("option", ["--decisions", "--reviewer"])
def test_decisions_without_a_round_are_refused(demo, tmp_path, capsys, option):
    site, _ = demo
    status, _, err = run([site, option, write(tmp_path / "d.toml", DECISIONS)], capsys)
    assert status == 2 and f"{option} needs --round" in err


def test_a_file_that_is_not_a_review_file_is_refused_and_left_as_it_was(demo, tmp_path):
    site, reference = demo
    other = tmp_path / "plan_copy.gpkg"
    other.write_bytes(site.read_bytes())
    text = write(tmp_path / "notes.gpkg", "not a database\n")
    for target, said in (
        (other, "a GeoPackage, but not a SWPPP review file"),
        (text, "not a readable GeoPackage"),
        (tmp_path / "round.sqlite", "--round must name a .gpkg file"),
    ):
        before = sha(target) if target.exists() else None
        done = swppp(
            "review", site, "--reference", reference, "--round", target, "--json", tmp_path / "r.json"
        )
        assert done.returncode == 2, done.stderr
        assert said in done.stderr and "Traceback" not in done.stderr
        assert (sha(target) if target.exists() else None) == before
        assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize("version, said", [("3", "written by a newer one"), ("0", "written by an older one")])
def test_a_review_file_of_another_format_version_is_refused_by_name(demo, tmp_path, capsys, version, said):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    run([site, "--reference", reference, "--round", file], capsys)
    with closing(sqlite3.connect(file)) as con:
        con.execute(f"UPDATE {FORMAT_TABLE} SET value = ? WHERE key = 'format_version'", (version,))
        con.commit()
    before = sha(file)
    status, _, err = run([site, "--reference", reference, "--round", file], capsys)
    assert status == 2 and f"review file format version '{version}'" in err and said in err
    assert sha(file) == before


def test_an_output_that_cannot_be_written_records_no_round(demo, tmp_path, capsys):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    run([site, "--reference", reference, "--round", file], capsys)
    (tmp_path / "a_folder.json").mkdir()  # a JSON output that cannot land: a folder has its name
    status, _, err = run(
        [site, "--reference", reference, "--round", file, "--json", tmp_path / "a_folder.json"], capsys
    )
    assert status == 2, err
    assert "a_folder.json" in err
    assert rounds_in(file) == 1


def test_the_review_file_is_not_an_output_of_the_same_run(demo, tmp_path, capsys):
    site, reference = demo
    status, _, err = run([site, "--round", tmp_path / "p.gpkg", "--findings", tmp_path / "p.gpkg"], capsys)
    assert status == 2 and "--round" in err


def test_untrusted_text_is_escaped_where_it_is_shown(demo, tmp_path):
    site, reference = demo
    hostile = "x <script>alert(1)</script> \\u001b[2J \\u202e end"
    decisions = write(
        tmp_path / "d.toml",
        f'[[decision]]\nfinding = 10\ndecision = "override"\nreason = "{hostile}"\nreviewer = "<b>Eve</b>"\n',
    )
    html = tmp_path / "r.html"
    done = swppp("review", site, "--reference", reference, "--round", tmp_path / "p.gpkg", "--decisions",
                 decisions, "--report", html)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "\x1b" not in done.stdout and "\\x1b[2J" in done.stdout and "\\u202e" in done.stdout
    page = html.read_text(encoding="utf-8")
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>Eve</b>" not in page and "&lt;b&gt;Eve&lt;/b&gt;" in page
    assert "\x1b" not in page and "\u202e" not in page


def test_compare_to_says_what_was_resolved_still_open_new_and_changed(demo, tmp_path, capsys):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    run([site, "--reference", reference, "--round", file], capsys)
    _moved_plan(site)  # BR-2 renamed and larger
    ogr = pytest.importorskip("osgeo.ogr", reason="the plan is edited with GDAL's bindings")

    ds = ogr.Open(str(site), 1)
    ds.GetLayerByName("disturbance").DeleteFeature(5)  # D-5, beyond the site, taken out
    ds = None
    result, html = tmp_path / "r2.json", tmp_path / "r2.html"
    status, out, err = run(
        [
            site,
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
    assert compared["round"] == 1

    def named(key):
        return {(i["rule"], tuple(i["features"])) for i in compared[key]}

    assert ("disturbance_outside_site", ("disturbance:5",)) in named("resolved")
    assert ("wetlands", ("wetlands:GO-12", "disturbance:5")) in named("resolved")
    gone = next(i for i in compared["resolved"] if i["rule"] == "disturbance_outside_site")
    assert gone["before"]["status"] == "warn" and gone["after"] is None and gone["matched_by"] is None
    still = next(i for i in compared["still_open"] if i["features"] == ["smp:BR-9"])
    assert still["matched_by"] == "rule_and_place"
    assert still["before"]["figure"] < still["after"]["figure"]
    assert ("easement_coverage", ("smp:BR-9",)) in named("changed")
    assert compared["new"] == []
    assert "compared with round 1: 2 resolved" in out
    assert "resolved: disturbance_outside_site [disturbance:5]: round 1 #15 warn" in out
    page = html.read_text(encoding="utf-8")
    assert "Changes since round 1" in page and "Resolved since round 1" in page


@pytest.mark.parametrize("number", ["1", "3"])
def test_compare_to_a_round_not_recorded_before_is_refused(demo, tmp_path, capsys, number):
    site, reference = demo
    file = tmp_path / "p.gpkg"
    if number == "3":
        run([site, "--reference", reference, "--round", file], capsys)
    status, _, err = run([site, "--reference", reference, "--round", file, "--compare-to", number], capsys)
    assert status == 2 and f"there is no round {number} to compare with" in err
    assert "(command line: --compare-to N)" in err
    assert rounds_in(file) == 1 if number == "3" else not file.exists()
