"""Where every line a command prints passes: standard output and error, made safe once.

:func:`main <analysis.cli.app.main>` runs each command with ``sys.stdout`` and ``sys.stderr``
wrapped in a :class:`Console`: whatever a command writes (a summary, a table, a warning, an
error, ``--json -``) reaches the terminal through :func:`analysis.markup.shown_lines`, so a name
from a file holding an ANSI escape, a carriage return or a bidirectional override prints as its
escape (``\\x1b``, ``\\r``, ``\\u202e``) and no command can forget it. JSON on standard output
stays valid and equal: :func:`analysis.cli.options.json_text` already writes those characters
as ``\\uXXXX``. The progress bar's carriage return is the one control character written, by
:func:`carriage_return`.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from ..markup import shown_lines

__all__ = ["Console", "console", "carriage_return"]


class Console:
    """A text stream whose writes go through :func:`shown_lines` to the stream it wraps."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        self.stream.write(shown_lines(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # flush, isatty, encoding, fileno, ...
        return getattr(self.stream, name)


def carriage_return(stream: Any) -> None:
    """A carriage return on ``stream`` (the progress bar redrawing its line), past the
    :class:`Console`'s escaping."""
    getattr(stream, "stream", stream).write("\r")


@contextlib.contextmanager
def console() -> Iterator[None]:
    """Standard output and error wrapped in :class:`Console` while a command runs."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = Console(sys.stdout), Console(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved
