"""The engine's properties (``analysis.judge``), on random sites over adversarial reference layers.

- One site is judged as it is among many: the engine with n = 1 gives each site the row (and
  the wetland measures) it gives it with n = N.
- The two measuring strategies agree: the PostGIS screen's SQL measures the pairs the local
  STRtree measures, and the one decision gives each site the same row (a real PostgreSQL:
  ``tests/postgis.py``).
The sites are drawn by hypothesis (derandomised: the same examples every run); the layers are
``test_screen_differential``'s nested TMDL watersheds, routes downstream and odd wetlands.
"""
from __future__ import annotations

import uuid
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from analysis.crs import crs_of
from analysis.judge.decide import Verdict, Weight, Why, decide_condition_a
from analysis.judge.evidence import (CategoryKind, ConditionAEvidence, ListedRecord, Reach,
                                     WaterEvidence, WatershedEvidence)
from analysis.judge.measure import measure_wetlands
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.reference.window import search_windows
from analysis.screen.screen import screen_sites
from analysis.screen.sites import Sites
from tests.analysis.test_screen_differential import (LAYERS, importable, nested_tmdl,
                                                     odd_wetlands, rect, write_case)

PROFILE = load_profile()
SITE = st.builds(rect, st.floats(-500, 9500), st.floats(-500, 6000), st.floats(20, 1500),
                 st.floats(20, 1500), st.sampled_from([0.0, 0.0, 33.0]))
EXAMPLES = settings(max_examples=25, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """The layers imported into a GeoPackage store (the local strategy's)."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.store import GeoPackageStore

    case = nested_tmdl()
    case = importable(replace(case, layers={**case.layers,
                                            "wetlands": odd_wetlands().layers["wetlands"]}))
    folder = tmp_path_factory.mktemp("judge")
    reference, _ = write_case(case, folder)
    store = GeoPackageStore(folder / "store.gpkg")
    candidates = {layer: read_candidate(layer, f"{reference}|layername={layer}")
                  for layer in LAYERS}
    for candidate in candidates.values():
        store.import_candidate(candidate)
    return store.path, candidates


def sites_of(polygons, first=0) -> Sites:
    return Sites(path="sites", layer="sites", id_field="site_id",
                 ids=np.array([f"S{first + k:03d}" for k in range(len(polygons))], dtype=object),
                 geometries=np.array(polygons, dtype=object), crs=crs_of(PROFILE.area_crs))


@EXAMPLES
@given(st.lists(SITE, min_size=2, max_size=6))
def test_one_site_is_judged_as_among_many(store, polygons):
    path, _ = store
    many = screen_sites(sites_of(polygons), open_reference(path), PROFILE).rows
    for k, polygon in enumerate(polygons):
        assert screen_sites(sites_of([polygon], k), open_reference(path), PROFILE).rows == [many[k]]
    # The wetland measure itself, on every wetland of the layer.
    crs = crs_of(PROFILE.area_crs)
    reference = open_reference(path)
    wetlands = reference.read("wetlands", (-1e9, -1e9, 1e9, 1e9), crs, needed_for="the test")
    geometries = np.array(polygons, dtype=object)
    windows = search_windows(sites_of(polygons).boxes, crs, PROFILE)
    together = measure_wetlands(geometries, wetlands, PROFILE, crs, windows)
    for k in range(len(polygons)):
        alone = measure_wetlands(geometries[k:k + 1], wetlands, PROFILE, crs, windows[k:k + 1])
        mine = together.site == k
        assert alone.wetland_acres[0] == together.wetland_acres[k]
        assert alone.adjacent_acres[0] == together.adjacent_acres[k]
        assert alone.wetland_id.tolist() == together.wetland_id[mine].tolist()
        assert alone.inside_sq_ft.tolist() == together.inside_sq_ft[mine].tolist()
        assert alone.adjacent_sq_ft.tolist() == together.adjacent_sq_ft[mine].tolist()
        assert alone.status(PROFILE) == [together.status(PROFILE)[k]]


@pytest.fixture(scope="module")
def postgis_source(postgis_server, store):
    """The same layers imported into a PostGIS schema (the SQL strategy's)."""
    from analysis.reference.postgis import PostgisStore

    _, candidates = store
    conninfo, schema = postgis_server.conninfo(), f"t_{uuid.uuid4().hex[:10]}"
    for candidate in candidates.values():
        PostgisStore(conninfo, schema).import_candidate(candidate)
    return f"{conninfo} schema={schema}"


@EXAMPLES
@given(st.lists(SITE, min_size=1, max_size=8))
def test_the_local_and_postgis_strategies_agree(store, postgis_source, polygons):
    from analysis.screen.postgis import screen_postgis

    path, _ = store
    local = screen_sites(sites_of(polygons), open_reference(path), PROFILE).rows
    database = screen_postgis(sites_of(polygons), postgis_source, PROFILE).rows
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
    decision = decide_condition_a(ConditionAEvidence((water,), receiving_known=True), PROFILE,
                                  "sediment")
    assert decision.verdict is Verdict.APPLIES and not decision.by_name_only
    assert decision.pollutants == ("sediment", "phosphorus")
    assert [(r.weight, r.why) for r in decision.reasons] == [(Weight.TRIGGER, Why.LISTED)]


@pytest.mark.parametrize("kind, weight", [(CategoryKind.TMDL, Weight.UNDECIDED),
                                          (CategoryKind.UNKNOWN, Weight.UNDECIDED),
                                          (CategoryKind.B4, Weight.NOTE),
                                          (CategoryKind.C4, Weight.NOTE),
                                          (CategoryKind.OTHER, Weight.NOTE)])
def test_a_water_not_303d_listed_weighs_by_its_category(kind, weight):
    water = WaterEvidence("NY-1", Reach.DOWNSTREAM, ("C1",), "route", _listed(kind=kind))
    decision = decide_condition_a(ConditionAEvidence((water,), receiving_known=True), PROFILE,
                                  "sediment")
    assert decision.verdict is (Verdict.NOT_DECIDED if weight is Weight.UNDECIDED
                                else Verdict.DOES_NOT_APPLY)
    assert decision.reasons[0].weight is weight and decision.reasons[0].why is Why.CATEGORY


def test_a_watershed_met_downstream_weighs_by_the_profiles_reading():
    shed = WatershedEvidence("TW-1", "T1", None, "Mercury", ("mercury",), True, route="r")
    evidence = ConditionAEvidence(routed_watersheds=(shed,), receiving_known=True)
    for reading, verdict in (("applies", Verdict.APPLIES), ("needs_review", Verdict.NOT_DECIDED)):
        profile = replace(PROFILE, condition_a=replace(PROFILE.condition_a,
                                                       routed_tmdl_watershed=reading))
        assert decide_condition_a(evidence, profile, "sediment").verdict is verdict
    # one the site overlaps too is told once, as overlapped
    overlapped = replace(shed, route=None, acres=1.0)
    decision = decide_condition_a(replace(evidence, watersheds=(overlapped,)), PROFILE,
                                  "sediment")
    assert [r.watershed for r in decision.reasons] == [overlapped]


def test_no_known_receiving_water_leaves_it_open():
    decision = decide_condition_a(ConditionAEvidence(), PROFILE, "sediment")
    assert decision.verdict is Verdict.NOT_DECIDED
    assert [r.why for r in decision.reasons] == [Why.RECEIVING_UNKNOWN]
