"""What a review file's format row says, checked: the one check of a GeoPackage's and a
PostgreSQL schema's (:mod:`.reviewfile`, :mod:`.reviewfile_pg`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ..about import __version__
from ..errors import InputError
from .contract import FORMAT, FORMAT_TABLE, FORMAT_VERSION, READABLE_VERSIONS

__all__ = ["FIX_FOREIGN", "check_format"]

# Said by every front end that opens a review file (review --round, letter, the panel's Review
# file, swppp:review's ROUND_FILE): no one option is named.
FIX_FOREIGN = (
    "give the project's review file (the NAME.gpkg that swppp review --round or the QGIS "
    "panel's Review file wrote), or, to record a review, a new file name: a review file is "
    "made where none is yet"
)


def check_format(held: Mapping[str, object], path: str | Path) -> int:
    """The format version the ``swppp_review_file`` rows ``held`` (key -> value) say, where it
    is this format's and one this version reads; else an :class:`InputError` naming ``path``."""
    if held.get("format") != FORMAT:
        raise InputError(
            f"its {FORMAT_TABLE} table says format {held.get('format')!r}, not {FORMAT!r}",
            path=path,
            field="format",
            fix=FIX_FOREIGN,
        )
    try:
        version = int(str(held.get("format_version")))
    except ValueError:
        version = None
    if version is None or version not in READABLE_VERSIONS:
        newer = version is not None and version > FORMAT_VERSION
        raise InputError(
            f"review file format version {held.get('format_version')!r}: this version of SWPPP "
            f"Review ({__version__}) reads versions "
            + " and ".join(str(v) for v in READABLE_VERSIONS)
            + (
                ", and the file was written by a newer one"
                if newer
                else ", and the file was written by an older one"
                if version is not None
                else ""
            ),
            path=path,
            field="format_version",
            fix="open it with the version of SWPPP Review that wrote it ("
            + str(held.get("written_by") or "its version is not recorded")
            + "); nothing in it was changed",
        )
    return version
