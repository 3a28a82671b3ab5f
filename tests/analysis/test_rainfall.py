"""Rainfall records: the simple CSV and NOAA GHCN-Daily CSV (units, flags, stations)."""

from datetime import date

import pytest

from analysis.errors import InputError
from analysis.records.rainfall import read_rainfall
from analysis.units import MM_PER_INCH
from tests.conftest import TEST_DATA

GHCN_HEADER = '"STATION","NAME","DATE","PRCP","PRCP_ATTRIBUTES"\n'


def ghcn(tmp_path, *rows, name="ghcn.csv"):
    """A GHCN-Daily CSV as CDO exports it: every value quoted."""
    body = "".join(",".join(f'"{v}"' for v in row) + "\n" for row in rows)
    path = tmp_path / name
    path.write_text(GHCN_HEADER + body, encoding="utf-8")
    return path


def simple(tmp_path, text):
    path = tmp_path / "rain.csv"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "units, prcp, inches",
    [
        ("in", "0.62", 0.62),
        ("mm", "15.7", 15.7 / MM_PER_INCH),
        ("tenths_mm", "157", 15.7 / MM_PER_INCH),
    ],
)
def test_ghcn_units(tmp_path, units, prcp, inches):
    path = ghcn(tmp_path, ("USC1", "A, NY US", "2027-04-20", prcp, ",,7,0700"))
    rain = read_rainfall(path, units=units)
    assert rain.daily[date(2027, 4, 20)] == pytest.approx(inches, rel=1e-12)
    assert rain.station == "USC1"


@pytest.mark.parametrize(
    "prcp, attributes, known, reason",
    [
        ("", "", False, "missing"),  # CDO leaves a missing value blank
        ("-9999", ",,7,", False, "missing"),  # the .dly files' missing value
        ("0.80", ",I,7,0700", False, "quality check 'I'"),  # failed NOAA's consistency check
        ("0.00", "T,,7,0700", True, None),  # a trace: a dry day
        ("0.30", ",,7,0700", True, None),
    ],
)
def test_ghcn_flags(tmp_path, prcp, attributes, known, reason):
    path = ghcn(tmp_path, ("USC1", "A", "2027-05-03", prcp, attributes))
    rain = read_rainfall(path, units="in")
    day = date(2027, 5, 3)
    assert (day in rain.daily) is known
    assert rain.unknown_days(day, day) == ([] if known else [day])
    if reason:
        assert reason in rain.rejected[day]


def test_ghcn_several_stations_need_station(tmp_path):
    path = ghcn(tmp_path, ("USC1", "A", "2027-05-03", "0.1", ""), ("USC2", "B", "2027-05-03", "0.9", ""))
    with pytest.raises(InputError, match="several stations: USC1, USC2.*choose one station") as err:
        read_rainfall(path, units="in")
    assert err.value.parameters == ("station",)  # each front end names its own option
    assert read_rainfall(path, station="USC2", units="in").daily[date(2027, 5, 3)] == 0.9
    with pytest.raises(InputError, match="station USC9 is not in the file"):
        read_rainfall(path, station="USC9", units="in")


@pytest.mark.parametrize(
    "text, match",
    [
        ("date,rain\n2027-04-01,0.1\n", "neither 'date, precip_in'"),
        ("date,precip_in\n2027-04-01,abc\n", r"row 2, column 'precip_in': 'abc' is not a number"),
        ("date,precip_in\n2027-04-01,-0.1\n", r"row 2, column 'precip_in': -0.1 is out of range"),
        ("date,precip_in\n04/01/2027,0.1\n", r"row 2, column 'date': '04/01/2027' is not an ISO date"),
        (
            "date,precip_in\n2027-04-01,0.1\n2027-04-01,0.2\n",
            r"row 3, column 'date': 2027-04-01 appears twice",
        ),
    ],
)
def test_simple_csv_refused_naming_row_and_column(tmp_path, text, match):
    path = simple(tmp_path, text)
    with pytest.raises(InputError, match=match) as err:
        read_rainfall(path)
    assert str(path) in str(err.value) and "Fix:" in str(err.value)


def test_ghcn_without_units_is_refused(tmp_path):
    path = ghcn(tmp_path, ("USC1", "A", "2027-05-03", "0.1", ""))
    with pytest.raises(InputError, match="does not say in which units.*tenths_mm") as err:
        read_rainfall(path)
    assert err.value.parameters == ("rain_units",)


def test_simple_csv_blank_is_unknown(tmp_path):
    rain = read_rainfall(simple(tmp_path, "date,precip_in\n2027-04-01,0.5\n2027-04-02,\n"))
    assert rain.daily == {date(2027, 4, 1): 0.5}
    assert rain.unknown_days(date(2027, 4, 1), date(2027, 4, 3)) == [date(2027, 4, 2), date(2027, 4, 3)]


def test_shipped_ghcn_matches_the_simple_record():
    """The shipped GHCN file's first station is the simple record, less its flagged days."""
    plain = read_rainfall(TEST_DATA / "records" / "rain.csv")
    noaa = read_rainfall(TEST_DATA / "records" / "rain_ghcn.csv", station="USC00309991", units="in")
    assert sorted(noaa.rejected) == [date(2027, 8, 2), date(2027, 9, 14)]
    assert {d: v for d, v in plain.daily.items() if d not in noaa.rejected} == noaa.daily
