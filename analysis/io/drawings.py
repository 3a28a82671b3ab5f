"""What a CAD drawing (DXF) may make GDAL do: block inserts expanded, and coordinates read.

GDAL expands every block insert into the block's entities, nested inserts within them too,
and an array insert (MINSERT) into rows times columns copies: a drawing of a few kilobytes
can expand to 10^8 entities. :func:`check_drawing` reads the drawing's own group codes (its
BLOCKS and ENTITIES sections) and refuses, before GDAL opens it, one whose inserts nest deeper
than ``DXF_MAX_INSERT_DEPTH`` or expand to more than ``DXF_MAX_ENTITIES`` entities, naming the
block. :func:`check_drawing_coordinates` refuses an entity with a vertex no drawing of a site
holds (not finite, or beyond ``DRAWING_MAX_COORDINATE``), naming its handle and CAD layer,
before any CRS is applied to it.
"""

from __future__ import annotations

import contextlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np
import shapely

from ..errors import InputError
from ..limits import DRAWING_MAX_COORDINATE, DXF_MAX_ENTITIES, DXF_MAX_INSERT_DEPTH

__all__ = ["check_drawing", "check_drawing_coordinates", "DRAWING_SUFFIXES"]

DRAWING_SUFFIXES = (".dxf", ".dwg")
_BINARY = b"AutoCAD Binary DXF"
_FIX = "explode or purge the nested blocks in the CAD program, or export only the site's layers"


def check_drawing(path: str | Path) -> None:
    """Refuse a DXF whose block inserts nest or expand beyond the bounds (module docstring)."""
    path = Path(path)
    if path.suffix.lower() != ".dxf":
        return
    try:
        stat = os.stat(path)
    except OSError:
        return  # the reader says the file is missing
    _check(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=8)
def _check(path: str, _mtime: int, _size: int) -> None:
    blocks, top = _read_inserts(path)
    if blocks is None:
        return
    memo: dict[str, tuple[int, int]] = {}

    def expand(name: str, stack: tuple[str, ...]) -> tuple[int, int]:
        """(entities the block ``name`` expands to, how deep its inserts nest)."""
        if name in memo:
            return memo[name]
        if name in stack:
            raise InputError(
                f"the block '{name}' inserts itself (through {' > '.join(stack + (name,))})",
                path=path,
                fix=_FIX,
            )
        if len(stack) >= DXF_MAX_INSERT_DEPTH:
            raise InputError(
                f"the block '{name}' is inserted {len(stack) + 1} blocks deep "
                f"({' > '.join(stack[:3] + ('...',) + stack[-2:] + (name,))}; "
                f"more than the {DXF_MAX_INSERT_DEPTH} a drawing read here may nest)",
                path=path,
                fix=_FIX,
            )
        total, depth = 0, 0
        for inner, copies in blocks.get(name, ()):
            if inner is None:
                total += 1
                continue
            count, inner_depth = expand(inner, stack + (name,)) if inner in blocks else (1, 0)
            total += copies * count
            depth = max(depth, inner_depth + 1)
            if total > DXF_MAX_ENTITIES:
                raise InputError(
                    f"the block '{name}' expands to more than {DXF_MAX_ENTITIES:,} entities "
                    "(its inserts of other blocks, nested and arrayed)",
                    path=path,
                    fix=_FIX,
                )
        memo[name] = (total, depth)
        return memo[name]

    total = 0
    for inner, copies in top:
        count = expand(inner, ())[0] if inner is not None and inner in blocks else 1
        total += copies * count
        if total > DXF_MAX_ENTITIES:
            raise InputError(
                f"the drawing's entities expand to more than {DXF_MAX_ENTITIES:,} "
                f"(the last counted: an insert of the block '{inner}')",
                path=path,
                fix=_FIX,
            )


def _read_inserts(path: str):
    """Each block's entities and the ENTITIES section's, as (inserted block or None, copies);
    (None, None) for a binary DXF (not read here) or a file that cannot be opened."""
    try:
        with open(path, "rb") as probe:
            if probe.read(len(_BINARY)) == _BINARY:
                return None, None
        handle = open(path, encoding="latin-1", newline=None)  # noqa: SIM115 - closed by the with below
    except OSError:
        return None, None
    blocks: dict[str, list] = {}
    top: list = []
    section = None
    current: Optional[list] = None  # the entity list being filled
    block_name: Optional[str] = None
    kind = None  # the record being read (its code 0 value)
    insert: Optional[list] = None  # [name, columns, rows] of the INSERT being read
    with handle:
        while True:
            code_line = handle.readline()
            if not code_line:
                break
            value = handle.readline().strip()
            code = code_line.strip()
            if code == "0":
                if insert is not None and current is not None:
                    current.append((insert[0], max(insert[1], 1) * max(insert[2], 1)))
                    insert = None
                kind = value
                if value == "ENDSEC":
                    section, current = None, None
                elif section == "BLOCKS" and value == "BLOCK":
                    current, block_name = None, None
                elif section == "BLOCKS" and value == "ENDBLK":
                    current = None
                elif value == "INSERT" and current is not None:
                    insert = [None, 1, 1]
                elif current is not None:
                    current.append((None, 1))
            elif code == "2":
                if kind == "SECTION":
                    section = value
                    current = top if value == "ENTITIES" else None
                elif section == "BLOCKS" and kind == "BLOCK" and block_name is None:
                    block_name = value
                    current = blocks.setdefault(value, [])
                elif insert is not None:
                    insert[0] = value
            elif insert is not None and code in ("70", "71"):
                with contextlib.suppress(ValueError):
                    insert[1 if code == "70" else 2] = int(value)
        if insert is not None and current is not None:
            current.append((insert[0], max(insert[1], 1) * max(insert[2], 1)))
    return blocks, top


def check_drawing_coordinates(path: str | Path, layer: str, frame) -> None:
    """Refuse a drawing's entity with a vertex not finite or beyond ``DRAWING_MAX_COORDINATE``,
    naming its handle and CAD layer (GDAL's ``EntityHandle`` and ``Layer`` fields)."""
    if Path(path).suffix.lower() not in DRAWING_SUFFIXES:
        return
    geometries = np.asarray(frame.geometry.values, dtype=object)
    present = ~shapely.is_missing(geometries)
    if not present.any():
        return
    coords, index = shapely.get_coordinates(geometries[present], include_z=True, return_index=True)
    finite = np.isfinite(coords[:, :2])
    near = np.abs(np.where(finite, coords[:, :2], 0.0)) <= DRAWING_MAX_COORDINATE
    bad = ~(finite & near).all(axis=1)
    if not bad.any():
        return
    first = int(np.flatnonzero(bad)[0])
    row = int(np.flatnonzero(present)[index[first]])
    columns = {str(c).lower(): c for c in frame.columns}
    handle = frame[columns["entityhandle"]].iloc[row] if "entityhandle" in columns else None
    cad_layer = frame[columns["layer"]].iloc[row] if "layer" in columns else None
    named = f"with handle {handle}" if isinstance(handle, str) and handle else f"number {frame.index[row]}"
    x, y = coords[first, 0], coords[first, 1]
    raise InputError(
        f"the entity {named}{f' on the CAD layer {cad_layer!r}' if cad_layer is not None else ''} "
        f"has a vertex at ({x:g}, {y:g}): not a coordinate of a drawing of a site (finite, "
        f"within {DRAWING_MAX_COORDINATE:g} of the origin)",
        path=path,
        layer=layer,
        fix="correct or delete the entity in the CAD program (a stray point far off the site)",
    )
