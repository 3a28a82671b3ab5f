"""One category vocabulary (the profile's [categories]) read by the importer, the review and the screen.

SWPPP C(1), Condition A: "stormwater runoff from land development activities discharging a
pollutant of concern to either an impaired water identified on the Department's 303(d) list of
impaired waters or a total maximum daily load (TMDL) designated watershed ...". EPA's
Integrated Report categories 5, 5M, 5R and 5-alt are all on the 303(d) list: a water of any of
them, in any spelling ATTAINS or a state uses, is imported, and decides Condition A as a
listed water in the review and the screen, from a GeoPackage store and a PostGIS one alike.
"""

from __future__ import annotations

import json

import geopandas as gpd
import pandas as pd
import pytest
from shapely import LineString, Point, box

from analysis.cli import main
from analysis.errors import InputError
from analysis.profile import load_profile, profile_from, read_toml
from analysis.reference.categories import CATEGORY_WORDS, LISTED, UNDECIDED, category_kind
from analysis.reference.importer import read_candidate
from analysis.screen.screen import APPLIES
from tests.analysis.conftest import X0, Y0
from tests.conftest import TEST_DATA

DEMO_REFERENCE = TEST_DATA / "demo_reference.gpkg"
PROFILE = load_profile()
# The waters of the subcategories of 5, each as ATTAINS may spell its epaIRCategory, with the
# catchment (far north of the demo's TMDL watershed and wetlands) that drains to it.
LISTED_WATERS = {"NYC-5M": "5M", "NYC-5ALT": "5-ALT", "NYC-5R": "5R"}


def catchment_box(k: int):
    return box(X0 + 3000 * k, Y0 + 30_000, X0 + 3000 * k + 2500, Y0 + 32_500)


def site_box(k: int):
    """About 4 acres in the middle of catchment ``k``."""
    x, y = X0 + 3000 * k + 1250, Y0 + 31_250
    return box(x - 200, y - 200, x + 200, y + 200)


@pytest.mark.parametrize(
    "spelling, kind",
    [
        ("5", LISTED),
        ("5M", LISTED),
        ("5m", LISTED),
        ("5-alt", LISTED),
        ("5alt", LISTED),
        ("5 ALT", LISTED),
        ("5R", LISTED),
        ("5a", LISTED),
        ("4A", "tmdl"),
        ("4a", "tmdl"),
        ("4B", "4b"),
        ("4-c", "4c"),
        ("1", "other"),
        ("2", "other"),
        ("3", "other"),
        (None, "unknown"),
        ("", "unknown"),
        ("6", "unrecognised"),
    ],
)
def test_each_spelling_is_one_kind(spelling, kind):
    assert category_kind(spelling, PROFILE) == kind
    assert kind in CATEGORY_WORDS or kind == LISTED
    assert (kind in UNDECIDED) == (kind in ("unknown", "tmdl", "unrecognised"))


def test_the_profile_refuses_a_category_of_two_kinds(tmp_path):
    data = read_toml(PROFILE.source, "rules profile")
    data["categories"]["tmdl"] = ["4a", "5-Alt"]
    with pytest.raises(InputError, match=r"\[categories\].*'5-Alt' is in both listed and tmdl"):
        profile_from(data, "test.toml")


def attains(path, units):
    """An ATTAINS ``assessments`` response: ``units`` are (id, epaIRCategory, causes)."""
    path.write_text(
        json.dumps(
            {
                "items": [
                    {
                        "organizationIdentifier": "21NYDECA",
                        "reportingCycleText": "2024",
                        "assessments": [
                            {
                                "assessmentUnitIdentifier": unit,
                                "epaIRCategory": category,
                                "parameters": [
                                    {
                                        "parameterStatusName": "Cause",
                                        "parameterName": c,
                                        "associatedActions": [],
                                    }
                                    for c in causes
                                ],
                            }
                            for unit, category, causes in units
                        ],
                    }
                ],
                "count": 1,
            }
        ),
        encoding="utf-8",
    )
    return path


def water_lines(path, ids):
    """The waters' geometries (a line across each one's catchment), joined by id at import."""
    lines = [
        LineString([(X0 + 3000 * k, Y0 + 31_000), (X0 + 3000 * k + 2500, Y0 + 31_000)])
        for k in range(len(ids))
    ]
    gpd.GeoDataFrame({"waterbody_id": list(ids)}, geometry=lines, crs="EPSG:2260").to_file(
        path, layer="waters", driver="GPKG"
    )
    return path


@pytest.fixture
def assessments(tmp_path):
    """An ATTAINS response of the three listed waters, one 4A water, and waters of category
    1, 2 and 3 (not impaired), with their geometry file."""
    units = [(wid, category, ["PHOSPHORUS"]) for wid, category in LISTED_WATERS.items()]
    units += [
        ("NYC-4A", "4A", ["PHOSPHORUS"]),
        ("NYC-1", "1", []),
        ("NYC-2", "2", []),
        ("NYC-3", "3", ["MERCURY"]),
    ]
    return (
        attains(tmp_path / "assessments.json", units),
        water_lines(tmp_path / "waters.gpkg", [u[0] for u in units]),
    )


def test_5m_5alt_5r_waters_are_imported_from_attains_and_not_impaired_ones_skipped(assessments):
    source, geometry = assessments
    candidate = read_candidate("impaired_waters", source, "attains", geometry=geometry)
    stored = dict(zip(candidate.frame.waterbody_id, candidate.frame.category))
    assert stored == {"NYC-5M": "5m", "NYC-5ALT": "5-alt", "NYC-5R": "5r", "NYC-4A": "4a"}
    assert all(category_kind(stored[w], PROFILE) == LISTED for w in LISTED_WATERS)
    assert sorted(candidate.report.skipped) == [
        (w, f"category {w[-1]} is not impaired (the rules profile's [categories] not_impaired: 1, 2, 3)")
        for w in ("NYC-1", "NYC-2", "NYC-3")
    ]


def test_an_unknown_category_is_refused_by_name(tmp_path):
    source = attains(tmp_path / "a.json", [("NYC-5M", "5M", ["PHOSPHORUS"]), ("NYC-X", "5X", ["PHOSPHORUS"])])
    with pytest.raises(InputError) as raised:
        read_candidate("impaired_waters", source, "attains")
    message = str(raised.value)
    for words in (
        str(source),
        "NYC-X",
        "'5X'",
        "epaIRCategory",
        "add the spelling '5X' to the list of its kind in the profile's [categories]",
    ):
        assert words in message, message


def test_an_ogr_layers_category_is_read_through_the_vocabulary(tmp_path):
    """A state's own layer (any OGR source): its spellings folded as ATTAINS's are, a water
    of category 2 skipped (reported), one of a category the profile does not name refused."""
    rows = [("NYC-5M", "5 M"), ("NYC-5ALT", "5 Alt"), ("NYC-5R", "5r"), ("NYC-2", "2")]
    frame = gpd.GeoDataFrame(
        {
            "waterbody_id": [r[0] for r in rows],
            "name": "x",
            "pollutants": "PHOSPHORUS",
            "listing_cycle": "2024",
            "category": [r[1] for r in rows],
        },
        geometry=[catchment_box(k).boundary for k in range(len(rows))],
        crs="EPSG:2260",
    )
    frame.to_file(tmp_path / "w.gpkg", layer="impaired_waters", driver="GPKG")
    candidate = read_candidate("impaired_waters", tmp_path / "w.gpkg")
    assert {
        w: category_kind(c, PROFILE) for w, c in zip(candidate.frame.waterbody_id, candidate.frame.category)
    } == dict.fromkeys(LISTED_WATERS, LISTED)
    assert [label for label, _ in candidate.report.skipped] == ["NYC-2"]
    frame.loc[3, "category"] = "7"
    frame.to_file(tmp_path / "bad.gpkg", layer="impaired_waters", driver="GPKG")
    with pytest.raises(
        InputError,
        match=r"layer 'impaired_waters', feature NYC-2, field "
        r"'category': water NYC-2 has category '7'",
    ):
        read_candidate("impaired_waters", tmp_path / "bad.gpkg")


def reference_layers(folder):
    """The demo reference's wetlands and TMDL watershed, its catchments and one more per
    listed water, draining to it (beyond every TMDL watershed and wetland)."""
    demo = gpd.read_file(DEMO_REFERENCE, layer="catchments")
    added = gpd.GeoDataFrame(
        {
            "catchment_id": [f"0202000609{k}" for k in range(3)],
            "name": [f"Category {c}" for c in LISTED_WATERS.values()],
            "drains_to": list(LISTED_WATERS),
        },
        geometry=[catchment_box(k) for k in range(3)],
        crs=demo.crs,
    )
    path = folder / "layers.gpkg"
    pd.concat([demo, added], ignore_index=True).to_file(path, layer="catchments", driver="GPKG")
    for layer in ("wetlands", "tmdl_watersheds"):
        gpd.read_file(DEMO_REFERENCE, layer=layer).to_file(path, layer=layer, driver="GPKG")
    return path


def candidates(folder, assessments):
    layers = reference_layers(folder)
    source, geometry = assessments
    out = [
        read_candidate(layer, f"{layers}|layername={layer}")
        for layer in ("wetlands", "tmdl_watersheds", "catchments")
    ]
    return out + [read_candidate("impaired_waters", source, "attains", geometry=geometry)]


def sites_file(folder):
    path = folder / "sites.gpkg"
    gpd.GeoDataFrame(
        {"site_id": list(LISTED_WATERS)}, geometry=[site_box(k) for k in range(3)], crs="EPSG:2260"
    ).to_file(path, layer="parcels", driver="GPKG")
    return path


def review_condition_a(make_site, k, reference, folder, capsys):
    """``swppp review`` of a plan disturbing :func:`site_box` ``k``: its Condition A."""
    plan = make_site([site_box(k)], filename=f"site{k}.gpkg", boundary=site_box(k).buffer(50))
    out = folder / f"review{k}.json"
    assert main(["review", str(plan), "--reference", reference, "--json", str(out)]) in (0, 1)
    capsys.readouterr()
    return json.loads(out.read_text(encoding="utf-8"))


def screen_rows(reference, folder, capsys):
    out = folder / "screen.csv"
    assert (
        main(["screen", str(sites_file(folder)), "--reference", reference, "--output", str(out), "--quiet"])
        == 0
    )
    capsys.readouterr()
    return pd.read_csv(out, dtype=str).set_index("site_id").to_dict("index")


def assert_listed(make_site, reference, folder, capsys):
    rows = screen_rows(reference, folder, capsys)
    for k, (water, category) in enumerate(LISTED_WATERS.items()):
        result = review_condition_a(make_site, k, reference, folder, capsys)
        a = result["conditions"]["A"]
        assert a["applies"] is True, (water, a)
        assert any(
            f"{water} (no name) is 303(d)-listed (listing cycle 2024, category {category.lower()})" in line
            for line in a["evidence"]
        ), a
        assert any(
            f["rule"] == "condition_a" and f["message"].startswith("Condition A applies")
            for f in result["findings"]
        )
        assert rows[water]["condition_a"] == APPLIES, (water, rows[water])
        assert rows[water]["listed_waters"] == water and rows[water]["receiving_waters"] == water


def test_listed_subcategories_decide_condition_a_from_a_geopackage_store(
    make_site, assessments, tmp_path, capsys
):
    from analysis.reference.store import GeoPackageStore

    store = GeoPackageStore(tmp_path / "store.gpkg")
    for candidate in candidates(tmp_path, assessments):
        store.import_candidate(candidate)
    assert_listed(make_site, str(store.path), tmp_path, capsys)


def test_listed_subcategories_decide_condition_a_from_a_postgis_store(
    make_site, assessments, pg_schema, tmp_path, capsys
):
    from analysis.reference.postgis import PostgisStore

    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    for candidate in candidates(tmp_path, assessments):
        store.import_candidate(candidate)
    assert_listed(make_site, f"{conninfo} schema={schema}", tmp_path, capsys)


@pytest.mark.parametrize(
    "category, applies, words",
    [
        ("5-ALT", True, "is 303(d)-listed"),
        ("5 m", True, "is 303(d)-listed"),
        (
            "6",
            None,
            "needs_review: Condition A not decided: NY-B Brook is impaired (listing cycle "
            "2022, category 6) for Phosphorus; it receives the discharge (discharge_point:"
            f"NY-B): {CATEGORY_WORDS['unrecognised']}",
        ),
    ],
)
def test_a_layer_made_by_hand_is_read_through_the_vocabulary(
    make_site, make_reference, tmp_path, capsys, category, applies, words
):
    """A reference GeoPackage made by hand (no import to refuse its spellings): a 5-alt or 5M
    water in any spelling decides Condition A in the review; a category the profile does not
    name leaves it not decided, saying so (SWPPP C(1): "identified on the Department's 303(d)
    list")."""
    brook = LineString([(X0 - 5000, Y0 + 900), (X0 + 5000, Y0 + 900)])
    reference = make_reference(
        impaired_waters=[
            (
                brook,
                {
                    "waterbody_id": "NY-B",
                    "name": "Brook",
                    "pollutants": "Phosphorus",
                    "listing_cycle": "2022",
                    "category": category,
                },
            )
        ]
    )
    plan = make_site(
        [box(X0 - 150, Y0, X0 + 150, Y0 + 300)],  # 2 acres
        discharge_points=[(Point(X0 + 50, Y0 + 350), "Brook", "NY-B")],
    )
    out = tmp_path / "review.json"
    assert main(["review", str(plan), "--reference", str(reference), "--json", str(out)]) in (0, 1)
    capsys.readouterr()
    result = json.loads(out.read_text(encoding="utf-8"))
    a = result["conditions"]["A"]
    assert (a["applies"] if a.get("decided", True) else None) is applies, a
    messages = " ".join(
        f"{f['status']}: {f['message']}" for f in result["findings"] if f["rule"] == "condition_a"
    )
    assert words in messages, messages
