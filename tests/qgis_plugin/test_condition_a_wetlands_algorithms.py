"""``swppp:condition_a`` and ``swppp:wetlands`` through Processing, on the demo and on project layers."""
import json

import pytest

# Every test here runs against the staged plugin's registered provider.
pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

US_SQ_FT_ACRES = (1200 / 3937) ** 2 / 4046.8564224


def run(name, parameters):
    import processing

    return processing.run(f"swppp:{name}", parameters)


@pytest.fixture
def demo(data_copy):
    return {"SITE": str(data_copy("demo_site.gpkg")),
            "REFERENCE": str(data_copy("demo_reference.gpkg"))}


def test_condition_a_applies_on_the_demo_with_its_evidence(demo, tmp_path, load_layer):
    results = run("condition_a", {**demo, "OUTPUT_JSON": str(tmp_path / "a.json"),
                                  "OUTPUT_FINDINGS": str(tmp_path / "a.gpkg")})
    assert results["CONDITION_A_APPLIES"] == 1 and results["CONDITION_A_DECIDED"] == 1
    assert "NY1301-0099 Seven Springs Creek tributary" in results["CONDITION_A_EVIDENCE"]
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert {f["rule"] for f in data["findings"]} == {"condition_a"}
    assert data["reference"]["read"]["impaired_waters"]["version"] == 1
    assert load_layer(tmp_path / "a.gpkg", "findings").featureCount() == len(data["findings"])


def test_wetlands_on_project_layers_draws_the_disturbance_in_wetlands(demo, tmp_path, load_layer):
    roles = ("project", "site_boundary", "disturbance", "discharge_point")
    layers = {f"{role.upper()}_LAYER": load_layer(demo["SITE"], role) for role in roles}
    results = run("wetlands", {**layers, "REFERENCE": demo["REFERENCE"],
                               "OUTPUT_FINDINGS": str(tmp_path / "w.gpkg")})
    assert results["WETLAND_ACRES"] == pytest.approx(0.10, abs=1e-6)
    reach = 100 * 0.3048 / (1200 / 3937)  # 100 international feet in US survey feet
    assert results["WETLAND_ADJACENT_AREA_ACRES"] == pytest.approx(
        (reach - 85) * 255 * US_SQ_FT_ACRES, rel=1e-9)
    assert results["WARN_COUNT"] == 2
    findings = load_layer(tmp_path / "w.gpkg", "findings")
    areas = sorted(f.geometry().area() * US_SQ_FT_ACRES for f in findings.getFeatures())
    assert areas == pytest.approx(sorted([results["WETLAND_ACRES"],
                                          results["WETLAND_ADJACENT_AREA_ACRES"]]), rel=1e-6)


def test_a_reference_without_a_needed_layer_stops_with_its_name(demo, tmp_path):
    import geopandas as gpd
    from qgis.core import QgsProcessingException

    from analysis.vector_io import write_geopackage

    partial = tmp_path / "partial.gpkg"
    write_geopackage(partial, {"wetlands": gpd.read_file(demo["REFERENCE"], layer="wetlands")})
    with pytest.raises(QgsProcessingException, match="'tmdl_watersheds' is missing"):
        run("condition_a", {"SITE": demo["SITE"], "REFERENCE": str(partial)})


@pytest.mark.filterwarnings("ignore:You are attempting to write an empty DataFrame")
def test_wetland_acres_on_real_nwi_agree_with_qgis(tmp_path, load_layer):
    """Real NWI wetlands (NAD83 Albers, one invalid) against a disturbance in EPSG:2260 that cuts
    through several: swppp:wetlands against QGIS's fix geometries + intersection + dissolve."""
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import processing
    from qgis.core import QgsCoordinateReferenceSystem
    from shapely import box

    from analysis.vector_io import write_geopackage
    from tests.conftest import shared_path

    archive = shared_path("data/nwi_dc_wetlands.zip")
    nwi = gpd.read_file(f"zip://{archive}!DC_shapefile_wetlands/DC_Wetlands.shp")
    invalid = nwi.geometry[~nwi.geometry.is_valid].iloc[0]
    wetlands = gpd.GeoDataFrame({"wetland_id": [f"NWI-{i}" for i in nwi.index], "source": "NWI",
                                 "wetland_class": nwi["ATTRIBUTE"], "regulated": 0.0,
                                 "adjacent_area_ft": np.nan}, geometry=nwi.geometry.values,
                                crs=nwi.crs)
    empty = {name: gpd.GeoDataFrame({f: pd.Series(dtype=object) for f in fields},
                                    geometry=gpd.GeoSeries([], crs=nwi.crs))
             for name, fields in (("impaired_waters", ("waterbody_id", "name", "pollutants",
                                                       "listing_cycle", "category")),)}
    reference = tmp_path / "nwi_reference.gpkg"
    write_geopackage(reference, {"wetlands": wetlands, **empty})
    x, y = invalid.centroid.x, invalid.centroid.y
    cut = gpd.GeoSeries([box(x - 700, y - 500, x + 600, y + 800)], crs=nwi.crs).to_crs("EPSG:2260")
    site = tmp_path / "site.gpkg"
    write_geopackage(site, {
        "project": pd.DataFrame([{"name": "NWI", "address": "DC", "applicant": "USFWS",
                                  "land_use": "other", "common_plan_acres": None,
                                  "five_acre_waiver": 0, "receiving_waters": "Potomac"}]),
        "site_boundary": gpd.GeoDataFrame({"parcel_id": ["1"]}, geometry=cut.buffer(100).values,
                                          crs="EPSG:2260"),
        "disturbance": gpd.GeoDataFrame({"phase": ["1"], "start_date": ["2027-04-01"],
                                         "stabilized_date": [None]}, geometry=cut.values,
                                        crs="EPSG:2260")})
    results = run("wetlands", {"SITE": str(site), "REFERENCE": str(reference)})

    fixed = processing.run("native:fixgeometries", {
        "INPUT": load_layer(reference, "wetlands"), "OUTPUT": "memory:"})["OUTPUT"]
    inside = processing.run("native:intersection", {
        "INPUT": fixed, "OVERLAY": load_layer(site, "disturbance"), "OUTPUT": "memory:"})["OUTPUT"]
    assert inside.featureCount() >= 3
    union = processing.run("native:dissolve", {"INPUT": inside, "OUTPUT": "memory:"})["OUTPUT"]
    projected = processing.run("native:reprojectlayer", {
        "INPUT": union, "TARGET_CRS": QgsCoordinateReferenceSystem("EPSG:2260"),
        "OUTPUT": "memory:"})["OUTPUT"]
    qgis_acres = sum(f.geometry().area() for f in projected.getFeatures()) * US_SQ_FT_ACRES
    assert results["WETLAND_ACRES"] == pytest.approx(qgis_acres, rel=1e-5)


def test_condition_a_and_wetlands_read_a_postgis_reference(demo, tmp_path, postgis_server):
    """REFERENCE as a PostGIS connection text (the schema inside it), filled by
    swppp:reference_import from the demo's layers: the same answers as from the GeoPackage."""
    import uuid

    conninfo, schema = postgis_server.conninfo(), f"ca_{uuid.uuid4().hex[:8]}"
    layers = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")
    for index, layer in enumerate(layers):
        imported = run("reference_import", {
            "LAYER": index, "TARGET": conninfo, "SCHEMA": schema, "FORMAT": 0,
            "SOURCE": f"{demo['REFERENCE']}|layername={layer}", "SOURCE_DATE": "2026-01-01"})
        assert imported["VERSION"] == 1
    reference = f"{conninfo} schema={schema}"
    a = run("condition_a", {"SITE": demo["SITE"], "REFERENCE": reference,
                            "OUTPUT_JSON": str(tmp_path / "a.json")})
    assert a["CONDITION_A_APPLIES"] == 1 and a["CONDITION_A_DECIDED"] == 1
    assert "NY1301-0099 Seven Springs Creek tributary" in a["CONDITION_A_EVIDENCE"]
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["reference"]["read"]["impaired_waters"]["version"] == 1
    w = run("wetlands", {"SITE": demo["SITE"], "REFERENCE": reference})
    assert w["WETLAND_ACRES"] == pytest.approx(0.10, abs=1e-6)
