"""The benchmark scripts run in their smoke mode (tiny sizes), so that they cannot rot."""

import importlib.util
import re
import shutil
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def _script(name):
    pytest.importorskip(
        "pyogrio",
        reason="the benchmarks build their layers with pyogrio (run them with .venv/plain, the PyPI stack)",
    )
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    if not module.NWI.is_file():
        pytest.skip(f"the NWI extract the benchmarks tile ({module.NWI}) is absent")
    return module


def test_bench_reference_smoke(capsys):
    module = _script("bench_reference")
    assert module.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "one-site Condition A + wetlands check" in out and "Condition A True" in out
    assert "reading the whole wetlands layer" in out
    assert "QGIS" in out
    assert "cold one-site `swppp review --json`" in out


def test_bench_screen_smoke(capsys):
    module = _script("bench_screen")
    assert module.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    lines = {line[:44].strip(): line for line in out.splitlines()}
    for step in (
        "screen (GeoPackage)",
        "floor: R-tree read + STRtree + areas",
        "swppp reference import wetlands",
    ):
        assert " MB" in lines[step], out
    # The statewide catchments, waters and watersheds make the screen decide Condition A.
    applies = re.search(r"Condition A (\d+) applies, (\d+) not decided", lines["screen (GeoPackage)"])
    assert applies and int(applies[1]) > 0, out
    assert "agrees with the review: True" in lines["screen = swppp review, site by site"], out
    if shutil.which("ogr2ogr"):
        assert " MB" in lines["ogr2ogr copy of the wetlands layer"], out
    if "screen (PostGIS)" in lines:  # skipped only where nothing can run it
        assert "skipped: no PostgreSQL/PostGIS/psycopg" in lines["screen (PostGIS)"], out
    else:  # a step that fails prints "skipped: <its error>": that is a failure here
        assert "agrees: True" in lines["screen (PostGIS, SQL in the database)"], out
