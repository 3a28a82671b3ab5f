"""Charts for reports: a matplotlib figure as PNG bytes and deterministic SVG text.

A :class:`matplotlib.figure.Figure` on its own Agg canvas, never pyplot or the global backend:
the library draws the same in the CLI, in QGIS and in tests, leaks no figures, and leaves the
backend of a user's QGIS Python console as it was.
"""
from __future__ import annotations

import base64
import io
from dataclasses import dataclass

from matplotlib import rc_context
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["Chart", "new_figure", "figure_chart"]

_PNG_DPI = 150
# Fixed ids and no date in the SVG: the same chart gives the same text on every run.
_DETERMINISTIC = {"svg.hashsalt": "swppp-review", "svg.fonttype": "path"}


@dataclass(frozen=True)
class Chart:
    """One chart of a review: ``png`` bytes, ``svg`` text, and its ``title`` for people."""

    png: bytes
    svg: str
    title: str

    def data_uri(self, kind: str = "png") -> str:
        """The chart as a ``data:`` URI (``kind`` ``png`` or ``svg``), for an HTML ``<img>``."""
        if kind == "svg":
            return "data:image/svg+xml;base64," + base64.b64encode(self.svg.encode()).decode("ascii")
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")

    def write(self, path) -> None:
        """Write the chart to ``path``: SVG where it ends in ``.svg``, PNG otherwise."""
        from pathlib import Path

        path = Path(path)
        if path.suffix.lower() == ".svg":
            path.write_text(self.svg, encoding="utf-8")
        else:
            path.write_bytes(self.png)


def new_figure(width: float = 8.0, height: float = 4.0) -> Figure:
    """A figure of ``width`` x ``height`` inches on its own Agg canvas."""
    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    return figure


def figure_chart(figure: Figure, title: str) -> Chart:
    """Render ``figure`` as PNG and SVG.

    >>> figure = new_figure(2, 1)
    >>> _ = figure.add_subplot(1, 1, 1).plot([0, 1], [0, 1])
    >>> chart = figure_chart(figure, "line")
    >>> chart.png[:8] == b"\\x89PNG\\r\\n\\x1a\\n", chart.svg == figure_chart(figure, "line").svg
    (True, True)
    """
    with rc_context(_DETERMINISTIC):
        png, svg = io.BytesIO(), io.StringIO()
        figure.savefig(png, format="png", dpi=_PNG_DPI, metadata={"Software": None})
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return Chart(png=png.getvalue(), svg=svg.getvalue(), title=title)
