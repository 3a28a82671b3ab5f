"""Daily rainfall records: the simple CSV and NOAA GHCN-Daily CSV exports, in inches per day."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..io.csv_rows import CsvRows, parse_date, parse_datetime, parse_number, read_csv
from ..units import MM_PER_INCH

if TYPE_CHECKING:
    from ..profile import Inputs

__all__ = ["Rainfall", "read_rainfall", "GHCN_UNITS"]

# What one unit of a GHCN-Daily PRCP value is, in inches. NOAA's Climate Data Online (CDO)
# exports give inches ("standard") or millimetres ("metric") as chosen when ordering; the
# per-station access files and anything made from the .dly files keep GHCN's tenths of a mm.
GHCN_UNITS = {"in": 1.0, "mm": 1.0 / MM_PER_INCH, "tenths_mm": 0.1 / MM_PER_INCH}
# GHCN-Daily measurement flag T: a trace (less than measurable), a dry day.
_TRACE_FLAG = "T"
_DLY_MISSING = "-9999"  # the .dly files' missing value, kept by some conversions


@dataclass(frozen=True)
class Rainfall:
    """Daily precipitation in inches; a day absent from ``daily`` was not recorded.

    ``rejected`` maps days whose value NOAA's quality control flagged, or left blank, to why:
    those days are unknown, not dry. From an hourly record, ``hourly`` maps each hour's end to
    its inches, and ``daily`` holds the days all 24 of whose hours are known.
    """

    source: str
    station: Optional[str]
    daily: dict = field(repr=False)
    rejected: dict = field(default_factory=dict, repr=False)
    format: str = "simple"
    hourly: Optional[dict] = field(default=None, repr=False)

    def unknown_days(self, start: date, end: date) -> list[date]:
        """Days from ``start`` to ``end`` (inclusive) with no usable value."""
        days = (start + timedelta(n) for n in range((end - start).days + 1))
        return [d for d in days if d not in self.daily]

    def describe(self) -> dict:
        return {"path": Path(self.source).name, "format": self.format, "station": self.station}


def read_rainfall(
    path: str | Path,
    station: Optional[str] = None,
    units: Optional[str] = None,
    limits: Optional[Inputs] = None,
) -> Rainfall:
    """Read a daily rainfall CSV: ``date, precip_in`` or a NOAA GHCN-Daily CSV export.

    Parameters
    ----------
    path : the CSV file. A header with ``STATION``, ``DATE`` and ``PRCP`` is read as GHCN-Daily.
    station : the GHCN station id to use; required when the file holds several stations.
    units : GHCN-Daily only: ``in``, ``mm`` or ``tenths_mm`` (see ``GHCN_UNITS``). The CSV
        does not say which; a GHCN file without it is refused.

    limits : the profile's [inputs]: the range of dates the rows may hold.

    A GHCN value with a quality flag (the second field of ``PRCP_ATTRIBUTES``), or a blank
    value, makes its day unknown; measurement flag ``T`` (trace) is a dry day.
    """
    rows = read_csv(path, (), "rainfall record", limits)
    if {"station", "date", "prcp"} <= set(rows.header):
        return _read_ghcn(rows, station, units)
    if "precip_in" not in rows.header or "date" not in rows.header:
        raise rows.error(
            "the rainfall record has neither 'date, precip_in' columns nor NOAA "
            "GHCN-Daily's 'STATION, DATE, PRCP'",
            fix="export daily precipitation as date,precip_in or as a GHCN-Daily CSV",
        )
    if station or units:
        raise rows.error(
            "a station and rain units apply to GHCN-Daily files only; this is "
            "the simple date,precip_in CSV (inches)",
            fix="leave out the station and the rain units",
            parameter=("station", "rain_units"),
        )
    if any(len(row["date"]) > 10 for _, row in rows.rows):
        return _read_hourly(rows)
    daily = {}
    for line, row in rows.rows:
        day = parse_date(rows, line, "date", row["date"])
        if day in daily:
            raise rows.error(f"{day} appears twice", line, "date", "keep one row per day")
        if row["precip_in"] == "":
            continue  # not recorded: an unknown day
        daily[day] = parse_number(rows, line, "precip_in", row["precip_in"])
    return Rainfall(str(path), None, daily, format="simple")


def _read_ghcn(rows: CsvRows, station: Optional[str], units: Optional[str]) -> Rainfall:
    if units not in GHCN_UNITS:
        raise rows.error(
            "a GHCN-Daily CSV does not say in which units PRCP is given",
            column="prcp",
            fix="choose its units: in (CDO export, standard units), mm (CDO export, "
            "metric units) or tenths_mm (NCEI access files and .dly-derived data)",
            parameter="rain_units",
        )
    stations = sorted({row["station"] for _, row in rows.rows})
    if station is None:
        if len(stations) > 1:
            raise rows.error(
                "the file holds several stations: " + ", ".join(stations),
                column="station",
                fix="choose one station of the file",
                parameter="station",
            )
        station = stations[0] if stations else None
    elif station not in stations:
        raise rows.error(
            f"station {station} is not in the file (it holds " + (", ".join(stations) or "no rows") + ")",
            column="station",
            fix="give one of the stations in the file",
            parameter="station",
        )
    scale = GHCN_UNITS[units]
    has_flags = "prcp_attributes" in rows.header
    daily, rejected = {}, {}
    for line, row in rows.rows:
        if row["station"] != station:
            continue
        day = parse_date(rows, line, "date", row["date"])
        if day in daily or day in rejected:
            raise rows.error(
                f"{day} appears twice for station {station}", line, "date", "keep one row per station and day"
            )
        flags = row["prcp_attributes"].split(",") if has_flags else []
        measurement = flags[0].strip() if flags else ""
        quality = flags[1].strip() if len(flags) > 1 else ""
        if row["prcp"] in ("", _DLY_MISSING):
            rejected[day] = "no PRCP value (missing)"
        elif quality:
            rejected[day] = f"PRCP failed NOAA quality check '{quality}'"
        elif measurement == _TRACE_FLAG:
            daily[day] = 0.0
        else:
            value = parse_number(rows, line, "prcp", row["prcp"])
            daily[day] = value * scale
    return Rainfall(str(rows.path), station, daily, rejected, format=f"ghcn-daily ({units})")


def _read_hourly(rows: CsvRows) -> Rainfall:
    """``date`` a date-time (the end of the hour its ``precip_in`` fell in), every hour listed;
    an hour absent or blank is unknown, and so is its day."""
    hourly, unknown = {}, set()
    for line, row in rows.rows:
        if len(row["date"]) <= 10:
            raise rows.error(
                f"'{row['date']}' is a date in an hourly record",
                line,
                "date",
                "give every row the end of its hour, YYYY-MM-DD HH:MM",
            )
        at = parse_datetime(rows, line, "date", row["date"])
        if at.minute or at.second:
            raise rows.error(
                f"{at} is not on the hour", line, "date", "give the end of each hour, e.g. 2027-04-20 13:00"
            )
        if at in hourly or at in unknown:
            raise rows.error(f"{at} appears twice", line, "date", "keep one row per hour")
        if row["precip_in"] == "":
            unknown.add(at)
            continue
        hourly[at] = parse_number(rows, line, "precip_in", row["precip_in"])
    daily: dict = {}
    hours: dict = {}
    for at, inches in hourly.items():
        day = (at - timedelta(hours=1)).date()  # the hour ending at midnight belongs to the day before
        daily[day] = daily.get(day, 0.0) + inches
        hours[day] = hours.get(day, 0) + 1
    complete = {d: v for d, v in daily.items() if hours[d] == 24}
    rejected = {d: f"{24 - hours[d]} hour(s) not recorded" for d in daily if hours[d] != 24}
    for at in unknown:
        day = (at - timedelta(hours=1)).date()
        rejected.setdefault(day, "hour(s) left blank")
    return Rainfall(str(rows.path), None, complete, rejected, format="hourly", hourly=hourly)
