"""Geometry families and polygon parts (analysis.geometry), by shapely.GeometryType."""

import ast
from pathlib import Path

import numpy as np
import shapely
from shapely import (
    GeometryCollection,
    GeometryType,
    LineString,
    MultiLineString,
    MultiPoint,
    MultiPolygon,
    Point,
    Polygon,
    box,
)

import analysis
from analysis.geometry import FAMILIES, as_multi, in_family, polygon_part, polygons

PACKAGE = Path(analysis.__file__).resolve().parent
SQUARE, OTHER = box(0, 0, 1, 1), box(5, 5, 7, 7)
MIXED = GeometryCollection(
    [SQUARE, LineString([(0, 0), (3, 3)]), Point(9, 9), MultiPolygon([OTHER, box(10, 0, 11, 1)])]
)


def test_families_cover_every_simple_type_once():
    listed = [kind for kinds in FAMILIES.values() for kind in kinds]
    assert sorted(listed) == sorted(
        set(GeometryType) - {GeometryType.MISSING, GeometryType.GEOMETRYCOLLECTION}
    )


def test_in_family():
    geometries = [
        Point(0, 0),
        MultiPoint([(0, 0), (1, 1)]),
        LineString([(0, 0), (1, 1)]),
        MultiLineString([[(0, 0), (1, 1)]]),
        SQUARE,
        MultiPolygon([SQUARE]),
        MIXED,
        None,
    ]
    assert in_family(geometries, "point").tolist() == [1, 1, 0, 0, 0, 0, 0, 0]
    assert in_family(geometries, "line").tolist() == [0, 0, 1, 1, 0, 0, 0, 0]
    assert in_family(geometries, "polygon").tolist() == [0, 0, 0, 0, 1, 1, 0, 0]
    assert in_family(geometries, "point", "line").tolist() == [1, 1, 1, 1, 0, 0, 0, 0]


def test_polygons_of_a_collection_with_polygons_lines_and_points():
    found = polygons([MIXED, None, LineString([(0, 0), (1, 0)])])
    assert all(shapely.get_type_id(p) == GeometryType.POLYGON for p in found)
    assert sorted(p.area for p in found) == [1.0, 1.0, 4.0]


def test_polygons_index_says_whose_part_each_is():
    parts, index = polygons([SQUARE, Point(0, 0), MIXED, MultiPolygon([OTHER])], return_index=True)
    assert index.tolist() == [0, 2, 2, 2, 3]
    assert parts[0].equals(SQUARE) and parts[-1].equals(OTHER)


def test_polygons_of_a_nested_collection():
    nested = GeometryCollection([GeometryCollection([SQUARE, Point(0, 0)]), OTHER])
    assert sorted(p.area for p in polygons([nested])) == [1.0, 4.0]


def test_polygon_part():
    assert polygon_part(SQUARE) is SQUARE  # already polygonal: itself
    whole = MultiPolygon([SQUARE, OTHER])
    assert polygon_part(whole) is whole
    part = polygon_part(MIXED)
    assert part.geom_type == "MultiPolygon" and part.area == 6.0 and len(part.geoms) == 3
    nothing = polygon_part(GeometryCollection([LineString([(0, 0), (1, 1)]), Point(2, 2)]))
    assert nothing.geom_type == "Polygon" and nothing.is_empty


def test_polygon_part_of_what_make_valid_leaves():
    # A square with a dangling spike: make_valid gives the square and a stray line.
    spiked = Polygon([(0, 0), (2, 0), (2, 2), (0, 2), (0, 0), (-1, -1), (0, 0)])
    repaired = shapely.make_valid(spiked)
    assert repaired.geom_type == "GeometryCollection"
    assert polygon_part(repaired).equals(MultiPolygon([box(0, 0, 2, 2)]))


def test_as_multi_promotes_single_parts_of_the_asked_families_only():
    line = LineString([(0, 0), (1, 1)])
    out = as_multi(np.array([SQUARE, line, Point(0, 0), MultiPolygon([OTHER]), None], dtype=object))
    assert [None if g is None else g.geom_type for g in out] == [
        "MultiPolygon",
        "MultiLineString",
        "Point",
        "MultiPolygon",
        None,
    ]
    assert out[0].geoms[0].equals(SQUARE)
    polygons_only = as_multi([SQUARE, line], ("polygon",))
    assert [g.geom_type for g in polygons_only] == ["MultiPolygon", "LineString"]


def test_no_module_uses_magic_type_ids_or_its_own_families():
    """get_type_id compared with bare numbers, or a family table of ids, is written only in
    analysis.geometry: elsewhere the families and GeometryType say what is meant."""
    offending = []
    for path in PACKAGE.rglob("*.py"):
        if path.name == "geometry.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", "") == "isin":
                uses_type_id = any(
                    isinstance(n, ast.Attribute) and n.attr == "get_type_id" for n in ast.walk(node)
                )
                numbers = any(isinstance(n, ast.Constant) and type(n.value) is int for n in ast.walk(node))
                if uses_type_id and numbers:
                    offending.append(f"{path.name}:{node.lineno}")
            if (
                isinstance(node, ast.Compare)
                and any(isinstance(n, ast.Attribute) and n.attr == "get_type_id" for n in ast.walk(node.left))
                and any(
                    isinstance(n, ast.Constant) and type(n.value) is int
                    for c in node.comparators
                    for n in ast.walk(c)
                )
            ):
                offending.append(f"{path.name}:{node.lineno}")
    assert not offending, f"use analysis.geometry (FAMILIES, in_family, polygons): {offending}"


def test_geometry_array_is_what_geopandas_would_make_and_owns_its_data():
    """The array made as it is equals geopandas' own checked one (geometries, None, empty),
    keeps the CRS, and a change to the caller's array afterwards does not reach it."""
    import geopandas as gpd

    from analysis.geometry import geometry_array

    given = np.array([shapely.box(0, 0, 1, 1), None, shapely.Polygon(), shapely.Point(2, 3)], dtype=object)
    made = geometry_array(given, crs="EPSG:2260")
    checked = gpd.array.from_shapely(given, crs="EPSG:2260")
    assert made.crs == checked.crs
    assert list(made.isna()) == list(checked.isna()) == [False, True, False, False]
    assert all((a is None and b is None) or shapely.equals_exact(a, b) for a, b in zip(made, checked))
    assert all(
        (a is None and b is None) or shapely.equals_exact(a, b)
        for a, b in zip(geometry_array(list(given)), checked)
    )
    given[0] = None
    assert made[0] is not None
