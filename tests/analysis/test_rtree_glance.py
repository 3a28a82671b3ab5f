"""A store's R-tree is vouched for at a glance on open (issue 37): a one-site review of a
statewide store no longer reads the whole layer to check its index (3.9 s at a million
wetlands, for a review whose own reads take 25 ms), and an index that disagrees is still found.

The work is counted in SQLite's virtual-machine steps (its progress handler), not timed."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest
import shapely

from analysis.cli import main
from analysis.io.geopackage import rtree_agrees_at_a_glance, rtree_disagreement

COUNT = 4_000


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store holding COUNT wetlands, written by `swppp reference import` as GIS staff do."""
    import geopandas as gpd

    folder = tmp_path_factory.mktemp("glance")
    x, y = shapely.get_coordinates(shapely.points(range(COUNT), range(COUNT))).T
    squares = shapely.box(600000 + 30 * x, 700000 + 7 * y, 600020 + 30 * x, 700020 + 7 * y)
    source = folder / "wetlands_source.gpkg"
    gpd.GeoDataFrame(
        {
            "wetland_id": [f"W{i}" for i in range(COUNT)],
            "source": "test",
            "wetland_class": "PEM",
            "regulated": 1.0,
            "adjacent_area_ft": 100.0,
        },
        geometry=gpd.GeoSeries(squares, crs="EPSG:2260"),
    ).to_file(source, layer="wetlands", driver="GPKG")
    target = folder / "store.gpkg"
    assert main(["reference", "import", "wetlands", str(source), "--reference", str(target), "--quiet"]) == 0
    return target


def _steps(con: sqlite3.Connection, ask) -> tuple[object, int]:
    """(what ``ask()`` answers, the SQLite virtual-machine steps it took, in thousands)."""
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    con.set_progress_handler(count, 1000)
    try:
        return ask(), steps[0]
    finally:
        con.set_progress_handler(None, 0)


def test_a_store_just_imported_is_vouched_for_without_reading_its_layer(store):
    with closing(sqlite3.connect(store)) as con:
        agrees, glance = _steps(con, lambda: rtree_agrees_at_a_glance(con, "wetlands", "geom", "fid", COUNT))
        whole, full = _steps(con, lambda: rtree_disagreement(con, "wetlands", "geom", "fid"))
    assert agrees is True and whole is None
    # The whole check reads every feature; the glance counts the R-tree's ids and reads two
    # ends of two B-trees and one node: far under a tenth of the work at this size.
    assert glance * 10 < full, (glance, full)


BREAKS = {
    "one-entry-lost": "DELETE FROM rtree_wetlands_geom WHERE id = 1234",
    "emptied": "DELETE FROM rtree_wetlands_geom",
    "moved": "UPDATE rtree_wetlands_geom SET minx = minx + 50000, maxx = maxx + 50000",
    "renumbered": "UPDATE rtree_wetlands_geom SET id = id + 100000",
    # A writer without the GeoPackage's SQL functions, its R-tree triggers dropped first.
    "a-feature-added-without-its-entry": (
        "DROP TRIGGER rtree_wetlands_geom_insert; "
        "INSERT INTO wetlands (geom, wetland_id) SELECT geom, 'extra' FROM wetlands WHERE fid = 1"
    ),
}


@pytest.mark.parametrize("how", sorted(BREAKS), ids=[f"wrong-12-at-a-glance-{h}" for h in sorted(BREAKS)])
def test_an_index_that_disagrees_is_not_vouched_for_and_the_whole_check_finds_it(how, store, tmp_path):
    broken = tmp_path / "broken.gpkg"
    broken.write_bytes(store.read_bytes())
    with closing(sqlite3.connect(broken)) as con, con:
        con.executescript(BREAKS[how])
    with closing(sqlite3.connect(broken)) as con:
        assert rtree_agrees_at_a_glance(con, "wetlands", "geom", "fid", COUNT) is False
        assert rtree_disagreement(con, "wetlands", "geom", "fid", COUNT) is not None


def test_a_count_the_store_did_not_record_is_asked_of_the_whole_layer(store):
    """No recorded count (a GeoPackage not imported by the tool): the whole check runs."""
    with closing(sqlite3.connect(store)) as con:
        assert rtree_agrees_at_a_glance(con, "wetlands", "geom", "fid", COUNT + 1) is False
        assert rtree_disagreement(con, "wetlands", "geom", "fid", None) is None


def _repair_steps(path) -> tuple[bool, int]:
    """(whether the store's indexes were known to agree on open, the SQLite steps, in
    thousands, that opening the store for a review (its index check) took)."""
    from analysis.io.geopackage import geopackage_reader, rtrees_known_to_agree
    from analysis.reference.store import GeoPackageStore

    with closing(geopackage_reader(path)) as con:
        known = rtrees_known_to_agree(con, path)
        return known, _steps(con, lambda: GeoPackageStore(path).repair_indexes(con))[1]


@pytest.mark.parametrize("journal", ["rollback", "wal"])
@pytest.mark.parametrize("how", sorted(BREAKS), ids=[f"wrong-12-after-an-open-{h}" for h in sorted(BREAKS)])
def test_an_index_found_agreeing_is_not_checked_again_until_the_file_changes(how, journal, store, tmp_path):
    """The panel reviews one site after another: a store this process found agreeing is not
    checked again while it is unchanged (no SQLite step at all), and any commit to it, in
    rollback-journal or write-ahead-log mode (the log kept open, not yet copied into the
    file), has its indexes checked again on the next open: a broken one is found and rebuilt."""
    from analysis.reference.read import open_reference

    copied = tmp_path / "store.gpkg"
    copied.write_bytes(store.read_bytes())
    open_reference(copied)  # the first review: checked, found agreeing
    assert _repair_steps(copied) == (True, 0)
    writer = sqlite3.connect(copied, isolation_level=None)
    try:
        if journal == "wal":
            writer.execute("PRAGMA journal_mode = WAL")
            writer.execute("PRAGMA wal_autocheckpoint = 0")  # the commit stays in the log
            open_reference(copied)  # the file in WAL mode, as found once more
            assert _repair_steps(copied) == (True, 0)
        writer.executescript(f"BEGIN; {BREAKS[how]}; COMMIT;")
        if journal == "wal":
            assert (tmp_path / "store.gpkg-wal").stat().st_size > 0
        known, steps = _repair_steps(copied)  # the next review's open: checked, and rebuilt
        assert not known and steps > 0
        with closing(sqlite3.connect(copied)) as con:
            assert rtree_disagreement(con, "wetlands", "geom", "fid") is None
    finally:
        writer.close()
