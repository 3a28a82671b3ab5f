"""Guarantees (Inspections E): one year past final acceptance; a five-year maintenance bond."""

from dataclasses import replace
from datetime import date

import pandas as pd
import pytest

from analysis.checklist.guarantees import check_guarantees
from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan
from tests.conftest import TEST_DATA

PROFILE = load_profile()
# The reading that lets a fixed end date pass: the last stabilisation stands for final acceptance
# and substantial completion (the default profile's is false: round 3, point 8).
STANDS = replace(PROFILE, guarantees=replace(PROFILE.guarantees, stabilization_stands_for_acceptance=True))


def plan(variant="contents_complete.gpkg", rows=None):
    site = load_site_plan(TEST_DATA / "variants" / variant, PROFILE)
    if rows is not None:
        site.layers["guarantee"] = pd.DataFrame(
            rows,
            columns=["kind", "amount", "starts_on", "ends_on", "covers", "estimated_cost"][
                : len(rows[0]) if rows else 5
            ],
        )
    return site


def by_rule(result):
    return {f.rule: f for f in result.findings}


def test_guarantees_long_enough_pass_where_the_last_stabilisation_stands_for_acceptance():
    result = check_guarantees(plan(), STANDS)
    found = by_rule(result)
    assert {r: f.status for r, f in found.items()} == {
        "construction_guarantee": "pass",
        "maintenance_bond": "pass",
    }
    covered = (date(2032, 11, 15) - date(2027, 11, 15)).days / 365.25  # ends_on - completion
    assert found["maintenance_bond"].value == pytest.approx(covered)
    assert result.met == {"construction": True, "maintenance": True}


def test_a_four_year_bond_fails_with_its_years():
    # due prior to construction, not before approval: a warning, not a fail (issue 18)
    f = by_rule(check_guarantees(plan("contents_bond_four_years.gpkg"), STANDS))["maintenance_bond"]
    assert f.status == "warn" and f.section == "Inspections E(2)"
    assert f.due == "before_construction"
    covered = (date(2031, 11, 15) - date(2027, 11, 15)).days / 365.25
    assert f.value == pytest.approx(covered) and f.limit == 5.0
    assert (
        "it ends 2031-11-15, 4.0 years after substantial completion at the earliest "
        "(2027-11-15, the last stabilisation date)" in f.message
    )
    assert "requires 5 years, to 2032-11-15" in f.message
    assert f.features == ["guarantee:2"]


def test_the_years_come_from_the_profile():
    four = replace(STANDS, guarantees=replace(STANDS.guarantees, maintenance_years_after_completion=4))
    f = by_rule(check_guarantees(plan("contents_bond_four_years.gpkg"), four))["maintenance_bond"]
    assert f.status == "pass"


def test_missing_guarantees_are_not_yet_due_once_each():
    result = check_guarantees(load_site_plan(TEST_DATA / "demo_site.gpkg", PROFILE), PROFILE)
    assert [(f.rule, f.status, f.value, f.due) for f in result.findings] == [
        ("construction_guarantee", "info", 0.0, "before_construction"),
        ("maintenance_bond", "info", 0.0, "before_construction"),
    ]
    assert "no construction completion guarantee" in result.findings[0].message
    assert '"may require"' in result.findings[0].message


@pytest.mark.parametrize(
    "row, status, says",
    [
        (
            ("escrow", 1000.0, "2027-03-01", "2028-11-14", "construction"),
            "warn",
            "it ends 2028-11-14, 1.0 years after final acceptance at the earliest",
        ),
        (
            ("escrow", 1000.0, "2027-04-02", "2029-01-01", "construction"),
            "warn",
            "it starts 2027-04-02, after construction starts (2027-04-01)",
        ),
        (("escrow", None, "2027-03-01", "2029-01-01", "construction"), "warn", "it states no amount"),
        (
            ("escrow", 1000.0, "2027-03-01", None, "construction"),
            "needs_review",
            "it has no end date (ends_on)",
        ),
        (
            ("escrow", 1000.0, None, "2029-01-01", "construction"),
            "needs_review",
            "it has no start date (starts_on)",
        ),
        (
            ("letter_of_credit", 1000.0, "2027-03-01", "2028-11-15", "construction"),
            "needs_review",
            "the plan does not record final acceptance; the last stabilisation date (2027-11-15) is not it",
        ),
        (
            ("bond", 1000.0, "2027-03-01", "2029-01-01", "construction"),
            "warn",
            'a bond is not the security E(1): "a cash escrow, or irrevocable letter of credit"',
        ),
    ],
)
def test_construction_guarantee_cases(row, status, says):
    f = by_rule(check_guarantees(plan(rows=[row]), PROFILE))["construction_guarantee"]
    assert f.status == status and says in f.message


def test_r3_8_a_fixed_end_date_is_not_known_to_last_from_final_acceptance():
    """Inspections E(1): the guarantee "shall remain in force ... not less than one year from the
    date of final acceptance"; E(2): the bond covers "five years after substantial completion of
    construction". The plan records neither date and the last stabilisation is not final
    acceptance (the profile's reading), so a fixed end date needs review, not a pass; an escrow
    is not E(2)'s "performance and maintenance bond" unless the profile accepts it (round 3,
    point 8)."""
    found = by_rule(check_guarantees(plan(), PROFILE))
    assert {r: f.status for r, f in found.items()} == {
        "construction_guarantee": "needs_review",
        "maintenance_bond": "needs_review",
    }
    assert "stabilization_stands_for_acceptance = false" in found["construction_guarantee"].message
    escrow = [("escrow", 200000.0, "2027-03-01", "2033-01-01", "maintenance", 150000.0)]
    f = by_rule(check_guarantees(plan(rows=escrow), PROFILE))["maintenance_bond"]
    assert f.status == "warn" and 'E(2): "a performance and maintenance bond"' in f.message
    accepts = replace(PROFILE, guarantees=replace(PROFILE.guarantees, maintenance_kinds=("bond", "escrow")))
    assert by_rule(check_guarantees(plan(rows=escrow), accepts))["maintenance_bond"].status == "needs_review"
