"""``analysis.overlay.shared_parts``: the one measure of what a part shares with its polygon
(the review's and the screen's), equal to the plain overlay wherever there is an area."""

import numpy as np
import shapely

from analysis.overlay import _MANY_VERTICES, shared_parts


def _catchment(x0, y0, x1, y1):
    """A box drawn with many vertices, as a HUC-12 boundary is."""
    return shapely.segmentize(shapely.box(x0, y0, x1, y1), (x1 - x0) / (2 * _MANY_VERTICES))


def test_the_shared_area_is_the_overlays_whatever_the_case():
    rng = np.random.default_rng(7)
    polygons = np.array(
        [
            _catchment(0, 0, 100, 100),
            _catchment(100, 0, 200, 100),
            shapely.Polygon([(0, 0), (300, 0), (0, 300)]),
        ],
        dtype=object,
    )
    which = rng.integers(0, 3, 1500)
    x, y, side = rng.uniform(-20, 220, 1500), rng.uniform(-20, 120, 1500), rng.uniform(1, 60, 1500)
    parts = shapely.box(x, y, x + side, y + side)
    parts[::5] = [_catchment(100, 0, 200, 100)] * len(parts[::5])  # touches the first, is the second
    parts[1::5] = [_catchment(50, 50, 150, 150)] * len(parts[1::5])  # overlaps them partly
    parts[2::5] = [shapely.box(100, 10, 110, 20)] * len(parts[2::5])  # a site on an edge
    got = shared_parts(polygons[which], parts)
    want = shapely.intersection(polygons[which], parts)
    assert np.allclose(shapely.area(got), shapely.area(want), rtol=0, atol=1e-9)
    shared = shapely.area(want) > 0
    assert shapely.equals(got[shared], want[shared]).all()
    assert (shapely.is_empty(got[~shared]) | (shapely.area(got[~shared]) == 0)).all()
    # Each case was met: covered parts, touching catchments, partial overlaps.
    assert shapely.equals(got[shared], parts[shared]).any()
    assert (~shared & (shapely.get_num_coordinates(parts) >= _MANY_VERTICES)).any()
    assert (shared & ~shapely.equals(got, parts)).any()


def test_a_catchment_sharing_a_watersheds_edge_shares_nothing():
    shed, next_door = _catchment(0, 0, 100, 100), _catchment(100, 0, 200, 100)
    got = shared_parts(np.array([shed, shed], dtype=object), np.array([next_door, shed], dtype=object))
    assert shapely.is_empty(got[0]) and shapely.area(got[0]) == 0
    assert got[1] is shed or shapely.equals(got[1], shed)


def test_nothing_given_gives_nothing():
    assert len(shared_parts(np.array([], dtype=object), np.array([], dtype=object))) == 0
