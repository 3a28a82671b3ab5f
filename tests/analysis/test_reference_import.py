"""Reading reference sources into the contract: formats, mappings, validation and its report."""

from __future__ import annotations

import json
import zipfile

import geopandas as gpd
import pytest
from shapely import Point, Polygon, box

from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.reference.importer import normalize_pollutants, read_candidate
from tests.analysis.conftest import X0, Y0
from tests.conftest import TEST_DATA, shared_path

SOURCES = TEST_DATA / "reference_sources"
SYNONYMS = dict(load_profile().reference.pollutant_synonyms)


def wetlands(path, geometries, ids=None, crs="EPSG:2260", drop=()):
    ids = ids or [f"W-{i}" for i in range(len(geometries))]
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": ids,
            "source": "NYSDEC",
            "wetland_class": "II",
            "regulated": 1,
            "adjacent_area_ft": 100.0,
        },
        geometry=geometries,
        crs=crs,
    ).drop(columns=list(drop))
    write_geopackage(path, {"wetlands": frame})
    return path


def square(i=0):
    return box(X0 + 200 * i, Y0, X0 + 200 * i + 100, Y0 + 100)


BOW_TIE = Polygon([(X0, Y0), (X0 + 100, Y0 + 100), (X0 + 100, Y0), (X0, Y0 + 100)])


def test_invalid_geometries_are_repaired_and_counted_wrong_types_rejected(tmp_path):
    path = wetlands(tmp_path / "w.gpkg", [square(0), BOW_TIE, Point(X0, Y0), None])
    candidate = read_candidate("wetlands", path)
    report = candidate.report
    assert report.repaired == ["W-1"]
    assert dict(report.rejected) == {
        "W-2": "Point is not a Polygon or MultiPolygon",
        "W-3": "no geometry (null or empty)",
    }
    assert sorted(candidate.frame.wetland_id) == ["W-0", "W-1"]
    repaired = candidate.frame.set_index("wetland_id").geometry["W-1"]
    assert repaired.is_valid and repaired.geom_type == "MultiPolygon"
    assert repaired.area == pytest.approx(2 * (100 * 50 / 2))  # two triangles, computed by hand
    assert set(candidate.frame.geom_type) == {"MultiPolygon"}
    assert "1 invalid geometry(ies) repaired" in report.lines()[0]


@pytest.mark.parametrize(
    "case, fix_words",
    [
        ("no_crs", "CRS"),
        ("duplicate_ids", "not unique"),
        ("missing_field", "field 'source'"),
        ("nothing_left", "no feature of the source"),
    ],
)
def test_sources_that_cannot_be_imported_are_refused(tmp_path, case, fix_words):
    path = tmp_path / "w.gpkg"
    if case == "no_crs":
        wetlands(path, [square()], crs=None)
    elif case == "duplicate_ids":
        wetlands(path, [square(0), square(1)], ids=["W-1", "W-1"])
    elif case == "missing_field":
        wetlands(path, [square()], drop=["source"])
    else:
        wetlands(path, [Point(X0, Y0)])
    with pytest.raises(InputError) as caught:
        read_candidate("wetlands", path)
    assert fix_words in str(caught.value)


def test_field_mapping_renames_sets_constants_and_makes_ids(tmp_path):
    source = gpd.GeoDataFrame(
        {"ATTRIBUTE": ["PFO1A", "PEM1C"], "WETLAND_TYPE": ["Forested", "Emergent"]},
        geometry=[square(0), square(1)],
        crs="EPSG:2260",
    )
    write_geopackage(tmp_path / "nwi.gpkg", {"nwi": source})
    candidate = read_candidate("wetlands", tmp_path / "nwi.gpkg", mapping=SOURCES / "nwi_mapping.toml")
    frame = candidate.frame
    assert frame.wetland_class.tolist() == ["PFO1A", "PEM1C"]
    assert frame.source.tolist() == ["NWI", "NWI"] and frame.regulated.tolist() == [0, 0]
    assert frame.wetland_id.str.match(r"^NWI-\d+$").all() and frame.wetland_id.is_unique
    assert frame.adjacent_area_ft.isna().all()


def test_a_mapping_naming_a_missing_source_field_is_refused(tmp_path):
    mapping = tmp_path / "m.toml"
    mapping.write_text('[fields]\nwetland_class = "NO_SUCH"\n', encoding="utf-8")
    with pytest.raises(InputError, match="NO_SUCH"):
        read_candidate("wetlands", wetlands(tmp_path / "w.gpkg", [square()]), mapping=mapping)


def test_wbd_huc12_with_the_shipped_mapping():
    candidate = read_candidate("catchments", SOURCES / "wbd_huc12.gpkg", mapping=SOURCES / "wbd_mapping.toml")
    assert candidate.frame[["catchment_id", "drains_to"]].values.tolist() == [
        ["020200060101", "020200060103"],
        ["020200060102", "020200060103"],
    ]


def test_real_nwi_polygons_with_the_shipped_mapping(tmp_path):
    with zipfile.ZipFile(shared_path("data/nwi_dc_wetlands.zip")) as archive:
        archive.extractall(tmp_path)
    shapefile = tmp_path / "DC_shapefile_wetlands" / "DC_Wetlands.shp"
    candidate = read_candidate("wetlands", shapefile, mapping=SOURCES / "nwi_mapping.toml")
    assert len(candidate.frame) == 1556
    # PROVENANCE.md: exactly one polygon is invalid (NWI-1554, a self-intersecting ring) as GDAL
    # up to 3.10 reads the shapefile; GDAL 3.13 (Debian testing, beside QGIS 3.44) organises its
    # rings into a valid multipolygon. What is repaired is what this GDAL reads invalid.
    as_read = gpd.read_file(shapefile)
    invalid = list(as_read.index[~as_read.geometry.is_valid])
    assert invalid in ([1554], [])
    assert len(candidate.report.repaired) == len(invalid)
    assert candidate.frame.geometry.is_valid.all()
    assert candidate.frame.crs.to_epsg() is None or candidate.frame.crs.is_projected


def test_real_ny_tmdl_actions_join_to_watersheds_and_fold_pollutant_names():
    actions = shared_path("data/attains/ny_21NYDECA_tmdl_actions.json")
    candidate = read_candidate(
        "tmdl_watersheds", actions, "attains", geometry=SOURCES / "tmdl_watersheds.gpkg", synonyms=SYNONYMS
    )
    frame = candidate.frame.set_index("watershed_id")
    assert sorted(frame.index) == ["NY0905-0022", "NY1201-0003", "NY1301-0035"]
    # What the real response says about one unit, read independently of the importer.
    data = json.loads(actions.read_text(encoding="utf-8"))
    named = [
        (a["actionIdentifier"], p["pollutantName"], p.get("pollutantSourceTypeCode"))
        for a in data["items"][0]["actions"]
        for w in a["associatedWaters"]["specificWaters"]
        if w["assessmentUnitIdentifier"] == "NY1201-0003"
        for p in w["associatedPollutants"]
    ]
    assert frame.at["NY1201-0003", "tmdl_id"].split(";") == list(dict.fromkeys(a for a, _, _ in named))
    # Each TMDL's date (issue 35, item 6): its action's completionDate, in tmdl_id's order.
    completed = {a["actionIdentifier"]: a["completionDate"][:10] for a in data["items"][0]["actions"]}
    ids = frame.at["NY1201-0003", "tmdl_id"].split(";")
    assert frame.at["NY1201-0003", "tmdl_date"].split(";") == [completed[a] for a in ids]
    expected = {SYNONYMS.get(p, p) for _, p, _ in named}
    assert set(frame.at["NY1201-0003", "pollutants"].split(";")) == expected
    point = any(t in ("Point source", "Both") for _, _, t in named)
    # "Nonpoint source" alone says nothing of stormwater: unknown (NULL), never 0.
    assert frame.at["NY1201-0003", "stormwater_source"] == (1 if point else None)
    everything = ";".join(frame.pollutants)
    assert "PHOSPHORUS, TOTAL" not in everything and "SULFATES" not in everything
    # 321 of the 324 units named by the actions have no geometry in the file: rejected, listed.
    assert len(candidate.report.rejected) == 321


def test_the_real_pwl_table_has_no_causes_and_its_waters_are_listed_without_causes():
    table = shared_path("data/nysdec_pwl_estuaries_2023.csv")
    candidate = read_candidate("impaired_waters", table, "pwl")
    assert len(candidate.frame) == 234 and candidate.frame.pollutants.isna().all()
    assert any("no causes column" in note for note in candidate.report.notes)


def test_attains_assessments_list_only_waters_with_a_cause():
    real = shared_path("data/attains/sd_SDDENR_assessments.json")
    # No geometry for South Dakota's units: listed waters are kept without it (issue 34, item 5)
    dakota = read_candidate(
        "impaired_waters",
        real,
        "attains",
        geometry=SOURCES / "waters.gpkg",
        mapping=SOURCES / "pwl_geometry_mapping.toml",
    )
    assert len(dakota.frame) and dakota.frame.geometry.isna().all()
    assert any("kept without geometry" in note for note in dakota.report.notes)
    candidate = read_candidate(
        "impaired_waters",
        SOURCES / "attains_assessments_2024.json",
        "attains",
        geometry=SOURCES / "waters.gpkg",
        mapping=SOURCES / "pwl_geometry_mapping.toml",
        synonyms=SYNONYMS,
    )
    assert sorted(candidate.frame.waterbody_id) == ["NY1301-0099", "NY1301-0200"]
    assert (
        "NY1301-0123",
        "category 2 is not impaired (the rules profile's [categories] not_impaired: 1, 2, 3)",
    ) in candidate.report.skipped


@pytest.mark.parametrize(
    "text, expected",
    [
        ("PHOSPHORUS, TOTAL", "PHOSPHORUS"),
        ("Phosphorus;phosphorus,  total", "PHOSPHORUS"),
        ("SULFATES;SULFATE;Mercury", "MERCURY;SULFATE"),
        ("", None),
        (None, None),
    ],
)
def test_pollutant_names_are_folded(text, expected):
    assert normalize_pollutants(text, SYNONYMS) == expected


def test_a_layer_that_is_not_a_reference_layer_is_refused(tmp_path):
    with pytest.raises(InputError, match="not a reference layer"):
        read_candidate("roads", wetlands(tmp_path / "w.gpkg", [square()]))


@pytest.mark.parametrize("given", [None, "", "  "])
def test_a_blank_source_date_is_the_date_the_file_states(tmp_path, given):
    """Blank text (a QGIS field holding a space) is no date given: the date the file states
    (a GeoPackage layer's last_change) is used, never the file's modification time."""
    import sqlite3
    from contextlib import closing

    from analysis.reference.operations import import_reference

    source = wetlands(tmp_path / "src.gpkg", [square()])
    with closing(sqlite3.connect(source)) as con:
        con.execute("UPDATE gpkg_contents SET last_change = '2021-05-06T00:00:00Z'")
        con.commit()
    done = import_reference("wetlands", source, tmp_path / "ref.gpkg", source_date=given)
    assert done["version"]["source_date"] == "2021-05-06"
    assert done["version"]["source_date_from"] == "gpkg_contents.last_change"
    dated = import_reference(
        "wetlands",
        wetlands(tmp_path / "b.gpkg", [square(1)]),
        tmp_path / "ref2.gpkg",
        source_date="2026-01-02",
    )
    assert dated["version"]["source_date"] == "2026-01-02"
