"""One check shape and a registry: the review is a loop over ``registry.REGISTRY``."""

import pytest

from analysis.checks.base import INPUTS, CheckResult
from analysis.checks.context import ReviewContext
from analysis.errors import Cancelled, InputError
from analysis.profile import load_profile
from analysis.progress import Progress
from analysis.reference.read import SPECS as REFERENCE_SPECS
from analysis.registry import REGISTRY, select
from analysis.review import review_paths, review_site
from analysis.siteplan.plan import SPECS as SITE_SPECS
from analysis.siteplan.plan import load_site_plan
from tests.conftest import TEST_DATA

PROFILE = load_profile()
DEMO = TEST_DATA / "demo_site.gpkg"
REFERENCE = TEST_DATA / "demo_reference.gpkg"
RECORDS = {
    "log": TEST_DATA / "records" / "inspection_log.csv",
    "rain": TEST_DATA / "records" / "rain.csv",
    "notices": TEST_DATA / "records" / "notices.csv",
    "traps": TEST_DATA / "records" / "traps.csv",
}
SHEETS = [TEST_DATA / "sheets" / "sheet_2260_100ft.tif"]
# Rules of the profile no review emits: separate commands (swppp penalty, swppp nov) decide them.
NOT_REVIEW_RULES = {"penalty", "notice_of_violation"}


@pytest.fixture(scope="module")
def full():
    """A full review with every input (reference, a sheet, records), its progress reports."""
    reports = []
    review = review_paths(
        DEMO,
        reference=REFERENCE,
        sheets=SHEETS,
        records=RECORDS,
        progress=Progress(lambda fraction, message: reports.append((fraction, message))),
    )
    return review, reports


def test_progress_through_a_full_review_only_goes_forward_and_ends_at_one(full):
    _review, reports = full
    fractions = [f for f, _message in reports]
    assert all(b >= a for a, b in zip(fractions, fractions[1:])), reports
    assert fractions[0] == 0.0 and fractions[-1] == 1.0
    messages = [m for _f, m in reports]
    # the records check reports inside its own part of the bar, after the checklist's
    assert messages.index("checking the construction-phase records") > messages.index(
        "filling in the SWPPP contents checklist"
    )
    assert "checking inspection frequency" in messages


def test_the_full_review_holds_every_checks_results(full):
    review, _reports = full
    rules = {f.rule for f in review.findings}
    assert {
        "applicability",
        "easement_coverage",
        "wetlands",
        "inspection_frequency",
        "swppp_contents",
        "hydrology_pre_post",
        "site_map_scale",
    } <= rules
    assert review.swppp_required is True and list(review.conditions) == ["A", "B", "C"]
    assert review.records["period"]["from"] and review.checklist and review.hydrology is not None
    assert set(review.charts) >= {"phasing_timeline"}


def test_the_registry_covers_every_rule_a_review_can_emit():
    emitted = [rule for check in REGISTRY for rule in check.rules]
    assert len(emitted) == len(set(emitted)), "two checks emit one rule"
    assert set(emitted) == set(PROFILE.rules) - NOT_REVIEW_RULES
    assert len({check.name for check in REGISTRY}) == len(REGISTRY)


@pytest.mark.parametrize("check", REGISTRY, ids=lambda c: c.name)
def test_each_check_emits_only_its_registered_rules(check):
    records = RECORDS if check.only_with == "records" else None
    review = review_site(
        load_site_plan(DEMO, PROFILE),
        PROFILE,
        reference=REFERENCE,
        sheets=SHEETS,
        records=records,
        rules=[check.name],
    )
    assert {f.rule for f in review.findings} <= set(check.rules)
    if check.name != "input_geometry":  # the demo plan has no invalid geometry to repair
        assert review.findings


@pytest.mark.parametrize("check", REGISTRY, ids=lambda c: c.name)
def test_each_check_says_what_it_reads_and_needs_only_earlier_checks(check):
    for read in check.reads:
        kind, _, name = read.partition(":")
        assert (
            (kind == "site" and (name in SITE_SPECS or name == "*"))
            or (kind == "reference" and name in REFERENCE_SPECS)
            or (not name and read in INPUTS)
        ), read
    earlier = [c.name for c in REGISTRY[: REGISTRY.index(check)]]
    assert set(check.needs) <= set(earlier)
    assert check.weight > 0 and check.doing


def test_every_check_returns_the_one_shape():
    plan = load_site_plan(DEMO, PROFILE)
    context = ReviewContext(site=plan, profile=PROFILE, records=RECORDS)
    for check in REGISTRY:
        result = check.run(context, Progress())
        assert isinstance(result, CheckResult), check.name
        context.conditions.update(result.conditions)
    assert set(context.conditions) == {"swppp_required", "A", "B", "C"}


def test_the_easement_check_alone_is_the_easement_part_of_the_full_review(full):
    review, _reports = full
    alone = review_paths(DEMO, rules=["easement_coverage"])
    assert [f.to_dict() for f in alone.findings] == [
        f.to_dict() for f in review.findings if f.rule == "easement_coverage"
    ]
    assert alone.measurements == {"uncovered_smp_sq_ft": review.measurements["uncovered_smp_sq_ft"]}
    # It reads Conditions A-C (D(8) is a requirement for them), so their checks ran first.
    assert alone.swppp_required is None and set(alone.conditions) == {"A", "B", "C"}
    assert "reference" not in alone.to_dict()


def test_one_check_by_a_rule_id_gives_only_the_conditions_it_decided():
    plan = load_site_plan(DEMO, PROFILE)
    a = review_site(plan, PROFILE, reference=REFERENCE, rules=["condition_a"]).to_dict()
    assert list(a["conditions"]) == ["A"] and a["measurements"] == {}
    assert {f["rule"] for f in a["findings"]} == {"condition_a"}
    wetlands = review_site(plan, PROFILE, reference=REFERENCE, rules=["wetlands"]).to_dict()
    assert "conditions" not in wetlands and "wetland_acres" in wetlands["measurements"]


def test_a_check_pulls_in_the_checks_whose_conditions_it_reads_without_their_findings():
    chosen = select(["hydrology_pre_post"])
    assert [(c.name, asked) for c, asked in chosen] == [
        ("condition_b", False),
        ("condition_c", False),
        ("condition_a", False),
        ("hydrology", True),
    ]
    review = review_site(load_site_plan(DEMO, PROFILE), PROFILE, rules=["water_quality_volume"])
    assert {f.rule for f in review.findings} <= {"hydrology_pre_post", "water_quality_volume"}
    assert list(review.conditions) == ["A", "B", "C"] and review.swppp_required is None


def test_an_unknown_rule_is_refused_naming_the_known_ones():
    with pytest.raises(InputError, match="no check emits the rule 'easements'.*easement_coverage"):
        select(["easements"])


def test_the_records_check_runs_only_with_records():
    plan = load_site_plan(DEMO, PROFILE)
    assert review_site(plan, PROFILE, rules=["records"]).findings == []
    review = review_site(plan, PROFILE)
    assert review.records is None and "inspection_frequency" not in {f.rule for f in review.findings}
    with pytest.raises(InputError, match="the inspection log and the rainfall record are both needed"):
        review_site(plan, PROFILE, rules=["records"], records={"log": RECORDS["log"]})


def test_a_review_is_cancelled_from_its_progress_midway():
    seen = []
    progress = Progress(
        lambda fraction, message: seen.append(fraction), is_canceled=lambda: bool(seen) and seen[-1] > 0.5
    )
    with pytest.raises(Cancelled):
        review_paths(DEMO, reference=REFERENCE, progress=progress)
    assert 0.5 < seen[-1] < 1.0


def test_a_part_of_the_progress_maps_its_own_zero_to_one_and_is_cancelled_with_it():
    seen, cancel = [], []
    whole = Progress(
        lambda fraction, message: seen.append((fraction, message)), is_canceled=lambda: bool(cancel)
    )
    part = whole.sub(0.2, 0.6).sub(0.5, 1.0)
    part.step(0.0, "a")
    part.step(0.5, "b")
    part.step(2.0, "c")  # clamped to the part's end
    assert seen == [(pytest.approx(0.4), "a"), (pytest.approx(0.5), "b"), (pytest.approx(0.6), "c")]
    cancel.append(True)
    with pytest.raises(Cancelled):
        part.check_canceled()
    with pytest.raises(ValueError):
        whole.sub(0.6, 0.2)
