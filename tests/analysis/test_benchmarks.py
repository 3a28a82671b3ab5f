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


def test_bench_startup_smoke(capsys):
    """The cold review's benchmark: its anchor, floor and review, each with its figures."""
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location("bench_startup", SCRIPTS / "bench_startup.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    assert module.main(["--smoke", "--importtime"]) == 0
    out = capsys.readouterr().out
    for label in (
        "anchor: import shapely, pyproj, numpy",
        "floor: + pandas, geopandas",
        "swppp review --json -",
    ):
        line = next(line for line in out.splitlines() if label in line)
        assert re.search(r"median +\d+\.\d\d s .* peak +\d+\.\d MB", line), line
    assert re.search(r"swppp review --json - .* \d+\.\dx the anchor", out), out
    assert "slowest imports of the review" in out and "load average after" in out


def test_bench_screen_smoke(capsys, tmp_path):
    module = _script("bench_screen")
    assert module.main(["--smoke", "--explain", str(tmp_path / "plans")]) == 0
    out = capsys.readouterr().out
    lines = {line[:44].strip(): line for line in out.splitlines()}
    for step in (
        "screen (GeoPackage)",
        "floor via the project's read path",
        "true floor: sites to each layer's CRS",
        "screen (GeoPackage) / true floor",
        "swppp reference import wetlands",
    ):
        assert " MB" in lines[step], out
    # The independent floor finds what the project's read path finds.
    assert "the same areas as the floor above: True" in lines["true floor: sites to each layer's CRS"], out
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
        # The PostGIS screen's anchor: a plain SQL join on GiST indexes finds the floor's pairs.
        for workers in (2, 0):
            join = lines[f"plain SQL join, GiST, {workers} parallel workers"]
            pairs = re.search(r"(\d+) pairs \(the floor's (\d+)\)", join)
            assert " MB" in join and pairs and pairs[1] == pairs[2], out
            assert "the same areas as the floor: True" in join, out
            assert "x the SQL join" in lines[f"screen (PostGIS) / SQL join ({workers} workers)"], out
        plans = (tmp_path / "plans" / "pg_join_plans.txt").read_text()
        assert plans.count("Buffers:") >= 3 and "Execution Time" in plans, plans
        assert (tmp_path / "plans" / "pg_screen_plans.txt").is_file()


def test_bench_import_smoke(capsys):
    """The import's benchmark: the GeoPackage and PostGIS imports beside ogr2ogr's, each with
    its seconds, CPU, peak memory, ratio and load (no timing asserted)."""
    pytest.importorskip(
        "pyogrio", reason="the benchmark builds its layer with pyogrio (run it with .venv/plain)"
    )
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location("bench_import", SCRIPTS / "bench_import.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(SCRIPTS))
    assert module.main(["--smoke", "--postgis"]) == 0
    out = capsys.readouterr().out
    lines = {line[:36].strip(): line for line in out.splitlines()}
    figures = r"\d+\.\d\d s  CPU +\d+\.\d\d s  peak +\d+ MB  .*load \d+\.\d\d"
    assert re.search(figures, lines["swppp reference import (GeoPackage)"]), out
    if shutil.which("ogr2ogr"):
        assert re.search(figures + ".*", lines["ogr2ogr -f GPKG"]), out
        assert re.search(r"\d+\.\d\dx \(CPU", lines["swppp reference import (GeoPackage)"]), out
    pg = lines["swppp reference import (PostGIS)"]
    assert re.search(figures, pg) or "skipped: no PostgreSQL/PostGIS/psycopg" in pg, out
