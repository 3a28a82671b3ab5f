"""A piece of one vertex (a lone point, 2D or 3D) is moved by pyproj's point call: the answer
pyproj gives, and no NumPy "ndim > 0 to a scalar" DeprecationWarning (pyproj 3.7 took arrays of
one element as numbers first, Debian 13 beside QGIS 3.40)."""

import warnings

import numpy as np
import pytest
import shapely
from pyproj import Transformer

from analysis import crs as crs_cache


@pytest.mark.parametrize("point", [shapely.Point(300050, 4500050), shapely.Point(300050, 4500050, 7.0)])
def test_a_lone_point_moves_as_pyproj_moves_it_without_a_deprecation(point):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        [moved] = crs_cache.transform_geometries(np.array([point], dtype=object), "EPSG:26918", "EPSG:2260")
    want = Transformer.from_crs("EPSG:26918", "EPSG:2260", always_xy=True).transform(
        *shapely.get_coordinates(point, include_z=point.has_z)[0].tolist()
    )
    assert shapely.get_coordinates(moved, include_z=point.has_z)[0].tolist() == list(want)
