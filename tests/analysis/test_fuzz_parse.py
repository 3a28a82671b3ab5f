"""Hostile files for the parsers (issue 36, items 5-9): each refused by name, exit 2, no hang.

Deeply nested TOML, DXF block inserts that expand without end and coordinates no survey gives,
workbooks that inflate to gigabytes or hold formulas without values, CAD layer patterns that
backtrack, raster windows too large to hold. Every hostile file is built here, small on disk.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest

from analysis.limits import CAD_LAYER_NAME_MAX, TOML_MAX_DEPTH
from tests.analysis.conftest import square
from tests.analysis.test_fuzz import PROFILE, RECORDS, SITE, WBD_MAP, Case, _run
from tests.analysis.test_phasing_cli import write_dxf

DEEP = TOML_MAX_DEPTH * 40  # deep enough to exhaust the parser's recursion without the guard


def _nested_value() -> str:
    return "[" * DEEP + "]" * DEEP


def _toml(name: str, text: str, argv: Callable[[Path], list]) -> Callable[[Path], list]:
    def build(folder: Path) -> list:
        (folder / name).write_text(text, encoding="utf-8")
        return argv(folder / name)

    return build


TOML_CASES = [
    Case(
        "crash-5-nested-toml-profile",
        _toml(
            "p.toml",
            PROFILE.read_text(encoding="utf-8") + f"\n[deep]\nx = {_nested_value()}\n",
            lambda p: ["review", SITE, "--profile", p, "--json", "{out}/r.json"],
        ),
        ("p.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-map",
        _toml(
            "m.toml",
            f"x = {_nested_value()}\n",
            lambda p: ["review", SITE, "--map", p, "--json", "{out}/r.json"],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-inline-tables-nov",
        _toml(
            "v.toml",
            (RECORDS / "violation.toml").read_text(encoding="utf-8") + "\nx = " + "{a = " * DEEP + "1" + "}" * DEEP + "\n",
            lambda p: ["nov", p, "--output", "{out}/n.html"],
        ),
        ("v.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-nested-toml-reference-mapping",
        _toml(
            "m.toml",
            WBD_MAP + f"\n[deep]\nx = {_nested_value()}\n",
            lambda p: [
                "reference", "import", "catchments", SITE.parent / "reference_sources" / "wbd_huc12.gpkg",
                "--map", p, "--reference", "{out}/ref.gpkg", "--quiet",
            ],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
    Case(
        "crash-5-dotted-keys-deep-map",
        _toml(
            "m.toml",
            "x." + ".".join(f"k{i}" for i in range(DEEP)) + " = 1\n",
            lambda p: ["review", SITE, "--map", p, "--json", "{out}/r.json"],
        ),
        ("m.toml", f"nested deeper than {TOML_MAX_DEPTH}"),
    ),
]

CAD = SITE.parent / "cad"


def _phasing(folder: Path, cad_layer: str, pattern: str) -> list:
    """``swppp phasing`` of a one-square drawing on ``cad_layer``, phases by ``pattern``."""
    write_dxf(folder / "d.dxf", [square(1.0).exterior], ["C-LAYER-NAME"])  # GDAL writes <= 255
    dxf = (folder / "d.dxf").read_text(encoding="utf-8")
    (folder / "d.dxf").write_text(dxf.replace("C-LAYER-NAME", cad_layer), encoding="utf-8")
    (folder / "s.csv").write_text("phase,start,stabilized\n1,2026-05-01,2026-09-01\n", encoding="utf-8")
    return [
        "phasing", folder / "d.dxf", "--phase-from", "layer", "--pattern", pattern,
        "--schedule", folder / "s.csv", "--crs", "EPSG:2260", "--json", "{out}/p.json", "--quiet",
    ]
EVIL = "C-(x+)+-X"  # backtracks 2^n on C-xxx...x (n x, no -X): a hang at n = 40


def _cad_map(pattern: str) -> Callable[[Path], list]:
    def build(folder: Path) -> list:
        text = (
            '[cad]\ncrs = "EPSG:2260"\nschedule = "schedule.csv"\n[cad.layers]\n'
            f"site_boundary = 'C-PROP'\ndisturbance = '{pattern}'\n"
        )
        (folder / "map.toml").write_text(text, encoding="utf-8")
        (folder / "schedule.csv").write_bytes((CAD / "schedule.csv").read_bytes())
        return ["review", CAD / "plan.dxf", "--map", folder / "map.toml", "--json", "{out}/r.json"]

    return build


REGEX_CASES = [
    Case(
        "crash-8-nested-quantifier-map",
        _cad_map(EVIL),
        ("map.toml", "cad.layers.disturbance", repr(EVIL), "exponential time"),
    ),
    Case(
        "crash-8-ambiguous-alternation-map",
        _cad_map("(C|C-)*PHAS-(\\d+)"),
        ("map.toml", "cad.layers.disturbance", "alternation", "exponential time"),
    ),
    Case(
        "crash-8-nested-quantifier-phasing-pattern",
        lambda folder: _phasing(folder, "C-" + "x" * 40, EVIL),  # on main: 2^40 steps, a hang
        ("--pattern", repr(EVIL), "exponential time"),
    ),
    Case(
        "crash-8-layer-name-too-long",
        lambda folder: _phasing(folder, "C-PHAS-1" + "x" * (CAD_LAYER_NAME_MAX + 1), "C-PHAS-(\\d+)"),
        ("d.dxf", "feature 0", f"at most {CAD_LAYER_NAME_MAX}"),
    ),
]

CASES = TOML_CASES + REGEX_CASES


@pytest.mark.parametrize("item", CASES, ids=[c.name for c in CASES])
def test_refused(item: Case, tmp_path, capsys):
    inputs, out = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    out.mkdir()
    argv = item.build(inputs)
    before = {p.name: p.read_bytes() for p in inputs.iterdir()}
    code, err = _run(argv, out, capsys)
    assert code == 2, err
    assert "Traceback" not in err
    for text in item.expect:
        assert text in err, err
    assert {p.name: p.read_bytes() for p in inputs.iterdir()} == before
    assert list(out.iterdir()) == []
