"""One area function: planar, in the area CRS, international acres."""

import math

import numpy as np
import pytest
import shapely
from pyproj import Transformer
from shapely import box

from analysis.units import ACRE_M2, acres, square_feet, unit_metres


def test_us_survey_foot_square_of_one_acre():
    side = math.sqrt(ACRE_M2) / (1200 / 3937)
    assert acres(box(0, 0, side, side), "EPSG:2260") == pytest.approx(1.0, rel=1e-12)


def test_metre_square_of_one_hectare():
    assert acres(box(0, 0, 100, 100), "EPSG:26918") == pytest.approx(10_000 / ACRE_M2, rel=1e-12)


def test_vectorised_over_arrays():
    out = acres(np.array([box(0, 0, 100, 100), box(0, 0, 200, 100)]), "EPSG:26918")
    assert out.shape == (2,) and out[1] == pytest.approx(2 * out[0])


def test_square_feet_are_international_feet():
    assert square_feet(box(0, 0, 1, 1), "EPSG:26918") == pytest.approx(1 / 0.3048**2)


def test_geographic_crs_is_refused():
    with pytest.raises(ValueError, match="projected"):
        unit_metres("EPSG:4326")


def test_same_ground_in_two_crs_agrees():
    square_utm = box(582_000, 4_577_000, 582_300, 4_577_300)
    to_ny = Transformer.from_crs("EPSG:26918", "EPSG:2260", always_xy=True)
    square_ny = shapely.transform(square_utm, lambda xy: np.column_stack(to_ny.transform(*xy.T)))
    assert acres(square_ny, "EPSG:2260") == pytest.approx(acres(square_utm, "EPSG:26918"), rel=1e-3)
