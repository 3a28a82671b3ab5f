"""analysis.threads.each: element-wise shapely work split among cores gives the single call's answer."""

from __future__ import annotations

import numpy as np
import shapely

from analysis import threads


def _squares(n: int, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0, 1000, n), rng.uniform(0, 1000, n)
    return shapely.box(x, y, x + rng.uniform(1, 20, n), y + rng.uniform(1, 20, n))


def test_each_equals_the_single_call_element_by_element(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 3)  # three shares even on a one-core runner
    a, b = _squares(2_000), _squares(2_000, seed=6)
    distance = np.linspace(0.5, 5.0, 2_000)
    for got, expected in (
        (threads.each(shapely.buffer, a, distance), shapely.buffer(a, distance)),
        (threads.each(shapely.buffer, a, 2.0, quad_segs=4), shapely.buffer(a, 2.0, quad_segs=4)),
        (threads.each(shapely.intersection, a, b), shapely.intersection(a, b)),
        (threads.each(shapely.intersects, a, b), shapely.intersects(a, b)),
    ):
        assert got.shape == expected.shape
        if got.dtype == object:
            assert shapely.equals_exact(got, expected, tolerance=0).all()
        else:
            assert (got == expected).all()


def test_each_unions_a_table_row_by_row(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    table = _squares(3_000).reshape(1_500, 2)
    table[::7, 1] = None
    got = threads.each(shapely.union_all, table, axis=1)
    assert got.shape == (1_500,)
    assert shapely.equals_exact(got, shapely.union_all(table, axis=1), tolerance=0).all()


def test_small_or_unequal_arrays_are_one_call(monkeypatch):
    calls = []

    def counted(*arrays):
        calls.append(len(arrays[0]))
        return shapely.area(arrays[0])

    monkeypatch.setattr(threads, "cores", lambda: 4)
    threads.each(counted, _squares(100))
    threads.each(counted, _squares(2_000), _squares(10))
    assert calls == [100, 2_000]
    threads.each(counted, _squares(4_000))
    assert sorted(calls[2:]) == [1_000] * 4


def test_query_gives_the_single_calls_pairs_in_its_order(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 3)
    tree = shapely.STRtree(_squares(3_000))
    geometries = _squares(2_500, seed=7)
    reach = np.linspace(0.0, 30.0, 2_500)
    for keywords in (
        {},
        {"predicate": "intersects"},
        {"predicate": "dwithin", "distance": 12.5},
        {"predicate": "dwithin", "distance": reach},
    ):
        got = threads.query(tree, geometries, **dict(keywords))
        expected = tree.query(geometries, **dict(keywords))
        assert got.shape == expected.shape and (got == expected).all(), keywords
        assert got.shape[1] > 2_500  # enough pairs that a wrong offset or order would show


def test_each_piece_keeps_the_pieces_order(monkeypatch):
    monkeypatch.setattr(threads, "cores", lambda: 2)
    pieces = [np.arange(k, k + 10) for k in range(0, 200, 10)]
    assert [p.tolist() for p in threads.each_piece(lambda p: p * 2, pieces)] == [
        (p * 2).tolist() for p in pieces
    ]
