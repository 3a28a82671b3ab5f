"""The worst moment's acres are the decision's everywhere (issue 18, point 4): `swppp phasing`'s
text, its JSON and timeline CSV, the timeline chart and the review's chart all carry the
ellipsoidal figure that "not more than five acres ... at any one time" is decided on."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from analysis.cli.app import main
from analysis.profile import load_profile
from analysis.review import review_paths

PROFILE = load_profile()
EXACTLY_FIVE = Path(__file__).resolve().parents[2] / "test_data" / "variants" / "exactly_five_acres.gpkg"
TRUE_ACRES = 5.0009056  # 5.0000000 planar in EPSG:2260
METHOD = "ellipsoidal area on GRS 1980, pyproj Geod"


def text_comments(svg: str) -> list[str]:
    """The texts matplotlib drew as paths: each is written before its glyphs as a comment."""
    return [part.split("-->")[0].strip() for part in svg.split("<!--")[1:]]


def test_swppp_phasing_shows_the_decisions_figure_in_its_text_json_csv_and_chart(tmp_path, capsys):
    out = {name: tmp_path / name for name in ("phasing.json", "timeline.csv", "chart.svg")}
    status = main(
        [
            "phasing",
            str(EXACTLY_FIVE),
            "--layer",
            "disturbance",
            "--json",
            str(out["phasing.json"]),
            "--timeline-csv",
            str(out["timeline.csv"]),
            "--chart",
            str(out["chart.svg"]),
        ]
    )
    assert status == 1
    text = capsys.readouterr().out
    assert (
        f"worst moment: 5.0009 acres ({METHOD}) disturbed and not yet stabilised on "
        f"2027-04-01 (limit 5)" in text
    )
    assert f"FAIL          phasing_five_acres: 5.0009 acres ({METHOD})" in text
    assert "5.00 acres" not in text  # never the planar 5.00 beside "more than 5"

    result = json.loads(out["phasing.json"].read_text(encoding="utf-8"))
    decided = result["max_concurrent_disturbed_acres_ellipsoidal"]
    assert decided == pytest.approx(TRUE_ACRES, abs=1e-6)
    assert result["max_concurrent_disturbed_acres"] == pytest.approx(5.0, abs=1e-9)  # planar
    assert max(row["acres"] for row in result["timeline"]) == decided
    assert result["timeline_area_method"].startswith(METHOD)
    (verdict,) = [f for f in result["findings"] if f["rule"] == "phasing_five_acres"]
    assert verdict["status"] == "fail" and verdict["value"] == decided

    rows = list(csv.DictReader(out["timeline.csv"].open(encoding="utf-8")))
    assert [(r["date"], r["acres"]) for r in rows] == [("2027-04-01", "5.000906"), ("2027-06-15", "0.000000")]

    drawn = text_comments(out["chart.svg"].read_text(encoding="utf-8"))
    assert "max 5.0009 ac" in drawn and "acres (ellipsoidal)" in drawn
    assert not any(t.startswith("max 5.00 ") for t in drawn)


def test_the_reviews_timeline_and_chart_carry_the_decisions_figure(data_copy):
    review = review_paths(data_copy("variants/exactly_five_acres.gpkg"), profile=PROFILE)
    m = review.measurements
    (verdict,) = [f for f in review.findings if f.rule == "phasing_five_acres"]
    assert (
        verdict.value
        == m["max_concurrent_disturbed_acres_ellipsoidal"]
        == max(row["acres"] for row in m["timeline"])
    )
    drawn = text_comments(review.charts["phasing_timeline"].svg)
    assert "max 5.0009 ac" in drawn


def test_the_reports_measurements_show_the_acres_the_limits_are_decided_on(data_copy):
    """The report's measurements table gave the planar 5.00 beside a finding of 5.0009: it now
    gives the decided (ellipsoidal) acres with their method, the planar beside them."""
    from analysis.report.model import build_report

    review = review_paths(data_copy("variants/exactly_five_acres.gpkg"), profile=PROFILE)
    totals = build_report(review, maps=False).section("measurements").blocks[0]
    shown = {row[0].text: row[1].text for row in totals.rows}
    method = review.measurements["threshold_area_method"]
    assert shown["Disturbed area (union of all disturbance)"] == f"5.0009 acres ({method}); 5.00 planar"
    assert (
        shown["Most disturbed and not yet stabilised at one time"]
        == f"5.0009 acres ({method}); 5.00 planar, on 2027-04-01"
    )
