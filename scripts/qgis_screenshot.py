"""Start-up code for QGIS that shows what a reviewer sees, then saves a screenshot.

Run by scripts/qgis_screenshot.sh inside Xvfb: loads the demo site plan, starts the plugin from
the staged build, opens the SWPPP Review panel, chooses the demo GeoPackage and reference layers
and presses Run review, as a reviewer would; when the background run is over the findings list
and the styled result group are shown, the failing SMP's finding is chosen (selected on the
map), the map shows the whole site; then it saves the screenshot and quits.
"""
import json
import os

from qgis.core import QgsFillSymbol, QgsProject, QgsSingleSymbolRenderer, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication
from qgis.utils import iface, loadPlugin, plugins, startPlugin

SITE = os.environ["SWPPP_SITE"]
REFERENCE = os.environ["SWPPP_REFERENCE"]
RESULTS = os.environ["SWPPP_RESULTS"]
OUT = os.environ["SWPPP_SCREENSHOT"]
STATUS = os.path.splitext(OUT)[0] + ".json"  # what the panel showed, for the shell script
SHOWN = {"ok": False}

# The plan's context layers as a reviewer would style them: the boundary an outline, the
# right-of-way grey (the review's own layers come styled from its GeoPackage).
CONTEXT = {"site_boundary": {"color": "0,0,0,0", "outline_color": "40,40,40,255",
                             "outline_width": "0.8", "outline_style": "dash"},
           "public_row": {"color": "200,200,200,255", "outline_color": "120,120,120,255"}}
for name, style in CONTEXT.items():
    layer = QgsVectorLayer(f"{SITE}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    layer.setRenderer(QgsSingleSymbolRenderer(QgsFillSymbol.createSimple(style)))
    QgsProject.instance().addMapLayer(layer)
loadPlugin("swppp_review")
startPlugin("swppp_review")


def site_extent():
    boundary = QgsProject.instance().mapLayersByName("site_boundary")[0]
    return boundary.extent().buffered(120)


def zoom():
    iface.mapCanvas().setExtent(site_extent())
    iface.mapCanvas().refresh()


def run_review():
    plugin = plugins["swppp_review"]
    plugin.panel_action.setChecked(True)  # the toolbar button
    panel = plugin.panel
    panel.setMinimumWidth(620)
    panel.site_file.setFilePath(SITE)
    panel.reference.setFilePath(REFERENCE)
    panel.output_folder.setFilePath(RESULTS)
    panel.finished.connect(show_results)
    panel.run_button.click()


def show_results(ok):
    panel = plugins["swppp_review"].panel
    SHOWN.update(ok=ok, status=panel.status.text(), findings=panel.tree.topLevelItemCount(),
                 layers=sorted(panel.result_layers))
    if ok:
        failed = [i for i, f in enumerate(panel.findings)
                  if f["rule"] == "easement_coverage" and f["status"] == "fail"]
        if failed:
            panel.select_finding(failed[0])  # BR-2 and its uncovered part selected
    QTimer.singleShot(1500, zoom)  # the whole site, the selection highlighted in it
    QTimer.singleShot(4000, shoot)


def shoot():
    screen = QApplication.primaryScreen()
    screen.grabWindow(0).save(OUT, "PNG")
    with open(STATUS, "w", encoding="utf-8") as handle:
        json.dump(SHOWN, handle)
    QApplication.instance().exit(0)


iface.mainWindow().setGeometry(0, 0, 1600, 1000)  # no window manager under Xvfb
QTimer.singleShot(2000, zoom)
QTimer.singleShot(3000, run_review)
QTimer.singleShot(90000, shoot)  # never hang: whatever is on screen by then
