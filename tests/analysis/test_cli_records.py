"""``swppp inspections check``, ``swppp penalty``, ``swppp nov`` and ``review`` with records."""

import json

import pytest

from analysis.cli import main
from tests.conftest import TEST_DATA, shared_path

RECORDS = TEST_DATA / "records"
LOG, RAIN, GHCN = RECORDS / "inspection_log.csv", RECORDS / "rain.csv", RECORDS / "rain_ghcn.csv"
NOTICES, TRAPS = RECORDS / "notices.csv", RECORDS / "traps.csv"


def run(capsys, *args):
    status = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize(
    "rain_args, period, status, failed_rules",
    [
        (
            ["--rain", RAIN],
            ["--site", TEST_DATA / "demo_site.gpkg"],
            1,
            [
                "inspection_frequency",
                "inspection_frequency",
                "inspection_notice",
                "inspection_notice",
                "sediment_cleanout",
            ],
        ),
        (
            ["--rain", GHCN, "--station", "USC00309991", "--rain-units", "in"],
            ["--from", "2027-04-01", "--to", "2027-11-15"],
            1,
            [
                "inspection_frequency",
                "inspection_frequency",
                "inspection_notice",
                "inspection_notice",
                "sediment_cleanout",
            ],
        ),
        (
            ["--rain", RAIN],
            ["--from", "2027-05-08", "--to", "2027-06-05"],
            1,
            ["inspection_notice"] * 2 + ["sediment_cleanout"],
        ),
    ],
)
def test_inspections_check(tmp_path, capsys, rain_args, period, status, failed_rules):
    out_json = tmp_path / "records.json"
    code, out, _ = run(
        capsys,
        "inspections",
        "check",
        "--log",
        LOG,
        *rain_args,
        *period,
        "--notices",
        NOTICES,
        "--traps",
        TRAPS,
        "--json",
        out_json,
    )
    assert code == status
    result = json.loads(out_json.read_text(encoding="utf-8"))
    assert result["tool"]["name"] and result["profile"] == "kiryas_joel"
    assert sorted(f["rule"] for f in result["findings"] if f["status"] == "fail") == failed_rules
    assert all(":" in feature for f in result["findings"] for feature in f["features"])
    assert "FAIL" in out


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rain", GHCN, "--from", "2027-04-01"], "--rain-units"),
        (["--rain", GHCN, "--rain-units", "in", "--from", "2027-04-01"], "several stations"),
        (["--rain", RAIN], "construction period is not given"),
        (["--rain", RAIN, "--from", "1 April"], "--from '1 April' is not an ISO date"),
        (["--rain", RAIN, "--from", "2027-04-01", "--site", TEST_DATA / "demo_site.gpkg"], "not both"),
        (["--rain", RAIN, "--from", "2027-04-01", "--station", "X"], "GHCN-Daily files only"),
    ],
)
def test_inspections_refused_input_writes_nothing(tmp_path, capsys, args, message):
    out_json = tmp_path / "records.json"
    code, _, err = run(capsys, "inspections", "check", "--log", LOG, *args, "--json", out_json)
    assert code == 2 and message in err and "Traceback" not in err
    assert not out_json.exists()


def test_penalty_json_is_the_contract(capsys):
    code, out, _ = run(
        capsys,
        "penalty",
        "--history",
        RECORDS / "history.csv",
        "--person",
        "Forest Road Commons LLC",
        "--on",
        "2027-06-12",
        "--kind",
        "civil",
        "--json",
        "-",
    )
    assert code == 0
    assert json.loads(out) == {
        "person": "Forest Road Commons LLC",
        "on": "2027-06-12",
        "kind": "civil",
        "section": "Enforcement F",
        "offence_number": 3,
        "fine_min": 700.0,
        "fine_max": 1000.0,
        "imprisonment_max_days": 0,
        "counted": ["2023-05-01", "2025-09-10"],
    }


def test_penalty_continuing_prints_the_total(capsys):
    code, out, _ = run(
        capsys,
        "penalty",
        "--history",
        RECORDS / "history.csv",
        "--person",
        "J. Example",
        "--on",
        "2026-06-01",
        "--until",
        "2026-06-03",
        "--kind",
        "criminal",
    )
    assert code == 0
    # 2022-01-15 counts: three daily violations, each priced as the second offence the
    # conviction history gives (Enforcement E; issue 18): 3 x 350 to 3 x 700.
    assert "offence number 2" in out and "3 separate violations, total $1,050 to $2,100" in out
    assert "[Enforcement E]" in out and "Enforcement F" not in out


@pytest.mark.parametrize("option", ["--on", "--until"])
def test_penalty_blank_date_is_refused_naming_the_option(capsys, option):
    dates = {"--on": "2026-06-01", "--until": "2026-06-03", option: " "}
    code, _, err = run(
        capsys,
        "penalty",
        "--history",
        RECORDS / "history.csv",
        "--person",
        "J. Example",
        *(x for pair in dates.items() for x in pair),
        "--kind",
        "civil",
    )
    assert code == 2 and f"{option} ' ' is not an ISO date" in err and "Traceback" not in err


def test_nov_writes_html_and_refuses_pdf(tmp_path, capsys):
    out = tmp_path / "notice.html"
    assert run(capsys, "nov", RECORDS / "violation.toml", "--output", out)[0] == 0
    assert "Notice of violation NOV-2027-014" in out.read_text(encoding="utf-8")
    code, _, err = run(capsys, "nov", RECORDS / "violation.toml", "--output", tmp_path / "n.pdf")
    assert code == 2 and "swppp:nov" in err and not (tmp_path / "n.pdf").exists()


def test_nov_refuses_incomplete_record(tmp_path, capsys):
    record = tmp_path / "v.toml"
    text = (RECORDS / "violation.toml").read_text(encoding="utf-8")
    record.write_text(text.replace('nature = "', 'described = "'), encoding="utf-8")
    code, _, err = run(capsys, "nov", record, "--output", tmp_path / "n.html")
    assert code == 2 and "Enforcement C(3)" in err and "violation.nature" in err
    assert not (tmp_path / "n.html").exists()


def test_review_with_records_gains_their_findings(data_copy, tmp_path, capsys):
    site = data_copy("demo_site.gpkg")
    out_json, html, gpkg = tmp_path / "r.json", tmp_path / "r.html", tmp_path / "f.gpkg"
    code, _, _ = run(
        capsys,
        "review",
        site,
        "--inspections",
        LOG,
        "--rain",
        RAIN,
        "--notices",
        NOTICES,
        "--json",
        out_json,
        "--report",
        html,
        "--findings",
        gpkg,
    )
    assert code == 1
    result = json.loads(out_json.read_text(encoding="utf-8"))
    rules = [f["rule"] for f in result["findings"]]
    assert rules.count("inspection_frequency") == 2 and "inspection_notice" in rules
    assert result["records"]["period"] == {
        "from": "2027-04-01",
        "to": "2027-11-15",
        "to_from": "final stabilisation",
    }
    from analysis.io.vector import read_layer

    layer = read_layer(gpkg, "findings").frame
    assert (layer["rule"] == "inspection_frequency").sum() == 2  # without a geometry, still there
    report = html.read_text(encoding="utf-8")
    assert "Construction-phase records" in report and "2027-06-08 to 2027-06-09" in report
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_result", shared_path("tools/check_result.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.check(result, set()) == []


def test_review_needs_both_log_and_rain(data_copy, tmp_path, capsys):
    code, _, err = run(
        capsys, "review", data_copy("demo_site.gpkg"), "--inspections", LOG, "--json", tmp_path / "r.json"
    )
    assert code == 2 and "--rain" in err and not (tmp_path / "r.json").exists()
