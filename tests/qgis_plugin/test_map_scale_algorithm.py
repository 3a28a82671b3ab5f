"""Site map scale in QGIS: print layouts read into records, ``swppp:map_scale``, and the review."""

import json

import pytest
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsLayoutItemMap,
    QgsLayoutPoint,
    QgsLayoutSize,
    QgsPrintLayout,
    QgsProcessingException,
    QgsProject,
    QgsRectangle,
    QgsUnitTypes,
)

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

X0, Y0 = 582_737.0, 913_239.0  # the demo parcel, EPSG:2260
SITE_PLAN_SCALE, LOCATION_SCALE = 600.0, 2400.0


def add_map(layout, item_id, scale, width_mm=150, height_mm=100):
    item = QgsLayoutItemMap(layout)
    item.setId(item_id)
    item.attemptMove(QgsLayoutPoint(10, 10, QgsUnitTypes.LayoutUnit.LayoutMillimeters))
    item.attemptResize(QgsLayoutSize(width_mm, height_mm, QgsUnitTypes.LayoutUnit.LayoutMillimeters))
    item.setCrs(QgsCoordinateReferenceSystem("EPSG:2260"))
    item.setExtent(QgsRectangle(X0, Y0, X0 + 700, Y0 + 600))
    layout.addLayoutItem(item)
    item.setScale(scale)
    return item


@pytest.fixture
def project_layouts():
    """The current project with a layout of two maps at different scales and one with none."""
    project = QgsProject.instance()
    manager = project.layoutManager()
    sheets = QgsPrintLayout(project)
    sheets.initializeDefaults()
    sheets.setName("C-101 Site plan")
    add_map(sheets, "Site map", SITE_PLAN_SCALE)
    add_map(sheets, "Location map", LOCATION_SCALE, 60, 40)
    cover = QgsPrintLayout(project)
    cover.initializeDefaults()
    cover.setName("Cover sheet")
    assert manager.addLayout(sheets) and manager.addLayout(cover)
    yield project
    for layout in list(manager.printLayouts()):
        manager.removeLayout(layout)


def run(name, parameters):
    import processing

    return processing.run(f"swppp:{name}", parameters)


def scale_findings(path):
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        f["features"][0] if f["features"] else "-": f
        for f in data["findings"]
        if f["rule"] == "site_map_scale"
    }


def test_layouts_become_plain_records(project_layouts, staged_plugin):
    from swppp_review.layouts import project_layout_maps

    records = project_layout_maps(project_layouts)
    assert [(r.layout, r.item_id) for r in records] == [
        ("C-101 Site plan", "Location map"),
        ("C-101 Site plan", "Site map"),
        ("Cover sheet", None),
    ]
    assert records[0].scale == pytest.approx(LOCATION_SCALE, rel=1e-9)
    assert records[1].scale == pytest.approx(SITE_PLAN_SCALE, rel=1e-9)
    assert records[1].footprint_wkt.startswith("Polygon") and "2260" in records[1].crs_wkt
    assert project_layout_maps(project_layouts, names=["Cover sheet"])[0].item_id is None
    assert project_layout_maps(None) == []  # qgis_process without a project


def test_map_scale_algorithm_checks_layouts_and_sheets(project_layouts, data_copy, tmp_path):
    out = tmp_path / "scale.json"
    results = run(
        "map_scale", {"SHEETS": [str(data_copy("sheets/sheet_2260_100ft.tif"))], "OUTPUT_JSON": str(out)}
    )
    found = scale_findings(out)
    assert {k: (f["status"], f["value"]) for k, f in found.items()} == {
        "layout:C-101 Site plan/Site map": ("pass", pytest.approx(SITE_PLAN_SCALE, rel=1e-9)),
        # a location map (SWPPP B(2)): its scale said, not held to the site map's (issue 18)
        "layout:C-101 Site plan/Location map": ("info", pytest.approx(LOCATION_SCALE, rel=1e-9)),
        "layout:Cover sheet": ("needs_review", None),
        "sheet:sheet_2260_100ft.tif": ("pass", pytest.approx(1200 / 3937 / 0.3048 * 1200)),
    }
    assert results["EXIT_STATUS"] == 0
    assert (results["PASS_COUNT"], results["FAIL_COUNT"], results["NEEDS_REVIEW_COUNT"]) == (2, 0, 1)


def test_map_scale_reads_chosen_layouts_and_stated_scales(project_layouts, data_copy, tmp_path):
    out = tmp_path / "scale.json"
    run(
        "map_scale",
        {"LAYOUTS": "Cover sheet", "SITE": str(data_copy("demo_site.gpkg")), "OUTPUT_JSON": str(out)},
    )
    assert {k: f["status"] for k, f in scale_findings(out).items()} == {
        "layout:Cover sheet": "needs_review",
        "layout_scale:C-101 Site plan": "pass",
        "layout_scale:C-102 Grading": "pass",
        "layout_scale:C-001 Location map": "info",
    }


def test_map_scale_stated_scales_from_a_project_table(data_copy, tmp_path, load_layer):
    out = tmp_path / "scale.json"
    table = load_layer(data_copy("demo_site.gpkg"), "layout_scale")
    results = run("map_scale", {"LAYOUT_SCALE_LAYER": table, "OUTPUT_JSON": str(out)})
    found = scale_findings(out)
    assert found["layout_scale:C-001 Location map"]["value"] == 2400
    # the project has no layouts: said once, beside the stated scales
    assert found["-"]["status"] == "info" and "no print layouts" in found["-"]["message"]
    assert results["FAIL_COUNT"] == 0  # C-001 is a location map (issue 18)


def test_unknown_layout_name_is_refused_naming_the_layouts(project_layouts):
    with pytest.raises(QgsProcessingException, match="Nowhere.*'C-101 Site plan'"):
        run("map_scale", {"LAYOUTS": "Nowhere"})


def test_nothing_to_check_is_needs_review(tmp_path):
    out = tmp_path / "scale.json"
    results = run("map_scale", {"OUTPUT_JSON": str(out)})
    assert results["NEEDS_REVIEW_COUNT"] == 1 and results["EXIT_STATUS"] == 0
    assert "no plan sheet" in scale_findings(out)["-"]["message"]


def test_review_checks_every_layout_of_the_project(project_layouts, data_copy, tmp_path):
    out = tmp_path / "review.json"
    run(
        "review",
        {
            "SITE": str(data_copy("demo_site.gpkg")),
            "OUTPUT_JSON": str(out),
            "SHEETS": [str(data_copy("sheets/sheet_utm18n_200ft.tif"))],
        },
    )
    found = scale_findings(out)
    assert {
        "layout:C-101 Site plan/Site map",
        "layout:C-101 Site plan/Location map",
        "layout:Cover sheet",
        "sheet:sheet_utm18n_200ft.tif",
        "layout_scale:C-102 Grading",
    } <= set(found)
    assert found["sheet:sheet_utm18n_200ft.tif"]["status"] == "warn"  # B(2) "should"
    data = json.loads(out.read_text(encoding="utf-8"))
    assert "not implemented" not in json.dumps([f for f in data["findings"] if f["rule"] == "site_map_scale"])


def test_a_stated_scales_table_without_its_fields_is_refused(data_copy, load_layer):
    project_table = load_layer(data_copy("demo_site.gpkg"), "project")
    with pytest.raises(QgsProcessingException, match="lacks the field.*sheet, scale_denominator"):
        run("map_scale", {"LAYOUT_SCALE_LAYER": project_table})
