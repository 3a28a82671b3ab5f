"""CRS work done once per CRS and per pair (analysis.crs), with the answers pyproj gives."""
import geopandas as gpd
import numpy as np
import pytest
import shapely
from pyproj import CRS

from analysis import crs as crs_cache
from analysis.reference.read import bounds_in_crs

# A local grid with no EPSG code (to_authority searches the whole database for one).
LOCAL_WKT = CRS.from_proj4("+proj=tmerc +lat_0=41.3 +lon_0=-74.1 +k=0.9999 +x_0=10000 "
                            "+y_0=5000 +datum=NAD83 +units=us-ft +no_defs").to_wkt()


def test_a_crs_is_read_once_per_definition():
    assert crs_cache.crs_of(LOCAL_WKT) is crs_cache.crs_of(LOCAL_WKT)
    given = CRS.from_epsg(2260)
    assert crs_cache.crs_of(given) is given


def test_authority_and_epsg_are_pyprojs():
    assert crs_cache.authority("EPSG:2260") == ("EPSG", "2260")
    assert crs_cache.crs_label("EPSG:2260") == "EPSG:2260"
    assert crs_cache.epsg_code(LOCAL_WKT) is None is CRS.from_wkt(LOCAL_WKT).to_epsg()
    assert crs_cache.authority(LOCAL_WKT) is None
    assert crs_cache.crs_label(LOCAL_WKT) == CRS.from_wkt(LOCAL_WKT).name


def test_a_transformer_is_built_once_per_pair():
    first = crs_cache.transformer(LOCAL_WKT, "EPSG:2260")
    assert crs_cache.transformer(CRS.from_wkt(LOCAL_WKT), "EPSG:2260") is first
    assert crs_cache.transformer("EPSG:2260", LOCAL_WKT) is not first


@pytest.mark.parametrize("target", ["EPSG:2260", LOCAL_WKT, "EPSG:4326"])
def test_to_crs_equals_geopandas(target):
    square = shapely.box(300000, 4500000, 300100, 4500100)
    frame = gpd.GeoDataFrame(
        {"id": [1, 2, 3, 4]},
        geometry=[square, shapely.Point(300050, 4500050, 7.0), None,
                  shapely.LineString([(300000, 4500000), (300500, 4500300)])], crs="EPSG:26918")
    ours, theirs = crs_cache.to_crs(frame, target), frame.to_crs(target)
    assert ours.crs == theirs.crs and list(ours["id"]) == [1, 2, 3, 4]
    got, want = (np.asarray(f.geometry.values, dtype=object) for f in (ours, theirs))
    assert bool(shapely.has_z(got[1]))
    assert shapely.equals_exact(got[[0, 1, 3]], want[[0, 1, 3]], tolerance=0).all()
    assert got[2] is None
    assert frame.geometry.iloc[0].equals(square)  # the input is left as it was


def test_same_crs_is_returned_untransformed():
    frame = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1)], crs="EPSG:2260")
    assert crs_cache.to_crs(frame, "EPSG:2260").geometry.iloc[0].equals_exact(
        shapely.box(0, 0, 1, 1), 0)


def test_bounds_in_crs_covers_the_box():
    box = (600000.0, 900000.0, 601000.0, 901000.0)
    minx, miny, maxx, maxy = bounds_in_crs(box, "EPSG:2260", LOCAL_WKT)
    corners = crs_cache.transform_geometries(
        np.array([shapely.Point(x, y) for x in box[0::2] for y in box[1::2]]), "EPSG:2260",
        LOCAL_WKT)
    assert all(minx <= p.x <= maxx and miny <= p.y <= maxy for p in corners)
