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
