"""Catchment ids stored with spaces around them: the plugin's reading of a project layer finds
them as the analysis does (ids compared trimmed, ``Reference.lookup(normalise=str.strip)``), so
Condition A in QGIS follows the route `swppp review` follows."""

import json

import pytest

from tests.qgis_plugin.test_plugin_catchment_route import (
    CHAIN,
    FAR_SHED,
    catchments_reference,
    condition_a,
    run,
    three_catchments,
)

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

# B and C stored padded; every drains_to names the trimmed id.
PADDED = {"B": "  B ", "C": "C\t"}


def chain_reference(reference, chain):
    """``reference``'s catchments replaced by ``chain`` ((id, x0, x1, drains_to) each: boxes in
    a row), and its 303(d) list by one water far from them all (NY-ELSEWHERE)."""
    import geopandas as gpd
    from shapely.geometry import LineString, box

    gpd.GeoDataFrame(
        {
            "catchment_id": [c for c, *_ in chain],
            "name": [f"Catchment {c.strip()}" for c, *_ in chain],
            "drains_to": [d for *_, d in chain],
        },
        geometry=[box(x0, 913000, x1, 915000) for _, x0, x1, _ in chain],
        crs="EPSG:2260",
    ).to_file(reference, layer="catchments", driver="GPKG")
    gpd.GeoDataFrame(
        {
            "waterbody_id": ["NY-ELSEWHERE"],
            "name": ["Nowhere Creek"],
            "pollutants": ["Mercury"],
            "listing_cycle": ["2022"],
            "category": ["5"],
        },
        geometry=[LineString([(700000, 900000), (701000, 900000)])],
        crs="EPSG:2260",
    ).to_file(reference, layer="impaired_waters", driver="GPKG")


def test_ids_stored_with_spaces_are_found_downstream(tmp_path, load_layer):
    from analysis.reference.route import catchment_lookup

    ids = ["A", " O'Brien Brook  ", "Z "]
    source = three_catchments(
        tmp_path, {"catchment_id": ids, "drains_to": ["O'Brien Brook", "Z; NY-1", None]}
    )
    reference = catchments_reference(load_layer(source, "catchments"))
    lookup = catchment_lookup(reference, "the test")
    assert lookup({"O'Brien Brook", "Z", "A"}) == {
        "A": "O'Brien Brook",
        "O'Brien Brook": "Z; NY-1",
        "Z": None,
    }
    found = reference.lookup("catchments", "catchment_id", ["Z"], normalise=str.strip)
    assert list(found["catchment_id"]) == ["Z "]  # as stored


def test_condition_a_follows_padded_ids_as_the_cli_does(data_copy, tmp_path, load_layer):
    import geopandas as gpd
    from shapely.geometry import box

    from analysis.cli.app import main

    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    chain_reference(reference, [(PADDED.get(c, c), *rest) for c, *rest in CHAIN])
    gpd.GeoDataFrame(
        {
            "watershed_id": ["TW-FAR"],
            "name": ["Far Lake watershed"],
            "pollutants": ["Phosphorus"],
            "tmdl_id": ["NY-TMDL-FAR"],
            "stormwater_source": [1],
        },
        geometry=[box(*FAR_SHED)],
        crs="EPSG:2260",
    ).to_file(reference, layer="tmdl_watersheds", driver="GPKG")

    cli_json = tmp_path / "cli.json"
    assert main(["review", str(site), "--reference", str(reference), "--json", str(cli_json), "--quiet"]) in (
        0,
        1,
    )
    cli = condition_a(cli_json)
    assert cli["status"] == "info", cli["message"]
    assert (
        "lies in catchment A (Catchment A), which drains to catchment B, which drains to "
        "catchment C, inside TMDL watershed TW-FAR"
    ) in cli["message"]

    layers = {
        f"{role.upper()}_LAYER": load_layer(reference, role)
        for role in ("impaired_waters", "tmdl_watersheds", "catchments")
    }
    plugin_json = tmp_path / "plugin.json"
    results = run("condition_a", {"SITE": str(site), **layers, "OUTPUT_JSON": str(plugin_json)})
    plugin = condition_a(plugin_json)
    assert (plugin["status"], plugin["message"]) == (cli["status"], cli["message"])
    assert plugin["features"] == cli["features"]
    assert results["CONDITION_A_APPLIES"] == 1
    read = json.loads(plugin_json.read_text(encoding="utf-8"))["reference"]["read"]
    assert read["catchments"]["features"] == 5  # A near the site, B to E downstream


def test_an_id_two_catchments_carry_is_refused_as_the_cli_refuses_it(data_copy, tmp_path, load_layer):
    """Catchment B stored twice with different drains_to: which one the route follows would be
    the reader's accident (the plugin kept the first, the CLI the last). Both refuse it, naming
    the field and the id."""

    from qgis.core import QgsProcessingException

    from analysis.cli.app import main
    from analysis.errors import InputError
    from analysis.reference.route import catchment_lookup

    source = three_catchments(tmp_path, {"catchment_id": ["A", "B", "B"], "drains_to": ["B", "NY-1", "NY-2"]})
    layer = load_layer(source, "catchments")
    layer.setName("County catchments")
    lookup = catchment_lookup(catchments_reference(layer), "the test")
    with pytest.raises(
        InputError,
        match=r"^layer 'County catchments', field 'catchment_id': "
        r"catchment_id is not unique: 1 id\(s\) repeat \(B\)",
    ):
        lookup({"B"})

    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    chain_reference(reference, CHAIN + [("B", 700000, 701000, "NY-ELSEWHERE")])
    out = tmp_path / "cli.json"
    assert main(["review", str(site), "--reference", str(reference), "--json", str(out), "--quiet"]) == 2
    assert not out.exists()
    layers = {
        f"{role.upper()}_LAYER": load_layer(reference, role)
        for role in ("impaired_waters", "tmdl_watersheds", "catchments")
    }
    with pytest.raises(QgsProcessingException, match=r"catchment_id is not unique.*\(B\)"):
        run("condition_a", {"SITE": str(site), **layers, "OUTPUT_JSON": str(tmp_path / "plugin.json")})


def test_an_id_repeated_once_padded_is_refused(tmp_path, load_layer):
    """B stored once as "B" and once as " B": found exactly, the padded copy is found too (the
    layer's ids not stored as compared are read once), and the repeat refused as the CLI
    refuses it, not one of the two followed by accident."""
    from analysis.errors import InputError
    from analysis.reference.read import GeoPackageReference
    from analysis.reference.route import catchment_lookup

    source = three_catchments(
        tmp_path, {"catchment_id": ["A", "B", " B"], "drains_to": ["B", "NY-1", "NY-2"]}
    )
    layer = load_layer(source, "catchments")
    for reference in (GeoPackageReference(source), catchments_reference(layer)):
        with pytest.raises(InputError, match=r"catchment_id is not unique: 1 id\(s\) repeat \(B\)"):
            catchment_lookup(reference, "the test")({"B"})
