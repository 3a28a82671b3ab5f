"""``swppp:easement_coverage`` through Processing: the review's own easement analysis."""

import json

import pytest

# Every test here runs against the staged plugin's registered provider.
pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = ("project", "site_boundary", "disturbance", "smp", "easement", "public_row")
SQ_FT_PER_US_SQ_FT = (1200 / 3937 / 0.3048) ** 2


def run(algorithm, parameters):
    import processing

    return processing.run(f"swppp:{algorithm}", parameters)


def test_parameters_are_the_review_s_without_reports():
    from qgis.core import QgsApplication

    algorithm = QgsApplication.processingRegistry().algorithmById("swppp:easement_coverage")
    names = {p.name() for p in algorithm.parameterDefinitions()}
    assert {
        "SITE",
        "SMP_LAYER",
        "EASEMENT_LAYER",
        "PUBLIC_ROW_LAYER",
        "PROFILE",
        "OUTPUT_JSON",
        "OUTPUT_FINDINGS",
    } <= names
    assert not names & {"OUTPUT_HTML", "OUTPUT_PDF", "REFERENCE", "SHEETS"}
    assert algorithm.shortHelpString() and algorithm.displayName()


def test_demo_fails_br2_and_matches_the_full_review(data_copy, tmp_path, load_layer):
    site = str(data_copy("demo_site.gpkg"))
    findings_path = tmp_path / "findings.gpkg"
    results = run(
        "easement_coverage",
        {"SITE": site, "OUTPUT_JSON": str(tmp_path / "e.json"), "OUTPUT_FINDINGS": str(findings_path)},
    )
    run("review", {"SITE": site, "OUTPUT_JSON": str(tmp_path / "review.json")})
    check = json.loads((tmp_path / "e.json").read_text(encoding="utf-8"))
    review = json.loads((tmp_path / "review.json").read_text(encoding="utf-8"))

    assert check["findings"] == [f for f in review["findings"] if f["rule"] == "easement_coverage"]
    assert check["measurements"] == {"uncovered_smp_sq_ft": review["measurements"]["uncovered_smp_sq_ft"]}
    # E-2, not yet recorded, is recorded with the County Clerk after approval: info (issue 18)
    assert (results["EXIT_STATUS"], results["FAIL_COUNT"], results["WARN_COUNT"]) == (1, 1, 1)
    assert results["UNCOVERED_SQ_FT"] == pytest.approx(312.0 * SQ_FT_PER_US_SQ_FT, rel=1e-9)

    layer = load_layer(findings_path, "findings")
    assert layer.featureCount() == len(check["findings"])
    drawn = {f["status"]: f.geometry().area() for f in layer.getFeatures() if f["features"] == "smp:BR-2"}
    assert drawn["fail"] * SQ_FT_PER_US_SQ_FT == pytest.approx(results["UNCOVERED_SQ_FT"])


def test_layers_give_the_same_findings_as_the_geopackage(data_copy, tmp_path, load_layer):
    site = data_copy("variants/crs_4326.gpkg")
    layers = {f"{role.upper()}_LAYER": load_layer(site, role) for role in ROLES}
    run("easement_coverage", {"SITE": str(site), "OUTPUT_JSON": str(tmp_path / "file.json")})
    run("easement_coverage", {**layers, "OUTPUT_JSON": str(tmp_path / "layers.json")})
    by_file = json.loads((tmp_path / "file.json").read_text(encoding="utf-8"))
    by_layers = json.loads((tmp_path / "layers.json").read_text(encoding="utf-8"))
    assert [(f["status"], f["features"]) for f in by_layers["findings"]] == [
        (f["status"], f["features"]) for f in by_file["findings"]
    ]
    assert by_layers["measurements"]["uncovered_smp_sq_ft"] == pytest.approx(
        by_file["measurements"]["uncovered_smp_sq_ft"], rel=1e-9
    )
