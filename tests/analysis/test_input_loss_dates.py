"""A GeoPackage date column holding what GDAL cannot read as a date ('04/01/2027', 'soon',
'2027-02-30'): GDAL reads it as null, an empty date ("not yet scheduled"), without a word.
The readers put the stored text back: a site plan's date reader refuses it, and `swppp
phasing` names the polygon's date as unreadable, naming the feature, on both stacks."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import geopandas as gpd
import pandas as pd
import pytest

from analysis.checks.phasing import FIELDS, disturbance_from_frame, review_phasing
from analysis.errors import InputError
from analysis.io.geopackage import stored_texts
from analysis.phasing.source import read_phasing_source
from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, square

PROFILE = load_profile()


def _plan_with_date_column(make_site, stored: str):
    """A site plan whose disturbance dates are a DATETIME column (as QGIS's date fields are
    written), phase 2's start replaced by ``stored`` as SQLite keeps it."""
    disturbance = gpd.GeoDataFrame(
        {
            "phase": ["1", "2"],
            "start_date": pd.to_datetime(["2027-04-01", "2027-05-01"]),
            "stabilized_date": pd.to_datetime(["2027-06-01", "2027-07-01"]),
        },
        geometry=[square(1.0), square(1.0, x=X0 + 500)],
        crs="EPSG:2260",
    )
    path = make_site([square(1.0)], layers={"disturbance": disturbance})
    with closing(sqlite3.connect(path)) as con:
        declared = {r[1]: r[2] for r in con.execute("PRAGMA table_info(disturbance)")}
        assert declared["start_date"] in ("DATE", "DATETIME")
        for (trigger,) in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'disturbance'"
        ).fetchall():
            con.execute(f'DROP TRIGGER "{trigger}"')  # they call SpatiaLite's functions
        con.execute("UPDATE disturbance SET start_date = ? WHERE fid = 2", (stored,))
        con.commit()
    return path


@pytest.mark.parametrize("stored", ["04/01/2027", "soon", "2027-02-30"])
def test_an_unreadable_date_is_refused_not_read_as_empty(make_site, stored):
    path = _plan_with_date_column(make_site, stored)
    with pytest.raises(
        InputError,
        match=rf"layer 'disturbance', feature 2, field 'start_date': "
        rf"start_date (is )?'{stored}'",
    ):
        load_site_plan(path, PROFILE)
    source = read_phasing_source(path, layer="disturbance")  # swppp phasing's reader
    assert source.frame["start_date"].iloc[1] == stored
    frame, _repairs = disturbance_from_frame(
        source.frame, source.crs, {key: key for key in FIELDS}, PROFILE, path=source.path, layer=source.layer
    )
    plan, _findings = review_phasing(frame, PROFILE)
    assert any(stored in p.reason for p in plan.problems)


def test_a_readable_date_time_is_left_to_the_driver(make_site):
    path = _plan_with_date_column(make_site, "2027-05-01T00:00:00.000Z")
    assert stored_texts(path, "disturbance") == {}
    site = load_site_plan(path, PROFILE)
    assert str(site.layers["disturbance"]["start_date"].iloc[1]) == "2027-05-01"
