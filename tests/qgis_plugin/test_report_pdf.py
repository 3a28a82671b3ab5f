"""The PDF report, a QGIS print layout: its pages, the map sheets at the chapter's scale (more
of them for a long site), the failing SMP's colour where it lies; through swppp:review, under
qgis_process and from the command line."""

import importlib
import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from tests.conftest import NAMES, PLAN_FILE_NAME, REFERENCE_NAMES, TEST_DATA, rename_text, write_long_site
from tests.qgis_plugin.test_qgis_process import qgis_process  # noqa: F401 - the fixture

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = "<script>alert(1)</script>"
DPI = 100


def pdf_pages(path):
    info = subprocess.run(["pdfinfo", str(path)], check=True, capture_output=True, text=True)
    return int(next(line.split()[-1] for line in info.stdout.splitlines() if line.startswith("Pages:")))


def page_text(path, page):
    """The text of ``page`` (1-based), by pdftotext."""
    return subprocess.run(
        ["pdftotext", "-layout", "-f", str(page), "-l", str(page), str(path), "-"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def page_image(path, page, folder):
    stem = folder / f"page{page}"
    subprocess.run(
        [
            "pdftoppm",
            "-r",
            str(DPI),
            "-png",
            "-singlefile",
            "-f",
            str(page),
            "-l",
            str(page),
            str(path),
            str(stem),
        ],
        check=True,
    )
    return Image.open(f"{stem}.png").convert("RGB")


def first_lines(path):
    """Each page's first line of text: the page's title."""
    return [
        next((line.strip() for line in page_text(path, p).splitlines() if line.strip()), "")
        for p in range(1, pdf_pages(path) + 1)
    ]


def opening(titles):
    """The first page's title and the first map sheet's."""
    return [titles[0], next(t for t in titles if t.startswith("Site map"))]


@pytest.fixture(scope="module")
def layout_module(staged_plugin):
    return importlib.import_module("swppp_review.report_layout")


def review_of(site, reference=None):
    from analysis.review import review_paths  # the staged plugin's copy

    return review_paths(site, reference=reference)


def test_review_pdf_pages_cover_maps_chart_tables(data_copy, tmp_path):
    import processing

    site = data_copy("demo_site.gpkg")
    pdf = tmp_path / "report.pdf"
    processing.run(
        "swppp:review",
        {"SITE": str(site), "REFERENCE": str(data_copy("demo_reference.gpkg")), "OUTPUT_PDF": str(pdf)},
    )

    titles = first_lines(pdf)
    assert titles[0] == "Decision"  # the decision page first
    assert "Forest Road Commons" in page_text(pdf, 1)
    site_map = titles.index("Site map: 1 inch = 100 feet (1:1200)")  # the demo fits one sheet
    # The reviewer signs page 1: the sign-off below the outcome (test_report_signoff.py); the
    # decision's lists run on, the short summary follows them before the site map.
    assert all(label in page_text(pdf, 1) for label in ("Reviewer (name and title)", "Date", "Signature"))
    assert set(titles[1:site_map]) <= {"Decision (continued)", "Summary", "Summary (continued)"}
    before_map = "".join(page_text(pdf, p) for p in range(2, site_map + 1))
    assert (
        before_map.index("Needs review")
        < before_map.index("Summary")
        < before_map.index("Findings by status")
        < before_map.index("Land use")
    )
    assert titles[site_map + 1] == "Phasing"
    findings = [i for i, t in enumerate(titles) if t.startswith("Findings")]
    assert titles[findings[0]] == "Findings" and findings[0] == site_map + 2
    assert all(titles[i] == "Findings (continued)" for i in findings[1:])
    # A long table runs on over pages that repeat its header; then the next section begins.
    assert titles[findings[-1] + 1] == "Measurements"
    rest = [t.removesuffix(" (continued)") for t in titles[findings[-1] + 1 :]]
    assert list(dict.fromkeys(rest)) == [
        "Measurements",
        "Conditions",
        "Wetlands and reference layers",
        "Hydrology (TR-55)",
        "SWPPP contents checklist",
        "Not checked by this tool",
    ]
    assert len(titles) == pdf_pages(pdf)
    assert "BR-2" in "".join(page_text(pdf, p + 1) for p in findings)
    assert f"Page {len(titles)} of {len(titles)}" in page_text(pdf, len(titles))


def squeezed(text):
    """Text with no whitespace at all, ligatures as letters: a wrapped cell's words compare."""
    import unicodedata

    return "".join(unicodedata.normalize("NFKC", text).split())


def test_pdf_and_html_hold_every_section_and_row_of_the_model(layout_module, tmp_path):
    """One model, two renderers: each section title, each row's every cell line and each
    paragraph of the demo's report model is in the PDF's text (pdftotext) and in the HTML."""
    from analysis.report.html import render_report_html
    from analysis.report.model import Paragraph, Table, build_report

    review = review_of(TEST_DATA / "demo_site.gpkg", TEST_DATA / "demo_reference.gpkg")
    report = build_report(review)
    pdf = tmp_path / "report.pdf"
    layout_module.write_report_pdf(review, pdf)
    pdf_text = squeezed(
        subprocess.run(
            ["pdftotext", "-raw", str(pdf), "-"], check=True, capture_output=True, text=True
        ).stdout
    )
    html = render_report_html(review, report).replace("<wbr>", "")
    import html as html_module
    import re

    html_text = squeezed(html_module.unescape(re.sub(r"<[^>]+>", " ", html)))
    expected = [report.title]
    for section in report.sections:
        expected.append(section.title)
        for block in section.blocks:
            if isinstance(block, Table):
                expected += [block.subtitle, *(block.header or ())]
                expected += [line for row in block.rows for cell in row for line in cell.lines]
            elif isinstance(block, Paragraph):
                expected.append(block.text)
    assert len(expected) > 300
    missing_pdf = [t for t in expected if squeezed(t) not in pdf_text]
    missing_html = [t for t in expected if squeezed(t) not in html_text]
    assert missing_pdf == [] and missing_html == []
    # The map sheet labels what the findings talk about; its legend names each layer drawn.
    sheet = next(p for p in range(1, pdf_pages(pdf) + 1) if page_text(pdf, p).startswith("Site map"))
    shown = squeezed(page_text(pdf, sheet))
    for text in (
        "Forest Road",
        "NY1301-0099",
        "BR-2",
        "SP-1",
        "Phase 1",
        "Phase 3",
        "GO-12",
        "NWI-0001",
        "Public right-of-way",
        "Discharge point",
        "Catchment (reference)",
        "Wetland adjacent area (regulated)",
        "Drainage area",
        "100 ft",
    ):
        assert squeezed(text) in shown, text


def test_pdf_tables_fit_the_page(layout_module, tmp_path):
    """Every table frame lies inside the page's margins (nothing cut at the right edge)."""
    import tempfile

    from qgis.core import QgsLayoutFrame

    review = review_of(TEST_DATA / "demo_site.gpkg", TEST_DATA / "demo_reference.gpkg")
    with tempfile.TemporaryDirectory() as folder:
        layout, project, _maps = layout_module.build_layout(review, folder)
        frames = [i for i in layout.items() if isinstance(i, QgsLayoutFrame)]
        assert frames
        for frame in frames:
            table = frame.multiFrame()
            width = sum(table.columnWidths()) if hasattr(table, "columnWidths") else 0
            columns = len(table.columnWidths())
            drawn = (
                width
                + columns * 2 * table.cellMargin()
                + (columns + 1) * (table.gridStrokeWidth() if table.showGrid() else 0)
            )
            right = frame.pagePositionWithUnits().x() + drawn
            assert right <= layout_module.PAGE_MM[0] - layout_module.MARGIN_MM + 0.01
        project.removeAllMapLayers()


def test_failing_smp_shows_red_where_it_lies(layout_module, tmp_path):
    from analysis.findings import STATUS_COLOURS

    review = review_of(TEST_DATA / "demo_site.gpkg", TEST_DATA / "demo_reference.gpkg")
    pdf = tmp_path / "report.pdf"
    written = layout_module.write_report_pdf(review, pdf)

    assert pdf_pages(pdf) == written.pages
    [sheet] = written.maps
    limit = review.profile.site_map_scale.max_scale_denominator
    assert sheet.scale == pytest.approx(limit, rel=1e-9)
    fail = next(f for f in review.findings if f.rule == "easement_coverage" and f.status == "fail")
    import shapely

    x, y = shapely.get_coordinates(shapely.point_on_surface(fail.geometry))[0]
    xmin, ymin, xmax, ymax = sheet.extent
    left, top, width, height = sheet.rect_mm
    image = page_image(pdf, sheet.page + 1, tmp_path)
    column = (left + (x - xmin) / (xmax - xmin) * width) / 25.4 * DPI
    row = (top + (ymax - y) / (ymax - ymin) * height) / 25.4 * DPI
    red = np.array([int(STATUS_COLOURS["fail"][i : i + 2], 16) for i in (1, 3, 5)])
    pixel = np.array(image.getpixel((round(column), round(row))))
    assert np.abs(pixel - red).max() < 40, (pixel, red)
    # 30 ft west, inside BR-2 where an easement covers it: not the fail colour.
    inside = np.array(image.getpixel((round(column - 30 / (xmax - xmin) * width / 25.4 * DPI), round(row))))
    assert np.abs(inside - red).max() > 60, inside


def test_long_site_gets_a_map_page_per_sheet_never_below_the_scale(layout_module, tmp_path):
    site = write_long_site(TEST_DATA / "demo_site.gpkg", tmp_path / "long.gpkg", 3000.0)
    review = review_of(site)
    pdf = tmp_path / "long.pdf"
    written = layout_module.write_report_pdf(review, pdf)

    limit = review.profile.site_map_scale.max_scale_denominator
    assert len(written.maps) > 1
    assert all(sheet.scale <= limit * (1 + 1e-9) for sheet in written.maps)
    first = written.maps[0].page
    assert [s.page for s in written.maps] == list(range(first, first + len(written.maps)))
    titles = first_lines(pdf)
    count = len(written.maps)
    assert titles[first : first + count] == [
        f"Site map, sheet {i} of {count}: 1 inch = 100 feet (1:1200)" for i in range(1, count + 1)
    ]
    # Together the sheets cover the whole parcel, 3,000 ft long.
    assert min(s.extent[0] for s in written.maps) <= review.site.layer("site_boundary").total_bounds[0]
    assert max(s.extent[2] for s in written.maps) >= review.site.layer("site_boundary").total_bounds[2]


def test_pdf_shows_input_text_as_text(layout_module, data_copy, tmp_path):
    import sqlite3
    from contextlib import closing

    site = data_copy("demo_site.gpkg")
    with closing(sqlite3.connect(site)) as con, con:
        con.execute("UPDATE project SET name = ?, address = ?", (HOSTILE, "[% 1 + 1 %]"))
    pdf = tmp_path / "report.pdf"
    layout_module.write_report_pdf(review_of(site), pdf)
    cover = page_text(pdf, 1)
    assert HOSTILE in cover and "[% 1 + 1 %]" in cover  # not evaluated as an expression


def test_pdf_shows_names_and_the_plan_file_name_as_the_characters_they_are(
    layout_module, data_copy, tmp_path
):
    """Every name from the plan and the reference (SMP, drainage area, project, wetland, water)
    and the plan's file name (the decision page gives its path) is in the PDF's text as typed:
    no layout item or map label evaluates it as an expression or reads it as HTML."""
    import shutil

    site = Path(shutil.copyfile(TEST_DATA / "demo_site.gpkg", tmp_path / PLAN_FILE_NAME))
    reference = data_copy("demo_reference.gpkg")
    for path, names in ((site, NAMES), (reference, REFERENCE_NAMES)):
        for old, new in names.items():
            assert rename_text(path, old, new), old
    pdf = tmp_path / "report.pdf"
    layout_module.write_report_pdf(review_of(site, reference), pdf)
    text = squeezed(
        subprocess.run(
            ["pdftotext", "-raw", str(pdf), "-"], check=True, capture_output=True, text=True
        ).stdout
    )
    for name in (*NAMES.values(), *REFERENCE_NAMES.values(), site.name):
        assert squeezed(name) in text, name
    assert squeezed("<b>x</b>") in squeezed(page_text(pdf, 1))  # the title: a cell, not a label
    # The map labels the drainage area and the wetland: text in the PDF, as typed.
    site_map = first_lines(pdf).index("Site map: 1 inch = 100 feet (1:1200)") + 1
    on_map = squeezed(page_text(pdf, site_map))
    assert squeezed(NAMES["DA-1"]) in on_map and squeezed(REFERENCE_NAMES["GO-12"]) in on_map


def test_review_pdf_under_qgis_process(qgis_process, data_copy, tmp_path):  # noqa: F811
    pdf = tmp_path / "r.pdf"
    completed = qgis_process(
        "run",
        "swppp:review",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        f"REFERENCE={data_copy('demo_reference.gpkg')}",
        f"OUTPUT_PDF={pdf}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    titles = first_lines(pdf)
    assert opening(titles) == ["Decision", "Site map: 1 inch = 100 feet (1:1200)"]
    assert "Phasing" in titles
    assert titles[-1].startswith("Not checked by this tool")  # may run on: "(continued)"


def test_cli_writes_the_pdf_where_qgis_imports(data_copy, tmp_path):
    pdf, html = tmp_path / "r.pdf", tmp_path / "r.html"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONPATH": str(ROOT)}
    env.pop("QGIS_CUSTOM_CONFIG_PATH", None)
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis.cli",
            "review",
            str(data_copy("demo_site.gpkg")),
            "--pdf",
            str(pdf),
            "--report",
            str(html),
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr  # the demo has failing findings
    assert opening(first_lines(pdf)) == ["Decision", "Site map: 1 inch = 100 feet (1:1200)"]
    assert html.is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo_site.gpkg", "r.html", "r.pdf"]


def test_review_pdf_from_a_background_task(qgis_app, data_copy, tmp_path):
    """As the panel runs it: a QgsProcessingAlgRunnerTask, the layout built off the main thread."""
    from qgis.core import (
        QgsApplication,
        QgsProcessingAlgRunnerTask,
        QgsProcessingContext,
        QgsProcessingFeedback,
    )
    from qgis.PyQt.QtCore import QThread

    pdf = tmp_path / "task.pdf"
    algorithm = QgsApplication.processingRegistry().createAlgorithmById("swppp:review")
    threads, done = [], {}

    class Recording(QgsProcessingFeedback):
        def pushInfo(self, info):
            threads.append((info, threading.get_ident()))
            super().pushInfo(info)

    context, feedback = QgsProcessingContext(), Recording()
    task = QgsProcessingAlgRunnerTask(
        algorithm, {"SITE": str(data_copy("demo_site.gpkg")), "OUTPUT_PDF": str(pdf)}, context, feedback
    )
    task.executed.connect(lambda ok, results: done.update(ok=ok, results=results))
    QgsApplication.taskManager().addTask(task)
    for _ in range(6000):  # up to 10 minutes
        qgis_app.processEvents()
        if done:
            break
        QThread.msleep(100)
    assert done.get("ok"), done
    laid_out = [thread for info, thread in threads if info == "laying out the PDF report"]
    assert laid_out and threading.main_thread().ident not in laid_out  # in a worker thread
    titles = first_lines(pdf)
    assert opening(titles) == ["Decision", "Site map: 1 inch = 100 feet (1:1200)"]


def test_the_installed_swppp_command_writes_the_pdf_from_any_folder(data_copy, tmp_path):
    """The README's `.venv/qgis/bin/swppp review ... --pdf` (console script, editable install):
    no PYTHONPATH, run from another folder; the plugin package is found beside `analysis`."""
    command = Path(sys.executable).parent / "swppp"
    if not command.is_file():
        pytest.skip(f"no swppp console script beside {sys.executable} (pip install -e . makes it)")
    pdf = tmp_path / "r.pdf"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    env.pop("PYTHONPATH", None)
    env.pop("QGIS_CUSTOM_CONFIG_PATH", None)
    completed = subprocess.run(
        [str(command), "review", str(data_copy("demo_site.gpkg")), "--pdf", str(pdf), "--quiet"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 1, completed.stderr  # the demo has failing findings
    assert opening(first_lines(pdf)) == ["Decision", "Site map: 1 inch = 100 feet (1:1200)"]


def all_text(path):
    """The whole PDF's text, ligatures (the "fi" of "confirmed") as letters."""
    import unicodedata

    return unicodedata.normalize(
        "NFKC",
        subprocess.run(
            ["pdftotext", "-layout", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout,
    )


def test_pdf_has_records_hydrology_checklist_and_esc_sections(layout_module, tmp_path):
    """On the contents-complete plan (every checklist layer), with records and confirmations:
    the HTML report's four later sections, in its order, with the figures of the review's JSON."""
    records = TEST_DATA / "records"
    full = review_paths_of(records)
    pdf = tmp_path / "full.pdf"
    written = layout_module.write_report_pdf(full, pdf)
    data = full.to_dict()

    titles = first_lines(pdf)
    assert written.pages == pdf_pages(pdf) == len(titles)
    order = [
        "Measurements",
        "Construction-phase records",
        "Hydrology (TR-55)",
        "SWPPP contents checklist",
        "Erosion and sediment control practices",
        "Not checked by this tool",
    ]
    assert [t for t in dict.fromkeys(titles) if t in order] == order
    lines = all_text(pdf).splitlines()
    text = " ".join(" ".join(lines).split())  # wrapped cells: compare word runs
    entry = next(e for e in data["checklist"] if e["item"] == "B(3)")
    assert entry["status"] == "provided" and entry["text"] in text
    # The item and its status on one row of the table (status centred in its cell).
    assert any(line.split()[:3] == ["B(3)", "\u2713", "provided"] for line in lines if line.strip())
    assert any(line.split()[:3] == ["B(5)", "i", "confirmed"] for line in lines if line.strip())
    for p in data["measurements"]["esc_practices"]["practices"]:
        assert p["practice"] in text and p["feature"] in text and p["install_by"] in text
    for r in data["measurements"]["hydrology"]:
        for figure in (
            f"{r['pre']['volume_cf']:,.0f}",
            f"{r['post']['volume_cf']:,.0f}",
            f"{r['post']['peak_cfs']:,.2f}",
            f"{r['pre']['cn']:.1f}",
        ):
            assert figure in text, (r["drainage_area"], r["storm"], figure)
    for w in data["measurements"]["water_quality_volume"]:
        assert f"{w['wqv_cf']:,.0f}" in text
    for storm in data["records"]["measurements"]["storms"]:
        assert storm["due"] in text
    # The reviewer's note, markup and all, as text (not interpreted, not escaped).
    note = next(c for c in json_confirmations() if c["item"] == "B(5)")["note"]
    assert f"Confirmed by {note_reviewer()} on 2027-03-02: {note}" in text

    # Without records, confirmations and the checklist's layers, these sections are left out.
    plain = tmp_path / "plain.pdf"
    fewer = layout_module.write_report_pdf(review_of(TEST_DATA / "demo_site.gpkg"), plain)
    plain_titles = set(first_lines(plain))
    assert "Construction-phase records" not in plain_titles
    assert fewer.pages < written.pages


def json_confirmations():
    import json

    return json.loads((TEST_DATA / "checklist" / "confirmations.json").read_text())["confirmations"]


def note_reviewer():
    return json_confirmations()[0]["reviewer"]


def review_paths_of(records):
    from analysis.review import review_paths

    return review_paths(
        TEST_DATA / "variants" / "contents_complete.gpkg",
        confirmations=TEST_DATA / "checklist" / "confirmations.json",
        records={"log": records / "inspection_log.csv", "rain": records / "rain.csv"},
    )


def test_pdf_hydrology_charts_are_pictures(layout_module, tmp_path):
    """The peak charts are laid out as pictures, two a page, after the hydrology tables."""
    from qgis.core import QgsLayoutItemPicture

    review = review_paths_of(TEST_DATA / "records")
    charts = [n for n in review.charts if n.startswith("hydrology_")]
    assert len(charts) == 3
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        layout, project, _maps = layout_module.build_layout(review, folder)
        pictures = [
            i
            for i in layout.items()
            if isinstance(i, QgsLayoutItemPicture) and i.picturePath().startswith(folder)
        ]
        # The phasing chart and the three hydrology charts.
        assert len(pictures) == 1 + len(charts)
        pages = sorted(p.page() for p in pictures)
        assert pages[1] == pages[2] == pages[3] - 1
        project.removeAllMapLayers()
