"""Fixtures for the analysis tests: tiny site plans written on either geopandas stack."""

from __future__ import annotations

import os
import warnings

import geopandas as gpd
import pandas as pd
import pytest
from shapely import box

from analysis.io.vector import write_geopackage
from analysis.reference.contract import LAYER_NAMES
from analysis.reference.read import SPECS as REFERENCE_SPECS
from analysis.siteplan.contract import SPECS
from tests.conftest import square_side_us_ft

X0, Y0 = 582_737.0, 913_239.0  # the village, in EPSG:2260 (US survey feet)

# The project row, in the contract's field order: name, address, applicant, land_use,
# common_plan_acres, five_acre_waiver, receiving_waters.
PROJECT = dict(
    zip(
        SPECS["project"].field_names,
        ("Test site", "1 Test Road", "Tester", "commercial", None, 0, "Test Brook"),
    )
)


# Where GDAL and PROJ find their data: a test (or a script it imports) that changes these for
# the rest of the worker makes later answers wrong (a newer PROJ reading Debian's proj.db reads
# EPSG:2260's US feet as metres), so any change is a failure of the test that made it.
_DATA_ENVIRONMENT = ("PROJ_DATA", "PROJ_LIB", "GDAL_DATA")


@pytest.fixture(autouse=True)
def _data_environment_unchanged():
    before = {name: os.environ.get(name) for name in _DATA_ENVIRONMENT}
    yield
    after = {name: os.environ.get(name) for name in _DATA_ENVIRONMENT}
    assert after == before, f"the test changed where GDAL/PROJ find their data: {before} -> {after}"


def square(acres: float, x: float = X0, y: float = Y0):
    side = square_side_us_ft(acres)
    return box(x, y, x + side, y + side)


@pytest.fixture
def make_site(tmp_path):
    """Write a site plan GeoPackage from disturbance polygons (EPSG:2260) and project fields.

    ``layers`` adds more site-plan layers (name -> GeoDataFrame, in any CRS); ``dates`` gives each
    disturbance polygon's (start_date, stabilized_date); ``discharge_points`` is a list of
    (point, receiving_water, waterbody_id) in EPSG:2260.
    """

    def make(
        disturbance,
        phases=None,
        filename="site.gpkg",
        crs="EPSG:2260",
        layers=None,
        dates=None,
        discharge_points=(),
        boundary=None,
        **project,
    ):
        row = {**PROJECT, **project}
        boundary = boundary or box(X0 - 2000, Y0 - 2000, X0 + 2000, Y0 + 2000)
        phases = phases or ["1"] * len(disturbance)
        dates = dates or [("2027-04-01", "2027-06-01")] * len(disturbance)
        plan = {
            "project": pd.DataFrame([row]).astype({"common_plan_acres": float}),
            "site_boundary": gpd.GeoDataFrame(
                {"parcel_id": ["1-1-1"]}, geometry=[boundary], crs="EPSG:2260"
            ).to_crs(crs),
            "disturbance": gpd.GeoDataFrame(
                dict(
                    zip(
                        SPECS["disturbance"].field_names,  # phase, start_date, stabilized_date
                        (phases, [start for start, _ in dates], [end for _, end in dates]),
                    )
                ),
                geometry=list(disturbance),
                crs="EPSG:2260",
            ).to_crs(crs),
        }
        if discharge_points:  # [(point, receiving_water, waterbody_id)]
            plan["discharge_point"] = gpd.GeoDataFrame(
                dict(
                    zip(
                        SPECS["discharge_point"].field_names,  # receiving_water, waterbody_id
                        ([p[1] for p in discharge_points], [p[2] for p in discharge_points]),
                    )
                ),
                geometry=[p[0] for p in discharge_points],
                crs="EPSG:2260",
            ).to_crs(crs)
        plan.update(layers or {})
        path = tmp_path / filename
        write_geopackage(path, plan)
        return path

    return make


from tests.postgis import pg_schema, postgis_server  # noqa: E402,F401 - fixtures for the PostGIS tests

REFERENCE_FIELDS = {name: REFERENCE_SPECS[name].field_names for name in LAYER_NAMES}


def local_box(x1, y1, x2, y2):
    """A box in feet east/north of (X0, Y0), in EPSG:2260."""
    return box(X0 + x1, Y0 + y1, X0 + x2, Y0 + y2)


@pytest.fixture
def make_reference(tmp_path):
    """Write a reference GeoPackage: each layer a list of (geometry, {field: value}) in EPSG:2260.

    Layers not given are written empty (so that the file keeps the contract); ``omit`` leaves
    layers out; ``crs`` reprojects every layer; ``versions`` adds a layer_versions table.
    """

    def make(filename="reference.gpkg", crs="EPSG:2260", omit=(), versions=None, **layers):
        frames = {}
        for name, fields in REFERENCE_FIELDS.items():
            if name in omit:
                continue
            rows = layers.get(name, [])
            data = {f: pd.Series([attrs.get(f) for _, attrs in rows], dtype=object) for f in fields}
            frame = gpd.GeoDataFrame(data, geometry=gpd.GeoSeries([g for g, _ in rows], crs="EPSG:2260"))
            for numeric in ("regulated", "adjacent_area_ft", "stormwater_source"):
                if numeric in frame:
                    frame[numeric] = frame[numeric].astype(float)
            frames[name] = frame.to_crs(crs)
        if versions:
            frames["layer_versions"] = pd.DataFrame(versions)
        path = tmp_path / filename
        with warnings.catch_warnings():  # geopandas 0.12 warns of the empty layers
            warnings.filterwarnings("ignore", "You are attempting to write an empty DataFrame")
            write_geopackage(path, frames)
        return path

    return make
