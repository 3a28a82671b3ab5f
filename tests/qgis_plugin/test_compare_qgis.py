"""Issue 35 in QGIS: swppp:review's COMPARE_TO and COMPARISON, the panel's comparison after two
rounds of the shipped demo, and ROUND_FILE refused where an output would land on it."""

import pytest
from qgis.core import QgsProcessingException, QgsProcessingOutputLayerDefinition

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


def run(parameters, feedback=None):
    import processing

    return processing.run("swppp:review", parameters, feedback=feedback)


@pytest.mark.parametrize("form", ["path", "ogr", "definition"])
@pytest.mark.parametrize("exists", [False, True])
def test_round_file_as_an_output_is_refused(data_copy, tmp_path, form, exists):
    site = data_copy("demo_site.gpkg")
    review_file = tmp_path / "review.gpkg"
    if exists:
        run({"SITE": str(site), "ROUND_FILE": str(review_file)})
    before = review_file.read_bytes() if exists else None
    value = {
        "path": str(review_file),
        "ogr": f"ogr:dbname='{review_file}' table=\"findings\" (geom)",
        "definition": QgsProcessingOutputLayerDefinition(str(review_file)),
    }[form]
    with pytest.raises(QgsProcessingException) as raised:
        run({"SITE": str(site), "ROUND_FILE": str(review_file), "OUTPUT_FINDINGS": value})
    if form == "ogr":  # a sink URI: refused as no GeoPackage file name, before anything runs
        assert "OUTPUT_FINDINGS must be a GeoPackage" in str(raised.value)
    else:  # the one rule (analysis.io.inputs), naming both
        message = str(raised.value)
        assert "OUTPUT_FINDINGS" in message and "ROUND_FILE" in message and "nothing was run" in message, (
            message
        )
    assert (review_file.read_bytes() if exists else review_file.exists()) == (before if exists else False)


def test_compare_to_returns_the_line_the_cli_prints(tmp_path):
    import io
    import json

    from analysis.cli.rounds import print_comparison
    from analysis.report.comparison import comparison_summary
    from tests.qgis_plugin.test_letter_qgis import record_two_rounds

    _review_file, results = record_two_rounds(tmp_path)
    data = json.loads((tmp_path / "round2.json").read_text(encoding="utf-8"))
    comparison = data["comparison"]  # docs/CONTRACT.md, "The review JSON's round fields"
    assert comparison["round"] == 1
    assert results["COMPARISON"] == comparison_summary(comparison)
    printed = io.StringIO()
    print_comparison(comparison, printed)
    assert printed.getvalue().splitlines()[0].strip() == results["COMPARISON"]
    assert results["COMPARISON"].startswith("compared with round 1: ")
    assert comparison["resolved"] and comparison["new"]  # the demo's resubmittal fixes one, breaks one


def test_compare_to_a_round_the_file_does_not_hold_is_refused_by_name(data_copy, tmp_path):
    from analysis.rounds.record import read_round

    site = data_copy("demo_site.gpkg")
    review_file = tmp_path / "review.gpkg"
    run({"SITE": str(site), "ROUND_FILE": str(review_file)})
    with pytest.raises(QgsProcessingException) as raised:
        run({"SITE": str(site), "ROUND_FILE": str(review_file), "COMPARE_TO": 3})
    message = str(raised.value)
    assert "round 3" in message and "(COMPARE_TO)" in message, message
    assert read_round(review_file)["round"]["round"] == 1  # no round 2 recorded


def test_compare_to_without_a_review_file_is_refused(data_copy, tmp_path):
    site = data_copy("demo_site.gpkg")
    out = tmp_path / "r.json"
    with pytest.raises(QgsProcessingException) as raised:
        run({"SITE": str(site), "COMPARE_TO": 1, "OUTPUT_JSON": str(out)})
    assert "COMPARE_TO 1 needs ROUND_FILE" in str(raised.value)
    assert not out.exists()


def test_no_comparison_is_an_empty_line(data_copy, tmp_path):
    results = run({"SITE": str(data_copy("demo_site.gpkg")), "ROUND_FILE": str(tmp_path / "r.gpkg")})
    assert results["COMPARISON"] == "" and results["ROUND"] == 1
