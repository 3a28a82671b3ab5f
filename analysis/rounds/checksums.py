"""What the round was made from: the sha256 of the site plan file(s) and of the profile read."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from ..io.inputs import files_named, files_read

__all__ = ["file_sha256", "plan_files", "plan_checksum"]

# A GeoPackage's shared-memory index is SQLite's, not the plan's: not part of what was read.
_NOT_THE_PLAN = ("-shm",)


def file_sha256(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def plan_files(site: str | Path, mapping: Optional[str | Path] = None) -> list[dict]:
    """Each file a review of ``site`` (read through the mapping file ``mapping``, where one is
    given) read and that exists: ``{"name", "sha256"}``, the site plan first."""
    paths = [p for p in files_read(str(site)) if p.is_file() and not str(p).endswith(_NOT_THE_PLAN)]
    if mapping:
        paths += [Path(mapping)] + [
            q for p in files_named(mapping) for q in files_read(str(p)) if q.is_file()
        ]
    seen = list(dict.fromkeys(p.resolve() for p in paths))
    return [{"name": p.name, "sha256": file_sha256(p)} for p in seen]


def plan_checksum(files: Sequence[dict]) -> str:
    """The plan's checksum: its one file's sha256 (what ``sha256sum site.gpkg`` prints), or,
    read from several, the sha256 of their ``sha256  name`` lines in the order read."""
    if len(files) == 1:
        return str(files[0]["sha256"])
    listing = "".join(f"{f['sha256']}  {f['name']}\n" for f in files)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()
