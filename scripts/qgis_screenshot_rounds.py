"""Start-up code for QGIS that shows the panel's review rounds (issue 35), then saves a
screenshot: the demo reviewed as round 1 of a review file, its resubmittal
(test_data/demo_site_round2.gpkg) as round 2 compared with round 1, the Findings tab's Changes
list and the comment letter for round 2 written (not opened: no viewer under Xvfb).

Run inside Xvfb with the plugin staged (scripts/package.sh), from the repository's root::

    SWPPP_SCREENSHOT=build/screenshots/qgis_rounds.png QGIS_PLUGINPATH=$PWD/build \\
      xvfb-run -a -s "-screen 0 1600x1000x24" qgis --nologo --noversioncheck \\
      --profiles-path "$(mktemp -d)" --code scripts/qgis_screenshot_rounds.py
"""

import json
import os
import shutil

from qgis.core import QgsProject, QgsVectorLayer
from qgis.PyQt.QtCore import QTimer
from qgis.PyQt.QtWidgets import QApplication
from qgis.utils import iface, loadPlugin, plugins, startPlugin

ROOT = os.getcwd()
OUT = os.path.abspath(os.environ.get("SWPPP_SCREENSHOT", "build/screenshots/qgis_rounds.png"))
RESULTS = os.path.splitext(OUT)[0] + "_results"
STATUS = os.path.splitext(OUT)[0] + ".json"
PLANS = [os.path.join(ROOT, "test_data", name) for name in ("demo_site.gpkg", "demo_site_round2.gpkg")]
SHOWN = {"rounds": []}

shutil.rmtree(RESULTS, ignore_errors=True)
os.makedirs(RESULTS)
boundary = QgsVectorLayer(f"{PLANS[0]}|layername=site_boundary", "site_boundary", "ogr")
QgsProject.instance().addMapLayer(boundary)
loadPlugin("swppp_review")
startPlugin("swppp_review")


def panel():
    return plugins["swppp_review"].panel


def open_panel():
    plugins["swppp_review"].panel_action.setChecked(True)
    review = panel()
    review.from_file.setChecked(True)
    review.reference.setFilePath(os.path.join(ROOT, "test_data", "demo_reference.gpkg"))
    review.output_folder.setFilePath(RESULTS)
    review.review_file.setFilePath(os.path.join(RESULTS, "project_review.gpkg"))
    review.checklist.reviewer.setText("A. Reviewer, P.E.")
    review.finished.connect(finished)
    run(0)


def run(index):
    panel().site_file.setFilePath(PLANS[index])
    panel().run_button.click()


def finished(ok):
    review = panel()
    SHOWN["rounds"].append(
        {"ok": ok, "status": review.status.text(), "compare_to": review.compare_to.currentData()}
    )
    if ok and len(SHOWN["rounds"]) == 1:
        QTimer.singleShot(500, lambda: run(1))  # compared with round 1, the choice's default
        return
    if ok:
        review.open_url = lambda url: SHOWN.setdefault("opened", url.toLocalFile())
        review.write_letter()
        SHOWN["letter"] = review.letter_note.text()
        SHOWN["changes"] = review.changes_summary.text()
        group = review.changes.topLevelItem(0)  # resolved: read whole in the detail pane
        if group is not None and group.childCount():
            review.changes.setCurrentItem(group.child(0))
        review.action_only.setChecked(True)
        iface.mapCanvas().setExtent(boundary.extent().buffered(150))
        iface.mapCanvas().refresh()
    QTimer.singleShot(3000, finish)


def finish():
    QApplication.primaryScreen().grabWindow(0).save(OUT, "PNG")
    with open(STATUS, "w", encoding="utf-8") as handle:
        json.dump(SHOWN, handle, indent=1)
    QApplication.instance().exit(0)


iface.mainWindow().setGeometry(0, 0, 1600, 1000)  # no window manager under Xvfb
QTimer.singleShot(2500, open_panel)
QTimer.singleShot(240000, finish)  # never hang: whatever is on screen by then
