"""Writing a review's outputs: JSON, HTML report, findings GeoPackage; all or none.

Each output's libraries are imported when it is asked for (:mod:`.findings_layers` for the
GeoPackage, :mod:`.html` for the report), so a review written as JSON alone loads neither."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from ..io.files import write_all
from ..markup import json_shown

if TYPE_CHECKING:  # imported where each output is written
    from ..checks.hydrology import HydrologyResult
    from ..review import Review

__all__ = [
    "write_outputs",
    "write_json",
    "write_hydrology_outputs",
    "review_json",
    "Reported",
]


class Reported(Protocol):
    """What is written as JSON: a review, or one check's result (the records, the map scale)."""

    def to_dict(self) -> dict[str, Any]: ...


def review_json(review: Reported) -> str:
    return json_shown(json.dumps(review.to_dict(), indent=2, ensure_ascii=False, allow_nan=False))


def write_json(result: Reported, json_path: Optional[str | Path]) -> list[Path]:
    """``result`` alone as JSON at ``json_path`` (None: nothing), written whole or not at all:
    a check's result that is not a review (``swppp:inspections``, ``swppp:map_scale``)."""
    return write_all({json_path: _json_writer(result)})


def _json_writer(result: Reported) -> Callable[[Path], object]:
    return lambda p: Path(p).write_text(review_json(result) + "\n", encoding="utf-8")


def write_outputs(
    review: Review,
    json_path: Optional[str | Path] = None,
    html_path: Optional[str | Path] = None,
    findings_path: Optional[str | Path] = None,
) -> list[Path]:
    """Write the requested outputs; each lands under its name only once all are written."""
    writers = {
        json_path: _json_writer(review),
        html_path: lambda p: Path(p).write_text(_html(review), encoding="utf-8"),
        findings_path: lambda p: _findings(p, review),
    }
    return write_all(writers)


def _findings(path: Path, review: Review) -> None:
    # Imported when the findings GeoPackage is asked for: geopandas and pandas are not loaded
    # for a review written as JSON or HTML alone (issue 37; tests/analysis/test_cli_startup).
    from .findings_layers import write_findings

    write_findings(path, review)


def _html(review: Review) -> str:
    # Imported when a report is asked for: Jinja2, the map and the charts are not loaded for a
    # review written as JSON alone (issue 23: the one-site path; tests/analysis/test_cli_startup).
    from .html import render_html

    return render_html(review)


def write_hydrology_outputs(
    result: HydrologyResult, cn_path: Optional[str | Path] = None, table_path: Optional[str | Path] = None
) -> list[Path]:
    """The hydrology analysis's CN layer (GeoPackage) and its table (CSV); all or none."""
    from ..checks.hydrology import cn_layer, hydrology_table
    from ..io.csv_cells import write_frame_csv
    from ..io.vector import write_geopackage

    writers = {
        cn_path: lambda p: write_geopackage(p, {"curve_numbers": cn_layer(result)}),
        table_path: lambda p: write_frame_csv(p, hydrology_table(result)),
    }
    return write_all(writers)
