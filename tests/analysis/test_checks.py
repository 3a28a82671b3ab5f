"""applicability, condition_b, condition_c, disturbance_outside_site: thresholds and counting."""

import pytest
from shapely import box

from analysis.profile import load_profile
from analysis.review import review_site
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, Y0, square

PROFILE = load_profile()


def review_of(path):
    review = review_site(load_site_plan(path, PROFILE), PROFILE)
    return review, {f.rule: f for f in review.findings}


@pytest.mark.parametrize(
    "acres, required, b, c",
    [
        (0.99, False, False, False),
        (1.00, True, False, True),
        (4.99, True, False, True),
        (5.00, True, True, False),
        (5.01, True, True, False),
    ],
)
def test_thresholds_at_one_and_five_acres(make_site, acres, required, b, c):
    review, by_rule = review_of(make_site([square(acres)]))
    assert review.measurements["disturbed_acres"] == pytest.approx(acres, rel=1e-9)
    assert review.swppp_required is required
    assert review.conditions["B"].applies is b
    assert review.conditions["C"].applies is c
    assert by_rule["condition_b"].status == ("info" if b else "not_applicable")


def test_overlapping_disturbance_is_counted_once(make_site):
    side = 300.0
    first = box(X0, Y0, X0 + side, Y0 + side)
    second = box(X0 + side / 2, Y0, X0 + 1.5 * side, Y0 + side)  # half of it over the first
    review, _ = review_of(make_site([first, second], phases=["1", "2"]))
    union_sq_ft_us = 1.5 * side * side
    expected = union_sq_ft_us * (1200 / 3937) ** 2 / 4046.8564224
    assert review.measurements["disturbed_acres"] == pytest.approx(expected, rel=1e-12)
    phases = {p["phase"]: p["acres"] for p in review.measurements["phases"]}
    assert phases["1"] + phases["2"] > review.measurements["disturbed_acres"]


@pytest.mark.parametrize("land_use", ["single_family_residential", "agricultural"])
def test_condition_c_exempts_single_family_and_agriculture(make_site, land_use):
    review, by_rule = review_of(make_site([square(2.0)], land_use=land_use))
    assert review.conditions["C"].applies is False
    assert "exempt" in by_rule["condition_c"].message


def test_common_plan_of_one_acre_or_more_requires_a_swppp_below_one_acre(make_site):
    review, by_rule = review_of(make_site([square(0.6)], common_plan_acres=3.5))
    assert review.swppp_required is True
    assert "common plan" in by_rule["applicability"].message


def test_under_one_acre_alone_needs_no_swppp(make_site):
    review, by_rule = review_of(make_site([square(0.8)]))
    assert review.swppp_required is False
    assert "no SWPPP is required" in by_rule["applicability"].message


def test_disturbance_outside_the_boundary_is_a_warning_with_its_area(make_site):
    inside = square(1.0)
    beyond = box(X0 + 1990, Y0, X0 + 2010, Y0 + 100)  # 10 ft x 100 ft past the boundary
    review, by_rule = review_of(make_site([inside, beyond]))
    finding = by_rule["disturbance_outside_site"]
    assert finding.status == "warn"
    assert finding.value == pytest.approx(1000 * (1200 / 3937 / 0.3048) ** 2, rel=1e-9)
    assert finding.features == ["disturbance:2"]
    assert finding.geometry.area == pytest.approx(1000.0)


def test_disturbance_inside_the_boundary_passes(make_site):
    _, by_rule = review_of(make_site([square(1.0)]))
    assert by_rule["disturbance_outside_site"].status == "pass"


@pytest.mark.parametrize(
    "variant, acres",
    [("exactly_one_acre.gpkg", 1.0), ("exactly_five_acres.gpkg", 5.0), ("under_one_acre.gpkg", 0.8)],
)
def test_shipped_variants_measure_their_stated_acres(data_copy, variant, acres):
    review, _ = review_of(data_copy(f"variants/{variant}"))
    assert review.measurements["disturbed_acres"] == pytest.approx(acres, rel=1e-9)


@pytest.mark.parametrize("variant", ["crs_4326.gpkg", "crs_utm18n.gpkg"])
def test_demo_in_another_crs_measures_the_same_acres(data_copy, variant):
    demo, _ = review_of(data_copy("demo_site.gpkg"))
    other, _ = review_of(data_copy(f"variants/{variant}"))
    assert other.measurements["disturbed_acres"] == pytest.approx(
        demo.measurements["disturbed_acres"], rel=1e-6
    )
