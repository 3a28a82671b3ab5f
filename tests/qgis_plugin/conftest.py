"""QGIS tests: stage the plugin as it ships, load it from there, register its provider.

Run in the QGIS venv (pytest-qgis). ``data_copy`` comes from tests/conftest.py.
"""

import importlib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import shared_path

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "build"
STAGED = BUILD / "swppp_review"


def forget_repository_analysis():
    """Unload the repository's ``analysis`` (tests/analysis imports it in the same run).

    A QGIS has no copy of it loaded: the plugin then imports its own bundled copy, the one that
    ships. A foreign ``analysis`` (from anywhere else) is left alone for the plugin to refuse.
    """
    repository_copy = (ROOT / "analysis").resolve()
    for name in [n for n in sys.modules if n == "analysis" or n.startswith("analysis.")]:
        location = getattr(sys.modules[name], "__file__", None)
        if location and Path(location).resolve().is_relative_to(repository_copy):
            del sys.modules[name]


@pytest.fixture(scope="session")
def staged_plugin():
    """The plugin package imported from build/swppp_review/, staged afresh by package.sh."""
    completed = subprocess.run(
        ["bash", str(ROOT / "scripts" / "package.sh")],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert completed.returncode == 0, f"package.sh failed:\n{completed.stderr}"
    assert Path(completed.stdout.strip().splitlines()[-1]).is_file()
    forget_repository_analysis()
    if str(BUILD) not in sys.path:
        sys.path.insert(0, str(BUILD))
    package = importlib.import_module("swppp_review")
    assert Path(package.__file__).resolve().parent == STAGED.resolve()
    return package


@pytest.fixture(scope="session")
def swppp_plugin(staged_plugin, qgis_processing):  # Processing initialised first
    """The plugin as qgis_process starts it (iface None), its provider registered."""
    plugin = staged_plugin.classFactory(None)
    plugin.initProcessing()
    if plugin.provider is None:
        pytest.fail(f"the plugin registered no provider: {plugin.problem}")
    yield plugin
    plugin.unload()


@pytest.fixture(scope="session")
def iface_with_layer_tree(qgis_iface):
    """pytest-qgis's ``iface`` with a real ``QgsLayerTreeView`` of the project's layer tree.

    Processing's result loading (``processing.runAndLoadResults``, as the algorithm dialog loads
    results) asks ``iface.layerTreeView()`` from QGIS 3.34 on; pytest-qgis 2's stand-in for the
    QGIS window has none.
    """
    if not hasattr(qgis_iface, "layerTreeView"):
        from qgis.core import QgsLayerTreeModel, QgsProject
        from qgis.gui import QgsLayerTreeView

        view = QgsLayerTreeView()
        view.setModel(QgsLayerTreeModel(QgsProject.instance().layerTreeRoot(), view))
        qgis_iface.layerTreeView = lambda: view
    return qgis_iface


@pytest.fixture(scope="session")
def contract_problems():
    """``contract_problems(path)``: a result JSON's departures from CONTRACT.md.

    Uses ../shared/tools/check_result.py; the test skips where ../shared is absent.
    """

    def problems(result_json):
        spec = importlib.util.spec_from_file_location("check_result", shared_path("tools/check_result.py"))
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module.check(json.loads(Path(result_json).read_text(encoding="utf-8")), set())

    return problems


@pytest.fixture
def load_layer():
    """``load_layer(path, name)``: a GeoPackage layer, asserted valid, in the current project.

    The project owns the layers, as in a user's QGIS, and removes them after the test. Left to
    Python they could outlive QGIS: in 3.22, ``processing.run`` leaks its parameters dict when an
    algorithm raises, and a layer freed after ``exitQgis()`` crashes the interpreter on exit.
    """
    from qgis.core import QgsProject, QgsVectorLayer

    project = QgsProject.instance()
    loaded = []

    def load(path, layer_name):
        layer = QgsVectorLayer(f"{path}|layername={layer_name}", layer_name, "ogr")
        assert layer.isValid(), f"{path} layer {layer_name} did not load"
        project.addMapLayer(layer, False)
        loaded.append(layer.id())
        return layer

    yield load
    project.removeMapLayers(loaded)


from tests.postgis import postgis_server  # noqa: E402,F401 - a real PostGIS for the reference tests
