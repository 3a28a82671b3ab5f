"""A workbook sheet with merged cells is refused wherever a table is read from one (a site plan's
table through ``[files]``, whose values the checklist judges; a phasing schedule): GDAL reads a
merged range's value in its first cell alone, the others empty, without a word. The workbooks
are written by openpyxl, as a spreadsheet program writes them."""

from __future__ import annotations

import geopandas as gpd
import openpyxl  # a test requirement (requirements/*.txt, pyproject [test])
import pytest

from analysis.cli.app import main
from analysis.errors import InputError
from analysis.io.vector import read_layer
from tests.conftest import TEST_DATA


def project_workbook(path, site, merge=None):
    """The demo plan's project row as a workbook sheet 'project'; ``merge`` a range to merge."""
    row = gpd.read_file(site, layer="project").drop(columns="geometry", errors="ignore").iloc[0]
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "project"
    sheet.append(list(row.index))
    sheet.append([None if v != v else v for v in row.tolist()])  # NaN: an empty cell
    if merge:
        sheet.merge_cells(merge)
    book.save(path)
    return path


def review(tmp_path, site, workbook, capsys):
    (tmp_path / "map.toml").write_text(f'[files]\nproject = "{workbook.name}"\n', encoding="utf-8")
    out = tmp_path / "review.json"
    status = main(["review", str(site), "--map", str(tmp_path / "map.toml"), "--json", str(out), "--quiet"])
    return status, out, capsys.readouterr().err


def test_the_plan_project_row_from_a_workbook_is_read(data_copy, tmp_path, capsys):
    site = data_copy("demo_site.gpkg")
    workbook = project_workbook(tmp_path / "project.xlsx", site)
    status, out, _ = review(tmp_path, site, workbook, capsys)
    assert status in (0, 1)
    assert "51 Forest Road, Kiryas Joel, NY 10950" in out.read_text(encoding="utf-8")


def test_merged_cells_in_the_plan_project_row_are_refused_naming_file_sheet_and_cells(
    data_copy, tmp_path, capsys
):
    # The name merged over the address: GDAL would read the address as empty, and the
    # checklist would judge a plan that states its address as one that does not.
    site = data_copy("demo_site.gpkg")
    workbook = project_workbook(tmp_path / "project.xlsx", site, merge="A2:B2")
    status, out, err = review(tmp_path, site, workbook, capsys)
    assert status == 2 and not out.exists()
    assert str(workbook) in err and "layer 'project'" in err and "merged cells (A2:B2)" in err
    assert "Fix: unmerge the cells" in err and "Traceback" not in err


def test_read_layer_refuses_merged_cells_in_any_sheet_it_reads(tmp_path):
    book = openpyxl.Workbook()
    book.active.title = "notes"
    table = book.create_sheet("table")
    for row in (["id", "value"], ["a", 1], ["b", 2], ["c", 3]):
        table.append(row)
    table.merge_cells("B2:B3")
    book.save(tmp_path / "book.xlsx")
    assert len(read_layer(tmp_path / "book.xlsx", "notes", read_geometry=False).frame) == 0
    with pytest.raises(
        InputError,
        match=r"book\.xlsx, layer 'table': the sheet 'table' has "
        r"merged cells \(B2:B3\).*Fix: unmerge",
    ):
        read_layer(tmp_path / "book.xlsx", "table", read_geometry=False)


def test_a_schedule_workbook_with_merged_cells_is_refused_naming_the_option(tmp_path, capsys):
    from tests.analysis.test_phasing_cli import PATTERN, cad_plan

    dxf, _ = cad_plan(
        tmp_path,
        [("1", 1.0, 0), ("2", 1.0, 2000)],
        {"1": ("2027-04-01", "2027-07-01"), "2": ("2027-04-01", "2027-08-01")},
    )
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Schedule"
    for row in (
        ["phase", "start", "stabilized"],
        ["1", "2027-04-01", "2027-07-01"],
        ["2", "2027-04-01", "2027-08-01"],
    ):
        sheet.append(row)
    sheet.merge_cells("B2:B3")  # one start date for both phases, as typed in a spreadsheet
    book.save(tmp_path / "schedule.xlsx")
    assert (
        main(
            [
                "phasing",
                str(dxf),
                "--phase-from",
                "layer",
                "--pattern",
                PATTERN,
                "--schedule",
                str(tmp_path / "schedule.xlsx"),
                "--crs",
                "EPSG:2260",
                "--json",
                str(tmp_path / "out.json"),
                "--quiet",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "schedule.xlsx" in err and "merged cells (B2:B3)" in err and "--schedule" in err
    assert not (tmp_path / "out.json").exists()


def test_checklist_confirmations_in_a_workbook_are_refused_saying_what_is_read(tmp_path, capsys):
    # The checklist reads its confirmations from their JSON or a findings GeoPackage only: a
    # workbook (merged cells or not) is refused whole, saying so, not read as JSON bytes.
    book = openpyxl.Workbook()
    book.active.append(["item", "reviewer", "date"])
    book.active.append(["B(5)", "R. Levi", "2027-03-02"])
    book.save(tmp_path / "confirmations.xlsx")
    out = tmp_path / "review.json"
    assert (
        main(
            [
                "review",
                str(TEST_DATA / "demo_site.gpkg"),
                "--confirmations",
                str(tmp_path / "confirmations.xlsx"),
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "confirmations.xlsx" in err and "JSON file or a findings GeoPackage" in err
    assert not out.exists()
