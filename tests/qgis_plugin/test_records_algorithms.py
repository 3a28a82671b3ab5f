"""``swppp:inspections`` and ``swppp:nov`` run through Processing."""

import json

import pytest
from qgis.core import QgsProcessingException

from tests.conftest import TEST_DATA

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

RECORDS = TEST_DATA / "records"


def run(name, parameters):
    import processing

    return processing.run(f"swppp:{name}", parameters)


@pytest.mark.parametrize(
    "rain, extra, fail_count",
    [
        ("rain.csv", {"SITE": str(TEST_DATA / "demo_site.gpkg")}, 5),
        (
            "rain_ghcn.csv",
            {"STATION": "USC00309991", "RAIN_UNITS": 1, "FROM": "2027-04-01", "TO": "2027-11-15"},
            5,
        ),
        ("rain.csv", {"FROM": "2027-05-08", "TO": "2027-06-05"}, 3),
    ],
)
def test_inspections_algorithm(tmp_path, rain, extra, fail_count):
    out = tmp_path / "records.json"
    results = run(
        "inspections",
        {
            "LOG": str(RECORDS / "inspection_log.csv"),
            "RAIN": str(RECORDS / rain),
            "NOTICES": str(RECORDS / "notices.csv"),
            "TRAPS": str(RECORDS / "traps.csv"),
            "OUTPUT_JSON": str(out),
            **extra,
        },
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert results["FAIL_COUNT"] == fail_count == sum(f["status"] == "fail" for f in data["findings"])
    assert results["EXIT_STATUS"] == 1 and results["OUTPUT_JSON"] == str(out)


def test_inspections_bad_input_names_the_fix(tmp_path):
    out = tmp_path / "records.json"
    with pytest.raises(
        QgsProcessingException,
        match=r"units.*\(parameter: 'GHCN-Daily PRCP units' "
        r"\(RAIN_UNITS\)\)",
    ) as err:
        run(
            "inspections",
            {
                "LOG": str(RECORDS / "inspection_log.csv"),
                "RAIN": str(RECORDS / "rain_ghcn.csv"),
                "FROM": "2027-04-01",
                "OUTPUT_JSON": str(out),
            },
        )
    assert "--" not in str(err.value)  # a QGIS user never sees the command line's options
    assert not out.exists()


def test_inspections_error_names_the_algorithms_parameter_never_a_flag(tmp_path):
    out = tmp_path / "records.json"
    with pytest.raises(QgsProcessingException) as err:
        run(
            "inspections",
            {
                "LOG": str(RECORDS / "inspection_log.csv"),
                "RAIN": str(RECORDS / "rain_ghcn.csv"),
                "RAIN_UNITS": 1,
                "FROM": "2027-04-01",
                "OUTPUT_JSON": str(out),
            },
        )
    message = str(err.value)
    assert "several stations" in message and "choose one station of the file" in message
    assert "(STATION)" in message and "GHCN-Daily station" in message
    assert "--" not in message
    assert not out.exists()


def test_nov_writes_html_and_pdf(tmp_path):
    html, pdf = tmp_path / "notice.html", tmp_path / "notice.pdf"
    results = run(
        "nov", {"RECORD": str(RECORDS / "violation.toml"), "OUTPUT_HTML": str(html), "OUTPUT_PDF": str(pdf)}
    )
    assert results == {"OUTPUT_HTML": str(html), "OUTPUT_PDF": str(pdf)}
    assert "&lt;Attn: J. Example &amp; Partners&gt;" in html.read_text(encoding="utf-8")
    data = pdf.read_bytes()
    assert data.startswith(b"%PDF-") and data.rstrip().endswith(b"%%EOF")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notice.html", "notice.pdf"]


def test_nov_refuses_an_incomplete_record(tmp_path):
    record = tmp_path / "v.toml"
    record.write_text(
        (RECORDS / "violation.toml").read_text(encoding="utf-8").replace("[penalties]", "[other]"),
        encoding="utf-8",
    )
    with pytest.raises(QgsProcessingException, match=r"Enforcement C\(5\)"):
        run("nov", {"RECORD": str(record), "OUTPUT_HTML": str(tmp_path / "n.html")})
    assert not (tmp_path / "n.html").exists()


def test_nov_refuses_a_date_outside_the_profiles_range_as_the_cli_does(tmp_path, capsys):
    """The profile's [inputs] range of dates bounds ``issued_on`` (the CLI applied it; the
    algorithm did not)."""
    from analysis.cli.app import main

    record = tmp_path / "v.toml"
    record.write_text(
        (RECORDS / "violation.toml")
        .read_text(encoding="utf-8")
        .replace("issued_on = 2027-06-14", "issued_on = 2301-06-14"),
        encoding="utf-8",
    )
    assert main(["nov", str(record), "--output", str(tmp_path / "cli.html")]) == 2
    cli_error = capsys.readouterr().err
    assert "issued_on" in cli_error and "2301-06-14" in cli_error
    with pytest.raises(QgsProcessingException, match=r"issued_on(.|\n)*2301-06-14"):
        run("nov", {"RECORD": str(record), "OUTPUT_HTML": str(tmp_path / "n.html")})
    assert not (tmp_path / "n.html").exists() and not (tmp_path / "cli.html").exists()
