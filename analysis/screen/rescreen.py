"""Import and re-screen: a reference import (``swppp reference import --sites``) with the sites
screened against the store before and after it, and each site whose Condition A or wetland
status changed named with the water or wetland that changed it (``rescreen``)."""

from __future__ import annotations

from typing import Any, Optional

from ..errors import InputError
from ..profile import load_profile
from ..reference.connect import open_store
from ..reference.operations import import_reference
from ..reference.store import is_postgres
from .operations import ScreenRun, run_screen, split_source
from .since import category_changes, differences
from .sites import read_sites

__all__ = ["import_and_rescreen", "rescreen_lines"]


def import_and_rescreen(
    layer: str, source, target, *, sites=None, schema: Optional[str] = None, profile=None, **options: Any
) -> dict:
    """:func:`~analysis.reference.operations.import_reference` (``options`` are its own), and
    where ``sites`` (a vector file of sites, as ``swppp screen`` reads them) is given, the
    sites screened before and after it: what changed is the result's ``rescreen``. The sites
    file is read, and refused, before anything is written."""
    if sites is None:
        return import_reference(layer, source, target, schema=schema, profile=profile, **options)
    store = open_store(target, schema)
    before = _screen_before(sites, target, schema, store, layer, profile)
    done = import_reference(layer, source, target, schema=schema, profile=profile, **options)
    done["rescreen"] = _rescreen(before, sites, target, schema, profile, layer, done, store)
    return done


def _screen_target(target, schema):
    """The store as ``swppp screen`` names it (a PostGIS schema inside the connection)."""
    if schema and is_postgres(target):
        return f"{target} schema={schema}"
    return target


def _screen_before(sites, target, schema, store, layer: str, profile) -> Optional[ScreenRun]:
    """The sites screened against the store as it is, before the import (None where the layer
    has no version yet: nothing to compare); the sites file is read, and refused, here, before
    anything is written."""
    if schema and is_postgres(target) and "://" in str(target):
        raise InputError(
            "re-screening sites in a named PostGIS schema needs the connection as key=value words",
            parameter="sites",
            fix="give the target as 'service=NAME' or 'host=... dbname=...'",
        )
    if not store.versions(layer):
        path, given_layer = split_source(sites)
        read_sites(path, load_profile(profile).area_crs, layer=given_layer)  # refused now
        return None
    return run_screen(sites, _screen_target(target, schema), profile=profile)


def _rescreen(
    before: Optional[ScreenRun], sites, target, schema, profile, layer: str, done: dict, store
) -> dict:
    """Each site whose Condition A or wetland status differs between the screen before the
    import and the screen after it, with the water, watershed or wetland that made it (and a
    303(d) water's change of category, as ``swppp screen --since`` tells it)."""
    version, new = done["version"]["version"], done["new_version"]
    compared = {
        "layer": layer,
        "to": version,
        "from": None if before is None else version - 1 if new else version,
    }
    if before is None or not new:
        return {**compared, "sites": None if before is None else len(before.screen.rows), "changes": []}
    after = run_screen(sites, _screen_target(target, schema), profile=profile)
    categories = (
        category_changes(store.read_version(layer, version - 1), store.read_version(layer, version))
        if layer == "impaired_waters"
        else None
    )
    return {
        **compared,
        "sites": len(after.screen.rows),
        "changes": differences(before.screen.by_site(), after.screen.by_site(), categories),
    }


def rescreen_lines(rescreen: dict) -> list[str]:
    """What ``import_and_rescreen(..., sites=...)`` found, as lines for a terminal."""
    if rescreen["from"] is None:
        return [f"sites re-screened: none compared ({rescreen['layer']} had no earlier version)"]
    if rescreen["from"] == rescreen["to"]:
        return ["sites re-screened: nothing changed (this source was already imported)"]
    changes = rescreen["changes"]
    lines = [
        f"{rescreen['sites']} site(s) re-screened, {rescreen['layer']} version "
        f"{rescreen['from']} -> {rescreen['to']}: {len(changes)} site(s) changed"
    ]
    return lines + [
        f"  {c['site_id']}: {c['what']} {c['before']} -> {c['after']} ({c['because']})" for c in changes
    ]
