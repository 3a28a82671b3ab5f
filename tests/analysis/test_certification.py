"""Contractor certifications (SWPPP G): every field of G(2), signed before work, the form."""

import re

from analysis.checklist.certification import (
    G2_FIELDS,
    certification_statement,
    check_contractor_certification,
    render_certification_form,
)
from analysis.cli import main
from analysis.profile import load_profile
from analysis.siteplan.plan import load_site_plan
from tests.conftest import TEST_DATA, shared_path

PROFILE = load_profile()


def site(variant="contents_complete.gpkg", **changes):
    plan = load_site_plan(TEST_DATA / "variants" / variant, PROFILE)
    frame = plan.layers["contractor_certification"].copy()
    for column, (row, value) in changes.items():
        frame.loc[frame.index[row], column] = value
    plan.layers["contractor_certification"] = frame
    return plan


def test_complete_certifications_signed_by_the_first_day_pass():
    result = check_contractor_certification(site(), PROFILE)
    [f] = result.findings
    assert f.status == "pass" and result.complete and result.signed_in_time
    assert "signed on or before work started (2027-04-01)" in f.message
    assert f.features == ["contractor_certification:A. Builder", "contractor_certification:B. Digger"]


def test_a_certification_missing_a_phone_number_is_one_finding_naming_it():
    result = check_contractor_certification(
        load_site_plan(TEST_DATA / "variants" / "contents_no_phone.gpkg", PROFILE), PROFILE
    )
    [f] = result.findings
    assert f.status == "warn" and f.features == ["contractor_certification:B. Digger"]
    assert f.message == (
        "contractor certification B. Digger is incomplete: no telephone number "
        "of the contracting firm (phone) (due before construction: G(1) "
        '"before undertaking any land development activity")'
    )
    assert f.section == "SWPPP G(1), G(2)"
    assert not result.complete and result.signed_in_time  # G(2) lacks; G(1)'s date is there


def test_signed_after_work_started_warns_and_each_record_is_its_own_finding():
    result = check_contractor_certification(site(signed_on=(0, "2027-04-02"), title=(1, None)), PROFILE)
    assert [(f.status, f.features[0].split(":")[1]) for f in result.findings] == [
        ("warn", "A. Builder"),
        ("warn", "B. Digger"),
    ]
    assert "signed 2027-04-02, after work started on 2027-04-01" in result.findings[0].message
    assert "no title of the person providing the signature (title)" in result.findings[1].message
    assert not result.signed_in_time and not result.complete


def test_an_unreadable_date_is_named():
    [f] = check_contractor_certification(site(signed_on=(1, "April 1")), PROFILE).findings
    assert f.status == "warn" and "signed_on 'April 1' is not a date (YYYY-MM-DD)" in f.message


def test_no_certification_in_the_plan_is_not_yet_due():
    plan = load_site_plan(TEST_DATA / "demo_site.gpkg", PROFILE)
    [f] = check_contractor_certification(plan, PROFILE).findings
    assert f.status == "info" and f.due == "before_construction" and "swppp certification-form" in f.message


def test_the_form_carries_the_statement_word_for_word_and_every_field(tmp_path):
    chapter = re.sub(r"\s+", " ", shared_path("seed/stormwater_chapter.txt").read_text())
    statement = certification_statement()
    assert statement.startswith("I certify under penalty of law")
    assert f'"{statement}"' in chapter
    html = render_certification_form(PROFILE, None)
    assert statement in html
    for _name, what in G2_FIELDS:
        assert what[0].upper() + what[1:] in html or what in html.lower(), what
    assert "Signature" in html


def test_the_form_fills_in_the_site_escaped(tmp_path):
    plan = load_site_plan(TEST_DATA / "demo_site.gpkg", PROFILE)
    plan.project["name"] = "<b>Forest & Co</b>"
    html = render_certification_form(PROFILE, plan)
    assert "&lt;b&gt;Forest &amp; Co&lt;/b&gt;, 51 Forest Road, Kiryas Joel, NY 10950" in html
    assert "<b>Forest" not in html


def test_cli_writes_the_form_and_refuses_another_suffix(tmp_path, capsys):
    out = tmp_path / "form.html"
    assert (
        main(["certification-form", "--output", str(out), "--site", str(TEST_DATA / "demo_site.gpkg")]) == 0
    )
    assert certification_statement() in out.read_text(encoding="utf-8")
    assert main(["certification-form", "--output", str(tmp_path / "form.pdf")]) == 2
    assert "--output must name an .html file" in capsys.readouterr().err
    assert not (tmp_path / "form.pdf").exists()


def test_r3_11_a_subcontractor_signs_before_its_own_phase_starts():
    """SWPPP G(1): "Each contractor and subcontractor ... shall sign a copy of the following
    certification statement before undertaking any land development activity". A phase-3
    subcontractor signing before phase 3 starts (2027-09-01 in the plan) signed in time, though
    after the project's first day (round 3, point 11); without a phase the first day counts; a
    phase the plan does not have leaves it not known."""
    in_time = check_contractor_certification(site(signed_on=(1, "2027-08-01"), phase=(1, "3")), PROFILE)
    assert [f.status for f in in_time.findings] == ["pass"] and in_time.signed_in_time
    late = check_contractor_certification(site(signed_on=(1, "2027-09-02"), phase=(1, "3")), PROFILE)
    assert "signed 2027-09-02, after its phase 3's work started on 2027-09-01" in late.findings[0].message
    no_phase = check_contractor_certification(site(signed_on=(1, "2027-08-01")), PROFILE)
    assert "signed 2027-08-01, after work started on 2027-04-01" in no_phase.findings[0].message
    unknown = check_contractor_certification(site(signed_on=(1, "2027-08-01"), phase=(1, "9")), PROFILE)
    assert [f.status for f in unknown.findings] == ["needs_review"]
