"""Dates read one way everywhere: ISO ``YYYY-MM-DD`` text, a date, or a date-time's day.

A site plan's date fields are read with :func:`parse_date` when the plan is loaded
(``analysis.siteplan.plan``); records, command-line options and stored time stamps use
:func:`require_date` and :func:`parse_datetime`; a day an option or parameter gives,
:func:`given_day`. docs/CONTRACT.md: dates are ISO ``YYYY-MM-DD``.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any, Optional, overload

import numpy as np
import pandas as pd

from .errors import InputError
from .values import has_text

if TYPE_CHECKING:
    from .profile import Inputs

__all__ = ["parse_date", "require_date", "parse_datetime", "in_range", "ISO_HINT"]

ISO_HINT = "write it as YYYY-MM-DD"
# A date, optionally followed by a time (fiona reads a GeoPackage DateTime as such text).
_ISO_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})(?:[T ].*)?$")


def parse_date(value: object) -> tuple[Optional[date], bool]:
    """``(date, readable)`` of a date field's value: ISO ``YYYY-MM-DD`` text, a date or datetime.

    Missing values (None, NaN, NaT, blank text) give ``(None, True)``; anything that is there
    but not a date gives ``(None, False)``. A date-time (or its ISO text) gives its day.

    >>> parse_date("2027-04-01"), parse_date(None), parse_date("04/01/2027")
    ((datetime.date(2027, 4, 1), True), (None, True), (None, False))
    >>> parse_date("2027-02-30")
    (None, False)
    """
    if isinstance(value, np.datetime64):
        value = pd.Timestamp(value)
    if not has_text(value):  # None, NaN, NaT, blank text
        return None, True
    if isinstance(value, datetime):  # pandas.Timestamp too
        return value.date(), True
    if isinstance(value, date):
        return value, True
    if isinstance(value, str):
        match = _ISO_DATE.match(value.strip())
        if match:
            try:
                return date(*map(int, match.groups())), True
            except ValueError:
                return None, False
    return None, False


def require_date(value: object, what: str, **where: Any) -> Optional[date]:
    """:func:`parse_date`'s day of ``value``, or an InputError saying ``what`` is not a date.

    ``where`` (``path``, ``layer``, ``feature``, ``field``) is passed to the error, which names
    them; a missing value gives None.

    >>> require_date("2027-04-01", "--from")
    datetime.date(2027, 4, 1)
    """
    day, readable = parse_date(value)
    if not readable:
        raise InputError(
            f"{what} {value!r} is not an ISO date (YYYY-MM-DD)", fix=where.pop("fix", ISO_HINT), **where
        )
    return day


def in_range(day: Optional[date], earliest: date, latest: date, what: str, **where: Any) -> Optional[date]:
    """``day`` where it lies from ``earliest`` to ``latest`` (the profile's [inputs]), None
    where it is None; an InputError naming ``where`` otherwise (9999-12-31 is a typing error,
    and no date arithmetic is done on it).

    >>> in_range(date(9999, 12, 31), date(1900, 1, 1), date(2199, 12, 31), "--to")
    Traceback (most recent call last):
    ...
    analysis.errors.InputError: --to is 9999-12-31, outside 1900-01-01 to 2199-12-31. Fix: correct the date
    """
    if day is not None and not earliest <= day <= latest:
        raise InputError(
            f"{what} is {day.isoformat()}, outside {earliest.isoformat()} to {latest.isoformat()}",
            fix=where.pop("fix", "correct the date"),
            **where,
        )
    return day


def parse_datetime(text: str) -> datetime:
    """An ISO date (midnight) or date-time (``YYYY-MM-DD HH:MM`` or ``T``), any time zone dropped
    (local time at the site, as construction records keep it); ValueError where it is not one."""
    moment = datetime.fromisoformat(str(text).strip())
    return moment.replace(tzinfo=None) if moment.tzinfo is not None else moment


@overload
def given_day(text: str, name: str, limits: Optional[Inputs] = None) -> date: ...
@overload
def given_day(text: None, name: str, limits: Optional[Inputs] = None) -> None: ...
def given_day(text: Optional[str], name: str, limits: Optional[Inputs] = None) -> Optional[date]:
    """An ISO date given as the option or parameter ``name`` (``--from``, ``FROM``; None stays
    None; blank text is not a date), inside the profile's range of dates (``limits``, its
    [inputs]) where given."""
    if text is None:
        return None
    day = require_date(text, name, fix=f"write {name} YYYY-MM-DD")
    if day is None:  # given, but blank: not the option left out
        raise InputError(f"{name} {text!r} is not an ISO date (YYYY-MM-DD)", fix=f"write {name} YYYY-MM-DD")
    if limits is not None:
        in_range(
            day,
            limits.earliest_date,
            limits.latest_date,
            name,
            fix=f"correct {name} (the profile's [inputs] gives the range)",
        )
    return day
