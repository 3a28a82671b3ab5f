"""``swppp:phasing`` run through Processing: the same figures as the review, four outputs."""

import pytest
from qgis.core import (
    QgsFeature,
    QgsGeometry,
    QgsProcessingException,
    QgsProject,
    QgsVectorLayer,
)
from qgis.PyQt.QtCore import QDate, QVariant

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ACRE_M2 = 4046.8564224


def run_phasing(parameters):
    import processing

    return processing.run("swppp:phasing", parameters)


def outputs(folder, chart="timeline.svg"):
    return {
        "OUTPUT_PHASES": str(folder / "phases.gpkg"),
        "OUTPUT_TIMELINE": str(folder / "timeline.gpkg"),
        "OUTPUT_WORST": str(folder / "worst.gpkg"),
        "OUTPUT_CHART": str(folder / chart),
    }


def rows(layer, *names):
    return [tuple(f[n] for n in names) for f in layer.getFeatures()]


def test_phasing_on_the_demo_gives_the_reviews_figures(data_copy, tmp_path, load_layer):
    from analysis.profile import load_profile  # the staged plugin's copy
    from analysis.review import review_paths

    site = data_copy("demo_site.gpkg")
    review = review_paths(site, profile=load_profile())
    results = run_phasing({"DISTURBANCE": load_layer(site, "disturbance"), **outputs(tmp_path)})

    m = review.measurements
    # the verdict's figure (ellipsoidal), as the review decides it
    assert results["MAX_CONCURRENT_ACRES"] == pytest.approx(
        m["max_concurrent_disturbed_acres_ellipsoidal"], rel=1e-12
    )
    assert results["MAX_CONCURRENT_AT"] == m["max_concurrent_at"] == "2027-06-01"
    assert results["STATUS"] == "pass"
    phases = load_layer(tmp_path / "phases.gpkg", "phases")
    got = rows(phases, "phase", "acres", "new_acres")
    assert [g[0] for g in got] == [p["phase"] for p in m["phases"]]
    for (_, acres, new), expected in zip(got, m["phases"]):
        assert acres == pytest.approx(expected["acres"]) and new == pytest.approx(expected["new_acres"])
    assert next(f["start_date"] for f in phases.getFeatures()) == QDate(2027, 4, 1)
    timeline = load_layer(tmp_path / "timeline.gpkg", "timeline")
    assert [r[1] for r in rows(timeline, "date", "acres")] == pytest.approx(
        [r["acres"] for r in m["timeline"]]
    )
    assert rows(timeline, "phases")[1] == ("1, 2",)
    worst = load_layer(tmp_path / "worst.gpkg", "worst")
    assert worst.featureCount() == 1 and worst.crs().authid() == "EPSG:2260"
    (feature,) = worst.getFeatures()
    us_foot = 1200 / 3937
    assert feature.geometry().area() * us_foot**2 / ACRE_M2 == pytest.approx(3.10, abs=1e-6)
    assert feature["status"] == "pass" and feature["phases"] == "1, 2"
    svg = (tmp_path / "timeline.svg").read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg


def test_exactly_five_acres_shows_the_verdicts_figure_everywhere(data_copy, tmp_path, load_layer):
    """5.0000000 planar, 5.0009056 on the ellipsoid: the output number, the worst moment's
    feature, the timeline table and the chart all carry 5.0009, as the fail verdict does."""
    site = data_copy("variants/exactly_five_acres.gpkg")
    results = run_phasing({"DISTURBANCE": load_layer(site, "disturbance"), **outputs(tmp_path)})
    assert results["STATUS"] == "fail"
    assert results["MAX_CONCURRENT_ACRES"] == pytest.approx(5.0009056, abs=1e-6)
    (worst,) = load_layer(tmp_path / "worst.gpkg", "worst").getFeatures()
    assert worst["acres"] == results["MAX_CONCURRENT_ACRES"]
    assert worst["area_method"] == "ellipsoidal area on GRS 1980, pyproj Geod"
    timeline = load_layer(tmp_path / "timeline.gpkg", "timeline")
    assert max(r[0] for r in rows(timeline, "acres")) == results["MAX_CONCURRENT_ACRES"]
    svg = (tmp_path / "timeline.svg").read_text(encoding="utf-8")
    assert "<!-- max 5.0009 ac -->" in svg and "<!-- acres (ellipsoidal) -->" in svg


def memory_layer(features, crs="EPSG:4326"):
    """A layer with its own field names and real Date fields, as a user's project may have."""
    layer = QgsVectorLayer(
        f"Polygon?crs={crs}&field=stage:string&field=cleared:date&field=seeded:date",
        "my disturbance",
        "memory",
    )
    for wkt, stage, cleared, seeded in features:
        feature = QgsFeature(layer.fields())
        feature.setGeometry(QgsGeometry.fromWkt(wkt))
        feature.setAttributes([stage, cleared, seeded])
        layer.dataProvider().addFeature(feature)
    QgsProject.instance().addMapLayer(layer, False)
    return layer


# Two lon/lat rectangles near the village, 0.0015 x 0.001 degrees: about 3.4 acres each.
WEST = "POLYGON((-74.1700 41.340, -74.1685 41.340, -74.1685 41.341, -74.1700 41.341, -74.1700 41.340))"
EAST = "POLYGON((-74.1600 41.340, -74.1585 41.340, -74.1585 41.341, -74.1600 41.341, -74.1600 41.340))"
CHOSEN = {"PHASE_FIELD": "stage", "START_FIELD": "cleared", "STABILIZED_FIELD": "seeded"}


@pytest.mark.parametrize("waiver, status", [(False, "fail"), (True, "warn")])
def test_date_fields_chosen_by_the_user_and_the_waiver(tmp_path, waiver, status):
    layer = memory_layer(
        [(WEST, "A", QDate(2027, 4, 1), QDate(2027, 7, 1)), (EAST, "B", QDate(2027, 5, 1), QDate(2027, 8, 1))]
    )
    try:
        results = run_phasing(
            {"DISTURBANCE": layer, **CHOSEN, "WAIVER": waiver, **outputs(tmp_path, chart="timeline.png")}
        )
    finally:
        QgsProject.instance().removeMapLayer(layer.id())
    assert results["MAX_CONCURRENT_AT"] == "2027-05-01"
    assert 6.0 < results["MAX_CONCURRENT_ACRES"] < 7.5
    assert results["STATUS"] == status
    assert (tmp_path / "timeline.png").read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("chart", ["timeline.png", "timeline.svg"])
def test_phase_names_like_mathtext_are_drawn_as_typed(tmp_path, chart):
    """A phase named '$\\foo{$' is user text: the chart draws it as typed (mathtext would
    raise while the legend is laid out), as the review's charts do (charts.plain_text)."""
    layer = memory_layer(
        [
            (WEST, "$\\foo{$", QDate(2027, 4, 1), QDate(2027, 7, 1)),
            (EAST, "$\\frac{$ B", QDate(2027, 5, 1), QDate(2027, 8, 1)),
        ]
    )
    try:
        results = run_phasing({"DISTURBANCE": layer, **CHOSEN, **outputs(tmp_path, chart=chart)})
    finally:
        QgsProject.instance().removeMapLayer(layer.id())
    assert results["STATUS"] == "fail" and (tmp_path / chart).stat().st_size > 1000
    with open(results["CHART_HTML"], encoding="utf-8") as handle:
        assert "data:image/svg+xml;base64," in handle.read()


def test_every_chart_the_plugin_draws_itself_is_drawn_as_plain_text():
    """A chart producer called by the plugin (not through a review's LazyCharts) is called
    inside ``charts.plain_text()``: a layout step before ``figure_chart`` (the hydrology
    charts' ``tight_layout``) would otherwise parse a user's '$...$' as mathtext."""
    import ast
    from pathlib import Path

    plugin = Path(__file__).resolve().parents[2] / "qgis_plugin"
    calls, bare = [], []
    for path in sorted(plugin.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        guarded = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.With) and any(
                isinstance(item.context_expr, ast.Call)
                and getattr(item.context_expr.func, "id", "") == "plain_text"
                for item in node.items
            ):
                guarded.update(id(inner) for inner in ast.walk(node))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                name = getattr(node.func, "id", getattr(node.func, "attr", ""))
                if name.endswith(("_chart", "_charts")):
                    calls.append(f"{path.name}:{node.lineno} {name}")
                    if id(node) not in guarded:
                        bare.append(calls[-1])
    assert calls and not bare, bare


def test_a_missing_date_needs_review(tmp_path):
    layer = memory_layer(
        [(WEST, "A", QDate(2027, 4, 1), QDate(2027, 7, 1)), (EAST, "B", QVariant(), QDate(2027, 8, 1))]
    )
    try:
        results = run_phasing({"DISTURBANCE": layer, **CHOSEN, **outputs(tmp_path)})
    finally:
        QgsProject.instance().removeMapLayer(layer.id())
    assert results["STATUS"] == "needs_review"
    assert 3.0 < results["MAX_CONCURRENT_ACRES"] < 3.8  # the dated polygon alone


def test_a_layer_without_a_crs_is_refused_with_the_analysiss_message(tmp_path):
    layer = memory_layer([(WEST, "A", QDate(2027, 4, 1), QDate(2027, 7, 1))], crs="")
    try:
        with pytest.raises(QgsProcessingException, match="no coordinate reference system"):
            run_phasing({"DISTURBANCE": layer, **CHOSEN, **outputs(tmp_path)})
    finally:
        QgsProject.instance().removeMapLayer(layer.id())


def test_phasing_from_a_dxf_with_a_schedule_proposes_and_outputs_are_optional(tmp_path, load_layer):
    # Phase boundaries as closed polylines on C-PHAS-n CAD layers (written by GDAL's DXF
    # driver), the dates in a schedule CSV: 6.2 acres at once, and a proposal that fixes it.
    import geopandas as gpd
    from shapely import box

    side = (3.1 * ACRE_M2) ** 0.5 * 3937 / 1200  # US survey feet
    x0, y0 = 582_737.0, 913_239.0
    frame = gpd.GeoDataFrame(
        {"Layer": ["C-PHAS-1", "C-PHAS-2", "C-ANNO"]},
        geometry=[
            box(x0, y0, x0 + side, y0 + side).exterior,
            box(x0 + 2000, y0, x0 + 2000 + side, y0 + side).exterior,
            box(x0, y0, x0 + 10, y0 + 10).exterior,
        ],
    )
    frame.to_file(tmp_path / "plan.dxf", driver="DXF")
    (tmp_path / "schedule.csv").write_text(
        "phase,start,stabilized\n1,2027-04-01,2027-07-01\n2,2027-05-01,2027-08-01\n", encoding="utf-8"
    )
    layer = QgsVectorLayer(
        f"{tmp_path / 'plan.dxf'}|layername=entities|geometrytype=LineString", "plan", "ogr"
    )
    layer.setCrs(QgsProject.instance().crs().fromEpsgId(2260))
    assert layer.isValid()
    results = run_phasing(
        {
            "DISTURBANCE": layer,
            "PHASE_FIELD": "Layer",
            "PHASE_PATTERN": r"C-PHAS-(\d+)",
            "SCHEDULE": str(tmp_path / "schedule.csv"),
            "OUTPUT_PROPOSAL": str(tmp_path / "proposal.gpkg"),
        }
    )
    assert results["MAX_CONCURRENT_ACRES"] == pytest.approx(6.2 * 1.00018, rel=2e-5)  # ellipsoid
    assert results["STATUS"] == "fail" and results["PROPOSAL"] == "proposed"
    assert "OUTPUT_PHASES" not in results and "OUTPUT_TIMELINE" not in results
    assert results["CHART_HTML"].endswith(".html")
    proposal = load_layer(tmp_path / "proposal.gpkg", "proposal")
    assert rows(proposal, "phase", "shift_days", "proposed_start") == [
        ("1", 0, QDate(2027, 4, 1)),
        ("2", 61, QDate(2027, 7, 1)),
    ]


def test_csv_outputs_write_iso_dates(data_copy, tmp_path, load_layer):
    # GDAL's CSV writer spells a date field 2027/04/01: CSV outputs carry ISO text instead.
    site = data_copy("demo_site.gpkg")
    run_phasing(
        {
            "DISTURBANCE": load_layer(site, "disturbance"),
            "OUTPUT_PHASES": str(tmp_path / "phases.csv"),
            "OUTPUT_PROPOSAL": str(tmp_path / "proposal.csv"),
        }
    )
    text = (tmp_path / "phases.csv").read_text(encoding="utf-8")
    assert "2027-04-01" in text and "2027/04/01" not in text
    assert "2027-04-01" in (tmp_path / "proposal.csv").read_text(encoding="utf-8")


def test_csv_outputs_guard_phase_names_a_spreadsheet_would_run(tmp_path):
    """Phase names from the user's layer, in the outputs saved as CSV (GDAL writes them): a
    name beginning as a formula gets a leading ' (every CSV the project writes: csv_cells);
    a name that is a plain negative number stays as typed. The proposal CSV read back as a
    schedule names the layer's phases."""
    import csv

    from analysis.siteplan.schedule import read_schedule  # the staged plugin's copy

    link = '=HYPERLINK("http://x","click")'
    layer = memory_layer(
        [
            (WEST, link, QDate(2027, 4, 1), QDate(2027, 7, 1)),
            (EAST, "-2", QDate(2027, 5, 1), QDate(2027, 8, 1)),
        ]
    )
    files = {name: tmp_path / f"{name}.csv" for name in ("phases", "timeline", "worst", "proposal")}
    try:
        run_phasing(
            {
                "DISTURBANCE": layer,
                **CHOSEN,
                **{f"OUTPUT_{name.upper()}": str(path) for name, path in files.items()},
            }
        )
    finally:
        QgsProject.instance().removeMapLayer(layer.id())

    def column(name, field):
        with open(files[name], newline="", encoding="utf-8") as handle:
            return [row[field] for row in csv.DictReader(handle)]

    assert column("phases", "phase") == column("proposal", "phase") == ["'" + link, "-2"]
    assert column("worst", "phases") == ["'" + f"{link}, -2"]
    assert all(not cell.startswith("=") for cell in column("timeline", "phases"))
    assert list(read_schedule(files["proposal"])) == [link, "-2"]
