"""The PostGIS screen's reads, as PostgreSQL plans them (a real PostgreSQL; no timings).

The answers are compared with the GeoPackage screen in ``test_screen.py``; here, the shape of
the wetlands read that made it slow: the sites' boxes must drive the read through the layer's
GiST index (not the layer scanned and tested against the boxes), and each feature must be
transformed once (not again for its validity test).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from analysis.profile import load_profile
from analysis.reference.importer import read_candidate
from analysis.reference.read import boxes_in_crs
from analysis.reference.window import search_windows
from analysis.screen.sites import read_sites

DEMO_REFERENCE = Path(__file__).resolve().parents[2] / "test_data" / "demo_reference.gpkg"


@pytest.fixture
def wetlands_plan(pg_schema, tmp_path):
    """``EXPLAIN (VERBOSE)`` of the screen's wetlands read for sites around the demo wetlands,
    with the query's SRIDs, and the box table the read was given."""
    from analysis.reference.postgis import PostgisStore, connect
    from analysis.screen import postgis

    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    store.import_candidate(read_candidate("wetlands", f"{DEMO_REFERENCE}|layername=wetlands"))
    profile = load_profile()
    sites_file = tmp_path / "sites.gpkg"
    from tests.analysis.test_screen import random_sites

    random_sites(DEMO_REFERENCE, 12, seed=5).to_file(sites_file, driver="GPKG")
    sites = read_sites(sites_file, profile.area_crs)
    area = postgis.epsg_code(sites.crs)
    with connect(store.conninfo) as con:
        srid = con.execute(
            "SELECT srid FROM geometry_columns WHERE f_table_schema = %s AND f_table_name = 'wetlands'",
            (schema,),
        ).fetchone()[0]
        postgis._upload(con, sites, area)
        widened = search_windows(sites.boxes, sites.crs, profile)
        boxes = postgis._box_table(con, store.sql, "swppp_boxes_test", widened, sites.crs, srid)
        own = con.execute(
            store.sql.SQL(
                "SELECT ST_XMin(box), ST_YMin(box), ST_XMax(box), ST_YMax(box) FROM {} ORDER BY k"
            ).format(boxes)
        ).fetchall()
        # A tiny layer is cheaper to scan than to probe: take that choice away, so the plan
        # shows which side drives the join.
        con.execute("SET enable_seqscan = off")
        query = postgis._features(store.sql, store, "wetlands", ["fid", "wetland_id"], boxes)
        plan = "\n".join(
            row[0]
            for row in con.execute(store.sql.SQL("EXPLAIN (VERBOSE) ") + query, {"area": area}).fetchall()
        )
    return plan, area, np.array(own), boxes_in_crs(widened, sites.crs, postgis.crs_of(srid))


def test_the_boxes_drive_the_read_through_the_layers_index(wetlands_plan):
    plan, _, _, _ = wetlands_plan
    # The layer's index is probed with each box: the box is the value it is searched by.
    assert re.search(r"Index Cond: \(\w*\.?geom && b\.box\)", plan), plan
    # Not the other way round (each feature looked up in the boxes' index).
    assert not re.search(r"Index Cond: \(b\.box && \w*\.?geom\)", plan), plan


def test_each_feature_is_transformed_once(wetlands_plan):
    plan, area, _, _ = wetlands_plan
    assert len(re.findall(rf"st_transform\([^)]*, {area}\)", plan)) == 1, plan


def test_the_boxes_are_the_readers(wetlands_plan):
    """The boxes sent are those the GeoPackage reader searches its R-tree with."""
    _, _, sent, reader = wetlands_plan
    assert sent == pytest.approx(reader, rel=1e-12, abs=1e-6)


def test_a_catchment_id_padded_with_any_white_space_is_found_as_the_review_finds_it(pg_schema):
    """The route's look-up by id trims as Python's ``str.strip`` trims (the GeoPackage screen
    and the review): PostgreSQL's one-argument ``btrim`` trimmed spaces only, so an id ending
    in a tab was not found downstream in a PostGIS store."""
    from analysis.reference.postgis import PostgisStore
    from analysis.screen import postgis

    conninfo, schema = pg_schema
    store = PostgisStore(conninfo, schema)
    store.import_candidate(read_candidate("catchments", f"{DEMO_REFERENCE}|layername=catchments"))
    import psycopg
    from psycopg import sql

    with psycopg.connect(conninfo, autocommit=True) as con:
        ((first, drains),) = con.execute(
            sql.SQL("SELECT catchment_id, drains_to FROM {} ORDER BY catchment_id LIMIT 1").format(
                store.ids.table("catchments")
            )
        ).fetchall()
        con.execute(
            sql.SQL("UPDATE {} SET catchment_id = %s WHERE catchment_id = %s").format(
                store.ids.table("catchments")
            ),
            (f" {first}\t\u00a0", first),
        )
        assert postgis._catchment_rows(con, sql, store, {first}) == {first: drains}
