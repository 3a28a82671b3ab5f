"""A phasing schedule workbook read whole or refused: which sheet is the schedule, and merged
cells (GDAL reads a merged range as its first cell, the others empty, without a word)."""

from __future__ import annotations

import logging
import re
import zipfile
from datetime import date

import pytest

from analysis.errors import InputError
from analysis.siteplan.schedule import read_schedule
from tests.analysis.xlsx import write_xlsx

ROWS = [
    ["phase", "start", "stabilized"],
    ["1", date(2027, 4, 1), date(2027, 6, 1)],
    ["2", date(2027, 5, 1), date(2027, 7, 1)],
]
_SHEET = "application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"
_WORKSHEET = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet"


def _rewrite(path, change) -> None:
    with zipfile.ZipFile(path) as archive:
        files = {name: archive.read(name).decode() for name in archive.namelist()}
    change(files)
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)


def _workbook(path, first, second, first_name="Schedule", second_name="Revised"):
    """A workbook of two sheets: ``first`` and ``second`` (rows as write_xlsx takes them)."""
    write_xlsx(path.with_name("second.xlsx"), second)
    with zipfile.ZipFile(path.with_name("second.xlsx")) as archive:
        sheet = archive.read("xl/worksheets/sheet1.xml").decode()
        strings = archive.read("xl/sharedStrings.xml").decode()
    # One shared-string table: the second sheet's strings written inline instead.
    texts = re.findall(r"<t>(.*?)</t>", strings)
    sheet = re.sub(
        r'<c r="(\w+)" t="s"><v>(\d+)</v></c>',
        lambda m: f'<c r="{m[1]}" t="inlineStr"><is><t>{texts[int(m[2])]}</t></is></c>',
        sheet,
    )
    write_xlsx(path, first, sheet=first_name)

    def add(files):
        files["xl/workbook.xml"] = files["xl/workbook.xml"].replace(
            "</sheets>", f'<sheet name="{second_name}" sheetId="2" r:id="rId9"/></sheets>'
        )
        files["xl/_rels/workbook.xml.rels"] = files["xl/_rels/workbook.xml.rels"].replace(
            "</Relationships>",
            f'<Relationship Id="rId9" Type="{_WORKSHEET}" Target="worksheets/sheet2.xml"/></Relationships>',
        )
        files["[Content_Types].xml"] = files["[Content_Types].xml"].replace(
            "</Types>", f'<Override PartName="/xl/worksheets/sheet2.xml" ContentType="{_SHEET}"/></Types>'
        )
        files["xl/worksheets/sheet2.xml"] = sheet

    _rewrite(path, add)
    return path


def test_two_sheets_each_a_schedule_are_refused(tmp_path):
    revised = ROWS + [["3", date(2027, 6, 1), date(2027, 8, 1)]]
    path = _workbook(tmp_path / "two.xlsx", ROWS, revised)
    with pytest.raises(
        InputError,
        match=r"two\.xlsx: the sheets 'Schedule', 'Revised' each hold "
        r"a schedule.*Fix: name the schedule's sheet",
    ):
        read_schedule(path)
    # --sheet (issue 34, item 10) chooses; a sheet the workbook lacks is refused naming its sheets
    assert sorted(read_schedule(path, "Revised")) == ["1", "2", "3"]
    assert sorted(read_schedule(path, "Schedule")) == ["1", "2"]
    with pytest.raises(InputError, match=r"no sheet 'Rev' \(sheets: Schedule, Revised\)"):
        read_schedule(path, "Rev")


def test_the_schedule_is_the_sheet_with_a_phase_column_others_named(tmp_path, caplog):
    notes = [["note"], ["dates as agreed with the engineer"]]
    path = _workbook(tmp_path / "notes_first.xlsx", notes, ROWS, "Notes", "Schedule")
    with caplog.at_level(logging.WARNING, logger="analysis.siteplan.schedule"):
        dates = read_schedule(path)
    assert sorted(dates) == ["1", "2"]
    assert [r.getMessage() for r in caplog.records] == [
        f"file {path}, layer 'Schedule': the sheet(s) 'Notes' were not read: the schedule is the "
        "sheet 'Schedule'. Fix: move any phase rows there onto that sheet"
    ]


def test_merged_cells_are_refused_naming_the_range(tmp_path):
    # Phase 1's start merged down over phase 2's row: GDAL reads phase 2 without a start.
    path = write_xlsx(tmp_path / "merged.xlsx", [ROWS[0], ROWS[1], ["2", "", date(2027, 7, 1)]])

    def merge(files):
        sheet = re.sub(r'<c r="B3"[^>]*>.*?</c>', "", files["xl/worksheets/sheet1.xml"])
        files["xl/worksheets/sheet1.xml"] = sheet.replace(
            "</sheetData>", '</sheetData><mergeCells count="1"><mergeCell ref="B2:B3"/></mergeCells>'
        )

    _rewrite(path, merge)
    with pytest.raises(
        InputError,
        match=r"merged\.xlsx, layer 'Schedule': the sheet 'Schedule' "
        r"has merged cells \(B2:B3\).*Fix: unmerge the cells",
    ):
        read_schedule(path)


def _ods(path, rows_xml: str):
    """An ODS workbook of one sheet 'Schedule' whose rows are ``rows_xml``."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content '
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.2">'
        '<office:body><office:spreadsheet><table:table table:name="Schedule">'
        f"{rows_xml}</table:table></office:spreadsheet></office:body>"
        "</office:document-content>"
    )
    manifest = (
        '<?xml version="1.0" encoding="UTF-8"?><manifest:manifest xmlns:manifest='
        '"urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><manifest:file-entry '
        'manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.'
        'spreadsheet"/><manifest:file-entry manifest:full-path="content.xml" '
        'manifest:media-type="text/xml"/></manifest:manifest>'
    )
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(
            "mimetype", "application/vnd.oasis.opendocument.spreadsheet", compress_type=zipfile.ZIP_STORED
        )
        archive.writestr("content.xml", content)
        archive.writestr("META-INF/manifest.xml", manifest)
    return path


def _cell(text: str, extra: str = "") -> str:
    return f'<table:table-cell office:value-type="string"{extra}><text:p>{text}</text:p></table:table-cell>'


def test_ods_spanned_cells_are_refused(tmp_path):
    header = "<table:table-row>" + "".join(_cell(t) for t in ROWS[0]) + "</table:table-row>"
    plain = (
        header
        + "<table:table-row>"
        + _cell("1")
        + _cell("2027-04-01")
        + _cell("2027-06-01")
        + "</table:table-row><table:table-row>"
        + _cell("2")
        + _cell("2027-05-01")
        + _cell("2027-07-01")
        + "</table:table-row>"
    )
    assert read_schedule(_ods(tmp_path / "plain.ods", plain))["2"] == ("2027-05-01", "2027-07-01")
    merged = (
        header
        + "<table:table-row>"
        + _cell("1")
        + _cell("2027-04-01", ' table:number-rows-spanned="2"')
        + _cell("2027-06-01")
        + "</table:table-row><table:table-row>"
        + _cell("2")
        + "<table:covered-table-cell/>"
        + _cell("2027-07-01")
        + "</table:table-row>"
    )
    with pytest.raises(InputError, match=r"has merged cells \(B2:B3\)"):
        read_schedule(_ods(tmp_path / "merged.ods", merged))
