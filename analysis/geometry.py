"""Geometry families and polygon parts, by ``shapely.GeometryType``: written once, used everywhere."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal, Optional, overload

import numpy as np
import shapely
from numpy.typing import ArrayLike, NDArray
from shapely import Geometry, GeometryType

__all__ = [
    "FAMILIES",
    "type_ids",
    "in_family",
    "polygons",
    "polygon_part",
    "repaired",
    "non_finite_vertex",
    "as_multi",
    "geometry_array",
]

# A layer's geometry family (the site-plan and reference contracts' "point", "line", "polygon").
FAMILIES = {
    "point": (GeometryType.POINT, GeometryType.MULTIPOINT),
    "line": (GeometryType.LINESTRING, GeometryType.LINEARRING, GeometryType.MULTILINESTRING),
    "polygon": (GeometryType.POLYGON, GeometryType.MULTIPOLYGON),
}
_MULTI = {
    "point": (GeometryType.POINT, shapely.multipoints),
    "line": (GeometryType.LINESTRING, shapely.multilinestrings),
    "polygon": (GeometryType.POLYGON, shapely.multipolygons),
}
_COLLECTIONS = (
    GeometryType.MULTIPOINT,
    GeometryType.MULTILINESTRING,
    GeometryType.MULTIPOLYGON,
    GeometryType.GEOMETRYCOLLECTION,
)


def type_ids(*families: str) -> list[int]:
    """The shapely type ids of the named families (for ``np.isin`` on ``get_type_id``)."""
    return [int(kind) for family in families for kind in FAMILIES[family]]


def in_family(geometries: ArrayLike, *families: str) -> NDArray[np.bool_]:
    """Per geometry, whether it is of one of ``families`` (a collection is of none; None neither).

    >>> in_family([shapely.Point(0, 0), shapely.box(0, 0, 1, 1), None], "polygon").tolist()
    [False, True, False]
    """
    return np.isin(shapely.get_type_id(np.asarray(geometries, dtype=object)), type_ids(*families))


@overload
def polygons(geometries: ArrayLike, return_index: Literal[False] = ...) -> NDArray[np.object_]: ...
@overload
def polygons(
    geometries: ArrayLike, return_index: Literal[True]
) -> tuple[NDArray[np.object_], NDArray[np.intp]]: ...
def polygons(
    geometries: ArrayLike, return_index: bool = False
) -> NDArray[np.object_] | tuple[NDArray[np.object_], NDArray[np.intp]]:
    """Every single Polygon in ``geometries``, multi-parts and collections taken apart (nested
    ones too), lines and points left out; with ``return_index``, also each one's geometry index.

    >>> mixed = shapely.GeometryCollection([shapely.box(0, 0, 1, 1), shapely.Point(5, 5),
    ...     shapely.MultiPolygon([shapely.box(2, 0, 3, 1), shapely.box(4, 0, 5, 1)])])
    >>> len(polygons([mixed]))
    3
    """
    geometries = np.asarray(geometries, dtype=object)
    parts, index = shapely.get_parts(geometries, return_index=True)
    while np.isin(shapely.get_type_id(parts), [int(t) for t in _COLLECTIONS]).any():
        parts, within = shapely.get_parts(parts, return_index=True)
        index = index[within]
    keep = shapely.get_type_id(parts) == GeometryType.POLYGON
    return (parts[keep], index[keep]) if return_index else parts[keep]


def polygon_part(geometry: Geometry) -> Geometry:
    """The polygonal part of one geometry: itself where it is a (Multi)Polygon, else a
    MultiPolygon of its polygons (what ``make_valid`` or a cut leaves beside stray lines and
    points), or an empty Polygon where it has none."""
    if shapely.get_type_id(geometry) in type_ids("polygon"):
        return geometry
    found = polygons([geometry])
    return shapely.multipolygons(found) if len(found) else shapely.Polygon()


def repaired(
    geometries: NDArray[np.object_], polygons_only: bool
) -> tuple[NDArray[np.object_], NDArray[np.bool_]]:
    """``geometries`` with the invalid ones repaired (``make_valid``; of a polygon layer's,
    the polygonal part kept), and which were: the one repair of reference features, as a
    review reads them and as a store's area copy keeps them. ``geometries`` itself (not a
    copy) where none is invalid."""
    from . import threads

    invalid = ~threads.each(shapely.is_valid, geometries) & ~shapely.is_missing(geometries)
    if not invalid.any():
        return geometries, invalid
    fixed = shapely.make_valid(geometries[invalid])
    if polygons_only:
        fixed = np.array([polygon_part(g) for g in fixed], dtype=object)
    geometries = geometries.copy()
    geometries[invalid] = fixed
    return geometries, invalid


def non_finite_vertex(
    geometries: NDArray[np.object_], chunk: int = 2_000
) -> Optional[tuple[int, float, float]]:
    """(the position in ``geometries`` of the first with a NaN or infinite vertex, that
    vertex's x and y); None where every vertex is finite. Looked at ``chunk`` geometries at a
    time: one small array reused rather than every vertex copied at once."""
    if all(
        np.isfinite(shapely.get_coordinates(geometries[k : k + chunk])).all()
        for k in range(0, len(geometries), chunk)
    ):
        return None
    coords = shapely.get_coordinates(geometries)
    owner = np.repeat(np.arange(len(geometries)), shapely.get_num_coordinates(geometries))
    first = int(np.flatnonzero(~np.isfinite(coords).all(axis=1))[0])
    return int(owner[first]), float(coords[first][0]), float(coords[first][1])


def as_multi(geometries: ArrayLike, families: Iterable[str] = ("polygon", "line")) -> NDArray[np.object_]:
    """A copy with the single Polygons (and LineStrings, Points where asked) of ``families`` as
    one-part multi-geometries: one geometry type per family, as a layer holds them."""
    out = np.array(geometries, dtype=object)
    kinds = shapely.get_type_id(out)
    for family in families:
        single, make = _MULTI[family]
        index = np.flatnonzero(kinds == single)
        if len(index):
            out[index] = make(out[index], indices=np.arange(len(index)))
    return out


def geometry_array(geometries: Sequence[Optional[Geometry]] | NDArray[np.object_], crs: Any = None) -> Any:
    """``geometries`` (shapely geometries, or None where there is none) as geopandas' geometry
    array, made as it is: geopandas before 0.14 (the QGIS 3.22 stack's 0.12) checks each
    element in Python (``from_shapely``: 1.7 microseconds each, 1.7 s a million wetlands, on the
    import's critical path), which an array of shapely's own making does not need.

    >>> geometry_array([shapely.Point(0, 0), None], crs="EPSG:2260").crs.to_epsg()
    2260
    """
    import geopandas as gpd  # here: this module is shapely's and numpy's alone

    if isinstance(geometries, np.ndarray) and geometries.dtype == object and geometries.ndim == 1:
        data = geometries.copy()  # the array's own: the caller's may change after
    else:  # not np.asarray: it would take a list's geometries apart where it can
        data = np.empty(len(geometries), dtype=object)
        data[:] = list(geometries)
    return gpd.array.GeometryArray(data, crs=crs)
