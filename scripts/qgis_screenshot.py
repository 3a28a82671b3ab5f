"""Start-up code for QGIS that shows what a reviewer sees, then saves screenshots.

Run by scripts/qgis_screenshot.sh inside Xvfb. The submitted plan's layers are in the project
(a group, hidden but for the boundary and the right-of-way); the plugin starts from the staged
build; the SWPPP Review panel opens, each role is mapped to its project layer, the reference
layers chosen: ``<name>_inputs.png`` shows that. Run review is pressed; when the background run
is over the findings list and the styled result group are shown, the failing SMP's finding is
chosen (selected on the map, read whole in the detail pane) and the map shows the whole site.
The run is recorded as round 1 of a review file in the results folder (the panel's "Review
file"), and the reviewer decides in the decision column: the failing SMP's finding overridden
with a reason, another accepted: ``<name>.png``; then the checklist tab: ``<name>_checklist.png``.
Then QGIS quits. The panel keeps the dock's default width.
"""

import json
import os
import time

from qgis.core import QgsFillSymbol, QgsProject, QgsSingleSymbolRenderer, QgsVectorLayer
from qgis.gui import QgsCollapsibleGroupBox
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication
from qgis.utils import iface, loadPlugin, plugins, startPlugin

SITE = os.environ["SWPPP_SITE"]
REFERENCE = os.environ["SWPPP_REFERENCE"]
RESULTS = os.environ["SWPPP_RESULTS"]
OUT = os.environ["SWPPP_SCREENSHOT"]
INPUTS = os.path.splitext(OUT)[0] + "_inputs.png"
CHECKLIST = os.path.splitext(OUT)[0] + "_checklist.png"
STATUS = os.path.splitext(OUT)[0] + ".json"  # what the panel showed, for the shell script
SHOWN = {"ok": False}
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
# The plan's context layers as a reviewer would style them: the boundary an outline, the
# right-of-way grey (the review's own layers come styled from its GeoPackage).
CONTEXT = {
    "site_boundary": {
        "color": "0,0,0,0",
        "outline_color": "40,40,40,255",
        "outline_width": "0.8",
        "outline_style": "dash",
    },
    "public_row": {"color": "200,200,200,255", "outline_color": "120,120,120,255"},
}

project = QgsProject.instance()
plan = project.layerTreeRoot().addGroup("Submitted site plan")
LAYERS = {}
for role in ROLES:
    layer = QgsVectorLayer(f"{SITE}|layername={role}", role, "ogr")
    assert layer.isValid(), role
    if role in CONTEXT:
        layer.setRenderer(QgsSingleSymbolRenderer(QgsFillSymbol.createSimple(CONTEXT[role])))
    project.addMapLayer(layer, False)
    plan.addLayer(layer).setItemVisibilityChecked(role in CONTEXT)
    LAYERS[role] = layer
plan.setExpanded(False)
loadPlugin("swppp_review")
startPlugin("swppp_review")


def site_extent():
    return LAYERS["site_boundary"].extent().buffered(120)


def zoom():
    iface.mapCanvas().setExtent(site_extent())
    iface.mapCanvas().refresh()


def shoot(path):
    QApplication.primaryScreen().grabWindow(0).save(path, "PNG")


def open_panel():
    plugin = plugins["swppp_review"]
    plugin.panel_action.setChecked(True)  # the toolbar button
    panel = plugin.panel
    panel.from_layers.setChecked(True)
    for role, layer in LAYERS.items():
        panel.mapping.set_layer(role, layer)
    # The SMP group open, the others closed: the field combo boxes under a layer.
    for box in panel.mapping.findChildren(QgsCollapsibleGroupBox):
        box.setCollapsed(box.objectName() not in ("role_disturbance", "role_smp"))
    panel.reference.setFilePath(REFERENCE)
    panel.output_folder.setFilePath(RESULTS)
    os.makedirs(RESULTS, exist_ok=True)
    panel.review_file.setFilePath(os.path.join(RESULTS, "project_review.gpkg"))
    panel.checklist.reviewer.setText("A. Reviewer, P.E.")


def run_review():
    shoot(INPUTS)
    panel = plugins["swppp_review"].panel
    panel.finished.connect(show_results)
    SHOWN["pressed"] = time.perf_counter()
    panel.run_button.click()


def show_results(ok):
    panel = plugins["swppp_review"].panel
    # From "Run review" pressed to the findings listed (issue 37: the panel's figure).
    SHOWN.update(
        seconds=round(time.perf_counter() - SHOWN.pop("pressed"), 2),
        ok=ok,
        status=panel.status.text(),
        findings=panel.tree.topLevelItemCount(),
        layers=sorted(panel.result_layers),
    )
    if ok:
        failed = [
            i
            for i, f in enumerate(panel.findings)
            if f["rule"] == "easement_coverage" and f["status"] == "fail"
        ]
        accepted = [i for i, f in enumerate(panel.findings) if f["status"] == "warn"]
        if accepted:
            SHOWN["accepted"] = panel.decide(accepted[0], "accept")
        if failed:
            SHOWN["overridden"] = panel.decide(
                failed[0],
                "override",
                "Easement over BR-2 extended (recorded 2026-11-30, liber 1234, page 56)",
            )
            panel.select_finding(failed[0])  # BR-2 and its uncovered part selected
    QTimer.singleShot(1500, zoom)  # the whole site, the selection highlighted in it
    QTimer.singleShot(4000, finish)


def finish():
    shoot(OUT)
    panel = plugins["swppp_review"].panel
    panel.tabs.setCurrentWidget(panel.checklist)  # the chapter's text of the first item
    QApplication.processEvents()
    shoot(CHECKLIST)
    with open(STATUS, "w", encoding="utf-8") as handle:
        json.dump(SHOWN, handle)
    QApplication.instance().exit(0)


iface.mainWindow().setGeometry(0, 0, 1600, 1000)  # no window manager under Xvfb
QTimer.singleShot(2000, zoom)
QTimer.singleShot(2500, open_panel)
QTimer.singleShot(4500, run_review)
QTimer.singleShot(90000, finish)  # never hang: whatever is on screen by then
