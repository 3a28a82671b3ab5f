"""``swppp:reference_import`` and ``swppp:reference_diff`` through Processing, as GIS staff run them."""

import tempfile
import uuid
from pathlib import Path

import pytest
from qgis.core import QgsProcessingException

from tests.conftest import TEST_DATA

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

SOURCES = TEST_DATA / "reference_sources"
LAYERS = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")


def run(algorithm, parameters):
    import processing

    return processing.run(f"swppp:{algorithm}", parameters)


def pwl_import(target, cycle, schema=None):
    return run(
        "reference_import",
        {
            "LAYER": LAYERS.index("impaired_waters"),
            "TARGET": target,
            "SCHEMA": schema or "",
            "SOURCE": str(SOURCES / f"pwl_{cycle}.csv"),
            "FORMAT": 2,
            "GEOMETRY": str(SOURCES / "waters.gpkg"),
            "MAPPING": str(SOURCES / "pwl_geometry_mapping.toml"),
            "SOURCE_DATE": f"{cycle}-04-01",
            "REJECTIONS": str(Path(tempfile.mkdtemp()) / "rejected.csv"),
        },
    )


@pytest.fixture(params=["gpkg", "postgis"])
def store(request, tmp_path):
    if request.param == "gpkg":
        return str(tmp_path / "reference.gpkg"), None
    return request.getfixturevalue("postgis_server").conninfo(), f"q_{uuid.uuid4().hex[:8]}"


def test_import_twice_then_diff_as_a_layer(store, tmp_path, load_layer):
    target, schema = store
    first = pwl_import(target, "2022", schema)
    # The listed water waters.gpkg lacks is kept without geometry, not rejected (issue 34, item 5)
    assert (first["VERSION"], first["NEW_VERSION"], first["FEATURE_COUNT"], first["REJECTED_COUNT"]) == (
        1,
        1,
        3,
        0,
    )
    assert pwl_import(target, "2024", schema)["VERSION"] == 2
    again = pwl_import(target, "2024", schema)
    assert (again["VERSION"], again["NEW_VERSION"]) == (2, 0)

    output = tmp_path / "changes.gpkg"
    results = run(
        "reference_diff",
        {
            "LAYER": LAYERS.index("impaired_waters"),
            "TARGET": target,
            "SCHEMA": schema or "",
            "OUTPUT": str(output),
            "OUTPUT_JSON": str(tmp_path / "changes.json"),
        },
    )
    # NY1301-0300 (listed in 2022, kept without geometry) is not in the 2024 list: delisted
    assert (results["ADDED_COUNT"], results["REMOVED_COUNT"], results["CHANGED_COUNT"]) == (1, 2, 1)
    layer = load_layer(output, "impaired_waters_diff")
    assert layer.featureCount() == 4
    changes = {f["feature_id"]: f["change"] for f in layer.getFeatures()}
    assert changes == {
        "NY1301-0200": "newly listed",
        "NY1301-0123": "delisted",
        "NY1301-0300": "delisted",
        "NY1301-0099": "changed",
    }
    assert layer.crs().authid() == "EPSG:2260"


def test_an_import_rejecting_tmdl_units_is_refused_then_accepted_explicitly(tmp_path):
    target = str(tmp_path / "reference.gpkg")
    pwl_import(target, "2022")
    before = (tmp_path / "reference.gpkg").read_bytes()
    actions = TEST_DATA.parent.parent / "shared" / "data" / "attains" / "ny_21NYDECA_tmdl_actions.json"
    if not actions.exists():
        pytest.skip(
            f"{actions} is absent (public data kept outside the repository, "
            "beside the checkout in this project's CI only)"
        )
    parameters = {
        "LAYER": LAYERS.index("tmdl_watersheds"),
        "TARGET": target,
        "SOURCE": str(actions),
        "FORMAT": 1,
        "GEOMETRY": str(SOURCES / "tmdl_watersheds.gpkg"),
        "REJECTIONS": str(tmp_path / "rejected.gpkg"),
    }
    with pytest.raises(QgsProcessingException) as caught:
        run("reference_import", parameters)
    assert "321 with a TMDL" in str(caught.value) and "ACCEPT_REJECTIONS" in str(caught.value)
    assert "Traceback" not in str(caught.value)
    assert (tmp_path / "reference.gpkg").read_bytes() == before
    assert (tmp_path / "rejected.gpkg").exists()  # the list, to open in QGIS
    done = run("reference_import", {**parameters, "ACCEPT_REJECTIONS": True})
    assert (done["FEATURE_COUNT"], done["REJECTED_COUNT"]) == (3, 321)
