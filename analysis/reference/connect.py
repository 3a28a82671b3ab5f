"""Which store a target names, opened: a GeoPackage file, or a PostgreSQL schema (PostGIS)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..errors import InputError
from .postgis import PostgisStore
from .store import GeoPackageStore, ReferenceStore, is_postgres

__all__ = ["open_store"]


def open_store(target: str | Path, schema: Optional[str] = None) -> ReferenceStore:
    """The store at ``target``: a GeoPackage path, or a PostgreSQL connection with ``schema``."""
    if is_postgres(target):
        return PostgisStore(str(target), schema)
    if schema:
        raise InputError(
            "a schema is for a PostgreSQL target, not a GeoPackage",
            path=target,
            fix="leave out the schema, or give postgresql://... or service=NAME as the target",
            parameter=("schema", "target"),
        )
    return GeoPackageStore(target)
