"""Disturbed area is the union: properties that hold for any arrangement of polygons."""

import geopandas as gpd
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pyproj import CRS
from shapely import box

from analysis.checks.applicability import disturbed_area
from analysis.siteplan.plan import SitePlan
from analysis.units import acres
from tests.analysis.conftest import X0, Y0

rectangles = st.lists(
    st.tuples(st.floats(0, 800), st.floats(0, 800), st.floats(1, 400), st.floats(1, 400)),
    min_size=1,
    max_size=12,
)


def site_of(polygons):
    frame = gpd.GeoDataFrame({"phase": ["1"] * len(polygons)}, geometry=list(polygons), crs="EPSG:2260")
    return SitePlan(
        path="memory",
        area_crs=CRS("EPSG:2260"),
        input_crs="EPSG:2260",
        project={"land_use": "commercial"},
        layers={"disturbance": frame},
    )


@settings(max_examples=60, deadline=None)
@given(rectangles, st.randoms(use_true_random=False))
def test_union_bounded_by_parts_and_independent_of_order(specs, random):
    polygons = [box(X0 + x, Y0 + y, X0 + x + w, Y0 + y + h) for x, y, w, h in specs]
    parts = acres(np.array(polygons, dtype=object), "EPSG:2260")
    total = disturbed_area(site_of(polygons)).acres
    assert total <= parts.sum() * (1 + 1e-9)
    assert total >= parts.max() * (1 - 1e-9)
    shuffled = polygons[:]
    random.shuffle(shuffled)
    assert disturbed_area(site_of(shuffled)).acres == pytest.approx(total, rel=1e-9)


def test_identical_polygons_count_once():
    square = box(X0, Y0, X0 + 200, Y0 + 200)
    assert disturbed_area(site_of([square, square, square])).acres == pytest.approx(
        acres(square, "EPSG:2260")
    )
