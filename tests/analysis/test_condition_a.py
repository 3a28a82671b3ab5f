"""Condition A: receiving waters, the 303(d) list, TMDL watersheds and pollutants of concern."""

import pytest
from shapely import LineString, Point

from analysis.judge.pollutants import PollutantNames, normalise_name
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.review import review_site
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, Y0, local_box

PROFILE = load_profile()
NAMES = PollutantNames.from_profile(PROFILE)
DISTURBANCE = local_box(-100, 0, 100, 100)  # straddles x = 0
OUTFALL = Point(X0 + 50, Y0 + 150)


def catchment(cid, geometry, drains_to):
    return geometry, {"catchment_id": cid, "name": f"Catchment {cid}", "drains_to": drains_to}


def water(wid, name, pollutants, cycle="2022", category="5"):
    line = LineString([(X0 - 5000, Y0 + 900), (X0 + 5000, Y0 + 900)])
    return line, {
        "waterbody_id": wid,
        "name": name,
        "pollutants": pollutants,
        "listing_cycle": cycle,
        "category": category,
    }


def watershed(wid, geometry, pollutants="Phosphorus", stormwater=1):
    return geometry, {
        "watershed_id": wid,
        "name": f"Watershed {wid}",
        "pollutants": pollutants,
        "tmdl_id": f"TMDL-{wid}",
        "stormwater_source": stormwater,
    }


def condition_a(make_site, make_reference, outfalls=(), **layers):
    site = load_site_plan(make_site([DISTURBANCE], discharge_points=outfalls), PROFILE)
    # Condition A alone: the tiny test site is not a land development activity (issue 18)
    review = review_site(
        site, PROFILE, reference=open_reference(make_reference(**layers)), rules=["condition_a"]
    )
    return review, [f for f in review.findings if f.rule == "condition_a"]


def test_a_site_straddling_two_catchments_takes_the_waters_of_both(make_site, make_reference):
    west = catchment("C-W", local_box(-3000, -3000, 0, 3000), "NY-A")
    east = catchment("C-E", local_box(0, -3000, 3000, 3000), "NY-B;NY-C")
    review, findings = condition_a(
        make_site,
        make_reference,
        catchments=[west, east],
        impaired_waters=[water("NY-B", "East Brook", "Phosphorus")],
    )
    a = review.conditions["A"]
    assert a.applies and a.decided
    assert any("NY-B East Brook" in e and "catchments:C-E" in e for e in a.evidence)
    main, *evidence = findings
    assert main.status == "info" and {"catchments:C-W", "catchments:C-E"} <= set(main.features)
    # the catchment that drains to the listed water is drawn in the findings layer
    assert [f.features for f in evidence] == [["catchments:C-E"]]
    assert evidence[0].geometry.equals(east[0])


def test_two_catchments_draining_to_unlisted_waters_do_not_apply(make_site, make_reference):
    west = catchment("C-W", local_box(-3000, -3000, 0, 3000), "NY-A")
    east = catchment("C-E", local_box(0, -3000, 3000, 3000), "NY-C")
    review, findings = condition_a(
        make_site,
        make_reference,
        catchments=[west, east],
        impaired_waters=[water("NY-B", "Other Brook", "Phosphorus")],
    )
    assert review.conditions["A"].applies is False and review.conditions["A"].decided
    assert findings[0].status == "not_applicable"
    assert "NY-A, NY-C not on the 303(d) list" in findings[0].message


def test_a_discharge_to_an_unlisted_water_inside_a_tmdl_watershed_applies(make_site, make_reference):
    shed = watershed("TW-1", local_box(-1000, -1000, 1000, 1000))
    review, findings = condition_a(
        make_site,
        make_reference,
        outfalls=[(OUTFALL, "Clean Creek", "NY-CLEAN")],
        tmdl_watersheds=[shed],
        impaired_waters=[water("NY-B", "Other Brook", "Phosphorus")],
        catchments=[catchment("C-1", local_box(-3000, -3000, 3000, 3000), "NY-B")],
    )
    a = review.conditions["A"]
    assert a.applies
    assert any(
        "TMDL TMDL-TW-1" in e and "TW-1 Watershed TW-1" in e and "stormwater is a source" in e
        for e in a.evidence
    )
    # issue 18 point 6: the catchment the outfall lies in names a receiving water too
    assert any(
        "NY-B Other Brook is 303(d)-listed" in e
        and "discharge_point:NY-CLEAN lies in catchment C-1 (Catchment C-1), which drains to NY-B" in e
        for e in a.evidence
    )
    drawn = [f for f in findings if f.geometry is not None]
    assert [f.features for f in drawn] == [["tmdl_watersheds:TW-1"]]
    assert drawn[0].geometry.equals(shed[0])
    held = 200 * 100 * (1200 / 3937) ** 2 / 4046.8564224
    assert any(f"holds {held:.2f} acres" in e for e in a.evidence)


@pytest.mark.parametrize(
    "stormwater, status, decided", [(0, "not_applicable", True), (None, "needs_review", False)]
)
def test_a_tmdl_watershed_without_stormwater_as_a_source(
    make_site, make_reference, stormwater, status, decided
):
    shed = watershed("TW-2", local_box(-1000, -1000, 1000, 1000), stormwater=stormwater)
    review, findings = condition_a(
        make_site, make_reference, outfalls=[(OUTFALL, "Clean Creek", "NY-CLEAN")], tmdl_watersheds=[shed]
    )
    assert review.conditions["A"].applies is False
    assert review.conditions["A"].decided is decided
    assert findings[0].status == status and "TW-2" in findings[0].message
    assert all(f.geometry is None for f in findings)


def test_a_tmdl_watershed_that_only_touches_the_disturbance_does_not_apply(make_site, make_reference):
    shed = watershed("TW-3", local_box(100, -1000, 2000, 1000))  # shares the edge x = 100
    review, findings = condition_a(
        make_site, make_reference, outfalls=[(OUTFALL, "Clean Creek", "NY-CLEAN")], tmdl_watersheds=[shed]
    )
    assert review.conditions["A"].applies is False
    assert "lies in no TMDL watershed" in findings[0].message


def test_pollutants_spelled_differently_are_one_pollutant_of_concern(make_site, make_reference):
    shed = watershed(
        "TW-1", local_box(-1000, -1000, 1000, 1000), pollutants="phosphorus (total);Silt/Sediment"
    )
    review, _ = condition_a(
        make_site,
        make_reference,
        outfalls=[(OUTFALL, "Listed Creek", "NY-L")],
        tmdl_watersheds=[shed],
        impaired_waters=[water("NY-L", "Listed Creek", "PHOSPHORUS, TOTAL;Turbidity")],
    )
    evidence = review.conditions["A"].evidence
    assert evidence[-1] == "pollutants of concern: sediment, phosphorus"
    assert "Turbidity (sediment)" in evidence[0]


@pytest.mark.parametrize(
    "spelling, name",
    [
        ("Phosphorus", "phosphorus"),
        ("phosphorus (total)", "phosphorus"),
        ("PHOSPHORUS, TOTAL", "phosphorus"),
        ("Total  Phosphorus", "phosphorus"),
        ("Silt/Sediment", "sediment"),
        ("TSS", "sediment"),
        ("Total Suspended Solids", "sediment"),
        ("turbidity", "sediment"),
        ("SEDIMENTATION/SILTATION", "sediment"),
        ("SULFATES", "sulfate"),
        ("Mercury", "mercury"),
        ("E. coli", "pathogens"),
    ],
)
def test_pollutant_names_fold_case_spacing_punctuation_and_qualifiers(spelling, name):
    assert NAMES.canonical(spelling) == name


def test_pollutant_lists_split_on_semicolons_once_each():
    assert NAMES.split("Phosphorus; phosphorus (total) ;;Silt") == ["phosphorus", "sediment"]
    assert NAMES.split(None) == []


def test_a_listed_water_matched_by_name_only_applies_with_a_warning(make_site, make_reference):
    review, findings = condition_a(
        make_site,
        make_reference,
        outfalls=[(OUTFALL, "Seven  springs-creek", "NY-UNKNOWN")],
        impaired_waters=[water("NY-7", "Seven Springs Creek", "Silt/Sediment")],
    )
    assert review.conditions["A"].applies
    assert findings[0].status == "warn"
    assert "matched by name only (discharge_point:NY-UNKNOWN)" in findings[0].message


def test_unknown_receiving_waters_cannot_be_decided(make_site, make_reference):
    review, findings = condition_a(
        make_site, make_reference, impaired_waters=[water("NY-B", "Brook", "Phosphorus")]
    )
    assert review.conditions["A"].decided is False
    assert findings[0].status == "needs_review"
    assert "receiving waters are not known" in findings[0].message


def test_a_listed_water_without_pollutants_cannot_be_decided(make_site, make_reference):
    review, findings = condition_a(
        make_site,
        make_reference,
        outfalls=[(OUTFALL, "Brook", "NY-B")],
        impaired_waters=[water("NY-B", "Brook", None)],
    )
    assert review.conditions["A"].decided is False
    assert "no pollutant is recorded" in findings[0].message


def test_without_reference_layers_condition_a_is_not_decided(make_site):
    site = load_site_plan(make_site([DISTURBANCE]), PROFILE)
    review = review_site(site, PROFILE, rules=["condition_a"])
    assert review.conditions["A"].to_dict()["decided"] is False
    finding = next(f for f in review.findings if f.rule == "condition_a")
    assert finding.status == "needs_review" and "no reference layers" in finding.message
    assert "not implemented" not in finding.message


def test_the_demo_applies_through_its_discharge_point(data_copy):
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    review = review_site(site, PROFILE, reference=open_reference(data_copy("demo_reference.gpkg")))
    a = review.conditions["A"]
    assert a.applies
    assert a.evidence[0].startswith(
        "NY1301-0099 Seven Springs Creek tributary is 303(d)-listed "
        "(listing cycle 2022, category 5) for Silt/Sediment "
        "(sediment), Phosphorus"
    )
    assert review.reference["read"]["impaired_waters"]["version"] == 1


@pytest.mark.parametrize(
    "text, folded", [("  Seven-Springs  CREEK ", "seven springs creek"), ("Brook (total)", "brook total")]
)
def test_names_fold_without_qualifiers_unless_asked(text, folded):
    assert normalise_name(text) == folded


# --- the shipped variants (test_data/README.md) -----------------------------------------------


def shipped(data_copy, site_file, reference_file):
    site = load_site_plan(data_copy(site_file), PROFILE)
    return review_site(site, PROFILE, reference=open_reference(data_copy(reference_file)))


def test_without_discharge_points_the_demo_drains_through_its_catchment(data_copy):
    review = shipped(data_copy, "variants/no_discharge_point.gpkg", "demo_reference.gpkg")
    assert review.conditions["A"].applies
    assert "catchments:020200060101" in review.conditions["A"].evidence[0]
    drawn = [f for f in review.findings if f.rule == "condition_a" and f.geometry is not None]
    assert [f.features for f in drawn] == [["catchments:020200060101"]]


def test_the_tmdl_variant_adds_its_watershed_to_the_evidence(data_copy):
    review = shipped(data_copy, "demo_site.gpkg", "variants/reference_tmdl.gpkg")
    evidence = review.conditions["A"].evidence
    assert any(e.startswith("TMDL NY-TMDL-0002") for e in evidence)
    assert evidence[-1] == "pollutants of concern: sediment, phosphorus"
    drawn = [f for f in review.findings if f.rule == "condition_a" and f.geometry is not None]
    assert [f.features for f in drawn] == [["tmdl_watersheds:TW-2"]]


def test_reference_layers_in_another_crs_than_the_site_give_the_same_answers(data_copy):
    native = shipped(data_copy, "demo_site.gpkg", "demo_reference.gpkg")
    lonlat = shipped(data_copy, "demo_site.gpkg", "variants/reference_crs_4326.gpkg")
    assert lonlat.conditions["A"].evidence == native.conditions["A"].evidence
    for key in ("wetland_acres", "wetland_adjacent_area_acres"):
        assert lonlat.measurements[key] == pytest.approx(native.measurements[key], rel=1e-6)


def test_waterbody_ids_match_whatever_their_case_and_spacing(make_site, make_reference):
    review, findings = condition_a(
        make_site,
        make_reference,
        outfalls=[(OUTFALL, "Listed Creek", " ny-l ")],
        impaired_waters=[water("NY-L", "Other name", "Phosphorus")],
    )
    assert review.conditions["A"].applies and findings[0].status == "info"
    assert "not on the 303(d) list" not in findings[0].message


@pytest.mark.parametrize("empty", [None, float("nan"), "", " ; "])
def test_an_empty_pollutant_list_names_no_pollutant(empty):
    assert NAMES.split(empty) == [] and NAMES.describe(empty) == ""
