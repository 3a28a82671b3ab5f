"""The ``swppp`` parser and ``main``: each command group registers itself; errors become exit 2."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from typing import Optional

from ..about import __version__
from ..errors import Cancelled, InputError, OutputError
from ..markup import terminal
from . import letter, phasing, records, reference, review, screen
from .console import console
from .options import refuse_clashes

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAIL", "EXIT_INPUT", "EXIT_INTERNAL"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143  # SIGINT (Ctrl-C), SIGTERM: 128 + the signal


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, so that it ends as a Ctrl-C does: an import's
    transaction rolled back, staged files removed (docs/CLI.md exit status)."""


def _terminated(signum: int, frame: object) -> None:
    raise Terminated()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swppp",
        description="Review a construction site plan against the stormwater chapter.",
        epilog="Every command takes --json PATH ('-': standard output), --quiet and --profile; "
        "each command's --help gives its exit statuses (docs/CLI.md, 'One name per "
        "thing').",
    )
    parser.add_argument("--version", action="version", version=f"swppp-review {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in (review, letter, phasing, reference, records, screen):
        group.register(commands)
    return parser


def _options_run(parser: argparse.ArgumentParser, args: argparse.Namespace) -> list[argparse.Action]:
    """The argument actions of the command that ran: the parser's and its chosen sub-parsers'."""
    actions = list(parser._actions)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = action.choices.get(getattr(args, action.dest, None) or "")
            if chosen is not None:
                actions += _options_run(chosen, args)
    return actions


def option_hint(parser: argparse.ArgumentParser, args: argparse.Namespace, err: BaseException) -> str:
    """The command line's options for the inputs an error is about (``--rain RAIN.csv``), or ''.

    The library names the input (``InputError.parameters``: ``"rain"``, ``"station"``); the
    option is the one of the command that ran with that destination.
    """
    by_dest = {a.dest: a for a in _options_run(parser, args) if not isinstance(a, argparse._SubParsersAction)}
    shown = []
    for name in getattr(err, "parameters", ()):
        action = by_dest.get(name)
        if action is None:
            continue
        if action.nargs == 0:  # a switch (--accept-rejections) takes no value
            shown.append(action.option_strings[0])
            continue
        metavar = action.metavar or action.dest.upper()
        if isinstance(metavar, tuple):  # nargs=N options name each value
            metavar = " ".join(metavar)
        shown.append(f"{action.option_strings[0]} {metavar}" if action.option_strings else metavar)
    return f" (command line: {', '.join(shown)})" if shown else ""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run a command line: every line printed, usage and errors included, through
    :func:`.console.console`."""
    with console():
        return _main(argv)


def _main(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    # The handler writes to sys.stderr as it is now: the Console.
    logging.basicConfig(level=logging.WARNING, format="swppp: %(message)s")
    # SIGTERM ends the run as SIGINT does (in the main thread only, where Python takes signals).
    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if in_main else None
    try:
        refuse_clashes(_options_run(parser, args), args)
        status: int = args.handler(args)
        return status
    except (InputError, OutputError) as err:
        print(f"swppp: error: {terminal(err)}{option_hint(parser, args, err)}", file=sys.stderr)
        return EXIT_INPUT
    except (Cancelled, KeyboardInterrupt) as err:
        print("swppp: cancelled; nothing was written", file=sys.stderr)
        return EXIT_TERMINATED if isinstance(err, Terminated) else EXIT_INTERRUPTED
    except Exception as err:  # noqa: BLE001 - no traceback reaches a user unless asked for
        if os.environ.get("SWPPP_DEBUG"):
            traceback.print_exc()
        print(
            f"swppp: internal error: {type(err).__name__}: {terminal(err)}. Nothing was written. "
            "Set SWPPP_DEBUG=1 for details and report it.",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
