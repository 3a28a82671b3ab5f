"""CRS work done once per CRS and per pair (analysis.crs), with the answers pyproj gives."""

import geopandas as gpd
import numpy as np
import pytest
import shapely
from pyproj import CRS

from analysis import crs as crs_cache
from analysis.reference.read import bounds_in_crs, boxes_in_crs

# A local grid with no EPSG code (to_authority searches the whole database for one).
LOCAL_WKT = CRS.from_proj4(
    "+proj=tmerc +lat_0=41.3 +lon_0=-74.1 +k=0.9999 +x_0=10000 +y_0=5000 +datum=NAD83 +units=us-ft +no_defs"
).to_wkt()


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
        geometry=[
            square,
            shapely.Point(300050, 4500050, 7.0),
            None,
            shapely.LineString([(300000, 4500000), (300500, 4500300)]),
        ],
        crs="EPSG:26918",
    )
    ours, theirs = crs_cache.to_crs(frame, target), frame.to_crs(target)
    assert ours.crs == theirs.crs and list(ours["id"]) == [1, 2, 3, 4]
    got, want = (np.asarray(f.geometry.values, dtype=object) for f in (ours, theirs))
    assert bool(shapely.has_z(got[1]))
    assert shapely.equals_exact(got[[0, 1, 3]], want[[0, 1, 3]], tolerance=0).all()
    assert got[2] is None
    assert frame.geometry.iloc[0].equals(square)  # the input is left as it was


def test_same_crs_is_returned_untransformed():
    frame = gpd.GeoDataFrame(geometry=[shapely.box(0, 0, 1, 1)], crs="EPSG:2260")
    assert crs_cache.to_crs(frame, "EPSG:2260").geometry.iloc[0].equals_exact(shapely.box(0, 0, 1, 1), 0)


def test_bounds_in_crs_covers_the_box():
    box = (600000.0, 900000.0, 601000.0, 901000.0)
    minx, miny, maxx, maxy = bounds_in_crs(box, "EPSG:2260", LOCAL_WKT)
    corners = crs_cache.transform_geometries(
        np.array([shapely.Point(x, y) for x in box[0::2] for y in box[1::2]]), "EPSG:2260", LOCAL_WKT
    )
    assert all(minx <= p.x <= maxx and miny <= p.y <= maxy for p in corners)


def test_geometries_moved_piece_by_piece_equal_geopandas(monkeypatch):
    """The vertices go through PROJ in pieces (a few vertices each here: a polygon's rings, 2D
    and 3D geometries mixed, and empty ones straddle the cuts); the answer is geopandas's."""
    monkeypatch.setattr(crs_cache, "_PIECE_VERTICES", 7)
    rng = np.random.default_rng(5)
    shapes = [
        shapely.Polygon(
            shapely.get_coordinates(shapely.box(0, 0, 80, 60).buffer(5.0 * k, quad_segs=1 + k))
            + (300000 + 90 * k, 4500000),
            [[(300005 + 90 * k, 4500005), (300010 + 90 * k, 4500005), (300010 + 90 * k, 4500010)]],
        )
        for k in range(6)
    ]
    shapes += [shapely.Point(300000 + rng.uniform(0, 500), 4500000, 3.0 * k) for k in range(5)]
    shapes += [
        shapely.LineString(),
        shapely.Polygon(),
        None,
        shapely.LineString([(300000, 4500000, 1.0), (300500, 4500300, 2.0)]),
    ]
    order = rng.permutation(len(shapes))
    frame = gpd.GeoDataFrame({"id": order}, geometry=[shapes[k] for k in order], crs="EPSG:26918")
    ours, theirs = crs_cache.to_crs(frame, "EPSG:2260"), frame.to_crs("EPSG:2260")
    got, want = (np.asarray(f.geometry.values, dtype=object) for f in (ours, theirs))
    present = ~shapely.is_missing(want)
    assert shapely.equals_exact(got[present], want[present], tolerance=0).all()
    assert (shapely.has_z(got[present]) == shapely.has_z(want[present])).all()
    assert shapely.is_missing(got[~present]).all()
    assert len(crs_cache._pieces(np.arange(len(shapes)), shapely.get_num_coordinates(got))) > 5  # it was cut


@pytest.mark.parametrize("target", ["EPSG:5070", LOCAL_WKT, "EPSG:4326", "EPSG:32617", "EPSG:3413"])
@pytest.mark.parametrize("size_ft", [50.0, 1_200.0, 30_000.0, 400_000.0, 3_000_000.0])
def test_boxes_in_crs_cover_each_box_densely_transformed(target, size_ft):
    """A box is placed by its corners where it is small (edges cut into pieces no shorter than
    1 km): still covering every point of its edges, transformed 200 to an edge (a site's box
    and a county's, into Albers, a local grid, degrees and a UTM zone far from the box)."""
    rng = np.random.default_rng(int(size_ft))
    corners = rng.uniform([600000, 900000], [900000, 1200000], (20, 2))
    boxes = np.column_stack([corners, corners + size_ft * rng.uniform(0.3, 1.0, (20, 2))])
    placed = boxes_in_crs(boxes, "EPSG:2260", target)
    dense = shapely.segmentize(shapely.box(*boxes.T), size_ft / 200)
    moved = crs_cache.transform_geometries(dense, "EPSG:2260", target)
    covered = shapely.covers(shapely.box(*placed.T), moved)
    assert covered.all()
    # and not grossly wider than the dense outline's own bounds (the margin only)
    tight = shapely.bounds(moved)
    size = np.maximum(tight[:, 2] - tight[:, 0], tight[:, 3] - tight[:, 1])
    assert (np.abs(placed - tight).max(axis=1) <= 2e-3 * size).all()
