"""The CSV files the project writes, and the text of one of their cells read back.

A CSV opened in Excel or LibreOffice runs a cell that begins with ``=``, ``+``, ``-`` or ``@``
as a formula (and one beginning with a TAB or CR, which a spreadsheet may strip first): a site
id ``=HYPERLINK("http://x","click")`` from a user's file would become a link in the reviewer's
sheet. Every CSV writer writes its cells through :func:`csv_cell` (OWASP's advice: such a text
is written with a leading ``'``, which the spreadsheet shows and does not evaluate); a number,
and a text that is a plain number such as ``-12`` or ``-0.5``, is written as it is.
:func:`read_cell` gives a cell's text back, so that a CSV the project wrote (a phasing proposal
given back as ``--schedule``) reads as it was.
"""

from __future__ import annotations

import csv
import io
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from numbers import Number
from pathlib import Path
from typing import Any

__all__ = ["FORMULA_START", "csv_cell", "read_cell", "csv_text", "write_csv", "write_frame_csv"]

# What a spreadsheet takes to begin a formula (OWASP, "CSV Injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_QUOTE = "'"
# A text a spreadsheet reads as the number it is (no formula): -12, +3.5, -.5, 1e-3.
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def csv_cell(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs as a formula.

    A text beginning with one of ``FORMULA_START``, or with ``'`` (so that :func:`read_cell`
    gives it back whole), gets a leading ``'``; a number is left to the writer (a missing one,
    NaN, is an empty cell), as is a text that is a plain number.

    >>> [csv_cell(v) for v in ("=1+1", "@SUM(A1)", "-12", "-0.5", "+1-2", "'x", "DA-1", -3.5)]
    ["'=1+1", "'@SUM(A1)", '-12', '-0.5', "'+1-2", "''x", 'DA-1', -3.5]
    """
    if value is None or isinstance(value, Number):
        return "" if isinstance(value, float) and math.isnan(value) else value
    text = str(value)
    if text.startswith(FORMULA_START + (_QUOTE,)) and not _PLAIN_NUMBER.fullmatch(text):
        return _QUOTE + text
    return text


def read_cell(text: str) -> str:
    """A cell's text as it was before :func:`csv_cell` wrote it: a leading ``'`` before a
    formula's first character (or before another ``'``) is taken off; any other text is as read.

    >>> [read_cell(t) for t in ("'=1+1", "''x", "'x", "-12")]
    ['=1+1', "'x", "'x", '-12']
    """
    if text.startswith(_QUOTE) and text[1:2] and text[1] in FORMULA_START + (_QUOTE,):
        return text[1:]
    return text


def csv_text(header: Sequence[str], rows: Iterable[Sequence[Any] | Mapping[str, Any]]) -> str:
    """A CSV file's text: ``header``, then each row (a sequence in the header's order, or a
    mapping read by the header's names, a missing one empty), every cell through
    :func:`csv_cell`. Lines end in CR LF (RFC 4180): the writer then quotes a cell holding a
    lone CR, which a line end of LF alone would leave bare, to be read as the row's end."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(header)
    for row in rows:
        values = [row.get(name) for name in header] if isinstance(row, Mapping) else row
        writer.writerow([csv_cell(v) for v in values])
    return buffer.getvalue()


def write_csv(
    path: str | Path, header: Sequence[str], rows: Iterable[Sequence[Any] | Mapping[str, Any]]
) -> Path:
    """Write :func:`csv_text` to ``path`` as UTF-8, its line ends as they are on every system
    (the caller stages ``path``: :mod:`analysis.io.files`)."""
    path = Path(path)
    path.write_bytes(csv_text(header, rows).encode("utf-8"))
    return path


def write_frame_csv(path: str | Path, frame) -> Path:
    """:func:`write_csv` of a pandas DataFrame, its columns the header (a missing value empty)."""
    cells = frame.astype(object).where(frame.notna(), None)
    return write_csv(path, [str(c) for c in frame.columns], cells.itertuples(index=False, name=None))
