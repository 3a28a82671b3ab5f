"""Fixtures for the analysis tests: tiny site plans written on either geopandas stack."""
from __future__ import annotations

import geopandas as gpd
import pandas as pd
import pytest
from shapely import box

from analysis.vector_io import write_geopackage
from tests.conftest import square_side_us_ft

X0, Y0 = 582_737.0, 913_239.0  # the village, in EPSG:2260 (US survey feet)

PROJECT = {"name": "Test site", "address": "1 Test Road", "applicant": "Tester",
           "land_use": "commercial", "common_plan_acres": None, "five_acre_waiver": 0,
           "receiving_waters": "Test Brook"}


def square(acres: float, x: float = X0, y: float = Y0):
    side = square_side_us_ft(acres)
    return box(x, y, x + side, y + side)


@pytest.fixture
def make_site(tmp_path):
    """Write a site plan GeoPackage from disturbance polygons (EPSG:2260) and project fields.

    ``layers`` adds more site-plan layers (name -> GeoDataFrame, in any CRS); ``dates`` gives each
    disturbance polygon's (start_date, stabilized_date).
    """

    def make(disturbance, phases=None, filename="site.gpkg", crs="EPSG:2260", layers=None,
             dates=None, **project):
        row = {**PROJECT, **project}
        boundary = box(X0 - 2000, Y0 - 2000, X0 + 2000, Y0 + 2000)
        phases = phases or ["1"] * len(disturbance)
        dates = dates or [("2027-04-01", "2027-06-01")] * len(disturbance)
        plan = {
            "project": pd.DataFrame([row]).astype({"common_plan_acres": float}),
            "site_boundary": gpd.GeoDataFrame({"parcel_id": ["1-1-1"]}, geometry=[boundary],
                                              crs="EPSG:2260").to_crs(crs),
            "disturbance": gpd.GeoDataFrame(
                {"phase": phases, "start_date": [start for start, _ in dates],
                 "stabilized_date": [end for _, end in dates]},
                geometry=list(disturbance), crs="EPSG:2260").to_crs(crs),
        }
        plan.update(layers or {})
        path = tmp_path / filename
        write_geopackage(path, plan)
        return path

    return make


from tests.postgis import pg_schema, postgis_server  # noqa: E402,F401 - fixtures for the PostGIS tests
