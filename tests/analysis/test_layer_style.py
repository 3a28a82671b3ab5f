"""The result layers' QML, written without QGIS: well-formed, one category per value, escaped."""

import xml.etree.ElementTree as ET

import pytest

from analysis.findings import STATUS_COLOURS, STATUSES
from analysis.report.layer_style import (
    LINE,
    POINT,
    POLYGON,
    change_colour,
    disturbance_qml,
    easement_qml,
    findings_qml,
    phase_colours,
    plan_changes_qml,
    smp_qml,
)
from analysis.rounds.contract import CHANGE_KINDS


def parse(qml):
    return ET.fromstring(qml.split(">", 1)[1])  # past the DOCTYPE line


def categories(qml):
    return [(c.get("value"), c.get("label")) for c in parse(qml).iter("category")]


@pytest.mark.parametrize("geometry, symbol", [(POLYGON, "fill"), (LINE, "line"), (POINT, "marker")])
def test_findings_have_a_category_per_status_in_its_colour(geometry, symbol):
    root = parse(findings_qml(geometry=geometry))
    assert [value for value, _ in categories(findings_qml(geometry=geometry))] == list(STATUSES)
    symbols = {s.get("name"): s for s in root.iter("symbol")}
    assert {s.get("type") for s in symbols.values()} == {symbol}
    for category in root.iter("category"):
        props = {
            o.get("name"): o.get("value")
            for o in symbols[category.get("symbol")].iter("Option")
            if o.get("name")
        }
        colour = props.get("color") or props.get("line_color")
        red, green, blue = (int(x) for x in colour.split(",")[:3])
        assert f"#{red:02x}{green:02x}{blue:02x}" == STATUS_COLOURS[category.get("value")]


def test_phases_get_distinct_colours_apart_from_the_statuses():
    phases = [str(i) for i in range(1, 25)]
    colours = phase_colours(phases)
    assert list(colours) == phases
    assert len(set(colours.values())) == len(phases)
    assert not set(colours.values()) & set(STATUS_COLOURS.values())
    assert phase_colours(["B", "A", "B"]) == {
        "B": phase_colours(["B"])["B"],
        "A": phase_colours(["x", "y"])["y"],
    }


def test_phase_names_from_the_plan_are_escaped():
    odd = '<script>alert("1")</script> & co'
    qml = disturbance_qml(["1", odd])
    assert "<script>" not in qml
    assert categories(qml) == [("1", "phase 1"), (odd, f"phase {odd}"), ("", "no phase")]


def test_site_layers_are_labelled_with_their_ids():
    for qml, field in (
        (smp_qml(POLYGON), "smp_id"),
        (smp_qml(POINT), "smp_id"),
        (easement_qml(), "easement_id"),
    ):
        root = parse(qml)
        assert root.get("labelsEnabled") == "1"
        assert root.find("labeling/settings/text-style").get("fieldName") == field
    assert [v for v, _ in categories(easement_qml())] == ["1", "0"]
    assert parse(smp_qml(POINT)).find("layerGeometryType").text == "0"


@pytest.mark.parametrize("geometry, symbol", [(POLYGON, "fill"), (POINT, "marker")])
def test_plan_changes_have_a_category_per_kind_in_the_maps_colour(geometry, symbol):
    qml = plan_changes_qml(geometry)
    root = parse(qml)
    assert categories(qml) == list(CHANGE_KINDS.items())
    symbols = {s.get("name"): s for s in root.iter("symbol")}
    assert {s.get("type") for s in symbols.values()} == {symbol}
    for category in root.iter("category"):
        props = {o.get("name"): o.get("value") for o in symbols[category.get("symbol")].iter("Option")}
        red, green, blue = (int(x) for x in props["color"].split(",")[:3])
        assert f"#{red:02x}{green:02x}{blue:02x}" == change_colour(category.get("value"))
    assert root.find("labeling/settings/text-style").get("fieldName") == "change"
