"""What GDAL's spreadsheet drivers do not tell, and what they should not be given.

GDAL reads a merged range's value in its first cell and leaves the others empty, without a
word: a start date merged down over two phases' rows is read as the second phase having none.
The sheet's own XML (an XLSX's ``mergeCells``, an ODS's spanned cells) says where they are.
A formula cell saved without its value (a workbook written by a program that does not compute
formulas) is read as empty, a start date lost without a word. And a workbook is a ZIP archive:
a sheet that inflates to gigabytes would be inflated whole. :func:`check_sheet`, called by
every reader of a sheet, refuses all three; :func:`check_workbook`, by every opening of a
workbook, the archive's sizes (read from its central directory, before anything is inflated).
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import Optional
from xml.etree import ElementTree

from ..errors import InputError
from ..limits import WORKBOOK_MAX_BYTES, WORKBOOK_MAX_RATIO, WORKBOOK_MAX_ROWS

__all__ = ["merged_cells", "check_sheet", "check_workbook"]

_WORKBOOKS = (".xlsx", ".ods")
_RATIO_FROM = 1 << 20  # entries smaller than this (1 MiB inflated) may compress as well as they like

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


def check_workbook(path: str | Path, parameter: Optional[str] = None) -> None:
    """Refuse a workbook (XLSX, ODS) whose archive would inflate beyond
    ``WORKBOOK_MAX_BYTES`` in all, or an entry of which inflates more than
    ``WORKBOOK_MAX_RATIO`` times its stored size: sizes read from the central directory, before
    anything is inflated. Nothing for another file, or a damaged one (GDAL judges it then)."""
    if Path(path).suffix.lower() not in _WORKBOOKS:
        return
    try:
        with zipfile.ZipFile(path) as archive:
            entries = archive.infolist()
    except (zipfile.BadZipFile, OSError):
        return
    total = sum(e.file_size for e in entries)
    if total > WORKBOOK_MAX_BYTES:
        raise InputError(
            f"the workbook would inflate to {total / 2**20:.0f} MiB (more than the "
            f"{WORKBOOK_MAX_BYTES / 2**20:.0f} MiB a workbook read here may hold)",
            path=path,
            parameter=parameter,
            fix="give the table as a CSV file, or split the workbook",
        )
    for entry in entries:
        stored = max(entry.compress_size, 1)
        if entry.file_size > _RATIO_FROM and entry.file_size > WORKBOOK_MAX_RATIO * stored:
            raise InputError(
                f"the workbook's part '{entry.filename}' inflates {entry.file_size / stored:.0f} "
                f"times (more than {WORKBOOK_MAX_RATIO}): not a workbook a program saved",
                path=path,
                parameter=parameter,
                fix="save the workbook again from the spreadsheet program, or give the table as a CSV file",
            )


def check_sheet(path: str | Path, sheet: str, parameter: Optional[str] = None) -> None:
    """Refuse a workbook sheet GDAL would misread or could not hold, naming the file, the
    sheet and the cells: one inflating too far (:func:`check_workbook`), with more than
    ``WORKBOOK_MAX_ROWS`` rows, with formula cells saved without their values (GDAL reads them
    empty), or with merged cells (GDAL would read the range's value in its first cell alone,
    the others empty, and a value merged down over two rows would be read as the second row
    having none). Nothing for a file that is not a workbook."""
    check_workbook(path, parameter)
    scan = _scan(path, sheet, parameter)
    if scan.rows > WORKBOOK_MAX_ROWS:
        raise InputError(
            f"the sheet '{sheet}' has {scan.rows} rows (more than the "
            f"{WORKBOOK_MAX_ROWS} a sheet read here may hold)",
            path=path,
            layer=sheet,
            parameter=parameter,
            fix="give the table as a CSV file, or delete the rows past the table",
        )
    if scan.formulas:
        named = [_cell_name(sheet, ref) for ref in scan.formulas]
        shown = ", ".join(named[:10]) + (f" and {len(named) - 10} more" if len(named) > 10 else "")
        raise InputError(
            f"the sheet '{sheet}' has formula cells saved without their values ({shown}): "
            "they would be read as empty",
            path=path,
            layer=sheet,
            parameter=parameter,
            fix="open the workbook in a spreadsheet program and save it (which stores each "
            "formula's value), or write the values instead of formulas",
        )
    merged = scan.merged
    if merged:
        shown = ", ".join(merged[:10]) + (f" and {len(merged) - 10} more" if len(merged) > 10 else "")
        raise InputError(
            f"the sheet '{sheet}' has merged cells ({shown}): a merged range is "
            "read as its first cell, the others empty (a value merged down over "
            "two rows would be read as the second row having none)",
            path=path,
            layer=sheet,
            parameter=parameter,
            fix="unmerge the cells and write the value in each row's cell",
        )


def merged_cells(path: str | Path, sheet: str) -> list[str]:
    """The merged ranges of ``sheet`` in the XLSX or ODS workbook at ``path``, in A1 notation
    (``B2:B3``); [] for another file, or one whose XML cannot be read (GDAL judges it then)."""
    return _scan(path, sheet, None).merged


class _Scan:
    def __init__(self) -> None:
        self.rows = 0
        self.formulas: list[str] = []
        self.merged: list[str] = []


def _scan(path: str | Path, sheet: str, parameter: Optional[str]) -> _Scan:
    """The sheet's row count, formulas without values and merged ranges, read as a stream."""
    suffix = Path(path).suffix.lower()
    scan = _Scan()
    if suffix not in _WORKBOOKS:
        return scan
    try:
        with zipfile.ZipFile(path) as archive:
            if suffix == ".xlsx":
                _xlsx_scan(archive, sheet, scan)
            else:
                scan.merged = _ods_merged(archive, sheet)
    except zipfile.BadZipFile as err:  # among others, an entry larger than its stated size
        raise InputError(
            f"the workbook is damaged ({err})",
            path=path,
            layer=sheet,
            parameter=parameter,
            fix="save the workbook again from the spreadsheet program",
        ) from None
    except (KeyError, ElementTree.ParseError, OSError):
        return _Scan()
    return scan


def _cell_name(sheet: str, ref: str) -> str:
    """A cell as a spreadsheet names it: ``Schedule!B2``, ``'My sheet'!B2``."""
    plain = sheet.replace("_", "").isalnum()
    return f"{sheet}!{ref}" if plain else "'" + sheet.replace("'", "''") + f"'!{ref}"


def _xlsx_scan(archive: zipfile.ZipFile, sheet: str, scan: _Scan) -> None:
    workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rid = next((s.get(f"{_REL}id") for s in workbook.iter(f"{_MAIN}sheet") if s.get("name") == sheet), None)
    if rid is None:
        return
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels.iter(f"{_PKG}Relationship") if r.get("Id") == rid), None)
    if target is None:
        return
    name = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
    row_tag, cell_tag, merge_tag = f"{_MAIN}row", f"{_MAIN}c", f"{_MAIN}mergeCell"
    with archive.open(name) as stream:  # a stream: the sheet is never whole in memory
        for _, element in ElementTree.iterparse(stream):
            tag = element.tag
            if tag == cell_tag:
                formula = element.find(f"{_MAIN}f")
                value = element.find(f"{_MAIN}v")
                inline = element.find(f"{_MAIN}is")
                if formula is not None and (value is None or not (value.text or "")) and inline is None:
                    scan.formulas.append(str(element.get("r") or "?"))
            elif tag == row_tag:
                number = element.get("r")
                scan.rows = max(scan.rows + 1, int(number) if number and number.isdigit() else 0)
                element.clear()
                if scan.rows > WORKBOOK_MAX_ROWS:
                    return
            elif tag == merge_tag and element.get("ref"):
                scan.merged.append(str(element.get("ref")))


def _ods_merged(archive: zipfile.ZipFile, sheet: str) -> list[str]:
    root = ElementTree.fromstring(archive.read("content.xml"))
    table = next((t for t in root.iter(f"{_TABLE}table") if t.get(f"{_TABLE}name") == sheet), None)
    if table is None:
        return []
    found = []
    row_number = 0
    for row in table.iter(f"{_TABLE}table-row"):
        repeat_rows = int(row.get(f"{_TABLE}number-rows-repeated", "1"))
        column = 0
        for cell in row:
            if cell.tag not in (f"{_TABLE}table-cell", f"{_TABLE}covered-table-cell"):
                continue
            rows = int(cell.get(f"{_TABLE}number-rows-spanned", "1"))
            columns = int(cell.get(f"{_TABLE}number-columns-spanned", "1"))
            if rows > 1 or columns > 1:
                found.append(f"{_a1(row_number, column)}:{_a1(row_number + rows - 1, column + columns - 1)}")
            column += int(cell.get(f"{_TABLE}number-columns-repeated", "1"))
        row_number += repeat_rows
    return found


def _a1(row: int, column: int) -> str:
    """A1 notation of a 0-based (row, column): (1, 1) is B2.

    >>> _a1(0, 0), _a1(2, 27)
    ('A1', 'AB3')
    """
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(ord("A") + rest) + letters
    return f"{letters}{row + 1}"
