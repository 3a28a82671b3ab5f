"""The ``swppp`` command line: one module per command group (``app`` holds the parser and ``main``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

__all__ = ["main", "app", "records", "reference"]


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run ``swppp`` with ``argv`` (default: the process's arguments); the exit status."""
    from .app import main as run

    return run(argv)
