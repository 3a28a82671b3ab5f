"""No QGIS algorithm output replaces a file an input reads (issue 36, items 1 and 2: destroyed).

Each algorithm the issue names, run through Processing with an output naming its input (the
file, a link to it, a file read beside it), is refused before anything runs: a
``QgsProcessingException`` naming the parameter and the file, the input's bytes unchanged.
One rule, the command line's (``analysis.io.inputs``), called once by the algorithms' base;
and once through ``qgis_process`` on the packaged plugin.
"""

import hashlib
import os
import shutil

import geopandas as gpd
import pytest
from qgis.core import QgsProcessingException

from tests.conftest import TEST_DATA
from tests.qgis_plugin.test_qgis_process import qgis_process  # noqa: F401 - its fixture
from tests.qgis_plugin.test_reference_algorithms import LAYERS

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

SITE = TEST_DATA / "demo_site.gpkg"
REFERENCE = TEST_DATA / "demo_reference.gpkg"
SOURCES = TEST_DATA / "reference_sources"
RECORDS = TEST_DATA / "records"


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _refused(algorithm, parameters, parameter, *inputs):
    """``algorithm`` run with ``parameters`` is refused naming ``parameter``; ``inputs``' bytes
    are unchanged."""
    import processing

    before = {path: _digest(path) for path in inputs}
    with pytest.raises(QgsProcessingException, match="same file") as err:
        processing.run(f"swppp:{algorithm}", parameters)
    assert f"{parameter} " in str(err.value) and "destroy an input" in str(err.value), str(err.value)
    assert {path: _digest(path) for path in inputs} == before


@pytest.fixture
def copies(tmp_path):
    shutil.copyfile(SITE, tmp_path / "site.gpkg")
    shutil.copyfile(REFERENCE, tmp_path / "ref.gpkg")
    shutil.copyfile(RECORDS / "violation.toml", tmp_path / "v.toml")
    return tmp_path


@pytest.mark.parametrize(
    ("output", "over"),
    [
        pytest.param("OUTPUT_JSON", "site.gpkg", id="destroyed-1-review-json-over-site"),
        pytest.param("OUTPUT_JSON", "ref.gpkg", id="destroyed-1-review-json-over-reference"),
        pytest.param("OUTPUT_FINDINGS", "site.gpkg", id="destroyed-1-review-findings-over-site"),
        pytest.param("OUTPUT_FINDINGS", "ref.gpkg", id="destroyed-1-review-findings-over-reference"),
        pytest.param("OUTPUT_HTML", "alias.gpkg", id="destroyed-1-review-html-over-a-link-to-the-site"),
        pytest.param("OUTPUT_JSON", "hard.gpkg", id="destroyed-1-review-json-over-a-hard-link"),
        pytest.param("OUTPUT_JSON", "site.gpkg-wal", id="destroyed-2-review-json-over-the-site-wal"),
    ],
)
def test_review_output_over_an_input_is_refused(copies, output, over):
    (copies / "alias.gpkg").symlink_to(copies / "site.gpkg")
    os.link(copies / "ref.gpkg", copies / "hard.gpkg")
    parameters = {"SITE": str(copies / "site.gpkg"), "REFERENCE": str(copies / "ref.gpkg")}
    _refused(
        "review",
        {**parameters, output: str(copies / over)},
        output,
        copies / "site.gpkg",
        copies / "ref.gpkg",
    )
    assert not (copies / "site.gpkg-wal").exists()


def test_destroyed_2_review_json_over_a_layer_sidecar_is_refused(copies, load_layer):
    """A site-plan layer given as a shapefile: its .dbf is read with it."""
    frame = gpd.read_file(SITE, layer="site_boundary")
    frame.to_file(copies / "boundary.shp")
    layer = load_layer(copies / "boundary.shp", "boundary")
    parameters = {
        "PROJECT_LAYER": load_layer(SITE, "project"),
        "SITE_BOUNDARY_LAYER": layer,
        "DISTURBANCE_LAYER": load_layer(SITE, "disturbance"),
        "OUTPUT_JSON": str(copies / "boundary.dbf"),
    }
    _refused("review", parameters, "OUTPUT_JSON", copies / "boundary.dbf", copies / "boundary.shp")


def test_destroyed_1_reference_import_rejections_over_the_store_is_refused(copies):
    store = copies / "ref.gpkg"
    parameters = {
        "LAYER": LAYERS.index("impaired_waters"),
        "TARGET": str(store),
        "SOURCE": str(SOURCES / "pwl_2024.csv"),
        "FORMAT": 2,
        "GEOMETRY": str(SOURCES / "waters.gpkg"),
        "MAPPING": str(SOURCES / "pwl_geometry_mapping.toml"),
        "SOURCE_DATE": "2024-04-01",
        "REJECTIONS": str(store),
    }
    _refused("reference_import", parameters, "REJECTIONS", store)


def test_destroyed_1_screen_table_over_the_sites_file_is_refused(copies, load_layer):
    sites = copies / "parcels.gpkg"
    gpd.read_file(SITE, layer="site_boundary").assign(parcel_id="P-1").to_file(sites, layer="parcels")
    parameters = {
        "SITES": load_layer(sites, "parcels"),
        "TARGET": str(copies / "ref.gpkg"),
        "OUTPUT": str(copies / "screen.gpkg"),
        "OUTPUT_TABLE": str(sites),
    }
    _refused("screen", parameters, "OUTPUT_TABLE", sites, copies / "ref.gpkg")
    assert not (copies / "screen.gpkg").exists()


def test_destroyed_1_nov_html_over_the_record_is_refused(copies):
    record = copies / "v.toml"
    _refused("nov", {"RECORD": str(record), "OUTPUT_HTML": str(record)}, "OUTPUT_HTML", record)


def test_destroyed_1_review_under_qgis_process_is_refused(qgis_process, copies):  # noqa: F811
    """The packaged plugin under ``qgis_process``: refused, a non-zero exit, the file unchanged."""
    site = copies / "site.gpkg"
    before = _digest(site)
    completed = qgis_process("run", "swppp:review", "--", f"SITE={site}", f"OUTPUT_JSON={site}")
    assert completed.returncode != 0, completed.stdout + completed.stderr
    assert "same file" in completed.stdout + completed.stderr
    assert _digest(site) == before
