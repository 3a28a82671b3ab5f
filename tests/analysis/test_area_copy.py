"""A store's area copies (``analysis.reference.area_copy``, issue 37): the layers kept also in
the profile's area CRS. Read through them, a screen and a review give what they give without
(every adversarial case of the differential tests, row for row, the repaired features
recorded as repaired); the copy serves only its own version and CRS, follows an import, and an
edit of the layer by hand through GDAL (as QGIS edits) marks it stale."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from contextlib import closing
from dataclasses import replace
from pathlib import Path

import pytest

from analysis.cli import main
from analysis.profile import load_profile
from analysis.reference.area_copy import COPIES_TABLE, copy_rtree, copy_table
from analysis.reference.read import open_reference
from analysis.reference.store import GeoPackageStore
from analysis.screen.screen import screen_sites
from analysis.screen.sites import read_sites
from tests.analysis.test_screen_differential import CASES, differences, profile_for, write_case

ROOT = Path(__file__).resolve().parents[2]
DEMO_SITE = ROOT / "test_data" / "demo_site.gpkg"
DEMO_REFERENCE = ROOT / "test_data" / "demo_reference.gpkg"
LAYERS = ("catchments", "impaired_waters", "tmdl_watersheds", "wetlands")


def copied(layer_read: dict) -> set:
    """The layers a reference's ``describe()["read"]`` says were read through their copy."""
    return {layer for layer, entry in layer_read.items() if entry.get("area_copy")}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_screen_through_the_area_copies_is_the_screen_without(name, tmp_path):
    """Each adversarial case (invalid polygons repaired, holes, multiparts, other CRSs, an area
    CRS in metres): the screen through the copies gives every site the row it gets without
    them, each site's review through them agrees with that row, and the invalid features are
    recorded as repaired as they are without (the copy keeps them repaired)."""
    case = CASES[name]()
    reference, sites_path = write_case(case, tmp_path)
    profile = profile_for(case)
    with_copy = tmp_path / "with_copy.gpkg"
    shutil.copy(reference, with_copy)
    made = GeoPackageStore(with_copy).make_area_copies(profile.area_crs)
    assert {c.layer for c in made} == set(LAYERS) - {"impaired_waters"} or {c.layer for c in made} == set(
        LAYERS
    )
    sites = read_sites(sites_path, profile.area_crs)
    plain_reference, copy_reference = open_reference(reference), open_reference(with_copy)
    plain = screen_sites(sites, plain_reference, profile)
    through = screen_sites(sites, copy_reference, profile)
    assert through.rows == plain.rows
    described = copy_reference.describe()
    assert copied(described["read"]) >= {"catchments", "wetlands"}
    assert not copied(plain_reference.describe()["read"])
    assert sorted(described["repaired"]) == sorted(plain_reference.describe()["repaired"])
    found = differences(through.by_site(), sites, profile, open_reference(with_copy), max(case.every, 3))
    assert not found, (name, found[:5])


def _review(site, reference, out: Path) -> dict:
    status = main(["review", str(site), "--reference", str(reference), "--json", str(out), "--quiet"])
    assert status in (0, 1)
    return json.loads(out.read_text())


def _without_copy_marks(result: dict) -> dict:
    result = json.loads(json.dumps(result))
    for entry in result["reference"]["read"].values():
        entry.pop("area_copy", None)
    result["reference"]["path"] = "-"
    return result


def test_the_demo_review_through_the_area_copy_is_the_review_without(tmp_path):
    """The demo's review JSON through the copy is the review without, but for the copy named
    where it was read (and the store's file name)."""
    store = tmp_path / "reference.gpkg"
    shutil.copy(DEMO_REFERENCE, store)
    assert main(["reference", "area-copy", "--reference", str(store), "--quiet"]) == 0
    plain = _review(DEMO_SITE, DEMO_REFERENCE, tmp_path / "plain.json")
    through = _review(DEMO_SITE, store, tmp_path / "through.json")
    assert copied(through["reference"]["read"]) >= {"wetlands", "catchments"}
    assert _without_copy_marks(through) == _without_copy_marks(plain)


def _store_with_copy(tmp_path) -> Path:
    store = tmp_path / "reference.gpkg"
    shutil.copy(DEMO_REFERENCE, store)
    GeoPackageStore(store).make_area_copies(load_profile().area_crs)
    return store


def _read_through_copy(store: Path, area_crs=None) -> set:
    profile = load_profile()
    reference = open_reference(store)
    with reference.opened():
        reference.read("wetlands", (0, 0, 1e8, 1e8), area_crs or profile.area_crs)
        reference.read("catchments", (0, 0, 1e8, 1e8), area_crs or profile.area_crs)
    return copied(reference.describe()["read"])


def test_an_edit_of_the_layer_through_gdal_marks_its_copy_stale(tmp_path):
    """A feature deleted through GDAL (as QGIS edits a GeoPackage): the layer's copy is marked
    stale by its triggers and no longer read (the other layer's still is); ``area-copy`` again
    makes it current."""
    store = _store_with_copy(tmp_path)
    assert _read_through_copy(store) == {"wetlands", "catchments"}
    subprocess.run(
        ["ogrinfo", "-q", str(store), "-sql", "DELETE FROM wetlands WHERE fid = 1"],
        check=True,
        capture_output=True,
    )
    assert GeoPackageStore(store).area_copies()["wetlands"].stale
    assert not GeoPackageStore(store).area_copies()["catchments"].stale
    assert _read_through_copy(store) == {"catchments"}
    GeoPackageStore(store).make_area_copies(load_profile().area_crs)
    assert _read_through_copy(store) == {"wetlands", "catchments"}


def test_a_copy_in_another_crs_or_of_another_version_is_not_read(tmp_path):
    """A reader measuring in another CRS reads the layer itself; an import of a new version
    makes that version's copy in the same transaction."""
    store = _store_with_copy(tmp_path)
    assert _read_through_copy(store, "EPSG:32618") == set()
    source = tmp_path / "wetlands.gpkg"
    subprocess.run(
        ["ogr2ogr", "-f", "GPKG", str(source), str(DEMO_REFERENCE), "wetlands", "-where", "fid > 1"],
        check=True,
        capture_output=True,
    )
    status = main(
        ["reference", "import", "wetlands", str(source), "--reference", str(store)]
        + ["--source-date", "2026-02-01", "--quiet"]
    )
    assert status == 0
    copy = GeoPackageStore(store).area_copies()["wetlands"]
    assert (copy.version, copy.stale) == (2, False)
    assert copy.features == GeoPackageStore(store).current("wetlands").feature_count
    assert _read_through_copy(store) == {"wetlands", "catchments"}


def test_dropped_copies_leave_the_store_as_it_was(tmp_path):
    """``area-copy --drop`` removes the copies, their records and the triggers: the store's
    tables are those it had, and an edit through GDAL works."""
    store = tmp_path / "reference.gpkg"
    shutil.copy(DEMO_REFERENCE, store)

    def schema():
        with closing(sqlite3.connect(store)) as con:
            return sorted(con.execute("SELECT type, name FROM sqlite_master").fetchall())

    before = schema()
    GeoPackageStore(store).make_area_copies(load_profile().area_crs)
    names = {name for _, name in schema()}
    assert {
        COPIES_TABLE,
        copy_table("wetlands"),
        copy_rtree("wetlands"),
        "swppp_area_wetlands_update",
    } <= names
    assert main(["reference", "area-copy", "--reference", str(store), "--drop", "--quiet"]) == 0
    assert schema() == before
    subprocess.run(["ogrinfo", "-q", str(store), "-sql", "DELETE FROM wetlands WHERE fid = 1"], check=True)


def test_layers_are_listed_without_their_copies(tmp_path):
    """GDAL (QGIS) lists the store's layers, not their copies; so does the reader."""
    store = _store_with_copy(tmp_path)
    listed = subprocess.run(["ogrinfo", "-q", "-so", str(store)], check=True, capture_output=True, text=True)
    assert "swppp_area" not in listed.stdout
    assert set(LAYERS) <= set(open_reference(store).layers)
    assert not {name for name in open_reference(store).layers if name.startswith("swppp_area")}


@pytest.mark.parametrize(
    "name", ["invalid_polygons", "odd_wetlands", "crs_4326", "nested_tmdl", "odd_drains_to"]
)
def test_a_postgis_screen_through_the_area_copies_is_the_screen_without(name, pg_schema, tmp_path):
    """The case imported into PostGIS: its area copies made by the server; the PostGIS screen
    through them gives every site the row it gets without them."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.postgis import PostgisStore
    from analysis.screen.postgis import screen_postgis
    from tests.analysis.test_screen_differential import importable

    case = importable(CASES[name]())
    reference, sites_path = write_case(case, tmp_path)
    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    for layer in LAYERS:
        store.import_candidate(read_candidate(layer, f"{reference}|layername={layer}"))
    profile = profile_for(case)
    sites = read_sites(sites_path, profile.area_crs)
    source = f"{conninfo} schema={schema}"
    plain = screen_postgis(sites, source, profile).rows
    made = store.make_area_copies(profile.area_crs)
    assert {c.layer for c in made} == {"catchments", "tmdl_watersheds", "wetlands"}
    assert {c.version for c in made} == {1}
    through = screen_postgis(sites, source, profile).rows
    assert through == plain


def test_postgis_copies_follow_imports_and_edits(pg_schema, tmp_path):
    """An edit of a layer in the database marks its copy stale (the statement trigger); an
    import makes the new version's copy; --drop leaves the schema's layers without triggers."""
    from analysis.reference.postgis import PostgisStore, open_connection

    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    for layer in LAYERS:
        assert (
            main(
                ["reference", "import", layer, f"{DEMO_REFERENCE}|layername={layer}"]
                + ["--reference", conninfo, "--schema", schema, "--quiet"]
            )
            == 0
        )
    assert main(["reference", "area-copy", "--reference", conninfo, "--schema", schema, "--quiet"]) == 0
    assert not any(c.stale for c in store.area_copies().values())
    with open_connection(conninfo, autocommit=True) as con:
        con.execute(f'UPDATE "{schema}".wetlands SET regulated = regulated WHERE fid = 1')
    copies = store.area_copies()
    assert copies["wetlands"].stale and not copies["catchments"].stale
    source = tmp_path / "wetlands.gpkg"
    subprocess.run(
        ["ogr2ogr", "-f", "GPKG", str(source), str(DEMO_REFERENCE), "wetlands", "-where", "fid > 1"],
        check=True,
        capture_output=True,
    )
    assert (
        main(
            ["reference", "import", "wetlands", str(source)]
            + ["--reference", conninfo, "--schema", schema, "--source-date", "2026-03-01", "--quiet"]
        )
        == 0
    )
    copy = store.area_copies()["wetlands"]
    assert (copy.version, copy.stale) == (2, False)
    assert (
        main(["reference", "area-copy", "--reference", conninfo, "--schema", schema, "--drop", "--quiet"])
        == 0
    )
    assert store.area_copies() == {}
    with open_connection(conninfo, autocommit=True) as con:
        left = con.execute(
            "SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname = %s AND NOT t.tgisinternal",
            (schema,),
        ).fetchone()[0]
        con.execute(f'UPDATE "{schema}".wetlands SET regulated = regulated WHERE fid = 1')
    assert left == 0


def test_a_case_in_metres_keeps_its_copy_in_metres(tmp_path):
    """The copy is in the profile's area CRS, whatever the layer's: recorded by its EPSG code."""
    case = replace(CASES["area_crs_metres"](), sites=CASES["area_crs_metres"]().sites[:3])
    reference, _ = write_case(case, tmp_path)
    made = GeoPackageStore(reference).make_area_copies(profile_for(case).area_crs)
    assert {c.crs for c in made} == {"EPSG:32618"}


@pytest.mark.parametrize("drop", [False, True])
def test_a_missing_store_is_refused_and_not_made(drop, tmp_path, capsys):
    """``area-copy`` of a path where no store is: exit 2 naming it, and no file left behind."""
    missing = tmp_path / "none.gpkg"
    status = main(["reference", "area-copy", "--reference", str(missing)] + (["--drop"] if drop else []))
    assert status == 2
    assert "does not exist" in capsys.readouterr().err
    assert not missing.exists()
