"""The PDF report: the report model (analysis.report.model) laid out as a QGIS print layout.

The map sheets are the HTML report's tiles (``analysis.report.site_map.map_tiles``), one map item per
page at the profile's site map scale; the tables are manual tables (plain text cells, never
markup, so nothing from the inputs is interpreted). Every word is the model's: this module only
lays it out. See docs/DESIGN.md, "The report".
"""

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any, Optional

from qgis.core import (
    Qgis,
    QgsApplication,
    QgsArrowSymbolLayer,
    QgsCategorizedSymbolRenderer,
    QgsCoordinateReferenceSystem,
    QgsFeatureRequest,
    QgsFillSymbol,
    QgsLayoutExporter,
    QgsLayoutFrame,
    QgsLayoutItemLabel,
    QgsLayoutItemLegend,
    QgsLayoutItemManualTable,
    QgsLayoutItemMap,
    QgsLayoutItemMapOverview,
    QgsLayoutItemPage,
    QgsLayoutItemPicture,
    QgsLayoutItemScaleBar,
    QgsLayoutMultiFrame,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsLayoutTable,
    QgsLayoutTableColumn,
    QgsLayoutUtils,
    QgsLegendStyle,
    QgsLineSymbol,
    QgsMarkerSymbol,
    QgsPalLayerSettings,
    QgsPrintLayout,
    QgsProject,
    QgsReadWriteContext,
    QgsRectangle,
    QgsSingleSymbolRenderer,
    QgsTableCell,
    QgsTextFormat,
    QgsUnitTypes,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QColor, QFont

from analysis.findings import FAIL, NEEDS_REVIEW, PASS, STATUS_COLOURS, STATUSES, WARN
from analysis.io.files import discard, stage
from analysis.markup import shown_lines
from analysis.report.model import SITE_MAP, Cell, Figure, Paragraph, build_report
from analysis.report.site_map import LABEL_FIELDS as _LABEL_FIELDS
from analysis.report.site_map import (
    MAP_LAYER_TITLES,
    PLAN_CHANGE_COLOURS,
    map_footprint,
    map_layers,
    map_scale,
    map_tiles,
    plan_changes_of,
    units_per_foot,
)
from analysis.units import INCHES_PER_FOOT, MM_PER_INCH

from .compat import DISTANCE_FEET, RENDER_POINTS, set_label_font, set_legend_font

__all__ = [
    "build_layout",
    "export_pdf",
    "write_report_pdf",
    "stage_pdf_report",
    "standalone_pdf_report",
    "style_context_layer",
    "layout_data_folder",
    "write_layout_template",
    "load_layout_template",
    "LAYOUT_LAYERS_GROUP",
    "MAP_FRAME_IN",
    "MapSheet",
    "PdfReport",
]

PAGE_MM = (279.4, 215.9)  # US Letter, landscape
MARGIN_MM = 12.7
# The map item, inches: the rest of the page holds the title above and the legend beside it.
MAP_FRAME_IN = (8.0, 7.0)
_SIDE_X = MARGIN_MM + MAP_FRAME_IN[0] * MM_PER_INCH + 5.0
_SIDE_W = PAGE_MM[0] - MARGIN_MM - _SIDE_X
_TABLE_W = PAGE_MM[0] - 2 * MARGIN_MM
_TOP_MM = 20.0
_FONT = "DejaVu Sans"
# Stacking on the map, top first; findings other than these (info, not applicable) are left out.
# The plan changes since the round compared with (``--compare-to N``), as the HTML's map
# draws them: name -> legend title (the same in the PDF and its layout template).
_PLAN_CHANGE_LAYERS = {
    "plan_smp_moves": "Change: SMP moved",
    "plan_smp_before_points": "Change: SMP's old place",
    "plan_smp_before": "Change: SMP's old place",
    "plan_smp_added_points": "Change: SMP added",
    "plan_smp_added": "Change: SMP added",
    "plan_easement_changed": "Change: easement area",
    "plan_disturbance_removed": "Change: disturbance removed",
    "plan_disturbance_added": "Change: disturbance added",
}
_UNLABELLED = ("plan_smp_moves",)  # its id is on the SMP's old place
_CHANGE_LABEL = "change"  # each plan change's id (C1, ...), its label on the map
_MAP_LAYERS = (
    *_PLAN_CHANGE_LAYERS,
    "findings",
    "discharge_point",
    "site_boundary",
    "smp_points",
    "smp",
    "easement",
    "disturbance",
    "drainage_area",
    "public_row",
    "impaired_waters",
    "wetlands",
    "adjacent_areas",
    "tmdl_watersheds",
    "catchments",
)
_TITLES = {
    **MAP_LAYER_TITLES,
    "findings": "Findings",
    "smp_points": "SMP (points)",
    "easement": "Easement",
    "disturbance": "Disturbance",
    **_PLAN_CHANGE_LAYERS,
}
# The layers of the location inset, and how far around the site it reaches (site widths).
_INSET_LAYERS = ("site_boundary", "impaired_waters", "wetlands", "tmdl_watersheds", "catchments")
_INSET_MM = 34.0
_SHOWN_STATUSES = (FAIL, WARN, NEEDS_REVIEW, PASS)


# Map layers ---------------------------------------------------------------------------------
def _map_sources(review, folder):
    """Where each of the map's layers is: name -> GeoPackage path.

    The findings GeoPackage as the review writes it (``findings`` and the site plan's layers,
    each with its stored style), and beside it what that GeoPackage does not carry: the site
    boundary, the discharge points and public right-of-way, the reference layers read around
    the site and the regulated wetlands' adjacent areas (each with its label field).
    """
    from analysis.io.vector import write_geopackage
    from analysis.report.outputs import write_outputs

    findings = os.path.join(folder, "findings.gpkg")
    write_outputs(review, findings_path=findings)
    boundary = review.site.layer("site_boundary")
    context = {"site_boundary": boundary[[boundary.geometry.name]]}
    for name, frame in map_layers(review).items():
        field = _LABEL_FIELDS.get(name)
        keep = [field] if field in frame.columns else []
        context[name] = frame[keep + [frame.geometry.name]]
    context.update(_plan_change_frames(review))
    if context:
        write_geopackage(os.path.join(folder, "context.gpkg"), context)
    return _sources_in(folder)


def _plan_change_frames(review):
    """The plan changes since the round compared with, as the map's layers (name -> frame,
    each with its ``change`` id); none where the review compared no round."""
    import geopandas as gpd
    import shapely

    changes, _n = plan_changes_of(review)
    crs = review.site.area_crs
    out = {}

    def put(name, pairs):
        pairs = [(i, g) for i, g in pairs if g is not None and not shapely.is_empty(g)]
        for suffix, points in (("", False), ("_points", True)):
            chosen = [(i, g) for i, g in pairs if (shapely.get_type_id(g) in (0, 4)) == points]
            if chosen and (not points or f"{name}_points" in _PLAN_CHANGE_LAYERS):
                out[name + suffix] = gpd.GeoDataFrame(
                    {_CHANGE_LABEL: [i for i, _g in chosen]}, geometry=[g for _i, g in chosen], crs=crs
                )

    put("plan_disturbance_added", [(c.id, c.geometry) for c in changes if c.kind == "disturbance_added"])
    put("plan_disturbance_removed", [(c.id, c.geometry) for c in changes if c.kind == "disturbance_removed"])
    put("plan_easement_changed", [(c.id, c.geometry) for c in changes if c.layer == "easement"])
    put("plan_smp_added", [(c.id, c.after) for c in changes if c.kind == "smp_added"])
    put("plan_smp_before", [(c.id, c.before) for c in changes if c.kind in ("smp_moved", "smp_removed")])
    put(
        "plan_smp_moves",
        [
            (c.id, shapely.LineString([c.before.centroid, c.after.centroid]))
            for c in changes
            if c.kind == "smp_moved"
        ],
    )
    return out


def _arrow(colour):
    """A line drawn as an arrow to its end (an SMP's move, old place -> new)."""
    layer = QgsArrowSymbolLayer.create(
        {"arrow_width": "0.9", "arrow_start_width": "0.9", "head_length": "3", "head_thickness": "2.6",
         "is_curved": "0", "is_repeated": "0", "arrow_type": "0", "head_type": "0"}
    )  # fmt: skip
    layer.setSubSymbol(
        QgsFillSymbol.createSimple({"color": colour, "outline_color": colour, "outline_width": "0.1"})
    )
    symbol = QgsLineSymbol.createSimple({"color": colour})
    symbol.appendSymbolLayer(layer)  # the symbol owns it (SIP: transferred)
    symbol.deleteSymbolLayer(0)
    return symbol


def _sources_in(folder):
    """The map's layers written in ``folder``: name -> GeoPackage path."""
    from analysis.io.vector import list_layers

    sources = {}
    for name in ("findings.gpkg", "context.gpkg"):
        path = os.path.join(folder, name)
        if os.path.exists(path):
            sources.update(dict.fromkeys(list_layers(path), path))
    return sources


def _fill(colour, opacity=1.0, outline=None, width="0.4", style="solid", outline_style="solid"):
    symbol = QgsFillSymbol.createSimple(
        {
            "color": colour,
            "outline_color": outline or colour,
            "outline_width": width,
            "style": style,
            "outline_style": outline_style,
        }
    )
    symbol.setOpacity(opacity)
    return symbol


def _label(layer, field, expression=False):
    """Label each feature by ``field`` (or our ``expression`` of its fields)."""
    settings = QgsPalLayerSettings()
    settings.fieldName = field
    settings.isExpression = expression
    settings.displayAll = True  # an SMP's id inside its easement's: both shown
    text = QgsTextFormat()
    text.setFont(QFont(_FONT))
    text.setSize(7)
    buffer = text.buffer()
    buffer.setEnabled(True)
    buffer.setSize(0.8)
    text.setBuffer(buffer)
    settings.setFormat(text)
    layer.setLabeling(QgsVectorLayerSimpleLabeling(settings))
    layer.setLabelsEnabled(True)


def _print_findings(layer):
    """The findings' stored style, for print: a fail nearly opaque (it must read as red on
    paper, over the SMP it concerns) and drawn last; info and not applicable left out."""
    renderer = layer.renderer()
    if not isinstance(renderer, QgsCategorizedSymbolRenderer):
        return
    for index in reversed(range(len(renderer.categories()))):
        category = renderer.categories()[index]
        if category.value() not in _SHOWN_STATUSES:
            renderer.deleteCategory(index)  # not on the map: not in the legend
        elif category.value() == FAIL:
            symbol = category.symbol().clone()
            symbol.setOpacity(0.9)
            renderer.updateCategorySymbol(index, symbol)
    order = " ".join(f"WHEN '{s}' THEN {i}" for i, s in enumerate(reversed(STATUSES)))
    renderer.setOrderBy(
        QgsFeatureRequest.OrderBy([QgsFeatureRequest.OrderByClause(f'CASE "status" {order} END', True)])
    )
    renderer.setOrderByEnabled(True)
    quoted = ", ".join(f"'{s}'" for s in _SHOWN_STATUSES)
    layer.setSubsetString(f'"status" IN ({quoted})')


# Styles of the layers the findings GeoPackage does not carry.
_CONTEXT_STYLES = {
    "site_boundary": lambda: _fill("#212121", style="no", width="0.5", outline_style="dash"),
    "wetlands": lambda: _fill("#81d4fa", 0.6, outline="#0277bd"),
    "adjacent_areas": lambda: _fill("#0277bd", style="no", width="0.4", outline_style="dash"),
    "catchments": lambda: _fill("#8d6e63", style="no", width="0.5", outline_style="dot"),
    "tmdl_watersheds": lambda: _fill("#00838f", 0.5, style="b_diagonal", width="0.4"),
    "public_row": lambda: _fill("#bdbdbd", 0.6, outline="#616161"),
    "drainage_area": lambda: _fill("#6a1b9a", style="no", width="0.4", outline_style="dash dot"),
    "impaired_waters": lambda: QgsLineSymbol.createSimple({"color": "#1565c0", "width": "0.9"}),
    "plan_disturbance_added": lambda: _fill(PLAN_CHANGE_COLOURS["added"], 0.55, width="0.5"),
    "plan_disturbance_removed": lambda: _fill(
        PLAN_CHANGE_COLOURS["removed"], style="diagonal_x", width="0.5", outline_style="dash"
    ),
    "plan_easement_changed": lambda: _fill(PLAN_CHANGE_COLOURS["easement"], style="no", width="0.8"),
    "plan_smp_added": lambda: _fill(PLAN_CHANGE_COLOURS["added"], style="no", width="0.7"),
    "plan_smp_added_points": lambda: QgsMarkerSymbol.createSimple(
        {"name": "circle", "color": PLAN_CHANGE_COLOURS["added"], "outline_color": "white", "size": "3"}
    ),
    "plan_smp_before": lambda: _fill(
        PLAN_CHANGE_COLOURS["moved"], style="no", width="0.6", outline_style="dash"
    ),
    "plan_smp_before_points": lambda: QgsMarkerSymbol.createSimple(
        {
            "name": "circle",
            "color": "255,255,255,0",
            "outline_color": PLAN_CHANGE_COLOURS["moved"],
            "outline_width": "0.5",
            "size": "3.2",
        }
    ),
    "plan_smp_moves": lambda: _arrow(PLAN_CHANGE_COLOURS["moved"]),
    "discharge_point": lambda: QgsMarkerSymbol.createSimple(
        {"name": "triangle", "angle": "180", "color": "#d81b60", "outline_color": "white", "size": "3.5"}
    ),
}


def _load_layers(sources, project, group=None):
    """The map's layers, top first, styled: stored styles where the GeoPackage has them; added
    to ``project`` (in the layer tree's ``group``, unticked, where given)."""
    layers = []
    for name in _MAP_LAYERS:
        if name not in sources:
            continue
        layer = QgsVectorLayer(f"{sources[name]}|layername={name}", _TITLES[name], "ogr")
        if not layer.isValid():
            raise OSError(f"the report's map layer {name} could not be read back from {sources[name]}")
        if name in _CONTEXT_STYLES:
            style_context_layer(layer, name)
        else:
            _message, loaded = layer.loadDefaultStyle()
            if not loaded:
                raise OSError(f"the findings GeoPackage has no stored style for {name}")
            if name == "findings":
                _print_findings(layer)
            if name == "disturbance":
                _label(layer, "'Phase ' || \"phase\"", expression=True)
        layers.append(layer)
    project.addMapLayers(layers, group is None)
    for layer in layers if group is not None else ():
        group.addLayer(layer).setItemVisibilityChecked(False)
    return layers


# The geometry each kind of symbol draws: Qgis.GeometryType from 3.30, QgsWkbTypes' before.
_GEOMETRY = getattr(Qgis, "GeometryType", None)
if _GEOMETRY is not None and hasattr(_GEOMETRY, "Polygon"):
    _SYMBOL_FITS = {
        Qgis.SymbolType.Fill: _GEOMETRY.Polygon,
        Qgis.SymbolType.Line: _GEOMETRY.Line,
        Qgis.SymbolType.Marker: _GEOMETRY.Point,
    }
else:
    _SYMBOL_FITS = {
        Qgis.SymbolType.Fill: QgsWkbTypes.GeometryType.PolygonGeometry,
        Qgis.SymbolType.Line: QgsWkbTypes.GeometryType.LineGeometry,
        Qgis.SymbolType.Marker: QgsWkbTypes.GeometryType.PointGeometry,
    }


def style_context_layer(layer, name):
    """Style ``layer``, the plan's or the reference's layer ``name`` (site_boundary, wetlands,
    ...), as the report's map draws it, labelled by its contract's label field; a layer whose
    geometry the style does not fit (a polygon impaired_waters) keeps QGIS's default.
    Returns whether it was styled."""
    if name not in _CONTEXT_STYLES:
        return False
    symbol = _CONTEXT_STYLES[name]()
    if _SYMBOL_FITS.get(symbol.type()) != layer.geometryType():
        return False
    layer.setRenderer(QgsSingleSymbolRenderer(symbol))
    if name in _LABEL_FIELDS and layer.fields().indexOf(_LABEL_FIELDS[name]) >= 0:
        _label(layer, _LABEL_FIELDS[name])
    elif (
        name in _PLAN_CHANGE_LAYERS and name not in _UNLABELLED and layer.fields().indexOf(_CHANGE_LABEL) >= 0
    ):
        _label(layer, _CHANGE_LABEL)
    return True


# Layout items -------------------------------------------------------------------------------
def _page(layout):
    page = QgsLayoutItemPage(layout)
    page.setPageSize(QgsLayoutSize(*PAGE_MM))
    layout.pageCollection().addPage(page)
    return layout.pageCollection().pageCount() - 1


def _place(item, page, x, y, width, height):
    item.attemptResize(QgsLayoutSize(width, height))
    item.attemptMove(QgsLayoutPoint(x, y), page=page)


def _text(layout, page, text, x, y, width, height, size=10, bold=False):
    """A label of the report's own words (labels evaluate [% %]: never input text here)."""
    label = QgsLayoutItemLabel(layout)
    label.setText(shown_lines(text))
    set_label_font(label, QFont(_FONT, size, QFont.Weight.Bold if bold else QFont.Weight.Normal))
    layout.addLayoutItem(label)
    _place(label, page, x, y, width, height)
    return label


def _text_format(size, bold=False):
    text = QgsTextFormat()
    text.setFont(QFont(_FONT, size, QFont.Weight.Bold if bold else QFont.Weight.Normal))
    text.setSize(size)
    text.setSizeUnit(RENDER_POINTS)
    return text


_CELL_MARGIN = 1.0
_GRID = 0.3


_KEEP_WHOLE_MM = 90  # a table this high or less is never split: it starts where it all fits
_LONG_START_MM = 40  # a longer table starts on a page only with this much room left
_HEADING_MM = 10  # a section's heading in the page (a section that follows another)
_SUBTITLE_MM = 7  # a table's subtitle above it
_GAP_MM = 3.5  # below a table or paragraph (and its slack), before the next
# A table's frame is this much higher than its rows as laid out: the PDF export measures text a
# hair taller (some thousandths of a mm a row), and a row that no longer fits would move on to
# a frame of its own on a later page, over what is there.
_SLACK_MM = 0.5
_BOTTOM_MM = PAGE_MM[1] - MARGIN_MM  # the foot of the page's content (page numbers below it)
_BODY_MM = _BOTTOM_MM - _TOP_MM  # a page's height for tables under its heading
# A form's blank cell, to write in by hand: its row a third of an inch high with its margins and
# grid line, as the lines of ruled paper.
_HAND_MM = MM_PER_INCH / 3 - 2 * _CELL_MARGIN - _GRID


def _cell(cell, bold=False):
    """A model cell as a plain-text table cell: its lines, its status colour (the word and mark
    are in the text), numbers to the right."""
    out = QgsTableCell(shown_lines("\n".join(cell.lines)))  # names as the report shows them
    if cell.status is not None:
        out.setBackgroundColor(QColor(STATUS_COLOURS.get(cell.status, "#444444")))
        out.setForegroundColor(QColor("white"))
    if cell.numeric:
        out.setHorizontalAlignment(Qt.AlignmentFlag.AlignRight)
    if bold:
        out.setTextFormat(_text_format(8, bold=True))
    return out


def _fitted(widths):
    """The model's relative widths as QGIS column widths (mm) that, with each cell's margins and
    the grid, make the table exactly the page's width: nothing runs off the right edge."""
    room = _TABLE_W - len(widths) * 2 * _CELL_MARGIN - (len(widths) + 1) * _GRID
    total = sum(widths) or 1
    return [room * w / total for w in widths]


@dataclass
class _Block:
    """A table or paragraph of the model as a QGIS table, not yet placed; ``height`` (mm): its
    subtitle's and all its rows' as QGIS lays them out at the page's width (None when that is
    more than a page's body)."""

    table: QgsLayoutItemManualTable
    header: bool
    count: int
    subtitle: str
    height: Optional[float]

    def room(self):
        """The least height (mm) left on a page to start this block there: all of it when it
        is short (a paragraph; a form, the reviewer's block, is never split), else
        ``_LONG_START_MM``."""
        if self.height is not None and self.height <= _KEEP_WHOLE_MM:
            return self.height
        return _LONG_START_MM


def _table(layout, header, rows, widths, subtitle="", grid=True, size=8, bold=False, heights=()):
    """A manual table (plain text cells), its header repeated on each page it runs on to; a
    row's text at least ``heights`` high (mm, 0: its text's) where given; measured, not yet
    placed (see ``_put``)."""
    table = QgsLayoutItemManualTable.create(layout)
    layout.addMultiFrame(table)
    table.setIncludeTableHeader(header is not None)
    if header is not None:
        table.setHeaders([QgsLayoutTableColumn(h) for h in header])
        table.setHeaderMode(QgsLayoutTable.HeaderMode.AllFrames)
    # Every setter of a table with contents lays it out again (20-30 ms each: 3 s of the demo
    # report's 14 s): the formats first, the contents last, laid out once.
    table.setWrapBehavior(QgsLayoutTable.WrapBehavior.WrapText)
    table.setHeaderTextFormat(_text_format(size, bold=True))
    table.setContentTextFormat(_text_format(size, bold=bold))
    table.setCellMargin(_CELL_MARGIN)
    table.setShowGrid(grid)
    table.setGridStrokeWidth(_GRID if grid else 0.0)
    table.setResizeMode(QgsLayoutMultiFrame.ResizeMode.RepeatUntilFinished)
    if any(heights):
        table.setRowHeights(list(heights))
    table.setColumnWidths(_fitted(widths))
    table.setTableContents(rows)  # the rows' heights, wrapped at these widths
    height = _height_of(layout, table, 0, len(rows), header is not None, _BODY_MM - _SLACK_MM)
    if height is not None:
        height += _SLACK_MM + (_SUBTITLE_MM if subtitle else 0)
    return _Block(table, header is not None, len(rows), subtitle, height)


def _put(layout, block, page, y, title):
    """Place ``block`` from ``y`` (mm) on ``page`` on, more pages added as it needs, the pages it
    runs on to headed "``title`` (continued)"; each frame as high as the rows it shows, so
    nothing below it is covered. Returns ``(page, y)`` below its last frame."""
    if block.subtitle:
        _text(layout, page, block.subtitle, MARGIN_MM, y, _TABLE_W, 6, size=10, bold=True)
        y += _SUBTITLE_MM
    table = block.table
    first_new = layout.pageCollection().pageCount()
    frame = QgsLayoutFrame(layout, table)
    _place(frame, page, MARGIN_MM, y, _TABLE_W, _BOTTOM_MM - y)
    table.addFrame(frame)
    table.recalculateFrameSizes()  # adds the pages the rest of the table needs
    if table.frameCount() > 1 and y != _TOP_MM:
        # Frames added copy the first one's place: on their own pages they start at the top.
        for more in table.frames()[1:]:
            _place(more, more.page(), MARGIN_MM, _TOP_MM, _TABLE_W, _BODY_MM)
        table.recalculateFrameSizes()
    for more in range(first_new, layout.pageCollection().pageCount()):
        _heading(layout, more, f"{title} (continued)")
    context = QgsLayoutUtils.createRenderContextForLayout(layout, None)
    shown = 0
    for frame in table.frames():
        most = frame.sizeWithUnits().height()
        count = min(table.rowsVisible(context, most, shown, block.header, False), block.count - shown)
        used = min(_height_of(layout, table, shown, count, block.header, most) + _SLACK_MM, most)
        position = frame.pagePositionWithUnits()
        _place(frame, frame.page(), position.x(), position.y(), _TABLE_W, used)
        shown += count
    return frame.page(), frame.pagePositionWithUnits().y() + used + _GAP_MM


def _heading(layout, page, title):
    """A page's title: the model's section title (never input text: labels evaluate [% %])."""
    _text(layout, page, title, MARGIN_MM, MARGIN_MM - 2, _TABLE_W, 8, size=13, bold=True)


def _height_of(layout, table, first, count, header, most):
    """The least frame height (mm, to 0.1 mm) that shows the ``count`` rows of ``table`` from
    row ``first`` on, or None when ``most`` does not (QGIS gives the rows that fit a height, not
    the height)."""
    context = QgsLayoutUtils.createRenderContextForLayout(layout, None)

    def fits(height):
        return table.rowsVisible(context, height, first, header, False) >= count

    if not fits(most):
        return None
    low, high = 0.0, most
    while high - low > 0.1:
        middle = (low + high) / 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


class _Sheets:
    """What the map pages need: the layers, their CRS, the tiles; the map items laid out."""

    def __init__(self, review, folder, project):
        self.crs = QgsCoordinateReferenceSystem(review.area_crs)
        if not self.crs.isValid():
            self.crs = QgsCoordinateReferenceSystem.fromWkt(review.site.area_crs.to_wkt())
        project.setCrs(self.crs)
        self.layers = _load_layers(_map_sources(review, folder), project)
        # The inset's own copies, unlabelled (labels at the inset's scale would be a blot).
        self.inset = []
        for layer in self.layers:
            if layer.name() in [_TITLES[name] for name in _INSET_LAYERS]:
                copy = layer.clone()
                copy.setLabelsEnabled(False)
                self.inset.append(copy)
        project.addMapLayers(self.inset, False)  # not in the legend's layer tree
        self.tiles = map_tiles(
            map_footprint(review),
            map_scale(review.profile),
            MAP_FRAME_IN,
            units_per_foot(review.site.area_crs),
        )
        self.items = []


def _block(layout, block):
    """A table or paragraph of the model as a measured QGIS table, not yet placed."""
    if isinstance(block, Paragraph):
        return _table(
            layout,
            None,
            [[_cell(Cell(block.text))]],
            [1],
            grid=False,
            size=11 if block.strong else 8,
            bold=block.strong,
        )
    rows = [[_cell(c, bold=block.header is None and i == 0) for i, c in enumerate(row)] for row in block.rows]
    # A form's row with a blank cell (the reviewer's block) leaves room to write by hand.
    hand = [_HAND_MM if block.header is None and any(not c.lines for c in row) else 0 for row in block.rows]
    return _table(layout, block.header, rows, block.widths, subtitle=block.subtitle, heights=hand)


def _section(
    layout, section, review, folder, sheets, progress, lead=(), end: Optional[tuple[Any, float]] = None
):
    """One section of the report model: its title heads its first page; tables and paragraphs
    follow one another (a new page where too little is left, see ``_Block.room``, from the
    heights QGIS lays their rows out at); figures take their pages. A section not ``own_page``
    begins below ``end``, the ``(page, y)`` where the one before ended, when its first block
    fits there. Returns where this one ends, or None."""
    blocks = [b if isinstance(b, Figure) else _block(layout, b) for b in (*lead, *section.blocks)]
    pages = 0
    if (
        section.own_page
        or end is None
        or isinstance(blocks[0], Figure)
        or (end[1] + _HEADING_MM > _BOTTOM_MM - blocks[0].room())
    ):
        end = None
    else:
        page, y = end
        _text(layout, page, section.title, MARGIN_MM, y, _TABLE_W, 8, size=13, bold=True)
        end, pages = (page, y + _HEADING_MM), 1
    for block in blocks:
        if isinstance(block, Figure):
            if block.kind == SITE_MAP:
                for tile in sheets.tiles:
                    if progress is not None:
                        progress.check_canceled()
                    sheets.items.append(_map_page(layout, tile, sheets.layers, sheets.crs, sheets.inset))
            else:
                _chart_pages(layout, review, folder, section.title, block.names, continued=pages > 0)
            pages += 1
            end = None
            continue
        if end is None or end[1] > _BOTTOM_MM - block.room():
            page = _page(layout)
            _heading(layout, page, section.title if pages == 0 else f"{section.title} (continued)")
            pages += 1
            end = (page, _TOP_MM)
        end = _put(layout, block, *end, section.title)
    return end


def _inset(layout, page, item, layers, crs):
    """The location inset below the legend: the reference layers around the site and the
    site boundary, this sheet's frame drawn on it."""
    if not layers:
        return None
    extent = QgsRectangle(layers[0].extent())
    for layer in layers[1:]:
        extent.combineExtentWith(layer.extent())
    inset = QgsLayoutItemMap(layout)
    layout.addLayoutItem(inset)
    _place(
        inset,
        page,
        _SIDE_X + (_SIDE_W - _INSET_MM) / 2,
        _TOP_MM + MAP_FRAME_IN[1] * MM_PER_INCH - _INSET_MM,
        _INSET_MM,
        _INSET_MM,
    )
    inset.setCrs(crs)
    inset.setLayers(layers)
    inset.setKeepLayerSet(True)
    inset.zoomToExtent(extent.buffered(max(extent.width(), extent.height()) * 0.05))
    inset.setFrameEnabled(True)
    overview = QgsLayoutItemMapOverview("sheet", inset)
    overview.setLinkedMap(item)
    overview.setFrameSymbol(_fill("#c62828", 0.35, outline="#c62828", width="0.6"))
    inset.overviews().addOverview(overview)
    return inset


def _map_page(layout, tile, layers, crs, inset_layers=()):
    page = _page(layout)
    _text(layout, page, tile.title, MARGIN_MM, MARGIN_MM - 4, _TABLE_W, 8, size=12, bold=True)
    item = QgsLayoutItemMap(layout)
    layout.addLayoutItem(item)
    _place(item, page, MARGIN_MM, _TOP_MM, MAP_FRAME_IN[0] * MM_PER_INCH, MAP_FRAME_IN[1] * MM_PER_INCH)
    item.setCrs(crs)
    item.setLayers(layers)
    item.setKeepLayerSet(True)
    item.setExtent(QgsRectangle(*tile.bounds))
    item.setScale(tile.scale)  # the item's size was made for it: this only removes round-off
    item.setFrameEnabled(True)
    north = QgsLayoutItemPicture(layout)
    north.setPicturePath(":/images/north_arrows/layout_default_north_arrow.svg")
    layout.addLayoutItem(north)
    _place(north, page, _SIDE_X + _SIDE_W / 2 - 6, _TOP_MM, 12, 18)
    north.setLinkedMap(item)
    bar = QgsLayoutItemScaleBar(layout)
    layout.addLayoutItem(bar)
    bar.setLinkedMap(item)
    bar.setStyle("Single Box")
    bar.setUnits(DISTANCE_FEET)
    bar.setUnitLabel("ft")
    bar.setNumberOfSegmentsLeft(0)
    bar.setNumberOfSegments(2)
    # One inch of paper: two segments of half of it.
    bar.setUnitsPerSegment(tile.scale / INCHES_PER_FOOT / 2)
    bar.setTextFormat(_text_format(7))
    _place(bar, page, _SIDE_X, _TOP_MM + 22, _SIDE_W, 12)
    _text(
        layout,
        page,
        f"1 inch = {tile.scale / INCHES_PER_FOOT:g} feet (1:{tile.scale:g})",
        _SIDE_X,
        _TOP_MM + 36,
        _SIDE_W,
        6,
        size=7,
    )
    legend = QgsLayoutItemLegend(layout)
    legend.setTitle("")
    legend.setLinkedMap(item)
    layout.addLayoutItem(legend)
    _place(legend, page, _SIDE_X, _TOP_MM + 42, _SIDE_W, MAP_FRAME_IN[1] * MM_PER_INCH - 42 - _INSET_MM - 2)
    legend.setResizeToContents(False)
    legend.setLegendFilterByMapEnabled(True)  # only what this sheet shows
    for style in (
        QgsLegendStyle.Style.Title,
        QgsLegendStyle.Style.Group,
        QgsLegendStyle.Style.Subgroup,
        QgsLegendStyle.Style.SymbolLabel,
    ):
        set_legend_font(
            legend,
            style,
            QFont(
                _FONT,
                10 if style == QgsLegendStyle.Style.Title else 6,
                QFont.Weight.Normal if style == QgsLegendStyle.Style.SymbolLabel else QFont.Weight.Bold,
            ),
        )
    legend.setSymbolWidth(5)
    legend.setSymbolHeight(2.6)
    legend.refresh()
    _inset(layout, page, item, inset_layers, crs)
    return item


def _chart_pages(layout, review, folder, title, names, per_page=2, continued=False):
    """``names``' charts as pictures, ``per_page`` stacked on a page (each chart draws its
    own title)."""
    height = (PAGE_MM[1] - _TOP_MM - MARGIN_MM) / per_page
    for index, name in enumerate(names):
        slot = index % per_page
        if slot == 0:
            page = _page(layout)
            _heading(layout, page, title if index == 0 and not continued else f"{title} (continued)")
        chart = review.charts[name]
        y = _TOP_MM + slot * height
        path = os.path.join(folder, f"chart_{name}.svg")  # one file a chart
        chart.write(path)
        picture = QgsLayoutItemPicture(layout)
        picture.setPicturePath(path, QgsLayoutItemPicture.Format.FormatSVG)
        picture.setResizeMode(QgsLayoutItemPicture.ResizeMode.Zoom)
        layout.addLayoutItem(picture)
        _place(picture, page, MARGIN_MM, y, _TABLE_W, height - 4)


# The report ---------------------------------------------------------------------------------
def build_layout(review, folder, progress=None):
    """The report's print layout (and its project, which owns the layers) for ``review``.

    ``folder`` holds the map's GeoPackage and the chart while the layout lives. Returns
    ``(layout, project, maps)``: ``maps`` are the map items, one per sheet, in order.
    """
    report = build_report(review)
    project = QgsProject()
    sheets = _Sheets(review, folder, project)
    layout = QgsPrintLayout(project)
    layout.setName("SWPPP review")
    layout.setUnits(QgsUnitTypes.LayoutUnit.LayoutMillimeters)
    end = None
    for index, section in enumerate(report.sections):
        # The report's title (it holds the project's name: a cell, never a label) leads it.
        lead = (Paragraph(report.title, strong=True),) if index == 0 else ()
        end = _section(layout, section, review, folder, sheets, progress, lead, end)
    _page_numbers(layout)
    return layout, project, sheets.items


def _page_numbers(layout):
    """ "Page n of N" at the foot of every page (QGIS's layout variables; our text only)."""
    for page in range(layout.pageCollection().pageCount()):
        label = _text(
            layout,
            page,
            "Page [% @layout_page %] of [% @layout_numpages %]",
            PAGE_MM[0] - MARGIN_MM - 40,
            PAGE_MM[1] - MARGIN_MM + 4,
            40,
            5,
            size=7,
        )
        label.setHAlign(Qt.AlignmentFlag.AlignRight)


@dataclass(frozen=True)
class MapSheet:
    """A map page as laid out: its page (0-based), the map item's place on the page in mm
    (x, y, width, height), its extent in the area CRS and QGIS's scale of it."""

    page: int
    rect_mm: tuple
    extent: tuple
    scale: float


@dataclass(frozen=True)
class PdfReport:
    """What was written: the page count and the map sheets."""

    pages: int
    maps: list


def _sheet(item):
    position, size = item.pagePositionWithUnits(), item.sizeWithUnits()
    extent = item.extent()
    return MapSheet(
        item.page(),
        (position.x(), position.y(), size.width(), size.height()),
        (extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum()),
        item.scale(),
    )


def export_pdf(layout, path):
    """Export ``layout`` as a PDF at ``path``, its text as text (the PDF can be searched and its
    words copied). Raises OSError when QGIS could not write the file."""
    settings = QgsLayoutExporter.PdfExportSettings()
    settings.dpi = 300
    settings.rasterizeWholeImage = False
    settings.appendGeoreference = False
    settings.exportMetadata = True
    settings.textRenderFormat = Qgis.TextRenderFormat.AlwaysText
    result = QgsLayoutExporter(layout).exportToPdf(str(path), settings)
    if result != QgsLayoutExporter.ExportResult.Success or not os.path.isfile(path):
        raise OSError(f"QGIS could not write the PDF report {path} (layout export error {result})")


def write_report_pdf(review, path, progress=None, template=None):
    """Lay out ``review``'s report and export it as a PDF at ``path`` (None: no PDF); a
    :class:`PdfReport`. ``template`` (a .qpt path, optional): the layout is also kept as a QGIS
    layout template there, its layers and charts in :func:`layout_data_folder` beside it, for
    :func:`load_layout_template` (the layout designer).

    Raises OSError when QGIS could not write a file.
    """
    if progress is not None:
        progress.step(0.95, "laying out the PDF report")
    with contextlib.ExitStack() as stack:
        if template:
            folder = layout_data_folder(template)
            shutil.rmtree(folder, ignore_errors=True)  # an earlier layout's
            os.makedirs(folder)
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="swppp_report_"))
        layout, project, maps = build_layout(review, folder, progress)
        try:
            if progress is not None:
                progress.check_canceled()
            if path:
                export_pdf(layout, path)
            if template:
                _save_template(layout, template)
            return PdfReport(layout.pageCollection().pageCount(), [_sheet(m) for m in maps])
        finally:
            # Layers hold the GeoPackage open: let them go before the folder is removed.
            project.removeAllMapLayers()
            del layout


LAYOUT_LAYERS_GROUP = "SWPPP report layout layers"


def layout_data_folder(template):
    """Where the layout template ``template`` keeps its map layers and charts."""
    return os.path.splitext(str(template))[0] + "_data"


def _save_template(layout, template):
    if not layout.saveAsTemplate(str(template), QgsReadWriteContext()):
        raise OSError(f"QGIS could not write the layout template {template}")


def write_layout_template(review, template, progress=None):
    """The report's print layout as a QGIS layout template at ``template`` (no PDF)."""
    return write_report_pdf(review, None, progress, template=template)


def load_layout_template(template, project=None, name=None):
    """The report's layout from ``template`` (:func:`write_report_pdf`'s) in ``project`` (the
    current one), to edit in QGIS's layout designer: its map layers, styled as in the PDF, in
    the layer tree's group ``LAYOUT_LAYERS_GROUP`` (unticked: the map items draw them), the
    layout added to the project's layouts as ``name`` (made unique). Returns the layout.

    Raises OSError where the template or its layers cannot be read."""
    from qgis.PyQt.QtXml import QDomDocument

    project = project or QgsProject.instance()
    folder = layout_data_folder(template)
    sources = _sources_in(folder)
    try:
        with open(template, encoding="utf-8") as handle:
            text = handle.read()
    except OSError as err:
        raise OSError(f"cannot read the layout template {template}: {err}") from None
    document = QDomDocument()
    if not sources or not document.setContent(text):
        raise OSError(
            f"the layout template {template} or its layers ({folder}) are not there "
            "or not readable: run the review again"
        )
    root = project.layerTreeRoot()
    group = root.findGroup(LAYOUT_LAYERS_GROUP) or root.addGroup(LAYOUT_LAYERS_GROUP)
    group.setExpanded(False)
    # The template's map items find their layers by name and source: these (loaded once per
    # layout folder; a layout opened again finds them in the group).
    loaded = {
        (layer.name(), layer.source())
        for layer in (node.layer() for node in group.findLayers())
        if layer is not None
    }
    if not any(source.startswith(folder) for _name, source in loaded):
        _load_layers(sources, project, group)
    layout = QgsPrintLayout(project)
    layout.initializeDefaults()
    _items, ok = layout.loadFromTemplate(document, QgsReadWriteContext())
    if not ok:
        raise OSError(f"QGIS could not read the layout template {template}")
    manager = project.layoutManager()
    layout.setName(manager.generateUniqueTitle() if name is None else _unique(manager, name))
    manager.addLayout(layout)
    return layout


def _unique(manager, name):
    taken = {layout.name() for layout in manager.layouts()}
    title, number = name, 1
    while title in taken:
        number += 1
        title = f"{name} ({number})"
    return title


def stage_pdf_report(review, target, progress=None, template=None):
    """The review's report as a PDF in a hidden temporary file beside ``target``; its path.
    ``template``: the layout kept there too (:func:`write_report_pdf`)."""
    staged = stage(target)
    try:
        write_report_pdf(review, staged, progress, template=template)
    except BaseException:
        discard(staged)
        raise
    return str(staged)


_STANDALONE: list = []  # the command line's QgsApplication, kept alive for the process


def standalone_pdf_report(review, target, progress=None):
    """For the command line: start QGIS (headless) where no QGIS runs, stage the PDF; its path."""
    if QgsApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        application = QgsApplication([], False)
        application.initQgis()
        _STANDALONE.append(application)
    return stage_pdf_report(review, target, progress)
