"""qgis_plugin/compat.py: what differs between QGIS 3.22, 3.40 and 3.44, answered on the real one."""

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.qgis


@pytest.fixture(scope="module")
def compat(staged_plugin):
    from swppp_review import compat

    return compat


def test_layer_filters_restrict_a_layer_combo_box(compat, qgis_new_project, tmp_path):
    from qgis.core import QgsProject, QgsVectorLayer
    from qgis.gui import QgsMapLayerComboBox

    layers = {
        kind: QgsVectorLayer(f"{kind}?crs=EPSG:2260", kind, "memory")
        for kind in ("Point", "LineString", "Polygon")
    }
    layers["none"] = QgsVectorLayer("None", "none", "memory")
    QgsProject.instance().addMapLayers(list(layers.values()))

    def offered(*names):
        combo = QgsMapLayerComboBox()
        combo.setFilters(compat.layer_filters(*names))
        return sorted(combo.layer(i).name() for i in range(combo.count()))

    assert offered("PolygonLayer") == ["Polygon"]
    assert offered("PointLayer", "LineLayer") == ["LineString", "Point"]
    assert offered("HasGeometry") == ["LineString", "Point", "Polygon"]
    assert offered("VectorLayer") == ["LineString", "Point", "Polygon", "none"]


def test_feet_are_feet_of_whichever_kind_this_qgis_reports(compat):
    from qgis.core import QgsCoordinateReferenceSystem

    us_feet = QgsCoordinateReferenceSystem("EPSG:2260").mapUnits()  # NAD83 / New York East (ftUS)
    feet = QgsCoordinateReferenceSystem("EPSG:2263").mapUnits()  # NAD83 / New York Long Island (ftUS)
    metres = QgsCoordinateReferenceSystem("EPSG:26918").mapUnits()
    degrees = QgsCoordinateReferenceSystem("EPSG:4326").mapUnits()
    assert compat.is_feet(us_feet) and compat.is_feet(feet) and compat.is_feet(compat.DISTANCE_FEET)
    assert not compat.is_feet(metres) and not compat.is_feet(degrees)
    assert compat.metres_per_unit(metres) == 1
    assert abs(compat.metres_per_unit(us_feet) - 1200 / 3937) < 1e-6


def test_the_version_is_this_qgis(compat):
    from qgis.core import Qgis

    assert Qgis.QGIS_VERSION.startswith("{}.{}.".format(*compat.qgis_version()))
    assert compat.qgis_version() >= (3, 22)


# A QGIS with pyproj: geopandas makes a CRS in N QgsTasks, one after another, on QGIS's pooled
# threads (as the panel's runs do), keeping the thread's PROJ context or not.
TASKS = r"""
import sys
from qgis.core import QgsApplication, QgsTask
app = QgsApplication([], False)
app.initQgis()
sys.path.insert(0, sys.argv[1])
from swppp_review.compat import keep_pyproj_context
keep = sys.argv[2] == "keep"
done = []

def work(task):
    import geopandas
    from shapely import Point
    frame = geopandas.GeoDataFrame(geometry=[Point(0, 0)], crs="EPSG:2260").to_crs("EPSG:4326")
    if keep:
        keep_pyproj_context()
    return str(frame.crs)

tasks = []
for i in range(8):
    task = QgsTask.fromFunction(f"crs {i}", work, on_finished=lambda e, r: done.append(r))
    tasks.append(task)
    QgsApplication.taskManager().addTask(task)
    while len(done) <= i:
        app.processEvents()
print(done)
"""


def run_tasks(staged_plugin, keep, tmp_path):
    env = {
        **os.environ,
        "HOME": str(tmp_path),
        "QGIS_CUSTOM_CONFIG_PATH": str(tmp_path),
        "QT_QPA_PLATFORM": "offscreen",
    }
    return subprocess.run(
        [sys.executable, "-c", TASKS, os.path.dirname(staged_plugin.PLUGIN_DIR), keep],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_pyproj_in_task_after_task_does_not_crash_qgis(compat, staged_plugin, tmp_path):
    completed = run_tasks(staged_plugin, "keep", tmp_path)
    assert completed.returncode == 0, completed.stderr[-3000:]
    assert completed.stdout.count("EPSG:4326") == 8


def test_the_pyproj_that_needs_it_does_crash_without_keeping_the_context(compat, staged_plugin, tmp_path):
    """Why keep_pyproj_context exists: with pyproj 3.7 (Debian 13) the same runs crash; other
    releases' pyproj (3.4 on Debian 12, 3.8 on testing) run them either way."""
    completed = run_tasks(staged_plugin, "free", tmp_path)
    if compat.pyproj_needs_kept_context():
        assert completed.returncode < 0, "pyproj 3.7 no longer crashes here: drop the workaround"
    else:
        assert completed.returncode == 0, completed.stderr[-3000:]
        assert completed.stdout.count("EPSG:4326") == 8


def test_a_labels_font_sets_its_size_and_weight(compat, qgis_new_project):
    """set_label_font draws the label in the font given (text format or font, whichever this
    QGIS has): twice the points, about twice the height; bold, wider."""
    from qgis.core import QgsLayoutItemLabel, QgsPrintLayout, QgsProject
    from qgis.PyQt.QtGui import QFont

    layout = QgsPrintLayout(QgsProject.instance())

    def size(points, weight=QFont.Weight.Normal):
        label = QgsLayoutItemLabel(layout)
        label.setText("Site map: 1 inch = 100 feet")
        compat.set_label_font(label, QFont("DejaVu Sans", points, weight))
        label.adjustSizeToText()
        return label.rect().width(), label.rect().height()

    (width, height), (width2, height2) = size(10), size(20)
    assert 1.7 < height2 / height < 2.3 and 1.7 < width2 / width < 2.3
    assert size(10, QFont.Weight.Bold)[0] > width * 1.05


def test_a_legends_font_sets_its_size_and_weight(compat, qgis_new_project):
    """The same for a legend's title (the legend sized to it once drawn)."""
    from qgis.core import QgsLayoutExporter, QgsLayoutItemLegend, QgsLegendStyle, QgsPrintLayout, QgsProject
    from qgis.PyQt.QtGui import QFont

    layout = QgsPrintLayout(QgsProject.instance())
    layout.initializeDefaults()  # one page
    legend = QgsLayoutItemLegend(layout)
    layout.addLayoutItem(legend)
    legend.setTitle("Findings and layers")

    def size(points, weight=QFont.Weight.Normal):
        compat.set_legend_font(legend, QgsLegendStyle.Style.Title, QFont("DejaVu Sans", points, weight))
        legend.refresh()
        QgsLayoutExporter(layout).renderPageToImage(0)
        legend.adjustBoxSize()
        return legend.rect().width(), legend.rect().height()

    (width, height), (width2, height2) = size(10), size(20)
    assert height2 - height > 3  # 10 points more: 3.5 mm
    assert width2 > width * 1.5
    assert size(10, QFont.Weight.Bold)[0] > width * 1.02
