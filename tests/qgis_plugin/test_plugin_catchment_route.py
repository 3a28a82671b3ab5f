"""The plugin follows the runoff downstream as ``swppp review`` does (issue 18 point 6): the
catchments downstream of the site's by ``drains_to`` are read from the project layer (by id,
``qgis_plugin.reference_source``), however far from the site, and Condition A gives the CLI's
status and route, from GeoPackage layers and from memory layers alike."""

import json

import pytest

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

# The demo's discharge point is at (582927, 913809) in EPSG:2260 (US feet); the box the
# analysis reads around the site ends near x = 583800. The outfall's catchment A reaches far east;
# B lies far outside the box, C inside a TMDL watershed 5 miles away, D and E beyond:
# with [condition_a] downstream_catchment_hops = 3 the route A -> B -> C -> D stops at D, and E
# (D's drains_to) is a catchment the route was cut at, not a water.
CHAIN = [
    ("A", 582000, 600000, "B"),
    ("B", 600000, 610000, "C"),
    ("C", 610000, 620000, "D"),
    ("D", 620000, 630000, "E"),
    ("E", 630000, 640000, "NY-FAR"),
]
FAR_SHED = (610500, 912000, 619500, 916000)
NO_SHED_ON_THE_ROUTE = (700000, 912000, 701000, 916000)


def run(name, parameters):
    import processing

    return processing.run(f"swppp:{name}", parameters)


@pytest.fixture(
    params=[(FAR_SHED, "EPSG:2260"), (NO_SHED_ON_THE_ROUTE, "EPSG:2260"), (FAR_SHED, "EPSG:4326")],
    ids=["shed_on_route", "no_shed", "shed_on_route_in_degrees"],
)
def routed(data_copy, request):
    """The demo site, and a reference whose catchments route the runoff far from the site into
    a TMDL watershed; its listed water is none of the site's (A is decided by the route). The
    reference layers are written in the param's CRS (a layer in degrees: the boxes the analysis
    asks the project layer for are placed in its CRS)."""
    import geopandas as gpd
    from shapely.geometry import LineString, box

    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    crs, shed = "EPSG:2260", request.param[0]
    gpd.GeoDataFrame(
        {
            "catchment_id": [c for c, *_ in CHAIN],
            "name": [f"Catchment {c}" for c, *_ in CHAIN],
            "drains_to": [d for *_, d in CHAIN],
        },
        geometry=[box(x0, 913000, x1, 915000) for _, x0, x1, _ in CHAIN],
        crs=crs,
    ).to_crs(request.param[1]).to_file(reference, layer="catchments", driver="GPKG")
    gpd.GeoDataFrame(
        {
            "watershed_id": ["TW-FAR"],
            "name": ["Far Lake watershed"],
            "pollutants": ["Phosphorus"],
            "tmdl_id": ["NY-TMDL-FAR"],
            "stormwater_source": [1],
        },
        geometry=[box(*shed)],
        crs=crs,
    ).to_crs(request.param[1]).to_file(reference, layer="tmdl_watersheds", driver="GPKG")
    gpd.GeoDataFrame(
        {
            "waterbody_id": ["NY-ELSEWHERE"],
            "name": ["Nowhere Creek"],
            "pollutants": ["Mercury"],
            "listing_cycle": ["2022"],
            "category": ["5"],
        },
        geometry=[LineString([(700000, 900000), (701000, 900000)])],
        crs=crs,
    ).to_crs(request.param[1]).to_file(reference, layer="impaired_waters", driver="GPKG")
    return str(site), str(reference), shed == FAR_SHED


def condition_a(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    return next(f for f in data["findings"] if f["rule"] == "condition_a")


def in_memory(layer):
    """A memory layer holding ``layer``'s features (its fields, CRS and name), in the project."""
    from qgis.core import QgsFeatureRequest, QgsProject

    copy = layer.materialize(QgsFeatureRequest())
    copy.setName(f"{layer.name()} (memory)")
    QgsProject.instance().addMapLayer(copy, False)
    return copy


@pytest.mark.parametrize("memory", [False, True], ids=["geopackage_layers", "memory_layers"])
def test_condition_a_on_project_layers_follows_the_route_the_cli_follows(
    routed, tmp_path, load_layer, memory
):
    from analysis.cli.app import main

    site, reference, on_route = routed
    cli_json = tmp_path / "cli.json"
    assert main(["review", site, "--reference", reference, "--json", str(cli_json), "--quiet"]) in (0, 1)
    cli = condition_a(cli_json)
    # What the CLI says: the watershed met through the route, or where the route was cut (E is
    # a catchment of the layer, not a water).
    if on_route:
        assert cli["status"] == "info", cli["message"]
        assert (
            "lies in catchment A (Catchment A), which drains to catchment B, which drains to "
            "catchment C, inside TMDL watershed TW-FAR"
        ) in cli["message"]
    else:
        assert cli["status"] == "not_applicable", cli["message"]
        assert (
            "which drains to catchment D, which drains to catchment E: not followed further" in cli["message"]
        )
        assert "NY-FAR" not in cli["message"] and ", E " not in cli["message"]

    layers = {
        f"{role.upper()}_LAYER": load_layer(reference, role)
        for role in ("impaired_waters", "tmdl_watersheds", "catchments")
    }
    if memory:
        layers = {name: in_memory(layer) for name, layer in layers.items()}
    plugin_json = tmp_path / "plugin.json"
    try:
        results = run("condition_a", {"SITE": site, **layers, "OUTPUT_JSON": str(plugin_json)})
    finally:
        if memory:
            from qgis.core import QgsProject

            QgsProject.instance().removeMapLayers([layer.id() for layer in layers.values()])
    plugin = condition_a(plugin_json)
    assert (plugin["status"], plugin["message"]) == (cli["status"], cli["message"])
    assert plugin["features"] == cli["features"]
    assert results["CONDITION_A_APPLIES"] == int(on_route) and results["CONDITION_A_DECIDED"] == 1

    # The analysis read the same features of the project layers as of the file.
    read = {
        run: json.loads(path.read_text(encoding="utf-8"))["reference"]["read"]
        for run, path in (("cli", cli_json), ("plugin", plugin_json))
    }
    assert {layer: r["features"] for layer, r in read["plugin"].items()} == {
        layer: read["cli"][layer]["features"] for layer in read["plugin"]
    }
    assert set(read["plugin"]) == {"impaired_waters", "tmdl_watersheds", "catchments"}
    # A (near the site) and B, C, D (followed) and E (the last step's, to know it a catchment).
    assert read["plugin"]["catchments"]["features"] == 5
    given = json.loads(plugin_json.read_text(encoding="utf-8"))["reference"]["project_layers"]
    assert (given["catchments"]["provider"], given["catchments"]["read_by"]) == (
        ("memory", "qgis") if memory else ("ogr", "geopackage")
    )


def test_the_feedback_names_each_reference_layer_read_in_place(routed, tmp_path, load_layer):
    import processing
    from qgis.core import QgsProcessingFeedback

    class Heard(QgsProcessingFeedback):
        def __init__(self):
            super().__init__()
            self.lines = []

        def pushInfo(self, info):
            self.lines.append(info)
            super().pushInfo(info)

    site, reference, _on_route = routed
    layers = {
        f"{role.upper()}_LAYER": load_layer(reference, role)
        for role in ("impaired_waters", "tmdl_watersheds", "catchments")
    }
    feedback = Heard()
    processing.run(
        "swppp:condition_a",
        {"SITE": site, **layers, "OUTPUT_JSON": str(tmp_path / "a.json")},
        feedback=feedback,
    )
    said = "\n".join(feedback.lines)
    assert (
        f"Reference layer catchments: 'catchments' ({reference}|layername=catchments), "
        "read where the review needs it."
    ) in said


def three_catchments(folder, fields: dict):
    """A catchments layer of three unit squares in a row with ``fields`` (source.gpkg; a
    ``name`` each where ``fields`` has none)."""
    import geopandas as gpd
    from shapely.geometry import box

    if not any(key.lower() == "name" for key in fields):
        fields = {**fields, "name": ["one", "two", "three"]}
    source = folder / "source.gpkg"
    gpd.GeoDataFrame(
        fields, geometry=[box(0, 0, 1, 1), box(1, 0, 2, 1), box(2, 0, 3, 1)], crs="EPSG:2260"
    ).to_file(source, layer="catchments", driver="GPKG")
    return source


def catchments_reference(layer):
    """``layer`` copied into a memory layer of its name, as the reference's catchments, read as
    the plugin reads a project layer with no file of its own (a GeoPackage layer as it is on
    disk is read by its source, by the analysis's own reader)."""
    from qgis.core import QgsFeatureRequest

    from qgis_plugin.reference_source import QgisReference, snapshot

    copy = layer.materialize(QgsFeatureRequest())
    copy.setName(layer.name())
    snap = snapshot(copy, "catchments")
    assert snap.by_source is None and snap.provider == "memory"
    return QgisReference({"catchments": snap})


def test_ids_are_asked_quoted_and_whatever_the_fields_case(tmp_path, load_layer):
    """A catchment id holding a quote is found (the value is quoted, never formatted raw), in a
    layer whose fields are in capitals (matched as the analysis matches them), by the walk the
    analysis takes."""
    from analysis.reference.route import catchment_lookup, walk

    ids = ["A", "O'Brien Brook", "Z"]
    source = three_catchments(
        tmp_path, {"CATCHMENT_ID": ids, "NAME": ids, "Drains_To": [ids[1], "Z; NY-1", None]}
    )
    reference = catchments_reference(load_layer(source, "catchments"))
    lookup = catchment_lookup(reference, "the test")
    assert lookup({"O'Brien Brook", "nowhere"}) == {"O'Brien Brook": "Z; NY-1"}
    done = walk([(None, "A", "O'Brien Brook", "")], lookup, 3)
    assert [[s.catchment_id for s in level] for level in done.levels] == [["A"], ["O'Brien Brook"], ["Z"]]
    assert [w.water_id for w in done.waters] == ["NY-1"]
    assert reference.features_read == {"catchments": 2}  # A was the start, not asked
