"""Construction-phase checks: inspection frequency, 48-hour notices, sediment cleanout."""

import dataclasses
from datetime import date, datetime, timedelta

import pytest

from analysis.errors import InputError
from analysis.findings import FAIL, NEEDS_REVIEW, PASS, WARN
from analysis.profile import load_profile
from analysis.records.inspections import (
    InspectionReport,
    Notice,
    TrapReading,
    check_inspection_frequency,
    check_inspection_notice,
    check_record_files,
    check_sediment_cleanout,
    construction_period,
    find_storms,
    read_inspection_log,
    read_notices,
    read_traps,
)
from analysis.records.rainfall import Rainfall
from tests.conftest import TEST_DATA

DAY0 = date(2027, 4, 1)
PROFILE = load_profile()


def day(n):
    return DAY0 + timedelta(days=n)


def reports(*days):
    return [InspectionReport(datetime.combine(day(n), datetime.min.time()), "I", "routine") for n in days]


def rain(**inches_by_day):
    """Rainfall known on days 0..30: dry except the days given as d<N>=inches."""
    daily = {day(n): 0.0 for n in range(31)}
    daily.update({day(int(k[1:])): v for k, v in inches_by_day.items()})
    return Rainfall("rain.csv", None, daily)


def profile_with(**inspections):
    return dataclasses.replace(PROFILE, inspections=dataclasses.replace(PROFILE.inspections, **inspections))


def fails(findings):
    return [(f.features, f.value) for f in findings if f.status == FAIL]


# Every 7 days, from the period's start (day 0) to its end (day 14 unless said).
@pytest.mark.parametrize(
    "report_days, end, expected",
    [
        ((0, 7, 14), 14, []),
        ((0, 8), 14, [([f"due:{day(7)}"], 1.0)]),
        ((3, 10), 14, []),
        ((0,), 14, [([f"due:{day(7)}"], None), ([f"due:{day(14)}"], None)]),
        ((), 14, [([f"due:{day(7)}"], None), ([f"due:{day(14)}"], None)]),
        ((0, 20), 21, [([f"due:{day(7)}"], 13.0), ([f"due:{day(14)}"], 6.0)]),
        ((0, 7), 13, []),  # next due day 14 falls after the period
    ],
    ids=["0-7-14", "0-8", "3-10", "only-0", "none", "gap-of-20", "ends-before-due"],
)
def test_weekly_reports(report_days, end, expected):
    findings, _ = check_inspection_frequency(reports(*report_days), rain(), DAY0, day(end), PROFILE)
    assert fails(findings) == expected
    assert [f.status for f in findings] == ([PASS] if not expected else [FAIL] * len(expected))


# Storms: weekly reports on days 0, 7 and 13 (period 0..14) plus the ones given.
@pytest.mark.parametrize(
    "rain_days, extra, storm_days, expected",
    [
        ({"d2": 0.6}, (3,), "consecutive", []),  # report the next day
        ({"d2": 0.6}, (2,), "consecutive", []),  # same day
        ({"d2": 0.6}, (4,), "consecutive", [([f"due:{day(3)}", f"storm:{day(2)}"], 1.0)]),  # 2 days later
        ({"d2": 0.6}, (), "consecutive", [([f"due:{day(3)}", f"storm:{day(2)}"], 4.0)]),  # next is day 7
        ({"d2": 0.49}, (), "consecutive", []),  # under 0.5 inch: no duty
        ({"d2": 0.5}, (), "consecutive", [([f"due:{day(3)}", f"storm:{day(2)}"], 4.0)]),  # exactly 0.5
        ({"d14": 0.7}, (15,), "consecutive", []),  # last day, answered after it
        ({"d14": 0.7}, (), "consecutive", [([f"due:{day(15)}", f"storm:{day(14)}"], None)]),
        ({"d2": 0.3, "d3": 0.3}, (), "consecutive", [([f"due:{day(4)}", f"storm:{day(2)}"], 3.0)]),
        ({"d2": 0.3, "d3": 0.3}, (), "each_day", []),  # two 0.3-inch storms
        ({"d2": 0.3, "d3": 0.3}, (2,), "consecutive", [([f"due:{day(4)}", f"storm:{day(2)}"], 3.0)]),
        ({"d2": 0.3, "d3": 0.3}, (4,), "consecutive", []),
        ({"d2": 0.6, "d3": 0.6}, (3,), "each_day", []),
        ({"d2": 0.6, "d3": 0.6}, (4,), "each_day", [([f"due:{day(3)}", f"storm:{day(2)}"], 1.0)]),
    ],
    ids=[
        "next-day",
        "same-day",
        "two-days-later",
        "none-till-weekly",
        "0.49",
        "0.50",
        "last-day-answered",
        "last-day-unanswered",
        "wet-run",
        "wet-run-each-day",
        "report-inside-run",
        "report-after-run",
        "each-day-both-answered",
        "each-day-first-missed",
    ],
)
def test_storm_reports(rain_days, extra, storm_days, expected):
    profile = profile_with(storm_days=storm_days)
    log = reports(*sorted((0, 7, 13) + extra))
    findings, _ = check_inspection_frequency(log, rain(**rain_days), DAY0, day(14), profile)
    assert fails(findings) == expected


def test_the_hours_a_storm_report_has_come_from_the_profile():
    """48 hours: a daily storm on day 2 is answered up to the end of day 4 (24: day 3)."""
    profile = profile_with(storm_report_within_hours=48)
    log = reports(0, 4, 7, 13)
    (storm,) = find_storms(rain(d2=0.6), DAY0, day(14), profile)
    assert (storm.report_hours, storm.due) == (48, day(4))
    findings, _ = check_inspection_frequency(log, rain(d2=0.6), DAY0, day(14), profile)
    assert fails(findings) == [] and "within 48 hours" in findings[0].message
    findings, _ = check_inspection_frequency(log, rain(d2=0.6), DAY0, day(14), PROFILE)
    assert fails(findings) == [([f"due:{day(3)}", f"storm:{day(2)}"], 1.0)]


def test_storms_are_only_those_in_the_period():
    storms = find_storms(rain(d2=0.6, d20=0.9), DAY0, day(14), PROFILE)
    assert [(s.first_day, s.due, s.precip_in) for s in storms] == [(day(2), day(3), 0.6)]


def test_unknown_rain_days_need_review():
    record = rain(d2=0.1)
    del record.daily[day(5)]
    findings, measured = check_inspection_frequency(reports(0, 7, 14), record, DAY0, day(14), PROFILE)
    assert [f.status for f in findings] == [PASS, NEEDS_REVIEW]
    assert findings[1].features == [f"rain:{day(5)}"] and measured["rain_unknown_days"] == 1


# Notices 48 hours ahead of each milestone.
@pytest.mark.parametrize(
    "hours_ahead, status, value, short",
    [
        (48, PASS, None, None),
        (72, PASS, None, None),
        (47, FAIL, 47.0, "1 hour short"),
        (0.5, FAIL, 0.5, "47.5 hours short"),
        (None, FAIL, None, "no notice"),
        (-5, FAIL, -5.0, "notified 5 hours after it, 53 hours short"),
    ],
)
def test_notice_hours(hours_ahead, status, value, short):
    at = datetime(2027, 4, 2, 7, 0)
    notified = None if hours_ahead is None else at - timedelta(hours=hours_ahead)
    findings, _ = check_inspection_notice([Notice(2, "erosion_controls_installed", at, notified)], PROFILE)
    assert findings[0].status == status and findings[0].value == value
    if short:
        assert short in findings[0].message
        assert findings[0].features == ["milestone:erosion_controls_installed", "due:2027-03-31"]
    absent = findings[-1]
    assert absent.status == NEEDS_REVIEW and len(absent.features) == 7  # the other milestones


def test_notices_file_refuses_unknown_milestone(tmp_path):
    path = tmp_path / "n.csv"
    path.write_text(
        "milestone,milestone_at,notified_at\nstart_of_construction,2027-04-01,2027-03-28\n"
        "groundbreaking,2027-04-01,2027-03-28\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError, match=r"row 3, column 'milestone': milestone 'groundbreaking'"):
        read_notices(path, PROFILE)


# Sediment traps: 50% of design capacity cleaned out by the next inspection (log days 0, 7).
@pytest.mark.parametrize(
    "sediment, cleaned, status",
    [
        (49, None, PASS),
        (50, None, FAIL),
        (50, 7, PASS),
        (50, 3, PASS),
        (50, 8, FAIL),
        (80, None, FAIL),
    ],
)
def test_trap_cleanout(sediment, cleaned, status):
    reading = TrapReading(
        2, "ST-1", day(0), 100.0, float(sediment), None if cleaned is None else day(cleaned)
    )
    findings, rows = check_sediment_cleanout([reading], reports(0, 7), PROFILE)
    assert [f.status for f in findings] == [status]
    assert rows[0]["reached"] is (sediment >= 50)
    if status == FAIL:
        assert findings[0].features == ["trap:ST-1", f"due:{day(7)}"]


def test_trap_without_next_inspection_warns():
    reading = TrapReading(2, "ST-1", day(7), 100.0, 60.0, None)
    findings, _ = check_sediment_cleanout([reading], reports(0, 7), PROFILE)
    assert [f.status for f in findings] == [PASS, WARN]


@pytest.mark.parametrize(
    "reader, text, match",
    [
        (read_inspection_log, "date,inspector,kind\n2027-04-01,A,weekly\n", r"row 2, column 'kind'"),
        (read_inspection_log, "date,inspector,kind\n2027-13-01,A,routine\n", r"row 2, column 'date'"),
        (read_inspection_log, "date,inspector\n2027-04-01,A\n", r"lacks column\(s\) 'kind'"),
        (
            read_traps,
            "trap_id,date,design_capacity_cf,sediment_cf,cleaned_on\nST-1,2027-04-01,0,1,\n",
            r"row 2, column 'design_capacity_cf': 0 is out of range",
        ),
        (
            read_traps,
            "trap_id,date,design_capacity_cf,sediment_cf,cleaned_on\nST-1,2027-04-05,10,1,2027-04-01\n",
            r"row 2, column 'cleaned_on': cleaned_on 2027-04-01 is before",
        ),
    ],
)
def test_records_refused_naming_row_and_column(tmp_path, reader, text, match):
    path = tmp_path / "records.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        reader(path)


def test_period_from_site_plan(data_copy):
    from analysis.siteplan.plan import load_site_plan

    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    assert construction_period(site) == (date(2027, 4, 1), date(2027, 11, 15))


def test_period_reads_dates_as_the_phasing_check_does(make_site):
    """Date objects count; an unreadable date is left to phasing_five_acres, not a crash."""
    from analysis.siteplan.plan import load_site_plan
    from tests.analysis.conftest import square

    site = load_site_plan(make_site([square(1.0), square(1.0, x=600_000.0)]), PROFILE)
    frame = site.layer("disturbance")
    frame["start_date"] = ["04/01/2027", date(2027, 3, 2)]
    frame["stabilized_date"] = [None, "2027-05-01"]
    assert construction_period(site) == (date(2027, 3, 2), None)


def test_shipped_records_give_the_documented_findings():
    records = TEST_DATA / "records"
    result = check_record_files(
        PROFILE,
        records / "inspection_log.csv",
        records / "rain.csv",
        start=date(2027, 4, 1),
        end=date(2027, 11, 15),
        notices=records / "notices.csv",
        traps=records / "traps.csv",
    )
    failed = sorted((f.rule, tuple(f.features)) for f in result.findings if f.status == FAIL)
    assert failed == sorted(
        [
            ("inspection_frequency", ("due:2027-05-06",)),
            ("inspection_frequency", ("due:2027-06-10", "storm:2027-06-08")),
            ("inspection_notice", ("milestone:erosion_controls_installed", "due:2027-03-31")),
            ("inspection_notice", ("milestone:rough_grading_complete", "due:2027-06-28")),
            ("sediment_cleanout", ("trap:ST-2", "due:2027-07-10")),
        ]
    )
    assert result.exit_status == 1
    assert [s["first_day"] for s in result.measurements["storms"]] == ["2027-04-20", "2027-06-08"]


def test_period_given_twice_is_refused():
    with pytest.raises(InputError, match="not both"):
        check_record_files(PROFILE, "log.csv", "rain.csv", site="s.gpkg", start=DAY0)


def hourly_rain(tmp_path, wet):
    """An hourly record of days 0..3 (every hour listed, its end as the time): dry but ``wet``,
    a map from hour-end offsets (hours after day 0 00:00) to inches."""
    lines = ["date,precip_in"]
    start = datetime.combine(DAY0, datetime.min.time())
    for h in range(1, 4 * 24 + 1):
        lines.append(f"{start + timedelta(hours=h):%Y-%m-%d %H:%M},{wet.get(h, 0.0)}")
    path = tmp_path / "hourly.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    from analysis.records.rainfall import read_rainfall

    return read_rainfall(path)


def timed(*moments):
    return [InspectionReport(datetime.fromisoformat(m), "I", "routine", timed=len(m) > 10) for m in moments]


# Hourly rain: a storm ends with its last wet hour; 24 hours from then. Weekly reports aside
# (period of 3 days: none due). Offsets are hour ends after day 0 00:00 (2027-04-01).
@pytest.mark.parametrize(
    "wet, log, expected",
    [
        ({14: 0.3, 15: 0.3}, ("2027-04-02 14:00",), []),  # ends 15:00, report 23 h later
        ({14: 0.3, 15: 0.3}, ("2027-04-02 16:00",), [("due:2027-04-02", 0.0)]),  # 25 hours: late
        ({14: 0.3, 15: 0.3}, ("2027-04-02",), []),  # date only: its day overlaps
        ({14: 0.3, 15: 0.3}, ("2027-04-01 12:00",), [("due:2027-04-02", None)]),  # before the storm
        ({14: 0.3, 20: 0.3}, (), [("due:2027-04-02", None)]),  # 5 dry hours: one 0.6 storm
        ({14: 0.3, 21: 0.3}, (), []),  # 6 dry hours: two of 0.3, no duty
        ({23: 0.3, 26: 0.3}, ("2027-04-03 01:00",), []),  # over midnight, ends 02:00 day 1
    ],
    ids=["23-hours", "25-hours", "date-only", "before", "five-dry-hours", "six-dry-hours", "midnight"],
)
def test_hourly_storms(tmp_path, wet, log, expected):
    findings, measured = check_inspection_frequency(
        timed("2027-04-01 00:00", *log), hourly_rain(tmp_path, wet), DAY0, day(3), PROFILE
    )
    assert [(f.features[0], f.value) for f in findings if f.status == FAIL] == expected
    assert not [f for f in findings if f.status == NEEDS_REVIEW]


def test_hourly_record_missing_hours_are_unknown_days(tmp_path):
    hourly_rain(tmp_path, {})
    path = tmp_path / "hourly.csv"
    text = path.read_text(encoding="utf-8").replace("2027-04-02 05:00,0.0\n", "")
    path.write_text(text, encoding="utf-8")
    from analysis.records.rainfall import read_rainfall

    rain_record = read_rainfall(path)
    assert rain_record.unknown_days(DAY0, day(3)) == [day(1)]
    assert "1 hour(s) not recorded" in rain_record.rejected[day(1)]
