"""Loading and validating the site plan: contract layers, CRSs, repairs, and refusals."""

import pytest

from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan

PROFILE = load_profile()


def test_demo_loads_every_contract_layer(data_copy):
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    assert set(site.layers) == {
        "project",
        "site_boundary",
        "disturbance",
        "smp",
        "easement",
        "discharge_point",
        "public_row",
        "layout_scale",
        "soils",
        "land_cover_pre",
        "land_cover_post",
        "drainage_area",
        "hydrology_claims",
    }
    assert site.project["land_use"] == "commercial"
    assert site.input_crs == "EPSG:2260"
    assert all(site.layers[n].crs == site.area_crs for n in ("site_boundary", "disturbance"))
    assert site.repairs == []


def test_layer_names_match_whatever_their_case(data_copy):
    site = load_site_plan(data_copy("variants/mixed_case_names.gpkg"), PROFILE)
    assert {"project", "site_boundary", "disturbance", "smp"} <= set(site.layers)


@pytest.mark.parametrize("variant, crs", [("crs_4326.gpkg", "EPSG:4326"), ("crs_utm18n.gpkg", "EPSG:26918")])
def test_any_crs_is_reprojected_to_the_area_crs(data_copy, variant, crs):
    site = load_site_plan(data_copy(f"variants/{variant}"), PROFILE)
    assert site.input_crs == crs
    assert site.layers["disturbance"].crs.to_epsg() == 2260


def test_self_intersecting_polygon_is_repaired_and_recorded(data_copy):
    site = load_site_plan(data_copy("variants/self_intersecting.gpkg"), PROFILE)
    assert len(site.repairs) == 1
    repair = site.repairs[0]
    assert repair.feature.startswith("disturbance:")
    assert "Self-intersection" in repair.reason
    assert repair.geometry.is_valid and repair.geometry.area > 0


@pytest.mark.parametrize(
    "variant, names",
    [
        ("no_crs.gpkg", ["no_crs.gpkg", "layer 'disturbance'", "coordinate reference system"]),
        ("missing_layer.gpkg", ["missing_layer.gpkg", "'disturbance'", "missing"]),
        ("missing_field.gpkg", ["missing_field.gpkg", "layer 'project'", "field 'land_use'"]),
        ("empty_disturbance.gpkg", ["empty_disturbance.gpkg", "layer 'disturbance'", "no features"]),
    ],
)
def test_bad_input_is_refused_naming_file_layer_and_field(data_copy, variant, names):
    with pytest.raises(InputError) as caught:
        load_site_plan(data_copy(f"variants/{variant}"), PROFILE)
    message = str(caught.value)
    for name in names:
        assert name in message
    assert "Fix:" in message


def test_unreadable_file_is_refused(tmp_path):
    path = tmp_path / "not_a_plan.gpkg"
    path.write_text("this is not a GeoPackage", encoding="utf-8")
    with pytest.raises(InputError, match="not_a_plan.gpkg.*not a readable vector data source"):
        load_site_plan(path, PROFILE)


def test_missing_file_is_refused(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_site_plan(tmp_path / "nowhere.gpkg", PROFILE)


def test_unknown_land_use_names_the_value_and_the_choices(make_site):
    from tests.analysis.conftest import square

    path = make_site([square(2.0)], land_use="warehouse")
    with pytest.raises(InputError, match=r"field 'land_use'.*'warehouse'.*commercial"):
        load_site_plan(path, PROFILE)


def test_feature_without_geometry_is_named(make_site):
    from tests.analysis.conftest import square

    path = make_site([square(2.0), None])
    with pytest.raises(InputError, match=r"layer 'disturbance', feature 2.*no geometry"):
        load_site_plan(path, PROFILE)


def test_field_names_match_whatever_their_case(make_site, tmp_path):
    import geopandas as gpd

    from analysis.io.vector import read_layer, write_geopackage
    from tests.analysis.conftest import square

    path = make_site([square(2.0), square(1.0, x=583_300)], phases=["1", "2"])
    layers = {name: read_layer(path, name).frame for name in ("project", "site_boundary", "disturbance")}
    layers["disturbance"] = gpd.GeoDataFrame(
        layers["disturbance"].rename(columns={"phase": "PHASE", "start_date": "Start_Date"})
    )
    shouted = tmp_path / "shouted.gpkg"
    write_geopackage(shouted, layers)
    site = load_site_plan(shouted, PROFILE)
    assert {"phase", "start_date"} <= set(site.layers["disturbance"].columns)
