"""Shared test helpers: the shipped test data, copied before use, and tiny site plans."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEST_DATA = ROOT / "test_data"
SHARED = ROOT.parent / "shared"


@pytest.fixture
def data_copy(tmp_path):
    """Copy a file of test_data/ into tmp_path and return the copy's path."""

    def copy(relative: str) -> Path:
        source = TEST_DATA / relative
        assert source.is_file(), f"missing test data {source}; run test_data/make_test_data.py"
        target = tmp_path / Path(relative).name
        shutil.copyfile(source, target)
        return target

    return copy


def shared_path(relative: str) -> Path:
    """A file of the public data kept beside the checkout (not in the repository), or a skip
    saying why where a fresh clone has none."""
    path = SHARED / relative
    if not path.exists():
        pytest.skip(
            f"{path} is absent (public data kept outside the repository, "
            "beside the checkout in this project's CI only)"
        )
    return path


def square_side_us_ft(acres: float) -> float:
    """Side in US survey feet of a square of ``acres`` international acres."""
    return math.sqrt(acres * 4046.8564224) / (1200 / 3937)


def write_long_site(source: Path, target: Path, length_ft: float = 3000.0) -> Path:
    """A long site plan: ``source`` (the demo) with its parcel stretched east to ``length_ft``
    and a phase 3 disturbance at the far end, for the report's atlas of map sheets.

    Plain geopandas (either stack), so the QGIS tests can use it without the analysis package.
    """
    import geopandas as gpd
    from shapely import box

    shutil.copyfile(source, target)
    boundary = gpd.read_file(source, layer="site_boundary")
    xmin, ymin, _, ymax = boundary.total_bounds
    boundary.geometry = [box(xmin, ymin, xmin + length_ft, ymax)]
    disturbance = gpd.read_file(source, layer="disturbance")
    far = disturbance.iloc[[4]].copy()  # D-5, phase 3
    far["disturbance_id"] = "D-6"
    far.geometry = [box(xmin + length_ft - 300, ymin + 100, xmin + length_ft - 50, ymax - 100)]
    disturbance = gpd.GeoDataFrame(
        [*disturbance.to_dict("records"), *far.to_dict("records")], crs=disturbance.crs
    )
    for name, frame in (("site_boundary", boundary), ("disturbance", disturbance)):
        frame.to_file(target, layer=name, driver="GPKG")
    return target


# Names a user's files give, as a QGIS expression or HTML would read them: "[% ... %]" in a
# label's text is evaluated by QGIS (the user's name, 2), "<b>" read as markup in HTML mode.
NAMES = {
    "BR-2": "[% @user_full_name %]",  # the failing SMP: findings, measurements, map label
    "DA-1": "[% eval('1+1') %]",  # a drainage area: hydrology tables, map label
    "Forest Road Commons": "<b>x</b>",
}  # the project: the title, the decision page
REFERENCE_NAMES = {
    "GO-12": "<i>GO</i>-[% 3*4 %]",  # a regulated wetland: conditions, map label
    "Seven Springs Creek tributary": "<b>Creek</b> [% @layout_name %]",
}
PLAN_FILE_NAME = "[% eval('1+1') %] <b>plan.gpkg"  # the reports give the plan's path


def rename_text(path: Path, old: str, new: str) -> int:
    """Replace the text ``old`` by ``new`` in every text column of every table of the
    GeoPackage at ``path`` (an id renamed with the features that refer to it); the count of
    cells changed. By SQLite: the R-tree triggers name SpatiaLite's functions, which only have
    to exist (no geometry changes, so they never run)."""
    import sqlite3
    from contextlib import closing

    changed = 0
    with closing(sqlite3.connect(path)) as con, con:
        for name in ("ST_IsEmpty", "ST_MinX", "ST_MaxX", "ST_MinY", "ST_MaxY"):
            con.create_function(name, 1, lambda geometry: None)
        tables = [t for (t,) in con.execute("SELECT table_name FROM gpkg_contents")]
        for table in tables:
            for column in [
                c[1] for c in con.execute(f'PRAGMA table_info("{table}")') if c[2].upper().startswith("TEXT")
            ]:
                changed += con.execute(
                    f'UPDATE "{table}" SET "{column}" = ? WHERE "{column}" = ?', (new, old)
                ).rowcount
    return changed
