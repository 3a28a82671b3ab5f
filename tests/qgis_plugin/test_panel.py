"""The "SWPPP Review" dock panel in real QGIS: layers mapped, a background run, the findings.

The panel runs ``swppp:review`` as a task of QGIS's task manager; the tests spin the event loop
until it is done, as QGIS's own loop would.
"""

import json
import time

import pytest
from qgis.core import (
    QgsApplication,
    QgsCoordinateReferenceSystem,
    QgsCoordinateTransform,
    QgsFeatureRequest,
    QgsProject,
    QgsVectorFileWriter,
    QgsVectorLayer,
)
from qgis.gui import QgsCollapsibleGroupBox, QgsFileWidget

from tests.qgis_plugin.ifaces import Iface

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = (
    "project",
    "site_boundary",
    "disturbance",
    "smp",
    "easement",
    "discharge_point",
    "public_row",
    "layout_scale",
    "drainage_area",
    "soils",
    "land_cover_pre",
    "land_cover_post",
    "hydrology_claims",
)


def wait_for(panel, seconds=180):
    """Spin the event loop until the panel's run is over."""
    deadline = time.monotonic() + seconds
    while panel.is_running():
        assert time.monotonic() < deadline, "the review task did not finish"
        QgsApplication.processEvents()
        time.sleep(0.01)
    QgsApplication.processEvents()


def cad_layer(site, role, renames, folder):
    """The site plan's ``role`` layer as a CAD export would carry it: another file, another
    layer name, fields renamed (``{contract: theirs}``); loaded into the project."""
    source = QgsVectorLayer(f"{site}|layername={role}", role, "ogr")
    copy = source.materialize(QgsFeatureRequest())
    fields = copy.fields()
    assert copy.dataProvider().renameAttributes({fields.indexOf(c): t for c, t in renames.items()})
    copy.updateFields()
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName, options.layerName = "GPKG", f"CAD_{role.upper()}"
    path = str(folder / f"cad_{role}.gpkg")
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        copy, path, QgsProject.instance().transformContext(), options
    )
    assert error == QgsVectorFileWriter.WriterError.NoError, message
    layer = QgsVectorLayer(f"{path}|layername=CAD_{role.upper()}", f"CAD {role}", "ogr")
    assert layer.isValid()
    QgsProject.instance().addMapLayer(layer)
    return layer


@pytest.fixture
def project_layers(data_copy, tmp_path):
    """The demo site plan's layers in the project; disturbance and SMPs as from a CAD file."""
    site = data_copy("demo_site.gpkg")
    project = QgsProject.instance()
    layers = {}
    for role in ROLES:
        layer = QgsVectorLayer(f"{site}|layername={role}", role, "ogr")
        assert layer.isValid(), role
        project.addMapLayer(layer)
        layers[role] = layer
    layers["disturbance"] = cad_layer(
        site, "disturbance", {"phase": "PHASE_NO", "stabilized_date": "STAB_DATE"}, tmp_path
    )
    layers["smp"] = cad_layer(site, "smp", {"smp_id": "SMP_NAME"}, tmp_path)
    yield layers
    project.clear()


@pytest.fixture
def panel(qgis_iface, staged_plugin):
    from swppp_review.panel import ReviewPanel

    QgsProject.instance().clear()  # each test starts from a new project, as a reviewer would
    panels = []

    def make():
        made = ReviewPanel(qgis_iface)
        panels.append(made)
        return made

    yield make
    for made in panels:
        made.unload()
        made.deleteLater()
    QgsApplication.processEvents()
    QgsProject.instance().clear()


def run_review(review, site, tmp_path):
    """Run ``review`` (a panel) on the site plan GeoPackage ``site`` and wait for it."""
    review.site_file.setFilePath(str(site))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    review.run()
    wait_for(review)
    return review


def map_layers(panel, layers):
    """Choose each role's layer and the renamed fields through the panel's combo boxes."""
    panel.from_layers.setChecked(True)
    for role, layer in layers.items():
        panel.mapping.layer_combo(role).setLayer(layer)
    # Same-named fields were picked by themselves; the CAD names are chosen by hand.
    panel.mapping.field_combo("disturbance", "phase").setField("PHASE_NO")
    panel.mapping.field_combo("disturbance", "stabilized_date").setField("STAB_DATE")
    panel.mapping.field_combo("smp", "smp_id").setField("SMP_NAME")


def test_panel_reviews_project_layers_and_shows_the_findings(
    panel, project_layers, data_copy, tmp_path, qgis_iface
):
    from swppp_review.panel import INDEX_ROLE

    from analysis.findings import REPORT_ORDER, STATUS_COLOURS

    canvas = qgis_iface.mapCanvas()
    canvas.setDestinationCrs(QgsCoordinateReferenceSystem("EPSG:3857"))
    review = panel()
    map_layers(review, project_layers)
    assert review.mapping.field_combo("disturbance", "start_date").currentField() == "start_date"
    review.reference.setFilePath(str(data_copy("demo_reference.gpkg")))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    progress = []
    review.progress.valueChanged.connect(progress.append)

    review.run()
    assert review.is_running() and not review.run_button.isEnabled()
    wait_for(review)

    assert review.run_button.isEnabled() and not review.cancel_button.isEnabled()
    assert review.result is not None, review.status.text()
    assert max(progress) == 100 and len(set(progress)) > 2  # it moved while running
    # The list holds every finding of the result with status, section and message, the worst
    # first as in the report (fail, needs review, warn, pass, info, not applicable), the
    # review's order within a status.
    findings = review.result["findings"]
    assert review.tree.topLevelItemCount() == len(findings) > 10
    items = [review.tree.topLevelItem(i) for i in range(len(findings))]
    order = [item.data(0, INDEX_ROLE) for item in items]
    assert sorted(order) == list(range(len(findings)))
    ranks = [REPORT_ORDER.index(findings[i]["status"]) for i in order]
    assert ranks == sorted(ranks) and len(set(ranks)) >= 4
    assert order != sorted(order)  # the demo's review order is not the report's
    assert all(order[k] < order[k + 1] for k in range(len(order) - 1) if ranks[k] == ranks[k + 1])
    # One column: status, rule and section on the first line, the message below, wrapped.
    rows = [item.text(0) for item in items]
    assert rows == [
        f"{findings[i]['status'].replace('_', ' ')} \u00b7 {findings[i]['rule']} "
        f"\u00b7 {findings[i]['section']}\n{findings[i]['message']}"
        for i in order
    ]
    assert rows[0].startswith("fail")
    failed = [i for i, f in enumerate(findings) if f["rule"] == "easement_coverage" and f["status"] == "fail"]
    assert len(failed) == 1 and findings[failed[0]]["features"] == ["smp:BR-2"]
    icon = items[order.index(failed[0])].icon(0).pixmap(14, 14).toImage()
    assert icon.pixelColor(7, 7).name() == STATUS_COLOURS["fail"]
    # The mapped fields were read: the phases are the demo's (from PHASE_NO), and the same
    # findings as the GeoPackage review.
    assert [p["phase"] for p in review.result["measurements"]["phases"]] == ["1", "2", "3"]
    assert review.tabs.currentIndex() == 1 and review.tabs.tabText(1) == "Findings"

    # "Only what needs action" hides pass, info and not applicable; unticked, all are back.
    review.action_only.setChecked(True)
    shown = [findings[i]["status"] for i, item in zip(order, items) if not item.isHidden()]
    assert set(shown) == {"fail", "warn", "needs_review"}
    assert len(shown) == sum(f["status"] in ("fail", "warn", "needs_review") for f in findings)
    review.action_only.setChecked(False)
    assert not any(review.tree.topLevelItem(i).isHidden() for i in range(len(findings)))

    # The results: one group, styled from the GeoPackage; the reference file's layers under
    # them as context (the plan's layers are the project's own here).
    group = QgsProject.instance().layerTreeRoot().findGroup("SWPPP Review results")
    assert group is not None
    assert [n.layer().name() for n in group.children() if hasattr(n, "layer")] == [
        "findings",
        "smp",
        "easement",
        "disturbance",
    ]
    context = group.findGroup("Plan and reference (context)")
    assert [n.layer().name() for n in context.findLayers()] == [
        "wetlands",
        "impaired_waters",
        "tmdl_watersheds",
        "catchments",
    ]
    assert group.children()[-1] is context  # drawn under the results
    assert context.findLayers()[0].layer().renderer().symbol().color().name() == "#81d4fa"
    # Both reports written, each with its button.
    assert review.open_report.isEnabled() and review.open_pdf.isEnabled()
    with open(review.result_paths["OUTPUT_PDF"], "rb") as pdf:
        assert pdf.read(5) == b"%PDF-"
    renderers = {n.layer().name(): n.layer().renderer() for n in group.findLayers()}
    assert renderers["findings"].type() == "categorizedSymbol"
    assert renderers["findings"].classAttribute() == "status"
    assert renderers["disturbance"].classAttribute() == "phase"
    assert {c.value() for c in renderers["disturbance"].categories()} == {"1", "2", "3", ""}
    assert renderers["easement"].classAttribute() == "recorded"
    assert renderers["smp"].type() == "singleSymbol"

    # Choosing the failing finding selects BR-2 and its uncovered part, and zooms to them.
    review.select_finding(failed[0])
    smp = review.result_layers["smp"]
    assert [f["smp_id"] for f in smp.selectedFeatures()] == ["BR-2"]
    assert review.result_layers["findings"].selectedFeatureIds() == [failed[0] + 1]
    assert review.result_layers["disturbance"].selectedFeatureCount() == 0
    to_canvas = QgsCoordinateTransform(
        smp.crs(), canvas.mapSettings().destinationCrs(), QgsProject.instance()
    )
    box = to_canvas.transformBoundingBox(smp.boundingBoxOfSelected())
    assert canvas.extent().contains(box)
    assert canvas.extent().width() < 4 * max(box.width(), box.height())  # zoomed in, not out
    # A finding naming disturbance polygons selects them (by their fid in the plan).
    sequence = next(i for i, f in enumerate(findings) if f["rule"] == "phasing_sequence")
    review.select_finding(sequence)
    chosen = review.result_layers["disturbance"].selectedFeatures()
    assert sorted(f["plan_fid"] for f in chosen) == sorted(
        int(label.split(":")[1]) for label in findings[sequence]["features"]
    )
    assert smp.selectedFeatureCount() == 0


def test_mapping_is_kept_in_the_project_and_restored(panel, project_layers, tmp_path):
    first = panel()
    map_layers(first, project_layers)
    saved, found = QgsProject.instance().readEntry("swppp_review", "layer_mapping", "")
    assert found
    assert json.loads(saved)["disturbance"]["fields"]["phase"] == "PHASE_NO"
    assert first.mapping.field_map() == {
        "disturbance.phase": "PHASE_NO",
        "disturbance.stabilized_date": "STAB_DATE",
        "smp.smp_id": "SMP_NAME",
    }

    # Through the project file too: written, cleared, read back.
    project_file = str(tmp_path / "review.qgz")
    assert QgsProject.instance().write(project_file)
    QgsProject.instance().clear()
    assert QgsProject.instance().read(project_file)
    second = panel()
    assert second.from_layers.isChecked()
    disturbance = second.mapping.layer_combo("disturbance").currentLayer()
    assert disturbance is not None and disturbance.name() == "CAD disturbance"
    assert second.mapping.field_combo("disturbance", "phase").currentField() == "PHASE_NO"
    assert second.mapping.field_combo("smp", "smp_id").currentField() == "SMP_NAME"
    assert second.mapping.layer_combo("project").currentLayer().name() == "project"
    assert second.mapping.field_map() == first.mapping.field_map()
    # Collapsed, a role's group still says which layer it reads.
    box = second.mapping.findChild(QgsCollapsibleGroupBox, "role_disturbance")
    assert box.title().endswith(": CAD disturbance")


def test_cancel_stops_the_run_and_loads_nothing(panel, data_copy, tmp_path):
    review = panel()
    review.site_file.setFilePath(str(data_copy("demo_site.gpkg")))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    outcome = []
    review.finished.connect(outcome.append)
    review.run()
    review.cancel()
    wait_for(review)
    assert outcome == [False], review.status.text()
    assert "Cancelled" in review.status.text()
    assert review.result is None and review.tree.topLevelItemCount() == 0
    assert QgsProject.instance().layerTreeRoot().findGroup("SWPPP Review results") is None
    assert not (tmp_path / "results").exists() or not any(
        p.is_file() for p in (tmp_path / "results").rglob("*")
    )


def test_plan_sheets_are_checked_for_scale(panel, data_copy, tmp_path):
    review = panel()
    review.site_file.setFilePath(str(data_copy("demo_site.gpkg")))
    sheets = [data_copy("sheets/sheet_2260_100ft.tif"), data_copy("sheets/sheet_2260_200ft.tif")]
    review.sheets.setFilePath(" ".join(f'"{s}"' for s in sheets))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    review.run()
    wait_for(review)
    assert review.result is not None, review.status.text()
    by_sheet = {
        f["features"][0]: f["status"]
        for f in review.result["findings"]
        if f["rule"] == "site_map_scale" and f["features"] and f["features"][0].startswith("sheet:")
    }
    assert by_sheet == {"sheet:sheet_2260_100ft.tif": "pass", "sheet:sheet_2260_200ft.tif": "warn"}
    saved, _ = QgsProject.instance().readEntry("swppp_review", "sheets", "")
    assert QgsFileWidget.splitFilePaths(saved) == [str(s) for s in sheets]


def test_bad_input_shows_the_analysis_message(panel, data_copy, tmp_path):
    review = run_review(panel(), data_copy("variants/missing_field.gpkg"), tmp_path)
    assert review.result is None
    assert "land_use" in review.status.text() and "Traceback" not in review.status.text()


def test_nothing_chosen_says_what_to_choose(panel):
    review = panel()
    review.from_layers.setChecked(True)
    review.run()
    assert not review.is_running()
    assert "layers" in review.status.text()


def test_plugin_offers_the_panel_in_menu_and_toolbar(staged_plugin, swppp_plugin, qgis_iface):
    iface = Iface(qgis_iface)
    plugin = staged_plugin.classFactory(iface)
    # The session's provider is registered already (QGIS refuses a second "swppp"): share it.
    plugin.provider = swppp_plugin.provider
    plugin.initGui()
    try:
        assert [a.text() for a in iface.toolbar] == ["SWPPP Review panel"]
        assert [a.text() for a in iface.menu] == [
            "SWPPP Review panel",
            "Review site plan (Processing dialog)…",
        ]
        assert plugin.panel is None  # made when first opened, not at QGIS start-up
        plugin.panel_action.trigger()
        assert plugin.panel is not None and iface.docks == [plugin.panel]
        assert plugin.panel.windowTitle() == "SWPPP Review"
        assert [plugin.panel.tabs.tabText(i) for i in range(plugin.panel.tabs.count())] == [
            "Review",
            "Findings",
            "Checklist",
        ]
    finally:
        plugin.provider = None  # the session's, left registered for the other tests
        plugin.unload()
    assert iface.docks == [] and iface.menu == [] and iface.toolbar == []


def test_the_plugin_loads_and_unloads_five_times_leaving_nothing(staged_plugin, swppp_plugin, qgis_iface):
    """Issue 34, item 1: a reload leaves nothing behind: menu, toolbar and dock emptied, every
    connection made by initGui and the panel disconnected (no handler of an unloaded plugin
    answers a signal), the provider count unchanged."""
    from qgis.core import QgsApplication

    providers = len(QgsApplication.processingRegistry().providers())
    for _ in range(5):
        iface = Iface(qgis_iface)
        plugin = staged_plugin.classFactory(iface)
        plugin.provider = swppp_plugin.provider
        plugin.initGui()
        action = plugin.panel_action
        action.trigger()
        panel = plugin.panel
        assert panel is not None and action.receivers(action.toggled) == 1
        plugin.provider = None
        plugin.unload()
        assert iface.docks == [] and iface.menu == [] and iface.toolbar == []
        assert plugin.panel is None and plugin.panel_action is None and plugin.action is None
        assert panel.receivers(panel.visibilityChanged) == 0
    assert len(QgsApplication.processingRegistry().providers()) == providers


def test_a_point_finding_is_selected_on_the_points_layer(panel, data_copy, tmp_path):
    review = run_review(panel(), data_copy("variants/smp_points.gpkg"), tmp_path)
    assert review.result is not None, review.status.text()
    group = QgsProject.instance().layerTreeRoot().findGroup("SWPPP Review results")
    assert [n.layer().name() for n in group.children() if hasattr(n, "layer")] == [
        "findings_points",
        "findings",
        "smp",
        "easement",
        "disturbance",
    ]
    points = review.result_layers["findings_points"]
    numbers = sorted(f["finding"] for f in points.getFeatures())
    review.select_finding(numbers[0] - 1)
    assert [f["finding"] for f in points.selectedFeatures()] == [numbers[0]]
    # Its row in the findings layer (every finding has one) is chosen too; it has no polygon.
    [row] = review.result_layers["findings"].selectedFeatures()
    assert row["finding"] == numbers[0] and row.geometry().isNull()
    smp_ids = [
        label.split(":", 1)[1]
        for label in review.findings[numbers[0] - 1]["features"]
        if label.startswith("smp:")
    ]
    assert [f["smp_id"] for f in review.result_layers["smp"].selectedFeatures()] == smp_ids


def test_findings_and_the_checklist_read_whole_at_the_docks_default_width(panel, data_copy, tmp_path):
    """Issue 34 item 13: at the width the dock first opens at, each finding's row is as tall as
    its text wrapped at the list's one column (nothing cut), the tooltip and the detail pane
    hold the finding whole, the checklist's chapter text reads in its detail pane; the site
    plan's and the reference's layers are on the map as context."""
    import html

    from qgis.PyQt.QtCore import QRect, Qt
    from qgis.PyQt.QtWidgets import QStyle, QStyleOptionViewItem
    from swppp_review.panel import DOCK_WIDTH, FINDING_ROLE

    review = panel()
    review.reference.setFilePath(str(data_copy("demo_reference.gpkg")))
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    assert review.result is not None, review.status.text()
    review.resize(review.sizeHint())
    review.show()
    QgsApplication.processEvents()
    assert review.width() >= DOCK_WIDTH
    tree = review.tree
    column = tree.header().sectionSize(0)
    assert column > DOCK_WIDTH * 0.75  # the message has (nearly) the dock's width
    metrics, style = tree.fontMetrics(), tree.style()
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, tree) + 1
    for i in range(tree.topLevelItemCount()):
        item = tree.topLevelItem(i)
        # Where the style draws the row's text (the icon beside it), and the height its lines
        # take wrapped at that width less the text's margins: the row holds them all.
        cell = QStyleOptionViewItem()
        cell.initFrom(tree)
        cell.rect = tree.visualItemRect(item)
        cell.features = (
            QStyleOptionViewItem.ViewItemFeature.HasDecoration
            | QStyleOptionViewItem.ViewItemFeature.HasDisplay
            | QStyleOptionViewItem.ViewItemFeature.WrapText
        )
        cell.decorationSize = tree.iconSize()
        cell.text = item.text(0)
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, cell, tree)
        lines = metrics.boundingRect(
            QRect(0, 0, text.width() - 2 * margin, 100000), Qt.TextFlag.TextWordWrap, item.text(0)
        ).height()
        assert cell.rect.height() >= lines, item.text(0)
        finding = item.data(0, FINDING_ROLE)
        assert item.toolTip(0).startswith("<p>")
        assert html.escape(finding["message"]) in item.toolTip(0)
    failed = next(i for i, f in enumerate(review.findings) if f["status"] == "fail")
    review.select_finding(failed)
    shown = review.detail.toPlainText()
    assert review.findings[failed]["message"] in shown
    assert "Features: " + ", ".join(review.findings[failed]["features"]) in shown
    first = review.result["checklist"][0]
    assert first["text"] in review.checklist.detail.toPlainText()
    group = QgsProject.instance().layerTreeRoot().findGroup("SWPPP Review results")
    context = group.findGroup("Plan and reference (context)")
    assert [n.layer().name() for n in context.findLayers()] == [
        "discharge_point",
        "site_boundary",
        "public_row",
        "drainage_area",
        "wetlands",
        "impaired_waters",
        "tmdl_watersheds",
        "catchments",
    ]
    # A second run replaces the group, context and all: nothing twice.
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    names = [layer.name() for layer in QgsProject.instance().mapLayers().values()]
    assert names.count("site_boundary") == 1 and names.count("wetlands") == 1


def test_the_report_layout_opens_in_the_project_for_the_layout_designer(panel, data_copy, tmp_path):
    """Issue 34 item 13: the run keeps the PDF's layout as a template; Edit the report layout
    adds it to the project's layouts with its map layers (in a group, unticked), every map item
    drawing them, and it exports as the PDF did: the decision and the sign-off on page 1."""
    import subprocess

    from qgis.core import QgsLayoutItemMap
    from swppp_review.report_layout import LAYOUT_LAYERS_GROUP, export_pdf

    review = panel()
    review.reference.setFilePath(str(data_copy("demo_reference.gpkg")))
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    assert review.edit_layout.isEnabled(), review.status.text()
    layout = review.open_layout()
    project = QgsProject.instance()
    assert layout is not None and layout.name() in [
        lay.name() for lay in project.layoutManager().printLayouts()
    ]
    group = project.layerTreeRoot().findGroup(LAYOUT_LAYERS_GROUP)
    assert group is not None and group.findLayers()
    assert not any(node.isVisible() for node in group.findLayers())
    maps = [item for item in layout.items() if isinstance(item, QgsLayoutItemMap)]
    assert len(maps) >= 2  # the sheet and its inset
    for item in maps:
        assert item.layers() and all(layer.isValid() for layer in item.layers())
    pdf = tmp_path / "edited.pdf"
    export_pdf(layout, pdf)  # its text as text, as the report's PDF
    first = subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "Issuing authority" in first and "Signature" in first
    # A second time: another layout, the same layers group.
    again = review.open_layout()
    assert again.name() != layout.name()
    assert len(project.layerTreeRoot().findGroups()) == len(
        {g.name() for g in project.layerTreeRoot().findGroups()}
    )


def test_an_added_tab_adds_its_parameters_to_the_run(panel, data_copy, tmp_path):
    """How the checklist tab plugs in: a tab, and parameters for each run (here PROFILE: a
    profile file the provider writes into the run's folder, which the review then uses)."""
    from pathlib import Path

    from qgis.PyQt.QtWidgets import QLabel

    import analysis.profile  # the staged plugin's copy

    review = panel()
    review.site_file.setFilePath(str(data_copy("demo_site.gpkg")))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    shipped = Path(analysis.profile.__file__).parent / "profiles" / "kiryas_joel.toml"
    text = shipped.read_text(encoding="utf-8")
    assert 'name = "kiryas_joel"' in text
    folders = []

    def parameters(folder):
        folders.append(folder)
        copy = Path(folder) / "checked.toml"
        copy.write_text(text.replace('name = "kiryas_joel"', 'name = "checked copy"', 1), encoding="utf-8")
        return {"PROFILE": str(copy)}

    index = review.add_tab(QLabel("extra"), "Extra", parameters=parameters)
    assert index == review.tabs.count() - 1 and review.tabs.tabText(index) == "Extra"
    review.run()
    wait_for(review)
    assert review.result is not None, review.status.text()
    assert len(folders) == 1 and review.result_paths["OUTPUT_JSON"].startswith(folders[0])
    assert review.result["profile"] == "checked copy"


def test_checklist_tab_confirms_items_into_the_next_run_and_the_project(panel, data_copy, tmp_path):
    """The reviewer ticks a checklist item the plan cannot show; the next run reports it
    confirmed with name, date and note, and the tick is kept in the project."""
    review = run_review(panel(), data_copy("demo_site.gpkg"), tmp_path)
    assert review.result is not None, review.status.text()
    tab = review.checklist
    assert review.tabs.tabText(review.tabs.indexOf(tab)) == "Checklist"
    assert tab.table.rowCount() == len(review.result["checklist"])
    unconfirmed = review.result["checklist"]
    missing = [e["item"] for e in unconfirmed if e["status"] == "missing"]
    assert missing, "the demo lacks checklist items"
    item = missing[0]
    tab.reviewer.setText("A. Reviewer")
    tab.set_confirmed(item, True, note="seen in the <b>SWPPP</b> binder, p. 4")
    review.run()
    wait_for(review)
    entry = next(e for e in review.result["checklist"] if e["item"] == item)
    assert entry["status"] == "confirmed"
    assert entry["confirmation"]["reviewer"] == "A. Reviewer"
    assert "binder" in entry["confirmation"]["note"]
    # Kept in the project: a new panel on the same project shows the tick once it has items.
    again = panel()
    again.checklist.show_checklist(unconfirmed)
    assert [c["item"] for c in again.checklist.confirmations()] == [item]


def test_reference_layers_of_the_project_review_as_the_reference_file(panel, data_copy, tmp_path):
    """The reference given as project layers (any provider) gives the file's Condition A and
    wetland acres; the choice is kept in the project; file and layers together are refused."""
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    by_file = panel()
    by_file.reference.setFilePath(str(reference))
    run_review(by_file, site, tmp_path / "file")
    assert by_file.result is not None, by_file.status.text()

    project = QgsProject.instance()
    project.clear()
    layers = {}
    for role in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        layer = QgsVectorLayer(f"{reference}|layername={role}", f"ref {role}", "ogr")
        assert layer.isValid(), role
        project.addMapLayer(layer)
        layers[role] = layer
    by_layers = panel()
    for role, layer in layers.items():
        by_layers.reference_mapping.set_layer(role, layer)
    run_review(by_layers, site, tmp_path / "layers")
    assert by_layers.result is not None, by_layers.status.text()
    assert by_layers.result["reference"]["kind"] == "qgis_layers"
    for key in ("wetland_acres", "wetland_adjacent_area_acres"):
        assert by_layers.result["measurements"][key] == pytest.approx(by_file.result["measurements"][key])
    assert by_layers.result["conditions"]["A"] == by_file.result["conditions"]["A"]

    again = panel()
    assert again.reference_mapping.layer_combo("wetlands").currentLayer() is layers["wetlands"]
    again.reference.setFilePath(str(reference))
    run_review(again, site, tmp_path / "both")
    assert again.result is None and "not both" in again.status.text()
