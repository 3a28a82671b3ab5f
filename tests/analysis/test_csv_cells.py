"""Every CSV the project writes guards a cell a spreadsheet would run as a formula (a leading
``'``, OWASP's advice), numbers left as they are; a CSV it reads back gives the text it wrote."""

from __future__ import annotations

import csv
import io

import geopandas as gpd
import pytest

from analysis.cli.app import main
from analysis.io.csv_cells import csv_cell, csv_text, read_cell
from analysis.siteplan.schedule import read_schedule
from tests.analysis.conftest import X0, square
from tests.analysis.test_reference_stream import watersheds_file
from tests.analysis.test_screen import DEMO_REFERENCE, random_sites
from tests.conftest import rename_text

LINK = '=HYPERLINK("http://x","click")'
HOSTILE = (LINK, "@SUM(A1)", "+1+cmd|' /C calc'!A0", "-2+3", "\t=1+1", "\r=1+1")
NUMBERS = ("-12", "-0.5", "+3", "-1e-3", "12")


def rows_of(path):
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


@pytest.mark.parametrize("text", HOSTILE + ("'=1+1", "''", "'", "'x", "=", "-", "@"))
def test_a_cell_a_spreadsheet_would_run_is_guarded_and_reads_back_as_written(text):
    written = csv_cell(text)
    assert written.startswith("'") and written[1:] == text
    assert read_cell(written) == text
    ((cell,),) = list(csv.reader(io.StringIO(csv_text(["a"], [[text]]), newline="")))[1:]
    assert read_cell(cell) == text


@pytest.mark.parametrize("value", NUMBERS + (-12, -0.5, 3, "DA-1", "x=1", " =1", ""))
def test_numbers_and_plain_text_are_written_as_they_are(value):
    assert csv_cell(value) == value
    assert read_cell(str(value)) == str(value)


def test_the_screen_csv_guards_hostile_site_ids_and_leaves_a_negative_number(tmp_path):
    sites = random_sites(DEMO_REFERENCE, 4, seed=3)
    sites["site_id"] = [LINK, "@SUM(A1)", "-12", "S-4"]
    sites.to_file(tmp_path / "sites.gpkg", layer="parcels", driver="GPKG")
    out = tmp_path / "screen.csv"
    assert (
        main(
            [
                "screen",
                str(tmp_path / "sites.gpkg"),
                "--reference",
                str(DEMO_REFERENCE),
                "--output",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    ids = sorted(row[0] for row in rows_of(out)[1:])
    assert ids == sorted(["'" + LINK, "'@SUM(A1)", "-12", "S-4"])
    assert all(not cell.startswith(("=", "+", "@")) for row in rows_of(out) for cell in row)


def test_the_rejections_csv_guards_hostile_feature_labels(tmp_path, capsys):
    source = watersheds_file(tmp_path / "sheds.gpkg")
    # The two features rejected (lines), one named as a formula, one as a negative number.
    assert rename_text(source, "T-03", LINK) == rename_text(source, "T-17", "-17") == 1
    listed = tmp_path / "rejected.csv"
    assert (
        main(
            [
                "reference",
                "import",
                "tmdl_watersheds",
                str(source),
                "--reference",
                str(tmp_path / "ref.gpkg"),
                "--rejections",
                str(listed),
                "--source-date",
                "2024-05-01",
                "--accept-rejections",
                "--quiet",
            ]
        )
        == 0
    )
    rows = rows_of(listed)
    assert rows[0] == ["feature", "reason", "has_tmdl"]
    assert sorted(r[0] for r in rows[1:]) == sorted(["'" + LINK, "-17"])


def test_the_hydrology_table_guards_a_hostile_drainage_area_name(data_copy, tmp_path):
    from analysis.checks.hydrology import hydrology_paths
    from analysis.report.outputs import write_hydrology_outputs

    site = data_copy("demo_site.gpkg")
    assert rename_text(site, "DA-1", LINK) >= 2  # the area and the claims naming it
    table = tmp_path / "table.csv"
    write_hydrology_outputs(hydrology_paths(site), table_path=table)
    header, *rows = rows_of(table)
    names = {r[header.index("drainage_area")] for r in rows}
    assert names == {"'" + LINK, "DA-2"}
    peaks = [float(r[header.index("post_peak_cfs")]) for r in rows]  # numbers stay numbers
    assert len(peaks) == 6 and all(p > 0 for p in peaks)


def test_the_phasing_csvs_guard_phase_names_and_the_proposal_reads_back_as_the_schedule(tmp_path):
    """The proposal CSV is a schedule (phase,start,stabilized): given back with --schedule its
    phases are the plan's own names, the guard taken off."""
    names = ["=1+2", "-3", "'quoted"]
    path = tmp_path / "plan.geojson"
    gpd.GeoDataFrame(
        {
            "PHASE": names,
            "START": ["2027-04-01", "2027-05-01", "2027-06-01"],
            "STAB": ["2027-08-01", "2027-09-01", "2027-10-01"],
        },
        geometry=[square(2.0), square(2.0, x=X0 + 2000), square(2.0, x=X0 + 4000)],
        crs="EPSG:2260",
    ).to_file(path, driver="GeoJSON")
    files = {name: tmp_path / f"{name}.csv" for name in ("phases", "proposal", "timeline")}
    argv = [
        "phasing",
        str(path),
        "--phase-field",
        "PHASE",
        "--start-field",
        "START",
        "--stabilized-field",
        "STAB",
        "--quiet",
        "--csv",
        str(files["phases"]),
        "--proposal-csv",
        str(files["proposal"]),
        "--timeline-csv",
        str(files["timeline"]),
    ]
    assert main(argv) == 1  # 6 acres at once: a proposal is made
    guarded = ["'=1+2", "-3", "''quoted"]
    assert [r[0] for r in rows_of(files["phases"])[1:]] == guarded
    assert [r[0] for r in rows_of(files["proposal"])[1:]] == guarded
    started = [r[3] for r in rows_of(files["timeline"])[1:] if r[3]]
    assert started == guarded
    assert list(read_schedule(files["proposal"])) == names
    assert main(argv[:4] + ["--schedule", str(files["proposal"]), "--quiet"]) == 0
