"""The QGIS styles of the review's result layers, stored in the GeoPackage so they open styled.

QGIS reads a GeoPackage's ``layer_styles`` table (the QML of the style marked as default) when
it loads a layer; writing that table needs no QGIS, only SQLite. The QML is written here as
text: ``findings`` by status (the report's palette), ``disturbance`` by phase, ``smp`` and
``easement`` (recorded or not), each labelled with its id where it has one; and each reference
layer in its contract style (``reference.contract.Style``), labelled with its label field.
"""

from __future__ import annotations

import colorsys
import sqlite3
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Optional

from ..findings import FAIL, NEEDS_REVIEW, STATUS_COLOURS, STATUSES, WARN
from ..markup import escape
from ..reference.contract import REFERENCE_LAYERS
from ..rounds.contract import CHANGE_KINDS
from ..units import MM_PER_INCH

__all__ = [
    "findings_qml",
    "disturbance_qml",
    "smp_qml",
    "easement_qml",
    "reference_qml",
    "phase_colours",
    "store_default_style",
    "POLYGON",
    "LINE",
    "POINT",
    "SMP_COLOUR",
    "RECORDED_COLOURS",
    "PLAN_CHANGE_COLOURS",
    "change_colour",
    "plan_changes_qml",
]

POINT, LINE, POLYGON = "point", "line", "polygon"
# QGIS's QgsWkbTypes::GeometryType numbers, as a QML's <layerGeometryType> holds them.
_GEOMETRY_TYPE = {POINT: 0, LINE: 1, POLYGON: 2}
_FILL_OPACITY = 0.45
_FILLED = (FAIL, WARN, NEEDS_REVIEW)  # findings drawn filled; the rest as outlines
# Phases: hues apart from the status palette (no red, amber or green), so a phase never reads
# as a verdict; after these, further hues by the golden angle.
_PHASE_PALETTE = ("#1f77b4", "#17becf", "#9467bd", "#e6c700", "#8c564b", "#e377c2", "#7f7f7f", "#393b79")
SMP_COLOUR = "#0d47a1"
# Easements: recorded (a solid outline) and not yet recorded (dashed): SWPPP D(8) wants them on
# record, so the unrecorded ones stand out.
RECORDED_COLOURS = {1: "#00695c", 0: "#ef8f00"}
# The plan's changes since a compared round (the site map and the findings GeoPackage's
# ``plan_changes`` layers): disturbance added and removed, an SMP's change, an easement's.
PLAN_CHANGE_COLOURS = {
    "added": "#00838f",
    "removed": "#6d4c41",
    "moved": "#e65100",
    "easement": "#c51162",
}


def change_colour(kind: str) -> str:
    """The colour a plan change of ``kind`` (:data:`~analysis.rounds.contract.CHANGE_KINDS`)
    is drawn in: what was added, removed, an SMP's old place, an easement's change."""
    if kind.startswith("easement_"):
        return PLAN_CHANGE_COLOURS["easement"]
    if kind.endswith("_added"):
        return PLAN_CHANGE_COLOURS["added"]
    return PLAN_CHANGE_COLOURS["moved" if kind.startswith("smp_") else "removed"]


def _rgba(hex_colour: str, alpha: int = 255) -> str:
    red, green, blue = (int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"{red},{green},{blue},{alpha}"


def _symbol_layer(cls: str, props: dict) -> str:
    options = "".join(f'<Option type="QString" name="{k}" value="{escape(v)}"/>' for k, v in props.items())
    legacy = "".join(f'<prop k="{k}" v="{escape(v)}"/>' for k, v in props.items())
    return (
        f'<layer class="{cls}" enabled="1" locked="0" pass="0">'
        f'<Option type="Map">{options}</Option>{legacy}</layer>'
    )


def _fill_symbol(
    name: str,
    colour: str,
    opacity: float = _FILL_OPACITY,
    fill: bool = True,
    outline: str = "solid",
    outline_width: float = 0.6,
    outline_colour: Optional[str] = None,
    brush: str = "solid",
) -> str:
    props = {
        "color": _rgba(colour),
        "outline_color": _rgba(outline_colour or colour),
        "outline_style": outline,
        "outline_width": f"{outline_width:g}",
        "outline_width_unit": "MM",
        "style": brush if fill else "no",
        "joinstyle": "bevel",
    }
    return (
        f'<symbol type="fill" name="{name}" alpha="{opacity:g}" clip_to_extent="1" '
        f'force_rhr="0">{_symbol_layer("SimpleFill", props)}</symbol>'
    )


def _line_symbol(
    name: str, colour: str, width: float = 0.8, opacity: float = 1.0, pattern: str = "solid"
) -> str:
    props = {
        "line_color": _rgba(colour),
        "line_width": f"{width:g}",
        "line_width_unit": "MM",
        "line_style": pattern,
        "capstyle": "round",
        "joinstyle": "round",
    }
    return (
        f'<symbol type="line" name="{name}" alpha="{opacity:g}" clip_to_extent="1" '
        f'force_rhr="0">{_symbol_layer("SimpleLine", props)}</symbol>'
    )


def _marker_symbol(name: str, colour: str) -> str:
    props = {
        "color": _rgba(colour),
        "outline_color": "255,255,255,255",
        "outline_style": "solid",
        "outline_width": "0.4",
        "outline_width_unit": "MM",
        "name": "circle",
        "size": "3",
        "size_unit": "MM",
        "angle": "0",
        "joinstyle": "bevel",
        "scale_method": "diameter",
        "vertical_anchor_point": "1",
        "horizontal_anchor_point": "1",
    }
    return (
        f'<symbol type="marker" name="{name}" alpha="1" clip_to_extent="1" '
        f'force_rhr="0">{_symbol_layer("SimpleMarker", props)}</symbol>'
    )


# QgsPalLayerSettings placements: over the centroid, or along the perimeter (an easement, so
# its label leaves the centroid to the SMP inside it).
_OVER, _PERIMETER = 1, 2


def _labels(field: Optional[str], placement: int = _OVER, priority: int = 5) -> str:
    """Simple labels of ``field`` (dark text in a white halo), or none."""
    if not field:
        return ""
    return (
        '<labeling type="simple"><settings calloutType="simple">'
        f'<text-style fieldName="{escape(field)}" isExpression="0" fontSize="9" '
        'fontSizeUnit="Point" fontWeight="75" textColor="33,33,33,255" textOpacity="1" '
        'namedStyle="Bold" multilineHeight="1" previewBkgrdColor="255,255,255,255">'
        '<text-buffer bufferDraw="1" bufferSize="1" bufferSizeUnits="MM" '
        'bufferColor="255,255,255,255" bufferOpacity="0.8" bufferJoinStyle="128" '
        'bufferNoFill="1"/></text-style>'
        '<text-format wrapChar="" multilineAlign="0" plussign="0"/>'
        f'<placement placement="{placement}" dist="1.5" distUnits="MM" priority="{priority}" '
        'centroidInside="1" centroidWhole="0" fitInPolygonOnly="0"/>'
        '<rendering drawLabels="1" obstacle="0" displayAll="0" upsidedownLabels="0" '
        'scaleVisibility="0" limitNumLabels="0" mergeLines="0"/>'
        "</settings></labeling>"
    )


def _qml(renderer: str, geometry: str, labels: str = "") -> str:
    labelled = "1" if labels else "0"
    return (
        "<!DOCTYPE qgis PUBLIC 'http://mrcc.com/qgis.dtd' 'SYSTEM'>"
        f'<qgis styleCategories="Symbology|Labeling" version="3.22" '
        f'labelsEnabled="{labelled}">{renderer}{labels}'
        f"<layerGeometryType>{_GEOMETRY_TYPE[geometry]}</layerGeometryType></qgis>"
    )


def _categorized(field: str, categories: Sequence[tuple[str, str, str]]) -> str:
    """A categorized renderer: ``categories`` are (value, label, symbol XML); a value ``""``
    is QGIS's "all other values" category."""
    items = "".join(
        f'<category value="{escape(value)}" label="{escape(label)}" render="true" symbol="{i}"/>'
        for i, (value, label, _) in enumerate(categories)
    )
    symbols = "".join(symbol for _, _, symbol in categories)
    return (
        f'<renderer-v2 type="categorizedSymbol" attr="{escape(field)}" symbollevels="0" '
        'enableorderby="0" forceraster="0" referencescale="-1">'
        f"<categories>{items}</categories><symbols>{symbols}</symbols></renderer-v2>"
    )


def findings_qml(field: str = "status", geometry: str = POLYGON) -> str:
    """A categorized style: one category per status, coloured as in the report.

    Polygons of verdicts that ask for action (fail, warn, needs review) are filled; the others
    (pass, info, not applicable), whose geometry is often the whole disturbance, are outlines
    only, so they do not veil the map. Points are markers, lines lines, in the status colours.
    """

    def symbol(i, status):
        if geometry == POINT:
            return _marker_symbol(str(i), STATUS_COLOURS[status])
        if geometry == LINE:
            return _line_symbol(str(i), STATUS_COLOURS[status])
        filled = status in _FILLED
        return _fill_symbol(str(i), STATUS_COLOURS[status], fill=filled, outline_width=0.6 if filled else 0.4)

    return _qml(
        _categorized(field, [(s, s.replace("_", " "), symbol(i, s)) for i, s in enumerate(STATUSES)]),
        geometry,
    )


def phase_colours(phases: Sequence[str]) -> dict[str, str]:
    """A distinct colour per phase, in the order given (the plan's sequence)."""
    out = {}
    for i, phase in enumerate(dict.fromkeys(phases)):
        if i < len(_PHASE_PALETTE):
            out[phase] = _PHASE_PALETTE[i]
        else:  # beyond the palette: hues spread by the golden angle, never repeating
            red, green, blue = colorsys.hsv_to_rgb((0.58 + 0.618034 * i) % 1.0, 0.65, 0.8)
            out[phase] = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
    return out


def disturbance_qml(phases: Sequence[str], field: str = "phase") -> str:
    """Disturbance categorized by phase, a distinct colour each; no phase in grey."""
    categories = [
        (p, f"phase {p}", _fill_symbol(str(i), colour, opacity=0.35, outline_width=0.4))
        for i, (p, colour) in enumerate(phase_colours(phases).items())
    ]
    categories.append(
        ("", "no phase", _fill_symbol(str(len(categories)), "#bdbdbd", opacity=0.35, outline_width=0.4))
    )
    return _qml(_categorized(field, categories), POLYGON)


def smp_qml(geometry: str, label_field: str = "smp_id") -> str:
    """SMPs (polygons or points) in one colour, labelled with their id."""
    symbol = (
        _marker_symbol("0", SMP_COLOUR)
        if geometry == POINT
        else _fill_symbol("0", SMP_COLOUR, opacity=0.6, outline_width=0.5)
    )
    renderer = (
        '<renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" '
        f'forceraster="0" referencescale="-1"><symbols>{symbol}</symbols></renderer-v2>'
    )
    # Over the SMP and before the easement's label: an SMP lies inside its easement.
    return _qml(renderer, geometry, _labels(label_field, _OVER, priority=8))


# A contract style's hatch as QGIS's brush (a hatch fills the polygon with its pattern only).
_BRUSHES = {"": "solid", "dots": "dense6", "diagonal": "b_diagonal"}
_MM_PER_PT = MM_PER_INCH / 72  # a typographic point is 1/72 inch


def reference_qml(layer: str, geometry: str = POLYGON) -> str:
    """Reference layer ``layer`` (a ``reference.contract`` name) drawn in its contract style
    (one style for the report's map, the PDF and QGIS), labelled with its label field:
    ``geometry`` (POLYGON or LINE) for a layer that may hold either."""
    spec = REFERENCE_LAYERS[layer]
    style = spec.style
    width = round(style.width_pt * _MM_PER_PT, 3)
    if geometry == LINE:
        symbol = _line_symbol("0", style.colour, width, style.opacity, style.pattern)
    else:
        symbol = _fill_symbol(
            "0",
            style.colour,
            style.opacity,
            fill=style.filled or bool(style.hatch),
            outline=style.pattern,
            outline_width=width,
            outline_colour=style.outline_colour,
            brush=_BRUSHES[style.hatch],
        )
    renderer = (
        '<renderer-v2 type="singleSymbol" symbollevels="0" enableorderby="0" '
        f'forceraster="0" referencescale="-1"><symbols>{symbol}</symbols></renderer-v2>'
    )
    return _qml(renderer, geometry, _labels(spec.label_field))


def easement_qml(field: str = "recorded", label_field: str = "easement_id") -> str:
    """Easements as outlines, categorized recorded (1, solid) or not yet recorded (0, dashed)."""
    categories = [
        ("1", "recorded", _fill_symbol("0", RECORDED_COLOURS[1], opacity=0.9, fill=False, outline_width=0.8)),
        (
            "0",
            "not recorded",
            _fill_symbol(
                "1", RECORDED_COLOURS[0], opacity=0.9, fill=False, outline="dash", outline_width=0.8
            ),
        ),
    ]
    return _qml(_categorized(field, categories), POLYGON, _labels(label_field, _PERIMETER, priority=4))


def plan_changes_qml(geometry: str, field: str = "kind", label_field: str = "change") -> str:
    """The plan's changes categorized by kind in the site map's colours (disturbance removed
    and easement changes as outlines, so the plan beneath shows), labelled with their id
    (``C1``: the report's table names it)."""

    def symbol(i: int, kind: str) -> str:
        colour = change_colour(kind)
        if geometry == POINT:
            return _marker_symbol(str(i), colour)
        if geometry == LINE:
            return _line_symbol(str(i), colour, width=1.0)
        filled = kind == "disturbance_added"
        solid = filled or kind == "smp_added"
        return _fill_symbol(
            str(i), colour, opacity=0.55 if filled else 0.9, fill=filled, outline="solid" if solid else "dash"
        )

    categories = [(k, words, symbol(i, k)) for i, (k, words) in enumerate(CHANGE_KINDS.items())]
    return _qml(_categorized(field, categories), geometry, _labels(label_field, _OVER, priority=9))


_CREATE = """CREATE TABLE IF NOT EXISTS layer_styles (
  id INTEGER PRIMARY KEY AUTOINCREMENT, f_table_catalog TEXT(256), f_table_schema TEXT(256),
  f_table_name TEXT(256), f_geometry_column TEXT(256), styleName TEXT(30), styleQML TEXT,
  styleSLD TEXT, useAsDefault BOOLEAN, description TEXT, owner TEXT(30), ui TEXT(30),
  update_time DATETIME DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"""


def store_default_style(
    gpkg: str | Path, layer: str, qml: str, name: str, description: str = "SWPPP Review: findings by status"
) -> None:
    """Store ``qml`` as ``layer``'s default style in the GeoPackage's ``layer_styles`` table."""
    with closing(sqlite3.connect(str(gpkg))) as con, con:
        geometry_column = con.execute(
            "SELECT column_name FROM gpkg_geometry_columns WHERE table_name = ?", (layer,)
        ).fetchone()
        con.execute(_CREATE)
        # Registered as an attributes table, as QGIS itself does, so the file stays a valid GPKG.
        con.execute(
            "INSERT OR IGNORE INTO gpkg_contents (table_name, data_type, identifier) "
            "VALUES ('layer_styles', 'attributes', 'layer_styles')"
        )
        con.execute("DELETE FROM layer_styles WHERE f_table_name = ? AND styleName = ?", (layer, name))
        con.execute(
            "INSERT INTO layer_styles (f_table_catalog, f_table_schema, f_table_name, "
            "f_geometry_column, styleName, styleQML, useAsDefault, description) "
            "VALUES ('', '', ?, ?, ?, ?, 1, ?)",
            (layer, geometry_column[0] if geometry_column else "", name, qml, description),
        )
