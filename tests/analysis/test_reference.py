"""Reference layers: read only around the site, in the area CRS, contract checked, repairs local."""

import importlib.util

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely import Polygon

from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.reference.read import bounds_in_crs, is_postgis_source, open_reference, site_bounds
from analysis.review import review_site
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, Y0, local_box

PROFILE = load_profile()
AREA = "EPSG:2260"
BOX = (X0, Y0, X0 + 1000, Y0 + 1000)


def wetland(wid, geometry, regulated=0, adjacent=None):
    return geometry, {
        "wetland_id": wid,
        "source": "TEST",
        "wetland_class": "PEM",
        "regulated": regulated,
        "adjacent_area_ft": adjacent,
    }


def bow_tie(x, y, size=100):
    """An invalid (self-intersecting) polygon, two triangles of size*size/4 each when repaired."""
    return Polygon(
        [(X0 + x, Y0 + y), (X0 + x + size, Y0 + y + size), (X0 + x + size, Y0 + y), (X0 + x, Y0 + y + size)]
    )


@pytest.mark.parametrize("crs", ["EPSG:2260", "EPSG:4326", "EPSG:26918"])
def test_reads_only_the_features_that_meet_the_box_whatever_the_layers_crs(make_reference, crs):
    path = make_reference(
        crs=crs,
        wetlands=[
            wetland("in", local_box(100, 100, 200, 200)),
            wetland("across_edge", local_box(950, 400, 1100, 500)),
            wetland("outside", local_box(1200, 100, 1300, 200)),
            wetland("far", local_box(50_000, 50_000, 50_100, 50_100)),
        ],
    )
    read = open_reference(path).read("wetlands", BOX, AREA)
    assert sorted(read["wetland_id"]) == ["across_edge", "in"]
    assert read.crs.to_epsg() == 2260
    # back in the area CRS, the 100 ft square is a 100 ft square again
    inside = read.set_index("wetland_id").geometry["in"]
    assert inside.area == pytest.approx(100 * 100, rel=1e-6)


def test_invalid_geometries_are_repaired_only_where_read(make_reference):
    path = make_reference(
        wetlands=[wetland("near", bow_tie(100, 100)), wetland("far", bow_tie(40_000, 40_000))]
    )
    reference = open_reference(path)
    read = reference.read("wetlands", BOX, AREA)
    assert reference.repaired == ["wetlands:near"]
    assert read.geometry.is_valid.all()
    assert read.geometry.iloc[0].area == pytest.approx(2 * 100 * 100 / 4)
    assert reference.features_read == {"wetlands": 1}


def test_a_missing_layer_leaves_its_checks_undecided_naming_it(make_reference, make_site):
    from tests.analysis.conftest import square

    path = make_reference(omit=("tmdl_watersheds",))
    site = load_site_plan(make_site([square(1.0)]), PROFILE)
    review = review_site(site, PROFILE, reference=open_reference(path))
    [a] = [f for f in review.findings if f.rule == "condition_a"]
    assert a.status == "needs_review" and "no 'tmdl_watersheds' layer" in a.message
    assert path.name in a.message and not review.conditions["A"].decided
    # Reading the layer itself is still an error naming it.
    with pytest.raises(InputError, match="'tmdl_watersheds' is missing"):
        open_reference(path).read("tmdl_watersheds", (0, 0, 1, 1), site.area_crs)


def test_a_missing_field_is_an_error_naming_file_layer_and_field(tmp_path):
    path = tmp_path / "ref.gpkg"
    write_geopackage(
        path,
        {
            "wetlands": gpd.GeoDataFrame(
                {"wetland_id": ["W"], "source": ["X"], "wetland_class": ["PEM"], "regulated": [1]},
                geometry=[local_box(0, 0, 10, 10)],
                crs=AREA,
            )
        },
    )
    with pytest.raises(InputError) as err:
        open_reference(path).read("wetlands", BOX, AREA)
    assert err.value.field == "adjacent_area_ft" and err.value.layer == "wetlands"
    assert str(path) in str(err.value)


def test_a_flag_that_is_not_a_number_names_the_feature(tmp_path):
    path = tmp_path / "ref.gpkg"
    write_geopackage(
        path,
        {
            "tmdl_watersheds": gpd.GeoDataFrame(
                {
                    "watershed_id": ["T"],
                    "name": ["n"],
                    "pollutants": ["p"],
                    "tmdl_id": ["t"],
                    "stormwater_source": ["maybe"],
                },
                geometry=[local_box(0, 0, 10, 10)],
                crs=AREA,
            )
        },
    )
    with pytest.raises(InputError) as err:
        open_reference(path).read("tmdl_watersheds", BOX, AREA)
    assert err.value.field == "stormwater_source" and err.value.feature is not None


def test_layer_names_match_case_insensitively(tmp_path):
    path = tmp_path / "ref.gpkg"
    write_geopackage(
        path,
        {
            "WetLands": gpd.GeoDataFrame(
                {
                    "WETLAND_ID": ["W"],
                    "Source": ["X"],
                    "wetland_class": ["PEM"],
                    "regulated": [1],
                    "adjacent_area_ft": [100.0],
                },
                geometry=[local_box(0, 0, 10, 10)],
                crs=AREA,
            )
        },
    )
    read = open_reference(path).read("wetlands", BOX, AREA)
    assert list(read["wetland_id"]) == ["W"]


def test_versions_read_are_recorded(make_reference):
    rows = [
        {
            "layer": layer,
            "version": version,
            "source": "test",
            "source_date": date,
            "imported_at": date + "T00:00:00Z",
            "feature_count": 1,
            "sha256": "0" * 64,
        }
        for layer, version, date in (
            ("wetlands", 1, "2025-01-01"),
            ("wetlands", 2, "2026-01-01"),
            ("catchments", 1, "2024-01-01"),
        )
    ]
    reference = open_reference(
        make_reference(versions=rows, wetlands=[wetland("in", local_box(100, 100, 200, 200))])
    )
    reference.read("wetlands", BOX, AREA)
    described = reference.describe()
    assert described["read"]["wetlands"] == {"features": 1, "version": 2, "source_date": "2026-01-01"}
    assert "layer_versions" in described["layers"]


def test_lookup_finds_a_water_wherever_it_lies(make_reference):
    far_line = shapely.LineString([(X0 + 90_000, Y0), (X0 + 95_000, Y0)])
    reference = open_reference(
        make_reference(
            impaired_waters=[
                (far_line, {"waterbody_id": "NY-1", "name": "Far River", "pollutants": "Phosphorus"})
            ]
        )
    )
    found = reference.lookup(
        "impaired_waters", "waterbody_id", [" ny-1 "], normalise=lambda v: v.strip().upper()
    )
    assert list(found["name"]) == ["Far River"]
    assert reference.lookup("impaired_waters", "waterbody_id", ["NY-2"]).empty


def test_the_densified_box_covers_the_transformed_box():
    covering = bounds_in_crs(BOX, AREA, "EPSG:4326")
    edges = shapely.segmentize(shapely.box(*BOX), 10)
    back = gpd.GeoSeries([edges], crs=AREA).to_crs("EPSG:4326").iloc[0]
    assert shapely.box(*covering).contains(back)


def test_site_bounds_take_the_search_distance_around_every_site_layer(make_site):
    from tests.analysis.conftest import square

    point = shapely.Point(X0 + 5000, Y0)
    site = load_site_plan(make_site([square(1.0)], discharge_points=[(point, "B", "NY-1")]), PROFILE)
    minx, _, maxx, _ = site_bounds(site, PROFILE)
    distance = PROFILE.reference.search_distance_ft * 0.3048 / (1200 / 3937)
    assert maxx == pytest.approx(X0 + 5000 + distance)
    assert minx == pytest.approx(X0 - 2000 - distance)  # the fixture's boundary


@pytest.mark.parametrize(
    "source, postgis",
    [
        ("postgresql://u@h/db", True),
        ("service=reference", True),
        ("dbname=ref host=h", True),
        ("/data/reference.gpkg", False),
        ("C:/data/postgresql.gpkg", False),
    ],
)
def test_sources_are_told_apart_by_kind(source, postgis):
    assert is_postgis_source(source) is postgis


@pytest.mark.skipif(
    importlib.util.find_spec("analysis.reference.postgis") is not None,
    reason="analysis.reference.postgis is present: the PostGIS backend is tested there",
)
def test_postgis_without_its_backend_is_a_clear_error():
    with pytest.raises(InputError, match="PostGIS"):
        open_reference("postgresql://nobody@localhost/none")


def test_bbox_read_uses_the_spatial_index(make_reference):
    """The R-tree answers the box: thousands of far features are never turned into geometries."""
    far = [
        wetland(f"far{i}", local_box(20_000 + 30 * i, 20_000, 20_020 + 30 * i, 20_020)) for i in range(2000)
    ]
    reference = open_reference(make_reference(wetlands=[wetland("in", local_box(1, 1, 9, 9)), *far]))
    fetched = []
    original = reference._fetch_found
    reference._fetch_found = lambda actual, bbox: fetched.append(original(actual, bbox)) or fetched[-1]
    read = reference.read("wetlands", BOX, AREA)
    assert list(read["wetland_id"]) == ["in"]
    assert len(fetched[0].fids) == 1  # the source returned only what meets the box
    assert np.isfinite(read.total_bounds).all()


@pytest.mark.filterwarnings("ignore:'crs' was not provided")
def test_a_reference_layer_without_a_crs_is_an_error_naming_it(tmp_path):
    path = tmp_path / "ref.gpkg"
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": ["W"],
            "source": ["X"],
            "wetland_class": ["PEM"],
            "regulated": [1],
            "adjacent_area_ft": [100.0],
        },
        geometry=[local_box(0, 0, 10, 10)],
    )
    write_geopackage(path, {"wetlands": frame})
    with pytest.raises(InputError, match="no coordinate reference system") as err:
        open_reference(path).read("wetlands", BOX, AREA)
    assert err.value.layer == "wetlands"


def test_site_file_bounds_equal_the_loaded_site_plans(make_site, tmp_path):
    from analysis.io.vector import write_geopackage
    from analysis.reference.read import site_file_bounds
    from tests.analysis.conftest import square

    point = shapely.Point(X0 + 5000, Y0)
    path = make_site([square(1.0)], discharge_points=[(point, "B", "NY-1")])
    assert site_file_bounds(path, PROFILE) == site_bounds(load_site_plan(path, PROFILE), PROFILE)
    empty = tmp_path / "no_box_layers.gpkg"
    write_geopackage(empty, {"project": gpd.read_file(path, layer="project")})
    assert site_file_bounds(empty, PROFILE) is None


def test_a_review_reads_the_layers_only_its_checks_need_until_the_map_looks(data_copy):
    """Issue 23 (the one-site path): a review of some checks, or one written as JSON alone,
    reads no reference layer beyond those checks; the report's map reads the others when it
    first looks, and the JSON's record of what was read stays the checks' record."""
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    reference = open_reference(data_copy("demo_reference.gpkg"))
    review = review_site(site, PROFILE, reference=reference, rules=["wetlands"])
    assert set(reference.features_read) == {"wetlands"}
    recorded = review.to_dict()["reference"]
    assert sorted(review.reference_layers) == ["catchments", "impaired_waters", "tmdl_watersheds", "wetlands"]
    assert set(reference.features_read) == {"wetlands", "catchments", "impaired_waters", "tmdl_watersheds"}
    assert recorded["read"] == {"wetlands": {"features": 2, "version": 1, "source_date": "2026-01-01"}}
    assert review.to_dict()["reference"] == recorded
    assert len(review.reference_layers["wetlands"]) == 2


@pytest.mark.parametrize("layer", ["impaired_waters", "catchments", "tmdl_watersheds", "layer_versions"])
def test_a_geopackage_table_read_by_sqlite_equals_the_driver_read(layer):
    """The look-up tables (io.geopackage.read_geopackage_table, SQLite) hold what OGR reads with
    the stored texts put back: same feature ids, columns and values."""
    from analysis.io.geopackage import read_geopackage_table, with_stored_texts
    from analysis.io.vector import read_layer
    from tests.conftest import TEST_DATA

    path = TEST_DATA / "demo_reference.gpkg"
    fast = read_geopackage_table(path, layer)
    driver = with_stored_texts(path, layer, read_layer(path, layer, read_geometry=False).frame)
    driver = driver.drop(columns="geometry", errors="ignore")
    assert list(fast.index) == list(driver.index) and fast.index.name == "fid"
    assert list(fast.columns) == list(driver.columns)

    def plain(value):
        return (
            None
            if value is None or (isinstance(value, float) and np.isnan(value))
            else (value.item() if hasattr(value, "item") else value)
        )

    for column in fast.columns:
        assert [plain(v) for v in fast[column]] == [plain(v) for v in driver[column]], column


def test_a_look_up_of_nothing_reads_no_row_but_checks_the_fields(data_copy, tmp_path):
    """Reference.lookup with no value asked reads the table's columns alone (no row), and
    still refuses a table missing a contract field; asked a value, it reads the table."""
    import sqlite3
    from contextlib import closing

    reference = open_reference(data_copy("demo_reference.gpkg"))
    read = []
    original = reference._attributes
    reference._attributes = lambda actual: read.append(actual) or original(actual)
    empty = reference.lookup("impaired_waters", "waterbody_id", [])
    assert read == [] and len(empty) == 0 and "waterbody_id" in empty.columns
    assert "geometry" not in empty.columns
    found = reference.lookup("impaired_waters", "waterbody_id", ["NY1301-0099"])
    assert read == ["impaired_waters"] and list(found["waterbody_id"]) == ["NY1301-0099"]
    assert list(reference.lookup("impaired_waters", "waterbody_id", []).columns) == list(found.columns)
    broken = tmp_path / "broken.gpkg"
    broken.write_bytes(data_copy("demo_reference.gpkg").read_bytes())
    with closing(sqlite3.connect(broken)) as con, con:
        con.execute("ALTER TABLE impaired_waters RENAME COLUMN waterbody_id TO water")
    with pytest.raises(InputError, match="waterbody_id") as err:
        open_reference(broken).lookup("impaired_waters", "waterbody_id", [])
    assert err.value.layer == "impaired_waters"


def test_a_geopackage_table_keeps_text_typed_into_a_number_column(tmp_path):
    import sqlite3
    from contextlib import closing

    from analysis.io.geopackage import read_geopackage_table

    path = tmp_path / "ref.gpkg"
    write_geopackage(
        path, {"tmdl_watersheds": pd.DataFrame({"watershed_id": ["T-1", "T-2"], "stormwater_source": [1, 0]})}
    )
    with closing(sqlite3.connect(path)) as con, con:
        con.execute("UPDATE tmdl_watersheds SET stormwater_source = 'three' WHERE fid = 2")
    table = read_geopackage_table(path, "TMDL_Watersheds")
    assert table["stormwater_source"].tolist() == [1, "three"] and list(table.index) == [1, 2]
    assert read_geopackage_table(path, "nothing") is None
    assert read_geopackage_table(tmp_path / "ref.shp", "wetlands") is None


def test_a_review_reads_a_geopackage_reference_through_one_connection_closed_after(data_copy, monkeypatch):
    """One review's reads (layer CRSs, the boxes, the look-up tables) share one read-only
    SQLite connection (Reference.opened), closed when the checks are done; the map's later
    reads open their own."""
    import sqlite3

    import analysis.reference.read as read_module

    opened = []
    real = read_module.geopackage_reader

    def kept(path):
        opened.append(real(path))
        return opened[-1]

    monkeypatch.setattr(read_module, "geopackage_reader", kept)
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    reference = open_reference(data_copy("demo_reference.gpkg"))
    review = review_site(site, PROFILE, reference=reference, rules=["condition_a", "wetlands"])
    assert len(opened) == 1 and reference._con is None
    with pytest.raises(sqlite3.ProgrammingError):
        opened[0].execute("SELECT 1")
    assert set(reference.features_read) == {"wetlands", "catchments", "impaired_waters", "tmdl_watersheds"}
    assert len(review.reference_layers["wetlands"]) == 2 and len(opened) == 1


def test_a_geopackage_s_layers_listed_by_sqlite_are_the_driver_s(tmp_path):
    """io.geopackage.geopackage_layers (the reference's layer names without opening GDAL) gives
    what the driver lists, for every shipped GeoPackage and a store with its history table;
    and gives way to the driver (None) where a table is not registered."""
    import sqlite3
    from contextlib import closing

    from analysis.cli.app import main
    from analysis.io.geopackage import geopackage_layers
    from analysis.io.vector import list_layers
    from analysis.reference.links import LINKS_TABLE
    from analysis.reference.store import HISTORY_TABLE
    from tests.conftest import TEST_DATA

    store = tmp_path / "store.gpkg"
    for layer in ("catchments", "impaired_waters"):  # both: the route's links table is made
        assert (
            main(
                [
                    "reference",
                    "import",
                    layer,
                    f"{TEST_DATA / 'demo_reference.gpkg'}|layername={layer}",
                    "--reference",
                    str(store),
                ]
            )
            == 0
        )
    paths = sorted(TEST_DATA.rglob("*.gpkg")) + [store]
    side = (HISTORY_TABLE, LINKS_TABLE)
    for path in paths:
        assert sorted(geopackage_layers(path, unlisted=side)) == sorted(list_layers(path)), path
    assert geopackage_layers(store) is None  # its history and links tables are not registered
    with closing(sqlite3.connect(store)) as con, con:
        con.execute("CREATE TABLE notes (fid INTEGER PRIMARY KEY, text TEXT)")
    assert geopackage_layers(store, unlisted=side) is None
    assert open_reference(store).layers == sorted(list_layers(store))
