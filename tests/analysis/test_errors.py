"""Library errors speak of the data and name the input; the command line adds its own option."""

import ast
import re
from pathlib import Path

import pytest

import analysis
from analysis.cli import main
from analysis.errors import InputError
from analysis.records.rainfall import read_rainfall
from tests.conftest import TEST_DATA

PACKAGE = Path(analysis.__file__).resolve().parent
RECORDS = TEST_DATA / "records"
FLAG = re.compile(r"(?<![\w-])--[a-z]")


def _raised_texts(path: Path):
    """Every string literal inside a ``raise`` statement of ``path``, with its line."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            for inner in ast.walk(node.exc):
                if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                    yield inner.lineno, inner.value


LIBRARY = sorted(p for p in PACKAGE.rglob("*.py") if "cli" not in p.relative_to(PACKAGE).parts)


def test_the_scan_finds_a_flag_in_a_raised_message(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('raise InputError("no station", fix="choose one with " "--station")\n')
    assert [FLAG.search(text) is not None for _, text in _raised_texts(bad)] == [False, True]


@pytest.mark.parametrize("module", LIBRARY, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_library_error_names_a_command_line_option(module):
    found = [(line, text) for line, text in _raised_texts(module) if FLAG.search(text)]
    assert not found, f"{module}: error text names a CLI option (give parameter= instead): {found}"


def test_parameter_is_kept_as_names_and_stays_out_of_the_message():
    one = InputError("the file holds several stations", fix="choose one", parameter="station")
    several = InputError("both are needed", parameter=("log", "rain"))
    assert one.parameters == ("station",) and several.parameters == ("log", "rain")
    assert InputError("x").parameters == ()
    assert str(one) == "the file holds several stations. Fix: choose one"


def test_library_error_speaks_of_the_data(tmp_path):
    path = tmp_path / "ghcn.csv"
    path.write_text("STATION,NAME,DATE,PRCP\nUSC1,A,2027-05-03,0.1\nUSC2,B,2027-05-03,0.2\n")
    with pytest.raises(InputError) as err:
        read_rainfall(path, units="in")
    assert "choose one station of the file" in str(err.value) and "--" not in str(err.value)
    assert err.value.parameters == ("station",)


def test_command_line_adds_the_option_of_the_command_that_ran(capsys):
    code = main(
        [
            "inspections",
            "check",
            "--log",
            str(RECORDS / "inspection_log.csv"),
            "--rain",
            str(RECORDS / "rain_ghcn.csv"),
            "--rain-units",
            "in",
            "--from",
            "2027-04-01",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "choose one station of the file" in err
    assert err.rstrip().endswith("(command line: --station ID)")


def test_command_line_hint_follows_each_commands_own_flag(capsys, tmp_path):
    # The inspection log is --log to `inspections check` and --inspections to `review`.
    code = main(
        [
            "review",
            str(TEST_DATA / "demo_site.gpkg"),
            "--rain",
            str(RECORDS / "rain.csv"),
            "--json",
            str(tmp_path / "r.json"),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "the inspection log and the rainfall record are both needed" in err
    assert "(command line: --inspections LOG.csv, --rain RAIN.csv)" in err
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    "command, flag",
    [
        (["import", "wetlands", "source.gpkg"], "--reference"),
        (["diff", "wetlands"], "--reference"),
        (["status"], "--reference"),
    ],
)
def test_command_line_hint_names_the_target_option_of_each_reference_command(capsys, tmp_path, command, flag):
    store = tmp_path / "reference.gpkg"
    code = main(["reference", *command, flag, str(store), "--schema", "gis"])
    err = capsys.readouterr().err
    assert code == 2 and "a schema is for a PostgreSQL target, not a GeoPackage" in err
    assert err.rstrip().endswith(f"(command line: --schema NAME, {flag} STORE)")
    assert not store.exists()
