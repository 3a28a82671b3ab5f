"""The committed test data is exactly what test_data/make_test_data.py makes."""
import hashlib
import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import TEST_DATA

GENERATED = ("*.gpkg", "sheets/*")  # GeoPackages; plan sheets (GeoTIFF, GeoPDF)


@pytest.mark.skipif(importlib.util.find_spec("fiona") is None,
                    reason="the generator writes with fiona (QGIS's Debian stack)")
def test_generator_reproduces_the_committed_files(tmp_path):
    subprocess.run([sys.executable, str(TEST_DATA / "make_test_data.py"), str(tmp_path)],
                   check=True, capture_output=True, env={**os.environ, "PROJ_DATA": "/usr/share/proj"})
    committed = sorted(p.relative_to(TEST_DATA) for pattern in GENERATED
                       for p in TEST_DATA.rglob(pattern))
    made = sorted(p.relative_to(tmp_path) for pattern in GENERATED for p in tmp_path.rglob(pattern))
    assert made == committed

    def digest(path):
        return hashlib.sha256(path.read_bytes()).hexdigest()

    changed = [str(p) for p in committed if digest(TEST_DATA / p) != digest(tmp_path / p)]
    assert changed == [], "regenerate test_data (python test_data/make_test_data.py) and commit"


@pytest.mark.skipif(importlib.util.find_spec("fiona") is None,
                    reason="the generator writes with fiona (QGIS's Debian stack)")
def test_generator_reproduces_the_committed_records(tmp_path):
    subprocess.run([sys.executable, str(TEST_DATA / "make_test_data.py"), str(tmp_path)],
                   check=True, capture_output=True, env={**os.environ, "PROJ_DATA": "/usr/share/proj"})
    committed = sorted(p.relative_to(TEST_DATA) for p in (TEST_DATA / "records").iterdir())
    made = sorted(p.relative_to(tmp_path) for p in (tmp_path / "records").iterdir())
    assert made == committed
    changed = [str(p) for p in committed if (TEST_DATA / p).read_bytes() != (tmp_path / p).read_bytes()]
    assert changed == [], "regenerate test_data (python test_data/make_test_data.py) and commit"
