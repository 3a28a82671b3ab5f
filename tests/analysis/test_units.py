"""Every unit constant is written once, in analysis.units, and they agree with each other."""

import ast
from pathlib import Path

import pytest

import analysis
from analysis import units

PACKAGE = Path(analysis.__file__).resolve().parent
CONSTANTS = {
    0.3048: "FOOT_M",
    4046.8564224: "ACRE_M2",
    43560: "SQ_FT_PER_ACRE",
    2.54: "CM_PER_INCH",
    25.4: "MM_PER_INCH",
}  # (640, 12: too common to scan for)


def test_the_constants_agree():
    assert pytest.approx(units.ACRE_M2, rel=1e-15) == units.SQ_FT_PER_ACRE * units.FOOT_M**2
    assert units.CM_PER_INCH * 10 == units.MM_PER_INCH
    assert pytest.approx(units.INCHES_PER_FOOT * units.CM_PER_INCH) == units.FOOT_M * 100
    assert units.ACRES_PER_SQ_MI * units.SQ_FT_PER_ACRE == 5280.0**2


def _literals(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value in CONSTANTS:
            yield node.lineno, node.value


@pytest.mark.parametrize(
    "module",
    sorted(p for p in PACKAGE.rglob("*.py") if p.name != "units.py"),
    ids=lambda p: str(p.relative_to(PACKAGE)),
)
def test_no_module_writes_a_unit_constant_of_its_own(module):
    found = [(line, CONSTANTS[value]) for line, value in _literals(module)]
    assert not found, f"{module}: use analysis.units instead of the literal: {found}"
