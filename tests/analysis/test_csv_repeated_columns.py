"""A CSV whose header names a column twice is refused (exit 2, nothing written), for every CSV
the product reads through ``io.csv_rows.read_csv``: one of the two columns' values would
otherwise be lost without a word."""

from __future__ import annotations

import json

import pytest

from analysis.cli.app import main
from analysis.errors import InputError
from analysis.io.csv_rows import read_csv
from tests.conftest import TEST_DATA

RECORDS = TEST_DATA / "records"
PHASED = TEST_DATA / "variants" / "phasing_over_five.gpkg"


def repeat_column(source, target, name, spelled):
    """``source`` with a last column ``spelled`` (``name`` in another case) repeating ``name``'s
    values: the header names ``name`` twice. Returns the two columns' positions (1-based) and
    the first one's spelling."""
    lines = source.read_text(encoding="utf-8").splitlines()
    header = [h.strip('"') for h in lines[0].split(",")]
    position = [h.lower() for h in header].index(name) + 1
    out = [lines[0] + f",{spelled}"]
    out += [line + "," + line.split(",")[position - 1] if line.strip() else line for line in lines[1:]]
    target.write_text("\n".join(out) + "\n", encoding="utf-8")
    return position, len(header) + 1, header[position - 1]


def write_schedule(path):
    path.write_text(
        "phase,start,stabilized\n1,2027-04-01,2027-07-01\n2,2027-06-01,2027-09-01\n", encoding="utf-8"
    )
    return path


# (the file's option, the shipped file or a schedule, the column repeated, the command around it)
CASES = {
    "inspection log": ("--log", RECORDS / "inspection_log.csv", "date"),
    "rainfall record": ("--rain", RECORDS / "rain.csv", "precip_in"),
    "rainfall record (GHCN-Daily)": ("--rain", RECORDS / "rain_ghcn.csv", "prcp"),
    "notices record": ("--notices", RECORDS / "notices.csv", "notified_at"),
    "sediment traps": ("--traps", RECORDS / "traps.csv", "sediment_cf"),
    "offence history": ("--history", RECORDS / "history.csv", "date"),
    "phasing schedule": ("--schedule", None, "start"),
}


def command(option, path, out_json):
    files = {
        "--log": RECORDS / "inspection_log.csv",
        "--rain": RECORDS / "rain.csv",
        "--notices": RECORDS / "notices.csv",
        "--traps": RECORDS / "traps.csv",
    }
    if option == "--history":
        return [
            "penalty",
            "--history",
            path,
            "--person",
            "Forest Road Commons LLC",
            "--on",
            "2027-06-12",
            "--kind",
            "civil",
            "--json",
            out_json,
        ]
    if option == "--schedule":
        return [
            "phasing",
            PHASED,
            "--layer",
            "disturbance",
            "--schedule",
            path,
            "--json",
            out_json,
            "--quiet",
        ]
    files[option] = path
    extra = ["--station", "USC00309991", "--rain-units", "in"] if "ghcn" in path.name else []
    return [
        "inspections",
        "check",
        *(x for pair in files.items() for x in pair),
        *extra,
        "--from",
        "2027-04-01",
        "--to",
        "2027-11-15",
        "--json",
        out_json,
        "--quiet",
    ]


@pytest.mark.parametrize("what", list(CASES))
def test_a_column_named_twice_is_refused_naming_file_column_and_both_positions(tmp_path, capsys, what):
    option, source, name = CASES[what]
    source = source or write_schedule(tmp_path / "schedule_source.csv")
    path = tmp_path / f"repeated_{source.name}"
    first, second, written = repeat_column(source, path, name, name.upper() + " ")
    out_json = tmp_path / "out.json"
    status = main([str(a) for a in command(option, path, out_json)])
    err = capsys.readouterr().err
    assert status == 2, err
    assert "Traceback" not in err and not out_json.exists()
    assert path.name in err and f"'{name}' twice" in err
    assert f"column {first} ('{written}')" in err and f"column {second} ('{name.upper()}')" in err
    assert "rename or delete one of the two columns" in err


def test_the_same_files_with_each_column_once_are_read(tmp_path, capsys):
    """The cases above fail only for the repeated column: each command reads its file whole."""
    for option, source, _name in CASES.values():
        source = source or write_schedule(tmp_path / "schedule.csv")
        out_json = tmp_path / "out.json"
        status = main([str(a) for a in command(option, source, out_json)])
        assert status in (0, 1), capsys.readouterr().err
        assert json.loads(out_json.read_text(encoding="utf-8"))
        out_json.unlink()


def test_the_refusal_itself(tmp_path):
    path = tmp_path / "log.csv"
    path.write_text("Date,inspector,kind, date \n2027-04-01,A,routine,2027-04-02\n", encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_csv(path, ("date", "inspector", "kind"), "inspection log", parameter="log")
    error = raised.value
    assert (error.row, error.column, error.parameters) == (1, "date", ("log",))
    assert "column 1 ('Date') and column 4 ('date')" in str(error)


def test_unnamed_columns_may_repeat(tmp_path):
    # A spreadsheet's empty trailing columns: no name, never read by one.
    path = tmp_path / "log.csv"
    path.write_text("date,inspector,kind,,\n2027-04-01,A,routine,,\n", encoding="utf-8")
    rows = read_csv(path, ("date", "inspector", "kind"), "inspection log")
    assert rows.rows == [(2, {"date": "2027-04-01", "inspector": "A", "kind": "routine", "": ""})]


def test_a_schedule_giving_one_date_under_two_spellings_is_refused(tmp_path):
    from analysis.siteplan.schedule import read_schedule

    path = tmp_path / "schedule.csv"
    path.write_text(
        "phase,start,stabilized,start_date\n1,2027-04-01,2027-07-01,2027-05-01\n", encoding="utf-8"
    )
    with pytest.raises(InputError) as raised:
        read_schedule(path)
    assert "'start' (column 2) and 'start_date' (column 4) both give the start date" in str(raised.value)
    assert raised.value.row == 1 and raised.value.parameters == ("schedule",)


def test_a_value_under_no_heading_is_refused_naming_row_and_column(tmp_path, capsys):
    """A note typed in a column the header row does not name was dropped without a word."""
    path = tmp_path / "log.csv"
    path.write_text(
        "date,inspector,kind,\n2027-04-01,A,routine,\n2027-04-08,A,routine,silt fence down at SP-1\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as raised:
        read_csv(path, ("date", "inspector", "kind"), "inspection log", parameter="log")
    assert raised.value.row == 3
    assert "('silt fence down at SP-1') in column 4, which the header row does not name" in str(raised.value)
    out_json = tmp_path / "out.json"
    assert main([str(a) for a in command("--log", path, out_json)]) == 2
    assert "Traceback" not in capsys.readouterr().err and not out_json.exists()
