"""``swppp --help`` and argument errors load none of the heavy libraries, and a one-site
``review --json`` none that only a report needs (issue 23, point 4)."""

import json
import subprocess
import sys

import pytest

from tests.conftest import TEST_DATA

HEAVY = ("geopandas", "pandas", "fiona", "pyogrio", "matplotlib", "shapely", "pyproj", "numpy")
# What only the HTML report, its map and charts need (and the PDF, through them): a review
# written as JSON alone loads none of it.
REPORT_ONLY = (
    "jinja2",
    "matplotlib",
    "analysis.report.html",
    "analysis.report.model",
    "analysis.report.site_map",
    # Nor what only the findings GeoPackage or another command needs (issue 37, goal 1).
    "analysis.report.findings_layers",
    "analysis.report.layer_style",
    "analysis.reference.importer",
)

PROBE = """
import json, sys
from analysis.cli.app import main
try:
    main({argv!r})
except SystemExit:
    pass
print(json.dumps(sorted(m for m in {heavy!r} if m in sys.modules)), file=sys.stderr)
"""


def _loaded(argv, modules=HEAVY):
    """The ``modules`` a fresh Python holds after ``swppp argv`` (run to its exit)."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, heavy=modules)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(done.stderr.strip().splitlines()[-1]), done


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["review"],  # a required argument missing
        ["reference", "import", "--reference", "r.gpkg"],  # the layer and source missing
        ["penalty", "--person", "A"],  # required options missing
        ["screen"],
        ["reference", "import", "--help"],  # its choices expanded in the help
    ],
    ids=[
        "help",
        "review-missing-site",
        "reference-missing",
        "penalty-missing",
        "screen-missing",
        "reference-import-help",
    ],
)
def test_help_and_argument_errors_import_no_heavy_library(argv):
    loaded, done = _loaded(argv)
    assert loaded == [], done.stderr
    assert "usage: swppp" in done.stdout + done.stderr


def test_a_command_that_runs_does_load_them():
    """The probe sees the libraries when a command needs them (the test above can fail)."""
    loaded, done = _loaded(["reference", "status", "--reference", "/nowhere/ref.gpkg"])
    assert "geopandas" in loaded, done.stderr


def test_a_one_site_json_review_loads_nothing_only_a_report_needs(tmp_path):
    out = tmp_path / "review.json"
    loaded, done = _loaded(
        [
            "review",
            str(TEST_DATA / "demo_site.gpkg"),
            "--reference",
            str(TEST_DATA / "demo_reference.gpkg"),
            "--json",
            str(out),
            "--quiet",
        ],
        REPORT_ONLY + ("geopandas",),
    )
    assert json.loads(out.read_text())["findings"], done.stderr  # the review ran, and wrote
    assert loaded == ["geopandas"], done.stderr  # the probe sees what the review does load
