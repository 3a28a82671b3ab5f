"""Start-up code for QGIS that shows what a reviewer sees, then saves a screenshot.

Run by scripts/qgis_screenshot.sh inside Xvfb: loads the demo site plan and a review's
findings, starts the plugin from the staged build, opens the swppp:review dialog, waits for
the window to draw, saves the screenshot and quits.
"""
import os

from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication
from qgis.utils import iface, loadPlugin, startPlugin

SITE = os.environ["SWPPP_SITE"]
FINDINGS = os.environ["SWPPP_FINDINGS"]
OUT = os.environ["SWPPP_SCREENSHOT"]

for name in ("site_boundary", "disturbance", "smp", "easement", "public_row"):
    layer = QgsVectorLayer(f"{SITE}|layername={name}", name, "ogr")
    assert layer.isValid(), name
    QgsProject.instance().addMapLayer(layer)
findings = QgsVectorLayer(f"{FINDINGS}|layername=findings", "findings", "ogr")
assert findings.isValid()
QgsProject.instance().addMapLayer(findings)

loadPlugin("swppp_review")
startPlugin("swppp_review")


def zoom():
    iface.mapCanvas().setExtent(QgsProject.instance().mapLayersByName("site_boundary")[0].extent()
                                .buffered(150))
    iface.mapCanvas().refresh()


def open_dialog():
    import processing

    dialog = processing.createAlgorithmDialog("swppp:review", {"SITE": SITE})
    dialog.show()
    dialog.move(60, 60)


def shoot():
    screen = QApplication.primaryScreen()
    screen.grabWindow(0).save(OUT, "PNG")
    QApplication.instance().exit(0)


iface.mainWindow().setGeometry(0, 0, 1600, 1000)  # no window manager under Xvfb
QTimer.singleShot(2000, zoom)
QTimer.singleShot(4000, open_dialog)
QTimer.singleShot(9000, shoot)
