"""The SWPPP contents checklist: items as data, evidence from the plan, reviewer confirmations."""

import json
import re
from dataclasses import replace

import pandas as pd
import pytest

from analysis.checklist.contents import (
    CHECKLIST_LAYER,
    Confirmation,
    check_contents,
    checklist_items,
    confirmations_json,
    item_ids,
    parse_confirmations,
    read_confirmations,
)
from analysis.checks.conditions import Condition
from analysis.cli import main
from analysis.errors import InputError
from analysis.io.vector import read_layer
from analysis.profile import load_profile
from analysis.report.html import render_html
from analysis.report.outputs import write_outputs
from analysis.review import review_paths
from analysis.siteplan.plan import load_site_plan
from tests.conftest import TEST_DATA, shared_path

PROFILE = load_profile()
APPLIES, NOT = Condition(True, ["evidence"]), Condition(False, [])
UNDECIDED = Condition(False, ["no reference layers"], decided=False)
C_APPLIES = {"A": NOT, "B": NOT, "C": APPLIES}
NONE_APPLY = {"A": NOT, "B": NOT, "C": NOT}
CONTRACT_ITEMS = (
    [f"B({n})" for n in range(1, 18)]
    + [f"D({n})" for n in range(2, 9)]
    + [
        "E",
        "F",
        "G(1)",
        "G(2)",
        "G(3)",
        "H",
        "Maintenance B",
        "Maintenance D",
        "Inspections A(2)",
        "Inspections E(1)",
        "Inspections E(2)",
    ]
)


def words(text):
    return re.sub(r"\s+", " ", text).strip()


def contents(variant, conditions=C_APPLIES, confirmations=(), change=None, profile=PROFILE):
    """check_contents on a test-data plan (``variants/<variant>``, or the demo by its name)."""
    path = TEST_DATA / variant if variant.startswith("demo") else TEST_DATA / "variants" / variant
    site = load_site_plan(path, profile)
    if change:
        change(site)
    return check_contents(site, conditions, profile, True, confirmations)


def by_item(result):
    return {e["item"]: e for e in result.checklist}


def finding(result, rule):
    [found] = [f for f in result.findings if f.rule == rule]
    return found


def test_the_items_are_contracts_list_with_the_chapters_words():
    assert item_ids() == CONTRACT_ITEMS
    chapter = words(shared_path("seed/stormwater_chapter.txt").read_text(encoding="utf-8"))
    chapter = chapter.replace("[1]", "")
    for item in checklist_items():
        assert words(item.text) in chapter, item.item
    assert checklist_items()[12].text == "Name(s) of the receiving water(s);"


def test_a_plan_providing_every_item_passes():
    result = contents("contents_complete.gpkg")
    statuses = {item: e["status"] for item, e in by_item(result).items()}
    assert statuses.pop("B(17)") == "not_applicable"  # only when the Administrator asks
    assert set(statuses.values()) == {"provided"}
    entries = by_item(result)
    assert entries["B(3)"]["evidence"] == "site plan: layer soils: 2 features, each with hsg"
    assert "Forest Road tributary" in entries["B(13)"]["evidence"]
    assert entries["B(8)"]["evidence"].startswith("site plan: layer esc_practice: 4 features")
    assert entries["D(8)"]["evidence"].startswith("site plan: layer easement: 3 features")
    assert entries["B(4)"]["evidence"] == (
        "site plan: disturbance: 5 polygons in 3 phases, each with a start date"
    )
    assert entries["E"]["evidence"].startswith("submission: SWPPP cover sheet")
    contents_finding = finding(result, "swppp_contents")
    assert (contents_finding.status, contents_finding.value) == ("pass", 0.0)
    # The guarantees' lengths run from dates the plan does not record (final acceptance,
    # substantial completion): needs_review by the default profile's reading (round 3, 8).
    assert {f.rule: f.status for f in result.findings if f.status != "pass"} == {
        "construction_guarantee": "needs_review",
        "maintenance_bond": "needs_review",
    }


def test_missing_soils_and_receiving_waters_are_named():
    result = contents("contents_no_soils_receiving_waters.gpkg")
    missing = [e["item"] for e in result.checklist if e["status"] == "missing"]
    assert missing == ["B(3)", "B(13)"]
    f = finding(result, "swppp_contents")
    assert f.status == "fail" and f.value == 2.0
    assert f.features == ["checklist:B(3)", "checklist:B(13)"]
    assert "B(3), B(13)" in f.message
    assert "no soils layer" in by_item(result)["B(3)"]["evidence"]
    assert "receiving_waters empty" in by_item(result)["B(13)"]["evidence"]


def test_a_discharge_point_naming_its_water_provides_b13():
    def drop_receiving_waters(site):
        site.project["receiving_waters"] = None

    entry = by_item(contents("contents_complete.gpkg", change=drop_receiving_waters))["B(13)"]
    assert entry["status"] == "provided"
    assert entry["evidence"].startswith("site plan: layer discharge_point: 1 feature")


def test_no_condition_applying_makes_the_d_items_not_applicable():
    entries = by_item(contents("demo_site.gpkg", NONE_APPLY))
    for n in range(2, 9):
        assert entries[f"D({n})"]["status"] == "not_applicable", n
        assert entries[f"D({n})"]["evidence"] == "no condition (A, B or C) applies"
    # The demo's plan has SMPs, but none is "one of the requirements" of the approval
    # (Maintenance and repair B) where no condition applies: the profile's default reading.
    for item in ("Maintenance B", "Maintenance D"):
        assert entries[item]["applies"] == "no" and entries[item]["status"] == "not_applicable"
        assert '"one of the requirements"' in entries[item]["evidence"]
    # A village holding every SMP shown to them says so in the profile.
    shown = replace(PROFILE, easement_coverage=replace(PROFILE.easement_coverage, smps_held="shown"))
    assert by_item(contents("demo_site.gpkg", NONE_APPLY, profile=shown))["Maintenance B"]["applies"] == "yes"


def test_an_undecided_condition_leaves_a_missing_d_item_for_review():
    def drop_d6_submission(site):
        frame = site.layers["submission"]
        site.layers["submission"] = frame[frame["item"] != "D(6)"]

    result = contents(
        "contents_complete.gpkg", {"A": UNDECIDED, "B": NOT, "C": NOT}, change=drop_d6_submission
    )
    assert by_item(result)["D(6)"]["applies"] == "undecided"
    f = finding(result, "swppp_contents")
    assert f.status == "needs_review" and f.features == ["checklist:D(6)"]


def test_a_reviewer_confirms_what_the_plan_cannot_show():
    confirmation = Confirmation("B(3)", "R. Levi", "2027-03-02", "Soils: report section 3")
    result = contents("contents_no_soils_receiving_waters.gpkg", confirmations=[confirmation])
    entry = by_item(result)["B(3)"]
    assert entry["status"] == "confirmed"
    assert entry["confirmation"] == {
        "item": "B(3)",
        "reviewer": "R. Levi",
        "date": "2027-03-02",
        "note": "Soils: report section 3",
    }
    f = finding(result, "swppp_contents")
    assert f.status == "fail" and f.features == ["checklist:B(13)"]


def test_confirmations_are_saved_with_the_review_and_reload(tmp_path):
    source = TEST_DATA / "checklist" / "confirmations.json"
    review = review_paths(TEST_DATA / "variants" / "contents_complete.gpkg", confirmations=source)
    json_path, findings = tmp_path / "review.json", tmp_path / "findings.gpkg"
    write_outputs(review, json_path=json_path, findings_path=findings)
    original = read_confirmations(source)
    assert [c.item for c in original] == ["B(5)", "H"]
    table = read_layer(findings, CHECKLIST_LAYER, read_geometry=False).frame
    assert list(table["item"]) == CONTRACT_ITEMS
    assert list(table.loc[table["status"] == "confirmed", "reviewer"]) == ["R. Levi", "R. Levi"]
    assert read_confirmations(findings) == original  # reloaded from the findings GeoPackage
    assert read_confirmations(json_path) == original  # and from the review's JSON result
    again = review_paths(TEST_DATA / "variants" / "contents_complete.gpkg", confirmations=findings)
    assert again.checklist == review.checklist
    saved = json.loads(json_path.read_text(encoding="utf-8"))
    assert [e for e in saved["checklist"] if e["status"] == "confirmed"] == [
        e for e in review.checklist if e["status"] == "confirmed"
    ]


def test_confirmations_file_round_trips():
    confirmations = [Confirmation("b (5)".upper().replace(" ", ""), "R. Levi", "2027-03-02", "a & b")]
    text = confirmations_json(confirmations)
    assert parse_confirmations(json.loads(text)) == confirmations


@pytest.mark.parametrize(
    "entry, says",
    [
        ({"item": "B(99)", "reviewer": "R", "date": "2027-01-01"}, "'B(99)' is not an item"),
        ({"item": "B(5)", "reviewer": " ", "date": "2027-01-01"}, "names no reviewer"),
        ({"item": "B(5)", "reviewer": "R", "date": "01/02/2027"}, "is not YYYY-MM-DD"),
        ({"item": "B(5)", "reviewer": "R"}, "has no date"),
    ],
)
def test_bad_confirmations_are_refused_naming_the_entry(entry, says):
    with pytest.raises(InputError, match=re.escape(says)) as err:
        parse_confirmations({"format": "swppp-checklist-confirmations", "confirmations": [entry]}, "c.json")
    assert "file c.json, feature 1" in str(err.value)


def test_a_file_of_another_format_is_refused(tmp_path):
    path = tmp_path / "c.json"
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(InputError, match="not a checklist confirmations file"):
        read_confirmations(path)


def test_a_submission_for_an_unknown_item_is_refused_naming_the_row():
    def bad_item(site):
        site.layers["submission"] = pd.DataFrame(
            [{"item": "Z(1)", "document": "x", "note": None}], index=pd.Index([7], name="fid")
        )

    with pytest.raises(InputError) as err:
        contents("contents_complete.gpkg", change=bad_item)
    assert "layer 'submission', feature 7, field 'item'" in str(err.value)


def test_a_note_with_markup_is_escaped_in_the_report():
    review = review_paths(
        TEST_DATA / "variants" / "contents_complete.gpkg",
        confirmations=TEST_DATA / "checklist" / "confirmations.json",
    )
    html = render_html(review, maps=False)
    assert "<script>" not in html and "<b>ok</b>" not in html
    assert (
        "Litter &amp; chemicals: report 4.1 &lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt; "
        "&lt;b&gt;ok&lt;/b&gt;" in html
    )
    assert "<h2>SWPPP contents checklist</h2>" in html
    assert "Confirmed by R. Levi on 2027-03-02" in html
    assert "<h2>Erosion and sediment control practices</h2>" in html


def test_cli_confirmations_option_and_its_errors(tmp_path, capsys):
    out = tmp_path / "r.json"
    status = main(
        [
            "review",
            str(TEST_DATA / "variants" / "contents_complete.gpkg"),
            "--confirmations",
            str(TEST_DATA / "checklist" / "confirmations.json"),
            "--json",
            str(out),
            "--quiet",
        ]
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert status == 1  # the demo's own failures (BR-2 outside its easement, sheet C-001)
    contents_rules = {
        "swppp_contents",
        "contractor_certification",
        "construction_guarantee",
        "maintenance_bond",
        "esc_practices",
    }
    assert {
        f["rule"]: f["status"]
        for f in data["findings"]
        if f["rule"] in contents_rules and f["status"] != "pass"
    } == {"construction_guarantee": "needs_review", "maintenance_bond": "needs_review"}
    assert {e["item"] for e in data["checklist"] if e["status"] == "confirmed"} == {"B(5)", "H"}
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "swppp-checklist-confirmations", "confirmations": '
        '[{"item": "B(5)", "date": "2027-01-01"}]}',
        encoding="utf-8",
    )
    status = main(
        [
            "review",
            str(TEST_DATA / "variants" / "contents_complete.gpkg"),
            "--confirmations",
            str(bad),
            "--json",
            str(tmp_path / "x.json"),
        ]
    )
    assert status == 2 and not (tmp_path / "x.json").exists()
    assert "names no reviewer" in capsys.readouterr().err


def test_checklist_layers_match_case_insensitively_and_coded_values_are_checked(make_site):
    import geopandas as gpd
    from shapely import LineString

    from tests.analysis.conftest import square

    esc = gpd.GeoDataFrame(
        {
            "PRACTICE": ["silt fence"],
            "Size": ["36 in"],
            "length_ft": [100.0],
            "drainage_area_acres": [None],
            "stage": ["Temporary"],
            "install_by": ["2027-04-01"],
            "remove_after": ["2027-06-01"],
        },
        geometry=[LineString([(582737, 913239), (582837, 913239)])],
        crs="EPSG:2260",
    )
    path = make_site([square(2.0)], layers={"ESC_Practice": esc})
    site = load_site_plan(path, PROFILE)
    assert list(site.layer("esc_practice")["practice"]) == ["silt fence"]
    path = make_site([square(2.0)], filename="bad.gpkg", layers={"esc_practice": esc.assign(stage="someday")})
    with pytest.raises(InputError) as err:
        load_site_plan(path, PROFILE)
    assert "layer 'esc_practice', feature 1, field 'stage'" in str(err.value)
    assert "temporary, permanent, converted" in str(err.value)


def test_a_review_where_no_condition_applies_marks_the_d_items_not_applicable(make_site, make_reference):
    from shapely import Point

    from tests.analysis.conftest import X0, Y0, square

    # 2 acres of single-family homes (no C), discharging to a water the 303(d) list lacks (no A).
    site = make_site(
        [square(2.0)],
        land_use="single_family_residential",
        discharge_points=[(Point(X0 - 50, Y0 - 50), "Clean Brook", "NY0000-0001")],
    )
    review = review_paths(site, reference=make_reference())
    assert {k: review.conditions[k].applies for k in "ABC"} == {"A": False, "B": False, "C": False}
    assert all(review.conditions[k].decided for k in "ABC")
    entries = {e["item"]: e for e in review.checklist}
    assert {entries[f"D({n})"]["status"] for n in range(2, 9)} == {"not_applicable"}
    assert entries["Maintenance B"]["status"] == "not_applicable"  # no condition, no SMP
    assert entries["B(13)"]["status"] == "provided"  # the project's receiving_waters
    f = next(f for f in review.findings if f.rule == "swppp_contents")
    assert f.status == "fail" and not any(x.startswith("checklist:D(") for x in f.features)


def test_the_checklist_alone_is_the_full_reviews_checklist():
    """``review_paths(rules=["checklist"])`` (swppp:checklist) decides the conditions as the
    review does, with the reference read for Condition A, and gives the same checklist and
    contents findings."""
    site = TEST_DATA / "variants" / "contents_no_soils_receiving_waters.gpkg"
    reference = TEST_DATA / "demo_reference.gpkg"
    full = review_paths(site, reference)
    alone = review_paths(site, reference, rules=["checklist"])
    assert alone.conditions["A"].applies == full.conditions["A"].applies
    assert alone.checklist == full.checklist
    rules = {
        "swppp_contents",
        "contractor_certification",
        "construction_guarantee",
        "maintenance_bond",
        "esc_practices",
    }
    assert [f.to_dict() for f in alone.findings if f.rule in rules] == [
        f.to_dict() for f in full.findings if f.rule in rules
    ]


def test_r3_3_a_plan_without_a_general_location_map_does_not_provide_b2():
    """SWPPP B(2): "All SWPPPs shall provide ... Site map/construction drawing(s) for the
    project, including a general location map." The contents the site map "should show" are each
    listed; the location map is part of what B(2) requires (round 3, point 3): without one, B(2)
    is missing and swppp_contents fails on it, where it passed before."""

    def no_location_map(site):
        frame = site.layers["layout_scale"]
        site.layers["layout_scale"] = frame[~frame["sheet"].str.contains("Location")]

    complete = contents("contents_complete.gpkg")
    assert by_item(complete)["B(2)"]["status"] == "provided"
    assert finding(complete, "swppp_contents").status == "pass"
    result = contents("contents_complete.gpkg", change=no_location_map)
    entry = by_item(result)["B(2)"]
    assert entry["status"] == "missing", entry
    assert entry["evidence"].startswith("no general location map: ")
    assert '"including a general location map"' in entry["evidence"]
    f = finding(result, "swppp_contents")
    assert f.status == "fail" and "B(2)" in f.message


def test_r3_6_post_development_figures_alone_are_no_comparison():
    """SWPPP D(5): "Comparison of postdevelopment stormwater runoff conditions with
    predevelopment conditions": a claims table of post-development figures alone does not
    provide it (round 3, point 6); one row with both figures of a quantity does."""

    def post_only(site):
        frame = site.layers["hydrology_claims"].copy()
        frame["pre_peak_cfs"] = frame["pre_volume_cf"] = float("nan")
        site.layers["hydrology_claims"] = frame

    assert by_item(contents("contents_complete.gpkg"))["D(5)"]["status"] == "provided"
    entry = by_item(contents("contents_complete.gpkg", change=post_only))["D(5)"]
    assert entry["status"] == "missing"
    assert "post-development figures alone are no comparison" in entry["evidence"]


@pytest.mark.parametrize(
    "stages, missing", [(["temporary"], "permanent"), (["permanent"], "temporary"), (["converted"], None)]
)
def test_r3_7_b7_asks_temporary_and_permanent_measures(stages, missing):
    """SWPPP B(7): "Temporary and permanent structural and vegetative measures to be used for
    soil stabilization, runoff control and sediment control": one temporary silt fence does not
    provide it, and the entry says which half is missing (round 3, point 7); a practice converted
    from temporary to permanent is both."""

    def only(site):
        frame = site.layers["esc_practice"].iloc[:1].copy()
        frame["stage"] = stages
        site.layers["esc_practice"] = frame

    entry = by_item(contents("contents_complete.gpkg", change=only))["B(7)"]
    if missing is None:
        assert entry["status"] == "provided", entry
    else:
        assert entry["status"] == "missing"
        assert f"no {missing} measures in esc_practice" in entry["evidence"]
