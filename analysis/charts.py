"""Charts for the report: a matplotlib figure (Agg, no display) as PNG bytes and SVG text."""
from __future__ import annotations

import io
from collections.abc import MutableMapping
from dataclasses import dataclass

__all__ = ["Chart", "LazyCharts", "figure_chart", "new_figure"]


@dataclass(frozen=True)
class Chart:
    """One chart of a review, in both forms the outputs need."""

    png: bytes
    svg: str
    title: str


def new_figure(width_in: float = 6.4, height_in: float = 3.6):
    """A matplotlib ``Figure`` on the Agg canvas (no pyplot, no display, thread-safe enough)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width_in, height_in), dpi=100)
    FigureCanvasAgg(figure)
    return figure


def figure_chart(figure, title: str) -> Chart:
    """Render ``figure`` to PNG and SVG (SVG without a clock-dependent date, so it is stable)."""
    png, svg = io.BytesIO(), io.StringIO()
    figure.savefig(png, format="png", metadata={"Software": None})
    figure.savefig(svg, format="svg", metadata={"Date": None})
    return Chart(png=png.getvalue(), svg=svg.getvalue(), title=title)


class LazyCharts(MutableMapping):
    """A review's charts by name, drawn only when something reads them (the report).

    ``LazyCharts(producer, ...)``: each producer is a callable returning ``{name: Chart}``;
    drawing costs about a second a review, which a JSON-only run need not pay.
    """

    def __init__(self, *producers):
        self._charts: dict = {}
        self._pending = list(producers)

    def _draw(self):
        while self._pending:
            self._charts.update(self._pending.pop(0)())

    def __getitem__(self, name):
        self._draw()
        return self._charts[name]

    def __setitem__(self, name, chart):
        self._charts[name] = chart

    def __delitem__(self, name):
        self._draw()
        del self._charts[name]

    def __iter__(self):
        self._draw()
        return iter(self._charts)

    def __len__(self):
        self._draw()
        return len(self._charts)
