"""Issue 18: the chapter read line by line, one case per point, each id quoting its words."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import date

import pandas as pd
import pytest
from shapely import LineString, Point

from analysis.checklist.guarantees import check_guarantees
from analysis.checks.applicability import check_applicability, disturbed_area
from analysis.checks.conditions import check_condition_b, check_condition_c
from analysis.checks.map_scale import check_site_map_scale
from analysis.checks.phasing import review_phasing
from analysis.cli.app import main
from analysis.profile import load_profile
from analysis.records.penalty import assess_penalty
from analysis.reference.read import open_reference
from analysis.review import review_site
from analysis.siteplan.plan import load_site_plan
from analysis.units import ellipsoidal_acres
from tests.analysis.conftest import X0, Y0, local_box, square
from tests.conftest import TEST_DATA

REFERENCE = TEST_DATA / "demo_reference.gpkg"
PROFILE = load_profile()


def review(tmp_path, site, *extra):
    """``swppp review`` in-process: (exit status, the JSON result)."""
    out = tmp_path / "r.json"
    status = main(["review", str(site), "--reference", str(REFERENCE), "--json", str(out), *map(str, extra)])
    return status, json.loads(out.read_text(encoding="utf-8"))


def statuses(result, rule):
    return [f["status"] for f in result["findings"] if f["rule"] == rule]


# --- point 1: 'land development activities as defined herein' ----------------------------
REGULATED_ONLY = (
    "condition_a",
    "condition_b",
    "condition_c",
    "postconstruction_controls",
    "easement_coverage",
    "site_map_scale",
    "hydrology_pre_post",
    "water_quality_volume",
    "phasing_five_acres",
    "phasing_sequence",
    "wetlands",
    "disturbance_outside_site",
)


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
@pytest.mark.parametrize(
    "sheet, denominator, drawing, expected",
    [
        ("C-001 Location map", 2400.0, None, "info"),  # the demo's: read from its title
        ("USGS quad", 24000.0, "location_map", "info"),  # 1:24,000, said to be a location map
        ("C-001 Location map", 2400.0, "site_map", "warn"),  # said to be the site map: held to it
        ("C-101 Site plan", 2400.0, None, "warn"),  # B(2) "should": warn (round 3, 13)
        ("C-101 Site plan", 1200.0, "", "pass"),
    ],
    ids=[
        "title-location-map",
        "usgs-quad-location_map",
        "drawing-site_map-wins",
        "site-map-1in200ft",
        "site-map-1in100ft",
    ],
)
def test_p2_including_a_general_location_map(sheet, denominator, drawing, expected):
    stated = pd.DataFrame(
        {
            "sheet": [sheet, "C-102"],
            "scale_denominator": [denominator, 600.0],
            "drawing": [drawing, "site_map"],
        }
    )
    findings, _ = check_site_map_scale([], stated, None, PROFILE)
    assert findings[0].status == expected
    if expected == "info":
        assert '"including a general location map"' in findings[0].message


def test_p2_only_location_maps_leave_the_site_map_unchecked():
    stated = pd.DataFrame({"sheet": ["Vicinity map"], "scale_denominator": [24000.0]})
    findings, _ = check_site_map_scale([], stated, None, PROFILE)
    assert [f.status for f in findings] == ["info", "needs_review"]


# --- round 3, point 13: the site map "should be at a scale no smaller than" ------------------
@pytest.mark.parametrize("smaller, reading", [("warn", "a recommendation"), ("fail", "a requirement")])
def test_r3_13_site_map_scale_should_is_the_profiles_switch(smaller, reading):
    """SWPPP B(2): "Site map should be at a scale no smaller than one inch equals 100 feet":
    "should", not "shall". The default profile reads it as a recommendation (warn); a village
    that holds plans to it says so in the profile (fail). Either way the finding quotes it."""
    profile = replace(PROFILE, site_map_scale=replace(PROFILE.site_map_scale, smaller_scale_status=smaller))
    stated = pd.DataFrame({"sheet": ["C-101 Site plan", "C-102"], "scale_denominator": [2400.0, 1200.0]})
    findings, _ = check_site_map_scale([], stated, None, profile)
    assert [f.status for f in findings] == [smaller, "pass"]
    assert (
        f'"Site map should be at a scale no smaller than one inch equals 100 feet"; read as {reading}'
    ) in findings[0].message
    assert "should" not in findings[1].message
    assert load_profile().site_map_scale.smaller_scale_status == "warn"


# --- point 5: 'an impaired water identified on the Department's 303(d) list' -------------
OUTFALL = Point(X0 + 50, Y0 + 150)


def condition_a(make_site, make_reference, **layers):
    site = load_site_plan(
        make_site([local_box(-100, 0, 100, 100)], discharge_points=[(OUTFALL, "Brook", "NY-B")]), PROFILE
    )
    review = review_site(
        site, PROFILE, reference=open_reference(make_reference(**layers)), rules=["condition_a"]
    )
    return review.conditions["A"], next(f for f in review.findings if f.rule == "condition_a")


def brook(category):
    line = LineString([(X0 - 5000, Y0 + 900), (X0 + 5000, Y0 + 900)])
    return line, {
        "waterbody_id": "NY-B",
        "name": "Brook",
        "pollutants": "Phosphorus",
        "listing_cycle": "2022",
        "category": category,
    }


@pytest.mark.parametrize(
    "category, expected, words",
    [
        ("5", "info", "is 303(d)-listed"),
        ("4a", "needs_review", "TMDL branch"),
        ("4b", "not_applicable", "category 4b"),
        ("4c", "not_applicable", "category 4c"),
        (None, "needs_review", "category is not recorded"),
    ],
    ids=[
        "5-identified-on-the-303(d)-list",
        "4a-total-maximum-daily-load-designated-watershed",
        "4b-neither-branch",
        "4c-neither-branch",
        "empty-category-needs-review",
    ],
)
def test_p5_identified_on_the_departments_303d_list(make_site, make_reference, category, expected, words):
    a, finding = condition_a(make_site, make_reference, impaired_waters=[brook(category)])
    assert finding.status == expected, finding.message
    assert words in finding.message
    assert a.applies is (expected == "info")
    if category == "4a":
        assert "303(d)-listed" not in finding.message


def test_p5_tmdl_for_which_pollutants_in_stormwater_unknown_needs_review(make_site, make_reference):
    shed = (
        local_box(-3000, -3000, 3000, 3000),
        {
            "watershed_id": "W",
            "name": "Shed",
            "pollutants": "Phosphorus",
            "tmdl_id": "T",
            "stormwater_source": None,
        },
    )
    a, finding = condition_a(make_site, make_reference, tmdl_watersheds=[shed])
    assert finding.status == "needs_review" and not a.decided
    assert "whether stormwater is a source is not recorded" in finding.message


# --- points 7-9: when each duty falls due -----------------------------------------------
@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return review(tmp_path_factory.mktemp("demo"), TEST_DATA / "demo_site.gpkg")


def checklist_status(result, item):
    return next(e["status"] for e in result["checklist"] if e["item"] == item)


def contents_missing(result):
    [finding] = [f for f in result["findings"] if f["rule"] == "swppp_contents"]
    return finding["message"].split("before approval: ", 1)[-1]


def test_p7_the_village_may_require_a_construction_completion_guarantee(demo):
    _status, result = demo
    [f] = [f for f in result["findings"] if f["rule"] == "construction_guarantee"]
    assert f["status"] == "info" and f["due"] == "before_construction"
    assert '"may require"' in f["message"] and "reviewer's" in f["message"]
    assert checklist_status(result, "Inspections E(1)") == "not_applicable"
    assert "Inspections E(1)" not in contents_missing(result)


def test_p7_maintenance_bond_prior_to_construction(demo):
    _status, result = demo
    [f] = [f for f in result["findings"] if f["rule"] == "maintenance_bond"]
    assert f["status"] == "info" and f["due"] == "before_construction"
    assert checklist_status(result, "Inspections E(2)") == "not_yet_due"
    assert "Inspections E(2)" not in contents_missing(result)


@pytest.mark.parametrize(
    "estimate, expected",
    [(150000.0, "warn"), (None, "needs_review"), (100000.0, "pass")],
    ids=[
        "amount-under-the-estimated-cost-of-maintaining-for-five-years",
        "no-estimate-given",
        "amount-covers-the-estimated-cost",
    ],
)
def test_p7_shall_cover_the_estimated_cost_of_maintaining_the_system(estimate, expected):
    site = load_site_plan(TEST_DATA / "variants" / "contents_complete.gpkg", PROFILE)
    site.layers["guarantee"] = pd.DataFrame(
        [
            {
                "kind": "bond",
                "amount": 120000.0,
                "starts_on": "2027-03-15",
                "ends_on": "2032-11-15",
                "covers": "maintenance",
                "estimated_cost": estimate,
            }
        ]
    )
    # The last stabilisation standing for substantial completion (not the default: round 3, 8).
    stands = replace(
        PROFILE, guarantees=replace(PROFILE.guarantees, stabilization_stands_for_acceptance=True)
    )
    [f] = [f for f in check_guarantees(site, stands).findings if f.rule == "maintenance_bond"]
    assert f.status == expected and f.due == "before_construction"
    if expected != "pass":
        assert "estimated cost" in f.message


@pytest.mark.parametrize(
    "item, due",
    [
        ("G(1)", "before_construction"),
        ("G(2)", "before_construction"),
        ("G(3)", "before_construction"),
        ("H", "during_construction"),
    ],
    ids=[
        "G1-before-undertaking-any-land-development-activity",
        "G2-the-certification-must-include",
        "G3-become-part-of-the-SWPPP",
        "H-retained-at-the-site-during-construction",
    ],
)
def test_p8_duties_of_construction_are_not_missing_before_approval(demo, item, due):
    _status, result = demo
    entry = next(e for e in result["checklist"] if e["item"] == item)
    assert entry["status"] == "not_yet_due" and entry["due"] == due
    assert item not in contents_missing(result).split(", ")
    [f] = [f for f in result["findings"] if f["rule"] == "contractor_certification"]
    assert f["status"] == "info" and f["due"] == "before_construction"


def test_p9_easements_shall_be_recorded_on_the_plan(demo):
    _status, result = demo
    pending = [
        f
        for f in result["findings"]
        if f["rule"] == "easement_coverage" and "not yet recorded" in f["message"]
    ]
    assert [(f["status"], f.get("due")) for f in pending] == [("info", "after_approval")]
    assert "after approval by the counsel for the Village" in pending[0]["message"]
    assert "record them" not in pending[0]["message"]  # no call to record before approval
    assert checklist_status(result, "D(8)") == "provided"  # shown on the plan


# --- point 3: 'disturbing between one and five acres of land during the course of the project'
@pytest.mark.parametrize(
    "acres, plan, means, rule, expected",
    [
        (0.9, 2.0, "disturbed", "condition_c", "info"),
        (3.0, 40.0, "disturbed", "condition_b", "info"),
        (3.0, 40.0, "total", "condition_b", "needs_review"),
        (3.0, 40.0, "total", "condition_c", "needs_review"),
        (3.0, 4.0, "total", "condition_c", "info"),
        (0.9, None, "disturbed", "condition_c", "not_applicable"),
    ],
    ids=[
        "0.9ac-lot-in-2ac-common-plan-C-between-one-and-five-acres",
        "3ac-lot-in-40ac-common-plan-B-disturbing-five-or-more-acres",
        "only-the-common-plans-total-known-B-needs-review",
        "only-the-common-plans-total-known-C-needs-review",
        "total-4ac-bounds-C-within-one-and-five",
        "no-common-plan-site-alone",
    ],
)
def test_p3_land_development_activity_includes_the_common_plan(make_site, acres, plan, means, rule, expected):
    profile = replace(PROFILE, applicability=replace(PROFILE.applicability, common_plan_acres_means=means))
    site = load_site_plan(make_site([square(acres)], common_plan_acres=plan), profile)
    check = check_condition_b if rule == "condition_b" else check_condition_c
    finding, condition = check(site, disturbed_area(site), profile)
    assert finding.status == expected, finding.message
    assert condition.decided is (expected != "needs_review")
    if plan is not None and expected != "not_applicable":
        assert "common plan" in finding.message


# --- point 12: 'What is not checked is said' ----------------------------------------------
@pytest.mark.parametrize(
    "section",
    [
        "Performance and design criteria B",
        "Maintenance and repair A(2)",
        "Maintenance and repair C(1)",
        "Maintenance and repair C(2)",
        "Maintenance and repair C(3)",
        "Inspections A(1)(b)",
        "Inspections D",
        "Enforcement D",
        "Fees",
    ],
    ids=[
        "turbidity-substantial-visible-contrast",
        "on-site-representative-and-reports-delivered",
        "preventive-corrective-maintenance-program",
        "written-procedures",
        "discharges-from-the-SMPs",
        "no-further-work-until-violations-corrected",
        "right-of-entry",
        "stop-work-orders",
        "reimburse-the-villages-costs",
    ],
)
def test_p12_what_is_not_checked_is_said(demo, section):
    _status, result = demo
    listed = [n for n in result["not_checked"] if n["section"] == section]
    assert listed and all(
        set(n) == {"section", "duty", "reason"} and n["duty"] and n["reason"] for n in listed
    )


# --- point 10: 'for conviction of a second offence'; 'Each day's continued violation' ------
def test_p10_each_days_continued_violation_is_not_a_further_conviction():
    # three days of a first-time criminal violation: three first offences, 14 days each at most
    a = assess_penalty([], "A", date(2027, 6, 1), "criminal", PROFILE, until=date(2027, 6, 3))
    c = a.continuing
    assert (c["separate_violations"], c["total_fine_min"], c["total_fine_max"]) == (3, 0.0, 1050.0)
    assert c["total_imprisonment_max_days"] == 42
    assert '"for conviction of"' in c["reading"] and a.to_dict()["section"] == "Enforcement E"


def test_p10_civil_violations_may_escalate_and_say_so():
    a = assess_penalty([], "A", date(2027, 6, 1), "civil", PROFILE, until=date(2027, 6, 15))
    assert a.continuing["total_fine_max"] == 350.0 + 700.0 + 1000.0
    assert "numbered on" in a.continuing["reading"] and a.to_dict()["section"] == "Enforcement F"


# --- point 4: 'one or more acre'; 'five or more acres' at the threshold --------------------
def planar_acres_for_true(true_acres):
    """The planar (EPSG:2260) acres of a square at the village whose ellipsoidal area is
    ``true_acres`` (the scale factor here is nearly constant over a few acres)."""
    ratio = ellipsoidal_acres(square(true_acres), "EPSG:2260")[0] / true_acres
    return true_acres / ratio


@pytest.mark.parametrize(
    "true_acres, rule, expected",
    [
        (1.0, "applicability", "needs_review"),
        (1.0, "condition_c", "needs_review"),
        (5.0, "condition_b", "needs_review"),
        (5.0, "condition_c", "needs_review"),
        (0.999, "applicability", "info"),
        (1.001, "condition_c", "info"),
    ],
    ids=[
        "1.000-true-acres-one-or-more-acre-needs-review",
        "1.000-C-between-one-and-five",
        "5.000-true-acres-B-five-or-more-acres",
        "5.000-C-under-five",
        "0.999-true-acres-under-one-acre",
        "1.001-true-acres-C-applies",
    ],
)
def test_p4_threshold_decisions_on_the_ellipsoidal_area(make_site, true_acres, rule, expected):
    site = load_site_plan(make_site([square(planar_acres_for_true(true_acres))]), PROFILE)
    disturbed = disturbed_area(site)
    assert disturbed.true_acres == pytest.approx(true_acres, abs=1e-6)
    assert disturbed.acres < disturbed.true_acres  # the State Plane grid reads less here
    if rule == "applicability":
        finding, _required = check_applicability(site, disturbed, PROFILE)
    else:
        check = check_condition_b if rule == "condition_b" else check_condition_c
        finding, _condition = check(site, disturbed, PROFILE)
    assert finding.status == expected, finding.message
    assert "ellipsoidal area" in finding.message
    assert (
        f"{true_acres:.2f} acres disturbed" not in finding.message
        or round(true_acres, 2) != true_acres
        or expected == "needs_review"
    )
    if true_acres == 0.999:
        assert "0.9990 acres disturbed" in finding.message  # never "1.00 ... under 1"


# Point 4 for phasing: B(4) "not more than five acres shall be disturbed at any one time".
@pytest.mark.parametrize(
    "true_acres, expected",
    [(5.0, "needs_review"), (5.0009056, "fail"), (4.999, "pass")],
    ids=[
        "5.000-true-acres-not-more-than-five-acres-needs-review",
        "exactly_five_acres.gpkg-planar-5.0000-true-5.0009-more-than-five",
        "4.999-true-acres-not-more-than-five",
    ],
)
def test_p4_not_more_than_five_acres_at_any_one_time_on_the_ellipsoid(make_site, true_acres, expected):
    # two phases at once, one polygon each: the worst moment holds both
    half = planar_acres_for_true(true_acres) / 2
    site = load_site_plan(make_site([square(half), square(half, x=X0 + 2000)], phases=["1", "2"]), PROFILE)
    plan, findings = review_phasing(site.layer("disturbance"), PROFILE)
    assert plan.max_true_acres == pytest.approx(true_acres, abs=1e-5)
    assert plan.max_acres < plan.max_true_acres  # planar reads 0.018% less here
    [finding] = [f for f in findings if f.rule == "phasing_five_acres"]
    assert finding.status == expected, finding.message
    assert "ellipsoidal area on GRS 1980, pyproj Geod" in finding.message
    assert "5.00 acres" not in finding.message  # never "5.00" beside "more than 5"


def test_p4_exactly_five_acres_variant_is_over_five_on_the_ellipsoid(tmp_path):
    status, result = review(tmp_path, TEST_DATA / "variants" / "exactly_five_acres.gpkg")
    [finding] = [f for f in result["findings"] if f["rule"] == "phasing_five_acres"]
    assert finding["status"] == "fail" and "5.0009 acres (ellipsoidal" in finding["message"]
    assert result["measurements"]["max_concurrent_disturbed_acres"] == pytest.approx(5.0, abs=1e-6)
    assert result["measurements"]["max_concurrent_disturbed_acres_ellipsoidal"] == pytest.approx(
        5.0009056, abs=1e-6
    )


def test_r3_10_the_five_acre_fail_carries_b4s_proviso(tmp_path):
    """SWPPP B(4): "not more than five acres shall be disturbed at any one time unless pursuant
    to an approved SWPPP". A plan over five acres fails as planned, and the finding carries the
    proviso, so that a board's decision does not read as a violation already committed (round 3,
    point 10); with the approval recorded (five_acre_waiver) it is a warn."""
    _, result = review(tmp_path, TEST_DATA / "variants" / "phasing_over_five.gpkg")
    [finding] = [f for f in result["findings"] if f["rule"] == "phasing_five_acres"]
    assert finding["status"] == "fail"
    assert (
        '"not more than five acres shall be disturbed at any one time unless pursuant to an approved SWPPP"'
    ) in finding["message"] and "as planned" in finding["message"]
    _, waived = review(tmp_path, TEST_DATA / "variants" / "phasing_waiver.gpkg")
    assert [f["status"] for f in waived["findings"] if f["rule"] == "phasing_five_acres"] == ["warn"]


def test_r3_5_easements_of_a_site_no_condition_reaches_are_told_not_failed(tmp_path, make_reference):
    """SWPPP D heads D(8) "SWPPP requirements for Conditions A, B and C": "Maintenance easements
    to ensure access to all stormwater management practices"; Maintenance and repair B asks an
    easement of "any approval that has a stormwater management facility as one of the
    requirements". The single-family variant (C excluded: "exclusive of the construction of
    single-family residences"; under five acres: no B) against a reference where its water is
    not listed: no condition applies, so BR-2's strip outside its easement is info, saying why
    (round 3, point 5). With Condition A applying (the demo reference), it fails as before."""
    reference = make_reference()  # every layer, none with a feature: no listed water
    status, result = review(tmp_path, TEST_DATA / "variants" / "single_family.gpkg", "--reference", reference)
    conditions = result["conditions"]
    assert result["conditions"]["swppp_required"] is True
    assert not any(conditions[k]["applies"] for k in "ABC"), conditions
    easements = [f for f in result["findings"] if f["rule"] == "easement_coverage"]
    assert {f["status"] for f in easements} <= {"pass", "info"}
    [strip] = [f for f in easements if "312 sq ft outside" in f["message"]]
    assert "not a requirement here: no condition of SWPPP C applies" in strip["message"]
    checklist = {e["item"]: e for e in result["checklist"]}
    assert checklist["Maintenance B"]["status"] == checklist["Maintenance D"]["status"] == "not_applicable"
    [contents] = [f for f in result["findings"] if f["rule"] == "swppp_contents"]
    assert "Maintenance B" not in contents["message"]
    _, applies = review(tmp_path, TEST_DATA / "variants" / "single_family.gpkg")
    assert "fail" in {f["status"] for f in applies["findings"] if f["rule"] == "easement_coverage"}


def test_r3_14_15_the_tools_readings_and_the_texts_gaps_are_said_as_such(tmp_path):
    """Round 3, point 14: the phasing-sequence duty exists only in the definition of "Phasing"
    ("with the stabilization of each piece completed before the clearing of the next"); the
    sediment clean-out's time is the tool's reading (Maintenance and repair A(1): "whenever their
    design capacity has been reduced by 50%"); off-site disturbance is not in the chapter's
    words. Point 15: the text's own gaps (no SWPPP D(1) or D(9); a "Town Board" in a village
    law) are listed in every review's not_checked."""
    _, result = review(tmp_path, TEST_DATA / "demo_site.gpkg")
    said = {f["rule"]: f["message"] for f in result["findings"]}
    assert "no section states it as a duty" in said["phasing_sequence"]
    assert (
        '"with the stabilization of each piece completed before the clearing of the next"'
        in said["phasing_sequence"]
    )
    assert "permission" not in said["disturbance_outside_site"]
    assert "the tool's warning, not its words" in said["disturbance_outside_site"]
    gaps = {row["section"]: row for row in result["not_checked"]}
    assert "no item D(1) and no item D(9)" in gaps["SWPPP D"]["reason"]
    assert '"Town Board"' in gaps['Definitions, "Stormwater Management Administrator"']["reason"]
    from analysis.records.inspections import CLEANOUT_READING

    assert '"by the next inspection" is this tool\'s reading' in CLEANOUT_READING


# --- point 6: 'stormwater runoff ... discharging ... to ... a TMDL designated watershed' ----
@pytest.mark.parametrize(
    "outfall_x, expected",
    [(2000, "info"), (-2000, "not_applicable")],
    ids=["outfall-inside-the-TMDL-watershed", "outfall-outside"],
)
def test_p6_runoff_discharging_to_a_tmdl_designated_watershed(make_site, make_reference, outfall_x, expected):
    shed = (
        local_box(1000, -3000, 4000, 3000),  # east of the site, which lies at x -100..100
        {
            "watershed_id": "W",
            "name": "Shed",
            "pollutants": "Phosphorus",
            "tmdl_id": "T",
            "stormwater_source": 1,
        },
    )
    site = load_site_plan(
        make_site(
            [local_box(-100, 0, 100, 100)],
            discharge_points=[(Point(X0 + outfall_x, Y0 + 50), "Brook", "NY-B")],
        ),
        PROFILE,
    )
    review = review_site(
        site, PROFILE, reference=open_reference(make_reference(tmdl_watersheds=[shed])), rules=["condition_a"]
    )
    finding = next(f for f in review.findings if f.rule == "condition_a")
    assert finding.status == expected, finding.message
    if expected == "info":
        assert "receives the site's runoff at its discharge point(s)" in finding.message


# Point 6, routing: the catchment a discharge point lies in and those downstream by drains_to.
ROUTED_SHED = (
    local_box(1000, -3000, 4000, 3000),  # east of the site and of its outfall
    {"watershed_id": "W", "name": "Shed", "pollutants": "Phosphorus", "tmdl_id": "T", "stormwater_source": 1},
)


def routed_review(make_site, make_reference, chain, profile=PROFILE, **layers):
    """Condition A of a site at x -100..100 whose outfall (x 50) lies in catchment X; ``chain``
    the catchments as (id, x1, x2, drains_to), each a strip 1,000 ft tall."""
    catchments = [
        (local_box(x1, -500, x2, 500), {"catchment_id": cid, "name": f"Catchment {cid}", "drains_to": drains})
        for cid, x1, x2, drains in chain
    ]
    site = load_site_plan(
        make_site(
            [local_box(-100, 0, 100, 100)], discharge_points=[(Point(X0 + 50, Y0 + 150), "Brook", "NY-B")]
        ),
        profile,
    )
    review = review_site(
        site,
        profile,
        reference=open_reference(make_reference(catchments=catchments, **layers)),
        rules=["condition_a"],
    )
    return review.conditions["A"], next(f for f in review.findings if f.rule == "condition_a")


@pytest.mark.parametrize(
    "reading, expected",
    [("applies", "info"), ("needs_review", "needs_review")],
    ids=[
        "discharging-to-a-TMDL-designated-watershed-applies",
        "discharging-to-a-TMDL-designated-watershed-needs_review",
    ],
)
def test_p6_outfall_in_a_catchment_draining_into_a_tmdl_watershed(
    make_site, make_reference, reading, expected
):
    profile = replace(PROFILE, condition_a=replace(PROFILE.condition_a, routed_tmdl_watershed=reading))
    a, finding = routed_review(
        make_site,
        make_reference,
        [("X", -500, 500, "Y"), ("Y", 500, 2000, "NY-Z")],
        profile,
        tmdl_watersheds=[ROUTED_SHED],
    )
    assert finding.status == expected, finding.message
    assert (
        "discharge_point:NY-B lies in catchment X (Catchment X), which drains to catchment "
        "Y, inside TMDL watershed W Shed"
    ) in finding.message
    assert a.applies is (reading == "applies")


def test_p6_routing_stops_at_the_profiles_hops(make_site, make_reference):
    chain = [("X", -500, 500, "Y1"), ("Y1", 500, 900, "Y2"), ("Y2", 900, 2000, None)]
    a, finding = routed_review(make_site, make_reference, chain, tmdl_watersheds=[ROUTED_SHED])
    assert a.applies and "drains to catchment Y1, which drains to catchment Y2, inside" in finding.message
    one = replace(PROFILE, condition_a=replace(PROFILE.condition_a, downstream_catchment_hops=1))
    a, finding = routed_review(make_site, make_reference, chain, one, tmdl_watersheds=[ROUTED_SHED])
    assert finding.status == "not_applicable" and not a.applies, finding.message
    assert "drains to catchment Y2: not followed further" in finding.message


def test_p6_a_water_named_downstream_receives_the_discharge(make_site, make_reference):
    listed = (
        LineString([(X0 + 1500, Y0 - 400), (X0 + 1900, Y0 - 400)]),
        {
            "waterbody_id": "NY-L",
            "name": "Lower River",
            "pollutants": "Phosphorus",
            "listing_cycle": "2022",
            "category": "5",
        },
    )
    a, finding = routed_review(
        make_site, make_reference, [("X", -500, 500, "Y"), ("Y", 500, 2000, "NY-L")], impaired_waters=[listed]
    )
    assert finding.status == "info" and a.applies, finding.message
    assert (
        "NY-L Lower River is 303(d)-listed" in finding.message
        and "catchment X (Catchment X), which drains to catchment Y, which drains to NY-L" in finding.message
    )


def test_p6_a_drains_to_naming_no_catchment_is_a_water(make_site, make_reference):
    """The one meaning of drains_to: another catchment's id is downstream; else a water."""
    a, finding = routed_review(
        make_site, make_reference, [("X", -500, 500, "Q")], tmdl_watersheds=[ROUTED_SHED]
    )
    assert finding.status == "not_applicable", finding.message
    assert "receiving water(s) NY-B, Q not on the 303(d) list" in finding.message


# Issue 33, item 4: a route that only grazes a TMDL watershed. SWPPP C(1): "stormwater runoff
# from land development activities discharging a pollutant of concern to ... a total maximum
# daily load (TMDL) designated watershed": the route's water goes where the downstream catchment
# drains, so a catchment touching ROUTED_SHED (x 1000..4000) by a thin strip carries the runoff
# "to" it only where the catchment it drains into lies in it.
def grazed_review(make_site, make_reference, y_drains_to, y_east=1020, profile=PROFILE):
    """Condition A of routed_review's site (outfall in catchment X, x -500..500), X draining
    into Y (x 500..``y_east``: a 20-ft strip of it inside ROUTED_SHED by default), Y into
    ``y_drains_to``: Z (x 500..1000, north of Y: outside the shed), IN (x 1020..2000: inside
    it) or a water."""
    chain = [
        (local_box(-500, -500, 500, 500), "X", "Y"),
        (local_box(500, -500, y_east, 500), "Y", y_drains_to),
        (local_box(500, 500, 1000, 1500), "Z", "NY-OUT"),
        (local_box(y_east, -500, 2000, 500), "IN", "NY-IN"),
    ]
    catchments = [
        (g, {"catchment_id": cid, "name": f"Catchment {cid}", "drains_to": drains})
        for g, cid, drains in chain
    ]
    site = load_site_plan(
        make_site(
            [local_box(-100, 0, 100, 100)], discharge_points=[(Point(X0 + 50, Y0 + 150), "Brook", "NY-B")]
        ),
        profile,
    )
    review = review_site(
        site,
        profile,
        reference=open_reference(make_reference(catchments=catchments, tmdl_watersheds=[ROUTED_SHED])),
        rules=["condition_a"],
    )
    return review.conditions["A"], next(f for f in review.findings if f.rule == "condition_a")


def test_i33_4_a_catchment_grazing_a_watershed_and_draining_outside_it_is_not_discharging_to_it(
    make_site, make_reference
):
    a, finding = grazed_review(make_site, make_reference, "Z")
    assert finding.status == "not_applicable" and not a.applies and a.decided, finding.message
    assert (
        "which drains to catchment Y, 3.8% (0.46 acres) of it inside TMDL watershed W Shed" in finding.message
    ), finding.message
    assert (
        "the catchment only grazes the watershed, and the catchment(s) its drains_to names "
        'lie outside it, so the runoff is not "discharging ... to" the watershed' in finding.message
    ), finding.message


def test_i33_4_a_grazing_catchment_draining_to_a_water_is_needs_review(make_site, make_reference):
    """The reference layers do not place a water (nor so the catchment's outlet): not decided."""
    a, finding = grazed_review(make_site, make_reference, "NY-Q")
    assert finding.status == "needs_review" and not a.decided, finding.message
    assert "where it drains is not known from the reference layers" in finding.message
    assert 'confirm whether the runoff is "discharging ... to" the watershed' in finding.message


def test_i33_4_a_grazing_catchment_draining_into_the_watershed_discharges_to_it(make_site, make_reference):
    """Y drains into IN, which lies in the watershed: the runoff goes there. With
    downstream_catchment_hops = 1 the route stops at Y (IN is not followed, so not placed):
    where Y drains is not known, and Condition A is not decided."""
    a, finding = grazed_review(make_site, make_reference, "IN")
    assert finding.status == "info" and a.applies, finding.message
    assert (
        "which drains to catchment Y, 3.8% (0.46 acres) of it inside TMDL watershed W Shed; "
        "the catchment only grazes it, but drains into a catchment that lies in it" in finding.message
    ), finding.message
    one = replace(PROFILE, condition_a=replace(PROFILE.condition_a, downstream_catchment_hops=1))
    a, finding = grazed_review(make_site, make_reference, "IN", profile=one)
    assert finding.status == "needs_review" and not a.decided, finding.message


def test_i33_4_a_catchment_mostly_inside_the_watershed_discharges_to_it(make_site, make_reference):
    a, finding = grazed_review(make_site, make_reference, "Z", y_east=3000)
    assert finding.status == "info" and a.applies, finding.message
    assert "which drains to catchment Y, inside TMDL watershed W Shed" in finding.message


@pytest.mark.parametrize(
    "key, value", [("routed_watershed_min_share_percent", 3.0), ("routed_watershed_min_share_acres", 0.4)]
)
def test_i33_4_the_share_that_counts_is_the_profiles(make_site, make_reference, key, value):
    """3.8% and 0.46 acres of Y lie in the watershed: a real share by either threshold."""
    profile = replace(PROFILE, condition_a=replace(PROFILE.condition_a, **{key: value}))
    a, finding = grazed_review(make_site, make_reference, "Z", profile=profile)
    assert finding.status == "info" and a.applies, finding.message


# --- point 11: 'At a minimum, the site map should show ...' --------------------------------
@pytest.mark.parametrize(
    "content, status",
    [
        ("location_map", "provided"),
        ("total_site_area", "provided"),
        ("areas_of_disturbance", "provided"),
        ("existing_vegetation", "provided"),
        ("drainage_patterns", "provided"),
        ("discharges", "provided"),
        ("wetlands", "missing"),
        ("slopes", "missing"),
        ("off_site_storage", "missing"),
    ],
    ids=lambda v: v,
)
def test_p11_each_site_map_content_has_its_own_status(demo, content, status):
    _status, result = demo
    entry = next(e for e in result["checklist"] if e["item"] == "B(2)")
    contents = {c["content"]: c["status"] for c in entry["contents"]}
    assert len(contents) == 12 and contents[content] == status
    assert "should show" in entry["evidence"]


# Point 12: "must" only where the chapter says "shall". Each case: the rule, words of the
# message, what it said on main (gone), what it says now; the id quotes the chapter's words.
SHOULD_NOT_MUST = [
    pytest.param(
        "hydrology_pre_post",
        "exceeds the pre-development",
        "the SWPPP must show",
        "the SWPPP should show",
        id="D(5)-'Comparison of postdevelopment stormwater runoff conditions with "
        "predevelopment conditions'-should-show",
    ),
    pytest.param(
        "condition_a",
        "matched by name only",
        "must be confirmed",
        "confirm that the water matched by name only receives the discharge",
        id="C(1)-'discharging-a-pollutant-of-concern-to'-names-nothing-advice",
    ),
]


def messages(request, rule):
    """The messages of ``rule`` in the review that shows it: the demo, or (Condition A) a
    site whose discharge point names a 303(d)-listed water by its name only."""
    if rule != "condition_a":
        _status, result = request.getfixturevalue("demo")
        return [f["message"] for f in result["findings"] if f["rule"] == rule]
    make_site, make_reference = (request.getfixturevalue(n) for n in ("make_site", "make_reference"))
    site = load_site_plan(
        make_site(
            [local_box(-100, 0, 100, 100)], discharge_points=[(OUTFALL, "Seven  springs-creek", "NY-UNKNOWN")]
        ),
        PROFILE,
    )
    listed = (
        LineString([(X0 - 5000, Y0 + 900), (X0 + 5000, Y0 + 900)]),
        {
            "waterbody_id": "NY-7",
            "name": "Seven Springs Creek",
            "pollutants": "Silt",
            "listing_cycle": "2022",
            "category": "5",
        },
    )
    result = review_site(
        site,
        PROFILE,
        reference=open_reference(make_reference(impaired_waters=[listed])),
        rules=["condition_a"],
    )
    return [f.message for f in result.findings if f.rule == rule]


@pytest.mark.parametrize("rule, about, was, now", SHOULD_NOT_MUST)
def test_p12_must_only_where_the_chapter_says_shall(request, rule, about, was, now):
    said = [m for m in messages(request, rule) if about in m]
    assert said, f"no {rule} finding about {about!r}"
    assert all(was not in m and now in m for m in said), said


def test_p12_data_repairs_cite_no_rule_of_the_chapter():
    assert "not a rule of the chapter" in PROFILE.section("input_geometry")
