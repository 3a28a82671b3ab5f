"""Smoke test: the staged plugin under ``qgis_process``, as a script or a server would run it."""

import json
import os
import subprocess
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.qgis

# Debian's /usr/bin/qgis_process wrapper adds a flag QGIS 3.22 rejects.
QGIS_PROCESS = Path("/usr/bin/qgis_process.bin")
CRASHES = {134: "SIGABRT", 139: "SIGSEGV", -6: "SIGABRT", -11: "SIGSEGV"}


@pytest.fixture(scope="module")
def qgis_process(staged_plugin, tmp_path_factory):
    """``qgis_process(*args)``: qgis_process.bin with the staged plugin enabled, in a temporary
    profile (HOME and XDG folders in tmp), the QGIS venv's shapely 2 on PYTHONPATH."""
    if not QGIS_PROCESS.is_file():
        pytest.skip(f"{QGIS_PROCESS} is not installed")
    home = tmp_path_factory.mktemp("home")
    env = {
        **os.environ,
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "QGIS_PLUGINPATH": str(Path(staged_plugin.PLUGIN_DIR).parent),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PROJ_DATA": "/usr/share/proj",
        "QT_QPA_PLATFORM": "offscreen",
    }
    env.pop("QGIS_CUSTOM_CONFIG_PATH", None)  # pytest-qgis's, not for the child

    def run(*args, **more_env):
        completed = subprocess.run(
            [str(QGIS_PROCESS), *args],
            env={**env, **more_env},
            check=False,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert completed.returncode not in CRASHES, (
            f"qgis_process crashed ({CRASHES.get(completed.returncode)}):\n{completed.stderr}"
        )
        return completed

    enabled = run("plugins", "enable", "swppp_review")
    assert enabled.returncode == 0, enabled.stdout + enabled.stderr
    settings = home / ".local/share/QGIS/QGIS3/profiles/default/QGIS/QGIS3.ini"
    assert "swppp_review=true" in settings.read_text(encoding="utf-8")
    return run


def test_review_runs_under_qgis_process(qgis_process, data_copy, tmp_path, contract_problems):
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    result, report = tmp_path / "r.json", tmp_path / "r.pdf"
    completed = qgis_process(
        "run",
        "swppp:review",
        "--",
        f"SITE={site}",
        f"REFERENCE={reference}",
        f"OUTPUT_JSON={result}",
        f"OUTPUT_PDF={report}",
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert result.is_file() and report.read_bytes().startswith(b"%PDF-")
    assert json.loads(result.read_text(encoding="utf-8"))["measurements"]["disturbed_acres"] > 0
    assert contract_problems(result) == []


def test_phasing_runs_under_qgis_process_and_draws_its_chart(qgis_process, data_copy, tmp_path):
    site = data_copy("demo_site.gpkg")
    completed = qgis_process(
        "run",
        "swppp:phasing",
        "--",
        f"DISTURBANCE={site}|layername=disturbance",
        f"OUTPUT_PHASES={tmp_path / 'phases.gpkg'}",
        f"OUTPUT_TIMELINE={tmp_path / 'timeline.gpkg'}",
        f"OUTPUT_WORST={tmp_path / 'worst.gpkg'}",
        f"OUTPUT_CHART={tmp_path / 'timeline.png'}",
    )

    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "MAX_CONCURRENT_AT:\t2027-06-01" in completed.stdout
    assert (tmp_path / "timeline.png").read_bytes().startswith(b"\x89PNG")


def test_easement_coverage_runs_under_qgis_process(qgis_process, data_copy, tmp_path):
    result = tmp_path / "e.json"
    completed = qgis_process(
        "run", "swppp:easement_coverage", "--", f"SITE={data_copy('demo_site.gpkg')}", f"OUTPUT_JSON={result}"
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    findings = json.loads(result.read_text(encoding="utf-8"))["findings"]
    assert [f["features"] for f in findings if f["status"] == "fail"] == [["smp:BR-2"]]


def test_condition_a_runs_under_qgis_process(qgis_process, data_copy, tmp_path):
    result = tmp_path / "a.json"
    completed = qgis_process(
        "run",
        "swppp:condition_a",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        f"REFERENCE={data_copy('variants/reference_crs_4326.gpkg')}",
        f"OUTPUT_JSON={result}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["conditions"]["A"]["applies"] is True
    assert data["reference"]["path"] == "reference_crs_4326.gpkg"


def test_hydrology_runs_under_qgis_process(qgis_process, data_copy, tmp_path):
    table = tmp_path / "h.csv"
    completed = qgis_process(
        "run",
        "swppp:hydrology",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        f"OUTPUT_TABLE={table}",
        f"OUTPUT_CN={tmp_path / 'cn.gpkg'}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    lines = table.read_text(encoding="utf-8").splitlines()
    assert lines[0].startswith("drainage_area,storm,") and len(lines) == 7


def test_bad_input_exits_non_zero_naming_the_layer(qgis_process, data_copy, tmp_path):
    site = data_copy("variants/no_crs.gpkg")
    result = tmp_path / "r.json"
    completed = qgis_process("run", "swppp:review", "--", f"SITE={site}", f"OUTPUT_JSON={result}")

    assert completed.returncode != 0
    assert "'disturbance'" in completed.stdout + completed.stderr
    assert "Traceback" not in completed.stdout + completed.stderr
    assert not result.exists()


def test_shapely_uses_one_geos_inside_qgis(qgis_process, data_copy, tmp_path):
    """qgis_process links QGIS's GEOS: every GEOS call of shapely must bind to that one library.

    With a shapely built for a newer GEOS (2.1+ on Debian 12) the linker sends the functions
    QGIS's GEOS lacks to the wheel's own GEOS, and one review mixes two libraries.
    """
    completed = qgis_process(
        "run",
        "swppp:review",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        f"OUTPUT_FINDINGS={tmp_path / 'f.gpkg'}",
        LD_DEBUG="bindings",
        LD_DEBUG_OUTPUT=str(tmp_path / "ld"),
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    targets = set()
    for log in tmp_path.glob("ld.*"):
        for line in log.read_text(errors="replace").splitlines():
            if "/shapely/lib." in line and "normal symbol `GEOS" in line:
                targets.add(line.split(" to ", 1)[1].split(" [", 1)[0])
    assert len(targets) == 1, f"shapely's GEOS calls bind to several libraries: {sorted(targets)}"


def test_reference_import_runs_under_qgis_process(qgis_process, tmp_path):
    """GIS staff's import from a script: the same validation, version and sha256 check."""
    sources = Path(__file__).resolve().parents[2] / "test_data" / "reference_sources"
    target = tmp_path / "reference.gpkg"
    arguments = (
        "run",
        "swppp:reference_import",
        "--",
        "LAYER=1",
        f"TARGET={target}",
        f"SOURCE={sources / 'pwl_2022.csv'}",
        "FORMAT=2",
        f"GEOMETRY={sources / 'waters.gpkg'}",
        f"MAPPING={sources / 'pwl_geometry_mapping.toml'}",
        "SOURCE_DATE=2022-04-01",
    )
    first, again = qgis_process(*arguments), qgis_process(*arguments)
    assert first.returncode == 0, first.stdout + first.stderr
    assert "VERSION:\t1" in first.stdout and "NEW_VERSION:\t1" in first.stdout
    assert again.returncode == 0 and "NEW_VERSION:\t0" in again.stdout


def test_inspections_run_under_qgis_process(qgis_process, tmp_path):
    from tests.conftest import TEST_DATA

    records, result = TEST_DATA / "records", tmp_path / "records.json"
    completed = qgis_process(
        "run",
        "swppp:inspections",
        "--",
        f"LOG={records / 'inspection_log.csv'}",
        f"RAIN={records / 'rain.csv'}",
        f"SITE={TEST_DATA / 'demo_site.gpkg'}",
        f"OUTPUT_JSON={result}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    findings = json.loads(result.read_text(encoding="utf-8"))["findings"]
    assert sum(f["status"] == "fail" for f in findings) == 2  # the late weekly and the storm


def test_map_scale_runs_under_qgis_process_without_a_project(qgis_process, data_copy, tmp_path):
    """No project, so no layouts: said once; the plan sheets and stated scales are still checked
    (the GeoTIFF read by rasterio inside qgis_process)."""
    result = tmp_path / "scale.json"
    completed = qgis_process(
        "run",
        "swppp:map_scale",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        f"SHEETS={data_copy('sheets/sheet_2260_50ft.tif')}",
        f"OUTPUT_JSON={result}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    findings = json.loads(result.read_text(encoding="utf-8"))["findings"]
    by_feature = {(f["features"] or ["-"])[0]: f["status"] for f in findings}
    assert by_feature == {
        "sheet:sheet_2260_50ft.tif": "pass",
        "layout_scale:C-101 Site plan": "pass",
        "layout_scale:C-102 Grading": "pass",
        "layout_scale:C-001 Location map": "info",
        "-": "info",
    }
    assert "FAIL_COUNT:\t0" in completed.stdout  # C-001: a location map


def test_field_map_under_qgis_process(qgis_process, data_copy, tmp_path):
    """A script gets what the panel gets: layers by path, their own field names mapped."""
    from qgis.core import QgsFeatureRequest, QgsProject, QgsVectorFileWriter, QgsVectorLayer

    site = data_copy("demo_site.gpkg")
    source = QgsVectorLayer(f"{site}|layername=disturbance", "disturbance", "ogr")
    renamed = source.materialize(QgsFeatureRequest())
    assert renamed.dataProvider().renameAttributes({renamed.fields().indexOf("phase"): "PHASE_NO"})
    renamed.updateFields()
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName, options.layerName = "GPKG", "AREAS"
    cad = tmp_path / "cad.gpkg"
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        renamed, str(cad), QgsProject.instance().transformContext(), options
    )
    assert error == QgsVectorFileWriter.WriterError.NoError, message
    layers = [
        f"{role.upper()}_LAYER={site}|layername={role}"
        for role in (
            "project",
            "site_boundary",
            "smp",
            "easement",
            "discharge_point",
            "public_row",
            "layout_scale",
        )
    ]
    results = {}
    for name, field_map in (("mapped", '{"disturbance.phase": "PHASE_NO"}'), ("unmapped", "")):
        results[name] = tmp_path / f"{name}.json"
        completed = qgis_process(
            "run",
            "swppp:review",
            "--",
            *layers,
            f"DISTURBANCE_LAYER={cad}|layername=AREAS",
            f"FIELD_MAP={field_map}",
            f"OUTPUT_JSON={results[name]}",
        )
        if name == "mapped":
            assert completed.returncode == 0, completed.stdout + completed.stderr
    phases = json.loads(results["mapped"].read_text(encoding="utf-8"))["measurements"]["phases"]
    assert [p["phase"] for p in phases] == ["1", "2", "3"]
    # Without the mapping the layer lacks 'phase': refused, naming it, nothing written.
    assert completed.returncode != 0 and "phase" in completed.stdout + completed.stderr
    assert not results["unmapped"].exists()


def test_condition_a_reads_reference_layers_given_as_sources_under_qgis_process(
    qgis_process, data_copy, tmp_path
):
    reference = data_copy("variants/reference_crs_4326.gpkg")
    result = tmp_path / "a.json"
    layers = [
        f"{role.upper()}_LAYER={reference}|layername={role}"
        for role in ("impaired_waters", "tmdl_watersheds", "catchments")
    ]
    completed = qgis_process(
        "run",
        "swppp:condition_a",
        "--",
        f"SITE={data_copy('demo_site.gpkg')}",
        *layers,
        f"OUTPUT_JSON={result}",
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    data = json.loads(result.read_text(encoding="utf-8"))
    assert data["conditions"]["A"]["applies"] is True
    assert data["reference"]["path"] == "QGIS project layers"
    assert data["reference"]["project_layers"]["catchments"]["source"] == f"{reference}|layername=catchments"
