"""The engine's properties (``analysis.judge``), on random sites over adversarial reference layers.

- One site is judged as it is among many: the engine with n = 1 gives each site the row (and
  the wetland measures) it gives it with n = N.
- The two measuring strategies agree: the PostGIS screen's SQL measures the pairs the local
  STRtree measures, and the one decision gives each site the same row (a real PostgreSQL:
  ``tests/postgis.py``).
The case (``test_screen_differential``'s adversarial reference layers) and the sites (some of
the case's own, placed on its awkward parts, and random rectangles) are drawn by hypothesis,
derandomised: the same examples every run.
"""

from __future__ import annotations

import uuid
from dataclasses import replace

import geopandas as gpd
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.crs import crs_of
from analysis.judge.decide import Verdict, Weight, Why, decide_condition_a
from analysis.judge.evidence import (
    CatchmentShare,
    CategoryKind,
    ConditionAEvidence,
    ListedRecord,
    Reach,
    WaterEvidence,
    WatershedEvidence,
)
from analysis.judge.measure import measure_wetlands
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.reference.window import search_windows
from analysis.screen.screen import screen_sites
from analysis.screen.sites import Sites
from tests.analysis.test_screen_differential import CASES, LAYERS, importable, profile_for, rect, write_case

PROFILE = load_profile()
# Every adversarial case but the one of many sites (its sites are drawn here instead).
CASE_NAMES = sorted(name for name in CASES if name != "many_sites")
RECT = st.builds(
    rect,
    st.floats(-1500, 7500),
    st.floats(-1500, 7500),
    st.floats(20, 1500),
    st.floats(20, 1500),
    st.sampled_from([0.0, 0.0, 33.0]),
)
EXAMPLES = settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


class Stores:
    """Each case's layers imported (once, when first drawn) into a GeoPackage store (the local
    strategy's) and, given a server, a PostGIS schema (the SQL strategy's)."""

    def __init__(self, folder, server=None):
        self.folder, self.server, self.done = folder, server, {}

    def __call__(self, name):
        if name not in self.done:
            from analysis.reference.importer import read_candidate
            from analysis.reference.postgis import PostgisStore
            from analysis.reference.store import GeoPackageStore

            case = importable(CASES[name]())
            folder = self.folder / name
            folder.mkdir()
            reference, _ = write_case(case, folder)
            store = GeoPackageStore(folder / "store.gpkg")
            source = None
            if self.server is not None:
                source = (self.server.conninfo(), f"t_{uuid.uuid4().hex[:10]}")
            for layer in LAYERS:
                candidate = read_candidate(layer, f"{reference}|layername={layer}")
                store.import_candidate(candidate)
                if source is not None:
                    PostgisStore(*source).import_candidate(candidate)
            self.done[name] = (
                case,
                profile_for(case),
                store.path,
                source and f"{source[0]} schema={source[1]}",
            )
        return self.done[name]


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    return Stores(tmp_path_factory.mktemp("judge"))


@pytest.fixture(scope="module")
def pg_stores(tmp_path_factory, postgis_server):
    return Stores(tmp_path_factory.mktemp("judge_pg"), postgis_server)


def draw_sites(data, case, profile) -> Sites:
    """Some of the case's own sites (placed on its awkward parts) and random rectangles, in
    the profile's area CRS."""
    picked = data.draw(st.lists(st.integers(0, len(case.sites) - 1), max_size=4, unique=True))
    polygons = [case.sites[k] for k in picked] + data.draw(st.lists(RECT, max_size=4))
    if not polygons:
        polygons = [case.sites[0]]
    area = crs_of(profile.area_crs)
    shapes = gpd.GeoSeries(polygons, crs="EPSG:2260").to_crs(area).values
    return Sites(
        path="sites",
        layer="sites",
        id_field="site_id",
        ids=np.array([f"S{k:03d}" for k in range(len(polygons))], dtype=object),
        geometries=np.asarray(shapes, dtype=object),
        crs=area,
    )


def one(sites: Sites, k: int) -> Sites:
    return replace(sites, ids=sites.ids[k : k + 1], geometries=sites.geometries[k : k + 1])


@EXAMPLES
@given(st.sampled_from(CASE_NAMES), st.data())
def test_one_site_is_judged_as_among_many(stores, name, data):
    case, profile, path, _ = stores(name)
    sites = draw_sites(data, case, profile)
    many = screen_sites(sites, open_reference(path), profile).rows
    for k in range(len(sites)):
        assert screen_sites(one(sites, k), open_reference(path), profile).rows == [many[k]]
    # The wetland measure itself, on every wetland of the layer.
    reference = open_reference(path)
    wetlands = reference.read("wetlands", (-1e9, -1e9, 1e9, 1e9), sites.crs, needed_for="the test")
    windows = search_windows(sites.boxes, sites.crs, profile)
    together = measure_wetlands(sites.geometries, wetlands, profile, sites.crs, windows)
    for k in range(len(sites)):
        alone = measure_wetlands(
            sites.geometries[k : k + 1], wetlands, profile, sites.crs, windows[k : k + 1]
        )
        mine = together.site == k
        assert alone.wetland_acres[0] == together.wetland_acres[k]
        assert alone.adjacent_acres[0] == together.adjacent_acres[k]
        assert alone.wetland_id.tolist() == together.wetland_id[mine].tolist()
        assert alone.inside_sq_ft.tolist() == together.inside_sq_ft[mine].tolist()
        assert alone.adjacent_sq_ft.tolist() == together.adjacent_sq_ft[mine].tolist()
        assert alone.status(profile) == [together.status(profile)[k]]


@EXAMPLES
@given(st.sampled_from(CASE_NAMES), st.data())
def test_the_local_and_postgis_strategies_agree(pg_stores, name, data):
    from analysis.screen.postgis import screen_postgis

    case, profile, path, source = pg_stores(name)
    sites = draw_sites(data, case, profile)
    local = screen_sites(sites, open_reference(path), profile).rows
    database = screen_postgis(sites, source, profile).rows
    assert [row["site_id"] for row in database] == [row["site_id"] for row in local]
    for mine, theirs in zip(local, database):
        for column, value in mine.items():
            if isinstance(value, float):
                assert theirs[column] == pytest.approx(value, abs=1e-6), (column, mine, theirs)
            else:
                assert theirs[column] == value, (column, mine, theirs)


# --- the decision on evidence made by hand ------------------------------------------------------


def _listed(wid="NY-1", kind=CategoryKind.LISTED, pollutants=("phosphorus",)):
    return ListedRecord(wid, "A Brook", "2022", "5", kind, ";".join(pollutants), pollutants)


def test_a_listed_water_with_a_pollutant_applies_and_names_its_pollutants():
    water = WaterEvidence("NY-1", Reach.CATCHMENT, ("catchments:C1",), record=_listed())
    decision = decide_condition_a(ConditionAEvidence((water,), receiving_known=True), PROFILE, "sediment")
    assert decision.verdict is Verdict.APPLIES and not decision.by_name_only
    assert decision.pollutants == ("sediment", "phosphorus")
    assert [(r.weight, r.why) for r in decision.reasons] == [(Weight.TRIGGER, Why.LISTED)]


@pytest.mark.parametrize(
    "kind, weight",
    [
        (CategoryKind.TMDL, Weight.UNDECIDED),
        (CategoryKind.UNKNOWN, Weight.UNDECIDED),
        (CategoryKind.B4, Weight.NOTE),
        (CategoryKind.C4, Weight.NOTE),
        (CategoryKind.OTHER, Weight.NOTE),
    ],
)
def test_a_water_not_303d_listed_weighs_by_its_category(kind, weight):
    water = WaterEvidence("NY-1", Reach.DOWNSTREAM, ("C1",), "route", _listed(kind=kind))
    decision = decide_condition_a(ConditionAEvidence((water,), receiving_known=True), PROFILE, "sediment")
    assert decision.verdict is (Verdict.NOT_DECIDED if weight is Weight.UNDECIDED else Verdict.DOES_NOT_APPLY)
    assert decision.reasons[0].weight is weight and decision.reasons[0].why is Why.CATEGORY


def test_a_watershed_met_downstream_weighs_by_the_profiles_reading():
    shed = WatershedEvidence("TW-1", "T1", None, "Mercury", ("mercury",), True, route="r")
    evidence = ConditionAEvidence(routed_watersheds=(shed,), receiving_known=True)
    for reading, verdict in (("applies", Verdict.APPLIES), ("needs_review", Verdict.NOT_DECIDED)):
        profile = replace(PROFILE, condition_a=replace(PROFILE.condition_a, routed_tmdl_watershed=reading))
        assert decide_condition_a(evidence, profile, "sediment").verdict is verdict
    # one the site overlaps too is told once, as overlapped
    overlapped = replace(shed, route=None, acres=1.0)
    decision = decide_condition_a(replace(evidence, watersheds=(overlapped,)), PROFILE, "sediment")
    assert [r.watershed for r in decision.reasons] == [overlapped]


@pytest.mark.parametrize(
    "real, outlet, verdict, why",
    [
        (True, None, Verdict.APPLIES, Why.SOURCE),
        (False, True, Verdict.APPLIES, Why.SOURCE),
        (False, False, Verdict.DOES_NOT_APPLY, Why.GRAZED_OUTSIDE),
        (False, None, Verdict.NOT_DECIDED, Why.GRAZED_UNKNOWN),
    ],
)
def test_a_watershed_met_downstream_counts_where_the_route_goes(real, outlet, verdict, why):
    """SWPPP C(1), "discharging ... to ... a TMDL designated watershed": a catchment that only
    grazes it (no real share) carries the runoff there only where it drains into it."""
    share = CatchmentShare("Y", 0.46, 3.8, real, outlet)
    shed = WatershedEvidence("TW-1", "T1", None, "Mercury", ("mercury",), True, route="r", share=share)
    decision = decide_condition_a(
        ConditionAEvidence(routed_watersheds=(shed,), receiving_known=True), PROFILE, "sediment"
    )
    assert decision.verdict is verdict and decision.reasons[0].why is why
    # a grazed watershed whose stormwater is not a source decides nothing either way
    other = replace(shed, stormwater_source=False)
    decided = decide_condition_a(
        ConditionAEvidence(routed_watersheds=(other,), receiving_known=True), PROFILE, "sediment"
    )
    assert decided.verdict is Verdict.DOES_NOT_APPLY


def test_no_known_receiving_water_leaves_it_open():
    decision = decide_condition_a(ConditionAEvidence(), PROFILE, "sediment")
    assert decision.verdict is Verdict.NOT_DECIDED
    assert [r.why for r in decision.reasons] == [Why.RECEIVING_UNKNOWN]
