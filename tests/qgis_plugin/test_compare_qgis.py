"""Issue 35 in QGIS: swppp:review's COMPARE_TO and COMPARISON, the panel's comparison after two
rounds of the shipped demo, and ROUND_FILE refused where an output would land on it."""

import pytest
from qgis.core import QgsProcessingException, QgsProcessingOutputLayerDefinition, QgsProject

from tests.qgis_plugin.test_panel import panel, run_review  # noqa: F401 - the fixture

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


def test_the_panel_compares_the_demos_two_rounds(panel, data_copy, tmp_path):  # noqa: F811
    from analysis.report.comparison import comparison_summary

    site, resubmittal = data_copy("demo_site.gpkg"), data_copy("demo_site_round2.gpkg")
    review_file = tmp_path / "project_review.gpkg"
    review = panel()
    review.reference.setFilePath(str(data_copy("demo_reference.gpkg")))
    review.review_file.setFilePath(str(review_file))
    assert not review.compare_to.isEnabled()  # no file yet: nothing to compare with
    assert "holds no round yet" in review.compare_to.toolTip()
    review.checklist.reviewer.setText("A. Reviewer")
    run_review(review, site, tmp_path)
    assert review.result is not None, review.status.text()
    assert review.result["round"]["number"] == 1 and "comparison" not in review.result
    assert review.changes_box.isHidden()
    # Round 1 recorded: the next run is compared with it by default.
    assert review.compare_to.isEnabled() and review.compare_to.currentData() == 1
    assert [review.compare_to.itemData(i) for i in range(review.compare_to.count())] == [0, 1]
    assert "recorded as round 2" in review.compare_to.toolTip()

    run_review(review, resubmittal, tmp_path)
    assert review.result is not None, review.status.text()
    assert review.result["round"]["number"] == 2
    comparison = review.result["comparison"]
    assert comparison["round"] == 1
    assert not review.changes_box.isHidden()
    assert review.changes_box.title() == "Changes since round 1"
    assert review.changes_summary.text() == comparison_summary(comparison)
    groups = [review.changes.topLevelItem(i) for i in range(review.changes.topLevelItemCount())]
    assert [g.text(0) for g in groups] == [
        f"{label} ({len(comparison[key])})"
        for key, label in (
            ("resolved", "resolved"),
            ("still_open", "still open"),
            ("new", "new"),
            ("changed", "changed"),
        )
    ]
    resolved = groups[0].child(0).data(0, 0x0100)
    assert resolved == comparison["resolved"][0]
    first = groups[0].child(0).text(0)
    assert first.startswith(comparison["resolved"][0]["rule"]) and "round 1 #" in first and "\u2192" in first
    # A compared finding present in this round chosen: its finding chosen in the list.
    new = groups[2].child(0)
    review.changes.setCurrentItem(new)
    chosen = review.tree.selectedItems()[0].data(0, 0x0100)
    assert chosen["rule"] == comparison["new"][0]["rule"]
    # The plan's changes since round 1 are layers of the results group, styled by kind.
    changes = [layer for name, layer in review.result_layers.items() if name.startswith("plan_changes")]
    assert changes and all(layer.isValid() for layer in changes)
    assert sorted(f["change"] for layer in changes for f in layer.getFeatures()) == sorted(
        c["id"] for c in comparison["plan_changes"]["changes"]
    )
    renderer = changes[0].renderer()
    assert renderer.type() == "categorizedSymbol" and renderer.classAttribute() == "kind"
    group = QgsProject.instance().layerTreeRoot().findGroup("SWPPP Review results")
    names = [n.layer().name() for n in group.children() if hasattr(n, "layer")]
    assert names.index(changes[0].name()) < names.index("smp")  # over the plan they changed
    # The next run is compared with round 2 by default.
    assert review.compare_to.currentData() == 2


def test_the_changes_list_shows_untrusted_text_as_text(panel):  # noqa: F811
    review = panel()
    name = "smp:<b>BR\u202e-9</b>"
    review.show_comparison(
        {
            "round": 1,
            "resolved": [
                {
                    "rule": "easement_coverage",
                    "features": [name],
                    "before": {"number": 3, "status": "fail", "figure": 312.0, "message": "<i>x</i> \u202e"},
                    "after": None,
                    "matched_by": None,
                }
            ],
            "still_open": [],
            "new": [],
            "changed": [],
        }
    )
    row = review.changes.topLevelItem(0).child(0)
    assert "<b>BR\\u202e-9</b>" in row.text(0)  # plain text, the override shown as its escape
    assert "\u202e" not in row.text(0)
    assert "&lt;b&gt;" in row.toolTip(0) and "<b>BR" not in row.toolTip(0)
    assert "fail 312 (round 1 #3) \u2192 no longer found" in row.text(0)
    review.changes.setCurrentItem(row)  # resolved: read whole in the detail pane, as text
    assert "smp:<b>BR\\u202e-9</b>" in review.detail.toPlainText()
    assert "Round 1: <i>x</i>" in review.detail.toPlainText()
    assert "&lt;b&gt;BR" in review.detail.toHtml()


def test_a_file_that_is_no_review_file_offers_no_round_and_says_why(panel, data_copy):  # noqa: F811
    site = data_copy("demo_site.gpkg")
    review = panel()
    review.site_file.setFilePath(str(site))
    review.review_file.setFilePath(str(site))  # the site plan chosen as the review file by mistake
    assert not review.compare_to.isEnabled()
    assert review.compare_to.count() == 1 and review.compare_to.currentData() == 0
    assert (
        "No round to compare with" in review.compare_to.toolTip()
        and "demo_site.gpkg" in review.compare_to.toolTip()
    )
    assert "COMPARE_TO" not in review.parameters(str(site.parent / "run"))
