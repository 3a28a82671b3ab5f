"""The penalty schedule (Enforcement E, F): offence numbers, five-year boundary, continuing violations."""

import dataclasses
from datetime import date, timedelta

import pytest

from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.records.penalty import Offence, assess_penalty, read_history, years_after

PROFILE = load_profile()
FIRST = date(2021, 3, 1)
EXACTLY_FIVE_YEARS = date(2026, 3, 1)


def history(*days, kind="civil", person="Forest Road Commons LLC"):
    return [Offence(person, d, kind) for d in days]


# A third offence four years 364 days after the first, and one exactly five years and five
# years and a day after (the second offence in 2023 always counts).
@pytest.mark.parametrize(
    "on, number, counted",
    [
        (date(2024, 6, 1), 3, [FIRST, date(2023, 5, 1)]),
        (years_after(FIRST, 4) + timedelta(days=364), 3, [FIRST, date(2023, 5, 1)]),  # 2026-02-28
        (EXACTLY_FIVE_YEARS, 3, [FIRST, date(2023, 5, 1)]),  # the day five years on counts
        (EXACTLY_FIVE_YEARS + timedelta(days=1), 2, [date(2023, 5, 1)]),
        (date(2028, 5, 2), 1, []),
    ],
)
@pytest.mark.parametrize("kind", ["criminal", "civil"])
def test_offence_number_within_five_years(on, number, counted, kind):
    a = assess_penalty(
        history(FIRST, date(2023, 5, 1), kind=kind), "forest road  commons llc", on, kind, PROFILE
    )
    assert (a.offence_number, a.counted) == (number, counted)
    fines = PROFILE.penalty.fines(kind)
    assert (a.fine_min, a.fine_max) == tuple(float(x) for x in fines[number - 1])
    assert a.imprisonment_max_days == (14 if kind == "criminal" else 0)


@pytest.mark.parametrize(
    "offences, on, number",
    [
        (history(date(2023, 1, 1), kind="criminal"), date(2024, 1, 1), 1),  # other kind not counted
        (history(date(2023, 1, 1), person="Someone Else"), date(2024, 1, 1), 1),
        (history(date(2024, 1, 1)), date(2024, 1, 1), 1),  # the same day: itself
        (history(date(2025, 1, 1)), date(2024, 1, 1), 1),  # later offences
        (
            history(date(2020, 1, 1), date(2021, 1, 1), date(2022, 1, 1), date(2023, 1, 1)),
            date(2024, 1, 1),
            5,
        ),
    ],
)
def test_what_is_counted(offences, on, number):
    assert assess_penalty(offences, "Forest Road Commons LLC", on, "civil", PROFILE).offence_number == number


@pytest.mark.parametrize(
    "day, years, expected",
    [
        (date(2021, 3, 1), 5, date(2026, 3, 1)),
        (date(2020, 2, 29), 5, date(2025, 2, 28)),
        (date(2020, 2, 29), 4, date(2024, 2, 29)),
    ],
)
def test_years_after(day, years, expected):
    assert years_after(day, years) == expected


# Continuing violations: each day (criminal) or each week begun (civil) a separate violation.
@pytest.mark.parametrize(
    "kind, days, separate",
    [
        ("civil", 1, 1),
        ("civil", 7, 1),
        ("civil", 8, 2),
        ("civil", 14, 2),
        ("civil", 15, 3),
        ("criminal", 1, 1),
        ("criminal", 15, 15),
    ],
)
def test_separate_violations(kind, days, separate):
    on = date(2027, 6, 1)
    a = assess_penalty([], "A", on, kind, PROFILE, until=on + timedelta(days=days - 1))
    assert a.continuing["separate_violations"] == separate
    # Civil escalates: violation k of the run is the k-th; third and later share a range.
    # Criminal does not: each day is priced as the first offence (issue 18).
    fines = PROFILE.penalty.fines(kind)
    ranges = [fines[min(k, 3) - 1] if kind == "civil" else fines[0] for k in range(1, separate + 1)]
    assert a.continuing["total_fine_min"] == sum(r[0] for r in ranges)
    assert a.continuing["total_fine_max"] == sum(r[1] for r in ranges)
    assert a.continuing["total_imprisonment_max_days"] == (14 * separate if kind == "criminal" else 0)


def test_fifteen_day_civil_violation_without_escalation():
    flat = dataclasses.replace(
        PROFILE, penalty=dataclasses.replace(PROFILE.penalty, civil_continuing_violations_escalate=False)
    )
    a = assess_penalty([], "A", date(2027, 6, 1), "civil", flat, until=date(2027, 6, 15))
    assert (a.continuing["separate_violations"], a.continuing["total_fine_max"]) == (3, 3 * 350.0)


def test_contract_json_shape():
    a = assess_penalty(history(FIRST), "Forest Road Commons LLC", date(2022, 1, 1), "civil", PROFILE)
    assert a.to_dict() == {
        "person": "Forest Road Commons LLC",
        "on": "2022-01-01",
        "kind": "civil",
        "section": "Enforcement F",
        "offence_number": 2,
        "fine_min": 350.0,
        "fine_max": 700.0,
        "imprisonment_max_days": 0,
        "counted": ["2021-03-01"],
    }


@pytest.mark.parametrize(
    "text, match",
    [
        ("person,date,kind\nA,2021-03-01,parking\n", r"row 2, column 'kind'"),
        ("person,date,kind\n,2021-03-01,civil\n", r"row 2, column 'person'"),
        ("person,date,kind\nA,1 March 2021,civil\n", r"row 2, column 'date'"),
        ("person,kind\nA,civil\n", r"lacks column\(s\) 'date'"),
    ],
)
def test_history_refused_naming_row_and_column(tmp_path, text, match):
    path = tmp_path / "history.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=match):
        read_history(path)


def test_continuing_violation_ending_before_it_starts():
    with pytest.raises(InputError, match="before it starts"):
        assess_penalty([], "A", date(2027, 6, 2), "civil", PROFILE, until=date(2027, 6, 1))
