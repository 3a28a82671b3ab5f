"""``swppp screen --since``: a water leaving the 303(d) list for an approved TMDL (category 5 ->
4a) between two versions of the reference.

SWPPP C(1): Condition A is runoff "discharging a pollutant of concern to either an impaired
water identified on the Department's 303(d) list of impaired waters or a total maximum daily
load (TMDL) designated watershed for which pollutants in stormwater have been identified as a
source of the impairment". A 4a water is no longer on the 303(d) list (category 5,
``analysis/reference/categories.py``); whether stormwater is a source of its impairment is in
its TMDL, which the reference does not record for a water: a site draining only to it is "not
decided" (confirm), never "does not apply". A site also inside a TMDL watershed recorded with
stormwater as a source still meets the second branch: its answer does not change.
"""

from __future__ import annotations

import json

import geopandas as gpd
import pandas as pd
import shapely

from analysis.cli.app import main
from analysis.profile import load_profile
from analysis.reference.categories import CATEGORY_WORDS
from analysis.reference.importer import read_candidate
from analysis.reference.read import open_reference
from analysis.screen.screen import APPLIES, NOT_DECIDED, screen_sites
from analysis.screen.since import category_changes, differences
from analysis.screen.sites import read_sites
from tests.analysis.test_screen import DEMO_REFERENCE, stored

# Sites on the demo reference (EPSG:2260, US survey feet), 400 ft squares. Catchment
# 020200060101 (x 578737-584637) drains to NY1301-0099 (category 5, Silt/Sediment and
# Phosphorus); catchment 020200060102 (x 584387-589737) to Example Brook NY1301-0123 (4a);
# TMDL watershed TW-1 (x 584737-588737, y 911039-916439) has stormwater as a source.
SITES = {
    "LISTED": (580000, 911000),  # in 0101 only: drains to NY1301-0099 alone
    "BOTH": (584500, 912000),  # in 0101 and 0102, and inside TW-1
    "BROOK": (587000, 910300),  # in 0102 only, south of TW-1: Example Brook (4a) alone
    "WATERSHED": (586000, 913000),  # in 0102 and inside TW-1
    "FAR": (600000, 900000),  # in no catchment
}
# What each site is before the move and after it.
EXPECTED = {
    "LISTED": (APPLIES, NOT_DECIDED),
    "BOTH": (APPLIES, APPLIES),
    "BROOK": (NOT_DECIDED, NOT_DECIDED),
    "WATERSHED": (APPLIES, APPLIES),
    "FAR": (NOT_DECIDED, NOT_DECIDED),
}  # no catchment: where it drains is unknown


def sites_file(folder):
    frame = gpd.GeoDataFrame(
        {"site_id": list(SITES)},
        geometry=[shapely.box(x, y, x + 400, y + 400) for x, y in SITES.values()],
        crs="EPSG:2260",
    )
    path = folder / "sites.gpkg"
    frame.to_file(path, layer="parcels", driver="GPKG")
    return path


def moved_to_4a(folder):
    """Version 2 of the 303(d) list: NY1301-0099 now category 4a (a TMDL approved)."""
    waters = gpd.read_file(DEMO_REFERENCE, layer="impaired_waters")
    waters.loc[waters["waterbody_id"] == "NY1301-0099", "category"] = "4a"
    path = folder / "waters_v2.gpkg"
    gpd.GeoDataFrame(pd.DataFrame(waters), crs=waters.crs).to_file(
        path, layer="impaired_waters", driver="GPKG"
    )
    return path


def test_a_water_moving_from_5_to_4a_is_no_longer_listed_for_exactly_the_sites_it_alone_decided(
    tmp_path, capsys
):
    profile = load_profile()
    store = stored(DEMO_REFERENCE, tmp_path)
    path = sites_file(tmp_path)
    sites = read_sites(path, profile.area_crs)
    before = screen_sites(sites, open_reference(store.path), profile).by_site()
    assert {k: row["condition_a"] for k, row in before.items()} == {
        k: then for k, (then, _now) in EXPECTED.items()
    }
    assert before["LISTED"]["listed_waters"] == "NY1301-0099"

    store.import_candidate(read_candidate("impaired_waters", moved_to_4a(tmp_path)))
    out = tmp_path / "since.json"
    assert (
        main(["screen", str(path), "--reference", str(store.path), "--since", "1", "--json", str(out)]) == 0
    )
    text = capsys.readouterr().out
    result = json.loads(out.read_text(encoding="utf-8"))
    since = result["since"]
    assert since["layers"] == {"impaired_waters": {"from": 1, "to": 2}}
    assert since["changes"] == [
        {
            "site_id": "LISTED",
            "what": "Condition A",
            "before": APPLIES,
            "after": NOT_DECIDED,
            "because": "303(d)-listed water NY1301-0099 no longer listed (was category 5, now category 4a)",
        }
    ]
    assert "since version 1: 1 site(s) changed" in text
    assert "NY1301-0099 no longer listed (was category 5, now category 4a)" in text

    after = screen_sites(sites, open_reference(store.path), profile).by_site()
    assert {k: after[k]["condition_a"] for k in SITES} == {k: now for k, (_then, now) in EXPECTED.items()}
    # Why LISTED is now not decided: the 4a words, the TMDL branch to check.
    assert after["LISTED"]["listed_waters"] == ""
    assert CATEGORY_WORDS["tmdl"] in after["LISTED"]["why"]
    # BOTH still meets C(1) through TW-1, not through the water that left the list.
    assert "TW-1" in after["BOTH"]["tmdl_watersheds"] and after["BOTH"]["listed_waters"] == ""


def test_a_change_of_category_is_told_what_it_was_and_what_it_is_now():
    """Back from 4a to 5 (a TMDL withdrawn): newly listed, and the categories said; a water that
    left the list without a change of category (it is gone from the layer) says none."""
    then = pd.DataFrame(
        {"waterbody_id": ["NY-1", " ny-2", "NY-3", "NY-4"], "category": ["4a", "5", "5", None]}
    )
    now = pd.DataFrame({"waterbody_id": ["NY-1", "NY-2", "NY-4"], "category": [" 5", "5", "5"]})
    categories = category_changes(then, now)
    assert categories == {"NY-1": ("4a", "5"), "NY-4": ("", "5")}
    row = {
        "condition_a": NOT_DECIDED,
        "wetland_status": "none",
        "wetlands": "",
        "tmdl_watersheds": "",
        "receiving_waters": "NY-1;NY-3;NY-4",
        "why": "",
        "listed_waters": "NY-3",
    }
    changed = {**row, "condition_a": APPLIES, "listed_waters": "NY-1;NY-4"}
    [change] = differences({"S": row}, {"S": changed}, categories)
    assert change["because"] == (
        "303(d)-listed water NY-1 newly listed (was category 4a, now category 5); "
        "303(d)-listed water NY-4 newly listed (was no category recorded, now category 5); "
        "303(d)-listed water NY-3 no longer listed"
    )
    [plain] = differences({"S": row}, {"S": changed})
    assert plain["because"].startswith("303(d)-listed water NY-1 newly listed; ")


def test_the_import_re_screen_tells_the_change_of_category_as_since_does(tmp_path, capsys):
    # `swppp reference import impaired_waters ... --sites` of version 2 names the same site,
    # with the same words, as `swppp screen --since 1` does.
    store = stored(DEMO_REFERENCE, tmp_path)
    path = sites_file(tmp_path)
    out = tmp_path / "import.json"
    assert (
        main(
            [
                "reference",
                "import",
                "impaired_waters",
                str(moved_to_4a(tmp_path)),
                "--reference",
                str(store.path),
                "--source-date",
                "2026-02-01",
                "--sites",
                str(path),
                "--json",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["rescreen"]["changes"] == [
        {
            "site_id": "LISTED",
            "what": "Condition A",
            "before": APPLIES,
            "after": NOT_DECIDED,
            "because": "303(d)-listed water NY1301-0099 no longer listed (was category 5, now category 4a)",
        }
    ]
    assert "NY1301-0099 no longer listed (was category 5, now category 4a)" in printed
