"""The Processing dialog builds a widget for every ``swppp:review`` input.

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
algorithm = QgsApplication.processingRegistry().createAlgorithmById("swppp:review")
dialog = AlgorithmDialog(algorithm)
dialog.show()
app.processEvents()
values = dialog.mainWidget().createProcessingParameters()
print(json.dumps({"inputs": sorted(values), "profile": values["PROFILE"]}))
dialog.close()
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
    shown = json.loads(completed.stdout.strip().splitlines()[-1])
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
            "WETLANDS_LAYER",
            "IMPAIRED_WATERS_LAYER",
            "TMDL_WATERSHEDS_LAYER",
            "CATCHMENTS_LAYER",
        ]
    )
    assert shown["profile"] == "kiryas_joel"
