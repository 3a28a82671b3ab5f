"""What every ``swppp`` command shares: the profile and JSON options, the progress bar, ISO dates."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any, Callable, Optional

from ..errors import InputError
from ..profile import DEFAULT_PROFILE
from ..progress import SILENT, Progress
from .console import carriage_return

if TYPE_CHECKING:
    from ..siteplan.mapping import FieldMap

__all__ = [
    "add_profile_option",
    "add_json_option",
    "add_quiet_option",
    "add_store_option",
    "add_output_option",
    "add_renamed",
    "exit_status",
    "add_map_option",
    "site_mapping",
    "emit_json",
    "json_text",
    "progress_bar",
    "clear_bar",
    "describe_on_help",
    "refuse_clashes",
    "INPUTS",
    "OUTPUTS",
]

# The destinations of the options (and positionals) that name files read, and files written.
# A store (reference --reference) is read and written in place: it is an input here, so that no
# other output lands on it. Every command's options are among these or name no file.
INPUTS = (
    "site",
    "reference",
    "profile",
    "map",
    "mapping",
    "sheet",
    "land_cover_pre",
    "land_cover_post",
    "confirmations",
    "round",
    "review_file",
    "decisions",
    "log",
    "rain",
    "notices",
    "traps",
    "history",
    "record",
    "source",
    "geometry",
    "target",
    "schedule",
    "sites",
    "causes",
)
OUTPUTS = (
    "json",
    "html",
    "docx",
    "report",
    "findings",
    "pdf",
    "out",
    "output",
    "csv",
    "proposal_csv",
    "timeline_csv",
    "chart",
    "rejections",
)


def describe_on_help(parser: argparse.ArgumentParser, describe: Callable[[], str]) -> None:
    """``parser``'s description made by ``describe`` when its help is shown, not when the
    command line is built (a description that reads the rules profile costs ``swppp --help``
    nothing)."""
    show = parser.format_help

    def format_help() -> str:
        if parser.description is None:
            parser.description = describe()
        return show()

    parser.format_help = format_help  # type: ignore[method-assign]


# One name per thing on every command (issue 34, item 8; docs/CLI.md, "One name per thing").
# The old spellings still work, hidden from --help, each printing a one-line note.
STORE_OPTION = "--reference"  # the reference store (was --into, --in)
OUTPUT_OPTION = "--output"  # a command's one written file (was --out)

EXIT_STATUS = (
    "Exit status: 0 {ok}; 1 {fail}; 2 an input was refused (the message names the "
    "file, layer, feature or field and the fix; nothing is written); 3 an internal "
    "error (SWPPP_DEBUG=1 shows it); 130 cancelled (nothing is written)."
)
NO_FAIL = "never: this command has no findings that fail"


def exit_status(parser: argparse.ArgumentParser, ok: str = "done", fail: str = NO_FAIL) -> None:
    """The command's exit statuses, the same words on every command, as its --help epilog."""
    parser.epilog = EXIT_STATUS.format(ok=ok, fail=fail)


def add_renamed(
    parser: argparse.ArgumentParser, name: str, old: tuple[str, ...], **kwargs: Any
) -> argparse.Action:
    """Option ``name``, whose ``old`` spellings still work: not shown in --help or usage, each
    noted on standard error when used (``swppp: note: --into is now --reference``)."""
    action = parser.add_argument(name, *old, **kwargs)
    action.option_strings = [name]  # what --help, usage and messages show
    base = type(action)

    def call(
        self: argparse.Action,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: Optional[str] = None,
    ) -> None:
        if option_string in old:
            print(
                f"swppp: note: {option_string} is now {name} (the old name still works, for now)",
                file=sys.stderr,
            )
        base.__call__(self, parser, namespace, values, option_string)

    action.__class__ = type(base.__name__, (base,), {"__call__": call})
    return action


def add_store_option(
    parser: argparse.ArgumentParser,
    dest: str = "reference",
    required: bool = False,
    old: tuple[str, ...] = (),
    help: str = "the reference store: a GeoPackage, or PostgreSQL (postgresql://... or service=NAME)",
) -> None:
    """``--reference STORE``: the reference store, on every command that reads or writes one."""
    add_renamed(parser, STORE_OPTION, old, dest=dest, metavar="STORE", required=required, help=help)


def add_output_option(
    parser: argparse.ArgumentParser,
    metavar: str,
    help: str,
    required: bool = False,
    old: tuple[str, ...] = (),
) -> None:
    """``--output PATH``: the command's one written file (beside --json)."""
    add_renamed(parser, OUTPUT_OPTION, old, dest="output", metavar=metavar, required=required, help=help)


def add_quiet_option(parser: argparse.ArgumentParser) -> None:
    """``--quiet``: nothing printed but errors (the outputs are still written)."""
    parser.add_argument("--quiet", action="store_true", help="print nothing but errors")


def add_profile_option(parser: argparse.ArgumentParser) -> None:
    """``--profile NAME_OR_PATH``: the rules profile (a shipped name or a .toml path)."""
    parser.add_argument(
        "--profile",
        metavar="NAME_OR_PATH",
        default=None,
        help=f"rules profile name or .toml path (default: {DEFAULT_PROFILE})",
    )


def add_map_option(parser: argparse.ArgumentParser) -> None:
    """``--map FILE.toml``: the site plan's layer and field names, where they are not the contract's."""
    parser.add_argument(
        "--map",
        metavar="FILE.toml",
        default=None,
        help="the site plan's own layer and field names mapped to the contract's "
        "(docs/CLI.md, 'The command line')",
    )


def site_mapping(args: argparse.Namespace, site_option: str = "SITE") -> Optional[FieldMap]:
    """The ``--map`` file read and checked against the contract (None without ``--map``);
    an InputError where it is given without a site plan."""
    if not getattr(args, "map", None):
        return None
    if not getattr(args, "site", None):
        raise InputError(
            "--map maps the layers and fields of a site plan, and no site plan is given",
            path=args.map,
            fix=f"give {site_option}, or leave out --map",
        )
    from ..siteplan.mapping import read_field_map

    return read_field_map(args.map)


def add_json_option(parser: argparse.ArgumentParser) -> None:
    """``--json PATH|-``: the command's result as JSON."""
    parser.add_argument(
        "--json", metavar="PATH", help="write the result as JSON to PATH ('-': standard output)"
    )


def json_text(data: Any) -> str:
    """``data`` as the commands' JSON text (indented, UTF-8, no NaN; characters not seen
    written as their escapes, :func:`analysis.markup.json_shown`)."""
    from ..markup import json_shown

    return json_shown(json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n")


def emit_json(data: Any, target: Optional[str]) -> None:
    """``data`` as JSON on stdout (``-``) or into the file ``target`` (written whole or not at all)."""
    from ..io.files import write_text

    text = json_text(data)
    if target == "-":
        sys.stdout.write(text)
    elif target:
        write_text(target, text)


def _draw(fraction: float, message: str) -> None:
    width = 30
    done = round(fraction * width)
    carriage_return(sys.stderr)
    sys.stderr.write(f"[{'#' * done}{'.' * (width - done)}] {fraction:4.0%} {message[:36]:<36}")
    sys.stderr.flush()


def progress_bar(quiet: bool = False) -> Progress:
    """A progress bar on standard error where it is a terminal and the command is not quiet."""
    return Progress(_draw) if not quiet and sys.stderr.isatty() else SILENT


def clear_bar(progress: Progress) -> None:
    """Wipe the bar's line once the work is done."""
    if progress is not SILENT:
        carriage_return(sys.stderr)
        sys.stderr.write(" " * 78)
        carriage_return(sys.stderr)


def _given(args: argparse.Namespace, dests: tuple[str, ...], labels: dict[str, str]) -> list[tuple[str, str]]:
    """(option, value) of each value of ``dests`` given; a shipped profile's name is no file."""
    found = []
    for dest in dests:
        values = getattr(args, dest, None)
        for value in values if isinstance(values, list) else [values]:
            if not value:
                continue
            if dest == "profile" and not str(value).lower().endswith(".toml"):
                continue
            found.append((labels.get(dest, dest), str(value)))
    return found


def refuse_clashes(actions: list[argparse.Action], args: argparse.Namespace) -> None:
    """An InputError (before anything runs) where an output would land on a file an input
    reads, or two outputs on one file (the library's one rule: analysis.io.inputs)."""
    from ..io.inputs import refuse_outputs_over_inputs

    labels = {
        a.dest: (a.option_strings[0] if a.option_strings else str(a.metavar or a.dest)) for a in actions
    }
    refuse_outputs_over_inputs(_given(args, INPUTS, labels), _given(args, OUTPUTS, labels))
