"""SWPPP Review analysis: checks a construction site plan against a stormwater chapter.

Pure Python (shapely 2, geopandas, pyproj); no QGIS or Qt import anywhere in this package.
The names below are the public API; each is imported on first use, so ``import analysis``
stays cheap (the command line's ``--help`` does not load geopandas).

The layout (docs/DESIGN.md is the map): ``siteplan`` (the site-plan contract, loading and
validation), ``checks`` (one module per rule family), ``checklist`` (the SWPPP contents),
``records`` (construction-phase records and enforcement), ``reference`` (reference layers:
read, import, store, diff, PostGIS), ``report`` (JSON, HTML, findings GeoPackage), ``cli``
(the ``swppp`` command), ``io`` (vector layers; files written whole), and the shared
``profile``, ``findings``, ``errors``, ``progress``, ``units``, ``geometry``, ``markup``,
``charts`` and ``review``.
"""

from __future__ import annotations

import importlib
from typing import Any

from .about import TOOL_NAME, __version__

# public name -> the module that defines it
_EXPORTS = {
    "review_paths": "review",
    "review_site": "review",
    "Review": "review",
    "load_site_plan": "siteplan.plan",
    "SitePlan": "siteplan.plan",
    "load_profile": "profile",
    "RulesProfile": "profile",
    "Finding": "findings",
    "SwpppError": "errors",
    "InputError": "errors",
    "OutputError": "errors",
    "Cancelled": "errors",
    "Progress": "progress",
    "open_reference": "reference.read",
    "import_reference": "reference.operations",
    "write_outputs": "report.outputs",
}

__all__ = ["TOOL_NAME", "__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'analysis' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
