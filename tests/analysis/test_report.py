"""The HTML report: cover, site map at the chapter's scale (tiled for long sites), findings,
measurements, what was not checked; every input text escaped."""
import base64
import importlib.util
import io
import re
import sqlite3
from contextlib import closing
from html.parser import HTMLParser

import numpy as np
import pytest
import shapely
from PIL import Image

from analysis import __version__
from analysis.findings import STATUS_COLOURS
from analysis.profile import load_profile
from analysis.report.html import render_html
from analysis.review import review_paths
from analysis.report.site_map import (HTML_FRAME_IN, map_scale, map_tiles, site_footprint,
                               site_map_charts, units_per_foot)
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
    assert all(attrs.get("src", "data:").startswith("data:") for tag, attrs in parsed.tags
               if tag == "img")
    text = "".join(parsed.text)
    assert f"SWPPP review: {HOSTILE}" in text  # shown to the reader as the text it is
    assert '"><img src=x onerror=alert(2)>' in text


def test_cover_names_project_date_profile_and_version(demo_review, demo_html):
    html = demo_html
    cover = html[html.index('<section class="cover">'):html.index("</section>")]
    text = re.sub(r"<[^>]+>", " ", cover)
    for expected in ("Forest Road Commons", "51 Forest Road, Kiryas Joel, NY 10950",
                     "Forest Road Commons LLC", demo_review.reviewed_on,
                     demo_review.profile.name, __version__):
        assert expected in text


def test_report_has_map_chart_findings_measurements_and_not_checked(data_copy):
    review = review_paths(data_copy("demo_site.gpkg"))  # no reference: A and wetlands undecided
    html = render_html(review)
    headings = re.findall(r"<h2>([^<]+)</h2>", html)
    assert headings[:5] == ["Site map", "Phasing", "Findings", "Measurements", "Conditions"]
    assert headings[-1] == "Not checked by this tool"
    not_checked = html[html.index("<h2>Not checked by this tool</h2>"):]
    undecided = [f for f in review.findings if f.status == "needs_review"]
    assert {f.rule for f in undecided} >= {"condition_a", "wetlands"}
    for finding in undecided:
        assert f"<span class='muted'>{finding.rule}</span>" in not_checked
        assert finding.message.replace('"', "&quot;").replace("'", "&#x27;") in not_checked
    # Every finding is in the findings table with its status, section and message.
    table = html[html.index("<h2>Findings</h2>"):html.index("<h2>Measurements</h2>")]
    assert table.count("<tr>") == len(review.findings) + 1


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
    fail = next(f for f in demo_review.findings if f.rule == "easement_coverage"
                and f.status == "fail")
    x, y = shapely.get_coordinates(shapely.point_on_surface(fail.geometry))[0]
    column = (x - xmin) / (xmax - xmin) * HTML_FRAME_IN[0] * dpi
    row = (ymax - y) / (ymax - ymin) * HTML_FRAME_IN[1] * dpi
    pixel = np.array(image.getpixel((int(column), int(row))))
    red = np.array([int(STATUS_COLOURS["fail"][i:i + 2], 16) for i in (1, 3, 5)])
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


@pytest.mark.skipif(importlib.util.find_spec("qgis") is not None,
                    reason="QGIS imports here: tests/qgis_plugin/test_report_pdf.py writes the PDF")
def test_cli_pdf_without_qgis_exits_2_and_writes_nothing(data_copy, tmp_path, capsys):
    pdf, html = tmp_path / "r.pdf", tmp_path / "r.html"
    status, err = run_cli(["review", data_copy("demo_site.gpkg"), "--pdf", pdf, "--report", html],
                          capsys)
    assert status == 2
    assert "--pdf needs QGIS" in err and "import qgis" in err and "--report" in err
    assert "Traceback" not in err
    assert not pdf.exists() and not html.exists()


def test_cli_pdf_without_a_registered_writer_exits_2(data_copy, tmp_path, capsys, monkeypatch):
    """The library installed alone (no plugin package registering a PDF writer): said, nothing
    written."""
    from analysis.cli import review as cli_review

    monkeypatch.setattr(cli_review, "PDF_WRITERS", "swppp_review.no_such_group")
    status, err = run_cli(["review", data_copy("demo_site.gpkg"), "--pdf", tmp_path / "r.pdf",
                           "--json", tmp_path / "r.json"], capsys)
    assert status == 2 and "no PDF writer is registered" in err and "no_such_group" in err
    assert not (tmp_path / "r.pdf").exists() and not (tmp_path / "r.json").exists()


def test_cli_pdf_must_name_a_pdf(data_copy, tmp_path, capsys):
    status, err = run_cli(["review", data_copy("demo_site.gpkg"), "--pdf", tmp_path / "r.html"],
                          capsys)
    assert status == 2 and "--pdf must name a .pdf file" in err
