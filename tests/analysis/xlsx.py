"""A tiny XLSX workbook written by hand (one sheet; text, numbers and true date cells), for tests."""

from __future__ import annotations

import zipfile
from datetime import date
from xml.sax.saxutils import escape

__all__ = ["write_xlsx"]

_MAIN = 'xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"'
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def write_xlsx(path, rows, sheet="Schedule"):
    """Write ``rows`` (lists of str, numbers or ``datetime.date``: a date cell) as one sheet."""
    strings: list[str] = []
    body = []
    for r, row in enumerate(rows, start=1):
        cells = []
        for c, value in enumerate(row):
            ref = f"{chr(ord('A') + c)}{r}"
            if isinstance(value, str):
                if value not in strings:
                    strings.append(value)
                cells.append(f'<c r="{ref}" t="s"><v>{strings.index(value)}</v></c>')
            elif isinstance(value, date):  # Excel's serial day, styled as a date (numFmt 14)
                cells.append(f'<c r="{ref}" s="1"><v>{(value - date(1899, 12, 30)).days}</v></c>')
            else:
                cells.append(f'<c r="{ref}"><v>{value}</v></c>')
        body.append(f'<row r="{r}">{"".join(cells)}</row>')
    head = '<?xml version="1.0" encoding="UTF-8"?>'
    files = {
        "[Content_Types].xml": (
            f'{head}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            f'<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            f'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPE}.sheet.main+xml"/>'
            f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_TYPE}.worksheet+xml"/>'
            f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_TYPE}.sharedStrings+xml"/>'
            f'<Override PartName="/xl/styles.xml" ContentType="{_TYPE}.styles+xml"/></Types>'
        ),
        "_rels/.rels": (
            f'{head}<Relationships xmlns="{_PKG}"><Relationship Id="rId1" '
            f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'{head}<workbook {_MAIN} xmlns:r="{_REL}"><sheets><sheet '
            f'name="{escape(sheet)}" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/_rels/workbook.xml.rels": (
            f'{head}<Relationships xmlns="{_PKG}">'
            f'<Relationship Id="rId1" Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/>'
            f'<Relationship Id="rId2" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
            f'<Relationship Id="rId3" Type="{_REL}/styles" Target="styles.xml"/></Relationships>'
        ),
        "xl/styles.xml": (
            f'{head}<styleSheet {_MAIN}><fonts count="1"><font/></fonts><fills '
            f'count="1"><fill/></fills><borders count="1"><border/></borders>'
            f'<cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="2"><xf '
            f'numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs>'
            f"</styleSheet>"
        ),
        "xl/sharedStrings.xml": (
            f'{head}<sst {_MAIN} count="{len(strings)}" '
            f'uniqueCount="{len(strings)}">'
            + "".join(f"<si><t>{escape(s)}</t></si>" for s in strings)
            + "</sst>"
        ),
        "xl/worksheets/sheet1.xml": f"{head}<worksheet {_MAIN}><sheetData>{''.join(body)}"
        f"</sheetData></worksheet>",
    }
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path
