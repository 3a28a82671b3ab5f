"""The findings layer's QGIS style, stored in the GeoPackage so the layer opens styled.

QGIS reads a GeoPackage's ``layer_styles`` table (the QML of the style marked as default) when
it loads a layer; writing that table needs no QGIS, only SQLite.
"""
from __future__ import annotations

import sqlite3
from contextlib import closing
from html import escape
from pathlib import Path

from .findings import STATUS_COLOURS, STATUSES

__all__ = ["findings_qml", "store_default_style"]

_FILL_OPACITY = 0.45


def _rgba(hex_colour: str) -> str:
    red, green, blue = (int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"{red},{green},{blue},255"


def _fill_symbol(name: str, colour: str) -> str:
    props = {"color": _rgba(colour), "outline_color": _rgba(colour), "outline_style": "solid",
             "outline_width": "0.6", "outline_width_unit": "MM", "style": "solid",
             "joinstyle": "bevel"}
    options = "".join(f'<Option type="QString" name="{k}" value="{v}"/>' for k, v in props.items())
    legacy = "".join(f'<prop k="{k}" v="{v}"/>' for k, v in props.items())
    return (f'<symbol type="fill" name="{name}" alpha="{_FILL_OPACITY}" clip_to_extent="1" '
            f'force_rhr="0"><layer class="SimpleFill" enabled="1" locked="0" pass="0">'
            f'<Option type="Map">{options}</Option>{legacy}</layer></symbol>')


def findings_qml(field: str = "status") -> str:
    """A categorized style: one category per status, coloured as in the report."""
    categories = "".join(
        f'<category value="{s}" label="{escape(s.replace("_", " "))}" render="true" symbol="{i}"/>'
        for i, s in enumerate(STATUSES))
    symbols = "".join(_fill_symbol(str(i), STATUS_COLOURS[s]) for i, s in enumerate(STATUSES))
    return ("<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>"
            '<qgis styleCategories="Symbology" version="3.22">'
            f'<renderer-v2 type="categorizedSymbol" attr="{field}" symbollevels="0" '
            'enableorderby="0" forceraster="0" referencescale="-1">'
            f"<categories>{categories}</categories><symbols>{symbols}</symbols>"
            "</renderer-v2><layerGeometryType>2</layerGeometryType></qgis>")


_CREATE = """CREATE TABLE IF NOT EXISTS layer_styles (
  id INTEGER PRIMARY KEY AUTOINCREMENT, f_table_catalog TEXT(256), f_table_schema TEXT(256),
  f_table_name TEXT(256), f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT,
  styleSLD TEXT, useAsDefault BOOLEAN, description TEXT, owner TEXT(30), ui TEXT(30),
  update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"""


def store_default_style(gpkg: str | Path, layer: str, qml: str, name: str) -> None:
    """Store ``qml`` as ``layer``'s default style in the GeoPackage's ``layer_styles`` table."""
    with closing(sqlite3.connect(str(gpkg))) as con, con:
        geometry_column = con.execute(
            "SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (layer,)
        ).fetchone()
        con.execute(_CREATE)
        # Registered as an attributes table, as QGIS itself does, so the file stays a valid GPKG.
        con.execute("INSERT OR IGNORE INTO gpkg_contents (table_name, data_type, identifier) "
                    "VALUES ('layer_styles', 'attributes', 'layer_styles')")
        con.execute("DELETE FROM layer_styles WHERE f_table_name = ? AND styleName = ?",
                    (layer, name))
        con.execute("INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, "
                    "f_geometry_column, styleName, styleQML, useAsDefault, description) "
                    "VALUES ('', '', ?, ?, ?, ?, 1, ?)",
                    (layer, geometry_column[0] if geometry_column else "", name, qml,
                     "SWPPP Review: findings by status"))
