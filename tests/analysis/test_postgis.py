"""PostGIS: connection text, reading around a site through the GiST index, quoted identifiers."""

from __future__ import annotations

import builtins

import geopandas as gpd
import pytest
import shapely
from shapely import box

from analysis.cli import main
from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.reference.importer import read_candidate
from analysis.reference.postgis import PostgisReference, PostgisStore, split_schema
from tests.analysis.conftest import X0, Y0

HOSTILE = 'x"; DROP TABLE y; --'


def grid_wetlands(path, crs):
    """A 6 x 6 grid of 100-ft square wetlands 200 ft apart (EPSG:2260), written in ``crs``."""
    squares = [
        box(X0 + 200 * i, Y0 + 200 * j, X0 + 200 * i + 100, Y0 + 200 * j + 100)
        for i in range(6)
        for j in range(6)
    ]
    frame = gpd.GeoDataFrame(
        {
            "wetland_id": [f"G-{k}" for k in range(36)],
            "source": "NYSDEC",
            "wetland_class": "II",
            "regulated": 1,
            "adjacent_area_ft": 100.0,
        },
        geometry=squares,
        crs="EPSG:2260",
    ).to_crs(crs)
    write_geopackage(path, {"wetlands": frame})
    return path


@pytest.mark.parametrize("crs", ["EPSG:2260", "EPSG:4326", "EPSG:26918"])
def test_reader_returns_only_features_intersecting_the_box_in_the_area_crs(pg_schema, tmp_path, crs):
    conninfo, schema = pg_schema
    source = grid_wetlands(tmp_path / "grid.gpkg", crs)
    PostgisStore(conninfo, schema).import_candidate(read_candidate("wetlands", source))
    bounds = (X0 + 50, Y0 + 150, X0 + 520, Y0 + 450)

    frame = PostgisReference(conninfo, schema).read("wetlands", bounds, "EPSG:2260")

    # Expected, independently: the source read back in the area CRS, filtered with shapely.
    expected = gpd.read_file(source).to_crs("EPSG:2260")
    expected = expected[shapely.intersects(expected.geometry.values, box(*bounds))]
    assert sorted(frame.wetland_id) == sorted(expected.wetland_id)
    assert len(frame) == 6  # by hand: columns i = 0, 1, 2 (x 0-500) and rows j = 1, 2 (y 200-500)
    assert frame.crs.to_epsg() == 2260
    lookup = expected.set_index("wetland_id").geometry
    for wid, geom in zip(frame.wetland_id, frame.geometry):
        assert geom.hausdorff_distance(lookup[wid]) < 1e-3  # stored as MultiPolygon
    assert list(frame.columns[:5]) == [
        "wetland_id",
        "source",
        "wetland_class",
        "regulated",
        "adjacent_area_ft",
    ]


def test_reader_uses_the_gist_index(pg_schema, tmp_path):
    import psycopg

    conninfo, schema = pg_schema
    PostgisStore(conninfo, schema).import_candidate(
        read_candidate("wetlands", grid_wetlands(tmp_path / "g.gpkg", "EPSG:2260"))
    )
    with psycopg.connect(conninfo) as con:
        con.execute("SET enable_seqscan = off")  # 36 rows: make the planner show what it can use
        plan = "\n".join(
            r[0]
            for r in con.execute(
                psycopg.sql.SQL(
                    "EXPLAIN SELECT fid FROM {} WHERE ST_Intersects(geom, ST_MakeEnvelope(0, 0, 1, 1, 2260))"
                ).format(psycopg.sql.Identifier(schema, "wetlands"))
            )
        )
        indexes = [
            r[0]
            for r in con.execute(
                "SELECT indexname FROM pg_indexes WHERE schemaname = %s AND tablename = 'wetlands'", (schema,)
            )
        ]
    assert "wetlands_geom_idx" in indexes
    assert "wetlands_geom_idx" in plan


def test_a_hostile_schema_name_is_quoted_not_executed(postgis_server, tmp_path, capsys):
    import psycopg

    conninfo = postgis_server.conninfo()
    with psycopg.connect(conninfo, autocommit=True) as con:
        con.execute("CREATE TABLE IF NOT EXISTS public.y (id integer)")
    source = grid_wetlands(tmp_path / "g.gpkg", "EPSG:2260")

    status = main(
        ["reference", "import", "wetlands", str(source), "--reference", conninfo, "--schema", HOSTILE]
    )
    assert status == 0, capsys.readouterr()
    with psycopg.connect(conninfo) as con:
        assert con.execute("SELECT to_regclass('public.y') IS NOT NULL").fetchone()[0]
        schemas = [r[0] for r in con.execute("SELECT nspname FROM pg_namespace")]
    assert HOSTILE in schemas
    frame = PostgisReference(conninfo, HOSTILE).read("wetlands", (X0, Y0, X0 + 50, Y0 + 50), "EPSG:2260")
    assert frame.wetland_id.tolist() == ["G-0"]
    assert [v.version for v in PostgisStore(conninfo, HOSTILE).versions()] == [1]
    with pytest.raises(InputError, match="no layer"):  # a hostile layer name is only looked up
        PostgisReference(conninfo, HOSTILE).read(HOSTILE, (X0, Y0, X0 + 50, Y0 + 50), "EPSG:2260")
    with psycopg.connect(conninfo) as con:
        assert con.execute("SELECT to_regclass('public.y') IS NOT NULL").fetchone()[0]
    assert main(["reference", "status", "--reference", conninfo, "--schema", HOSTILE]) == 0


def test_the_schema_can_ride_in_the_connection_text(postgis_server, tmp_path):
    source = grid_wetlands(tmp_path / "g.gpkg", "EPSG:2260")
    uri = postgis_server.uri() + "&schema=in_uri"
    assert main(["reference", "import", "wetlands", str(source), "--reference", uri, "--quiet"]) == 0
    assert PostgisStore(postgis_server.conninfo(), "in_uri").current("wetlands").version == 1
    keyvalue = postgis_server.conninfo() + " schema=in_uri"
    assert PostgisReference(keyvalue).versions() == {"wetlands": 1}


@pytest.mark.parametrize(
    "text, schema, expected",
    [
        ("postgresql://u@h/db", None, ("postgresql://u@h/db", "public")),
        ("postgresql://u@h/db?schema=s1", None, ("postgresql://u@h/db", "s1")),
        ("postgresql://u@h/db?schema=s1", "s2", ("postgresql://u@h/db", "s2")),
        ("service=gis", None, ("service=gis", "public")),
        ("service=gis schema='a b'", None, ("service=gis", "a b")),
        ("host=/tmp schema=s3 dbname=x", None, ("host=/tmp dbname=x", "s3")),
    ],
)
def test_split_schema(text, schema, expected):
    assert split_schema(text, schema) == expected


def test_a_connection_that_fails_is_an_input_error_without_the_password():
    with pytest.raises(InputError) as caught:
        PostgisStore("postgresql://u:secret@/db?host=/nonexistent&port=1").versions()
    assert "could not connect to PostgreSQL" in str(caught.value)
    assert "secret" not in str(caught.value)


def test_without_psycopg_the_message_says_what_to_install(monkeypatch):
    real_import = builtins.__import__

    def no_psycopg(name, *args, **kwargs):
        if name == "psycopg" or name.startswith("psycopg."):
            raise ImportError("No module named 'psycopg'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_psycopg)
    with pytest.raises(InputError) as caught:
        PostgisStore("service=gis")
    assert "psycopg" in str(caught.value) and "GeoPackage" in str(caught.value)
