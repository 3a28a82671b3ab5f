"""No output lands on a file a run reads: the one rule of the CLI and the QGIS algorithms.

An input is the whole set of files it reads (:func:`files_read`): a shapefile's sidecars, a
GeoPackage's ``-wal``/``-shm``/``-journal``, the files a mapping TOML's ``[files]`` names. An
output that is the same file as any of them (same path resolved, symlinks and hard links
included: :func:`~analysis.io.files.same_file`) is refused before anything runs
(:func:`refuse_outputs_over_inputs`), and so is one output over another.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Union

from ..errors import InputError
from ..profile import tomllib
from .files import same_file

__all__ = ["SHAPEFILE_PARTS", "SQLITE_PARTS", "files_read", "refuse_outputs_over_inputs", "file_path"]

PathLike = Union[str, "os.PathLike[str]"]

# The files a shapefile is made of (its sidecars), by suffix after the stem, lower case.
SHAPEFILE_PARTS = (
    ".shp", ".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx", ".fbn", ".fbx",
    ".ain", ".aih", ".atx", ".ixs", ".mxs", ".qmd", ".qml", ".shp.xml", ".dbf.xml",
)  # fmt: skip
# The files SQLite (a GeoPackage) keeps beside its database while it is open.
SQLITE_PARTS = ("-wal", "-shm", "-journal")
_SQLITE = (".gpkg", ".sqlite", ".db", ".sqlite3")


def file_path(text: object) -> str | None:
    """The file a path, a layer source or an option names (``plan.gpkg|layername=x`` ->
    ``plan.gpkg``); None for what is no file: ``-`` (standard output), a database connection
    (``postgresql://``, ``service=``, ``PG:``, ``dbname=...``), a memory layer."""
    if text is None:
        return None
    value = os.fspath(text) if isinstance(text, os.PathLike) else str(text)
    value = value.split("|", 1)[0].strip()
    if not value or value == "-":
        return None
    lowered = value.lower()
    if lowered.startswith(("postgresql:", "postgres:", "service=", "pg:", "dbname=", "memory:")):
        return None
    if lowered.startswith("ogr:"):  # a Processing output "ogr:dbname='x.gpkg' table=..."
        rest = value[4:]
        if "dbname=" in rest:
            rest = rest.split("dbname=", 1)[1].strip()
            quote = rest[:1]
            rest = rest[1:].split(quote, 1)[0] if quote in "'\"" and quote else rest.split(" ", 1)[0]
        return rest or None
    return value


def _shapefile_parts(path: Path) -> list[Path]:
    name = path.name.lower()
    stem = next((name[: -len(s)] for s in sorted(SHAPEFILE_PARTS, key=len, reverse=True) if name.endswith(s)), None)
    if stem is None or not path.parent.is_dir():
        return []
    parts = {stem + suffix for suffix in SHAPEFILE_PARTS}
    found = [other for other in path.parent.iterdir() if other.name.lower() in parts]
    # the sidecars a run would read, whether or not they are there yet
    return found + [path.with_name(path.name[: len(stem)] + suffix) for suffix in SHAPEFILE_PARTS]


def _mapped_files(path: Path) -> list[Path]:
    """The files a mapping TOML's ``[files]`` names (relative to the TOML), where it has them.
    A TOML that does not read is no concern here: its reader refuses it by name."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return []
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return []
    return [path.parent / value for value in files.values() if isinstance(value, str) and value.strip()]


def files_read(path: PathLike, _depth: int = 0) -> list[Path]:
    """Every file a run reads through the input ``path``: the file itself, a shapefile's
    sidecars, a GeoPackage's (SQLite's) ``-wal``, ``-shm`` and ``-journal``, and the files a
    mapping TOML's ``[files]`` names (each expanded the same way).

    >>> [p.name for p in files_read("plan.gpkg")]
    ['plan.gpkg', 'plan.gpkg-wal', 'plan.gpkg-shm', 'plan.gpkg-journal']
    """
    path = Path(path)
    found = [path]
    name = path.name.lower()
    if name.endswith(_SQLITE):
        found += [path.with_name(path.name + part) for part in SQLITE_PARTS]
    elif name.endswith(".toml") and _depth == 0 and path.is_file():
        for mapped in _mapped_files(path):
            found += files_read(mapped, _depth + 1)
    else:
        found += _shapefile_parts(path)
    unique: list[Path] = []
    for each in found:
        if each not in unique:
            unique.append(each)
    return unique


def refuse_outputs_over_inputs(
    inputs: Iterable[tuple[str, object]], outputs: Iterable[tuple[str, object]]
) -> None:
    """An :class:`~analysis.errors.InputError` (to be raised before anything runs) where an
    output would be the same file as any file an input reads (:func:`files_read`), or as
    another output. ``inputs`` and ``outputs`` are ``(name, path)``: the option or parameter
    that names each (``--json``, ``OUTPUT_JSON``) and its value; values that name no file
    (:func:`file_path`) are passed over."""
    read = [(name, path) for name, value in inputs if (path := file_path(value))]
    written = [(name, path) for name, value in outputs if (path := file_path(value))]
    for i, (option, path) in enumerate(written):
        for other, given in read:
            for part in files_read(given):
                if same_file(path, part):
                    through = "" if same_file(part, given) else f" (which reads {part})"
                    raise InputError(
                        f"{option} {path} is the same file as {other} {given}{through}: writing it "
                        "would destroy an input; nothing was run",
                        path=path,
                        fix=f"give {option} a file name of its own",
                    )
        for other, given in written[:i]:
            if same_file(path, given):
                raise InputError(
                    f"{option} {path} is the same file as {other} {given}: writing it would "
                    "write one output over another; nothing was run",
                    path=path,
                    fix=f"give {option} a file name of its own",
                )
