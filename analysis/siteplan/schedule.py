"""A phasing schedule table (``phase,start,stabilized``) read from CSV or XLSX."""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io.csv_rows import read_csv, refuse_repeated_columns

__all__ = ["read_schedule", "phase_name", "dates_by_phase", "SCHEDULE_COLUMNS"]

# Schedule column -> the header spellings accepted for it (any case).
SCHEDULE_COLUMNS = {
    "phase": ("phase",),
    "start": ("start", "start_date"),
    "stabilized": ("stabilized", "stabilized_date", "stabilised", "stabilised_date"),
}
log = logging.getLogger(__name__)
_GDAL_DATE = re.compile(r"^\d{4}/\d{2}/\d{2}$")
_HOW = "a table with the columns phase,start,stabilized (dates YYYY-MM-DD), one row per phase"


def phase_name(value: Any) -> Any:
    """A phase as text: 2 and 2.0 (a spreadsheet's number) are "2"; missing stays None."""
    if value is None:
        return None
    if isinstance(value, float):
        if value != value:  # NaN
            return None
        if value.is_integer():
            return str(int(value))
    text = str(value).strip()
    return text or None


def dates_by_phase(
    phases: list, dates: dict, plan, schedule, parameter: str, sheet_hint: str = ""
) -> tuple[list, list]:
    """Each polygon's ``(starts, ends)`` from the schedule's rows by its phase.

    The plan's phases and the schedule's rows must be the same set: a phase of the plan without
    a row leaves its ground undated, and a row for a phase the plan does not draw is ground the
    check would not count; either is refused, naming both sets. Phases are matched as written,
    and where two spellings look like one phase (``Phase 1`` or ``01`` against ``1``) the
    message says which, rather than guessing.
    """
    drawn = sorted({p for p in phases if p is not None}, key=_order)
    missing = [p for p in drawn if p not in dates]
    extra = [p for p in dates if p not in set(drawn)]
    if missing or extra:
        problems = []
        if missing:
            problems.append(f"the plan's phase(s) {_listed(missing)} have no row in the schedule")
        if extra:
            problems.append(
                f"the schedule's row(s) for phase(s) {_listed(extra)} name no phase the plan draws"
            )
        alike = [(e, m) for e in extra for m in missing if _bare(e) == _bare(m)]
        told = "; ".join(problems) + (f" (plan: {_listed(drawn)}; schedule: {_listed(list(dates))})")
        if alike:
            told += "; phases are matched as written: " + ", ".join(
                f"the schedule's '{e}' is not the plan's '{m}'" for e, m in alike
            )
        fix = (
            f"write the schedule's phases as the plan does ({_listed(drawn)})"
            if alike
            else "give the schedule one row per phase the plan draws: a phase the plan lacks is "
            "ground the check cannot count (draw it, or delete its row)"
        )
        raise InputError(told + sheet_hint, path=schedule, parameter=parameter, fix=fix)
    return [dates[p][0] for p in phases], [dates[p][1] for p in phases]


def _bare(phase) -> str:
    """A phase's name without a leading word ('Phase', 'Ph.') and leading zeros, to spot two
    spellings of one phase (never to match them)."""
    text = re.sub(r"^(phase|ph\.?)\s*", "", str(phase).strip(), flags=re.IGNORECASE)
    return text.lstrip("0") or text


def _order(phase) -> tuple:
    text = str(phase)
    return (0, int(text), text) if text.isdigit() else (1, 0, text)


def _listed(phases, most: int = 10) -> str:
    shown = ", ".join(str(p) for p in list(phases)[:most])
    return shown + (f" and {len(phases) - most} more" if len(phases) > most else "") or "none"


def read_schedule(path: str | Path, sheet: str | None = None) -> dict[str, tuple[Any, Any]]:
    """``{phase: (start, stabilized)}`` of a CSV or XLSX schedule, values as read (text or dates).

    Raises :class:`InputError` naming the file and row: a missing column, a column given twice
    (one name repeated, refused by ``read_csv``, or two spellings of it), a blank or repeated
    phase. The dates are parsed (and refused, naming the polygon) by the phasing check.
    ``sheet`` names a workbook's sheet (default: the one sheet whose header names ``phase``).
    """
    path = Path(path)
    if not path.exists():
        raise InputError(
            "the schedule file does not exist", path=path, parameter="schedule", fix="check the path"
        )
    xlsx = path.suffix.lower() in (".xlsx", ".ods")
    if sheet and not xlsx:
        raise InputError(
            f"a sheet ('{sheet}') is named, and the schedule is not a workbook (.xlsx, .ods)",
            path=path,
            parameter="schedule_sheet",
            fix="name no sheet for a CSV schedule",
        )
    header, rows = _xlsx_table(path, sheet) if xlsx else _csv_table(path)
    columns = {}
    for key, names in SCHEDULE_COLUMNS.items():
        found = [h for h in header if h in names]
        if not found:
            raise InputError(
                f"no column '{key}' (columns: {', '.join(h for h in header if h)})",
                path=path,
                row=1,
                parameter="schedule",
                fix=_HOW,
            )
        if len(found) > 1:  # two spellings of one column: which to read would be a guess
            where = " and ".join(f"'{h}' (column {header.index(h) + 1})" for h in found)
            raise InputError(
                f"the columns {where} both give the {key} date",
                path=path,
                row=1,
                column=found[1],
                parameter="schedule",
                fix=f"keep one of them; {_HOW}",
            )
        columns[key] = found[0]
    out: dict[str, tuple[Any, Any]] = {}
    seen: dict[str, tuple[int, str]] = {}  # a phase's normalised key: its first row, as written
    for number, cells in rows:
        if all(phase_name(c) is None for c in cells.values()):
            continue  # a blank line
        phase = phase_name(cells.get(columns["phase"]))
        if phase is None:
            raise InputError(
                "the phase is blank",
                path=path,
                row=number,
                column="phase",
                parameter="schedule",
                fix="name the phase of each row",
            )
        if phase in out:
            raise InputError(
                f"phase {phase} has a second row",
                path=path,
                row=number,
                column="phase",
                parameter="schedule",
                fix="give each phase one row (its first start and last stabilisation)",
            )
        key = _key(phase)
        if key in seen:  # "2" and "2.0", "Phase 2" and "02": one phase written twice
            first, written = seen[key]
            raise InputError(
                f"rows {first} ('{written}') and {number} ('{phase}') are one phase written "
                "twice (phases compared without a leading 'Phase', leading zeros and a '.0'): "
                "which row's dates hold would be a guess",
                path=path,
                row=number,
                column="phase",
                parameter="schedule",
                fix="give each phase one row, its name written as the plan writes it",
            )
        seen[key] = (number, phase)
        out[phase] = (_blank(cells.get(columns["start"])), _blank(cells.get(columns["stabilized"])))
    return out


def _key(phase) -> str:
    """The key two spellings of one phase share: ``_bare`` (no 'Phase', no leading zeros) and a
    whole number written with a decimal point ('2.0') as the number ('2')."""
    text = _bare(phase)
    return re.sub(r"^(\d+)\.0*$", r"\1", text).lower()


def _blank(value):
    return None if isinstance(value, str) and not value.strip() else value


def _csv_table(path: Path) -> tuple[list[str], list[tuple[int, dict]]]:
    """The header and ``(line, {column: text})`` rows of a CSV schedule: the records' one
    reader (:func:`~analysis.io.csv_rows.read_csv`), blank lines left out."""
    table = read_csv(path, (), "schedule", parameter="schedule")
    return table.header, table.rows


def _xlsx_table(path: Path, sheet: str | None = None) -> tuple[list[str], list[tuple[int, dict]]]:
    """The header and ``(row, {column: cell})`` rows of a workbook's schedule sheet (the header
    is row 1), as :func:`_csv_table` gives a CSV's."""
    rows = _xlsx_rows(path, sheet)
    if not rows:
        raise InputError("the schedule is empty", path=path, parameter="schedule", fix=_HOW)
    header = [str(h).strip().lower() if h is not None else "" for h in rows[0]]
    return header, [
        (number, dict(zip(header, list(row) + [None] * (len(header) - len(row)))))
        for number, row in enumerate(rows[1:], start=2)
    ]


def _xlsx_rows(path: Path, given: str | None = None) -> list[list]:
    """The schedule sheet's rows, header first, through GDAL's XLSX/ODS driver.

    GDAL takes the first row as the header where it looks like one; where it does not (every
    cell text), the header is the first row of values. A heading written twice is refused as
    a CSV's is: GDAL would keep one of the two columns (or rename one) without a word; so are
    merged cells (GDAL reads a merged range's value in its first cell alone).
    """
    from ..io.sheets import check_sheet
    from ..io.vector import read_layer

    sheet, written = _schedule_sheet(path, given)
    refuse_repeated_columns(path, "schedule", written, [h.strip().lower() for h in written], "schedule")
    # read_layer refuses them too; checked here first so that the refusal names --schedule
    check_sheet(path, sheet, parameter="schedule")
    frame = read_layer(path, sheet, read_geometry=False).frame
    rows = [[_plain(v) for v in record] for record in frame.itertuples(index=False, name=None)]
    header = [str(c) for c in frame.columns if c != "geometry"]
    if not _KNOWN & {h.strip().lower() for h in header} and rows:
        return rows
    return [header] + rows


_KNOWN = {name for names in SCHEDULE_COLUMNS.values() for name in names}


def _schedule_sheet(path: Path, given: str | None = None) -> tuple[str, list[str]]:
    """(the sheet holding the schedule, its first row as written): ``given`` (``--sheet``), else
    the one sheet whose first row names a phase column, else the first sheet. Two such sheets
    are refused (which one is the schedule would be a guess: ``--sheet`` chooses); sheets
    without one that hold anything are named in a warning, being left unread."""
    from ..io.vector import first_row, list_layers

    sheets = list_layers(path)
    if not sheets:
        raise InputError("the workbook has no sheet", path=path, parameter="schedule", fix=_HOW)
    if given is not None:
        if given not in sheets:
            raise InputError(
                f"the workbook has no sheet '{given}' (sheets: {', '.join(sheets)})",
                path=path,
                parameter="schedule_sheet",
                fix="name one of its sheets, as written",
            )
        return given, first_row(path, given)
    rows = {sheet: first_row(path, sheet) for sheet in sheets}
    phases = SCHEDULE_COLUMNS["phase"]
    found = [s for s, row in rows.items() if any(c.strip().lower() in phases for c in row)]
    if len(found) > 1:
        raise InputError(
            f"the sheets {', '.join(repr(s) for s in found)} each hold a schedule "
            "(a 'phase' column): which one to read would be a guess",
            path=path,
            parameter=("schedule", "schedule_sheet"),
            fix="name the schedule's sheet, or keep the schedule on one sheet",
        )
    chosen = found[0] if found else sheets[0]
    unread = [s for s, row in rows.items() if s != chosen and any(c.strip() for c in row)]
    if unread:
        log.warning(
            "%s",
            InputError(
                f"the sheet(s) {', '.join(repr(s) for s in unread)} were not read: the schedule is "
                f"the sheet '{chosen}'",
                path=path,
                layer=chosen,
                fix="move any phase rows there onto that sheet",
            ),
        )
    return chosen, rows[chosen]


def _plain(value):
    """A cell as Python: GDAL writes a date cell in a column of mixed cells as ``YYYY/MM/DD``
    text, which is that date (year first: unambiguous), so it is read as ISO."""
    import pandas as pd

    if value is None or (isinstance(value, float) and value != value):
        return None
    if isinstance(value, pd.Timestamp):
        return None if pd.isna(value) else value.to_pydatetime()
    if isinstance(value, str) and _GDAL_DATE.match(value.strip()):
        return value.strip().replace("/", "-")
    return value
