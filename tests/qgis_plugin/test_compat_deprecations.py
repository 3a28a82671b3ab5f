"""No call of ours is deprecated in the QGIS that runs the tests (3.22, 3.40 or 3.44): the review
with its PDF report (the print layout: labels, legend, scale bar, tables) and the phasing
algorithm with its field parameters, run through Processing, warn of nothing deprecated from the
plugin's modules or its bundled analysis. Warnings from QGIS's or a library's own code are theirs.
"""

import warnings
from pathlib import Path

import pytest

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROOT = Path(__file__).resolve().parents[2]
DEPRECATIONS = (DeprecationWarning, PendingDeprecationWarning)


@pytest.fixture(scope="module")
def our_folders(staged_plugin):
    """Where our code is: the staged plugin (its bundled analysis in it) and the sources."""
    return [
        Path(staged_plugin.__file__).resolve().parent,
        (ROOT / "qgis_plugin").resolve(),
        (ROOT / "analysis").resolve(),
    ]


def deprecated_calls_of_ours(run, folders):
    """What ``run()`` returns, and each deprecation warning it raised at a line of ours, as
    'file:line: category: message'."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = run()
    ours = []
    for warning in caught:
        where = Path(warning.filename).resolve()
        if issubclass(warning.category, DEPRECATIONS) and any(
            where.is_relative_to(folder) for folder in folders
        ):
            ours.append(
                f"{warning.filename}:{warning.lineno}: {warning.category.__name__}: {warning.message}"
            )
    return result, sorted(set(ours))


def test_the_review_and_its_pdf_report_call_nothing_deprecated(our_folders, data_copy, tmp_path):
    import processing

    pdf = tmp_path / "report.pdf"
    results, deprecated = deprecated_calls_of_ours(
        lambda: processing.run(
            "swppp:review",
            {
                "SITE": str(data_copy("demo_site.gpkg")),
                "REFERENCE": str(data_copy("demo_reference.gpkg")),
                "OUTPUT_PDF": str(pdf),
            },
        ),
        our_folders,
    )

    assert pdf.read_bytes().startswith(b"%PDF") and results["OUTPUT_PDF"] == str(pdf)
    assert not deprecated, "deprecated calls of ours (qgis_plugin/compat.py):\n" + "\n".join(deprecated)


def test_phasing_with_chosen_fields_calls_nothing_deprecated(our_folders, data_copy, tmp_path, load_layer):
    import processing

    layer = load_layer(data_copy("demo_site.gpkg"), "disturbance")
    results, deprecated = deprecated_calls_of_ours(
        lambda: processing.run(
            "swppp:phasing",
            {
                "DISTURBANCE": layer,
                "PHASE_FIELD": "phase",
                "START_FIELD": "start_date",
                "STABILIZED_FIELD": "stabilized_date",
                "OUTPUT_PHASES": str(tmp_path / "phases.gpkg"),
                "OUTPUT_CHART": str(tmp_path / "timeline.svg"),
            },
        ),
        our_folders,
    )

    assert results["MAX_CONCURRENT_AT"] == "2027-06-01"
    assert not deprecated, "deprecated calls of ours (qgis_plugin/compat.py):\n" + "\n".join(deprecated)
