"""The one catchment-route walk (analysis.reference.route) the review, the screen and the plugin share."""

import numpy as np
import pandas as pd
import pytest
import shapely
from shapely.geometry import box

from analysis.overlay import shared_parts
from analysis.reference.route import overlapping, place, walk


class Layer:
    """A catchments layer looked up by id (trimmed, as the reference looks them up), counting
    the look-ups and what each asked."""

    def __init__(self, drains: dict):
        self.drains = {str(k).strip(): v for k, v in drains.items()}
        self.asked: list[set] = []

    def __call__(self, wanted):
        self.asked.append(set(wanted))
        return {w.strip(): self.drains[w.strip()] for w in wanted if w.strip() in self.drains}


def ids(level):
    return [(s.key, s.catchment_id) for s in level]


def test_a_cycle_is_followed_once_and_ends():
    layer = Layer({"A": "B", "B": "C", "C": "A"})
    met = walk([(1, "A", "B", "site 1 lies in catchment A")], layer, 10)
    assert [ids(level) for level in met.levels] == [[(1, "A")], [(1, "B")], [(1, "C")]]
    assert met.waters == [] and met.cut == []  # C's A is the start: met already, not a water
    assert len(layer.asked) == 3


def test_the_hop_limit_cuts_the_route_and_says_so():
    layer = Layer({"A": "B", "B": "C", "C": "D", "D": "NY-1"})
    met = walk([(1, "A", "B", "catchment A")], layer, 1)
    assert [ids(level) for level in met.levels] == [[(1, "A")], [(1, "B")]]
    assert met.waters == []  # C is looked up: a catchment, not a water named C
    assert [c.note for c in met.cut] == [
        "catchment A, which drains to catchment B, which drains to catchment C: not followed "
        "further ([condition_a] downstream_catchment_hops = 1)"
    ]
    assert layer.asked == [{"B"}, {"C"}]
    none = walk([(1, "A", "B", "catchment A")], Layer({"A": "B", "B": "C"}), 0)
    assert [c.catchment_id for c in none.cut] == ["B"] and len(none.levels) == 1


def test_ids_with_spaces_and_quotes_are_trimmed_and_kept_whole():
    brook = 'O\'Brien "North" Brook'
    layer = Layer({f"  {brook} ": "ny1301-0099 ; Mill Pond ", "A": f" {brook};A"})
    met = walk([("s", " A ", f" {brook};A", "catchment A")], layer, 2)
    assert ids(met.levels[1]) == [("s", brook)]
    assert met.levels[1][0].route == f"catchment A, which drains to catchment {brook}"
    assert [(w.step.catchment_id, w.water_id) for w in met.waters] == [
        (brook, "NY1301-0099"),
        (brook, "MILL POND"),
    ]
    assert layer.asked[0] == {brook, "A"}  # its own id asked, but neither a water nor a route


def test_a_water_and_a_catchment_in_one_drains_to():
    layer = Layer({"A": "ny-1;B", "B": "NY-2"})
    met = walk([(7, "A", "ny-1;B", "the site lies in catchment A")], layer, 3)
    assert [(w.step.depth, w.water_id, w.route) for w in met.waters] == [
        (0, "NY-1", "the site lies in catchment A, which drains to NY-1"),
        (1, "NY-2", "the site lies in catchment A, which drains to catchment B, which drains to NY-2"),
    ]
    assert ids(met.levels[1]) == [(7, "B")] and met.levels[1][0].drains_to == "NY-2"


def test_many_starts_sharing_a_downstream_catchment():
    """Each start's route is its own (its key met once per key), in one look-up per level; an id
    is asked once in the walk."""
    layer = Layer({"S": "NY-9;T", "T": "NY-9"})
    starts = [
        (1, "A1", "S", "site 1 in A1"),
        (2, "A2", "S; NY-1", "site 2 in A2"),
        (2, "A3", "S", "site 2 in A3"),
        (3, "A4", "T", "site 3 in A4"),
    ]
    met = walk(starts, layer, 5)
    assert ids(met.levels[1]) == [(1, "S"), (2, "S"), (3, "T")]  # site 2 through A2 first
    assert [s.start for s in met.levels[1]] == [0, 1, 3]
    assert ids(met.levels[2]) == [(1, "T"), (2, "T")]  # site 3 met T already
    assert [(w.step.key, w.water_id) for w in met.waters] == [
        (2, "NY-1"),
        (1, "NY-9"),
        (2, "NY-9"),
        (3, "NY-9"),
        (1, "NY-9"),
        (2, "NY-9"),
    ]
    assert (
        met.waters[-1].route == "site 2 in A2, which drains to catchment S, which drains to "
        "catchment T, which drains to NY-9"
    )
    assert layer.asked == [{"S", "NY-1", "T"}, {"NY-9"}]  # T known from the first level
    assert len(met.levels) == 3 and met.cut == []


def test_place_reads_each_level_once_around_each_keys_catchments():
    """A downstream catchment's shape is taken only next to its key's catchments above."""
    layer = Layer({"B": "NY-1"})
    met = walk([(1, "A1", "B", "a1"), (2, "A2", "B", "a2")], layer, 1)
    frame = pd.DataFrame({"catchment_id": [" B "], "geometry": [box(1, 0, 2, 1)]})
    reads = []

    def read(layer_name, boxes):
        reads.append((layer_name, np.asarray(boxes).tolist()))
        return frame

    shapes = place(met, [box(0, 0, 1, 1), box(50, 50, 51, 51)], read, pad=0.5)
    assert reads == [("catchments", [[-0.5, -0.5, 1.5, 1.5], [49.5, 49.5, 51.5, 51.5]])]
    assert shapely.equals(shapes[1][0], box(1, 0, 2, 1)) and shapes[1][1] is None
    assert place(met, [None, None], read, pad=0.5)[1] == [None, None] and len(reads) == 1


def test_place_reads_no_catchment_already_known():
    layer = Layer({"B": "C", "C": "NY-1"})
    met = walk([(1, "A", "B", "a")], layer, 2)
    reads = []

    def read(layer_name, boxes):
        reads.append(layer_name)
        return pd.DataFrame({"catchment_id": ["C"], "geometry": [box(2, 0, 3, 1)]})

    known = {"B": box(1, 0, 2, 1), "Z": box(9, 9, 10, 10)}
    shapes = place(met, [box(0, 0, 1, 1)], read, pad=0.5, known=known)
    assert reads == ["catchments"]  # B known: only the level below it is read
    assert shapes[1] == [known["B"]] and shapely.equals(shapes[2][0], box(2, 0, 3, 1))
    far = place(met, [box(0, 0, 1, 1)], read, pad=0.5, known={"B": box(40, 0, 41, 1)})
    assert far[1] == [None] and far[2] == [None]  # a known shape away from the box is not it


def test_overlapping_meets_a_shape_given_twice_once(monkeypatch):
    """Two routes through one catchment: its watersheds are read and measured once, and told for
    both; pairs by shape, then feature; a touch (no area) is not an overlap."""
    import analysis.overlay as overlay

    shared, other = box(0, 0, 10, 10), box(20, 0, 30, 10)
    sheds = pd.DataFrame(
        {
            "watershed_id": ["W1", "W2", "W3"],
            "geometry": [box(5, 5, 15, 15), box(-5, -5, 50, 50), box(10, 0, 20, 10)],
        }
    )
    asked, measured = [], []

    def read(layer_name, boxes):
        asked.append(np.asarray(boxes).tolist())
        return sheds

    def counted(a, b):  # the real overlay, its pairs counted
        measured.append(len(a))
        return shared_parts(a, b)

    monkeypatch.setattr(overlay, "shared_parts", counted)
    frame, pairs = overlapping("tmdl_watersheds", [shared, other, shared], read, 1.0, 1.0, "EPSG:2260")
    assert len(asked[0]) == 2 and measured == [5]  # 2 distinct shapes; W3 touches both
    assert [(step, k) for step, k, _ in pairs] == [(0, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    # each pair with the square feet shared (EPSG:2260 is in US survey feet): W1 a quarter
    assert [shared_sq_ft for _, _, shared_sq_ft in pairs] == pytest.approx(
        [25.0, 100.0, 100.0, 25.0, 100.0], rel=1e-5
    )
