"""``swppp reference``: import, versions, atomicity, diff and status, in a GeoPackage and in PostGIS.

Every test here runs against both stores: a GeoPackage in tmp_path, and a fresh schema of the
real PostgreSQL the session started (tests/postgis.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Optional

import geopandas as gpd
import pytest
from shapely import box

from analysis.cli import main
from analysis.io.vector import write_geopackage
from analysis.reference.connect import open_store
from analysis.reference.store import PAUSE_AFTER_ENV, PAUSE_FILE_ENV
from tests.analysis.conftest import X0, Y0
from tests.conftest import ROOT, TEST_DATA

SOURCES = TEST_DATA / "reference_sources"


@dataclass
class Target:
    into: str
    schema: Optional[str]

    def args(self) -> list[str]:
        return [self.into] + (["--schema", self.schema] if self.schema else [])

    def store(self):
        return open_store(self.into, self.schema)


@pytest.fixture(params=["gpkg", "postgis"])
def target(request, tmp_path):
    if request.param == "gpkg":
        return Target(str(tmp_path / "reference.gpkg"), None)
    server = request.getfixturevalue("postgis_server")
    return Target(server.conninfo(), f"t_{uuid.uuid4().hex[:10]}")


def reference(*args, capsys=None):
    status = main(["reference", *map(str, args)])
    out, err = capsys.readouterr() if capsys else ("", "")
    return status, out, err


def import_pwl(target, cycle, capsys):
    return reference(
        "import",
        "impaired_waters",
        SOURCES / f"pwl_{cycle}.csv",
        "--reference",
        *target.args(),
        "--format",
        "pwl",
        "--geometry",
        SOURCES / "waters.gpkg",
        "--map",
        SOURCES / "pwl_geometry_mapping.toml",
        "--source-date",
        f"{cycle}-04-01",
        # one water lacks a geometry: its listing goes to a temporary file, not the cwd
        "--rejections",
        Path(tempfile.mkdtemp()) / "rejected.csv",
        capsys=capsys,
    )


def wetlands_source(path, count, x=X0, y=Y0):
    """``count`` square wetlands 100 ft apart, ids W-0.. (EPSG:2260)."""
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": [f"W-{i}" for i in range(count)],
            "source": ["NYSDEC"] * count,
            "wetland_class": ["II"] * count,
            "regulated": [1] * count,
            "adjacent_area_ft": [100.0] * count,
        },
        geometry=[box(x + 150 * i, y, x + 150 * i + 100, y + 100) for i in range(count)],
        crs="EPSG:2260",
    )
    write_geopackage(path, {"wetlands": frame})
    return path


def test_two_pwl_releases_give_versions_and_a_correct_diff(target, capsys):
    status, out, _ = import_pwl(target, "2022", capsys)
    assert status == 0, out
    # NY1301-0300 has no feature in the geometry file: kept without geometry (issue 34, 5)
    assert "imported as version 1 (3 features)" in out
    assert "have no feature in waters.gpkg: kept without geometry" in out and "NY1301-0300" in out
    assert import_pwl(target, "2024", capsys)[0] == 0
    versions = target.store().versions("impaired_waters")
    assert [(v.version, v.feature_count, v.source_date) for v in versions] == [
        (1, 3, "2022-04-01"),
        (2, 2, "2024-04-01"),
    ]

    status, out, _ = reference(
        "diff", "impaired_waters", "--reference", *target.args(), "--json", "-", capsys=capsys
    )
    assert status == 0
    diff = json.loads(out)
    by_id = {c["id"]: c for c in diff["changes"]}
    assert (diff["from"], diff["to"]) == (1, 2)
    assert by_id["NY1301-0200"]["change"] == "newly listed"
    assert by_id["NY1301-0123"]["change"] == "delisted"
    assert by_id["NY1301-0123"]["pollutants_removed"] == ["PHOSPHORUS"]  # "PHOSPHORUS, TOTAL" folded
    assert by_id["NY1301-0099"]["change"] == "changed"
    assert by_id["NY1301-0099"]["pollutants_added"] == ["PHOSPHORUS"]
    assert by_id["NY1301-0099"]["pollutants_removed"] == []
    assert by_id["NY1301-0099"]["geometry_changed"] is False
    assert by_id["NY1301-0099"]["fields_changed"] == {"listing_cycle": ["2022", "2024"]}
    assert by_id["NY1301-0300"]["change"] == "delisted"  # listed in 2022 only, truly
    assert set(by_id) == {"NY1301-0200", "NY1301-0123", "NY1301-0099", "NY1301-0300"}


def test_diff_table_and_layer_for_qgis(target, tmp_path, capsys):
    import_pwl(target, "2022", capsys)
    import_pwl(target, "2024", capsys)
    layer = tmp_path / "diff.gpkg"
    status, out, _ = reference(
        "diff",
        "impaired_waters",
        "--reference",
        *target.args(),
        "--from",
        "1",
        "--to",
        "2",
        "--output",
        layer,
        capsys=capsys,
    )
    assert status == 0
    assert "1 newly listed, 2 delisted" in out
    assert "NY1301-0099" in out and "pollutants added: PHOSPHORUS" in out
    frame = gpd.read_file(layer, layer="impaired_waters_diff")
    assert sorted(frame.change) == ["changed", "delisted", "delisted", "newly listed"]
    # NY1301-0300 was kept without geometry: its row has none
    assert frame.crs.to_epsg() == 2260
    assert frame.geometry.notna().sum() == 3


def test_geometry_moved_beyond_tolerance_is_a_change(target, tmp_path, capsys):
    first = wetlands_source(tmp_path / "w1.gpkg", 3)
    second = tmp_path / "w2.gpkg"
    frame = gpd.read_file(first)
    frame.loc[1, "geometry"] = box(X0 + 150, Y0, X0 + 250 + 5.0, Y0 + 100)  # 5 ft wider
    frame.loc[2, "geometry"] = box(X0 + 300, Y0, X0 + 400 + 0.01, Y0 + 100)  # round-off
    write_geopackage(second, {"wetlands": frame})
    for source in (first, second):
        assert reference("import", "wetlands", source, "--reference", *target.args(), capsys=capsys)[0] == 0
    diff = json.loads(
        reference("diff", "wetlands", "--reference", *target.args(), "--json", "-", capsys=capsys)[1]
    )
    assert [(c["id"], c["geometry_changed"]) for c in diff["changes"]] == [("W-1", True)]


def test_reimport_of_the_same_file_is_recognised_by_sha256(target, capsys):
    import_pwl(target, "2022", capsys)
    status, out, _ = import_pwl(target, "2022", capsys)
    assert status == 0
    assert "already imported as version 1 (same sha256" in out and "nothing changed" in out
    assert len(target.store().versions("impaired_waters")) == 1


def test_a_source_lacking_a_required_field_is_refused_and_nothing_changes(target, tmp_path, capsys):
    good = wetlands_source(tmp_path / "good.gpkg", 3)
    assert reference("import", "wetlands", good, "--reference", *target.args(), capsys=capsys)[0] == 0
    before = target.store().versions()
    snapshot = Path(target.into).read_bytes() if target.schema is None else None
    bad = tmp_path / "bad.gpkg"
    write_geopackage(bad, {"wetlands": gpd.read_file(good).drop(columns=["regulated"])})

    status, _, err = reference("import", "wetlands", bad, "--reference", *target.args(), capsys=capsys)

    assert status == 2
    assert "field 'regulated'" in err and "--map" in err
    assert target.store().versions() == before
    if snapshot is not None:
        assert Path(target.into).read_bytes() == snapshot
    assert len(target.store().read_version("wetlands", 1)) == 3


def _paused_import(target, source, tmp_path, after):
    marker = tmp_path / f"paused-{uuid.uuid4().hex[:6]}"
    log = tmp_path / "import.log"
    env = {
        **os.environ,
        PAUSE_AFTER_ENV: str(after),
        PAUSE_FILE_ENV: str(marker),
        "PROJ_DATA": "/usr/share/proj",
    }
    with open(log, "wb") as errors:  # the child keeps its own copy of the descriptor
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "analysis.cli",
                "reference",
                "import",
                "wetlands",
                str(source),
                "--reference",
                *target.args(),
                "--quiet",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    deadline = time.monotonic() + 120
    while not marker.exists():
        if child.poll() is not None:
            raise AssertionError(f"the import ended before pausing: {log.read_text()}")
        assert time.monotonic() < deadline, "the import never reached the pause"
        time.sleep(0.05)
    assert int(marker.read_text()) == after
    return child


def test_an_import_killed_part_way_leaves_the_previous_version_intact(target, tmp_path, capsys):
    old = wetlands_source(tmp_path / "old.gpkg", 3)
    assert reference("import", "wetlands", old, "--reference", *target.args(), capsys=capsys)[0] == 0
    new = wetlands_source(tmp_path / "new.gpkg", 40, y=Y0 + 1000)
    child = _paused_import(target, new, tmp_path, after=25)
    try:
        # While 25 of the new features are written, a reader sees the old version, whole.
        during = target.store().versions("wetlands")
        assert [v.version for v in during] == [1]
        assert _current_ids(target) == ["W-0", "W-1", "W-2"]
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL
    # Read first as a review does (GDAL opens a GeoPackage read-only), then through the store.
    assert _current_ids(target) == ["W-0", "W-1", "W-2"]
    assert [v.version for v in target.store().versions("wetlands")] == [1]
    assert len(target.store().read_version("wetlands", 1)) == 3
    # And the store takes the next import as if nothing had happened.
    assert reference("import", "wetlands", new, "--reference", *target.args(), capsys=capsys)[0] == 0
    assert [v.version for v in target.store().versions("wetlands")] == [1, 2]
    assert len(_current_ids(target)) == 40


# A process killed inside the commit of an import: its writes already in the file, the rollback
# journal left behind ("hot"). Made here with plain sqlite3 and a tiny page cache, so that pages
# spill into the file before the kill, as they do once a commit starts writing.
KILLED_IN_COMMIT = """
import os, signal, sqlite3, sys
con = sqlite3.connect(sys.argv[1], isolation_level=None)
con.execute("PRAGMA cache_size = 2")
con.execute("BEGIN IMMEDIATE")
con.execute("UPDATE layer_versions SET feature_count = 999")
con.execute("CREATE TABLE half_written (b BLOB)")
con.executemany("INSERT INTO half_written VALUES (randomblob(4096))", [()] * 500)
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_an_import_killed_in_its_commit_is_rolled_back_before_a_review_reads(tmp_path, capsys):
    from analysis.reference.read import open_reference

    target = Target(str(tmp_path / "reference.gpkg"), None)
    old = wetlands_source(tmp_path / "old.gpkg", 3)
    assert reference("import", "wetlands", old, "--reference", *target.args(), capsys=capsys)[0] == 0
    killed = subprocess.run([sys.executable, "-c", KILLED_IN_COMMIT, target.into], check=False)
    assert killed.returncode == -signal.SIGKILL
    journal = Path(f"{target.into}-journal")
    assert journal.exists() and journal.stat().st_size > 0  # hot: the file holds half a commit

    # What a review does: open the reference (recovery first), then read through GDAL, read-only.
    read = open_reference(target.into).read(
        "wetlands", (X0 - 500, Y0 - 500, X0 + 1000, Y0 + 500), "EPSG:2260"
    )
    assert sorted(read.wetland_id) == ["W-0", "W-1", "W-2"]
    assert not journal.exists() or journal.stat().st_size == 0
    assert [(v.version, v.feature_count) for v in target.store().versions("wetlands")] == [(1, 3)]
    assert (
        reference(
            "import",
            "wetlands",
            wetlands_source(tmp_path / "new.gpkg", 5),
            "--reference",
            *target.args(),
            capsys=capsys,
        )[0]
        == 0
    )
    assert [v.version for v in target.store().versions("wetlands")] == [1, 2]


def _current_ids(target) -> list[str]:
    """The current wetlands as a review reads them (around the whole test area)."""
    bounds = (X0 - 10_000, Y0 - 10_000, X0 + 20_000, Y0 + 20_000)
    if target.schema is None:
        from analysis.io.vector import read_layer

        frame = read_layer(target.into, "wetlands", bbox=bounds).frame
    else:
        from analysis.reference.postgis import PostgisReference

        frame = PostgisReference(target.into, target.schema).read("wetlands", bounds, "EPSG:2260")
    return sorted(frame.wetland_id)


def test_status_lists_versions_and_warns_when_the_303d_list_is_older_than_the_profile(
    target, tmp_path, capsys
):
    import_pwl(target, "2022", capsys)
    status, out, _ = reference("status", "--reference", *target.args(), "--json", "-", capsys=capsys)
    assert status == 0
    result = json.loads(out)
    layers = {e["layer"]: e for e in result["layers"]}
    assert layers["impaired_waters"]["current"] == 1
    assert layers["impaired_waters"]["listing_cycle"] == "2022"
    source_date = date.fromisoformat(layers["impaired_waters"]["versions"][-1]["source_date"][:10])
    assert layers["impaired_waters"]["source_days_old"] == (date.today() - source_date).days
    # pwl_2022.csv names one water the geometry file lacks: kept without geometry, not
    # rejected (issue 34, item 5), so status warns of no rejection.
    assert [w for w in result["warnings"] if w.startswith("impaired_waters")] == []
    assert "wetlands: no version stored; the checks that read it say needs_review" in result["warnings"]

    profile = tmp_path / "newer.toml"
    text = (ROOT / "analysis/profiles/kiryas_joel.toml").read_text(encoding="utf-8")
    profile.write_text(
        text.replace('current_listing_cycle = "2018"', 'current_listing_cycle = "2024"'), encoding="utf-8"
    )
    status, out, _ = reference("status", "--reference", *target.args(), "--profile", profile, capsys=capsys)
    assert status == 0
    assert (
        "WARNING impaired_waters: version 1 lists cycle 2022, older than the current listing "
        "cycle 2024" in out
    )


def test_attains_assessments_and_pwl_give_the_same_layer(target, capsys):
    status, out, _ = reference(
        "import",
        "impaired_waters",
        SOURCES / "attains_assessments_2022.json",
        "--reference",
        *target.args(),
        "--format",
        "attains",
        "--geometry",
        SOURCES / "waters.gpkg",
        "--map",
        SOURCES / "pwl_geometry_mapping.toml",
        "--rejections",
        Path(tempfile.mkdtemp()) / "rejected.csv",
        capsys=capsys,
    )
    assert status == 0, out
    store = target.store()
    from_attains = store.read_version("impaired_waters", 1)
    assert import_pwl(target, "2022", capsys)[0] == 0
    from_pwl = store.read_version("impaired_waters", 2)
    columns = ["waterbody_id", "pollutants", "listing_cycle", "category"]
    assert (
        from_attains[columns].sort_values("waterbody_id").values.tolist()
        == from_pwl[columns].sort_values("waterbody_id").values.tolist()
    )
    # The unit with no feature in the geometry file is kept, nameless (ATTAINS gives no name)
    names = {None if name is None or name != name else name for name in from_attains.name}  # NaN: pyogrio
    assert names == {"Seven Springs Creek tributary", "Example Brook", None}


def test_a_review_records_the_versions_it_read(target, tmp_path, capsys):
    demo = TEST_DATA / "demo_reference.gpkg"
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments"):
        status, _, err = reference(
            "import",
            layer,
            f"{demo}|layername={layer}",
            "--reference",
            *target.args(),
            "--source-date",
            "2026-01-01",
            capsys=capsys,
        )
        assert status == 0, err
    import_pwl(target, "2022", capsys)  # impaired_waters version 2
    ref = target.into if target.schema is None else f"{target.into} schema={target.schema}"
    result_path = tmp_path / "review.json"

    status = main(
        [
            "review",
            str(TEST_DATA / "demo_site.gpkg"),
            "--reference",
            ref,
            "--json",
            str(result_path),
            "--report",
            str(tmp_path / "r.html"),
            "--quiet",
        ]
    )

    assert status in (0, 1)
    result = json.loads(result_path.read_text(encoding="utf-8"))
    # Condition A and wetlands read from the store (PostGIS too) as from the demo GeoPackage:
    # the discharge goes to NY1301-0099, listed for Silt/Sediment in the PWL 2022 version read.
    condition_a = result["conditions"]["A"]
    assert condition_a["applies"] is True and condition_a.get("decided", True) is True
    assert any(
        e.startswith(
            "NY1301-0099 Seven Springs Creek tributary is 303(d)-listed "
            "(listing cycle 2022, category 5) for SILT/SEDIMENT"
        )
        for e in condition_a["evidence"]
    ), condition_a["evidence"]
    assert result["measurements"]["wetland_acres"] == pytest.approx(0.10, abs=1e-6)
    recorded = result["reference"]["versions"]
    stored = {r.layer: r for r in target.store().versions()}
    assert {k: v["version"] for k, v in recorded.items()} == {
        "catchments": 1,
        "impaired_waters": 2,
        "tmdl_watersheds": 1,
        "wetlands": 1,
    }
    assert recorded["impaired_waters"]["sha256"] == stored["impaired_waters"].sha256
    assert "impaired_waters v2 (source 2022-04-01" in (tmp_path / "r.html").read_text(encoding="utf-8")


def test_a_version_made_before_swppp_imports_is_kept_for_diff(data_copy, capsys):
    """The demo's layer_versions rows came from the generator: the first import keeps them."""
    demo = data_copy("demo_reference.gpkg")
    target = Target(str(demo), None)
    assert import_pwl(target, "2022", capsys)[0] == 0
    assert [v.version for v in target.store().versions("impaired_waters")] == [1, 2]
    diff = json.loads(
        reference("diff", "impaired_waters", "--reference", demo, "--json", "-", capsys=capsys)[1]
    )
    by_id = {c["id"]: c for c in diff["changes"]}
    assert by_id["NY1301-0099"]["pollutants_removed"] == ["PHOSPHORUS"]  # demo: Silt/Sediment;Phosphorus
    assert by_id["NY1301-0099"]["geometry_changed"] is True  # the demo's line has one more vertex
    assert by_id["NY1301-0123"]["change"] == "changed"  # Phosphorus both times; category 4a both
    assert by_id["NY1301-0123"]["pollutants_added"] == by_id["NY1301-0123"]["pollutants_removed"] == []


def test_a_cancelled_import_changes_nothing(target, tmp_path, capsys):
    from analysis.errors import Cancelled
    from analysis.progress import Progress
    from analysis.reference.importer import read_candidate

    assert (
        reference(
            "import",
            "wetlands",
            wetlands_source(tmp_path / "a.gpkg", 3),
            "--reference",
            *target.args(),
            capsys=capsys,
        )[0]
        == 0
    )
    candidate = read_candidate("wetlands", wetlands_source(tmp_path / "b.gpkg", 5, y=Y0 + 500))
    asked = []
    progress = Progress(is_canceled=lambda: asked.append(1) or len(asked) > 1)  # cancel mid-write
    with pytest.raises(Cancelled):
        target.store().import_candidate(candidate, progress=progress)
    assert [v.version for v in target.store().versions("wetlands")] == [1]
    assert _current_ids(target) == ["W-0", "W-1", "W-2"]


def test_an_import_that_raced_another_is_refused(target, tmp_path, capsys, monkeypatch):
    from analysis.errors import InputError
    from analysis.reference.importer import read_candidate

    first = wetlands_source(tmp_path / "a.gpkg", 3)
    assert reference("import", "wetlands", first, "--reference", *target.args(), capsys=capsys)[0] == 0
    store = target.store()
    monkeypatch.setattr(store, "current", lambda layer: None)  # as if read before the first import
    with pytest.raises(InputError, match="another import of 'wetlands' finished"):
        store.import_candidate(read_candidate("wetlands", wetlands_source(tmp_path / "b.gpkg", 4)))
    assert [v.version for v in target.store().versions("wetlands")] == [1]


def test_waters_imported_without_geometry_are_stored_and_found_by_id(target, capsys):
    """ATTAINS assessments without a geometry file: NULL geometries in both stores, and a
    review's look-up by id finds the water (its category kept)."""
    from analysis.reference.read import open_reference
    from tests.conftest import shared_path

    real = shared_path("data/attains/sd_SDDENR_assessments.json")
    assert (
        reference(
            "import",
            "impaired_waters",
            real,
            "--format",
            "attains",
            "--reference",
            *target.args(),
            "--quiet",
            capsys=capsys,
        )[0]
        == 0
    )
    assert target.store().current("impaired_waters").feature_count == 4
    assert len(target.store().read_version("impaired_waters", 1)) == 4
    source = target.into
    if target.schema is not None:
        source += (
            ("&" if "?" in source else "?") + f"schema={target.schema}"
            if source.startswith("postgres")
            else f" schema={target.schema}"
        )
    found = open_reference(source).lookup("impaired_waters", "waterbody_id", ["SD-NI-R-KEYA_PAHA_01"])
    assert found.category.tolist() == ["4a"]


@pytest.mark.parametrize("layer", ["impaired_waters", "wetlands"])
def test_the_shipped_store_diffs_its_one_version_against_itself(layer, data_copy, capsys):
    """The demo store's versions record no CRS (made by the generator): the current version
    is read in its layer's CRS, not left without one (was: exit 3 "Cannot transform naive
    geometries")."""
    demo = data_copy("demo_reference.gpkg")
    status, out, err = reference("diff", layer, "--reference", demo, "--json", "-", capsys=capsys)
    assert status == 0, err
    diff = json.loads(out)
    assert (diff["from"], diff["to"], diff["changes"]) == (1, 1, [])


def test_a_large_import_builds_a_packed_r_tree_that_sqlite_finds_sound(tmp_path, capsys):
    """3,000 wetlands (a tree three levels deep): the R-tree written straight into its shadow
    tables passes SQLite's ``rtreecheck``, answers box queries as the geometries do, and is
    kept sound by SQLite's own updates afterwards."""
    import sqlite3

    import numpy as np
    import shapely

    source = tmp_path / "wet.gpkg"
    rng = np.random.default_rng(7)
    x, y = X0 + rng.uniform(0, 50_000, 3_000), Y0 + rng.uniform(0, 50_000, 3_000)
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": [f"W-{i}" for i in range(3_000)],
            "source": "NYSDEC",
            "wetland_class": "II",
            "regulated": 1,
            "adjacent_area_ft": 100.0,
        },
        geometry=shapely.box(x, y, x + rng.uniform(1, 400, 3_000), y + rng.uniform(1, 400, 3_000)),
        crs="EPSG:2260",
    )
    write_geopackage(source, {"wetlands": frame})
    store = tmp_path / "reference.gpkg"
    status, out, _ = reference(
        "import", "wetlands", source, "--reference", store, "--source-date", "2026-01-01", capsys=capsys
    )
    assert status == 0, out
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT rtreecheck('rtree_wetlands_geom')").fetchone()[0] == "ok"
        depth = int.from_bytes(
            con.execute(
                "SELECT substr(data, 1, 2) FROM rtree_wetlands_geom_node WHERE nodeno = 1"
            ).fetchone()[0],
            "big",
        )
        assert depth == 2  # 3,000 cells of at most 51 a node: leaves, their parents, the root
        for qx, qy in zip(rng.uniform(X0, X0 + 50_000, 25), rng.uniform(Y0, Y0 + 50_000, 25)):
            found = {
                r[0]
                for r in con.execute(
                    "SELECT id FROM rtree_wetlands_geom WHERE minx <= ? AND maxx >= ? AND miny <= ? "
                    "AND maxy >= ?",
                    (qx + 2_000, qx, qy + 2_000, qy),
                )
            }
            b = frame.geometry.bounds.to_numpy()
            meets = (b[:, 0] <= qx + 2_000) & (b[:, 2] >= qx) & (b[:, 1] <= qy + 2_000) & (b[:, 3] >= qy)
            assert found == set((np.flatnonzero(meets) + 1).tolist())
        con.execute("DELETE FROM wetlands WHERE fid <= 1000")  # the triggers, through SQLite's R-tree
        assert con.execute("SELECT rtreecheck('rtree_wetlands_geom')").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*) FROM rtree_wetlands_geom").fetchone()[0] == 2_000


def test_awkward_text_is_stored_exactly_in_both_stores(target, tmp_path, capsys):
    """Text with tabs, newlines, backslashes and COPY's own NULL marker (PostGIS loads by COPY),
    a missing real and reals come back as given."""
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": ["A\tB", "C\\N", "\\N", "line\nbreak\rend", "ü ñ 'q' \"d\""],
            "source": ["NWI"] * 5,
            "wetland_class": [None, "x\\ty", "", "PFO1A", "z"],
            "regulated": [1, 0, 1, 0, 1],
            "adjacent_area_ft": [0.1 + 0.2, None, 100.0, 1e-300, 123456789.123456789],
        },
        geometry=[box(X0 + 150 * i, Y0, X0 + 150 * i + 100, Y0 + 100) for i in range(5)],
        crs="EPSG:2260",
    )
    source = write_geopackage(tmp_path / "awkward.gpkg", {"wetlands": frame}) or tmp_path / "awkward.gpkg"
    status, out, _ = reference(
        "import",
        "wetlands",
        source,
        "--reference",
        *target.args(),
        "--source-date",
        "2026-01-01",
        capsys=capsys,
    )
    assert status == 0, out
    back = target.store().read_version("wetlands", 1).set_index("wetland_id")
    assert sorted(back.index) == sorted(frame["wetland_id"])
    for _, want in frame.iterrows():
        got = back.loc[want["wetland_id"]]
        # (an empty optional text is no value, in both stores; pandas may hold a missing one as NaN)
        assert _text_or_none(got["wetland_class"]) == _text_or_none(want["wetland_class"])
        if want["adjacent_area_ft"] is None or want["adjacent_area_ft"] != want["adjacent_area_ft"]:
            assert got["adjacent_area_ft"] is None or got["adjacent_area_ft"] != got["adjacent_area_ft"]
        else:
            # (the GeoPackage store's current version is read through SQLite's json_object,
            # which writes a real with 15 significant digits)
            assert isinstance(got["adjacent_area_ft"], float)  # 100.0 read back as 100.0, not 100
            assert got["adjacent_area_ft"] == pytest.approx(want["adjacent_area_ft"], rel=1e-14)
        assert got.geometry.equals(want.geometry)


def _text_or_none(value):
    """A text value, or None where it is missing (None, NaN, pandas' NA) or empty."""
    import pandas as pd

    return None if value is None or pd.isna(value) or value == "" else value
