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
    return {"SITE": str(data_copy("demo_site.gpkg")), "REFERENCE": str(data_copy("demo_reference.gpkg"))}


def test_condition_a_applies_on_the_demo_with_its_evidence(demo, tmp_path, load_layer):
    results = run(
        "condition_a",
        {**demo, "OUTPUT_JSON": str(tmp_path / "a.json"), "OUTPUT_FINDINGS": str(tmp_path / "a.gpkg")},
    )
    assert results["CONDITION_A_APPLIES"] == 1 and results["CONDITION_A_DECIDED"] == 1
    assert "NY1301-0099 Seven Springs Creek tributary" in results["CONDITION_A_EVIDENCE"]
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert {f["rule"] for f in data["findings"]} == {"condition_a"}
    assert data["reference"]["read"]["impaired_waters"]["version"] == 1
    assert load_layer(tmp_path / "a.gpkg", "findings").featureCount() == len(data["findings"])


def test_wetlands_on_project_layers_draws_the_disturbance_in_wetlands(demo, tmp_path, load_layer):
    roles = ("project", "site_boundary", "disturbance", "discharge_point")
    layers = {f"{role.upper()}_LAYER": load_layer(demo["SITE"], role) for role in roles}
    results = run(
        "wetlands", {**layers, "REFERENCE": demo["REFERENCE"], "OUTPUT_FINDINGS": str(tmp_path / "w.gpkg")}
    )
    assert results["WETLAND_ACRES"] == pytest.approx(0.10, abs=1e-6)
    reach = 100 * 0.3048 / (1200 / 3937)  # 100 international feet in US survey feet
    assert results["WETLAND_ADJACENT_AREA_ACRES"] == pytest.approx(
        (reach - 85) * 255 * US_SQ_FT_ACRES, rel=1e-9
    )
    assert results["WARN_COUNT"] == 2
    findings = load_layer(tmp_path / "w.gpkg", "findings")
    areas = sorted(f.geometry().area() * US_SQ_FT_ACRES for f in findings.getFeatures())
    assert areas == pytest.approx(
        sorted([results["WETLAND_ACRES"], results["WETLAND_ADJACENT_AREA_ACRES"]]), rel=1e-6
    )


def test_a_reference_without_a_needed_layer_says_needs_review_naming_it(demo, tmp_path):
    """A store missing a layer serves the checks it can: Condition A is not decided, and the
    finding names the missing layers and the import that adds each (no refusal)."""
    import geopandas as gpd

    from analysis.io.vector import write_geopackage

    partial = tmp_path / "partial.gpkg"
    write_geopackage(partial, {"wetlands": gpd.read_file(demo["REFERENCE"], layer="wetlands")})
    results = run(
        "condition_a",
        {"SITE": demo["SITE"], "REFERENCE": str(partial), "OUTPUT_JSON": str(tmp_path / "a.json")},
    )
    assert results["CONDITION_A_DECIDED"] == 0 and results["NEEDS_REVIEW_COUNT"] == 1
    [finding] = json.loads((tmp_path / "a.json").read_text())["findings"]
    assert finding["status"] == "needs_review"
    assert f"the reference {partial} has no 'tmdl_watersheds', 'catchments'" in finding["message"]
    assert f"swppp reference import tmdl_watersheds SOURCE --reference {partial}" in finding["message"]


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

    from analysis.io.vector import write_geopackage
    from tests.conftest import shared_path

    archive = shared_path("data/nwi_dc_wetlands.zip")
    nwi = gpd.read_file(f"zip://{archive}!DC_shapefile_wetlands/DC_Wetlands.shp")
    # NWI-1554: a self-intersecting ring as GDAL up to 3.10 reads it; GDAL 3.13 (QGIS 3.44's
    # Debian) organises its rings into a valid multipolygon. The cut goes through it either way.
    assert list(nwi.index[~nwi.geometry.is_valid]) in ([1554], [])
    invalid = nwi.geometry[1554]
    wetlands = gpd.GeoDataFrame(
        {
            "wetland_id": [f"NWI-{i}" for i in nwi.index],
            "source": "NWI",
            "wetland_class": nwi["ATTRIBUTE"],
            "regulated": 0.0,
            "adjacent_area_ft": np.nan,
        },
        geometry=nwi.geometry.values,
        crs=nwi.crs,
    )
    empty = {
        name: gpd.GeoDataFrame(
            {f: pd.Series(dtype=object) for f in fields}, geometry=gpd.GeoSeries([], crs=nwi.crs)
        )
        for name, fields in (
            ("impaired_waters", ("waterbody_id", "name", "pollutants", "listing_cycle", "category")),
        )
    }
    reference = tmp_path / "nwi_reference.gpkg"
    write_geopackage(reference, {"wetlands": wetlands, **empty})
    x, y = invalid.centroid.x, invalid.centroid.y
    cut = gpd.GeoSeries([box(x - 700, y - 500, x + 600, y + 800)], crs=nwi.crs).to_crs("EPSG:2260")
    site = tmp_path / "site.gpkg"
    write_geopackage(
        site,
        {
            "project": pd.DataFrame(
                [
                    {
                        "name": "NWI",
                        "address": "DC",
                        "applicant": "USFWS",
                        "land_use": "other",
                        "common_plan_acres": None,
                        "five_acre_waiver": 0,
                        "receiving_waters": "Potomac",
                    }
                ]
            ),
            "site_boundary": gpd.GeoDataFrame(
                {"parcel_id": ["1"]}, geometry=cut.buffer(100).values, crs="EPSG:2260"
            ),
            "disturbance": gpd.GeoDataFrame(
                {"phase": ["1"], "start_date": ["2027-04-01"], "stabilized_date": [None]},
                geometry=cut.values,
                crs="EPSG:2260",
            ),
        },
    )
    results = run("wetlands", {"SITE": str(site), "REFERENCE": str(reference)})

    fixed = processing.run(
        "native:fixgeometries", {"INPUT": load_layer(reference, "wetlands"), "OUTPUT": "memory:"}
    )["OUTPUT"]
    inside = processing.run(
        "native:intersection",
        {"INPUT": fixed, "OVERLAY": load_layer(site, "disturbance"), "OUTPUT": "memory:"},
    )["OUTPUT"]
    assert inside.featureCount() >= 3
    union = processing.run("native:dissolve", {"INPUT": inside, "OUTPUT": "memory:"})["OUTPUT"]
    projected = processing.run(
        "native:reprojectlayer",
        {"INPUT": union, "TARGET_CRS": QgsCoordinateReferenceSystem("EPSG:2260"), "OUTPUT": "memory:"},
    )["OUTPUT"]
    qgis_acres = sum(f.geometry().area() for f in projected.getFeatures()) * US_SQ_FT_ACRES
    assert results["WETLAND_ACRES"] == pytest.approx(qgis_acres, rel=1e-5)


# Reference layers chosen from the project (issue 4): WETLANDS_LAYER, IMPAIRED_WATERS_LAYER,
# TMDL_WATERSHEDS_LAYER, CATCHMENTS_LAYER instead of REFERENCE.
REFERENCE_ROLES = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")


def reference_layers(load_layer, path, roles=REFERENCE_ROLES):
    """The reference GeoPackage's layers as project layers, as *_LAYER parameters."""
    return {f"{role.upper()}_LAYER": load_layer(path, role) for role in roles}


@pytest.mark.parametrize("reference", ["demo_reference.gpkg", "variants/reference_crs_4326.gpkg"])
def test_project_reference_layers_give_what_the_reference_file_gives(
    demo, data_copy, tmp_path, load_layer, reference
):
    path = str(data_copy(reference))
    from_file = {
        name: run(
            name,
            {"SITE": demo["SITE"], "REFERENCE": path, "OUTPUT_JSON": str(tmp_path / f"{name}_file.json")},
        )
        for name in ("condition_a", "wetlands")
    }
    layers = reference_layers(load_layer, path)
    from_layers = {
        name: run(
            name, {"SITE": demo["SITE"], **layers, "OUTPUT_JSON": str(tmp_path / f"{name}_layers.json")}
        )
        for name in ("condition_a", "wetlands")
    }

    a_file, a_layers = from_file["condition_a"], from_layers["condition_a"]
    assert a_layers["CONDITION_A_APPLIES"] == a_file["CONDITION_A_APPLIES"] == 1
    assert a_layers["CONDITION_A_DECIDED"] == a_file["CONDITION_A_DECIDED"] == 1
    assert a_layers["CONDITION_A_EVIDENCE"] == a_file["CONDITION_A_EVIDENCE"]
    w_file, w_layers = from_file["wetlands"], from_layers["wetlands"]
    assert w_file["WETLAND_ACRES"] > 0 and w_file["WETLAND_ADJACENT_AREA_ACRES"] > 0
    assert w_layers["WETLAND_ACRES"] == pytest.approx(w_file["WETLAND_ACRES"], rel=1e-12)
    assert w_layers["WETLAND_ADJACENT_AREA_ACRES"] == pytest.approx(
        w_file["WETLAND_ADJACENT_AREA_ACRES"], rel=1e-12
    )

    # The JSON names the project layers read (nothing is copied; GeoPackage tables as they are
    # on disk are read by their source, with their layer_versions), and what was read of them:
    # what the analysis read of the file.
    text = (tmp_path / "condition_a_layers.json").read_text(encoding="utf-8")
    recorded = json.loads(text)["reference"]
    assert recorded["path"] == "QGIS project layers" and recorded["kind"] == "qgis_layers"
    given = recorded["project_layers"]
    assert set(given) == set(REFERENCE_ROLES)
    for role in REFERENCE_ROLES:
        assert given[role] == {
            "layer": role,
            "source": layers[f"{role.upper()}_LAYER"].source(),
            "provider": "ogr",
            "read_by": "geopackage",
            "version": 1,
        }
    from_file = json.loads((tmp_path / "condition_a_file.json").read_text(encoding="utf-8"))["reference"]
    assert recorded["read"] == from_file["read"]
    assert recorded["versions"] == from_file["versions"]


def test_only_the_reference_features_near_the_site_are_read(demo, tmp_path, load_layer):
    """A wetlands layer holding the demo's wetlands and copies of them 20 miles away: the
    analysis reads from the project layer the features it reads from the file (those meeting
    the box around the site), none of the far ones."""
    import geopandas as gpd
    import pandas as pd
    import shapely

    from analysis.io.vector import write_geopackage
    from analysis.profile import load_profile
    from analysis.reference.read import site_bounds
    from analysis.siteplan.plan import load_site_plan

    near = gpd.read_file(demo["REFERENCE"], layer="wetlands")
    far = near.copy()
    far["wetland_id"] = far["wetland_id"] + "-FAR"
    far["geometry"] = far.geometry.translate(20 * 5280, 20 * 5280)
    wetlands = tmp_path / "statewide_wetlands.gpkg"
    write_geopackage(wetlands, {"wetlands": pd.concat([near, far], ignore_index=True)})
    profile = load_profile("kiryas_joel")
    box = shapely.box(*site_bounds(load_site_plan(demo["SITE"], profile), profile))
    expected = int(shapely.intersects(near.geometry.values, box).sum())
    assert 0 < expected < len(near)  # the demo itself has a wetland beyond the box

    layer = load_layer(wetlands, "wetlands")
    assert layer.featureCount() == 2 * len(near)
    results = run(
        "wetlands", {"SITE": demo["SITE"], "WETLANDS_LAYER": layer, "OUTPUT_JSON": str(tmp_path / "w.json")}
    )
    recorded = json.loads((tmp_path / "w.json").read_text(encoding="utf-8"))["reference"]
    assert recorded["read"]["wetlands"]["features"] == expected
    from_file = run("wetlands", {"SITE": demo["SITE"], "REFERENCE": str(wetlands)})
    assert results["WETLAND_ACRES"] == pytest.approx(from_file["WETLAND_ACRES"], rel=1e-12)


def test_a_reference_layer_lacking_a_contract_field_is_refused_naming_it(demo, tmp_path, load_layer):
    import geopandas as gpd
    from qgis.core import QgsProcessingException

    from analysis.io.vector import write_geopackage

    county = tmp_path / "county.gpkg"
    wetlands = gpd.read_file(demo["REFERENCE"], layer="wetlands").drop(columns="wetland_id")
    wetlands.columns = [c.upper() if c != "geometry" else c for c in wetlands.columns]
    write_geopackage(county, {"County_Wetlands": wetlands})
    layer = load_layer(county, "County_Wetlands")
    with pytest.raises(QgsProcessingException) as raised:
        run("wetlands", {"SITE": demo["SITE"], "WETLANDS_LAYER": layer})
    message = str(raised.value)
    # Only the missing field is named: the others are found whatever their case.
    assert "Layer 'County_Wetlands'" in message and str(county) in message
    assert "no field 'wetland_id'" in message and "'source'" not in message.split("Its fields")[0]


def test_a_needed_reference_layer_not_given_says_needs_review_naming_its_parameter(
    demo, load_layer, tmp_path
):
    layers = reference_layers(load_layer, demo["REFERENCE"], roles=("wetlands",))
    results = run("condition_a", {"SITE": demo["SITE"], **layers, "OUTPUT_JSON": str(tmp_path / "a.json")})
    assert results["CONDITION_A_DECIDED"] == 0 and results["NEEDS_REVIEW_COUNT"] == 1
    [finding] = json.loads((tmp_path / "a.json").read_text())["findings"]
    message = finding["message"]
    assert message.startswith(
        "Condition A not decided: no project layer is given as the "
        "reference layer 'tmdl_watersheds', 'catchments'"
    )
    assert "(reference layers given: wetlands ('wetlands'))" in message
    assert "choose the project layer holding the tmdl_watersheds as TMDL_WATERSHEDS_LAYER" in message


def test_reference_and_reference_layers_together_are_refused(demo, load_layer):
    from qgis.core import QgsProcessingException

    layers = reference_layers(load_layer, demo["REFERENCE"], roles=("wetlands",))
    with pytest.raises(
        QgsProcessingException,
        match="either REFERENCE .* or the reference "
        r"layers \(WETLANDS_LAYER\), not both",
    ):
        run("wetlands", {**demo, **layers})


def test_the_review_on_project_reference_layers_equals_the_review_on_the_file(
    demo, tmp_path, load_layer, contract_problems
):
    outputs = {}
    for how, reference in (
        ("file", {"REFERENCE": demo["REFERENCE"]}),
        ("layers", reference_layers(load_layer, demo["REFERENCE"])),
    ):
        outputs[how] = tmp_path / f"review_{how}.json"
        run(
            "review",
            {
                "SITE": demo["SITE"],
                **reference,
                "OUTPUT_JSON": str(outputs[how]),
                "OUTPUT_HTML": str(tmp_path / f"review_{how}.html"),
            },
        )
    file_run, layer_run = (json.loads(outputs[h].read_text(encoding="utf-8")) for h in ("file", "layers"))
    assert any(f["rule"] == "wetlands" and f["status"] == "warn" for f in file_run["findings"])
    for part in ("findings", "measurements", "conditions", "project"):
        assert layer_run[part] == file_run[part], part
    # The same features read, of the same layer_versions (the layers are the file's tables,
    # read by their source).
    assert layer_run["reference"]["read"] == file_run["reference"]["read"]
    assert layer_run["reference"]["versions"] == file_run["reference"]["versions"] != {}
    assert contract_problems(outputs["layers"]) == []
    html = (tmp_path / "review_layers.html").read_text(encoding="utf-8")
    assert "QGIS project layers" in html and "qgis_reference" not in html


def test_postgis_project_layers_give_what_the_reference_file_gives(demo, tmp_path, request):
    """The demo's reference layers imported into a real PostGIS and added to the project as
    PostGIS layers: read by their source (the schema is the importer's), and, with a subset
    string each, through QGIS's postgres provider (around the site through the GiST index)."""
    import uuid

    from qgis.core import QgsDataSourceUri, QgsProject, QgsVectorLayer, QgsWkbTypes

    from analysis.cli import main

    server = request.getfixturevalue("postgis_server")
    schema = f"q_{uuid.uuid4().hex[:8]}"
    layers, project = {}, QgsProject.instance()
    for role in REFERENCE_ROLES:
        assert (
            main(
                [
                    "reference",
                    "import",
                    role,
                    f"{demo['REFERENCE']}|layername={role}",
                    "--reference",
                    f"{server.uri()}&schema={schema}",
                    "--quiet",
                ]
            )
            == 0
        )
        uri = QgsDataSourceUri()
        uri.setConnection(
            server.socket_dir, str(server.port), server.database, "postgres", "not-a-real-password"
        )
        uri.setDataSource(schema, role, "geom", "", "fid")
        uri.setWkbType(
            QgsWkbTypes.Type.MultiLineString if role == "impaired_waters" else QgsWkbTypes.Type.MultiPolygon
        )
        layer = QgsVectorLayer(uri.uri(False), f"PostGIS {role}", "postgres")
        assert layer.isValid(), role
        project.addMapLayer(layer, False)
        layers[f"{role.upper()}_LAYER"] = layer
    try:
        from_layers = {
            name: run(name, {"SITE": demo["SITE"], **layers, "OUTPUT_JSON": str(tmp_path / f"{name}.json")})
            for name in ("condition_a", "wetlands")
        }
        for layer in layers.values():
            assert layer.setSubsetString('"fid" > 0')
        through_qgis = {
            name: run(
                name, {"SITE": demo["SITE"], **layers, "OUTPUT_JSON": str(tmp_path / f"{name}_qgis.json")}
            )
            for name in ("condition_a", "wetlands")
        }
    finally:
        project.removeMapLayers([layer.id() for layer in layers.values()])
    # The import spells pollutants its own way: compared with the same schema as REFERENCE.
    from_file = {
        name: run(name, {"SITE": demo["SITE"], "REFERENCE": f"{server.uri()}&schema={schema}"})
        for name in ("condition_a", "wetlands")
    }
    assert from_layers["condition_a"]["CONDITION_A_APPLIES"] == 1
    assert (
        from_layers["condition_a"]["CONDITION_A_EVIDENCE"] == from_file["condition_a"]["CONDITION_A_EVIDENCE"]
    )
    for output in ("WETLAND_ACRES", "WETLAND_ADJACENT_AREA_ACRES"):
        assert from_layers["wetlands"][output] == pytest.approx(from_file["wetlands"][output], rel=1e-12)
    text = (tmp_path / "wetlands.json").read_text(encoding="utf-8")
    given = json.loads(text)["reference"]["project_layers"]["wetlands"]
    assert given["provider"] == "postgres" and f'"{schema}"."wetlands"' in given["source"]
    # Tables of a schema `swppp reference import` made: read by their source, with their versions.
    assert given["layer"] == "PostGIS wetlands" and given["read_by"] == "postgis"
    assert given["version"] == 1
    for name, results in through_qgis.items():
        assert {k: v for k, v in results.items() if k != "OUTPUT_JSON"} == {
            k: v for k, v in from_layers[name].items() if k != "OUTPUT_JSON"
        }, name
    text = (tmp_path / "wetlands_qgis.json").read_text(encoding="utf-8")
    given = json.loads(text)["reference"]["project_layers"]["wetlands"]
    assert given["read_by"] == "qgis" and given["subset"] == '"fid" > 0'
    assert "not-a-real-password" not in text
    assert "not-a-real-password" not in text


def test_a_bad_value_in_a_reference_layer_is_refused_naming_the_project_layer(demo, tmp_path, load_layer):
    """The analysis's own InputError, raised as it reads the project layer, names that layer
    as the project names it, the feature (its id in QGIS) and the field."""
    import shapely
    from qgis.core import QgsProcessingException

    from analysis.io.vector import read_layer, write_geopackage
    from analysis.profile import load_profile
    from analysis.reference.read import site_bounds
    from analysis.siteplan.plan import load_site_plan

    frame = read_layer(demo["REFERENCE"], "wetlands").frame
    profile = load_profile("kiryas_joel")
    box = shapely.box(*site_bounds(load_site_plan(demo["SITE"], profile), profile))
    near = frame.index[shapely.intersects(frame.geometry.values, box)][-1]  # one the check reads
    frame["regulated"] = frame["regulated"].astype(object)
    frame.loc[near, "regulated"] = "maybe"
    county = tmp_path / "county.gpkg"
    write_geopackage(county, {"wetlands": frame})
    layer = load_layer(county, "wetlands")
    bad = [f.id() for f in layer.getFeatures() if f["regulated"] == "maybe"]
    assert len(bad) == 1
    layer.setName("County wetlands")
    with pytest.raises(QgsProcessingException) as raised:
        run("wetlands", {"SITE": demo["SITE"], "WETLANDS_LAYER": layer})
    message = str(raised.value)
    assert message.startswith(
        f"layer 'County wetlands', feature {bad[0]}, field 'regulated': regulated is 'maybe', not a flag"
    )


def test_condition_a_and_wetlands_read_a_postgis_reference(demo, tmp_path, postgis_server):
    """REFERENCE as a PostGIS connection text (the schema inside it), filled by
    swppp:reference_import from the demo's layers: the same answers as from the GeoPackage."""
    import uuid

    conninfo, schema = postgis_server.conninfo(), f"ca_{uuid.uuid4().hex[:8]}"
    layers = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")
    for index, layer in enumerate(layers):
        imported = run(
            "reference_import",
            {
                "LAYER": index,
                "TARGET": conninfo,
                "SCHEMA": schema,
                "FORMAT": 0,
                "SOURCE": f"{demo['REFERENCE']}|layername={layer}",
                "SOURCE_DATE": "2026-01-01",
            },
        )
        assert imported["VERSION"] == 1
    reference = f"{conninfo} schema={schema}"
    a = run(
        "condition_a", {"SITE": demo["SITE"], "REFERENCE": reference, "OUTPUT_JSON": str(tmp_path / "a.json")}
    )
    assert a["CONDITION_A_APPLIES"] == 1 and a["CONDITION_A_DECIDED"] == 1
    assert "NY1301-0099 Seven Springs Creek tributary" in a["CONDITION_A_EVIDENCE"]
    data = json.loads((tmp_path / "a.json").read_text(encoding="utf-8"))
    assert data["reference"]["read"]["impaired_waters"]["version"] == 1
    w = run("wetlands", {"SITE": demo["SITE"], "REFERENCE": reference})
    assert w["WETLAND_ACRES"] == pytest.approx(0.10, abs=1e-6)
