"""CAD exports (DXF, DWG through GDAL): entities picked by CAD layer name, boundaries as polygons.

GDAL reads a drawing as one layer of entities whose ``Layer`` field holds each entity's CAD layer
name; a closed polyline (how CAD draws a boundary) is read as a closed line, and becomes the
polygon it encloses here.
"""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any, Optional

import numpy as np
import shapely

from ..errors import InputError
from ..geometry import in_family
from ..limits import CAD_LAYER_NAME_MAX

# Python's own parse of a pattern (re._parser from 3.11; sre_parse before, QGIS on Windows)
_sre_parse: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")

__all__ = ["CAD_LAYER_FIELD", "cad_areas", "cad_layer_matches", "layer_pattern", "UnsafePattern"]

CAD_LAYER_FIELD = "Layer"  # GDAL's DXF/DWG field holding each entity's CAD layer name


def cad_layer_matches(
    path, layer, frame, pattern: str, parameter: Optional[str] = "pattern", given_by: str = "the pattern"
):
    """Which entities' CAD layer names match ``pattern`` (whole name) and each one's first group
    (None where the pattern has none or the entity does not match)."""
    try:
        regex = layer_pattern(pattern)
    except UnsafePattern as err:
        raise InputError(f"{given_by} {err}", parameter=parameter, fix=err.fix) from None
    column = next((str(c) for c in frame.columns if str(c).lower() == CAD_LAYER_FIELD.lower()), None)
    if column is None:
        raise InputError(
            f"no field '{CAD_LAYER_FIELD}' holding CAD layer names: not a CAD export",
            path=path,
            layer=layer,
            field=CAD_LAYER_FIELD,
            parameter=parameter,
            fix="give a DXF or DWG drawing, or take the phase from a field",
        )
    matched, groups = [], []
    for index, name in zip(frame.index, frame[column]):
        if name is not None and len(str(name)) > CAD_LAYER_NAME_MAX:
            raise InputError(
                f"a CAD layer name of {len(str(name))} characters (a drawing's layer names "
                f"hold at most {CAD_LAYER_NAME_MAX})",
                path=path,
                layer=layer,
                feature=index,
                field=column,
                parameter=parameter,
                fix="rename the CAD layer in the drawing",
            )
        match = regex.fullmatch(str(name)) if name is not None else None
        matched.append(match is not None)
        groups.append(match.group(1) if match and regex.groups else None)
    return np.array(matched, dtype=bool), groups


class UnsafePattern(ValueError):
    """A CAD layer pattern refused: not a regular expression, or one that can backtrack
    catastrophically (its ``str`` begins with the pattern; ``fix`` says what to write)."""

    def __init__(self, problem: str, fix: str) -> None:
        super().__init__(problem)
        self.fix = fix


_SAFE_FIX = (
    "write a pattern without a repeat inside a repeat or an alternation whose choices "
    "can begin alike under a repeat, e.g. 'C-PHAS-(\\d+)' or 'C-(BNDY|LIMIT)'"
)


def layer_pattern(pattern: str) -> re.Pattern[str]:
    r"""``pattern`` compiled, if it is a regular expression that cannot backtrack catastrophically.

    Python's engine backtracks: a repeat inside a repeat (``(a+)+``) or a repeated alternation
    whose choices can begin with the same character (``(a|ab)*``) can take time exponential in
    the name's length. Both are refused (an :class:`UnsafePattern`), whatever the names.

    >>> layer_pattern("C-PHAS-(\\d+)").fullmatch("C-PHAS-12").group(1)
    '12'
    >>> try:
    ...     layer_pattern("(C-.+)+")
    ... except UnsafePattern as err:
    ...     print(err)  # doctest: +NORMALIZE_WHITESPACE
    '(C-.+)+' repeats a part that itself repeats ('.+' inside a repeat):
    matching can take exponential time
    """
    try:
        regex = re.compile(pattern)
        parsed = _sre_parse.parse(pattern)
    except re.error as err:
        raise UnsafePattern(
            f"{pattern!r} is not a regular expression ({err})", "e.g. 'C-PHAS-(\\d+)'"
        ) from None
    problem = _backtracking(parsed, repeated=False)
    if problem:
        raise UnsafePattern(f"{pattern!r} {problem}: matching can take exponential time", _SAFE_FIX)
    return regex


_REPEATS = {"MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"}


def _backtracking(parsed, repeated: bool) -> Optional[str]:
    """What in the parsed pattern can backtrack catastrophically (None: nothing)."""
    for op, av in parsed:
        name = str(op)
        if name in _REPEATS:
            low, high, sub = av
            if repeated and high > 1:
                return f"repeats a part that itself repeats ({_text(sub, low, high)!r} inside a repeat)"
            found = _backtracking(sub, repeated or (high > 1 and name != "POSSESSIVE_REPEAT"))
        elif name == "SUBPATTERN":
            found = _backtracking(av[-1], repeated)
        elif name == "BRANCH":
            choices = av[1]
            if repeated and not _distinct_starts(choices):
                return "repeats an alternation whose choices can begin alike"
            found = next((f for f in (_backtracking(c, repeated) for c in choices) if f), None)
        elif name in ("ASSERT", "ASSERT_NOT"):
            found = _backtracking(av[1], repeated)
        elif name == "ATOMIC_GROUP":
            found = _backtracking(av, repeated)
        elif name == "GROUPREF_EXISTS":
            found = _backtracking(av[1], repeated) or (_backtracking(av[2], repeated) if av[2] else None)
        else:
            found = None
        if found:
            return found
    return None


def _text(sub, low: int, high: int) -> str:
    """A short form of a repeated part, for the message (its first item and the repeat)."""
    op, av = next(iter(sub)) if len(sub) else (None, None)
    base = {"ANY": ".", "LITERAL": chr(av) if isinstance(av, int) else "?"}.get(str(op), "(...)")
    if str(op) == "IN":
        base = "[...]"
    if str(op) == "SUBPATTERN":
        base = "(...)"
    mark = "*" if low == 0 and high > 1000 else "+" if low == 1 and high > 1000 else f"{{{low},{high}}}"
    return base + mark


def _starts(parsed) -> Optional[set]:
    """The characters a parsed part can begin with, where they are plain to see (else None)."""
    items = list(parsed)
    if not items:
        return None
    op, av = items[0]
    name = str(op)
    if name == "LITERAL":
        return {av}
    if name == "IN" and all(str(o) in ("LITERAL", "RANGE") for o, _ in av):
        out: set = set()
        for o, a in av:
            out |= {a} if str(o) == "LITERAL" else set(range(a[0], a[1] + 1))
        return out
    if name == "SUBPATTERN":
        return _starts(av[-1])
    return None


def _distinct_starts(choices) -> bool:
    seen: set = set()
    for choice in choices:
        start = _starts(choice)
        if start is None or seen & start:
            return False
        seen |= start
    return True


def cad_layer_names(frame) -> list[str]:
    """The CAD layer names the drawing's entities are on, sorted, each once."""
    column = next((str(c) for c in frame.columns if str(c).lower() == CAD_LAYER_FIELD.lower()), None)
    if column is None:
        return []
    return sorted({str(name) for name in frame[column] if name is not None})


def none_matched(
    path, layer, frame, pattern: str, given_by: str, parameter: Optional[str], fix: str
) -> InputError:
    """The error of a CAD layer pattern no entity's layer matches: it lists the layers present."""
    names = cad_layer_names(frame)
    shown = ", ".join(names[:30]) + (f" and {len(names) - 30} more" if len(names) > 30 else "")
    return InputError(
        f"no entity's CAD layer matches {given_by} {pattern!r} (the whole name "
        f"must match; the drawing's CAD layers: {shown or 'none'})",
        path=path,
        layer=layer,
        parameter=parameter,
        fix=fix,
    )


def cad_areas(path, layer, frame) -> np.ndarray:
    """Polygons as they are; a closed line (a CAD polyline boundary) as the polygon it encloses.

    Anything else is an :class:`InputError` naming the feature (a feature without geometry is
    left for the layer's own validation).
    """
    geometries = np.asarray(frame.geometry.values, dtype=object)
    lines = in_family(geometries, "line") & (shapely.get_num_geometries(geometries) == 1)
    closed = np.zeros(len(geometries), dtype=bool)
    single = np.array(
        [shapely.get_geometry(g, 0) if ok else None for g, ok in zip(geometries, lines)], dtype=object
    )
    closed[lines] = shapely.is_closed(single[lines]) & (shapely.get_num_coordinates(single[lines]) >= 4)
    out = geometries.copy()
    rings = np.empty(int(closed.sum()), dtype=object)
    rings[:] = [shapely.Polygon(shapely.get_coordinates(g)) for g in single[closed]]
    out[closed] = rings
    area = in_family(out, "polygon") | shapely.is_missing(out) | shapely.is_empty(out)
    if not area.all():
        bad = int(np.flatnonzero(~area)[0])
        kind = shapely.get_type_id(out[bad])
        raise InputError(
            f"a {shapely.GeometryType(kind).name.title()} where a boundary (a "
            f"polygon or a closed polyline) is required",
            path=path,
            layer=layer,
            feature=frame.index[bad],
            fix="close the polyline, or move the entity to another CAD layer",
        )
    return out
