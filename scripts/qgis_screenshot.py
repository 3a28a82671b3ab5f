"""Start-up code for QGIS that shows what a reviewer sees, then saves a screenshot.

Run by scripts/qgis_screenshot.sh inside Xvfb: loads the demo site plan, starts the plugin
from the staged build, opens the swppp:review dialog and presses Run, as a reviewer would; the
findings layer loads styled; then it saves the screenshot and quits.
"""
import os

from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication
from qgis.utils import iface, loadPlugin, startPlugin

SITE = os.environ["SWPPP_SITE"]
FINDINGS = os.environ["SWPPP_FINDINGS"]
OUT = os.environ["SWPPP_SCREENSHOT"]
DIALOG = []

for name in ("site_boundary", "disturbance", "smp", "easement", "public_row"):
    layer = QgsVectorLayer(f"{SITE}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    QgsProject.instance().addMapLayer(layer)
loadPlugin("swppp_review")
startPlugin("swppp_review")


def zoom():
    iface.mapCanvas().setExtent(QgsProject.instance().mapLayersByName("site_boundary")[0].extent()
                                .buffered(150))
    iface.mapCanvas().refresh()


def open_dialog():
    import processing

    dialog = processing.createAlgorithmDialog("swppp:review", {
        "SITE": SITE, "OUTPUT_FINDINGS": FINDINGS, "OUTPUT_HTML": FINDINGS[:-5] + ".html"})
    dialog.show()
    dialog.move(40, 420)
    DIALOG.append(dialog)
    dialog.runAlgorithm()


def close_dialog():
    DIALOG[0].close()  # the run is over; show the map and the layers it loaded
    zoom()


def shoot():
    screen = QApplication.primaryScreen()
    screen.grabWindow(0).save(OUT, "PNG")
    QApplication.instance().exit(0)


iface.mainWindow().setGeometry(0, 0, 1600, 1000)  # no window manager under Xvfb
QTimer.singleShot(2000, zoom)
QTimer.singleShot(4000, open_dialog)
QTimer.singleShot(10000, close_dialog)
QTimer.singleShot(12000, shoot)
