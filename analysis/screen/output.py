"""The screen written out: a CSV table, a GeoPackage layer for QGIS, or JSON (each whole or not at all)."""

from __future__ import annotations

import json
from pathlib import Path

import geopandas as gpd

from ..errors import InputError
from ..io.csv_cells import write_csv
from ..io.files import staged, write_all, write_text
from ..io.vector import write_geopackage
from .screen import COLUMNS, Screen

__all__ = ["OUTPUT_FORMATS", "write_screen", "screen_json", "LAYER"]

OUTPUT_FORMATS = (".csv", ".gpkg", ".json")
LAYER = "screen"  # the GeoPackage layer's name


def screen_json(screen: Screen, extra: dict | None = None) -> dict:
    """What ``--json`` writes: the counts, the reference read, and one entry per site."""
    counts: dict[str, int] = {}
    for row in screen.rows:
        counts[row["condition_a"]] = counts.get(row["condition_a"], 0) + 1
    return {
        "sites": len(screen.rows),
        "condition_a": counts,
        "reference": screen.reference,
        **(extra or {}),
        "rows": screen.rows,
    }


def write_screen(screen: Screen, path: str | Path) -> Path:
    """The screen at ``path``, its format by the ending: .csv, .gpkg (layer ``screen``, the
    sites' polygons in the area CRS) or .json."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".csv":
        return write_all({path: lambda temp: write_csv(temp, COLUMNS, screen.rows)})[0]
    if suffix == ".json":
        return write_text(path, json.dumps(screen_json(screen), indent=2, default=str) + "\n")
    if suffix == ".gpkg":
        frame = gpd.GeoDataFrame(screen.frame(), geometry=list(screen.geometries), crs=screen.crs)
        with staged(path) as temp:
            write_geopackage(temp, {LAYER: frame})
        return path
    raise InputError(
        f"the screen is written as {', '.join(OUTPUT_FORMATS)}, not '{suffix or path.name}'",
        path=path,
        fix="end the output's name in .csv, .gpkg or .json",
        parameter="output",
    )
