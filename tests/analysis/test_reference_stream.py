"""A streamed reference import (issue 23): read, validated, repaired and written in batches."""

import geopandas as gpd
import numpy as np
import pytest
import shapely

from analysis.errors import InputError
from analysis.reference.importer import read_candidate, stream_candidate
from analysis.reference.store import GeoPackageStore
from tests.analysis.conftest import X0, Y0

N = 23  # features: more than three batches of 7


def wetlands_file(path, ids=None):
    """``N`` wetlands, one of them a bow-tie (repaired), one without an id (rejected)."""
    shapes = [shapely.box(X0 + 60 * k, Y0, X0 + 60 * k + 40, Y0 + 40) for k in range(N)]
    shapes[5] = shapely.Polygon([(X0, Y0), (X0 + 30, Y0 + 30), (X0 + 30, Y0), (X0, Y0 + 30)])
    ids = ids or [f"W-{k:02d}" for k in range(N)]
    ids[11] = None
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": ids,
            "source": "NWI",
            "wetland_class": [f"PFO{k % 3}" for k in range(N)],
            "regulated": [k % 2 for k in range(N)],
            "adjacent_area_ft": [100.0 if k % 2 else None for k in range(N)],
        },
        geometry=shapes,
        crs="EPSG:2260",
    )
    frame.to_file(path, layer="wetlands", driver="GPKG")
    return path


def test_a_streamed_import_equals_the_whole_import_feature_by_feature(tmp_path):
    source = wetlands_file(tmp_path / "source.gpkg")
    whole = read_candidate("wetlands", source)
    streamed = stream_candidate("wetlands", source, batch=7)
    assert streamed.frame is None and streamed.stream is not None  # it is streamed
    assert len(list(streamed.chunks())) == 4
    stores = {}
    for name, candidate in (("whole", whole), ("streamed", streamed)):
        stores[name] = GeoPackageStore(tmp_path / f"{name}.gpkg")
        row = stores[name].import_candidate(candidate).version
        assert row.feature_count == N - 1
    assert streamed.report.to_dict() == whole.report.to_dict()
    assert streamed.report.repaired == ["W-05"] and len(streamed.report.rejected) == 1
    one, other = (stores[k].read_version("wetlands", 1) for k in ("whole", "streamed"))
    assert one.drop(columns="geometry").equals(other.drop(columns="geometry"))
    assert shapely.equals_exact(
        np.asarray(one.geometry.values), np.asarray(other.geometry.values), tolerance=0
    ).all()
    from analysis.io.vector import read_layer

    current = [read_layer(stores[k].path, "wetlands").frame for k in ("whole", "streamed")]
    assert current[0].drop(columns="geometry").equals(current[1].drop(columns="geometry"))
    assert current[0].geometry.geom_equals_exact(current[1].geometry, 0).all()


def test_an_id_repeated_across_batches_is_refused_and_changes_nothing(tmp_path):
    ids = [f"W-{k:02d}" for k in range(N)]
    ids[20] = "W-01"  # in the third batch, the same as one of the first
    source = wetlands_file(tmp_path / "twice.gpkg", ids)
    existing = GeoPackageStore(tmp_path / "store.gpkg")
    existing.import_candidate(stream_candidate("wetlands", wetlands_file(tmp_path / "ok.gpkg"), batch=7))
    before = (tmp_path / "store.gpkg").read_bytes()
    with pytest.raises(InputError, match="wetland_id is not unique: 1 id"):
        existing.import_candidate(stream_candidate("wetlands", source, batch=7))
    assert (tmp_path / "store.gpkg").read_bytes() == before
    fresh = GeoPackageStore(tmp_path / "fresh.gpkg")
    with pytest.raises(InputError, match="W-01"):
        fresh.import_candidate(stream_candidate("wetlands", source, batch=7))
    assert not (tmp_path / "fresh.gpkg").exists()  # a store the refused import began is gone


def test_a_missing_field_is_refused_before_anything_is_written(tmp_path):
    source = tmp_path / "bare.gpkg"
    gpd.GeoDataFrame({"wetland_id": ["A"]}, geometry=[shapely.box(0, 0, 1, 1)], crs="EPSG:2260").to_file(
        source, layer="wetlands", driver="GPKG"
    )
    with pytest.raises(InputError, match="regulated"):
        stream_candidate("wetlands", source, batch=7)


def test_a_streamed_import_into_postgis_equals_the_geopackage_one(pg_schema, tmp_path):
    from analysis.reference.postgis import PostgisStore

    conninfo, schema = pg_schema
    source = wetlands_file(tmp_path / "source.gpkg")
    store = PostgisStore(conninfo, schema)
    assert (
        store.import_candidate(stream_candidate("wetlands", source, batch=7)).version.feature_count == N - 1
    )
    gpkg = GeoPackageStore(tmp_path / "store.gpkg")
    gpkg.import_candidate(read_candidate("wetlands", source))
    one, other = store.read_version("wetlands", 1), gpkg.read_version("wetlands", 1)
    assert one.drop(columns="geometry").equals(other.drop(columns="geometry"))
    assert one.geometry.geom_equals_exact(other.geometry, 0).all()


def watersheds_file(path):
    """``N`` TMDL watersheds, two of them (in different batches of 7) lines: rejected, with a TMDL."""
    shapes = [shapely.box(X0 + 60 * k, Y0, X0 + 60 * k + 40, Y0 + 40) for k in range(N)]
    for k in (3, 17):
        shapes[k] = shapely.LineString([(X0 + 60 * k, Y0), (X0 + 60 * k + 40, Y0 + 40)])
    frame = gpd.GeoDataFrame(
        {
            "watershed_id": [f"T-{k:02d}" for k in range(N)],
            "name": [f"Lake {k}" for k in range(N)],
            "pollutants": "PHOSPHORUS",
            "tmdl_id": "31077",
            "stormwater_source": 1,
        },
        geometry=shapes,
        crs="EPSG:2260",
    )
    frame.to_file(path, layer="tmdl_watersheds", driver="GPKG")
    return path


@pytest.mark.parametrize("postgis", [False, True], ids=["gpkg", "postgis"])
def test_streamed_rejections_are_counted_over_the_batches_and_refuse_the_import_inside_its_transaction(
    tmp_path, capsys, monkeypatch, request, postgis
):
    """Issue 19 on issue 23's streamed import: the rejections of every batch are counted, the
    limit checked once the last batch is written, and the refusal rolls the write back."""
    import csv
    import json

    from analysis.cli.app import main
    from analysis.reference import importer

    monkeypatch.setattr(importer, "BATCH", 7)
    source = watersheds_file(tmp_path / "sheds.gpkg")
    listed = tmp_path / "rejected.csv"
    if postgis:
        conninfo, schema = request.getfixturevalue("pg_schema")
        target = ["--reference", conninfo, "--schema", schema]
    else:
        target = ["--reference", str(tmp_path / "ref.gpkg")]
    argv = [
        "reference",
        "import",
        "tmdl_watersheds",
        str(source),
        *target,
        "--rejections",
        str(listed),
        "--source-date",
        "2024-05-01",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "2 of 23 feature(s) rejected (2 with a TMDL)" in err and str(listed) in err
    with open(listed, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["feature"], r["has_tmdl"]) for r in rows] == [("T-03", "1"), ("T-17", "1")]
    status = tmp_path / "status.json"
    if postgis:  # nothing imported: the transaction was rolled back
        assert main(["reference", "status", "--reference", *target[1:], "--json", str(status)]) == 0
        layers = json.loads(status.read_text(encoding="utf-8"))["layers"]
        assert all(e["current"] is None for e in layers if e["layer"] == "tmdl_watersheds")
    else:
        assert not (tmp_path / "ref.gpkg").exists()  # the store the refused import began: gone
    listed.unlink()
    assert main(argv + ["--accept-rejections", "--quiet"]) == 0
    assert listed.exists()
    status_argv = ["reference", "status", "--reference", *target[1:], "--json", str(status)]
    assert main(status_argv) == 0
    assert "2 rejected (2 with a TMDL), accepted" in capsys.readouterr().out
    layers = json.loads(status.read_text(encoding="utf-8"))["layers"]
    row = next(e for e in layers if e["layer"] == "tmdl_watersheds")["versions"][-1]
    assert (
        row["feature_count"],
        row["rejected_count"],
        row["rejected_with_tmdl"],
        row["rejections_accepted"],
        row["stable_ids"],
    ) == (N - 2, 2, 2, 1, 1)


def test_an_import_with_sites_names_exactly_the_sites_whose_water_it_newly_lists(tmp_path, capsys):
    """``swppp reference import impaired_waters ... --sites``: version 2 adds NY9999-0001, the
    water Example Brook's catchment drains to; the sites draining to it (and not already under
    Condition A), and only those, are named, with the water that caused it."""
    import json

    from analysis.cli.app import main
    from analysis.profile import load_profile
    from analysis.reference.read import open_reference
    from analysis.screen.screen import APPLIES, screen_sites
    from analysis.screen.sites import read_sites
    from tests.analysis.test_screen import newly_listed, random_sites, stored, varied_reference

    reference_file = varied_reference(tmp_path / "reference.gpkg")
    sites_file = tmp_path / "sites.gpkg"
    random_sites(reference_file, 40, seed=23).to_file(sites_file, layer="parcels", driver="GPKG")
    store = stored(reference_file, tmp_path)
    profile = load_profile()
    before = screen_sites(
        read_sites(sites_file, profile.area_crs), open_reference(store.path), profile
    ).by_site()
    listed = newly_listed(reference_file, tmp_path)
    expected = {
        k
        for k, row in before.items()
        if "NY9999-0001" in row["receiving_waters"].split(";") and row["condition_a"] != APPLIES
    }
    assert expected  # the random sites do reach that catchment

    out = tmp_path / "import.json"
    args = [
        "reference",
        "import",
        "impaired_waters",
        str(listed),
        "--reference",
        str(store.path),
        "--source-date",
        "2026-02-01",
        "--sites",
        str(sites_file),
    ]
    assert main(args + ["--json", str(out)]) == 0
    printed = capsys.readouterr().out
    rescreen = json.loads(out.read_text())["rescreen"]
    assert (rescreen["from"], rescreen["to"], rescreen["sites"]) == (1, 2, 40)
    assert {c["site_id"] for c in rescreen["changes"]} == expected
    for change in rescreen["changes"]:
        assert (change["what"], change["after"]) == ("Condition A", APPLIES)
        assert "303(d)-listed water NY9999-0001 newly listed" in change["because"]
        assert f"  {change['site_id']}: Condition A" in printed
    assert f"impaired_waters version 1 -> 2: {len(expected)} site(s) changed" in printed
    # The same source again: no new version, nothing changed; a bad sites file changes nothing.
    assert main(args) == 0
    assert "nothing changed (this source was already imported)" in capsys.readouterr().out
    assert main(args[:-1] + [str(tmp_path / "none.gpkg")]) == 2
    assert [v.version for v in store.versions("impaired_waters")] == [1, 2]


def test_read_ahead_yields_in_order_raises_the_readers_error_and_stops_with_its_caller():
    """The batches read in a thread: same order; an error while reading reaches the caller;
    a caller that stops early closes the source (nothing left reading)."""
    from analysis.reference.store import read_ahead

    assert list(read_ahead(iter(range(50)))) == list(range(50))

    def failing():
        yield 1
        raise InputError("bad number in batch 2")

    with pytest.raises(InputError, match="batch 2"):
        list(read_ahead(failing()))
    closed = []

    def endless():
        try:
            k = 0
            while True:
                yield k
                k += 1
        finally:
            closed.append(True)

    ahead = read_ahead(endless())
    assert [next(ahead) for _ in range(3)] == [0, 1, 2]
    ahead.close()
    assert closed == [True]


def test_batches_are_bounded_by_vertices_as_well_as_features(tmp_path, monkeypatch):
    """Large polygons come in batches of at most IMPORT_BATCH_VERTICES vertices (a feature with
    more alone), and the import is the same feature by feature as the whole one."""
    from analysis.reference import importer

    rings = [shapely.Point(X0 + 500 * k, Y0).buffer(200, quad_segs=8 + 8 * (k % 4)) for k in range(40)]
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": [f"B-{k:02d}" for k in range(40)],
            "source": "NWI",
            "wetland_class": "PFO1",
            "regulated": 1,
            "adjacent_area_ft": 100.0,
        },
        geometry=rings,
        crs="EPSG:2260",
    )
    source = tmp_path / "big.gpkg"
    frame.to_file(source, layer="wetlands", driver="GPKG")
    monkeypatch.setattr(importer, "IMPORT_BATCH_VERTICES", 300)
    streamed = stream_candidate("wetlands", source)
    batches = list(streamed.chunks())
    vertices = [int(shapely.get_num_coordinates(np.asarray(b.geometry.array)).sum()) for b in batches]
    assert len(batches) > 10 and all(v <= 300 or len(b) == 1 for v, b in zip(vertices, batches))
    assert sum(len(b) for b in batches) == 40
    got = gpd.GeoDataFrame(np.concatenate([b.to_numpy() for b in batches]), columns=batches[0].columns)
    assert list(got["wetland_id"]) == list(frame["wetland_id"])
    assert all(a.equals(b) for a, b in zip(got.geometry, read_candidate("wetlands", source).frame.geometry))
    streamed.close()

    pieces = list(importer.vertex_bounded(frame, 300))
    assert sum(len(p) for p in pieces) == 40 and all(len(p) >= 1 for p in pieces)
    assert [p is frame for p in importer.vertex_bounded(frame, 10**9)] == [True]  # within the bound: whole
