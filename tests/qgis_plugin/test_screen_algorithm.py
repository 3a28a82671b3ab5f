"""``swppp:screen`` through Processing: a sites layer screened as ``swppp screen`` screens it."""

import geopandas as gpd
import pytest
import shapely
from qgis.core import QgsProcessingException

from tests.conftest import TEST_DATA

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

REFERENCE = TEST_DATA / "demo_reference.gpkg"


def run(parameters):
    import processing

    return processing.run("swppp:screen", parameters)


@pytest.fixture
def parcels(tmp_path, load_layer):
    """Three parcels: one on the demo's listed water's catchment and a wetland, two far away."""
    site = gpd.read_file(TEST_DATA / "demo_site.gpkg", layer="site_boundary")
    geometry = site.geometry.iloc[0]
    frame = gpd.GeoDataFrame(
        {"parcel_id": ["P-1", "P-2", "P-3"]},
        geometry=[
            geometry,
            shapely.affinity.translate(geometry, 90000, 0),
            shapely.affinity.translate(geometry, 0, 90000),
        ],
        crs=site.crs,
    )
    path = tmp_path / "parcels.gpkg"
    frame.to_file(path, layer="parcels", driver="GPKG")
    # The project owns it (load_layer): a layer left to Python can outlive QGIS and crash the
    # interpreter on exit.
    return load_layer(path, "parcels")


def test_screen_writes_a_layer_with_one_feature_per_site(parcels, tmp_path, load_layer):
    from analysis.profile import load_profile
    from analysis.reference.read import open_reference
    from analysis.screen.screen import screen_sites
    from analysis.screen.sites import read_sites

    output = tmp_path / "screen.gpkg"
    results = run(
        {
            "SITES": parcels,
            "TARGET": str(REFERENCE),
            "OUTPUT": str(output),
            "OUTPUT_TABLE": str(tmp_path / "screen.csv"),
        }
    )
    assert (
        results["APPLIES_COUNT"],
        results["NOT_DECIDED_COUNT"],
        results["DOES_NOT_APPLY_COUNT"],
        results["WETLAND_COUNT"],
    ) == (1, 2, 0, 1)
    layer = load_layer(output, "screen")
    rows = {f["site_id"]: f for f in layer.getFeatures()}
    assert set(rows) == {"P-1", "P-2", "P-3"}
    assert layer.crs().authid() == "EPSG:2260"
    # The same as the analysis screens the same file.
    profile = load_profile()
    direct = screen_sites(
        read_sites(parcels.source().split("|")[0], profile.area_crs), open_reference(REFERENCE), profile
    ).by_site()
    for site_id, feature in rows.items():
        assert feature["condition_a"] == direct[site_id]["condition_a"]
        assert feature["wetland_acres"] == pytest.approx(direct[site_id]["wetland_acres"])
    assert rows["P-1"]["listed_waters"] == "NY1301-0099"
    assert (tmp_path / "screen.csv").read_text().count("\n") == 4


def test_a_missing_reference_is_refused_with_the_analysis_message(parcels, tmp_path):
    with pytest.raises(QgsProcessingException, match="reference GeoPackage does not exist|does not exist"):
        run(
            {"SITES": parcels, "TARGET": str(tmp_path / "none.gpkg"), "OUTPUT": str(tmp_path / "screen.gpkg")}
        )
