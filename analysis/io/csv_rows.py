"""A CSV table's rows (the records, a phasing schedule), their dates and numbers; errors name
row and column."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from .. import dates
from ..errors import InputError
from .csv_cells import read_cell

if TYPE_CHECKING:
    from ..profile import Inputs

__all__ = ["CsvRows", "read_csv", "parse_date", "parse_datetime", "parse_number"]


class CsvRows:
    """The rows of one CSV file: header names lower-cased and stripped (each used once),
    values stripped, and given back as the project wrote them (a formula's guard ``'`` taken
    off: :func:`~analysis.io.csv_cells.read_cell`).

    ``rows`` is a list of ``(line, {column: text})``; ``line`` is the row's line in the file
    (the header is line 1), which every error names.
    """

    def __init__(
        self, path: Path, header: list[str], rows: list[tuple[int, dict]], limits: Optional[Inputs] = None
    ):
        self.path = path
        self.header = header
        self.rows = rows
        self.limits = limits  # the profile's [inputs]: the range of dates accepted

    def error(
        self,
        problem: str,
        line: Optional[int] = None,
        column: Optional[str] = None,
        fix: Optional[str] = None,
        parameter=None,
    ) -> InputError:
        return InputError(problem, path=self.path, row=line, column=column, fix=fix, parameter=parameter)


def read_csv(
    path: str | Path,
    required: Iterable[str],
    what: str,
    limits: Optional[Inputs] = None,
    parameter: Optional[str] = None,
) -> CsvRows:
    """Read ``path``; refuse it unless it has every ``required`` column (case-insensitive).

    ``what`` names the file's role for the message (e.g. ``"inspection log"``); ``limits``
    (the profile's [inputs]) bounds the dates its rows may hold; ``parameter`` is the input the
    refusals are about (:class:`InputError`), where the caller names one.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"the {what} does not exist", path=path, fix="check the path", parameter=parameter)
    try:
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.reader(handle)
            try:
                written = next(reader)
            except StopIteration:
                raise InputError(
                    f"the {what} is empty",
                    path=path,
                    parameter=parameter,
                    fix="give a CSV file with a header row",
                ) from None
            header = [h.strip().lower() for h in written]
            refuse_repeated_columns(path, what, written, header, parameter)
            rows = []
            for values in reader:
                if not any(v.strip() for v in values):
                    continue  # blank lines, as spreadsheets leave them
                line = reader.line_num
                if len(values) > len(header):
                    raise InputError(
                        f"the row has {len(values)} values but the header names {len(header)} columns",
                        path=path,
                        row=line,
                        fix="quote values that contain commas",
                        parameter=parameter,
                    )
                unnamed = [i for i, v in enumerate(values) if v.strip() and not header[i]]
                if unnamed:
                    raise InputError(
                        f"the row has a value ({values[unnamed[0]].strip()!r}) in "
                        f"column {unnamed[0] + 1}, which the header row does not "
                        "name, so it could not be read",
                        path=path,
                        row=line,
                        fix="name the column in the header row, or move the value into a named column",
                        parameter=parameter,
                    )
                rows.append(
                    (
                        line,
                        {
                            h: (read_cell(values[i].strip()) if i < len(values) else "")
                            for i, h in enumerate(header)
                        },
                    )
                )
    except UnicodeDecodeError:
        raise InputError(
            f"the {what} is not UTF-8 text", path=path, fix="save it as CSV (UTF-8)", parameter=parameter
        ) from None
    except csv.Error as err:  # e.g. a field over the csv module's size limit
        raise InputError(
            f"the {what} could not be read as CSV ({err})",
            path=path,
            fix="save it as CSV (UTF-8)",
            parameter=parameter,
        ) from None
    except OSError as err:
        raise InputError(
            f"the {what} could not be read ({err.strerror or err})",
            path=path,
            fix="check the file can be read",
            parameter=parameter,
        ) from None
    missing = [c for c in required if c not in header]
    if missing:
        raise InputError(
            f"the {what} lacks column(s) " + ", ".join(f"'{c}'" for c in missing),
            path=path,
            fix="the header row must name "
            + ", ".join(required)
            + " (docs/CLI.md, Construction-phase records)",
            parameter=parameter,
        )
    return CsvRows(path, header, rows, limits)


def refuse_repeated_columns(
    path: Path, what: str, written: list[str], header: list[str], parameter: Optional[str]
) -> None:
    """Refuse a header naming one column twice (names compared as read: stripped, any case):
    each row is read by column name, so one of the two columns' values would be lost. Columns
    without a name (a spreadsheet's empty trailing columns) are never read and may repeat."""
    first: dict[str, int] = {}
    for position, name in enumerate(header, start=1):
        if not name:
            continue
        if name in first:
            earlier = first[name]
            raise InputError(
                f"the {what}'s header names the column '{name}' twice: column {earlier} "
                f"({written[earlier - 1].strip()!r}) and column {position} "
                f"({written[position - 1].strip()!r}); only one of them could be read",
                path=path,
                row=1,
                column=name,
                parameter=parameter,
                fix="rename or delete one of the two columns, so that each name is used once",
            )
        first[name] = position


def parse_date(rows: CsvRows, line: int, column: str, text: str) -> date:
    """An ISO date (a date-time gives its date)."""
    return parse_datetime(rows, line, column, text).date()


def parse_datetime(rows: CsvRows, line: int, column: str, text: str) -> datetime:
    """An ISO date (midnight) or date-time (``YYYY-MM-DD HH:MM`` or ``T``), without a time zone."""
    try:
        moment = dates.parse_datetime(text)  # local time at the site, as the records keep it
    except ValueError:
        raise rows.error(
            f"'{text}' is not an ISO date or date-time",
            line,
            column,
            "write it as YYYY-MM-DD or YYYY-MM-DD HH:MM",
        ) from None
    if rows.limits is not None:
        dates.in_range(
            moment.date(),
            rows.limits.earliest_date,
            rows.limits.latest_date,
            f"'{text}'",
            path=rows.path,
            row=line,
            column=column,
            fix="correct the date (the profile's [inputs] gives the range)",
        )
    return moment


def parse_number(
    rows: CsvRows, line: int, column: str, text: str, minimum: float = 0.0, above_minimum: bool = False
) -> float:
    """A number >= ``minimum`` (> where ``above_minimum``)."""
    try:
        value = float(text)
    except ValueError:
        raise rows.error(f"'{text}' is not a number", line, column, "write a plain number") from None
    if not math.isfinite(value) or value < minimum or (above_minimum and value == minimum):
        bound = ">" if above_minimum else ">="
        raise rows.error(f"{text} is out of range", line, column, f"give a number {bound} {minimum:g}")
    return value
