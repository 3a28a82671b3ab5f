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


def plan(variant="contents_complete.gpkg", rows=None):
    site = load_site_plan(TEST_DATA / "variants" / variant, PROFILE)
    if rows is not None:
        site.layers["guarantee"] = pd.DataFrame(
            rows, columns=["kind", "amount", "starts_on", "ends_on", "covers", "estimated_cost"]
            [:len(rows[0]) if rows else 5])
    return site


def by_rule(result):
    return {f.rule: f for f in result.findings}


def test_guarantees_long_enough_pass():
    result = check_guarantees(plan(), PROFILE)
    found = by_rule(result)
    assert {r: f.status for r, f in found.items()} == {"construction_guarantee": "pass",
                                                       "maintenance_bond": "pass"}
    covered = (date(2032, 11, 15) - date(2027, 11, 15)).days / 365.25  # ends_on - completion
    assert found["maintenance_bond"].value == pytest.approx(covered)
    assert result.met == {"construction": True, "maintenance": True}


def test_a_four_year_bond_fails_with_its_years():
    # due prior to construction, not before approval: a warning, not a fail (issue 18)
    f = by_rule(check_guarantees(plan("contents_bond_four_years.gpkg"), PROFILE))["maintenance_bond"]
    assert f.status == "warn" and f.section == "Inspections E(2)"
    assert f.due == "before_construction"
    covered = (date(2031, 11, 15) - date(2027, 11, 15)).days / 365.25
    assert f.value == pytest.approx(covered) and f.limit == 5.0
    assert "it ends 2031-11-15, 4.0 years after substantial completion (2027-11-15" in f.message
    assert "requires 5 years, to 2032-11-15" in f.message
    assert f.features == ["guarantee:2"]


def test_the_years_come_from_the_profile():
    four = replace(PROFILE, guarantees=replace(PROFILE.guarantees,
                                               maintenance_years_after_completion=4))
    f = by_rule(check_guarantees(plan("contents_bond_four_years.gpkg"), four))["maintenance_bond"]
    assert f.status == "pass"


def test_missing_guarantees_are_not_yet_due_once_each():
    result = check_guarantees(load_site_plan(TEST_DATA / "demo_site.gpkg", PROFILE), PROFILE)
    assert [(f.rule, f.status, f.value, f.due) for f in result.findings] == [
        ("construction_guarantee", "info", 0.0, "before_construction"),
        ("maintenance_bond", "info", 0.0, "before_construction")]
    assert "no construction completion guarantee" in result.findings[0].message
    assert '"may require"' in result.findings[0].message


@pytest.mark.parametrize("row, status, says", [
    (("escrow", 1000.0, "2027-03-01", "2028-11-14", "construction"), "warn",
     "it ends 2028-11-14, 1.0 years after final acceptance"),
    (("escrow", 1000.0, "2027-04-02", "2029-01-01", "construction"), "warn",
     "it starts 2027-04-02, after construction starts (2027-04-01)"),
    (("escrow", None, "2027-03-01", "2029-01-01", "construction"), "warn", "it states no amount"),
    (("escrow", 1000.0, "2027-03-01", None, "construction"), "needs_review",
     "it has no end date (ends_on)"),
    (("escrow", 1000.0, None, "2029-01-01", "construction"), "needs_review",
     "it has no start date (starts_on)"),
    (("letter_of_credit", 1000.0, "2027-03-01", "2028-11-15", "construction"), "pass",
     "runs to 2028-11-15"),
])
def test_construction_guarantee_cases(row, status, says):
    f = by_rule(check_guarantees(plan(rows=[row]), PROFILE))["construction_guarantee"]
    assert f.status == status and says in f.message
