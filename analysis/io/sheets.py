"""What GDAL's spreadsheet drivers do not tell: a workbook sheet's merged cells.

GDAL reads a merged range's value in its first cell and leaves the others empty, without a
word: a start date merged down over two phases' rows is read as the second phase having none.
The sheet's own XML (an XLSX's ``mergeCells``, an ODS's spanned cells) says where they are.
"""

from __future__ import annotations

import posixpath
import zipfile
from pathlib import Path
from typing import Optional
from xml.etree import ElementTree

from ..errors import InputError

__all__ = ["merged_cells", "refuse_merged_cells"]

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
_PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"
_TABLE = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}"


def merged_cells(path: str | Path, sheet: str) -> list[str]:
    """The merged ranges of ``sheet`` in the XLSX or ODS workbook at ``path``, in A1 notation
    (``B2:B3``); [] for another file, or one whose XML cannot be read (GDAL judges it then)."""
    suffix = Path(path).suffix.lower()
    if suffix not in (".xlsx", ".ods"):
        return []
    try:
        with zipfile.ZipFile(path) as archive:
            if suffix == ".xlsx":
                return _xlsx_merged(archive, sheet)
            if suffix == ".ods":
                return _ods_merged(archive, sheet)
    except (zipfile.BadZipFile, KeyError, ElementTree.ParseError, OSError):
        return []
    return []


def refuse_merged_cells(path: str | Path, sheet: str, parameter: Optional[str] = None) -> None:
    """Refuse a workbook sheet with merged cells, naming the file, the sheet and the ranges
    (every reader of a sheet calls it: GDAL would read the range's value in its first cell
    alone, the others empty, and a value merged down over two rows would be read as the
    second row having none). Nothing for a file that is not a workbook."""
    merged = merged_cells(path, sheet)
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


def _xlsx_merged(archive: zipfile.ZipFile, sheet: str) -> list[str]:
    workbook = ElementTree.fromstring(archive.read("xl/workbook.xml"))
    rid = next((s.get(f"{_REL}id") for s in workbook.iter(f"{_MAIN}sheet") if s.get("name") == sheet), None)
    if rid is None:
        return []
    rels = ElementTree.fromstring(archive.read("xl/_rels/workbook.xml.rels"))
    target = next((r.get("Target") for r in rels.iter(f"{_PKG}Relationship") if r.get("Id") == rid), None)
    if target is None:
        return []
    name = target.lstrip("/") if target.startswith("/") else posixpath.normpath(f"xl/{target}")
    root = ElementTree.fromstring(archive.read(name))
    return [str(m.get("ref")) for m in root.iter(f"{_MAIN}mergeCell") if m.get("ref")]


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
