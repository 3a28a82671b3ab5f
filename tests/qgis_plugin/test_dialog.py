"""The Processing dialog builds a widget for every ``swppp:review`` and ``swppp:letter`` input.

It needs a GUI QgsApplication (offscreen), which the pytest session (GUI disabled) is not, so it
runs in a fresh Python.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.qgis

DRIVER = r"""
import json, sys
from qgis.core import QgsApplication
from qgis.gui import QgsGui
app = QgsApplication([], True)
app.initQgis()
QgsGui.editorWidgetRegistry().initEditors()
sys.path.append(QgsApplication.pkgDataPath() + "/python/plugins")
from processing.core.Processing import Processing
Processing.initialize()
sys.path.insert(0, sys.argv[1])
import swppp_review
plugin = swppp_review.classFactory(None)
plugin.initProcessing()
from processing.gui.AlgorithmDialog import AlgorithmDialog
shown = {}
for name in ("swppp:review", "swppp:letter"):
    algorithm = QgsApplication.processingRegistry().createAlgorithmById(name)
    dialog = AlgorithmDialog(algorithm)
    dialog.show()
    app.processEvents()
    if name == "swppp:letter":  # its one required input, typed in as a reviewer would
        from qgis.core import QgsProcessingContext
        dialog.mainWidget().wrappers["REVIEW_FILE"].setParameterValue("review.gpkg", QgsProcessingContext())
    values = dialog.mainWidget().createProcessingParameters()
    shown[name] = {"inputs": sorted(values), "profile": values["PROFILE"], "round": values.get("ROUND")}
    dialog.close()
print(json.dumps(shown))
"""


def test_the_dialog_offers_every_input(staged_plugin, tmp_path):
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "QGIS_CUSTOM_CONFIG_PATH": str(tmp_path),
        "PROJ_DATA": "/usr/share/proj",
        "QT_QPA_PLATFORM": "offscreen",
    }
    completed = subprocess.run(
        [sys.executable, "-c", DRIVER, str(Path(staged_plugin.PLUGIN_DIR).parent)],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    dialogs = json.loads(completed.stdout.strip().splitlines()[-1])
    shown = dialogs["swppp:review"]
    assert shown["inputs"] == sorted(
        [
            "SITE",
            "PROJECT_LAYER",
            "SITE_BOUNDARY_LAYER",
            "DISTURBANCE_LAYER",
            "SMP_LAYER",
            "EASEMENT_LAYER",
            "DISCHARGE_POINT_LAYER",
            "PUBLIC_ROW_LAYER",
            "LAYOUT_SCALE_LAYER",
            "REFERENCE",
            "PROFILE",
            "SHEETS",
            "DRAINAGE_AREA_LAYER",
            "SOILS_LAYER",
            "LAND_COVER_PRE_LAYER",
            "LAND_COVER_POST_LAYER",
            "HYDROLOGY_CLAIMS_LAYER",
            "ESC_PRACTICE_LAYER",
            "SUBMISSION_LAYER",
            "CONTRACTOR_CERTIFICATION_LAYER",
            "GUARANTEE_LAYER",
            "FIELD_MAP",
            "CONFIRMATIONS",
            "ROUND_FILE",
            "REVIEWER",
            "COMPARE_TO",
            "WETLANDS_LAYER",
            "IMPAIRED_WATERS_LAYER",
            "TMDL_WATERSHEDS_LAYER",
            "CATCHMENTS_LAYER",
        ]
    )
    assert shown["profile"] == "kiryas_joel"
    # issue 35: the comment letter's dialog (the outputs are optional, none made by default)
    letter = dialogs["swppp:letter"]
    assert letter["inputs"] == ["DATE", "PROFILE", "REVIEWER", "REVIEW_FILE", "ROUND"]
    assert letter["profile"] == "kiryas_joel" and letter["round"] == 0
