"""One command surface (issue 34, item 8): one name per thing on every command, --json, --quiet
and the exit statuses on each, metavars that can be pasted, old spellings kept with a note."""

from __future__ import annotations

import argparse
import json
import re

import pytest

from analysis.cli.app import build_parser, main, option_hint
from analysis.cli.options import EXIT_STATUS, OUTPUT_OPTION, STORE_OPTION
from analysis.errors import InputError


def leaves(parser: argparse.ArgumentParser, path=()):
    """Every command that runs (``review``, ``reference import``, ...) and its parser."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield " ".join(path), parser
        return
    for name, sub in subs[0].choices.items():
        yield from leaves(sub, path + (name,))


COMMANDS = dict(leaves(build_parser()))


def test_the_commands_are_all_found():
    assert set(COMMANDS) == {
        "review",
        "letter",
        "certification-form",
        "phasing",
        "reference import",
        "reference status",
        "reference diff",
        "reference area-copy",
        "inspections check",
        "penalty",
        "nov",
        "screen",
    }


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_every_command_has_json_quiet_profile_and_its_exit_statuses(command):
    parser = COMMANDS[command]
    options = {s for a in parser._actions for s in a.option_strings}
    assert {"--json", "--quiet", "--profile"} <= options
    text = " ".join(parser.format_help().split())
    assert "Exit status: 0 " in text and "; 1 " in text and "; 2 an input was refused" in text
    assert "3 an internal error" in text


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_metavars_can_be_pasted_and_old_names_are_hidden(command):
    """No ``|``, braces or a destination's upper-case name (``ACCEPT_REJECTIONS``) in --help:
    what the usage shows is what is typed."""
    parser = COMMANDS[command]
    usage = parser.format_usage()
    for action in parser._actions:
        if action.nargs == 0 or isinstance(action, argparse._HelpAction):
            continue
        assert action.metavar, f"{command} {action.option_strings or action.dest}: no metavar"
        assert not re.search(r"[|{}<>]", action.metavar), (command, action.metavar)
    assert not re.search(r"[|{}]", usage), usage
    assert "--into" not in usage and "--in " not in usage and "--out " not in usage
    assert "--into" not in parser.format_help() and "--out " not in parser.format_help()


def test_one_name_per_thing():
    """The store is --reference wherever a command reads or writes one; a command's one
    written file is --output."""
    for command, parser in COMMANDS.items():
        options = {s for a in parser._actions for s in a.option_strings}
        if command.startswith("reference") or command in ("screen", "review"):
            assert STORE_OPTION in options, command
        if command in ("certification-form", "nov", "screen", "reference diff"):
            assert OUTPUT_OPTION in options, command
        assert not options & {"--into", "--in", "--out", "--target"}, (command, options)


def test_a_switch_is_hinted_without_a_metavar():
    parser = build_parser()
    args = parser.parse_args(["reference", "import", "wetlands", "x.gpkg", "--reference", "r.gpkg"])
    err = InputError("too many rejected", parameter="accept_rejections")
    assert option_hint(parser, args, err) == " (command line: --accept-rejections)"


def test_old_spellings_still_work_and_say_the_new_name(tmp_path, data_copy, capsys):
    store, form = tmp_path / "ref.gpkg", tmp_path / "form.html"
    source = f"{data_copy('demo_reference.gpkg')}|layername=wetlands"
    assert (
        main(
            [
                "reference",
                "import",
                "wetlands",
                source,
                "--into",
                str(store),
                "--quiet",
                "--source-date",
                "2026-01-01",
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.strip() == ("swppp: note: --into is now --reference (the old name still works, for now)")
    assert main(["reference", "status", "--in", str(store), "--json", "-"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["layers"] and "--in is now --reference" in err
    assert main(["certification-form", "--out", str(form)]) == 0
    assert form.exists() and "--out is now --output" in capsys.readouterr().err


def test_the_required_store_is_named_by_its_one_name(capsys):
    with pytest.raises(SystemExit) as done:
        main(["reference", "status"])
    assert done.value.code == 2
    assert "the following arguments are required: --reference" in capsys.readouterr().err


def test_quiet_and_json_on_the_commands_that_lacked_them(tmp_path, data_copy, capsys):
    store = tmp_path / "ref.gpkg"
    main(
        [
            "reference",
            "import",
            "wetlands",
            f"{data_copy('demo_reference.gpkg')}|layername=wetlands",
            "--reference",
            str(store),
            "--quiet",
            "--source-date",
            "2026-01-01",
        ]
    )
    capsys.readouterr()
    assert main(["reference", "status", "--reference", str(store), "--quiet"]) == 0
    assert capsys.readouterr() == ("", "")
    form, record = tmp_path / "form.html", tmp_path / "nov.json"
    assert main(["certification-form", "--output", str(form), "--json", "-", "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["output"] == str(form) and err == ""
    assert (
        main(
            [
                "nov",
                str(data_copy("records/violation.toml")),
                "--output",
                str(tmp_path / "n.html"),
                "--json",
                str(record),
                "--quiet",
            ]
        )
        == 0
    )
    assert capsys.readouterr() == ("", "")
    assert json.loads(record.read_text(encoding="utf-8"))["output"] == str(tmp_path / "n.html")


def test_the_exit_statuses_are_one_text():
    """Each command fills in 0 and 1; 2, 3 and 130 are the same words everywhere."""
    assert EXIT_STATUS.count("{") == 2
    review = COMMANDS["review"].format_help()
    assert "need review are printed and counted" in " ".join(review.split())


def test_an_import_rejecting_every_feature_says_why_not_see_above(tmp_path, data_copy, capsys):
    """Issue 34, item 9: the import stops before its report or rejections file is written, so
    the reasons are in the message itself."""
    import geopandas as gpd
    import shapely

    frame = gpd.read_file(data_copy("demo_reference.gpkg"), layer="wetlands")
    frame["geometry"] = [shapely.Polygon()] * len(frame)
    frame.to_file(tmp_path / "empty.gpkg", layer="wetlands")
    assert (
        main(
            [
                "reference",
                "import",
                "wetlands",
                str(tmp_path / "empty.gpkg"),
                "--reference",
                str(tmp_path / "ref.gpkg"),
                "--source-date",
                "2026-01-01",
            ]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "all 3 were rejected (" in error and "no geometry (null or empty)" in error
    assert "above" not in error
