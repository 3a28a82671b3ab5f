"""No output lands on a file an input reads: one rule for the command line and the plugin.

An input is the whole set of files its readers open (:func:`files_read`): a shapefile's
sidecars, a GeoPackage's (any SQLite file's) ``-wal``, ``-shm`` and ``-journal``, the files
GDAL reads beside a raster or a CSV, and the files a mapping TOML names (``[files]``,
``[cad] schedule``). :func:`refuse_outputs_over_inputs` refuses, before anything runs, an
output that is one of them (compared resolved: symbolic links, hard links, ``..``), or that
is another output (docs/CLI.md, "Outputs never replace inputs").
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Optional, Union

from ..errors import InputError
from .files import same_file

try:
    import tomllib
except ImportError:  # Python < 3.11 (QGIS on Windows ships 3.9)
    import tomli as tomllib

__all__ = ["files_read", "file_of", "refuse_outputs_over_inputs", "beside", "files_named"]

Given = Union[str, Path, None]

# A shapefile is read with the files of its name beside it (GDAL's shapefile driver, ESRI's
# indexes and metadata, QGIS's .qpj/.qml/.qmd).
SHAPEFILE = (
    ".shp", ".shx", ".dbf", ".prj", ".cpg", ".qix", ".sbn", ".sbx", ".shp.xml", ".qpj",
    ".aih", ".ain", ".atx", ".fbn", ".fbx", ".ixs", ".mxs", ".qml", ".qmd",
)  # fmt: skip
SQLITE = (".gpkg", ".gpkx", ".sqlite", ".sqlite3", ".db", ".spatialite")
SQLITE_SIDECARS = ("-wal", "-shm", "-journal")  # the name + these: SQLite's journal files
CSV_SIDECARS = (".csvt", ".prj")  # GDAL's CSV driver: the column types and the CRS
RASTER = (".tif", ".tiff", ".img", ".png", ".jpg", ".jpeg", ".jp2", ".vrt", ".pdf", ".asc")
RASTER_SIDECARS = (".aux.xml", ".ovr", ".msk")  # the name + these (GDAL's PAM, overviews, mask)
CONNECTIONS = ("postgresql:", "postgres:", "service=", "PG:", "dbname=", "memory:")


def file_of(value: Given) -> Optional[Path]:
    """The file a given input or output names, or None where it names none: empty, ``-``
    (standard output), a database connection; ``path|layername=NAME`` is ``path``."""
    if value is None:
        return None
    text = str(value).strip()
    if not text or text == "-" or text.startswith(CONNECTIONS):
        return None
    return Path(text.split("|", 1)[0])


def _cases(suffix: str) -> tuple[str, ...]:
    return (suffix.lower(), suffix.upper())


def _companions(path: Path) -> list[Path]:
    """The files read beside ``path`` by its suffix (each whether or not it exists: one made
    there would be read with it)."""
    suffix = path.suffix.lower()
    stem = path.with_suffix("")
    out: list[Path] = []
    if suffix in (".shp", ".shx", ".dbf"):
        out += [stem.with_name(stem.name + s) for sidecar in SHAPEFILE for s in _cases(sidecar)]
    if suffix in SQLITE:
        out += [path.with_name(path.name + s) for s in SQLITE_SIDECARS]
    if suffix == ".csv":
        out += [stem.with_name(stem.name + s) for sidecar in CSV_SIDECARS for s in _cases(sidecar)]
    if suffix in RASTER:
        world = (f".{suffix[1]}{suffix[-1]}w", f"{suffix}w", ".wld")  # .tfw, .tifw, .wld
        out += [path.with_name(path.name + s) for s in RASTER_SIDECARS]
        out += [stem.with_name(stem.name + s) for sidecar in world for s in _cases(sidecar)]
    if suffix == ".toml":
        for named in files_named(path):
            out += files_read(named)
    return out


def beside(path: Path, name: str) -> Path:
    """A file a mapping file names (``[files]``, ``[cad] schedule``): relative to its folder."""
    return path.parent / name


def files_named(path: str | Path) -> list[Path]:
    """The files the mapping file at ``path`` names (``[files]``, ``[cad] schedule``;
    ``analysis.siteplan.mapping``); [] where it is not TOML or names none (its reader says
    what is wrong with it)."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - unreadable here: its reader refuses it by name
        return []
    files = data.get("files")
    cad = data.get("cad")
    names = list(files.values()) if isinstance(files, dict) else []
    if isinstance(cad, dict):
        names.append(cad.get("schedule"))
    return [beside(path, name) for name in names if isinstance(name, str) and name.strip()]


def files_read(source: Given) -> list[Path]:
    """Every file reading ``source`` opens or would open (``source`` first), as given; [] where
    it names no file. A folder is read as the shapefiles in it (GDAL's shapefile driver).

    >>> [p.name for p in files_read("plan.shp|layername=plan")][:4]
    ['plan.shp', 'plan.SHP', 'plan.shx', 'plan.SHX']
    """
    path = file_of(source)
    if path is None:
        return []
    if path.is_dir():
        found = [p for p in sorted(path.iterdir()) if p.suffix.lower() in (".shp", ".dbf")]
        return [path] + [file for p in found for file in files_read(p)]
    return list(dict.fromkeys([path] + _companions(path)))


def refuse_outputs_over_inputs(
    inputs: Iterable[tuple[str, Given]], outputs: Iterable[tuple[str, Given]]
) -> None:
    """An :class:`InputError` (raised before anything runs) where an output would replace a
    file an input reads (:func:`files_read`), or another output. Each is ``(name, value)``:
    ``name`` is the option or parameter that gave it, as a person gave it (``--json``,
    ``OUTPUT_JSON``); values naming no file (:func:`file_of`) are left out."""
    read = [(name, value, file) for name, value in inputs for file in files_read(value)]
    written: list[tuple[str, Path]] = []
    for name, value in outputs:
        path = file_of(value)
        if path is None:
            continue
        for other, given, file in read:
            if not same_file(path, file):
                continue
            main = file_of(given)
            where = (
                f"{other} {given}"
                if main is None or same_file(file, main)
                else f"{file}, which {other} {given} reads"
            )
            raise InputError(
                f"{name} {path} is the same file as {where}: writing it would destroy an input; "
                "nothing was run",
                path=path,
                fix=f"give {name} a file name of its own",
            )
        for other, given_path in written:
            if same_file(path, given_path):
                raise InputError(
                    f"{name} {path} is the same file as {other} {given_path}: writing it would "
                    "write one output over another; nothing was run",
                    path=path,
                    fix=f"give {name} a file name of its own",
                )
        written.append((name, path))
