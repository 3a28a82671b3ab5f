"""The plugin refuses to start with one clear message, not a traceback, where it cannot run.

Each case starts the staged plugin the way qgis_process does (``classFactory(None)`` then
``initProcessing()``) in a fresh Python, so what is already imported is under the test's control.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.qgis

SYSTEM_PYTHON = "/usr/bin/python3"  # Debian's: QGIS bindings with Debian's shapely 1.8
DRIVER = r"""
import json, sys
from qgis.core import QgsApplication
app = QgsApplication([], False)
app.initQgis()
logged = []
QgsApplication.messageLog().messageReceived.connect(
    lambda message, tag, level: logged.append([tag, message]))
sys.path.insert(0, sys.argv[1])
if len(sys.argv) > 2:  # a foreign package named 'analysis', imported first
    sys.path.insert(0, sys.argv[2])
    import analysis
import swppp_review
plugin = swppp_review.classFactory(None)
plugin.initProcessing()
print(json.dumps({"problem": plugin.problem,
                  "registered": QgsApplication.processingRegistry().providerById("swppp")
                  is not None,
                  "logged": [m for t, m in logged if t == "SWPPP Review"]}))
"""


def start_plugin(python, staged_plugin, tmp_path, *extra):
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "QGIS_CUSTOM_CONFIG_PATH": str(tmp_path),
        "PROJ_DATA": "/usr/share/proj",
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.pop("PYTHONPATH", None)
    completed = subprocess.run(
        [python, "-c", DRIVER, str(Path(staged_plugin.PLUGIN_DIR).parent), *extra],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr, completed.stderr
    return json.loads(completed.stdout.strip().splitlines()[-1])


def test_a_foreign_analysis_module_stops_the_plugin(staged_plugin, tmp_path):
    foreign = tmp_path / "elsewhere" / "analysis"
    foreign.mkdir(parents=True)
    (foreign / "__init__.py").write_text('"""Some other project\'s package."""\n')

    started = start_plugin(sys.executable, staged_plugin, tmp_path, str(foreign.parent))

    assert not started["registered"]
    assert started["logged"] == [started["problem"]]
    assert "another Python module named 'analysis'" in started["problem"]
    assert str(foreign) in started["problem"]


def test_shapely_1_gives_one_message_naming_what_to_install(staged_plugin, tmp_path):
    probe = subprocess.run(
        [SYSTEM_PYTHON, "-c", "import shapely; print(shapely.__version__)"],
        check=False,
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0 or not probe.stdout.startswith("1."):
        pytest.skip(f"{SYSTEM_PYTHON} has no shapely 1.x to start the plugin with")

    started = start_plugin(SYSTEM_PYTHON, staged_plugin, tmp_path)

    assert not started["registered"]
    assert started["logged"] == [started["problem"]]
    assert "shapely >= 2" in started["problem"]
