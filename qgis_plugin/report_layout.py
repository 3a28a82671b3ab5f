"""The PDF report: a QGIS print layout built in memory (cover, map sheets, chart, tables).

The map sheets are the HTML report's tiles (``analysis.report.site_map.map_tiles``), one map item per
page at the profile's site map scale; the tables are manual tables (plain text cells, never
markup, so nothing from the inputs is interpreted). See docs/DESIGN.md, "The report".
"""
import os
import tempfile
from dataclasses import dataclass

from qgis.core import (
    Qgis,
    QgsApplication,
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
    QgsPalLayerSettings,
    QgsPrintLayout,
    QgsProject,
    QgsRectangle,
    QgsSingleSymbolRenderer,
    QgsTableCell,
    QgsTextFormat,
    QgsUnitTypes,
    QgsVectorLayer,
    QgsVectorLayerSimpleLabeling,
)
from qgis.PyQt.QtCore import Qt
from qgis.PyQt.QtGui import QColor, QFont

from analysis.checklist.contents import STATUS_AS_FINDING
from analysis.io.files import discard, stage
from analysis.findings import (FAIL, NEEDS_REVIEW, PASS, STATUS_COLOURS,
                               STATUSES, WARN)
from analysis.units import INCHES_PER_FOOT, MM_PER_INCH
from analysis.report.site_map import (map_scale, map_tiles, site_footprint,
                               units_per_foot)

from .compat import DISTANCE_FEET

__all__ = ["build_layout", "write_report_pdf", "stage_pdf_report", "standalone_pdf_report",
           "MAP_FRAME_IN", "MapSheet", "PdfReport"]

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
_MAP_LAYERS = ("findings", "site_boundary", "smp_points", "smp", "easement", "disturbance",
               "wetlands")
_TITLES = {"findings": "Findings", "site_boundary": "Site boundary", "smp_points": "SMP (points)",
           "smp": "SMP", "easement": "Easement", "disturbance": "Disturbance",
           "wetlands": "Wetlands (reference)"}
_SHOWN_STATUSES = (FAIL, WARN, NEEDS_REVIEW, PASS)


# Map layers ---------------------------------------------------------------------------------
def _map_sources(review, folder):
    """Where each of the map's layers is: name -> GeoPackage path.

    The findings GeoPackage as the review writes it (``findings`` and the site plan's layers,
    each with its stored style), and beside it the site boundary and the reference wetlands
    read around the site, which that GeoPackage does not carry.
    """
    from analysis.report.outputs import write_outputs
    from analysis.io.vector import list_layers, write_geopackage

    findings = os.path.join(folder, "findings.gpkg")
    write_outputs(review, findings_path=findings)
    sources = dict.fromkeys(list_layers(findings), findings)
    context = {}
    for name, frame in (("site_boundary", review.site.layer("site_boundary")),
                        ("wetlands", review.wetlands)):
        if frame is not None and len(frame):
            context[name] = frame[[frame.geometry.name]]
    if context:
        path = os.path.join(folder, "context.gpkg")
        write_geopackage(path, context)
        sources.update(dict.fromkeys(context, path))
    return sources


def _fill(colour, opacity=1.0, outline=None, width="0.4", style="solid", outline_style="solid"):
    symbol = QgsFillSymbol.createSimple({
        "color": colour, "outline_color": outline or colour, "outline_width": width,
        "style": style, "outline_style": outline_style})
    symbol.setOpacity(opacity)
    return symbol


def _label(layer, field):
    settings = QgsPalLayerSettings()
    settings.fieldName = field
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
    renderer.setOrderBy(QgsFeatureRequest.OrderBy(
        [QgsFeatureRequest.OrderByClause(f'CASE "status" {order} END', True)]))
    renderer.setOrderByEnabled(True)
    quoted = ", ".join(f"'{s}'" for s in _SHOWN_STATUSES)
    layer.setSubsetString(f'"status" IN ({quoted})')


# Styles of the layers the findings GeoPackage does not carry.
_CONTEXT_STYLES = {
    "site_boundary": lambda: _fill("#212121", style="no", width="0.5", outline_style="dash"),
    "wetlands": lambda: _fill("#81d4fa", 0.6, outline="#0277bd"),
}


def _load_layers(sources, project):
    """The map's layers, top first, styled: stored styles where the GeoPackage has them."""
    layers = []
    for name in _MAP_LAYERS:
        if name not in sources:
            continue
        layer = QgsVectorLayer(f"{sources[name]}|layername={name}", _TITLES[name], "ogr")
        if not layer.isValid():
            raise OSError(f"the report's map layer {name} could not be read back from "
                          f"{sources[name]}")
        if name in _CONTEXT_STYLES:
            layer.setRenderer(QgsSingleSymbolRenderer(_CONTEXT_STYLES[name]()))
        else:
            _message, loaded = layer.loadDefaultStyle()
            if not loaded:
                raise OSError(f"the findings GeoPackage has no stored style for {name}")
            if name == "findings":
                _print_findings(layer)
        layers.append(layer)
    project.addMapLayers(layers)
    return layers


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
    label.setText(text)
    label.setFont(QFont(_FONT, size, QFont.Weight.Bold if bold else QFont.Weight.Normal))
    layout.addLayoutItem(label)
    _place(label, page, x, y, width, height)
    return label


def _text_format(size, bold=False):
    text = QgsTextFormat()
    text.setFont(QFont(_FONT, size, QFont.Weight.Bold if bold else QFont.Weight.Normal))
    text.setSize(size)
    text.setSizeUnit(QgsUnitTypes.RenderUnit.RenderPoints)
    return text


def _cell(value, status=None):
    cell = QgsTableCell("" if value is None else str(value))
    if status is not None:
        cell.setBackgroundColor(QColor(STATUS_COLOURS.get(status, "#444444")))
        cell.setForegroundColor(QColor("white"))
    return cell


def _table(layout, page, title, header, rows, widths, y=_TOP_MM, subtitle=None):
    """A manual table (plain text cells) from ``page`` on, more pages added as it needs.

    ``title`` heads the page (and "(continued)" the pages the table runs on to); ``subtitle``
    (our words) heads the table itself, for a section of several tables. ``y`` is where the
    table begins on ``page`` (mm). Returns ``(table, end)``: ``end`` is ``(page, y)`` below the
    table when it ended on its first page, else None (the next table then takes a new page).
    """
    if y == _TOP_MM:
        _text(layout, page, title, MARGIN_MM, MARGIN_MM - 2, _TABLE_W, 8, size=13, bold=True)
    if subtitle:
        _text(layout, page, subtitle, MARGIN_MM, y, _TABLE_W, 6, size=10, bold=True)
        y += 7
    first_new = layout.pageCollection().pageCount()
    table = QgsLayoutItemManualTable.create(layout)
    layout.addMultiFrame(table)
    table.setIncludeTableHeader(header is not None)
    if header is not None:
        table.setHeaders([QgsLayoutTableColumn(h) for h in header])
    table.setTableContents([[c if isinstance(c, QgsTableCell) else _cell(c) for c in row]
                            for row in rows])
    table.setColumnWidths(widths)
    table.setWrapBehavior(QgsLayoutTable.WrapBehavior.WrapText)
    table.setHeaderTextFormat(_text_format(8, bold=True))
    table.setContentTextFormat(_text_format(8))
    table.setCellMargin(1.0)
    table.setResizeMode(QgsLayoutMultiFrame.ResizeMode.RepeatUntilFinished)
    frame = QgsLayoutFrame(layout, table)
    height = PAGE_MM[1] - y - MARGIN_MM
    _place(frame, page, MARGIN_MM, y, _TABLE_W, height)
    table.addFrame(frame)
    table.recalculateFrameSizes()  # adds the pages the rest of the table needs
    if table.frameCount() > 1 and y != _TOP_MM:
        # Frames added copy the first one's place: on their own pages they start at the top.
        for more in table.frames()[1:]:
            _place(more, more.page(), MARGIN_MM, _TOP_MM, _TABLE_W,
                   PAGE_MM[1] - _TOP_MM - MARGIN_MM)
        table.recalculateFrameSizes()
    for more in range(first_new, layout.pageCollection().pageCount()):
        _text(layout, more, f"{title} (continued)", MARGIN_MM, MARGIN_MM - 2, _TABLE_W, 8,
              size=13, bold=True)
    end = None
    if table.frameCount() == 1:
        used = _height_of(layout, table, len(rows), header is not None, height)
        end = (page, y + used + 6) if used is not None else None
    return table, end


def _height_of(layout, table, count, header, most):
    """The least frame height (mm, to 0.5 mm) that shows all ``count`` rows of ``table``, or
    None when ``most`` does not (QGIS gives the rows that fit a height, not the height)."""
    context = QgsLayoutUtils.createRenderContextForLayout(layout, None)

    def fits(height):
        return table.rowsVisible(context, height, 0, header, False) >= count

    if not fits(most):
        return None
    low, high = 0.0, most
    while high - low > 0.5:
        middle = (low + high) / 2
        low, high = (low, middle) if fits(middle) else (middle, high)
    return high


def _tables(layout, title, parts):
    """A section of several tables under one page title: each ``(subtitle, header, rows,
    widths)`` below the one before where it fits (at least 40 mm left), else on a new page."""
    end = None
    for subtitle, header, rows, widths in parts:
        if end is None or end[1] > PAGE_MM[1] - MARGIN_MM - 40:
            end = (_page(layout), _TOP_MM)
        _unused, end = _table(layout, end[0], title, header, rows, widths, y=end[1],
                              subtitle=subtitle)


def _cover(layout, review, data):
    page = _page(layout)
    _text(layout, page, "SWPPP review", MARGIN_MM, 25, _TABLE_W, 14, size=24, bold=True)
    _text(layout, page, "Review of a construction site plan against the village stormwater "
          "chapter", MARGIN_MM, 40, _TABLE_W, 8, size=11)
    project, tool, reference = data["project"], data["tool"], data.get("reference")
    counts = review.counts()
    rows = [[label, project.get(key)] for label, key in (
        ("Project", "name"), ("Address", "address"), ("Applicant", "applicant"),
        ("Land use", "land_use"), ("Receiving waters", "receiving_waters"))]
    rows += [["Date of review", data["reviewed_on"]], ["Rules profile", data["profile"]],
             ["Tool", f"{tool['name']} {tool['version']}"],
             ["Site plan", f"{data['site']['path']} ({data['site']['input_crs']})"],
             ["Reference layers", f"{reference['path']}" if reference else "none given"],
             ["Findings", ", ".join(f"{counts[s]} {s.replace('_', ' ')}"
                                    for s in STATUSES if s in counts)]]
    table = QgsLayoutItemManualTable.create(layout)
    layout.addMultiFrame(table)
    table.setTableContents([[_cell(a), _cell(b)] for a, b in rows])
    table.setColumnWidths([50, _TABLE_W - 50])
    table.setWrapBehavior(QgsLayoutTable.WrapBehavior.WrapText)
    table.setContentTextFormat(_text_format(10))
    table.setCellMargin(1.5)
    frame = QgsLayoutFrame(layout, table)
    _place(frame, page, MARGIN_MM, 55, _TABLE_W, PAGE_MM[1] - 55 - MARGIN_MM)
    table.addFrame(frame)
    table.recalculateFrameSizes()


def _map_page(layout, tile, layers, crs):
    page = _page(layout)
    _text(layout, page, tile.title, MARGIN_MM, MARGIN_MM - 4, _TABLE_W, 8, size=12, bold=True)
    item = QgsLayoutItemMap(layout)
    layout.addLayoutItem(item)
    _place(item, page, MARGIN_MM, _TOP_MM, MAP_FRAME_IN[0] * MM_PER_INCH,
           MAP_FRAME_IN[1] * MM_PER_INCH)
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
    _text(layout, page, f"1 inch = {tile.scale / INCHES_PER_FOOT:g} feet (1:{tile.scale:g})",
          _SIDE_X, _TOP_MM + 36, _SIDE_W, 6, size=7)
    legend = QgsLayoutItemLegend(layout)
    legend.setTitle("Legend")
    legend.setLinkedMap(item)
    layout.addLayoutItem(legend)
    _place(legend, page, _SIDE_X, _TOP_MM + 45, _SIDE_W, 120)
    legend.setResizeToContents(False)
    legend.setLegendFilterByMapEnabled(True)  # only what this sheet shows
    for style in (QgsLegendStyle.Style.Title, QgsLegendStyle.Style.Group, QgsLegendStyle.Style.Subgroup,
                  QgsLegendStyle.Style.SymbolLabel):
        legend.setStyleFont(style, QFont(_FONT, 10 if style == QgsLegendStyle.Style.Title else 7,
                                         QFont.Weight.Normal if style == QgsLegendStyle.Style.SymbolLabel
                                         else QFont.Weight.Bold))
    legend.setSymbolWidth(6)
    legend.setSymbolHeight(3.5)
    legend.refresh()
    return item


def _chart_page(layout, review, folder):
    chart = review.charts.get("phasing_timeline")
    if chart is None:
        return
    page = _page(layout)
    _text(layout, page, "Phasing", MARGIN_MM, MARGIN_MM - 2, _TABLE_W, 8, size=13, bold=True)
    path = os.path.join(folder, "phasing.svg")
    chart.write(path)
    picture = QgsLayoutItemPicture(layout)
    picture.setPicturePath(path, QgsLayoutItemPicture.Format.FormatSVG)
    picture.setResizeMode(QgsLayoutItemPicture.ResizeMode.Zoom)
    layout.addLayoutItem(picture)
    _place(picture, page, MARGIN_MM, _TOP_MM, _TABLE_W, PAGE_MM[1] - _TOP_MM - MARGIN_MM)


def _findings_table(layout, review, data):
    profile = review.profile
    rows = [[_cell(f["status"].replace("_", " "), f["status"]),
             f"{profile.title(f['rule'])} ({f['rule']})", f["section"], f["message"],
             ", ".join(f["features"])] for f in data["findings"]]
    _table(layout, _page(layout), "Findings", ("Status", "Rule", "Section", "Finding", "Features"),
           rows, [22, 45, 35, 112, 40])


def _number(value, digits=2):
    return "" if value is None else f"{value:,.{digits}f}"


def _measurements_table(layout, review, data):
    m = data["measurements"]
    rows = [["Disturbed area (union of all disturbance)", f"{_number(m['disturbed_acres'])} acres"],
            ["Disturbance outside the site boundary",
             f"{_number(m['disturbed_outside_site_sq_ft'], 0)} sq ft"]]
    if m.get("max_concurrent_at"):
        rows.append(["Most disturbed and not yet stabilised at one time",
                     f"{_number(m.get('max_concurrent_disturbed_acres'))} acres on "
                     f"{m['max_concurrent_at']}"])
    rows += [[f"Phase {p['phase']}", f"{_number(p['acres'])} acres ({_number(p.get('new_acres'))} "
              f"new), {p['start_date']} to {p['stabilized_date'] or 'not scheduled'}"]
             for p in m.get("phases") or []]
    rows += [[f"SMP {smp} outside every maintenance easement", f"{_number(sq_ft, 1)} sq ft"]
             for smp, sq_ft in (m.get("uncovered_smp_sq_ft") or {}).items()]
    for key, label in (("wetland_acres", "Disturbance inside wetlands"),
                       ("wetland_adjacent_area_acres",
                        "Disturbance inside regulated adjacent areas (not in a wetland)")):
        if m.get(key) is not None:
            rows.append([label, f"{_number(m[key], 4)} acres"])
    for key in ("A", "B", "C"):
        c = data["conditions"][key]
        verdict = ("not decided" if c.get("decided") is False
                   else "applies" if c["applies"] else "does not apply")
        rows.append([f"Condition {key}", f"{verdict}: {'; '.join(c['evidence'])}"])
    _table(layout, _page(layout), "Measurements", ("Measurement", "Value"), rows,
           [100, _TABLE_W - 100])


def _not_checked_table(layout, review, data):
    rows = [[f"{review.profile.title(f['rule'])} ({f['rule']})", f["section"], f["message"],
             ", ".join(f["features"])] for f in data["findings"] if f["status"] == NEEDS_REVIEW]
    if not rows:
        rows = [["Nothing: every check decided.", "", "", ""]]
    _table(layout, _page(layout), "Not checked by this tool",
           ("Rule", "Section", "Why it could not be checked", "Features"), rows,
           [55, 35, 124, 40])


def _records_tables(layout, review, data):
    """Construction-phase records (when the review was given them): files, period, storms."""
    records = data.get("records")
    if not records:
        return
    rain, period, m = records["rain"], records["period"], records["measurements"]
    reports = f"{records['log']} ({m['inspection_reports']} reports in the period)"
    rows = [["Inspection log", reports],
            ["Rainfall", f"{rain['path']} ({rain['format']}"
                         + (f", station {rain['station']}" if rain["station"] else "") + ")"],
            ["Period", f"{period['from']} to {period['to']} (end: {period['to_from']})"],
            ["Notices", records.get("notices", "not given")],
            ["Sediment traps", records.get("traps", "not given")]]
    parts = [(None, ("Record", "Value"), rows, [60, _TABLE_W - 64])]
    if m["storms"]:
        storms = [[s["first_day"] if s["first_day"] == s["last_day"]
                   else f"{s['first_day']} to {s['last_day']}", _number(s["precip_in"]),
                   s["due"], s["reported_on"] or "none"] for s in m["storms"]]
        parts.append(("Storms in the period", ("Storm", "Inches", "Report due by end of",
                                               "Reported on"), storms, [70, 35, 60, 60]))
    _tables(layout, "Construction-phase records", parts)


def _figure(value, digits):
    return "n/a" if value is None else _number(value, digits)


def _hydrology_tables(layout, review, data, folder):
    """TR-55 figures per drainage area and storm, pre and post, WQv; then the peak charts."""
    m = data["measurements"]
    if not m.get("hydrology"):
        return
    rows = []
    for r in m["hydrology"]:
        pre, post = r["pre"], r["post"]
        rows.append([r["drainage_area"], r["storm"], _figure(r["rain_in"], 2),
                     _figure(pre["cn"], 1), _figure(pre["runoff_in"], 2),
                     _figure(pre["volume_cf"], 0), _figure(pre["peak_cfs"], 2),
                     _figure(post["cn"], 1), _figure(post["runoff_in"], 2),
                     _figure(post["volume_cf"], 0), _figure(post["peak_cfs"], 2),
                     "; ".join(n for n in (pre["note"], post["note"]) if n)])
    sources = sorted({r["rainfall_source"] for r in m["hydrology"] if r.get("rainfall_source")})
    method = [[(f"NRCS TR-55 (1986): curve numbers from Tables 2-2a and 2-2c, runoff by eq. 2-3, "
                f"peaks by the graphical method (Chapter 4) for a Type "
                f"{m['hydrology'][0].get('rainfall_distribution')} distribution. Design "
                f"rainfall: {'; '.join(sources)}.")]]
    wqv = [[w["drainage_area"], _figure(w["rain_in"], 2), f"{w['impervious_fraction']:.0%}",
            _figure(w["area_acres"], 2), _figure(w["wqv_cf"], 0)]
           for w in m.get("water_quality_volume") or []]
    title = "Hydrology (TR-55)"
    parts = [(None, ("Drainage area", "Storm", "P (in)", "Pre CN", "Pre Q (in)",
                     "Pre volume (cu ft)", "Pre peak (cfs)", "Post CN", "Post Q (in)",
                     "Post volume (cu ft)", "Post peak (cfs)", "Notes"),
              rows, [24, 18, 13, 14, 16, 22, 18, 14, 16, 22, 18, 33]),
             (None, None, method, [_TABLE_W - 4])]
    if wqv:
        parts.append(("Water quality volume", ("Drainage area", "90% rainfall P (in)",
                                               "Impervious", "Acres", "WQv (cu ft)"),
                      wqv, [55, 45, 35, 35, 55]))
    _tables(layout, title, parts)
    _chart_pages(layout, review, folder, title,
                 [name for name in review.charts if name.startswith("hydrology_")])


def _chart_pages(layout, review, folder, title, names, per_page=2):
    """``names``' charts as pictures, ``per_page`` stacked on a page (each chart draws its
    own title)."""
    height = (PAGE_MM[1] - _TOP_MM - MARGIN_MM) / per_page
    for index, name in enumerate(names):
        slot = index % per_page
        if slot == 0:
            page = _page(layout)
            _text(layout, page, title if index == 0 else f"{title} (continued)", MARGIN_MM,
                  MARGIN_MM - 2, _TABLE_W, 8, size=13, bold=True)
        chart = review.charts[name]
        y = _TOP_MM + slot * height
        path = os.path.join(folder, f"chart_{index}.svg")
        chart.write(path)
        picture = QgsLayoutItemPicture(layout)
        picture.setPicturePath(path, QgsLayoutItemPicture.Format.FormatSVG)
        picture.setResizeMode(QgsLayoutItemPicture.ResizeMode.Zoom)
        layout.addLayoutItem(picture)
        _place(picture, page, MARGIN_MM, y, _TABLE_W, height - 4)


def _checklist_table(layout, review, data):
    """Each checklist item: status, the chapter's text, the evidence, a reviewer's confirmation."""
    checklist = data.get("checklist")
    if not checklist:
        return
    rows = []
    for entry in checklist:
        # One wide cell (the chapter's words, then the evidence) prints far shorter than two.
        text = f"{entry['text']}\nEvidence: {entry['evidence']}"
        c = entry.get("confirmation")
        if c:
            text += (f"\nConfirmed by {c['reviewer']} on {c['date']}"
                     + (f": {c['note']}" if c.get("note") else ""))
        rows.append([entry["item"], _cell(entry["status"].replace("_", " "),
                                         STATUS_AS_FINDING.get(entry["status"], "")), text])
    note = [[("Provided: the site plan shows it or the applicant's submission names a document; "
              "confirmed: a reviewer checked it. Items due after final construction are not "
              "counted before approval.")]]
    _tables(layout, "SWPPP contents checklist",
            [(None, None, note, [_TABLE_W - 4]),
             (None, ("Item", "Status", "The chapter requires; evidence"), rows,
              [24, 24, _TABLE_W - 56])])


def _esc_tables(layout, review, data):
    """The esc_practice layer per stage (SWPPP B(7)-(11)): sizes, lengths, schedule."""
    esc = data["measurements"].get("esc_practices")
    if not esc:
        return

    def figure(value, digits=0):
        return "" if value is None else _number(value, digits)

    stages = [[stage, str(n["practices"]), figure(n["measured_length_ft"]),
               figure(n["area_sq_ft"])] for stage, n in esc["by_stage"].items()]
    practices = [[p["practice"] or "", p["feature"], p["stage"] or "not stated", p["size"] or "",
                  figure(p["length_ft"]), figure(p["measured_length_ft"]),
                  figure(p["area_sq_ft"]), figure(p["drainage_area_acres"], 2),
                  p["install_by"] or "", p["remove_after"] or ""] for p in esc["practices"]]
    _tables(layout, "Erosion and sediment control practices",
            [("By stage", ("Stage", "Practices", "Measured length (ft)", "Area (sq ft)"), stages,
              [60, 40, 50, 50]),
             ("Practices", ("Practice", "Feature", "Stage", "Size", "Length stated (ft)",
                            "Length measured (ft)", "Area (sq ft)", "Drainage area (ac)",
                            "Install by", "Remove after"), practices,
              [48, 24, 20, 32, 18, 20, 16, 18, 18, 16])])


# The report ---------------------------------------------------------------------------------
def build_layout(review, folder, progress=None):
    """The report's print layout (and its project, which owns the layers) for ``review``.

    ``folder`` holds the map's GeoPackage and the chart while the layout lives. Returns
    ``(layout, project, maps)``: ``maps`` are the map items, one per sheet, in order.
    """
    data = review.to_dict()
    project = QgsProject()
    crs = QgsCoordinateReferenceSystem(review.area_crs)
    if not crs.isValid():
        crs = QgsCoordinateReferenceSystem.fromWkt(review.site.area_crs.to_wkt())
    project.setCrs(crs)
    layers = _load_layers(_map_sources(review, folder), project)
    scale = map_scale(review.profile)
    tiles = map_tiles(site_footprint(review.site), scale, MAP_FRAME_IN,
                      units_per_foot(review.site.area_crs))
    layout = QgsPrintLayout(project)
    layout.setName("SWPPP review")
    layout.setUnits(QgsUnitTypes.LayoutUnit.LayoutMillimeters)
    _cover(layout, review, data)
    maps = []
    for tile in tiles:
        if progress is not None:
            progress.check_canceled()
        maps.append(_map_page(layout, tile, layers, crs))
    _chart_page(layout, review, folder)
    _findings_table(layout, review, data)
    _measurements_table(layout, review, data)
    # In the HTML report's order (analysis.report.html.SECTIONS); each left out without its data.
    _records_tables(layout, review, data)
    _hydrology_tables(layout, review, data, folder)
    _checklist_table(layout, review, data)
    _esc_tables(layout, review, data)
    _not_checked_table(layout, review, data)
    _page_numbers(layout)
    return layout, project, maps


def _page_numbers(layout):
    """"Page n of N" at the foot of every page (QGIS's layout variables; our text only)."""
    for page in range(layout.pageCollection().pageCount()):
        label = _text(layout, page, "Page [% @layout_page %] of [% @layout_numpages %]",
                      PAGE_MM[0] - MARGIN_MM - 40, PAGE_MM[1] - MARGIN_MM + 4, 40, 5, size=7)
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
    return MapSheet(item.page(), (position.x(), position.y(), size.width(), size.height()),
                    (extent.xMinimum(), extent.yMinimum(), extent.xMaximum(), extent.yMaximum()),
                    item.scale())


def write_report_pdf(review, path, progress=None):
    """Lay out ``review``'s report and export it as a PDF at ``path``; a :class:`PdfReport`.

    Raises OSError when QGIS could not write the file.
    """
    if progress is not None:
        progress.step(0.95, "laying out the PDF report")
    with tempfile.TemporaryDirectory(prefix="swppp_report_") as folder:
        layout, project, maps = build_layout(review, folder, progress)
        if progress is not None:
            progress.check_canceled()
        settings = QgsLayoutExporter.PdfExportSettings()
        settings.dpi = 300
        settings.rasterizeWholeImage = False
        settings.appendGeoreference = False
        settings.exportMetadata = True
        # Text as text, not outlines: the PDF can be searched and its words copied.
        settings.textRenderFormat = Qgis.TextRenderFormat.AlwaysText
        result = QgsLayoutExporter(layout).exportToPdf(str(path), settings)
        written = PdfReport(layout.pageCollection().pageCount(), [_sheet(m) for m in maps])
        # Layers hold the GeoPackage open: let them go before the folder is removed.
        project.removeAllMapLayers()
        del layout
    if result != QgsLayoutExporter.ExportResult.Success or not os.path.isfile(path):
        raise OSError(f"QGIS could not write the PDF report {path} (layout export error {result})")
    return written


def stage_pdf_report(review, target, progress=None):
    """The review's report as a PDF in a hidden temporary file beside ``target``; its path."""
    staged = stage(target)
    try:
        write_report_pdf(review, staged, progress)
    except BaseException:
        discard(staged)
        raise
    return str(staged)


_STANDALONE = []  # the command line's QgsApplication, kept alive for the process


def standalone_pdf_report(review, target, progress=None):
    """For the command line: start QGIS (headless) where no QGIS runs, stage the PDF; its path."""
    if QgsApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        application = QgsApplication([], False)
        application.initQgis()
        _STANDALONE.append(application)
    return stage_pdf_report(review, target, progress)
