"""Issue 18: the chapter read line by line, one case per point, each id quoting its words."""
from __future__ import annotations

import json

import pandas as pd
import pytest

from analysis.checks.map_scale import check_site_map_scale
from analysis.cli.app import main
from analysis.profile import load_profile
from tests.conftest import TEST_DATA

REFERENCE = TEST_DATA / "demo_reference.gpkg"
PROFILE = load_profile()


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


# --- point 2: 'including a general location map' ------------------------------------------
@pytest.mark.parametrize("sheet, denominator, drawing, expected", [
    ("C-001 Location map", 2400.0, None, "info"),       # the demo's: read from its title
    ("USGS quad", 24000.0, "location_map", "info"),      # 1:24,000, said to be a location map
    ("C-001 Location map", 2400.0, "site_map", "fail"),  # said to be the site map: held to it
    ("C-101 Site plan", 2400.0, None, "fail"),
    ("C-101 Site plan", 1200.0, "", "pass"),
], ids=["title-location-map", "usgs-quad-location_map", "drawing-site_map-wins",
        "site-map-1in200ft", "site-map-1in100ft"])
def test_p2_including_a_general_location_map(sheet, denominator, drawing, expected):
    stated = pd.DataFrame({"sheet": [sheet, "C-102"], "scale_denominator": [denominator, 600.0],
                           "drawing": [drawing, "site_map"]})
    findings, _ = check_site_map_scale([], stated, None, PROFILE)
    assert findings[0].status == expected
    if expected == "info":
        assert '"including a general location map"' in findings[0].message


def test_p2_only_location_maps_leave_the_site_map_unchecked():
    stated = pd.DataFrame({"sheet": ["Vicinity map"], "scale_denominator": [24000.0]})
    findings, _ = check_site_map_scale([], stated, None, PROFILE)
    assert [f.status for f in findings] == ["info", "needs_review"]
