"""``swppp screen``: many sites at once, each decided as ``swppp review`` decides it (issue 23)."""

import csv
import json
from dataclasses import replace
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from analysis.cli.app import main
from analysis.crs import crs_of
from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.reference.categories import CATEGORY_WORDS, category_kind
from analysis.reference.read import open_reference
from analysis.review import review_site
from analysis.screen.screen import APPLIES, DOES_NOT_APPLY, NOT_DECIDED, screen_sites
from analysis.screen.sites import read_sites
from analysis.siteplan.plan import SitePlan

DEMO_REFERENCE = Path(__file__).resolve().parents[2] / "test_data" / "demo_reference.gpkg"

ACRE_FT2 = 43560.0


def random_sites(reference_path, count, seed):
    """``count`` rectangles of 0.5 to 12 acres, some turned, over the reference's extent (and a
    margin beyond it), in the reference's CRS: sites in and out of every layer."""
    rng = np.random.default_rng(seed)
    frames = [
        gpd.read_file(reference_path, layer=name) for name in ("catchments", "tmdl_watersheds", "wetlands")
    ]
    bounds = np.array([f.total_bounds for f in frames])
    minx, miny = bounds[:, :2].min(axis=0) - 1500
    maxx, maxy = bounds[:, 2:].max(axis=0) + 1500
    # Half of the sites centred on a wetland's edge or a catchment's: they cut the polygons.
    edges = np.concatenate([shapely.get_coordinates(f.geometry.boundary.values) for f in frames])
    shapes = []
    for k in range(count):
        area = rng.uniform(0.5, 12.0) * ACRE_FT2
        ratio = rng.uniform(0.4, 2.5)
        w, h = np.sqrt(area * ratio), np.sqrt(area / ratio)
        cx, cy = (
            edges[rng.integers(len(edges))] + rng.normal(0, 60, 2)
            if k % 2
            else (rng.uniform(minx, maxx), rng.uniform(miny, maxy))
        )
        box = shapely.box(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
        shapes.append(shapely.affinity.rotate(box, rng.uniform(0, 90)) if k % 3 == 0 else box)
    return gpd.GeoDataFrame(
        {"site_id": [f"S{k:03d}" for k in range(count)]}, geometry=shapes, crs=frames[0].crs
    )


def review_of(geometry, profile, reference):
    """``swppp review``'s Condition A and wetland measurements for a site plan whose boundary
    and disturbance are the site's polygon (no discharge points: the catchments decide)."""
    review = site_review(geometry, profile, reference)
    return review.conditions["A"], review.measurements


def site_review(geometry, profile, reference):
    """The review (Condition A and wetlands) of :func:`review_of`'s site plan."""
    frame = gpd.GeoDataFrame({"disturbance_id": ["D1"]}, geometry=[geometry], crs=crs_of(profile.area_crs))
    site = SitePlan(
        path="screen-site",
        area_crs=crs_of(profile.area_crs),
        input_crs="",
        project={"name": "screen"},
        layers={"site_boundary": frame.rename(columns={"disturbance_id": "site_id"}), "disturbance": frame},
    )
    return review_site(site, profile, reference=reference, rules=["condition_a", "wetlands"])


def varied_reference(path):
    """The demo reference with every answer reachable: Example Brook's catchment drains to a
    water that is not listed, a third catchment names no water, and whether stormwater is a
    source of the TMDL watershed's impairment is not recorded."""
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        frame = gpd.read_file(DEMO_REFERENCE, layer=layer)
        if layer == "catchments":
            frame.loc[1, "drains_to"] = "NY9999-0001"
            extra = frame.iloc[[1]].copy()
            extra["catchment_id"], extra["drains_to"] = "020200060103", None
            extra["geometry"] = extra.geometry.translate(0, 7000)
            frame = gpd.GeoDataFrame(pd.concat([frame, extra], ignore_index=True), crs=frame.crs)
        if layer == "tmdl_watersheds":
            frame["stormwater_source"] = None
        frame.to_file(path, layer=layer, driver="GPKG")
    return path


def routed_reference(path):
    """The demo reference with catchments upstream of its two, each draining into another by
    its catchment_id (WBD ``tohuc``): 0201 -> 0202 -> 0102 (Example Brook's, in TMDL watershed
    TW-1, stormwater a source; it names NY9999-0001, on no list); 0203 -> 0101 (which drains to
    NY1301-0099, 303(d)-listed); 0204 -> 0202 and water NY9999-0002; 0205 -> 0201, which lies
    far from it (its shape is not found next to 0205); 0207 -> 0206 -> 0204 -> 0202 -> 0102:
    one hop more than the profile's 3."""
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        frame = gpd.read_file(DEMO_REFERENCE, layer=layer)
        if layer == "catchments":
            frame.loc[1, "drains_to"] = "NY9999-0001"
            added = []
            for number, (base, dx, dy, drains_to) in {
                "0201": (0, 0, 7000, "020200060202"),
                "0202": (1, 0, 7000, "020200060102"),
                "0203": (0, -5900, 0, "020200060101"),
                "0204": (1, 0, 14000, " 020200060202; NY9999-0002"),
                "0205": (0, 0, 21000, "020200060201"),
                "0206": (1, 0, 21000, "020200060204"),
                "0207": (1, 0, 28000, "020200060206"),
            }.items():
                extra = frame.iloc[[base]].copy()
                extra["catchment_id"], extra["drains_to"] = f"02020006{number}", drains_to
                extra["name"] = f"Upland {number}"
                extra["geometry"] = extra.geometry.translate(dx, dy)
                added.append(extra)
            frame = gpd.GeoDataFrame(pd.concat([frame, *added], ignore_index=True), crs=frame.crs)
        frame.to_file(path, layer=layer, driver="GPKG")
    return path


# Each receiving water's Integrated Report category, and what it makes of Condition A for a
# site draining only to it, outside every TMDL watershed (SWPPP C(1): only a 303(d)-listed
# water, category 5, takes the first branch; 4a the TMDL branch, which the reference does not
# decide for a water; 4b and 4c neither; no category: confirm it).
CATEGORY_WATERS = {
    "NY1301-0123": ("4a", NOT_DECIDED),
    "NYC-4B": ("4b", DOES_NOT_APPLY),
    "NYC-4C": ("4C", DOES_NOT_APPLY),
    "NYC-NONE": (None, NOT_DECIDED),
    "NYC-5A": ("5A", APPLIES),
}


def categories_reference(path):
    """The demo reference (NY1301-0099 category 5; Example Brook NY1301-0123 category 4a,
    mostly inside TMDL watershed TW-1) with five catchments beyond TW-1, each draining to one
    water of ``CATEGORY_WATERS``: Example Brook again, and waters of category 4b, 4c, none and
    5A (a subcategory of 5), each impaired for phosphorus."""
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        frame = gpd.read_file(DEMO_REFERENCE, layer=layer)
        if layer == "catchments":
            added = []
            for k, water in enumerate(CATEGORY_WATERS):
                extra = frame.iloc[[k % 2]].copy()
                extra["catchment_id"], extra["drains_to"] = f"0202000601{11 + k}", water
                extra["name"] = f"Category {water}"
                extra["geometry"] = extra.geometry.translate(0, 7000 * (1 + k // 2))
                added.append(extra)
            frame = gpd.GeoDataFrame(pd.concat([frame, *added], ignore_index=True), crs=frame.crs)
        if layer == "impaired_waters":
            added = []
            for k, (water, (category, _)) in enumerate(CATEGORY_WATERS.items()):
                if water in set(frame["waterbody_id"]):
                    continue
                extra = frame.iloc[[1]].copy()
                extra["waterbody_id"], extra["name"] = water, f"Category {category} water"
                extra["category"], extra["pollutants"] = category, "Phosphorus"
                extra["geometry"] = extra.geometry.translate(0, 7000 * (1 + k // 2))
                added.append(extra)
            frame = gpd.GeoDataFrame(pd.concat([frame, *added], ignore_index=True), crs=frame.crs)
        frame.to_file(path, layer=layer, driver="GPKG")
    return path


def stored(reference, folder):
    """A GeoPackage store in ``folder`` holding version 1 of each of ``reference``'s layers."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.store import GeoPackageStore
    from analysis.screen.since import LAYERS

    store = GeoPackageStore(folder / "store.gpkg")
    for layer in LAYERS:
        store.import_candidate(read_candidate(layer, f"{reference}|layername={layer}"))
    return store


def newly_listed(reference, folder):
    """Version 2 of ``reference``'s 303(d) list in ``folder``: version 1 and NY9999-0001, the
    water Example Brook's catchment drains to (copied from Example Brook's row, category 4a,
    but on the 303(d) list: category 5)."""
    waters = gpd.read_file(reference, layer="impaired_waters")
    added = waters.iloc[[1]].copy()
    added["waterbody_id"], added["pollutants"], added["category"] = "NY9999-0001", "Phosphorus", "5"
    listed = folder / "listed_v2.gpkg"
    gpd.GeoDataFrame(pd.concat([waters, added], ignore_index=True), crs=waters.crs).to_file(
        listed, layer="impaired_waters", driver="GPKG"
    )
    return listed


def _sites_file(folder, reference, count, seed):
    """``count`` random sites around ``reference`` (layer ``parcels``) in ``folder``."""
    path = folder / "sites.gpkg"
    random_sites(reference, count, seed=seed).to_file(path, layer="parcels", driver="GPKG")
    return path


# Issue 33, item 4: routes that only graze a TMDL watershed (SWPPP C(1): runoff "discharging
# ... to ... a TMDL designated watershed" goes where the downstream catchment drains). Per row
# (30,000 ft apart in y): the site's own catchment S drains into Y; Y touches the watershed GW
# (x >= 1000 ft) by a 20-ft strip (3.8% of it) and drains into ``drains`` (Z: north of it,
# outside GW; IN: inside GW; or a water), or Y lies mostly inside GW; and the answer expected.
GRAZES = {
    "G-OUT": (1020, "Z", DOES_NOT_APPLY),
    "G-WATER": (1020, "NY-Q", NOT_DECIDED),
    "G-IN": (1020, "IN", APPLIES),
    "G-MOST": (3000, "NY-M", APPLIES),
}


def grazed_reference(path):
    """The GRAZES layout (EPSG:2260, feet east/north of the village's X0, Y0)."""
    from tests.analysis.conftest import local_box

    catchments, sites = [], []
    for k, (site_id, (east, drains, _)) in enumerate(GRAZES.items()):
        dy = 30000 * k
        catchments += [
            (local_box(-500, -500 + dy, 500, 500 + dy), f"S{k}", f"Y{k}"),
            (
                local_box(500, -500 + dy, east, 500 + dy),
                f"Y{k}",
                {"Z": f"Z{k}", "IN": f"IN{k}"}.get(drains, drains),
            ),
            (local_box(500, 500 + dy, 1000, 1500 + dy), f"Z{k}", "NY-OUT"),
            (local_box(east, -500 + dy, 2000, 500 + dy), f"IN{k}", "NY-IN"),
        ]
        sites.append((site_id, local_box(-100, dy, 100, 100 + dy)))
    crs = "EPSG:2260"
    gpd.GeoDataFrame(
        {
            "catchment_id": [c for _, c, _ in catchments],
            "name": [None] * len(catchments),
            "drains_to": [d for _, _, d in catchments],
        },
        geometry=[g for g, _, _ in catchments],
        crs=crs,
    ).to_file(path, layer="catchments", driver="GPKG")
    gpd.GeoDataFrame(
        {
            "watershed_id": ["GW"],
            "name": ["Grazed"],
            "pollutants": ["Phosphorus"],
            "tmdl_id": ["T-GW"],
            "stormwater_source": [1],
        },
        geometry=[local_box(1000, -3000, 4000, 30000 * len(GRAZES))],
        crs=crs,
    ).to_file(path, layer="tmdl_watersheds", driver="GPKG")
    far = local_box(-9000, -9000, -8000, -8000)  # one feature each, met by no site
    gpd.GeoDataFrame(
        {
            "waterbody_id": ["NY-FAR"],
            "name": ["Far"],
            "pollutants": ["Phosphorus"],
            "listing_cycle": ["2022"],
            "category": ["5"],
            "tmdl_id": [None],
        },
        geometry=[far.boundary],
        crs=crs,
    ).to_file(path, layer="impaired_waters", driver="GPKG")
    gpd.GeoDataFrame(
        {
            "wetland_id": ["WF"],
            "source": ["NWI"],
            "wetland_class": ["PEM"],
            "regulated": [0],
            "adjacent_area_ft": [None],
        },
        geometry=[far],
        crs=crs,
    ).to_file(path, layer="wetlands", driver="GPKG")
    sites_path = path.with_name("sites.gpkg")
    gpd.GeoDataFrame({"site_id": [i for i, _ in sites]}, geometry=[g for _, g in sites], crs=crs).to_file(
        sites_path, layer="parcels", driver="GPKG"
    )
    return path


@pytest.fixture(scope="module")
def grazed_file(tmp_path_factory):
    return grazed_reference(tmp_path_factory.mktemp("grazed") / "reference.gpkg")


@pytest.fixture(scope="module")
def grazed_sites(grazed_file):
    return grazed_file.with_name("sites.gpkg")


def test_a_route_that_only_grazes_a_watershed_is_decided_where_it_drains(grazed_file, grazed_sites):
    """The screen decides each GRAZES row as expected, and as the review of the same site."""
    profile = load_profile()
    reference = open_reference(grazed_file)
    sites = read_sites(grazed_sites, profile.area_crs)
    rows = screen_sites(sites, reference, profile).by_site()
    assert {k: r["condition_a"] for k, r in rows.items()} == {
        k: expected for k, (_, _, expected) in GRAZES.items()
    }
    assert (
        "catchment Y0, 3.8% (0.46 acres) of it inside it: less than [condition_a] "
        "routed_watershed_min_share_percent" in rows["G-OUT"]["why"]
    ), rows["G-OUT"]["why"]
    assert "where it drains is not known" in rows["G-WATER"]["why"]
    for site_id, geometry in zip(sites.ids, sites.geometries):
        a, _ = review_of(geometry, profile, reference)
        status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
        assert rows[site_id]["condition_a"] == status, (site_id, rows[site_id]["why"], a)


@pytest.fixture(scope="module")
def categories_file(tmp_path_factory):
    return categories_reference(tmp_path_factory.mktemp("categories") / "reference.gpkg")


@pytest.fixture(scope="module")
def categories_sites(tmp_path_factory, categories_file):
    return _sites_file(tmp_path_factory.mktemp("categories"), categories_file, 80, 5)


@pytest.fixture(scope="module")
def routed_file(tmp_path_factory):
    return routed_reference(tmp_path_factory.mktemp("routed") / "reference.gpkg")


@pytest.fixture(scope="module")
def routed_sites(tmp_path_factory, routed_file):
    return _sites_file(tmp_path_factory.mktemp("routed"), routed_file, 120, 17)


@pytest.fixture(scope="module")
def two_tmdl_file(tmp_path_factory):
    return two_tmdl_reference(tmp_path_factory.mktemp("two_tmdl") / "reference.gpkg")


@pytest.fixture(scope="module")
def nested_tmdl_file(tmp_path_factory):
    return two_tmdl_reference(tmp_path_factory.mktemp("nested_tmdl") / "reference.gpkg", "TW-1P")


@pytest.fixture(scope="module")
def reference_file(tmp_path_factory):
    return varied_reference(tmp_path_factory.mktemp("screen") / "reference.gpkg")


@pytest.fixture(scope="module")
def sites_file(tmp_path_factory, reference_file):
    return _sites_file(tmp_path_factory.mktemp("screen"), reference_file, 100, 23)


@pytest.fixture(scope="module")
def screened(sites_file, reference_file):
    profile = load_profile()
    sites = read_sites(sites_file, profile.area_crs)
    return sites, screen_sites(sites, open_reference(reference_file), profile)


def test_each_site_is_decided_as_its_review(screened, reference_file):
    profile = load_profile()
    reference = open_reference(reference_file)
    sites, screen = screened
    rows = screen.by_site()
    seen = set()
    for site_id, geometry in zip(sites.ids, sites.geometries):
        a, measured = review_of(geometry, profile, reference)
        row = rows[site_id]
        status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
        assert row["condition_a"] == status, (site_id, row["why"], a)
        assert row["wetland_acres"] == pytest.approx(measured["wetland_acres"], abs=1e-9)
        assert row["adjacent_area_acres"] == pytest.approx(measured["wetland_adjacent_area_acres"], abs=1e-9)
        seen.add((status, row["wetland_status"]))
    # The random sites reach every answer: the comparison above is not of empty screens.
    assert {s for s, _ in seen} == {APPLIES, NOT_DECIDED, DOES_NOT_APPLY}
    assert {w for _, w in seen} == {"wetland", "adjacent area", "none"}


@pytest.mark.parametrize("reading", ["applies", "needs_review"])
def test_each_site_is_decided_as_its_review_downstream(routed_file, routed_sites, reading):
    """Sites whose catchments drain through others (by catchment_id) into a TMDL watershed and
    to a listed water: the screen follows the route as the review does, under either reading
    of ``[condition_a] routed_tmdl_watershed``, and states the route."""
    base = load_profile()
    profile = replace(base, condition_a=replace(base.condition_a, routed_tmdl_watershed=reading))
    reference = open_reference(routed_file)
    sites = read_sites(routed_sites, profile.area_crs)
    rows = screen_sites(sites, open_reference(routed_file), profile).by_site()
    for site_id, geometry in zip(sites.ids, sites.geometries):
        a, _ = review_of(geometry, profile, reference)
        status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
        assert rows[site_id]["condition_a"] == status, (site_id, rows[site_id]["why"], a)
    why = {site_id: row["why"] for site_id, row in rows.items()}
    # Every kind of route is met (the comparison is not of sites that stay in their catchment).
    tw1 = [k for k, w in why.items() if "catchment 020200060102, inside it" in w]
    assert tw1 and all("020200060102" not in rows[k]["receiving_waters"] for k in tw1)
    assert any(
        "020200060203, which drains to catchment 020200060101, which drains to NY1301-0099" in w
        for w in why.values()
    )
    assert any(
        "not followed further ([condition_a] downstream_catchment_hops = 3)" in w for w in why.values()
    )
    assert any("its shape was not found next to the catchment it drains out of" in w for w in why.values())
    assert any("NY9999-0002" in r["receiving_waters"].split(";") for r in rows.values())
    routed_only = [k for k in tw1 if rows[k]["listed_waters"] == "" and "NY1301-0099" not in why[k]]
    assert routed_only
    expected = APPLIES if reading == "applies" else NOT_DECIDED
    assert {rows[k]["condition_a"] for k in routed_only} == {expected}
    if reading == "applies":
        assert all(rows[k]["tmdl_watersheds"] == "TW-1" for k in routed_only)


def two_tmdl_reference(path, other_id="TW-1"):
    """The routed reference (``routed_reference``) whose watershed TW-1 carries two TMDLs, as
    two rows of one shape: one for pathogens, of which stormwater is not a source (written
    first, its id ``other_id``: TW-1 again in a layer not imported, which the import refuses),
    and the phosphorus TMDL of which it is."""
    routed_reference(path)
    sheds = gpd.read_file(path, layer="tmdl_watersheds")
    other = sheds.iloc[[0]].copy()
    other["tmdl_id"], other["pollutants"], other["stormwater_source"] = "TMDL-P2", "Pathogens", 0
    other["watershed_id"] = other_id
    gpd.GeoDataFrame(pd.concat([other, sheds], ignore_index=True), crs=sheds.crs).to_file(
        path, layer="tmdl_watersheds", driver="GPKG"
    )
    return path


@pytest.mark.parametrize("reading", ["applies", "needs_review"])
def test_a_routed_watershed_with_two_tmdls_is_decided_by_each(two_tmdl_file, routed_sites, reading):
    """Each TMDL of a watershed met through the route counts, as in the review: the first row
    (stormwater not a source) does not hide the second (stormwater a source)."""
    path = two_tmdl_file
    base = load_profile()
    profile = replace(base, condition_a=replace(base.condition_a, routed_tmdl_watershed=reading))
    reference = open_reference(path)
    sites = read_sites(routed_sites, profile.area_crs)
    rows = screen_sites(sites, reference, profile).by_site()
    routed_only = [
        k
        for k, r in rows.items()
        if "catchment 020200060102, inside it" in r["why"]
        and r["listed_waters"] == ""
        and "NY1301-0099" not in r["why"]
        and "020200060102" not in r["receiving_waters"]
    ]
    assert routed_only
    for site_id, geometry in zip(sites.ids, sites.geometries):
        if site_id in routed_only:
            a, _ = review_of(geometry, profile, reference)
            status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
            assert rows[site_id]["condition_a"] == status, (site_id, rows[site_id]["why"], a)
    expected = APPLIES if reading == "applies" else NOT_DECIDED
    assert {rows[k]["condition_a"] for k in routed_only} == {expected}


@pytest.mark.parametrize("fixture", ["two_tmdl_file", "nested_tmdl_file"])
def test_tmdl_acres_count_each_acre_once(fixture, request, routed_file, routed_sites):
    """A site in a watershed with two TMDLs (two rows of one shape, of one id or two) holds its
    acres in TMDL watersheds once, as with one: not twice its own area; a watershed is named
    once."""
    profile = load_profile()
    sites = read_sites(routed_sites, profile.area_crs)
    two = screen_sites(sites, open_reference(request.getfixturevalue(fixture)), profile).by_site()
    one = screen_sites(sites, open_reference(routed_file), profile).by_site()
    inside = [k for k, row in one.items() if row["tmdl_acres"] > 0]
    assert inside
    for k in inside:
        assert two[k]["tmdl_acres"] == pytest.approx(one[k]["tmdl_acres"], abs=1e-9), k
        assert two[k]["tmdl_acres"] <= two[k]["site_acres"] + 1e-9, k
        assert two[k]["tmdl_watersheds"] == one[k]["tmdl_watersheds"], k


def test_each_site_is_decided_as_its_review_by_category(categories_file, categories_sites):
    """Waters of category 5A, 4a, 4b, 4c and none: the screen reads each receiving water's
    category as the review does (a 4a water is not "303(d)-listed"), site by site, and says
    what the category makes of C(1)."""
    profile = load_profile()
    reference = open_reference(categories_file)
    sites = read_sites(categories_sites, profile.area_crs)
    rows = screen_sites(sites, open_reference(categories_file), profile).by_site()
    for site_id, geometry in zip(sites.ids, sites.geometries):
        a, _ = review_of(geometry, profile, reference)
        status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
        assert rows[site_id]["condition_a"] == status, (site_id, rows[site_id]["why"], a)
    # Each category decides some site alone (its only water, no TMDL watershed met).
    for water, (category, expected) in CATEGORY_WATERS.items():
        alone = [r for r in rows.values() if r["receiving_waters"] == water and r["tmdl_acres"] == 0]
        assert alone, water
        assert {r["condition_a"] for r in alone} == {expected}, water
        assert all((water in r["listed_waters"]) == (expected == APPLIES) for r in alone)
        if expected != APPLIES:
            kind = category_kind(category, profile)
            assert all(CATEGORY_WORDS[kind] in r["why"] for r in alone), water


def test_the_screen_names_the_water_that_decides(screened):
    _sites, screen = screened
    applies = [r for r in screen.rows if r["condition_a"] == APPLIES]
    assert applies and all(r["listed_waters"] or r["tmdl_watersheds"] for r in applies)
    assert all(r["listed_waters"] in r["why"] or r["tmdl_watersheds"] in r["why"] for r in applies)


def test_the_reference_is_read_by_the_sites_boxes_only(sites_file, tmp_path):
    profile = load_profile()
    sites = read_sites(sites_file, profile.area_crs)
    far = read_sites(sites_file, profile.area_crs)
    far.geometries = shapely.transform(far.geometries, lambda xy: xy + 1e6)
    reference = open_reference(DEMO_REFERENCE)
    screen_sites(far, reference, profile)
    assert sum(reference.features_read.get(k, 0) for k in ("catchments", "wetlands", "tmdl_watersheds")) == 0
    assert len(sites) == 100


@pytest.mark.parametrize("stored_crs", ["EPSG:2260", "EPSG:5070"])
def test_wetlands_are_read_only_to_their_own_reach(tmp_path, stored_crs):
    """A wetland within the 300-ft search distance of a site's box but beyond its own reach
    (its adjacent area; none for one not regulated) is not read; the site's answer is still
    its review's. Kept in Albers too (the NWI's; its grid turned 13 degrees from the site's),
    where the reach is placed by polygons covering the grown boxes (their own boxes would
    hold every one of these wetlands)."""
    profile = load_profile()
    x0, y0, side = 590000.0, 905000.0, 500.0  # a site clear of the demo's own wetlands
    site = shapely.box(x0, y0, x0 + side, y0 + side)
    east, top = x0 + side, y0 + side
    wetlands = [  # (id, regulated, adjacent_area_ft, polygon in EPSG:2260 feet), in reach
        ("A", 1, 100.0, shapely.box(east + 60, y0, east + 200, y0 + 200), True),
        ("B", 1, 100.0, shapely.box(x0 - 300, y0, x0 - 150, y0 + 200), False),
        ("C", 0, None, shapely.box(x0, top + 50, x0 + 100, top + 150), False),
        ("D", 0, None, shapely.box(x0 + 100, y0 + 100, x0 + 200, y0 + 200), True),
        ("E", 1, 250.0, shapely.box(x0, y0 - 400, x0 + 100, y0 - 200), True),
        ("F", 1, None, shapely.box(east + 120, y0 + 300, east + 220, y0 + 400), False),
        # an L whose envelope holds the site, its ground 220 ft away at the nearest
        (
            "G",
            1,
            100.0,
            shapely.Polygon(
                [
                    (x0, top + 220),
                    (east + 220, top + 220),
                    (east + 220, y0),
                    (east + 280, y0),
                    (east + 280, top + 280),
                    (x0, top + 280),
                ]
            ),
            False,
        ),
    ]
    path = tmp_path / "reference.gpkg"
    for layer in ("impaired_waters", "tmdl_watersheds", "catchments"):
        gpd.read_file(DEMO_REFERENCE, layer=layer).to_file(path, layer=layer, driver="GPKG")
    gpd.GeoDataFrame(
        {
            "wetland_id": [w[0] for w in wetlands],
            "source": "test",
            "wetland_class": "PFO",
            "regulated": [w[1] for w in wetlands],
            "adjacent_area_ft": [w[2] for w in wetlands],
        },
        geometry=[w[3] for w in wetlands],
        crs="EPSG:2260",
    ).to_crs(stored_crs).to_file(path, layer="wetlands", driver="GPKG")
    sites_path = tmp_path / "sites.gpkg"
    gpd.GeoDataFrame({"site_id": ["S1"]}, geometry=[site], crs="EPSG:2260").to_file(
        sites_path, layer="sites", driver="GPKG"
    )
    sites = read_sites(sites_path, profile.area_crs)
    reference = open_reference(path)
    row = screen_sites(sites, reference, profile).rows[0]
    assert reference.features_read["wetlands"] == 3
    assert row["wetlands"] == "A;D;E" and row["wetland_status"] == "wetland"
    assert row["adjacent_area_acres"] > 0
    _condition_a, measured = review_of(sites.geometries[0], profile, open_reference(path))
    assert row["wetland_acres"] == pytest.approx(measured["wetland_acres"], abs=1e-9)
    assert row["adjacent_area_acres"] == pytest.approx(measured["wetland_adjacent_area_acres"], abs=1e-9)
    # Every one lies within the search distance: it is the reach that left them unread.
    whole = open_reference(path).read_boxes(
        "wetlands", sites.boxes + np.array([-300.0, -300.0, 300.0, 300.0]), profile.area_crs
    )
    assert sorted(whole["wetland_id"]) == [w[0] for w in wetlands]


def test_cli_writes_csv_gpkg_and_json(sites_file, tmp_path, capsys):
    for ending in ("csv", "gpkg", "json"):
        out = tmp_path / f"screen.{ending}"
        assert (
            main(
                [
                    "screen",
                    str(sites_file),
                    "--reference",
                    str(DEMO_REFERENCE),
                    "--output",
                    str(out),
                    "--quiet",
                ]
            )
            == 0
        )
    with open(tmp_path / "screen.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    written = json.loads((tmp_path / "screen.json").read_text())
    layer = gpd.read_file(tmp_path / "screen.gpkg", layer="screen")
    assert len(table) == len(written["rows"]) == len(layer) == 100
    assert (
        [r["condition_a"] for r in table]
        == [r["condition_a"] for r in written["rows"]]
        == list(layer["condition_a"])
    )
    assert layer.crs == crs_of(load_profile().area_crs)


def test_cli_refuses_what_it_cannot_screen(sites_file, tmp_path, capsys):
    assert (
        main(
            [
                "screen",
                str(sites_file),
                "--reference",
                str(DEMO_REFERENCE),
                "--output",
                str(tmp_path / "screen.txt"),
            ]
        )
        == 2
    )
    assert "--output" in capsys.readouterr().err
    assert not (tmp_path / "screen.txt").exists()
    assert main(["screen", str(sites_file), "--reference", str(DEMO_REFERENCE), "--id", "nope"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "site_id" in err


def test_repeated_site_ids_are_refused(tmp_path):
    path = tmp_path / "twice.gpkg"
    frame = random_sites(DEMO_REFERENCE, 3, seed=1)
    frame["site_id"] = ["A", "B", "A"]
    frame.to_file(path, driver="GPKG")
    with pytest.raises(InputError, match="'A' is given twice"):
        read_sites(path, load_profile().area_crs)


@pytest.mark.parametrize("layers", ["varied", "routed", "categories", "two TMDLs", "grazed"])
def test_geopackage_and_postgis_screens_agree(pg_schema, layers, request, tmp_path):
    """The same layers imported into a GeoPackage store and a PostGIS schema: the SQL screen
    in the database gives each site the GeoPackage screen's answer and acres (routed: the
    catchments' route downstream followed in the database as in the file; categories: each
    water's category read from the database as from the file)."""
    reference_file, sites_file = {
        "varied": ("reference_file", "sites_file"),
        "routed": ("routed_file", "routed_sites"),
        "two TMDLs": ("nested_tmdl_file", "routed_sites"),
        "categories": ("categories_file", "categories_sites"),
        "grazed": ("grazed_file", "grazed_sites"),
    }[layers]
    reference_file, sites_file = (
        request.getfixturevalue(reference_file),
        request.getfixturevalue(sites_file),
    )
    from analysis.reference.importer import read_candidate
    from analysis.reference.postgis import PostgisStore
    from analysis.reference.store import GeoPackageStore
    from analysis.screen.postgis import screen_postgis

    conninfo, schema = pg_schema
    store = GeoPackageStore(tmp_path / "store.gpkg")
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        candidate = read_candidate(layer, f"{reference_file}|layername={layer}")
        store.import_candidate(candidate)
        PostgisStore(conninfo, schema).import_candidate(candidate)
    profile = load_profile()
    sites = read_sites(sites_file, profile.area_crs)
    in_file = screen_sites(sites, open_reference(store.path), profile).by_site()
    in_database = screen_postgis(sites, f"{conninfo} schema={schema}", profile).by_site()
    assert in_file.keys() == in_database.keys()
    for site_id, row in in_file.items():
        other = in_database[site_id]
        for column in (
            "condition_a",
            "receiving_waters",
            "listed_waters",
            "tmdl_watersheds",
            "pollutants",
            "why",
            "wetland_status",
            "wetlands",
        ):
            assert other[column] == row[column], (site_id, column)
        for column in ("site_acres", "tmdl_acres", "wetland_acres", "adjacent_area_acres"):
            assert other[column] == pytest.approx(row[column], abs=1e-6), (site_id, column)
    assert (
        main(
            [
                "screen",
                str(sites_file),
                "--reference",
                f"{conninfo} schema={schema}",
                "--output",
                str(tmp_path / "pg.csv"),
                "--quiet",
            ]
        )
        == 0
    )
    assert (tmp_path / "pg.csv").read_text().count("\n") == len(in_file) + 1
    if layers == "two TMDLs":  # each acre in a TMDL watershed counted once in the database too
        assert any(row["tmdl_acres"] > 0 for row in in_file.values())
        assert all(row["tmdl_acres"] <= row["site_acres"] + 1e-6 for row in in_database.values())
    if layers == "routed":  # the route was followed: rows the catchments' drains_to decide
        assert any("which drains to catchment" in row["why"] for row in in_file.values())
    if layers == "grazed":  # each grazing route decided where it drains, in the database too
        assert {k: r["condition_a"] for k, r in in_database.items()} == {
            k: expected for k, (_, _, expected) in GRAZES.items()
        }
    if layers == "categories":  # every category was met, and each said what it is
        assert {w for row in in_file.values() for w in row["receiving_waters"].split(";")} >= set(
            CATEGORY_WATERS
        )
        assert any(CATEGORY_WORDS["tmdl"] in row["why"] for row in in_file.values())


def test_since_screens_the_route_as_the_store_does(routed_file, routed_sites, tmp_path):
    """``--since`` screens the stored versions (read back as frames) by the same route: the
    rows are the store's, route and all."""
    from analysis.screen.since import LAYERS, FrameReference

    store = stored(routed_file, tmp_path)
    profile = load_profile()
    sites = read_sites(routed_sites, profile.area_crs)
    now = screen_sites(sites, open_reference(store.path), profile)
    frames = {layer: store.read_version(layer, 1) for layer in LAYERS}
    then = screen_sites(sites, FrameReference("version 1", frames), profile)
    assert then.rows == now.rows
    assert any("which drains to catchment" in row["why"] for row in now.rows)


def test_since_names_exactly_the_sites_whose_water_was_newly_listed(
    reference_file, sites_file, tmp_path, capsys
):
    """Version 2 of the 303(d) list adds NY9999-0001, the water Example Brook's catchment
    drains to: the sites draining to it, and only those, change Condition A."""
    from analysis.reference.importer import read_candidate

    store = stored(reference_file, tmp_path)
    profile = load_profile()
    sites = read_sites(sites_file, profile.area_crs)
    before = screen_sites(sites, open_reference(store.path), profile).by_site()
    listed = newly_listed(reference_file, tmp_path)
    store.import_candidate(read_candidate("impaired_waters", listed))

    expected = {
        k
        for k, row in before.items()
        if "NY9999-0001" in row["receiving_waters"].split(";") and row["condition_a"] != APPLIES
    }
    assert expected  # the random sites do reach that catchment
    out = tmp_path / "since.json"
    assert (
        main(
            [
                "screen",
                str(sites_file),
                "--reference",
                str(store.path),
                "--since",
                "1",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    since = json.loads(out.read_text())["since"]
    assert since["layers"] == {"impaired_waters": {"from": 1, "to": 2}}
    changed = {c["site_id"] for c in since["changes"]}
    assert changed == expected
    for change in since["changes"]:
        assert (change["what"], change["after"]) == ("Condition A", APPLIES)
        assert "303(d)-listed water NY9999-0001 newly listed" in change["because"]
    assert main(["screen", str(sites_file), "--reference", str(store.path), "--since", "2"]) == 0
    assert "since version 2: 0 site(s) changed" in capsys.readouterr().out


@pytest.mark.parametrize("store_kind", ["gpkg"])  # a PostGIS schema lacking one is refused
@pytest.mark.parametrize("missing", ["tmdl_watersheds", "wetlands"])
def test_a_store_missing_a_layer_screens_what_it_can(store_kind, missing, request, tmp_path):
    """Issue 34, item 4: a store missing one of the four layers no longer refuses the screen.
    The layers it has are measured; a missing Condition A layer leaves Condition A not decided
    and a missing wetlands layer the wetland columns not measured, each row naming the layer
    and the import that adds it (a GeoPackage store; a PostGIS schema lacking one is refused,
    naming it: its SQL reads all four)."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.store import GeoPackageStore
    from analysis.screen.operations import run_screen

    reference_file, sites_file = (
        request.getfixturevalue("reference_file"),
        request.getfixturevalue("sites_file"),
    )
    kept = [
        layer
        for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")
        if layer != missing
    ]
    candidates = [read_candidate(layer, f"{reference_file}|layername={layer}") for layer in kept]
    if store_kind == "gpkg":
        store = GeoPackageStore(tmp_path / "store.gpkg")
        source = str(store.path)
    else:
        from analysis.reference.postgis import PostgisStore

        conninfo, schema = request.getfixturevalue("pg_schema")
        store = PostgisStore(conninfo, schema)
        source = f"{conninfo} schema={schema}"
    for candidate in candidates:
        store.import_candidate(candidate)
    full = GeoPackageStore(tmp_path / "full.gpkg")
    full.import_candidate(read_candidate(missing, f"{reference_file}|layername={missing}"))
    for candidate in candidates:
        full.import_candidate(candidate)
    whole = run_screen(sites_file, str(full.path)).screen.by_site()
    rows = run_screen(sites_file, source).screen.by_site()

    assert rows.keys() == whole.keys()
    add = f"swppp reference import {missing} SOURCE --reference "
    for site, row in rows.items():
        assert add in row["why"], row
        if missing == "wetlands":
            assert row["wetland_status"] == "not measured"
            assert row["why"].startswith("wetlands not measured: the reference ")
            assert row["condition_a"] == whole[site]["condition_a"]  # still decided
        elif row["condition_a"] == APPLIES:  # on the layers present: a layer added only adds evidence
            assert whole[site]["condition_a"] == APPLIES
            assert row["why"].startswith("Condition A applies on the layers the store has; the reference ")
        else:
            assert row["condition_a"] == NOT_DECIDED
            assert row["why"].startswith("Condition A not decided: the reference ")
            assert (row["wetland_status"], row["wetland_acres"]) == (
                whole[site]["wetland_status"],
                whole[site]["wetland_acres"],
            )
    if missing == "tmdl_watersheds":  # both ways to see: applies on the rest, and not decided
        assert {row["condition_a"] for row in rows.values()} == {APPLIES, NOT_DECIDED}
