"""The reference store's operations both front ends call: import a source as a new version, diff two."""
from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..dates import require_date
from ..errors import InputError
from ..profile import load_profile
from ..progress import SILENT, Progress
from .importer import stream_candidate

__all__ = ["import_reference", "diff_reference", "write_diff_layer"]


def import_reference(layer: str, source, target, *, schema: Optional[str] = None, fmt: str = "ogr",
                     geometry=None, mapping=None, source_date: Optional[str] = None, profile=None,
                     progress: Optional[Progress] = None) -> dict:
    """Validate ``source`` and store it as a new version of ``layer``; what was done, as a dict.

    The one import the CLI and the QGIS algorithm both call.
    """
    from .connect import open_store

    progress = progress or SILENT
    rules = load_profile(profile)
    store = open_store(target, schema)
    date = _source_date(source_date, source)
    progress.step(0.0, f"reading {Path(str(source).split('|')[0]).name}")
    candidate = stream_candidate(layer, source, fmt, geometry=geometry, mapping=mapping,
                                 synonyms=dict(rules.reference.pollutant_synonyms))
    progress.step(0.1, f"writing {candidate.expected or 'the'} features")
    result = store.import_candidate(candidate, source_date=date, progress=progress)
    progress.step(1.0, "done")
    return {"layer": layer, "store": store.label, "new_version": result.new,
            "version": result.version.to_dict(), "validation": candidate.report.to_dict(),
            "report": candidate.report.lines()}


def diff_reference(layer: str, target, *, schema=None, old=None, new=None, profile=None):
    """The :class:`~analysis.reference.diff.LayerDiff` of ``layer`` in the store at ``target``."""
    from .diff import diff_versions
    from .connect import open_store

    return diff_versions(open_store(target, schema), layer, old, new, load_profile(profile))


def _source_date(given: Optional[str], source) -> str:
    from datetime import datetime

    day = require_date(given, "the source date", fix="give YYYY-MM-DD",
                       parameter="source_date") if given else None
    if day is not None:  # blank text (a QGIS field holding a space) is no date given
        return day.isoformat()
    path = Path(str(source).split("|")[0])
    if not path.exists():
        raise InputError("the file does not exist", path=path, fix="check the path")
    return datetime.fromtimestamp(path.stat().st_mtime).date().isoformat()


def write_diff_layer(diff, path) -> None:
    """The diff as GeoPackage layer ``<layer>_diff`` at ``path`` (written whole or not at all)."""
    from ..io.files import staged
    from ..io.vector import write_geopackage

    path = Path(path)
    if path.suffix.lower() != ".gpkg":
        raise InputError("the changes layer must be a GeoPackage (.gpkg)", path=path,
                         fix="use a name ending in .gpkg", parameter="output")
    with staged(path) as temp:
        write_geopackage(temp, {f"{diff.layer}_diff": diff.frame()})
