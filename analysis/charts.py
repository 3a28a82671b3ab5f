"""Charts for the report: a matplotlib figure (Agg, no display) as PNG bytes and SVG text."""
from __future__ import annotations

import io
from dataclasses import dataclass

__all__ = ["Chart", "figure_chart", "new_figure"]


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
