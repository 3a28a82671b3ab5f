"""The ``swppp`` parser and ``main``: each command group registers itself; errors become exit 2."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from typing import Optional, Sequence

from ..about import __version__
from ..errors import Cancelled, InputError, OutputError
from . import records, reference, review

__all__ = ["main", "build_parser", "EXIT_OK", "EXIT_FAIL", "EXIT_INPUT", "EXIT_INTERNAL"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swppp", description="Review a construction site plan against the stormwater chapter.")
    parser.add_argument("--version", action="version", version=f"swppp-review {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for group in (review, reference, records):
        group.register(commands)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="swppp: %(message)s")
    try:
        return args.handler(args)
    except (InputError, OutputError) as err:
        print(f"swppp: error: {err}", file=sys.stderr)
        return EXIT_INPUT
    except (Cancelled, KeyboardInterrupt):
        print("swppp: cancelled; nothing was written", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - no traceback reaches a user unless asked for
        if os.environ.get("SWPPP_DEBUG"):
            traceback.print_exc()
        print(f"swppp: internal error: {type(err).__name__}: {err}. Nothing was written. "
              "Set SWPPP_DEBUG=1 for details and report it.", file=sys.stderr)
        return EXIT_INTERNAL
