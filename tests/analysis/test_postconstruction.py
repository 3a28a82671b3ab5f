"""postconstruction_controls: where a condition applies, the plan shows SMPs and easements."""

import geopandas as gpd
import pytest
from pyproj import CRS
from shapely import box

from analysis.checks.conditions import Condition
from analysis.checks.postconstruction import check_postconstruction_controls
from analysis.profile import load_profile
from analysis.review import review_site
from analysis.siteplan.plan import SitePlan, load_site_plan
from tests.analysis.conftest import square

PROFILE = load_profile()
APPLIES, NOT = Condition(True, ["evidence"]), Condition(False, [])
UNDECIDED = Condition(False, ["not evaluated: Condition A is not implemented yet"], decided=False)


def plan(smps: int, easements: int, with_layers=True) -> SitePlan:
    def layer(fields, count):
        return gpd.GeoDataFrame(
            {k: [f"{v}{i}" for i in range(count)] for k, v in fields.items()},
            geometry=[box(i, 0, i + 1, 1) for i in range(count)],
            crs="EPSG:2260",
        )

    layers = {}
    if with_layers:
        layers = {
            "smp": layer({"smp_id": "S-", "practice": "p"}, smps),
            "easement": layer({"easement_id": "E-", "recorded": "1", "instrument": "x"}, easements),
        }
    return SitePlan(
        path="t.gpkg", area_crs=CRS("EPSG:2260"), input_crs="EPSG:2260", project={"name": "t"}, layers=layers
    )


@pytest.mark.parametrize(
    "a, b, c, smps, easements, status, says",
    [
        (NOT, NOT, APPLIES, 2, 1, "pass", "Condition C applies"),
        (NOT, APPLIES, NOT, 1, 3, "pass", "Condition B applies"),
        (APPLIES, APPLIES, NOT, 1, 1, "pass", "Conditions A and B apply"),
        (NOT, NOT, APPLIES, 0, 1, "fail", "shows no SMP"),
        (NOT, APPLIES, NOT, 2, 0, "fail", "shows no maintenance easement"),
        (APPLIES, NOT, NOT, 0, 0, "fail", "no SMP and no maintenance easement"),
        (NOT, NOT, NOT, 0, 0, "not_applicable", "no condition"),
        (NOT, NOT, NOT, 2, 2, "not_applicable", "no condition"),
        # A undecided: B or C decides where it applies; otherwise the answer rests on A
        (UNDECIDED, NOT, APPLIES, 1, 1, "pass", "Condition C applies"),
        (UNDECIDED, APPLIES, NOT, 0, 1, "fail", "shows no SMP"),
        (UNDECIDED, NOT, NOT, 0, 0, "needs_review", "Condition A is not decided"),
        (UNDECIDED, NOT, NOT, 2, 1, "needs_review", "Condition A is not decided"),
    ],
)
def test_postconstruction_controls(a, b, c, smps, easements, status, says):
    finding = check_postconstruction_controls(plan(smps, easements), {"A": a, "B": b, "C": c}, PROFILE)
    assert finding.rule == "postconstruction_controls"
    assert (finding.status, finding.section) == (status, PROFILE.section(finding.rule))
    assert says in finding.message
    assert finding.value == smps
    if status != "fail":
        assert f"shows {smps} SMP" in finding.message


def test_no_smp_or_easement_layer_at_all_fails_where_a_condition_applies():
    finding = check_postconstruction_controls(
        plan(0, 0, with_layers=False), {"A": NOT, "B": NOT, "C": APPLIES}, PROFILE
    )
    assert finding.status == "fail" and "no SMP and no maintenance easement" in finding.message


def test_undecided_condition_a_gives_its_evidence():
    finding = check_postconstruction_controls(plan(0, 0), {"A": UNDECIDED, "B": NOT, "C": NOT}, PROFILE)
    assert "not implemented yet" in finding.message


def test_review_without_smps_fails_where_condition_c_applies(make_site):
    review = review_site(load_site_plan(make_site([square(2.0)]), PROFILE), PROFILE)
    by_rule = {f.rule: f for f in review.findings}
    assert review.conditions["C"].applies
    assert by_rule["postconstruction_controls"].status == "fail"
    assert by_rule["easement_coverage"].status == "not_applicable"
    assert review.measurements["uncovered_smp_sq_ft"] == {}
