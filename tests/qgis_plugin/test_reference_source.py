"""Reference layers read from the project where they are (``qgis_plugin.reference_source``): memory
layers, a layer narrowed by a subset string, a layer's selected features only, each give the
review `swppp review` gives on the same features in a GeoPackage; an error in one names the
project layer, its feature and its field."""

import json

import pytest

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")
# What the review says of the site; the JSON's reference block says where it read (a file, or
# project layers) and is compared by what it read.
PARTS = ("findings", "measurements", "conditions", "project")


@pytest.fixture
def project():
    """The project's layers added by the test, removed after it."""
    from qgis.core import QgsProject

    added = []

    def add(layer):
        QgsProject.instance().addMapLayer(layer, False)
        added.append(layer.id())
        return layer

    yield add
    QgsProject.instance().removeMapLayers(added)


def cli_review(site, reference, out):
    from analysis.cli.app import main

    assert main(["review", str(site), "--reference", str(reference), "--json", str(out), "--quiet"]) in (0, 1)
    return json.loads(out.read_text(encoding="utf-8"))


def plugin_review(site, layers, out):
    import processing

    processing.run("swppp:review", {"SITE": str(site), **layers, "OUTPUT_JSON": str(out)})
    return json.loads(out.read_text(encoding="utf-8"))


def assert_same_review(plugin, cli):
    """The same review but for the print layouts, which only QGIS reads (the plugin's review
    says the test's project has none; the CLI reads none)."""
    layouts = [
        f for f in plugin["findings"] if f["rule"] == "site_map_scale" and "no print layouts" in f["message"]
    ]
    assert len(layouts) == 1
    plugin = {**plugin, "findings": [f for f in plugin["findings"] if f not in layouts]}
    for part in PARTS:
        assert plugin[part] == cli[part], part
    assert {layer: r["features"] for layer, r in plugin["reference"]["read"].items()} == {
        layer: r["features"] for layer, r in cli["reference"]["read"].items()
    }
    assert plugin["reference"]["kind"] == "qgis_layers"


def memory_copy(path, role, project, name=None):
    """``path``'s layer ``role`` copied into a memory layer of the project."""
    from qgis.core import QgsFeatureRequest, QgsVectorLayer

    layer = QgsVectorLayer(f"{path}|layername={role}", role, "ogr")
    assert layer.isValid()
    copy = layer.materialize(QgsFeatureRequest())
    copy.setName(name or f"memory {role}")
    assert copy.providerType() == "memory"
    return project(copy)


def with_decoy_wetland(path, folder):
    """``path``'s wetlands and one more, DECOY, covering the whole site, in a GeoPackage: a
    review that reads the decoy finds the disturbance inside a wetland."""
    import geopandas as gpd
    import pandas as pd
    import shapely

    from analysis.io.vector import write_geopackage

    wetlands = gpd.read_file(path, layer="wetlands")
    decoy = wetlands.iloc[:1].copy()
    decoy["wetland_id"] = "DECOY"
    decoy["geometry"] = [shapely.box(*wetlands.total_bounds).buffer(3000)]
    out = folder / "decoyed.gpkg"
    write_geopackage(out, {"wetlands": pd.concat([wetlands, decoy], ignore_index=True)})
    return out


def test_memory_layers_review_as_the_cli_reviews_the_file(data_copy, tmp_path, project):
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    cli = cli_review(site, reference, tmp_path / "cli.json")
    layers = {f"{role.upper()}_LAYER": memory_copy(reference, role, project) for role in ROLES}
    plugin = plugin_review(site, layers, tmp_path / "plugin.json")
    assert any(f["rule"] == "wetlands" and f["status"] == "warn" for f in cli["findings"])
    assert cli["conditions"]["A"]["applies"] is True
    assert_same_review(plugin, cli)
    given = plugin["reference"]["project_layers"]
    assert {role: (g["layer"], g["provider"], g["read_by"]) for role, g in given.items()} == {
        role: (f"memory {role}", "memory", "qgis") for role in ROLES
    }
    assert plugin["reference"]["layers"] == sorted(f"memory {role}" for role in ROLES)


@pytest.mark.parametrize("narrowed", ["subset_string", "selected_only"])
def test_a_narrowed_layer_reviews_as_the_cli_reviews_what_it_shows(data_copy, tmp_path, project, narrowed):
    """A wetlands layer holding a decoy covering the site, narrowed to the demo's wetlands by a
    subset string or by selecting them ("selected features only"): the review is the CLI's on
    the demo's reference; the layer unnarrowed, the decoy is read (the narrowing is what
    makes the difference)."""
    from qgis.core import QgsProcessingFeatureSourceDefinition, QgsVectorLayer

    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    cli = cli_review(site, reference, tmp_path / "cli.json")
    decoyed = with_decoy_wetland(reference, tmp_path)
    others = {
        f"{role.upper()}_LAYER": memory_copy(reference, role, project) for role in ROLES if role != "wetlands"
    }
    wetlands = project(QgsVectorLayer(f"{decoyed}|layername=wetlands", "decoyed wetlands", "ogr"))
    assert wetlands.isValid() and wetlands.featureCount() == 4

    whole = plugin_review(site, {**others, "WETLANDS_LAYER": wetlands}, tmp_path / "whole.json")
    assert whole["findings"] != cli["findings"]
    assert "DECOY" in json.dumps(whole["findings"])
    assert whole["reference"]["project_layers"]["wetlands"]["read_by"] == "geopackage"

    if narrowed == "subset_string":
        assert wetlands.setSubsetString("\"wetland_id\" <> 'DECOY'")
        value = wetlands
    else:
        wetlands.selectByExpression("\"wetland_id\" <> 'DECOY'")
        assert wetlands.selectedFeatureCount() == 3
        value = QgsProcessingFeatureSourceDefinition(wetlands.id(), True)
    plugin = plugin_review(site, {**others, "WETLANDS_LAYER": value}, tmp_path / "plugin.json")
    assert_same_review(plugin, cli)
    given = plugin["reference"]["project_layers"]["wetlands"]
    assert given["read_by"] == "qgis"  # narrowed: read through QGIS, as the project shows it
    if narrowed == "subset_string":
        assert given["subset"] == "\"wetland_id\" <> 'DECOY'" and "selected_only" not in given
    else:
        assert given["selected_only"] is True and "subset" not in given


def test_an_error_in_a_memory_layer_names_the_project_layer(data_copy, project):
    import processing
    from qgis.core import QgsProcessingException

    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    wetlands = memory_copy(reference, "wetlands", project, name="Wetlands (edited)")
    go12 = next(f for f in wetlands.getFeatures() if f["wetland_id"] == "GO-12")
    index = wetlands.fields().indexOf("adjacent_area_ft")
    assert wetlands.dataProvider().changeAttributeValues({go12.id(): {index: float("inf")}})
    with pytest.raises(QgsProcessingException) as raised:
        processing.run("swppp:wetlands", {"SITE": str(site), "WETLANDS_LAYER": wetlands})
    message = str(raised.value)
    assert message.startswith(
        f"layer 'Wetlands (edited)', feature {go12.id()}, field "
        "'adjacent_area_ft': adjacent_area_ft is inf, not a finite number"
    )
    assert "gpkg" not in message


def test_many_boxes_read_from_a_memory_layer_as_from_the_file(data_copy, project):
    """``read_boxes`` (the screen's read, many sites at once) on a memory layer: the features,
    fields and shapes the GeoPackage backend reads of the same boxes."""
    import geopandas as gpd
    import numpy as np

    from analysis.reference.read import GeoPackageReference
    from qgis_plugin.reference_source import QgisReference, snapshot

    reference = data_copy("demo_reference.gpkg")
    wetlands = gpd.read_file(reference, layer="wetlands")
    x0, y0, x1, y1 = wetlands.total_bounds
    # Two boxes, each around a part of the wetlands, in the area CRS (EPSG:2260).
    boxes = np.array([[x0, y0, (x0 + x1) / 2, (y0 + y1) / 2], [(x0 + x1) / 2, y0, x1, y1]])
    from_file = GeoPackageReference(reference).read_boxes("wetlands", boxes, "EPSG:2260")
    layer = memory_copy(reference, "wetlands", project)
    snap = snapshot(layer, "wetlands")
    assert snap.by_source is None
    from_layer = QgisReference({"wetlands": snap}).read_boxes("wetlands", boxes, "EPSG:2260")
    assert len(from_file) >= 2
    key = "wetland_id"
    a, b = from_file.sort_values(key), from_layer.sort_values(key)
    columns = ["wetland_id", "source", "wetland_class", "regulated", "adjacent_area_ft"]
    assert a[columns].reset_index(drop=True).equals(b[columns].reset_index(drop=True))
    assert all(g.equals(h) for g, h in zip(a.geometry, b.geometry))
