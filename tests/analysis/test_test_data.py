"""The committed test data is exactly what test_data/make_test_data.py makes."""

import hashlib
import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import TEST_DATA

GENERATED = ("*.gpkg", "sheets/*")  # GeoPackages; plan sheets (GeoTIFF, GeoPDF)
# The committed files are the bytes the generator's stack writes: Debian 12's fiona and GDAL 3.6.
# Another GDAL (Debian 13's 3.10, testing's 3.11+, for QGIS 3.40 and 3.44) writes other bytes.
GENERATOR_GDAL = "3.6"


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """What the generator makes now, in a fresh folder (run once for this module)."""
    if importlib.util.find_spec("fiona") is None:
        pytest.skip("the generator writes with fiona (QGIS's Debian stack)")
    import fiona

    if not fiona.__gdal_version__.startswith(GENERATOR_GDAL + "."):
        pytest.skip(
            f"the committed test data is GDAL {GENERATOR_GDAL}'s output (Debian 12); "
            f"this is GDAL {fiona.__gdal_version__}"
        )
    folder = tmp_path_factory.mktemp("generated")
    subprocess.run(
        [sys.executable, str(TEST_DATA / "make_test_data.py"), str(folder)],
        check=True,
        capture_output=True,
        env={**os.environ, "PROJ_DATA": "/usr/share/proj"},
    )
    return folder


def test_generator_reproduces_the_committed_files(generated):
    tmp_path = generated
    committed = sorted(p.relative_to(TEST_DATA) for pattern in GENERATED for p in TEST_DATA.rglob(pattern))
    made = sorted(p.relative_to(tmp_path) for pattern in GENERATED for p in tmp_path.rglob(pattern))
    assert made == committed

    def digest(path):
        return hashlib.sha256(path.read_bytes()).hexdigest()

    changed = [str(p) for p in committed if digest(TEST_DATA / p) != digest(tmp_path / p)]
    assert changed == [], "regenerate test_data (python test_data/make_test_data.py) and commit"


@pytest.mark.parametrize("folder", ["reference_sources", "records", "checklist"])
def test_generator_reproduces_the_committed_text_files(generated, folder):
    committed = sorted(p.name for p in (TEST_DATA / folder).iterdir())
    made = sorted(p.name for p in (generated / folder).iterdir())
    assert made == committed
    changed = [
        name
        for name in committed
        if (TEST_DATA / folder / name).read_bytes() != (generated / folder / name).read_bytes()
    ]
    assert changed == [], "regenerate test_data (python test_data/make_test_data.py) and commit"
