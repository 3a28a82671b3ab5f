"""``swppp --help`` and argument errors load none of the heavy libraries (issue 23, point 4)."""
import json
import subprocess
import sys

import pytest

HEAVY = ("geopandas", "pandas", "fiona", "pyogrio", "matplotlib", "shapely", "pyproj", "numpy")

PROBE = """
import json, sys
from analysis.cli.app import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def _loaded(argv):
    """The heavy modules a fresh Python holds after ``swppp argv`` (run to its exit)."""
    done = subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, heavy=HEAVY)],
                          capture_output=True, text=True, timeout=120)
    return json.loads(done.stderr.strip().splitlines()[-1]), done


@pytest.mark.parametrize("argv", [
    ["--help"],
    ["review"],                                      # a required argument missing
    ["reference", "import", "--into", "r.gpkg"],    # the layer and source missing
    ["penalty", "--person", "A"],                    # required options missing
    ["screen"],
    ["reference", "import", "--help"],               # its choices expanded in the help
], ids=["help", "review-missing-site", "reference-missing", "penalty-missing", "screen-missing",
        "reference-import-help"])
def test_help_and_argument_errors_import_no_heavy_library(argv):
    loaded, done = _loaded(argv)
    assert loaded == [], done.stderr
    assert "usage: swppp" in done.stdout + done.stderr


def test_a_command_that_runs_does_load_them():
    """The probe sees the libraries when a command needs them (the test above can fail)."""
    loaded, done = _loaded(["reference", "status", "--in", "/nowhere/ref.gpkg"])
    assert "geopandas" in loaded, done.stderr
