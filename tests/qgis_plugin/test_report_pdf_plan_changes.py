"""The PDF's site map draws the plan's changes since the round compared with (issue 35, item 4):
an SMP's move as an arrow from its old place, an easement's change outlined, each in the
legend and labelled with its id; real QGIS, the PDF rendered back to pixels."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from tests.conftest import TEST_DATA
from tests.qgis_plugin.test_report_pdf import DPI, page_image, page_text, pdf_pages

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


@pytest.fixture(scope="module")
def layout_module(staged_plugin):
    return importlib.import_module("swppp_review.report_layout")


def test_the_pdf_map_draws_the_plan_changes_since_the_round_compared(layout_module, tmp_path):
    import shapely

    from analysis.report.site_map import PLAN_CHANGE_COLOURS  # the staged plugin's copies
    from analysis.review import review_paths
    from analysis.rounds.checksums import plan_files
    from analysis.rounds.record import record_round

    reference = TEST_DATA / "demo_reference.gpkg"
    file = tmp_path / "project.gpkg"
    first, second = TEST_DATA / "demo_site.gpkg", TEST_DATA / "demo_site_round2.gpkg"
    record_round(file, review_paths(first, reference=reference), plan_files(first))
    review = review_paths(second, reference=reference)
    record_round(file, review, plan_files(second), compare_to=1)
    moved = next(c for c in review.rounds["plan_changes"] if c.kind == "smp_moved")
    pdf = tmp_path / "report.pdf"
    written = layout_module.write_report_pdf(review, pdf)
    assert pdf_pages(pdf) == written.pages
    [sheet] = written.maps
    text = page_text(pdf, sheet.page + 1)
    for said in ("Change: SMP moved", "Change: SMP's old place", "Change: easement area"):
        assert said in text, said
    assert "Change: disturbance added" not in text  # none: not in the legend
    assert "C1" in text and "C2" in text  # each change's id on the map
    # The arrow, orange, halfway from BR-1's old place to its new.
    (x0, y0), (x1, y1) = shapely.get_coordinates(
        shapely.centroid(np.asarray([moved.before, moved.after], dtype=object))
    )
    x, y = (x0 + x1) / 2, (y0 + y1) / 2
    xmin, ymin, xmax, ymax = sheet.extent
    left, top, width, height = sheet.rect_mm
    image = page_image(pdf, sheet.page + 1, tmp_path)
    column = (left + (x - xmin) / (xmax - xmin) * width) / 25.4 * DPI
    row = (top + (ymax - y) / (ymax - ymin) * height) / 25.4 * DPI
    orange = np.array([int(PLAN_CHANGE_COLOURS["moved"][i : i + 2], 16) for i in (1, 3, 5)])
    pixel = np.array(image.getpixel((round(column), round(row))))
    assert np.abs(pixel - orange).max() < 50, (pixel, orange)
