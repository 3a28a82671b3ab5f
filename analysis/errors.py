"""The exceptions the analysis raises: one root, specific subclasses."""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Optional, Union

__all__ = ["SwpppError", "InputError", "OutputError", "Cancelled"]


class SwpppError(Exception):
    """Root of every error this package raises on purpose."""


class InputError(SwpppError, ValueError):
    """Input that cannot be reviewed.

    The message names the file, the layer, the feature and the field at fault, and what
    would fix it, in the terms of the data, never of a front end's options; ``str(err)`` is
    meant to be shown to a person as it is. ``parameter`` (one name or several) is the input
    it is about, as the library's call names it (``"rain"``, ``"station"``): each front end
    maps it to its own option or parameter and adds that hint.
    """

    def __init__(
        self,
        problem: str,
        *,
        path: Optional[Union[str, os.PathLike[str]]] = None,
        layer: Optional[str] = None,
        feature: object = None,
        field: Optional[str] = None,
        fix: Optional[str] = None,
        row: Optional[int] = None,
        column: Optional[str] = None,
        parameter: Optional[Union[str, Iterable[str]]] = None,
    ) -> None:
        self.problem = problem
        self.parameters = (parameter,) if isinstance(parameter, str) else tuple(parameter or ())
        self.row = row  # CSV records: the line number in the file (the header is line 1)
        self.column = column
        self.path = str(path) if path is not None else None
        self.layer = layer
        self.feature = feature
        self.field = field
        self.fix = fix
        super().__init__(self._compose())

    def _compose(self) -> str:
        where = []
        if self.path:
            where.append(f"file {self.path}")
        if self.layer:
            where.append(f"layer '{self.layer}'")
        if self.feature is not None:
            where.append(f"feature {self.feature}")
        if self.field:
            where.append(f"field '{self.field}'")
        if self.row is not None:
            where.append(f"row {self.row}")
        if self.column:
            where.append(f"column '{self.column}'")
        text = (", ".join(where) + ": " if where else "") + self.problem
        if self.fix:
            text += f". Fix: {self.fix}"
        return text


class OutputError(SwpppError, OSError):
    """An output could not be written; nothing was (the message names the file)."""


class Cancelled(SwpppError):
    """The user cancelled the run; nothing was written."""
