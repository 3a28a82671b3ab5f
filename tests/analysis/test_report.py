"""The HTML report: cover, site map at the chapter's scale (tiled for long sites), findings,
measurements, what was not checked; every input text escaped."""

import base64
import importlib.util
import io
import re
import sqlite3
from contextlib import closing
from html import escape
from html.parser import HTMLParser

import numpy as np
import pytest
import shapely
from PIL import Image

from analysis import __version__
from analysis.findings import STATUS_COLOURS
from analysis.profile import load_profile
from analysis.report.html import render_html
from analysis.report.site_map import (
    HTML_FRAME_IN,
    map_scale,
    map_tiles,
    site_footprint,
    site_map_charts,
    units_per_foot,
)
from analysis.review import review_paths
from tests.conftest import TEST_DATA, write_long_site

HOSTILE = "<script>alert(1)</script>"


class Elements(HTMLParser):
    """The start tags of a document, with their attributes, and its text."""

    def __init__(self):
        super().__init__()
        self.tags, self.text = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html):
    parser = Elements()
    parser.feed(html)
    parser.close()
    return parser


def set_project(path, **fields):
    with closing(sqlite3.connect(path)) as con, con:
        for field, value in fields.items():
            con.execute(f'UPDATE project SET "{field}" = ?', (value,))


@pytest.fixture(scope="module")
def demo_review():
    return review_paths(TEST_DATA / "demo_site.gpkg", reference=TEST_DATA / "demo_reference.gpkg")


@pytest.fixture(scope="module")
def demo_html(demo_review):
    """The demo's report, maps included, rendered once for the tests that read it."""
    return render_html(demo_review)


def test_no_input_text_becomes_markup(data_copy):
    site = data_copy("demo_site.gpkg")
    set_project(site, name=HOSTILE, address='"><img src=x onerror=alert(2)>', applicant=HOSTILE)
    html = render_html(review_paths(site), maps=False)

    parsed = parse(html)
    tags = [tag for tag, _ in parsed.tags]
    assert "script" not in tags
    assert not any(name.startswith("on") for _, attrs in parsed.tags for name in attrs)
    assert all(attrs.get("src", "data:").startswith("data:") for tag, attrs in parsed.tags if tag == "img")
    text = "".join(parsed.text)
    assert f"SWPPP review: {HOSTILE}" in text  # shown to the reader as the text it is
    assert '"><img src=x onerror=alert(2)>' in text


def test_names_from_the_plan_and_the_reference_are_text_not_markup(tmp_path):
    """The names the PDF test gives (tests/qgis_plugin/test_report_pdf.py: an SMP, a drainage
    area, the project, a wetland, a water, the plan's file name) are text in the HTML report,
    its map included: Jinja2 escapes each, and no element comes of them."""
    import shutil

    from tests.conftest import NAMES, PLAN_FILE_NAME, REFERENCE_NAMES, rename_text

    site = shutil.copyfile(TEST_DATA / "demo_site.gpkg", tmp_path / PLAN_FILE_NAME)
    reference = shutil.copyfile(TEST_DATA / "demo_reference.gpkg", tmp_path / "reference.gpkg")
    for path, names in ((site, NAMES), (reference, REFERENCE_NAMES)):
        for old, new in names.items():
            assert rename_text(path, old, new), old
    html = render_html(review_paths(site, reference=reference))
    parsed = parse(html)
    assert not {tag for tag, _ in parsed.tags} & {"b", "i"}  # the report has none of its own
    text = text_of(html)
    for name in (*NAMES.values(), *REFERENCE_NAMES.values(), PLAN_FILE_NAME):
        assert name in text, name


def section_html(html, key):
    start = html.index(f'<section class="{key}">')
    return html[start : html.index("</section>", start)]


def text_of(html):
    """The text a reader sees: tags gone (a <wbr> is no character), entities read."""
    return " ".join(" ".join(parse(html.replace("<wbr>", "")).text).split())


def test_decision_page_first_names_project_date_profile_and_version(demo_review, demo_html):
    text = text_of(section_html(demo_html, "decision"))
    assert demo_html.index('<section class="decision">') < demo_html.index(
        "<section", 1 + (demo_html.index('<section class="decision">'))
    )
    for expected in (
        "Forest Road Commons",
        "51 Forest Road, Kiryas Joel, NY 10950",
        "Forest Road Commons LLC",
        demo_review.reviewed_on,
        demo_review.profile.name,
        __version__,
        "Reviewer (name and title)",
        "Signature",
        "1-1-23.4 (site boundary)",
        "catchments v1 (source 2026-01-01",
    ):  # the reference versions
        assert expected in text, expected


def test_a_site_the_chapter_does_not_regulate_gets_a_report_that_says_why():
    """Definitions, "Land development activity": "disturbance of one or more acre of land, or
    activity that disturbs less than one acre of land area that is part of a common plan of
    development or sale which will or has disturbed one or more acre"; SWPPP A asks a SWPPP of a
    land development activity. Under one acre with no common plan: a report (no crash on the
    measurements the gated checks never made), and the decision says it is the definition, not
    SWPPP C, that leaves the site unregulated."""
    review = review_paths(
        TEST_DATA / "variants" / "under_one_acre.gpkg", reference=TEST_DATA / "demo_reference.gpkg"
    )
    html = render_html(review)
    decision = text_of(section_html(html, "decision"))
    assert "Not regulated: not a land development activity as the chapter defines it" in decision
    assert "SWPPP A requires no SWPPP" in decision and "under the 1-acre threshold" in decision
    assert "SWPPP C" not in decision
    assert "not measured (no SWPPP is required)" in text_of(section_html(html, "measurements"))


def test_report_has_map_chart_findings_measurements_and_not_checked(data_copy):
    review = review_paths(data_copy("demo_site.gpkg"))  # no reference: A and wetlands undecided
    html = render_html(review)
    headings = re.findall(r"<h2>([^<]+)</h2>", html)
    assert headings[:7] == [
        "Decision",
        "Summary",
        "Site map",
        "Phasing",
        "Findings",
        "Measurements",
        "Conditions",
    ]
    assert headings[-1] == "Not checked by this tool"
    not_checked = text_of(html[html.index("<h2>Not checked by this tool</h2>") :])
    undecided = [f for f in review.findings if f.status == "needs_review"]
    assert {f.rule for f in undecided} >= {"condition_a", "wetlands"}
    for finding in undecided:
        assert finding.rule in not_checked and " ".join(finding.message.split()) in not_checked
    # Every finding is in the findings table with its status, section and message.
    table = section_html(html, "findings")
    assert table.count("<tr>") == len(review.findings) + 1


def test_plan_identification_from_the_new_contract_fields(data_copy):
    """Tax map id, engineer of record, submission date (project) and each sheet's revision date
    (layout_scale): optional fields the decision page shows."""
    site = data_copy("demo_site.gpkg")
    with closing(sqlite3.connect(site)) as con, con:
        for column in ("tax_map_id", "engineer_of_record", "submission_date"):
            con.execute(f'ALTER TABLE project ADD COLUMN "{column}" TEXT')
        con.execute('ALTER TABLE layout_scale ADD COLUMN "revision_date" TEXT')
        con.execute("UPDATE layout_scale SET revision_date = '2027-01-15'")
    set_project(
        site, tax_map_id="Sec. 1 Blk 1 Lot 23.4", engineer_of_record=HOSTILE, submission_date="2027-02-01"
    )
    review = review_paths(site)
    assert review.site.project["submission_date"] is not None
    text = text_of(section_html(render_html(review, maps=False), "decision"))
    assert "Tax map / parcel id Sec. 1 Blk 1 Lot 23.4" in text
    assert f"Engineer of record {HOSTILE}" in text and "Submission date 2027-02-01" in text
    assert "C-101 Site plan (revised 2027-01-15)" in text


def _with(data, review, **changes):
    from analysis.report.model import build_report

    return build_report(review, maps=False, data={**data, **changes})


def test_findings_are_sorted_fail_needs_review_warn_pass_info(demo_review):
    from analysis.report.model import REPORT_ORDER, build_report

    table = build_report(demo_review, maps=False).section("findings").blocks[0]
    shown = [row[0].status for row in table.rows]
    assert shown == sorted(shown, key=REPORT_ORDER.index)
    assert shown[0] == "fail" and shown[-1] == "not_applicable"
    assert sorted(shown) == sorted(f.status for f in demo_review.findings)
    # Each status reads without its colour: a mark and the word.
    assert {row[0].text for row in table.rows} >= {"\u2717 fail", "? needs review", "! warn", "\u2713 pass"}


def test_summary_counts_findings_by_status_and_follows_the_decision(demo_review, demo_html):
    """The summary holds what a reader looks for there, the findings counted by status (the
    report's order) with the rules of each, and is short: it follows the decision on its last
    page (issue 20's note: three rows alone on a page)."""
    from analysis.report.model import REPORT_ORDER, build_report

    report = build_report(demo_review, maps=False)
    summary = report.section("summary")
    assert not summary.own_page
    assert all(s.own_page for s in report.sections if s.key != "summary")
    table = summary.blocks[0]
    assert table.subtitle == f"Findings by status ({len(demo_review.findings)} in all)"
    statuses = [f.status for f in demo_review.findings]
    expected = [s for s in REPORT_ORDER if s in statuses]
    assert [row[0].status for row in table.rows] == expected and len(expected) >= 5
    assert [int(row[1].text) for row in table.rows] == [statuses.count(s) for s in expected]
    failed = {demo_review.profile.title(f.rule) for f in demo_review.findings if f.status == "fail"}
    assert set(table.rows[0][2].text.split(", ")) == failed
    labels = [row[0].text for row in summary.blocks[1].rows]
    assert labels == ["Land use", "Receiving waters", "Disturbed area"]
    # The HTML's printed page: the summary does not break before it, the other sections do.
    assert '<section class="summary follows">' in demo_html
    assert demo_html.count(' follows"') == 1


def test_must_change_lists_only_failures_due_before_approval(demo_review):
    data = demo_review.to_dict()
    findings = [dict(f) for f in data["findings"]]
    fails = [f for f in findings if f["status"] == "fail"]
    fails[0]["due"] = "before_construction"
    fails[1]["due"] = "before_approval"
    report = _with(data, demo_review, findings=findings)
    decision = report.section("decision")
    table = next(b for b in decision.blocks if getattr(b, "subtitle", "") == "Must change before approval")
    listed = [row[1].text for row in table.rows]
    assert fails[0]["message"] not in listed and fails[1]["message"] in listed
    assert len(listed) == len(fails) - 1
    outcome = next(b.text for b in decision.blocks if getattr(b, "strong", False))
    assert outcome.startswith(f"Changes required: {len(fails) - 1} finding(s)")
    # Nothing due before approval fails: approvable once the undecided are settled.
    later = [dict(f, due="after_approval") if f["status"] == "fail" else f for f in findings]
    outcome = next(
        b.text
        for b in _with(data, demo_review, findings=later).section("decision").blocks
        if getattr(b, "strong", False)
    )
    assert outcome.startswith("Approvable once the reviewer has settled")


def _decision_table(report, subtitle):
    return next(
        (b for b in report.section("decision").blocks if getattr(b, "subtitle", "") == subtitle), None
    )


def test_decision_page_names_the_issuing_authority_from_the_profile(demo_review, demo_html):
    """Issue 34 item 12: the village and its chapter, as the profile names them."""
    from dataclasses import replace

    from analysis.report.model import build_report

    first = build_report(demo_review, maps=False).section("decision").blocks[0]
    assert (first.rows[0][0].text, first.rows[0][1].text) == (
        "Issuing authority",
        "Village of Kiryas Joel, under its chapter on stormwater management and erosion and sediment control",
    )
    assert "Issuing authority" in text_of(section_html(demo_html, "decision"))
    neighbour = replace(
        demo_review.profile,
        profile=replace(demo_review.profile.profile, authority="Village of Elsewhere", chapter_title="storm"),
    )
    row = (
        build_report(replace(demo_review, profile=neighbour), maps=False)
        .section("decision")
        .blocks[0]
        .rows[0]
    )
    assert row[1].text == "Village of Elsewhere, under its chapter on storm"


def test_decision_page_lists_warnings_due_before_approval_and_what_needs_review(demo_review):
    """Issue 34 items 11 and 12: the demo's wetland findings (warn, SWPPP F's permits due
    before approval) are in the before-approval warnings, placed by their status and due, not
    their words; a warning due later is not; every needs_review finding is listed; the
    reviewer's block comes before the lists (it prints on page 1)."""
    data = demo_review.to_dict()
    findings = [dict(f) for f in data["findings"]]
    warned = [f for f in findings if f["status"] == "warn"]
    wetlands = [f for f in warned if f["rule"] == "wetlands"]
    assert wetlands  # the demo disturbs a wetland and an adjacent area
    later = next(f for f in warned if f["rule"] != "wetlands")
    later["due"] = "during_construction"
    report = _with(data, demo_review, findings=findings)
    table = _decision_table(report, "Warnings to answer before approval")
    listed = [(row[0].text, row[1].text) for row in table.rows]
    assert all((f["section"], f["message"]) in listed for f in wetlands)
    assert (later["section"], later["message"]) not in listed
    assert len(listed) == len(warned) - 1
    undecided = [f["message"] for f in findings if f["status"] == "needs_review"]
    needs = _decision_table(report, "Needs review: the checks could not decide")
    assert undecided and [row[1].text for row in needs.rows] == undecided
    subtitles = [getattr(b, "subtitle", "") for b in report.section("decision").blocks]
    assert (
        subtitles.index("Reviewer")
        < subtitles.index("Must change before approval")
        < subtitles.index("Warnings to answer before approval")
        < subtitles.index("Needs review: the checks could not decide")
    )
    # Nothing failed nor needs review: approvable once the warnings are answered.
    calm = [f for f in findings if f["status"] not in ("fail", "needs_review")]
    outcome = next(
        b.text
        for b in _with(data, demo_review, findings=calm).section("decision").blocks
        if getattr(b, "strong", False)
    )
    assert outcome.startswith(
        f"Approvable once the {len(warned) - 1} warning(s) due before approval are answered"
    )
    assert (
        _decision_table(_with(data, demo_review, findings=calm), "Needs review: the checks could not decide")
        is None
    )


def test_checklist_item_due_after_construction_is_not_red(demo_review):
    from analysis.report.model import build_report

    table = build_report(demo_review, maps=False).section("checklist").blocks[-1]
    row = next(r for r in table.rows if r[0].text == "Inspections A(2)")
    assert row[1].status != "fail" and "not yet due" in row[1].text
    assert any(r[1].status == "fail" for r in table.rows)  # one due at approval still is


def test_not_checked_lists_the_duties_given_and_says_so_when_none(demo_review):
    data = demo_review.to_dict()
    duty = {"section": "Inspections B(1)", "duty": "inspect <weekly>", "reason": "field work"}
    given = _with(data, demo_review, not_checked=[duty]).section("not_checked")
    assert [c.text for c in given.blocks[0].rows[0]] == ["Inspections B(1)", "inspect <weekly>", "field work"]
    none = _with(data, demo_review, not_checked=[]).section("not_checked")
    assert none.blocks[0].text.startswith(
        "Duties of the chapter no check covers: this review does not list them"
    )
    # The demo's review carries the chapter's list (analysis/data/not_checked.csv): shown whole.
    html = render_html(demo_review, maps=False)
    assert data["not_checked"] and "Duties of the chapter no check covers" in html
    for listed in data["not_checked"]:
        assert escape(listed["duty"]) in html


def test_html_holds_every_section_and_row_of_the_model(demo_review, demo_html):
    from analysis.report.model import Paragraph, Table, build_report

    text = text_of(demo_html)
    for section in build_report(demo_review).sections:
        assert section.title in text
        for block in section.blocks:
            if isinstance(block, Table):
                for row in block.rows:
                    for cell in row:
                        for line in cell.lines:
                            assert " ".join(line.split()) in text, (section.key, line)
            elif isinstance(block, Paragraph):
                assert " ".join(block.text.split()) in text


def test_html_columns_never_split_words_and_long_ids_wrap_at_their_parts(demo_html):
    assert "anywhere" not in demo_html and "break-all" not in demo_html
    assert "hydrology_<wbr>claims:<wbr>2" in demo_html
    assert "Maintenance easements over every SMP" in demo_html  # whole words, no <wbr>
    assert "print-color-adjust:exact" in demo_html and "break-before:page" in demo_html


def test_the_map_draws_every_feature_a_finding_names(demo_review):
    """Each place a finding names (outside the plan's own disturbance, SMPs and easements) is
    a feature of a layer the map draws and labels: discharge points, public right-of-way,
    drainage areas, the reference layers; the adjacent areas and the inset's layers too."""
    from analysis.report.site_map import LABEL_FIELDS, map_layers
    from analysis.siteplan.contract import SITE_PLAN_LAYERS

    tables = {spec.name for spec in SITE_PLAN_LAYERS if spec.geometry is None}
    drawn = map_layers(demo_review)
    assert set(drawn) >= {
        "discharge_point",
        "public_row",
        "impaired_waters",
        "catchments",
        "wetlands",
        "adjacent_areas",
        "drainage_area",
    }
    named = 0
    for finding in demo_review.findings:
        for feature in finding.features:
            layer, _, fid = feature.partition(":")
            if layer in tables | {"disturbance", "smp", "easement", "site_boundary", "checklist"}:
                continue
            assert layer in drawn, feature
            assert fid in {str(v) for v in drawn[layer][LABEL_FIELDS[layer]]}, feature
            named += 1
    assert named >= 4  # the discharge point, two wetlands, the drainage areas


def png_of(data_uri):
    return Image.open(io.BytesIO(base64.b64decode(data_uri.split(",", 1)[1]))).convert("RGB")


def test_demo_map_is_one_sheet_at_the_chapter_scale_showing_the_failing_smp(demo_review, demo_html):
    tiles = site_map_charts(demo_review)
    assert len(tiles) == 1
    tile, chart = tiles[0]
    limit = demo_review.profile.site_map_scale.max_scale_denominator
    assert tile.scale <= limit
    # The map frame's ground size is its paper size at the scale: 10 in = 1,000 ft at 1:1200.
    xmin, ymin, xmax, ymax = tile.bounds
    feet = units_per_foot(demo_review.site.area_crs)
    assert (xmax - xmin) / feet == pytest.approx(HTML_FRAME_IN[0] * tile.scale / 12)
    assert (ymax - ymin) / feet == pytest.approx(HTML_FRAME_IN[1] * tile.scale / 12)
    assert shapely.contains(shapely.box(*tile.bounds), site_footprint(demo_review.site))
    # The picture: 150 dpi, map frame at the top, legend below it.
    image = png_of(chart.data_uri())
    dpi = image.width / HTML_FRAME_IN[0]
    assert dpi == pytest.approx(150)
    fail = next(f for f in demo_review.findings if f.rule == "easement_coverage" and f.status == "fail")
    x, y = shapely.get_coordinates(shapely.point_on_surface(fail.geometry))[0]
    column = (x - xmin) / (xmax - xmin) * HTML_FRAME_IN[0] * dpi
    row = (ymax - y) / (ymax - ymin) * HTML_FRAME_IN[1] * dpi
    pixel = np.array(image.getpixel((int(column), int(row))))
    red = np.array([int(STATUS_COLOURS["fail"][i : i + 2], 16) for i in (1, 3, 5)])
    assert np.abs(pixel - red).max() < 40, (pixel, red)
    assert f'style="width:{HTML_FRAME_IN[0]:g}in"' in demo_html


def test_long_site_gets_several_map_sheets_never_below_the_scale(tmp_path):
    site = write_long_site(TEST_DATA / "demo_site.gpkg", tmp_path / "long.gpkg", 3000.0)
    review = review_paths(site)
    tiles = site_map_charts(review)
    limit = map_scale(load_profile(None))
    assert len(tiles) >= 3
    assert all(tile.scale <= limit for tile, _ in tiles)
    assert [tile.number for tile, _ in tiles] == list(range(1, len(tiles) + 1))
    covered = shapely.union_all([shapely.box(*tile.bounds) for tile, _ in tiles])
    assert shapely.covers(covered, site_footprint(review.site))
    html = render_html(review)
    assert html.count('<figure class="map">') == len(tiles)
    assert f"sheet {len(tiles)} of {len(tiles)}" in html


def test_tiles_of_an_l_shaped_site_skip_the_empty_corner():
    footprint = shapely.union_all([shapely.box(0, 0, 3000, 500), shapely.box(0, 0, 500, 3000)])
    tiles = map_tiles(footprint, 1200, (10.0, 6.2), 1.0)
    boxes = [shapely.box(*t.bounds) for t in tiles]
    assert all(shapely.intersects(b, footprint) for b in boxes)
    assert shapely.covers(shapely.union_all(boxes), footprint)
    full_grid = 4 * 6  # 3,000 ft needs 4 frames across and 6 down at 1 in = 100 ft
    assert len(tiles) < full_grid


def run_cli(args, capsys):
    from analysis.cli import main

    status = main([str(a) for a in args])
    return status, capsys.readouterr().err


@pytest.mark.skipif(
    importlib.util.find_spec("qgis") is not None,
    reason="QGIS imports here: tests/qgis_plugin/test_report_pdf.py writes the PDF",
)
def test_cli_pdf_without_qgis_exits_2_and_writes_nothing(data_copy, tmp_path, capsys):
    pdf, html = tmp_path / "r.pdf", tmp_path / "r.html"
    status, err = run_cli(["review", data_copy("demo_site.gpkg"), "--pdf", pdf, "--report", html], capsys)
    assert status == 2
    assert "--pdf needs QGIS" in err and "import qgis" in err and "--report" in err
    assert "Traceback" not in err
    assert not pdf.exists() and not html.exists()


def test_cli_pdf_without_a_registered_writer_exits_2(data_copy, tmp_path, capsys, monkeypatch):
    """The library installed alone (no plugin package registering a PDF writer): said, nothing
    written."""
    from analysis.cli import review as cli_review

    monkeypatch.setattr(cli_review, "PDF_WRITERS", "swppp_review.no_such_group")
    status, err = run_cli(
        ["review", data_copy("demo_site.gpkg"), "--pdf", tmp_path / "r.pdf", "--json", tmp_path / "r.json"],
        capsys,
    )
    assert status == 2 and "no PDF writer is registered" in err and "no_such_group" in err
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "r.json").exists()


def test_cli_pdf_must_name_a_pdf(data_copy, tmp_path, capsys):
    status, err = run_cli(["review", data_copy("demo_site.gpkg"), "--pdf", tmp_path / "r.html"], capsys)
    assert status == 2 and "--pdf must name a .pdf file" in err
