"""A catchment id two catchments carry, in a reference read directly (the import refuses it):
the route downstream cannot tell which ``drains_to`` to follow, so the review, the screen and
the PostGIS screen refuse it, naming the field and the id (the reader kept the last row)."""

import geopandas as gpd
import pandas as pd
import pytest

from analysis.cli.app import main
from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.screen.screen import screen_sites
from analysis.screen.sites import read_sites
from tests.analysis.test_screen import _sites_file, review_of, routed_reference

REPEATED = "020200060102"  # Example Brook's catchment, in TMDL watershed TW-1, downstream of 0202


@pytest.fixture(scope="module")
def repeated(tmp_path_factory):
    """The routed reference with a second catchment 020200060102 far away, draining to the
    303(d)-listed NY1301-0099 (the first drains to NY9999-0001, on no list)."""
    folder = tmp_path_factory.mktemp("repeated")
    path = routed_reference(folder / "reference.gpkg")
    frame = gpd.read_file(path, layer="catchments")
    extra = frame[frame["catchment_id"] == REPEATED].copy()
    extra["drains_to"], extra["geometry"] = "NY1301-0099", extra.geometry.translate(90000, 0)
    gpd.GeoDataFrame(pd.concat([frame, extra], ignore_index=True), crs=frame.crs).to_file(
        path, layer="catchments", driver="GPKG"
    )
    return path, _sites_file(folder, path, 60, 17)


def test_the_review_refuses_a_route_through_a_repeated_id(repeated):
    path, _ = repeated
    profile = load_profile()
    upstream = gpd.read_file(path, layer="catchments").set_index("catchment_id")
    inside = upstream.loc["020200060202"].geometry.centroid.buffer(100, cap_style=3)
    with pytest.raises(
        InputError,
        match=rf"catchment_id is not unique: 1 id\(s\) repeat "
        rf"\({REPEATED}\)",
    ) as err:
        review_of(inside, profile, open_reference(path))
    assert (err.value.layer, err.value.field) == ("catchments", "catchment_id")


def test_the_screen_refuses_it_and_the_cli_exits_2(repeated, tmp_path, capsys):
    path, sites = repeated
    profile = load_profile()
    with pytest.raises(InputError, match=rf"\({REPEATED}\)"):
        screen_sites(read_sites(sites, profile.area_crs), open_reference(path), profile)
    out = tmp_path / "screen.csv"
    assert main(["screen", str(sites), "--reference", str(path), "--output", str(out), "--quiet"]) == 2
    assert not out.exists()
    assert "catchment_id is not unique" in capsys.readouterr().err


def test_the_postgis_screen_refuses_it_too(repeated, pg_schema):
    """The import refuses a repeated id; a table another tool wrote may still hold one."""
    import psycopg
    from psycopg import sql

    from analysis.reference.importer import read_candidate
    from analysis.reference.postgis import PostgisStore
    from analysis.screen.postgis import screen_postgis

    path, sites = repeated
    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    for layer in ("wetlands", "impaired_waters", "tmdl_watersheds"):
        store.import_candidate(read_candidate(layer, f"{path}|layername={layer}"))
    unique = gpd.read_file(path, layer="catchments").drop_duplicates("catchment_id")
    folder = path.parent / "unique.gpkg"
    unique.to_file(folder, layer="catchments", driver="GPKG")
    store.import_candidate(read_candidate("catchments", f"{folder}|layername=catchments"))
    with psycopg.connect(conninfo) as con:  # the second 020200060102, written behind the store
        con.execute(
            sql.SQL(
                "INSERT INTO {} (catchment_id, name, drains_to, geom) SELECT "
                "catchment_id, name, %s, ST_Translate(geom, 90000, 0) FROM {} "
                "WHERE catchment_id = %s"
            ).format(store.ids.table("catchments"), store.ids.table("catchments")),
            ("NY1301-0099", REPEATED),
        )
    profile = load_profile()
    with pytest.raises(InputError, match=rf"catchment_id is not unique.*\({REPEATED}\)"):
        screen_postgis(read_sites(sites, profile.area_crs), f"{conninfo} schema={schema}", profile)
