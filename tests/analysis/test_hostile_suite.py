"""The hostile-input suite keeps its form (issue 36): every case of ``tests/*/test_fuzz_*.py`` is
named by its class and item (``<class>-<item>-<what>`` or ``test_<class>_<item>_<what>``), so
that ``scripts/fuzz_totals.py`` can total crashes, wrong answers, inputs destroyed, injections
and faults; every class has cases."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _totals():
    spec = importlib.util.spec_from_file_location("fuzz_totals", ROOT / "scripts" / "fuzz_totals.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _collected(files: list[Path], *plugins: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *plugins, "--collect-only", "-q"]
        + [str(f) for f in files],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_every_case_of_the_suite_is_named_by_its_class():
    totals = _totals()
    files = sorted((ROOT / "tests" / "analysis").glob("test_fuzz_*.py"))
    if not files:
        pytest.skip("no hostile-input files of round 2 here")
    cases = _collected(files, "-p", "no:pytest_qgis")
    unnamed = [case for case in cases if totals.case_class(case) == "round 1"]
    assert not unnamed, f"cases not named <class>-<item>-<what> ({', '.join(totals.CLASSES)}): {unnamed}"
    classes = {totals.case_class(case) for case in cases}
    assert classes == set(totals.CLASSES), f"classes without a case: {set(totals.CLASSES) - classes}"


def test_the_case_classes_are_read_from_names_and_ids():
    totals = _totals()
    assert totals.case_class("tests/x.py::test_refused[destroyed-1-json-over-site]") == "destroyed"
    assert totals.case_class("tests/x.py::test_wrong_14_phase_twice") == "wrong"
    assert totals.case_class("tests/x.py::test_refused[nan-vertex]") == "round 1"
