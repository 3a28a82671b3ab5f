"""``swppp:review`` run through Processing, as a reviewer's QGIS runs it."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from qgis.core import QgsProcessingException, QgsProcessingFeedback, QgsVectorLayer

# Every test here runs against the staged plugin's registered provider.
pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = (
    "project",
    "site_boundary",
    "disturbance",
    "smp",
    "easement",
    "discharge_point",
    "public_row",
    "layout_scale",
    "drainage_area",
    "soils",
    "land_cover_pre",
    "land_cover_post",
    "hydrology_claims",
)
CONTRACT_KEYS = {"tool", "profile", "site", "measurements", "conditions", "findings"}


def run_review(parameters, feedback=None):
    import processing

    return processing.run("swppp:review", parameters, feedback=feedback)


def output_paths(folder):
    return {
        "OUTPUT_JSON": str(folder / "result.json"),
        "OUTPUT_HTML": str(folder / "report.html"),
        "OUTPUT_PDF": str(folder / "report.pdf"),
        "OUTPUT_FINDINGS": str(folder / "findings.gpkg"),
    }


def role_layers(site, load_layer):
    """The site plan's layers, loaded in QGIS, as the *_LAYER parameters."""
    return {f"{role.upper()}_LAYER": load_layer(site, role) for role in ROLES}


@pytest.fixture
def demo(data_copy):
    return {"SITE": str(data_copy("demo_site.gpkg")), "REFERENCE": str(data_copy("demo_reference.gpkg"))}


def test_review_writes_every_output(demo, tmp_path, contract_problems, load_layer):
    from analysis.findings import STATUS_COLOURS, STATUSES  # the staged plugin's copy

    out = tmp_path / "out"
    outputs = output_paths(out)
    feedback, progress = QgsProcessingFeedback(), []
    feedback.progressChanged.connect(progress.append)
    results = run_review({**demo, **outputs}, feedback=feedback)

    # The bar only goes forward: the review's checks in its part, then the outputs (the PDF).
    assert progress == sorted(progress) and 90 <= progress[-1] <= 100
    for name, path in outputs.items():
        assert results[name] == path
    data = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert set(data) >= CONTRACT_KEYS
    assert contract_problems(out / "result.json") == []
    assert "<html" in (out / "report.html").read_text(encoding="utf-8").lower()
    pdf = (out / "report.pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and pdf.rstrip().endswith(b"%%EOF")
    assert sorted(p.name for p in out.iterdir()) == sorted(Path(p).name for p in outputs.values())
    findings = load_layer(out / "findings.gpkg", "findings")
    assert findings.featureCount() == len(data["findings"])
    # It opens styled from the GeoPackage's own layer_styles: a category per status.
    renderer = findings.renderer()
    assert renderer.type() == "categorizedSymbol" and renderer.classAttribute() == "status"
    colours = {c.value(): c.symbol().color().name() for c in renderer.categories()}
    assert set(colours) == set(STATUSES) and colours["fail"] == STATUS_COLOURS["fail"]
    assert results["DISTURBED_ACRES"] == data["measurements"]["disturbed_acres"]
    statuses = [f["status"] for f in data["findings"]]
    for status in ("pass", "fail", "warn", "info", "needs_review", "not_applicable"):
        assert results[f"{status.upper()}_COUNT"] == statuses.count(status)
    assert results["EXIT_STATUS"] == (1 if "fail" in statuses else 0)


def test_findings_geopackage_holds_the_site_layers_styled(demo, tmp_path, load_layer):
    """One GeoPackage, one styled group: findings, disturbance by phase, SMPs, easements."""
    from analysis.report.layer_style import RECORDED_COLOURS, SMP_COLOUR, phase_colours

    gpkg = tmp_path / "findings.gpkg"
    run_review({**demo, "OUTPUT_FINDINGS": str(gpkg), "OUTPUT_JSON": str(tmp_path / "r.json")})
    data = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    layers = {name: load_layer(gpkg, name) for name in ("findings", "disturbance", "smp", "easement")}
    for name, layer in layers.items():  # the area CRS, as the review measured
        assert layer.crs().authid() == "EPSG:2260", name
    assert layers["findings"].renderer().type() == "categorizedSymbol"

    disturbance = layers["disturbance"]
    assert disturbance.featureCount() == 5
    renderer = disturbance.renderer()
    assert renderer.type() == "categorizedSymbol" and renderer.classAttribute() == "phase"
    plan_phases = [p["phase"] for p in data["measurements"]["phases"]]
    colours = {c.value(): c.symbol().color().name() for c in renderer.categories()}
    assert colours == {**phase_colours(plan_phases), "": "#bdbdbd"}
    assert len(set(colours.values())) == len(colours)  # a distinct colour per phase
    # Each polygon is drawn in its own phase's colour (the renderer really matches the field).
    from qgis.core import QgsRenderContext

    context = QgsRenderContext()
    renderer.startRender(context, disturbance.fields())
    try:
        drawn = {
            f["phase"]: renderer.symbolForFeature(f, context).color().name()
            for f in disturbance.getFeatures()
        }
    finally:
        renderer.stopRender(context)
    assert drawn == phase_colours(plan_phases)

    smp = layers["smp"]
    assert smp.renderer().type() == "singleSymbol"
    assert smp.renderer().symbol().color().name() == SMP_COLOUR
    assert smp.labelsEnabled() and smp.labeling().settings().fieldName == "smp_id"
    assert sorted(f["smp_id"] for f in smp.getFeatures()) == ["BR-1", "BR-2", "SP-1"]

    easement = layers["easement"]
    renderer = easement.renderer()
    assert renderer.type() == "categorizedSymbol" and renderer.classAttribute() == "recorded"
    assert {c.value(): c.label() for c in renderer.categories()} == {"1": "recorded", "0": "not recorded"}
    recorded = {f["easement_id"]: f["recorded"] for f in easement.getFeatures()}
    assert recorded == {"E-1": 1, "E-2": 0, "E-3": 1}
    context = QgsRenderContext()
    renderer.startRender(context, easement.fields())
    try:
        outline = {
            f["easement_id"]: renderer.symbolForFeature(f, context).symbolLayer(0).strokeColor().name()
            for f in easement.getFeatures()
        }
    finally:
        renderer.stopRender(context)
    assert outline == {"E-1": RECORDED_COLOURS[1], "E-2": RECORDED_COLOURS[0], "E-3": RECORDED_COLOURS[1]}
    # The uncovered part of BR-2 is a finding's geometry, not a layer of its own.
    uncovered = [
        f
        for f in layers["findings"].getFeatures()
        if f["rule"] == "easement_coverage" and f["status"] == "fail"
    ]
    assert len(uncovered) == 1 and not uncovered[0].geometry().isEmpty()


def test_point_smps_are_styled_as_points(data_copy, tmp_path, load_layer):
    from qgis.core import QgsWkbTypes

    gpkg = tmp_path / "findings.gpkg"
    run_review({"SITE": str(data_copy("variants/smp_points.gpkg")), "OUTPUT_FINDINGS": str(gpkg)})
    smp = load_layer(gpkg, "smp")
    assert smp.geometryType() == QgsWkbTypes.GeometryType.PointGeometry
    assert smp.renderer().symbol().type() == smp.renderer().symbol().Marker
    assert smp.featureCount() > 0
    # Point findings (a point SMP's easement warnings) on their own layer, markers by status.
    points = load_layer(gpkg, "findings_points")
    assert points.geometryType() == QgsWkbTypes.GeometryType.PointGeometry and points.featureCount() > 0
    renderer = points.renderer()
    assert renderer.type() == "categorizedSymbol" and renderer.classAttribute() == "status"
    assert {c.symbol().type() for c in renderer.categories()} == {renderer.categories()[0].symbol().Marker}
    findings = load_layer(gpkg, "findings")
    assert findings.geometryType() == QgsWkbTypes.GeometryType.PolygonGeometry


def test_result_matches_the_command_line(demo, tmp_path, staged_plugin):
    run_review({**demo, "OUTPUT_JSON": str(tmp_path / "plugin.json")})
    cli = subprocess.run(
        [
            sys.executable,
            "-m",
            "analysis.cli",
            "review",
            demo["SITE"],
            "--reference",
            demo["REFERENCE"],
            "--json",
            str(tmp_path / "cli.json"),
            "--quiet",
        ],
        cwd=str(staged_plugin.PLUGIN_DIR),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert cli.returncode in (0, 1), cli.stderr
    plugin = json.loads((tmp_path / "plugin.json").read_text(encoding="utf-8"))
    command_line = json.loads((tmp_path / "cli.json").read_text(encoding="utf-8"))
    assert plugin["measurements"]["disturbed_acres"] == pytest.approx(
        command_line["measurements"]["disturbed_acres"], rel=1e-12
    )
    # QGIS also looks at the project's print layouts; this project has none, which it says once.
    no_layouts = [
        f
        for f in plugin["findings"]
        if f["rule"] == "site_map_scale" and f["status"] == "info" and "no print layouts" in f["message"]
    ]
    assert len(no_layouts) == 1
    plugin["findings"].remove(no_layouts[0])
    assert plugin == command_line


@pytest.mark.parametrize(
    "site_file", ["demo_site.gpkg", "variants/crs_4326.gpkg", "variants/crs_utm18n.gpkg"]
)
def test_layers_give_the_same_review_as_the_geopackage(site_file, data_copy, tmp_path, load_layer):
    site = data_copy(site_file)
    from_file = run_review({"SITE": str(site), "OUTPUT_JSON": str(tmp_path / "file.json")})
    from_layers = run_review({**role_layers(site, load_layer), "OUTPUT_JSON": str(tmp_path / "layers.json")})

    assert from_layers["DISTURBED_ACRES"] == pytest.approx(from_file["DISTURBED_ACRES"], abs=1e-9)
    by_file = json.loads((tmp_path / "file.json").read_text(encoding="utf-8"))
    by_layers = json.loads((tmp_path / "layers.json").read_text(encoding="utf-8"))
    assert [(f["rule"], f["status"]) for f in by_layers["findings"]] == [
        (f["rule"], f["status"]) for f in by_file["findings"]
    ]


def renamed_copy(layer, renames):
    """A memory copy of ``layer`` in the project, its fields renamed (``{old: new}``), as a CAD
    import or a county layer names them."""
    from qgis.core import QgsFeatureRequest, QgsProject

    copy = layer.materialize(QgsFeatureRequest())
    copy.setName(f"{layer.name()} (renamed)")
    fields = copy.fields()
    assert copy.dataProvider().renameAttributes({fields.indexOf(o): n for o, n in renames.items()})
    copy.updateFields()
    QgsProject.instance().addMapLayer(copy, False)
    return copy


def test_field_map_reads_renamed_fields_as_the_contract_names(data_copy, tmp_path, load_layer):
    from qgis.core import QgsProject

    site = data_copy("demo_site.gpkg")
    from_file = run_review({"SITE": str(site), "OUTPUT_JSON": str(tmp_path / "file.json")})
    layers = role_layers(site, load_layer)
    renamed = [
        renamed_copy(layers["DISTURBANCE_LAYER"], {"phase": "PHASE_NO", "start_date": "START"}),
        renamed_copy(layers["SMP_LAYER"], {"smp_id": "Name"}),
    ]
    try:
        # The original field stays beside the mapped one: the mapped field is the one read.
        # A text field, typed the way every QGIS reads (QgsField's type enum differs from 3.38).
        text_field = QgsVectorLayer("None?field=phase:string", "", "memory").fields().field(0)
        renamed[0].dataProvider().addAttributes([text_field])
        renamed[0].updateFields()
        mapped = run_review(
            {
                **layers,
                "DISTURBANCE_LAYER": renamed[0],
                "SMP_LAYER": renamed[1],
                "FIELD_MAP": json.dumps(
                    {"disturbance.phase": "PHASE_NO", "disturbance.start_date": "START", "smp.smp_id": "Name"}
                ),
                "OUTPUT_JSON": str(tmp_path / "mapped.json"),
            }
        )
    finally:
        QgsProject.instance().removeMapLayers([r.id() for r in renamed])
    assert mapped["DISTURBED_ACRES"] == pytest.approx(from_file["DISTURBED_ACRES"], abs=1e-9)
    by_file = json.loads((tmp_path / "file.json").read_text(encoding="utf-8"))
    by_map = json.loads((tmp_path / "mapped.json").read_text(encoding="utf-8"))
    assert by_map["measurements"]["phases"] == by_file["measurements"]["phases"]
    assert [
        (f["rule"], f["status"], f["features"]) for f in by_map["findings"] if f["rule"] != "site_map_scale"
    ] == [
        (f["rule"], f["status"], f["features"]) for f in by_file["findings"] if f["rule"] != "site_map_scale"
    ]


@pytest.mark.parametrize(
    "field_map, message",
    [
        ('{"disturbance.phase": "NO_SUCH"}', "has no field 'NO_SUCH' to read as 'phase'"),
        ('{"culvert.size": "X"}', "not 'role.field'"),
        ("[1, 2]", "not a JSON object"),
        ('{"smp.smp_id": "Name"}', "no layer is given"),
    ],
)
def test_a_wrong_field_map_is_refused_naming_it(field_map, message, data_copy, load_layer, tmp_path):
    layers = role_layers(data_copy("demo_site.gpkg"), load_layer)
    del layers["SMP_LAYER"]
    with pytest.raises(QgsProcessingException, match=message) as refused:
        run_review({**layers, "FIELD_MAP": field_map, "OUTPUT_JSON": str(tmp_path / "r.json")})
    assert "Traceback" not in str(refused.value)
    assert not (tmp_path / "r.json").exists()


@pytest.mark.parametrize(
    "variant, named",
    [
        ("variants/no_crs.gpkg", ["disturbance"]),
        ("variants/missing_layer.gpkg", ["disturbance"]),
        ("variants/missing_field.gpkg", ["project", "land_use"]),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(variant, named, data_copy, tmp_path):
    site = data_copy(variant)
    outputs = output_paths(tmp_path / "out")
    with pytest.raises(QgsProcessingException) as refused:
        run_review({"SITE": str(site), **outputs})
    for word in named:
        assert word in str(refused.value)
    assert "Traceback" not in str(refused.value)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_layer_without_crs_is_refused_by_role(data_copy, tmp_path, load_layer):
    demo = data_copy("demo_site.gpkg")
    no_crs = data_copy("variants/no_crs.gpkg")
    layers = {**role_layers(demo, load_layer), "DISTURBANCE_LAYER": load_layer(no_crs, "disturbance")}
    with pytest.raises(QgsProcessingException) as refused:
        run_review({**layers, "OUTPUT_JSON": str(tmp_path / "result.json")})
    assert "disturbance" in str(refused.value)
    assert "swppp_layers_" not in str(refused.value)  # not the temporary copy's path
    assert not (tmp_path / "result.json").exists()


@pytest.mark.parametrize(
    "extra, message",
    [
        ({"SITE": None}, "Give SITE"),
        ({"DISTURBANCE_LAYER": "placeholder"}, "not both"),
    ],
)
def test_site_or_layers_but_not_both(extra, message, demo, load_layer):
    parameters = {**demo, **extra}
    if parameters.get("DISTURBANCE_LAYER"):
        parameters["DISTURBANCE_LAYER"] = load_layer(demo["SITE"], "disturbance")
    with pytest.raises(QgsProcessingException, match=message):
        run_review(parameters)


def test_cancel_stops_the_run_and_writes_nothing(demo, tmp_path):
    feedback = QgsProcessingFeedback()
    # Cancel as soon as the review reports its first step, as a user pressing Cancel would.
    feedback.progressChanged.connect(lambda _progress: feedback.cancel())
    outputs = output_paths(tmp_path / "out")
    with pytest.raises(QgsProcessingException, match="cancel"):
        run_review({**demo, **outputs}, feedback=feedback)
    assert feedback.isCanceled()
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_an_unwritable_output_writes_none_of_them(demo, tmp_path):
    out = tmp_path / "out"
    outputs = output_paths(out)
    out.mkdir()
    (tmp_path / "not_a_folder").write_text("a file where a folder is needed\n")
    outputs["OUTPUT_JSON"] = str(tmp_path / "not_a_folder" / "result.json")
    with pytest.raises(QgsProcessingException, match="nothing was written"):
        run_review({**demo, **outputs})
    assert list(out.iterdir()) == []


def test_findings_load_into_the_project_named_and_styled(demo, tmp_path, iface_with_layer_tree):
    """As the dialog runs it: the findings layer is added with its stored style applied."""
    import processing
    from qgis.core import QgsProject

    findings = str(tmp_path / "findings.gpkg")
    processing.runAndLoadResults("swppp:review", {**demo, "OUTPUT_FINDINGS": findings})
    loaded = QgsProject.instance().mapLayersByName("SWPPP findings")
    try:
        assert len(loaded) == 1 and loaded[0].isValid()
        assert loaded[0].renderer().type() == "categorizedSymbol"
        assert loaded[0].renderer().classAttribute() == "status"
    finally:
        QgsProject.instance().removeAllMapLayers()
