"""Geometries that a reader alters: arcs made straight, M values dropped. Both stacks read
them alike and say so (a warning naming the file, layer and features), never silently."""

from __future__ import annotations

import logging
import math
import sqlite3
import struct
from contextlib import closing

import pytest

from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, Y0, square

PROFILE = load_profile()
RADIUS = 300.0


def _circle_wkb() -> bytes:
    """ISO WKB of a CurvePolygon: one ring, a circle of RADIUS as two arcs."""
    points = [
        (X0, Y0),
        (X0 + RADIUS, Y0 + RADIUS),
        (X0, Y0 + 2 * RADIUS),
        (X0 - RADIUS, Y0 + RADIUS),
        (X0, Y0),
    ]
    arc = struct.pack("<BII", 1, 8, len(points)) + b"".join(struct.pack("<dd", *p) for p in points)
    return struct.pack("<BII", 1, 10, 1) + arc


def _measured_square_wkb() -> bytes:
    """ISO WKB of a Polygon M (type 2003): a 300 ft square, a measure at each vertex."""
    ring = [(X0, Y0), (X0 + 300, Y0), (X0 + 300, Y0 + 300), (X0, Y0 + 300), (X0, Y0)]
    return struct.pack("<BIII", 1, 2003, 1, len(ring)) + b"".join(
        struct.pack("<ddd", x, y, m) for m, (x, y) in enumerate(ring)
    )


def _store(path, fid: int, wkb: bytes, declared: str, m: int = 0) -> None:
    """Put ``wkb`` as disturbance feature ``fid``'s geometry, as QGIS stores a curved or
    measured layer (the layer's declared type changed with it)."""
    with closing(sqlite3.connect(path)) as con:
        srs_id = con.execute(
            "SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = 'disturbance'"
        ).fetchone()[0]
        blob = b"GP\x00\x01" + struct.pack("<i", srs_id) + wkb  # little-endian, no envelope
        # The R-tree's triggers call SpatiaLite's functions, which plain SQLite lacks.
        for (trigger,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'disturbance'"
        ).fetchall():
            con.execute(f'DROP TRIGGER "{trigger}"')
        con.execute("UPDATE disturbance SET geom = ? WHERE fid = ?", (blob, fid))
        con.execute(
            "UPDATE gpkg_geometry_columns SET geometry_type_name = ?, m = ? WHERE table_name = 'disturbance'",
            (declared, m),
        )
        con.commit()


def test_arcs_are_read_alike_on_both_stacks_and_named(make_site, caplog):
    path = make_site([square(1.0, x=X0 + 2000), square(1.0)], phases=["1", "2"])
    _store(path, 2, _circle_wkb(), "CURVEPOLYGON")
    with caplog.at_level(logging.WARNING, logger="analysis.io.losses"):
        site = load_site_plan(path, PROFILE)
    circle = site.layers["disturbance"].geometry.iloc[1]
    assert site.area_crs.to_epsg() == 2260  # the profile's area CRS: the layer's own feet
    true_area = math.pi * RADIUS**2
    # GDAL's 4-degree steps: 90 chords, the area short by 1 - sin(4°)/(4° in radians), ~0.08%
    assert circle.area == pytest.approx(true_area * math.sin(math.radians(4)) / math.radians(4), rel=1e-3)
    warned = [r.getMessage() for r in caplog.records if "arcs" in r.getMessage()]
    assert len(warned) == 1
    assert "layer 'disturbance'" in warned[0] and "(2)" in warned[0] and "4 degrees" in warned[0]


def test_measures_dropped_are_named(make_site, caplog):
    path = make_site([square(1.0, x=X0 + 2000), square(1.0)], phases=["1", "2"])
    _store(path, 1, _measured_square_wkb(), "POLYGON", m=1)
    with caplog.at_level(logging.WARNING, logger="analysis.io.losses"):
        site = load_site_plan(path, PROFILE)
    assert not site.layers["disturbance"].geometry.iloc[0].has_z
    warned = [r.getMessage() for r in caplog.records if "M (measure)" in r.getMessage()]
    assert len(warned) == 1 and "layer 'disturbance'" in warned[0] and "(1)" in warned[0]


def test_a_plain_layer_warns_nothing(make_site, caplog):
    with caplog.at_level(logging.WARNING, logger="analysis.io.losses"):
        load_site_plan(make_site([square(1.0)]), PROFILE)
    assert not caplog.records


def test_a_second_geometry_column_is_named_as_not_read(make_site, caplog):
    path = make_site([square(1.0)])
    with closing(sqlite3.connect(path)) as con:
        srs_id = con.execute(
            "SELECT srs_id FROM gpkg_geometry_columns WHERE table_name = 'disturbance'"
        ).fetchone()[0]
        for (trigger,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'disturbance'"
        ).fetchall():
            con.execute(f'DROP TRIGGER "{trigger}"')
        con.execute("ALTER TABLE disturbance ADD COLUMN proposed POLYGON")  # gpkg_geometry_columns
        con.execute(
            "UPDATE disturbance SET proposed = ?",  # holds one geometry column a table
            (b"GP\x00\x01" + struct.pack("<i", srs_id) + _measured_square_wkb(),),
        )
        con.commit()
    with caplog.at_level(logging.WARNING, logger="analysis.io.losses"):
        site = load_site_plan(path, PROFILE)
    assert "proposed" not in site.layers["disturbance"].columns  # GDAL leaves it out
    warned = [r.getMessage() for r in caplog.records if "not read" in r.getMessage()]
    assert warned == [
        f"file {path}, layer 'disturbance': the column(s) 'proposed' were not read "
        "(GDAL reads one geometry column per layer, 'geom' here): the review does "
        "not see them. Fix: move what they hold into a layer of its own, or into "
        "fields of this one"
    ]
