"""The site-plan contract declared once, and every value read once as its type at load."""

from datetime import date
from pathlib import Path

import geopandas as gpd
import pandas as pd
import pytest

from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.siteplan import contract
from analysis.siteplan.contract import (
    BOOLEAN,
    CODED,
    DATE,
    REAL,
    SITE_PLAN_LAYERS,
    SPECS,
    FieldSpec,
    LayerSpec,
    layers_of,
)
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import PROJECT, square

PROFILE = load_profile()
CONTRACT_MD = (
    "project",
    "site_boundary",
    "disturbance",
    "smp",
    "easement",
    "discharge_point",
    "public_row",
    "layout_scale",
)


def test_every_layer_of_contract_md_is_declared_once_with_typed_fields():
    names = [spec.name for spec in SITE_PLAN_LAYERS]
    assert len(names) == len(set(names)) == len(SPECS)
    assert [s.name for s in layers_of("site")] == list(CONTRACT_MD)
    assert {s.name for s in layers_of("hydrology")} == {
        "soils",
        "land_cover_pre",
        "land_cover_post",
        "drainage_area",
        "hydrology_claims",
    }
    assert {s.name for s in layers_of("checklist")} == {
        "esc_practice",
        "submission",
        "contractor_certification",
        "guarantee",
    }
    assert [s.name for s in SITE_PLAN_LAYERS if s.required] == ["project", "site_boundary", "disturbance"]
    for spec in SITE_PLAN_LAYERS:
        assert spec.label and all(isinstance(f, FieldSpec) for f in spec.fields), spec.name


@pytest.mark.parametrize(
    "layer, name, kind, unit",
    [
        ("project", "common_plan_acres", REAL, "acres"),
        ("project", "five_acre_waiver", BOOLEAN, None),
        ("project", "land_use", CODED, None),
        ("disturbance", "start_date", DATE, None),
        ("easement", "recorded", BOOLEAN, None),
        ("drainage_area", "tc_hours", REAL, "hours"),
        ("hydrology_claims", "post_peak_cfs", REAL, "cfs"),
        ("hydrology_claims", "wqv_cf", REAL, "cu ft"),
        ("esc_practice", "length_ft", REAL, "ft"),
        ("guarantee", "ends_on", DATE, None),
        ("contractor_certification", "signed_on", DATE, None),
    ],
)
def test_fields_carry_their_type_and_unit(layer, name, kind, unit):
    spec = SPECS[layer].field(name)
    assert (spec.type, spec.unit) == (kind, unit)


def test_a_declaration_that_contradicts_itself_is_refused():
    with pytest.raises(ValueError, match="lists its codes"):
        FieldSpec("stage", CODED)
    with pytest.raises(ValueError, match="id field"):
        LayerSpec("x", None, ("a",), id_field="b")
    with pytest.raises(ValueError, match="unknown geometry"):
        LayerSpec("x", ("curve",), ("a",))
    with pytest.raises(ValueError, match="unknown layer group"):
        layers_of("sewer")


def test_the_contract_module_reads_no_file_and_imports_no_geopandas():
    source = contract.__file__
    text = Path(source).read_text(encoding="utf-8")
    assert "geopandas" not in text and "open(" not in text


def test_shipped_demo_values_are_read_as_their_types(data_copy):
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    assert site.project["five_acre_waiver"] is False
    assert site.project["common_plan_acres"] is None
    assert site.layers["disturbance"]["start_date"].iloc[0] == date(2027, 4, 1)
    assert site.layers["easement"]["recorded"].dtype == bool
    assert site.layers["drainage_area"]["tc_hours"].dtype == float


# --- refusals, on tiny GeoPackages ---------------------------------------------------------


def _write(path, extra=None, **layers):
    """A tiny site plan (project, site_boundary, disturbance) with ``layers``' fields changed and
    the ``extra`` layers added."""
    plan = {
        "project": pd.DataFrame([PROJECT]),
        "site_boundary": gpd.GeoDataFrame({"parcel_id": ["1"]}, geometry=[square(3.0)], crs="EPSG:2260"),
        "disturbance": gpd.GeoDataFrame(
            dict(zip(SPECS["disturbance"].field_names, (["1"], ["2027-04-01"], ["2027-06-01"]))),
            geometry=[square(1.0)],
            crs="EPSG:2260",
        ),
    }
    for name, changes in layers.items():
        frame = plan[name].copy()
        for column, value in changes.items():
            frame[column] = pd.Series([value], dtype=object)
        plan[name] = frame
    write_geopackage(path, {**plan, **(extra or {})})
    return path


@pytest.mark.parametrize(
    "layer, changes, said",
    [
        (
            "project",
            {"common_plan_acres": "three"},
            "field 'common_plan_acres': common_plan_acres is 'three', not a number",
        ),
        (
            "project",
            {"common_plan_acres": "-2"},
            "field 'common_plan_acres': common_plan_acres is -2.0, below 0.0",
        ),
        (
            "project",
            {"five_acre_waiver": "ja"},
            "field 'five_acre_waiver': five_acre_waiver is 'ja', not 1 or 0 (or yes or no)",
        ),
        ("project", {"five_acre_waiver": 2}, "; it must be 1 or 0 (or yes or no)"),
        ("project", {"land_use": "factory"}, "land_use is 'factory', not one of"),
        ("project", {"land_use": None}, "land_use is empty, not one of"),
        (
            "disturbance",
            {"start_date": "04/01/2027"},
            "field 'start_date': start_date '04/01/2027' is not an ISO date (YYYY-MM-DD)",
        ),
        ("disturbance", {"stabilized_date": "2027-02-30"}, "stabilized_date '2027-02-30' is not"),
    ],
)
def test_a_value_that_cannot_be_read_names_file_layer_feature_and_field(tmp_path, layer, changes, said):
    path = _write(tmp_path / "tiny.gpkg", **{layer: changes})
    with pytest.raises(InputError) as refused:
        load_site_plan(path, PROFILE)
    message = str(refused.value)
    assert f"file {path}, layer '{layer}', feature 1, " in message
    assert said in message and "Fix:" in message


def test_optional_layers_values_are_checked_too(tmp_path):
    guarantee = pd.DataFrame(
        {
            "kind": ["bond"],
            "amount": ["lots"],
            "starts_on": [None],
            "ends_on": ["2030-01-01"],
            "covers": ["maintenance"],
        }
    )
    easement = gpd.GeoDataFrame(
        {"easement_id": ["E-1", "E-2"], "recorded": [1, 3], "instrument": ["L1", "L2"]},
        geometry=[square(0.1), square(0.1, x=583_000.0)],
        crs="EPSG:2260",
    )
    path = _write(tmp_path / "tiny.gpkg", extra={"guarantee": guarantee, "easement": easement})
    with pytest.raises(
        InputError,
        match=r"layer 'easement', feature 2, field 'recorded': "
        r"recorded is 3; it must be 1 or 0",
    ):
        load_site_plan(path, PROFILE)
    path = _write(tmp_path / "tiny.gpkg", extra={"guarantee": guarantee})
    with pytest.raises(
        InputError,
        match=r"layer 'guarantee', feature 1, field 'amount': "
        r"amount is 'lots', not a number",
    ):
        load_site_plan(path, PROFILE)


def test_codes_are_matched_in_any_case_and_stored_as_the_contract_spells_them(tmp_path):
    soils = gpd.GeoDataFrame({"hsg": ["c/d"]}, geometry=[square(3.0)], crs="EPSG:2260")
    path = _write(tmp_path / "tiny.gpkg", extra={"soils": soils}, project={"land_use": " Commercial "})
    site = load_site_plan(path, PROFILE)
    assert site.project["land_use"] == "commercial"
    assert list(site.layers["soils"]["hsg"]) == ["C/D"]


def test_date_time_text_gives_its_day_and_an_empty_date_is_none(tmp_path):
    path = _write(
        tmp_path / "tiny.gpkg", disturbance={"start_date": "2027-04-01T00:00:00", "stabilized_date": None}
    )
    frame = load_site_plan(path, PROFILE).layers["disturbance"]
    assert list(frame["start_date"]) == [date(2027, 4, 1)]
    assert list(frame["stabilized_date"]) == [None]
