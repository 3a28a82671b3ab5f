"""A custom CRS (no EPSG code, no area of use) with a vertex at 1e15, through
``processing.run('swppp:review', ...)``: refused naming the layer and feature, no crash
(issue 36 item 10)."""

import sqlite3
import struct

import pytest
import shapely
from pyproj import CRS
from qgis.core import QgsProcessingException

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

CUSTOM_FEET = (  # as tests/analysis/test_fuzz_geometry.py: New York East's shape, no EPSG twin
    "+proj=tmerc +lat_0=38.8333333333333 +lon_0=-74.6 +k=0.9999 +x_0=150000 +y_0=0 "
    "+ellps=GRS80 +units=us-ft +no_defs"
)
CUSTOM_SRS = 990001


def _custom_plan_with_far_vertex(plan):
    """Every spatial layer of ``plan`` said to be in the custom CRS; the first disturbance
    feature given a vertex at (1e15, 1e15)."""
    with sqlite3.connect(plan) as db:
        for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
            db.execute(f'DROP TRIGGER "{name}"')  # the R-tree triggers need GDAL's SQL functions
        db.execute(
            "INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, NULL)",
            ("custom feet", CUSTOM_SRS, "NONE", CUSTOM_SRS, CRS(CUSTOM_FEET).to_wkt("WKT1_GDAL")),
        )
        db.execute(f"UPDATE gpkg_geometry_columns SET srs_id = {CUSTOM_SRS}")
        db.execute(f"UPDATE gpkg_contents SET srs_id = {CUSTOM_SRS} WHERE data_type = 'features'")
        fid, blob = db.execute("SELECT fid, geom FROM disturbance ORDER BY fid LIMIT 1").fetchone()
        blob = bytes(blob)
        envelope = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(blob[3] >> 1) & 0x07]
        geometry = shapely.from_wkb(blob[8 + envelope :])
        coords = shapely.get_coordinates(geometry)
        coords[1] = (1e15, 1e15)
        moved = shapely.set_coordinates(geometry, coords)
        new = b"GP\x00\x01" + struct.pack("<i", CUSTOM_SRS) + shapely.to_wkb(moved, byte_order=1)
        db.execute("UPDATE disturbance SET geom = ? WHERE fid = ?", (new, fid))
    return fid


def test_crash_10_custom_crs_vertex_1e15_through_processing(data_copy, tmp_path):
    import processing

    site = data_copy("demo_site.gpkg")
    fid = _custom_plan_with_far_vertex(site)
    out = tmp_path / "out"
    with pytest.raises(QgsProcessingException) as refused:
        processing.run("swppp:review", {"SITE": str(site), "OUTPUT_JSON": str(out / "r.json")})
    told = str(refused.value)
    assert "disturbance" in told and f"feature {fid}" in told and "outside the area" in told, told
    assert "Traceback" not in told
    assert not out.exists() or not any(out.iterdir())
