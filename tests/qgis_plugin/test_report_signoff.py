"""The PDF report's first page as a reviewer signs it: the decision and the reviewer's sign-off
on one page when they fit; a long must-change list breaks cleanly (the sign-off whole on a
later page, no item over another or off its page, every table row in a frame), as laid out by
QGIS and as exported."""

import shutil
import unicodedata

import pytest

from tests.conftest import TEST_DATA
from tests.qgis_plugin.test_report_pdf import layout_module, pdf_pages  # noqa: F401
from tests.qgis_plugin.test_report_pdf import page_text as layout_text

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

SIGN_OFF = ("Reviewer (name and title)", "Decision", "Date", "Signature")


def page_text(path, page):
    """The text of ``page`` (1-based), ligatures (the "fi" of "Confirmed") as letters."""
    return unicodedata.normalize("NFKC", layout_text(path, page))


def write_many_failures(source, target, count=30):
    """``source`` (the demo) with ``count`` more bioretention SMPs, none in an easement: each a
    failing finding that must change before approval. Plain geopandas (either stack)."""
    import geopandas as gpd
    from shapely import box

    shutil.copyfile(source, target)
    smp = gpd.read_file(source, layer="smp")
    rows = smp.to_dict("records")
    for i in range(count):
        x, y = 582760 + (i % 10) * 60, 913700 - (i // 10) * 40  # inside the parcel
        rows.append(
            {"smp_id": f"BR-{10 + i}", "practice": "bioretention", "geometry": box(x, y, x + 30, y + 20)}
        )
    gpd.GeoDataFrame(rows, crs=smp.crs).to_file(target, layer="smp", driver="GPKG")
    return target


def exported(layout_module, review, pdf):  # noqa: F811 - the fixture's module
    """``review``'s layout, exported to ``pdf``, for its items as they were written; with the
    project that owns its layers (remove them when done)."""
    folder = pdf.parent / "layout"
    folder.mkdir()
    layout, project, _maps = layout_module.build_layout(review, str(folder))
    layout_module.export_pdf(layout, pdf)
    return layout, project


def page_items(layout):
    """Each page's items (not the page itself): page -> [(item, (x0, y0, x1, y1) in mm)]."""
    from qgis.core import QgsLayoutItemPage

    pages = {}
    for item in layout.items():
        if not hasattr(item, "page") or isinstance(item, QgsLayoutItemPage):
            continue
        position, size = item.pagePositionWithUnits(), item.sizeWithUnits()
        pages.setdefault(item.page(), []).append(
            (item, (position.x(), position.y(), position.x() + size.width(), position.y() + size.height()))
        )
    return pages


def name(item):
    from qgis.core import QgsLayoutFrame, QgsLayoutItemLabel

    if isinstance(item, QgsLayoutItemLabel):
        return f"label {item.text()!r}"
    if isinstance(item, QgsLayoutFrame):
        cells = item.multiFrame().tableContents()
        return f"table frame ({cells[0][0].content()!r}...)" if cells else "table frame"
    return type(item).__name__


def assert_clean_pages(layout_module, layout):  # noqa: F811
    """No two items of a page overlap, each lies inside its page, every row of every table is
    shown in one of its frames."""
    from qgis.core import QgsLayoutUtils

    width, height = layout_module.PAGE_MM
    problems = []
    for page, items in sorted(page_items(layout).items()):
        for index, (item, (x0, y0, x1, y1)) in enumerate(items):
            if x0 < 0 or y0 < 0 or x1 > width + 0.01 or y1 > height + 0.01:
                problems.append((page + 1, name(item), "off the page", (x0, y0, x1, y1)))
            for other, (u0, v0, u1, v1) in items[index + 1 :]:
                if min(x1, u1) - max(x0, u0) > 0.01 and min(y1, v1) - max(y0, v0) > 0.01:
                    problems.append((page + 1, name(item), "over", name(other)))
    context = QgsLayoutUtils.createRenderContextForLayout(layout, None)
    for table in layout.multiFrames():
        shown = 0
        for frame in table.frames():
            shown += table.rowsVisible(
                context, frame.extent().height(), shown, table.includeTableHeader(), False
            )
        if shown != len(table.tableContents()):
            problems.append(
                ("table", name(table.frames()[0]), "rows shown", shown, len(table.tableContents()))
            )
    assert problems == []


def sign_off_frames(layout):
    """The frames of the reviewer's block (the table whose first cell is its first label)."""
    [table] = [
        t
        for t in layout.multiFrames()
        if t.tableContents() and t.tableContents()[0][0].content() == SIGN_OFF[0]
    ]
    return table.frames()


def test_the_demo_pdf_signs_off_on_its_first_page(layout_module, tmp_path):  # noqa: F811
    """The issuing authority, the outcome and the reviewer's sign-off on page 1, the page a
    reviewer signs, what must change below them; nothing on it over anything else."""
    from analysis.review import review_paths  # the staged plugin's copy

    review = review_paths(TEST_DATA / "demo_site.gpkg", reference=TEST_DATA / "demo_reference.gpkg")
    pdf = tmp_path / "report.pdf"
    layout, project = exported(layout_module, review, pdf)
    try:
        [frame] = sign_off_frames(layout)
        assert frame.page() == 0
        assert_clean_pages(layout_module, layout)
    finally:
        project.removeAllMapLayers()
    first = page_text(pdf, 1)
    assert first.lstrip().startswith("Decision")
    order = [
        "Issuing authority",
        "Changes required",
        "Reviewer (name and title)",
        "Signature",
        "Must change before approval",
        "Page 1 of",
    ]
    assert all(text in first for text in order)
    assert [first.find(text) for text in order] == sorted(first.find(text) for text in order)
    for other in range(2, pdf_pages(pdf) + 1):
        assert "Reviewer (name and title)" not in page_text(pdf, other)


def test_a_long_must_change_list_runs_on_after_the_sign_off_on_page_1(
    layout_module,  # noqa: F811
    tmp_path,
):
    """32 findings that must change run the table over the pages after page 1, headed as the
    decision continued; the sign-off stays whole on page 1, above them; on every page no item
    covers another or leaves the page, every row shown."""
    from analysis.review import review_paths

    site = write_many_failures(TEST_DATA / "demo_site.gpkg", tmp_path / "many.gpkg")
    review = review_paths(site)
    pdf = tmp_path / "report.pdf"
    layout, project = exported(layout_module, review, pdf)
    try:
        [frame] = sign_off_frames(layout)  # one frame: never cut in two
        assert frame.page() == 0
        assert_clean_pages(layout_module, layout)
        pages = layout.pageCollection().pageCount()
    finally:
        project.removeAllMapLayers()
    assert pdf_pages(pdf) == pages
    first = page_text(pdf, 1)
    assert all(label in first for label in SIGN_OFF)
    assert first.find("Signature") < first.find("Must change before approval")
    # The must-change table's last row is on a later page, the decision continued.
    later = next(p for p in range(2, pages + 1) if "SWPPP B, D, E" in page_text(pdf, p))
    assert page_text(pdf, later).lstrip().startswith("Decision (continued)")
    for other in range(2, pages + 1):
        assert "Reviewer (name and title)" not in page_text(pdf, other)
