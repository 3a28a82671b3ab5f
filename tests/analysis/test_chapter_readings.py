"""Issue 18: the chapter read line by line, one case per point, each id quoting its words."""
from __future__ import annotations

import json

import pytest

from analysis.cli.app import main
from tests.conftest import TEST_DATA

REFERENCE = TEST_DATA / "demo_reference.gpkg"


def review(tmp_path, site, *extra):
    """``swppp review`` in-process: (exit status, the JSON result)."""
    out = tmp_path / "r.json"
    status = main(["review", str(site), "--reference", str(REFERENCE), "--json", str(out),
                   *map(str, extra)])
    return status, json.loads(out.read_text(encoding="utf-8"))


def statuses(result, rule):
    return [f["status"] for f in result["findings"] if f["rule"] == rule]


# --- point 1: 'land development activities as defined herein' ----------------------------
REGULATED_ONLY = ("condition_a", "condition_b", "condition_c", "postconstruction_controls",
                  "easement_coverage", "site_map_scale", "hydrology_pre_post",
                  "water_quality_volume", "phasing_five_acres", "phasing_sequence", "wetlands",
                  "disturbance_outside_site")


@pytest.fixture(scope="module")
def under_one_acre(tmp_path_factory):
    return review(tmp_path_factory.mktemp("p1"), TEST_DATA / "variants" / "under_one_acre.gpkg")


@pytest.mark.parametrize("rule", REGULATED_ONLY)
def test_p1_land_development_activities_as_defined_herein(under_one_acre, rule):
    status, result = under_one_acre
    assert status == 0
    assert result["conditions"]["swppp_required"] is False
    assert statuses(result, rule) == ["not_applicable"]
    [message] = [f["message"] for f in result["findings"] if f["rule"] == rule]
    assert '"land development activities as defined herein"' in message
    assert not any(c["applies"] for k, c in result["conditions"].items() if k != "swppp_required")
