"""Which geopandas stack this Python has, known in this one place: pyogrio (a plain ``pip
install``: geopandas 1.x) or fiona (QGIS's Python on Debian 12: geopandas 0.12)."""

from __future__ import annotations

__all__ = ["ENGINE"]

try:  # pragma: no cover - which branch runs depends on the stack
    import pyogrio  # noqa: F401 - its import is the test

    ENGINE = "pyogrio"
except ImportError:  # pragma: no cover
    import fiona

    ENGINE = "fiona"

    # Fiona lists fewer drivers than its GDAL reads; the spreadsheet ones are read here too
    # (a phasing schedule table): read-only, as pyogrio reads them.
    for _driver in ("XLSX", "ODS"):
        fiona.supported_drivers.setdefault(_driver, "r")
