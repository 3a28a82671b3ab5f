"""The venv's ``swppp`` and Python, run directly without PROJ_DATA, find PROJ's data.

``scripts/setup.sh`` exports PROJ_DATA, but a user calling ``.venv/qgis/bin/swppp`` does not get
it: Debian's pyproj then looks under the venv's prefix (``share/proj``, linked by setup.sh), and a
wheel's pyproj (the PyPI stack) uses the data it carries.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

NOT_FOUND = "PROJ data directory not found"
BIN = Path(sys.executable).parent


def _without_proj_data():
    return {k: v for k, v in os.environ.items() if k not in ("PROJ_DATA", "PROJ_LIB")}


@pytest.fixture
def venv():
    if sys.prefix == sys.base_prefix or not (BIN / "swppp").exists():
        pytest.skip("not run from a venv with the project installed (scripts/setup.sh)")
    return BIN


def test_the_venvs_swppp_finds_proj_data_without_proj_data(venv, tmp_path):
    # A command that imports geopandas and pyproj, refused at once (exit 2): a missing store.
    done = subprocess.run(
        [str(venv / "swppp"), "reference", "status", "--reference", str(tmp_path / "nowhere.gpkg")],
        env=_without_proj_data(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 2, done.stderr
    assert "does not exist" in done.stderr
    assert NOT_FOUND not in done.stderr and "Warning" not in done.stderr, done.stderr


def test_the_venvs_python_reads_a_crs_in_us_feet_without_proj_data(venv, tmp_path):
    probe = (
        "import warnings; warnings.simplefilter('error'); import pyproj; "
        "print(pyproj.CRS('EPSG:2260').axis_info[0].unit_name)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        env=_without_proj_data(),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert done.returncode == 0 and NOT_FOUND not in done.stderr, done.stderr
    assert done.stdout.strip() == "US survey foot"
