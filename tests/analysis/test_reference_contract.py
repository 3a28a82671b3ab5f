"""One reference-layer contract: every module that lists, stores, reads, imports, diffs, draws or
offers the reference layers takes them from ``analysis.reference.contract`` (docs/DESIGN.md,
"How to add a reference layer type": one contract entry plus its check)."""

from __future__ import annotations

import ast
import xml.dom.minidom
from pathlib import Path

import pytest

from analysis.reference import contract
from analysis.reference.contract import LAYER_NAMES, REFERENCE_LAYERS

ROOT = Path(__file__).resolve().parents[2]
NAMES = set(LAYER_NAMES)
# Hand lists of all the reference layers that remain in files other helpers own in this
# session, with what they should read instead: each entry must still hold its list (so this
# table shrinks as they go, never goes stale), and no other file may hold one.
KNOWN_HAND_LISTS = {
    # the PDF's map layers, inset and styles: spec.style.order, spec.legend,
    # analysis.report.layer_style.reference_qml(name) (the contract's style as QML)
    "qgis_plugin/report_layout.py",
    # the benchmark's PostGIS check: LAYER_NAMES
    "scripts/bench_screen.py",
}


def _hand_lists(path: Path) -> list[int]:
    """Lines of ``path`` holding a literal tuple, list, set or dict (keys) that names every
    reference layer, directly or as the first item of each row (``(("wetlands", ...), ...)``)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            items = list(node.elts)
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        items += [e.elts[0] for e in items if isinstance(e, ast.Tuple) and e.elts]
        if {e.value for e in items if isinstance(e, ast.Constant)} >= NAMES:
            lines.append(node.lineno)
    return lines


def _sources():
    for folder in ("analysis", "qgis_plugin", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            yield path.relative_to(ROOT).as_posix(), path


def test_no_module_lists_the_reference_layers_by_hand():
    found = {name: lines for name, path in _sources() if (lines := _hand_lists(path))}
    assert "analysis/reference/contract.py" not in found  # its entries are calls, not a list
    assert set(found) - KNOWN_HAND_LISTS == set(), found  # read contract.LAYER_NAMES instead
    assert KNOWN_HAND_LISTS - set(found) == set()  # gone: take it off KNOWN_HAND_LISTS


def test_the_scan_finds_a_hand_list(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(
        'A = ("catchments", "tmdl_watersheds", "impaired_waters", "wetlands")\n'
        'B = (("wetlands", 1), ("impaired_waters", 2), ("tmdl_watersheds", 3),\n'
        '     ("catchments", 4))\n'
        'C = ("wetlands", "catchments")\n'
    )
    assert _hand_lists(path) == [1, 2]


def test_what_other_modules_use_is_derived_from_the_entries():
    from analysis.reference.read import SPECS
    from analysis.report import site_map
    from analysis.screen import since

    assert since.LAYERS == LAYER_NAMES
    for name, spec in REFERENCE_LAYERS.items():
        read = SPECS[name]
        assert read.field_names == tuple(spec.fields) and read.id_field == spec.id_field
        assert {f.name for f in read.fields if not f.column_required} == set(spec.added_fields)
        assert site_map.MAP_LAYER_TITLES[name] == spec.legend
        assert site_map.LABEL_FIELDS[name] == spec.label_field
        assert name in site_map._CONTEXT_ORDER
    assert contract.ADDED_FIELDS == {
        "impaired_waters": ("tmdl_id",),
        "tmdl_watersheds": ("stormwater_source_evidence", "tmdl_date"),
    }
    assert {"regulated", "stormwater_source"} == contract.FLAG_FIELDS
    assert {"regulated", "adjacent_area_ft", "stormwater_source"} == contract.NUMERIC_FIELDS
    assert REFERENCE_LAYERS["impaired_waters"].category_fields == ("category",)
    assert {n for n, s in REFERENCE_LAYERS.items() if s.pollutant_fields == ("pollutants",)} == {
        "impaired_waters",
        "tmdl_watersheds",
    }


@pytest.mark.parametrize("name", LAYER_NAMES)
def test_each_layer_has_a_qgis_style_from_its_contract_style(name):
    from analysis.report.layer_style import LINE, POLYGON, reference_qml

    spec = REFERENCE_LAYERS[name]
    for geometry in (LINE, POLYGON) if "line" in spec.families else (POLYGON,):
        document = xml.dom.minidom.parseString(reference_qml(name, geometry))
        options = {
            o.getAttribute("name"): o.getAttribute("value")
            for o in document.getElementsByTagName("Option")
            if o.getAttribute("name")
        }
        colour = options.get("color") or options.get("line_color")
        red, green, blue = (int(spec.style.colour[i : i + 2], 16) for i in (1, 3, 5))
        assert colour == f"{red},{green},{blue},255"
        [text] = document.getElementsByTagName("text-style")
        assert text.getAttribute("fieldName") == spec.label_field


def test_an_entry_names_only_its_own_fields():
    with pytest.raises(ValueError, match="drains_to is not one of its fields"):
        contract.ReferenceLayerSpec(
            "floodplains",
            "Floodplains",
            "Floodplain (reference)",
            "zone_id",
            (contract.ReferenceField("zone_id"),),
            contract.POLYGONS,
            contract.BOX,
            contract.Style("#000000", 15),
            label_field="zone_id",
            lookup_fields=("drains_to",),
        )
