"""Hostile geometry and schedule inputs, round 2 (issue 36 items 10, 11, 13, 14): each refused
with exit 2, named by layer and feature (or file and rows), nothing written.

Reuses the round-1 suite's builders and runner (tests/analysis/test_fuzz.py)."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest
import shapely

from analysis.errors import InputError
from analysis.siteplan.schedule import read_schedule
from tests.analysis.test_fuzz import (
    DATA,
    REFERENCE,
    SITE,
    Case,
    _blob,
    _copy,
    _envelope,
    _sql,
)
from tests.analysis.test_fuzz import test_refused as _refused

# A transverse Mercator in US survey feet close to New York East (EPSG:2260) but with no EPSG
# twin: a custom CRS (no code, no area of use), as a hand-made .prj gives one.
CUSTOM_FEET = (
    "+proj=tmerc +lat_0=38.8333333333333 +lon_0=-74.6 +k=0.9999 +x_0=150000 +y_0=0 "
    "+ellps=GRS80 +units=us-ft +no_defs"
)
CUSTOM_SRS = 990001


def _label(plan: Path, layers, srs_id: int, definition: str) -> None:
    """``layers`` of ``plan`` said to be in CRS ``srs_id`` (``definition``), coordinates kept."""
    from pyproj import CRS

    with sqlite3.connect(plan) as db:
        if not db.execute("SELECT 1 FROM gpkg_spatial_ref_sys WHERE srs_id = ?", (srs_id,)).fetchone():
            organization = "NONE" if srs_id == CUSTOM_SRS else "EPSG"
            db.execute(
                "INSERT INTO gpkg_spatial_ref_sys VALUES (?, ?, ?, ?, ?, NULL)",
                (f"custom {srs_id}", srs_id, organization, srs_id, CRS(definition).to_wkt("WKT1_GDAL")),
            )
    statements = []
    for layer in layers:
        statements += [
            f"UPDATE gpkg_geometry_columns SET srs_id = {srs_id} WHERE lower(table_name) = '{layer}'",
            f"UPDATE gpkg_contents SET srs_id = {srs_id} WHERE lower(table_name) = '{layer}'",
        ]
    _sql(plan, *statements)


def _spatial_layers(plan: Path) -> list:
    with sqlite3.connect(plan) as db:
        return [r[0] for r in db.execute("SELECT table_name FROM gpkg_geometry_columns")]


def _set_first(plan: Path, layer: str, geometry_of) -> None:
    """The first feature of ``layer`` given ``geometry_of(its geometry)`` (same srs id)."""
    with sqlite3.connect(plan) as db:
        (blob,) = db.execute(f"SELECT geom FROM {layer} ORDER BY fid LIMIT 1").fetchone()
        srs = db.execute(
            "SELECT srs_id FROM gpkg_geometry_columns WHERE lower(table_name) = ?", (layer,)
        ).fetchone()[0]
    blob = bytes(blob)
    geometry = geometry_of(shapely.from_wkb(blob[8 + _envelope(blob) :]))
    _sql(
        plan,
        f"UPDATE {layer} SET geom = ? WHERE fid = (SELECT min(fid) FROM {layer})",
        params=(_blob(geometry, srs),),
    )


def _far_vertex(geometry):
    coords = shapely.get_coordinates(geometry)
    coords[1] = (1e15, 1e15)
    return shapely.set_coordinates(geometry, coords)


def custom_crs_far_vertex(folder: Path) -> list:
    plan = _copy(SITE, folder, "site.gpkg")
    _label(plan, _spatial_layers(plan), CUSTOM_SRS, CUSTOM_FEET)
    _set_first(plan, "disturbance", _far_vertex)
    return ["review", plan, "--json", "{out}/r.json", "--quiet"]


def utm_metres_labelled_custom_feet(folder: Path) -> list:
    plan = _copy(DATA / "variants" / "crs_utm18n.gpkg", folder, "site.gpkg")
    _label(plan, _spatial_layers(plan), CUSTOM_SRS, CUSTOM_FEET)
    return ["review", plan, "--json", "{out}/r.json", "--quiet"]


def utm10n_california(folder: Path) -> list:
    """The UTM 18N plan's eastings and northings said to be UTM 10N: a site in northern
    California, inside EPSG:32610's own area of use, far from the profile's New York."""
    plan = _copy(DATA / "variants" / "crs_utm18n.gpkg", folder, "site.gpkg")
    _label(plan, _spatial_layers(plan), 32610, "EPSG:32610")
    return ["review", plan, "--json", "{out}/r.json", "--quiet"]


def degenerate_disturbance(folder: Path) -> list:
    """The first disturbance polygon flattened onto one line: make_valid leaves no polygon."""

    def flat(geometry):
        x0, y0, x1, _y1 = shapely.bounds(geometry)
        return shapely.Polygon([(x0, y0), (x1, y0), ((x0 + x1) / 2, y0), (x0, y0)])

    plan = _copy(SITE, folder, "site.gpkg")
    _set_first(plan, "disturbance", flat)
    return ["review", plan, "--json", "{out}/r.json", "--quiet"]


def nan_vertex_import(folder: Path) -> list:
    """``reference import`` of a wetlands source (the demo reference's layer) whose first
    feature has a NaN vertex."""
    import geopandas as gpd

    source = gpd.read_file(REFERENCE, layer="wetlands")
    geometry = source.geometry.iloc[0]
    coords = shapely.get_coordinates(geometry)
    coords[1] = (math.nan, coords[1][1])
    source.loc[source.index[0], "geometry"] = shapely.set_coordinates(geometry, coords)
    target = folder / "wetlands.gpkg"
    source.to_file(target, driver="GPKG")
    return [
        "reference",
        "import",
        "wetlands",
        target,
        "--reference",
        "{out}/ref.gpkg",
        "--quiet",
    ]


GEOMETRY_CASES = [
    pytest.param(
        Case("custom CRS 1e15", custom_crs_far_vertex, ("layer 'disturbance'", "outside the area")),
        id="crash-10-custom-crs-vertex-1e15",
    ),
    pytest.param(
        Case("NaN vertex import", nan_vertex_import, ("not a finite number",)),
        id="crash-10-reference-import-nan-vertex",
    ),
    pytest.param(
        Case(
            "UTM metres as custom feet",
            utm_metres_labelled_custom_feet,
            ("outside the area", "crs_area_margin_degrees"),
        ),
        id="wrong-11-utm-metres-labelled-custom-feet",
    ),
    pytest.param(
        Case(
            "UTM 10N California",
            utm10n_california,
            ("outside the area this rules profile reviews", "EPSG:2260"),
        ),
        id="wrong-11-utm10n-california-against-new-york",
    ),
    pytest.param(
        Case("degenerate polygon", degenerate_disturbance, ("layer 'disturbance'", "repair leaves nothing")),
        id="wrong-13-repair-empties-a-feature",
    ),
]


@pytest.mark.parametrize("item", GEOMETRY_CASES)
def test_geometry_refused(item: Case, tmp_path, capsys):
    _refused(item, tmp_path, capsys)


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param("2,2026-04-01,2026-06-01\n2.0,2026-05-01,2026-07-01\n", id="wrong-14-phase-2-and-2.0"),
        pytest.param(
            "Phase 2,2026-04-01,2026-06-01\n02,2026-05-01,2026-07-01\n", id="wrong-14-phase-2-and-02"
        ),
    ],
)
def test_a_phase_written_twice_is_refused_naming_the_rows(rows, tmp_path):
    schedule = tmp_path / "schedule.csv"
    schedule.write_text("phase,start,stabilized\n1,2026-03-01,2026-05-01\n" + rows, encoding="utf-8")
    with pytest.raises(InputError) as refused:
        read_schedule(schedule)
    told = str(refused.value)
    assert "rows 3" in told and "and 4" in told and "schedule.csv" in told, told


def test_wrong_15_import_reads_a_flag_word_by_the_contract_rule(tmp_path, capsys):
    """A wetlands source whose ``regulated`` holds 'Yes' / ' no ' is imported by the one yes/no
    rule (it was refused as 'not a number' while the reader took 'yes' as 1)."""
    import geopandas as gpd

    from analysis.cli import main
    from analysis.reference.read import open_reference

    source = gpd.read_file(REFERENCE, layer="wetlands")
    words = ["Yes", " no "] * len(source)
    source["regulated"] = words[: len(source)]
    target = tmp_path / "wetlands.gpkg"
    source.to_file(target, driver="GPKG")
    store = tmp_path / "ref.gpkg"
    code = main(["reference", "import", "wetlands", str(target), "--reference", str(store), "--quiet"])
    assert code == 0, capsys.readouterr().err
    frame = open_reference(store).lookup("wetlands", "wetland_id", ["*"], normalise=lambda v: "*")
    expected = [1 if w.strip().lower() == "yes" else 0 for w in words[: len(source)]]
    assert sorted(frame["regulated"].tolist()) == sorted(expected)


def test_wrong_15_the_contract_states_every_yes_no_word():
    """docs/CONTRACT.md states the one yes/no rule, each word with the value it reads as."""
    from analysis.siteplan.contract import BOOLEAN_WORDS

    contract = (Path(__file__).resolve().parents[2] / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    flat = " ".join(contract.split())
    for word, value in BOOLEAN_WORDS.items():
        assert f"`{word}` = {int(value)}" in flat, word
