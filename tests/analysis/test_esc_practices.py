"""ESC practices (SWPPP B(7)-(11)): per stage, sizes and lengths measured, schedule named."""

import pytest

from analysis.checklist.esc_practices import check_esc_practices, summarise_esc_practices
from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan
from tests.conftest import TEST_DATA

PROFILE = load_profile()
US_FT = 1200 / 3937 / 0.3048  # international feet per US survey foot


def plan():
    return load_site_plan(TEST_DATA / "variants" / "contents_complete.gpkg", PROFILE)


def test_practices_are_summarised_per_stage_with_measured_lengths():
    summary = summarise_esc_practices(plan())
    assert {s: n["practices"] for s, n in summary["by_stage"].items()} == {
        "temporary": 2,
        "permanent": 1,
        "converted": 1,
    }
    fence = summary["practices"][0]
    assert (fence["practice"], fence["stage"], fence["size"]) == (
        "silt fence",
        "temporary",
        "36 in high, wire-backed",
    )
    # The generator draws the silt fence from x=20 to x=700 local US survey feet.
    assert fence["measured_length_ft"] == pytest.approx(680 * US_FT)
    assert fence["length_ft"] == pytest.approx(680.0)
    assert summary["by_stage"]["temporary"]["measured_length_ft"] == pytest.approx(730 * US_FT)
    [f] = check_esc_practices(plan(), summary, PROFILE)
    assert f.status == "pass" and f.value == 4.0


def test_a_practice_without_size_or_schedule_is_named():
    site = plan()
    frame = site.layers["esc_practice"].copy()
    frame.loc[frame.index[1], ["size", "length_ft", "remove_after"]] = None
    frame.loc[frame.index[3], "install_by"] = None
    site.layers["esc_practice"] = frame
    findings = check_esc_practices(site, summarise_esc_practices(site), PROFILE)
    assert [(f.status, f.features) for f in findings] == [
        ("warn", ["esc_practice:2"]),
        ("warn", ["esc_practice:4"]),
    ]
    assert findings[0].message == (
        "stabilized construction entrance (esc_practice:2): no size or length (B(8)); "
        "no remove_after (B(11): how long it stays in place)"
    )
    assert "no install_by date (B(11) implementation schedule)" in findings[1].message
    assert findings[0].geometry is not None


def test_no_layer_is_for_review():
    site = load_site_plan(TEST_DATA / "demo_site.gpkg", PROFILE)
    assert summarise_esc_practices(site) is None
    [f] = check_esc_practices(site, None, PROFILE)
    assert f.status == "needs_review" and f.section == "SWPPP B(7)-(11)"


@pytest.mark.parametrize("stated, warned", [(680.0 * 0.91, False), (680.0 * 0.89, True)])
def test_a_stated_length_far_from_the_line_drawn_is_named(stated, warned):
    site = plan()
    frame = site.layers["esc_practice"].copy()
    frame.loc[frame.index[0], "length_ft"] = stated
    site.layers["esc_practice"] = frame
    findings = check_esc_practices(site, summarise_esc_practices(site), PROFILE)
    assert (findings[0].status == "warn") is warned
    if warned:
        assert (
            f"length_ft says {stated:,.1f} ft, the line drawn is {680 * US_FT:,.1f} ft" in findings[0].message
        )
