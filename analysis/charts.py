"""Charts for reports: a matplotlib figure as PNG bytes and deterministic SVG text.

A :class:`matplotlib.figure.Figure` on its own Agg canvas, never pyplot or the global backend:
the library draws the same in the CLI, in QGIS and in tests, leaks no figures, and leaves the
backend of a user's QGIS Python console as it was. matplotlib is imported only when a chart is
drawn, so a review that writes no report does not load it.
"""

from __future__ import annotations

import base64
import contextlib
import io
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # matplotlib is imported where a chart is drawn
    from pathlib import Path

    from matplotlib.figure import Figure
    from matplotlib.typing import RcKeyType

__all__ = ["Chart", "LazyCharts", "new_figure", "figure_chart", "plain_text"]

_PNG_DPI = 150
# Fixed ids and no date in the SVG: the same chart gives the same text on every run. Text is
# plain text: a phase named "$\\foo{$" is drawn as typed, never parsed as mathtext or TeX.
_DETERMINISTIC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "swppp-review",
    "svg.fonttype": "path",
    "text.parse_math": False,
    "text.usetex": False,
}


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

    def write(self, path: str | Path) -> None:
        """Write the chart to ``path`` (whole or not at all): SVG where it ends in ``.svg``,
        PNG otherwise."""
        from pathlib import Path

        from .io.files import write_all

        if Path(path).suffix.lower() == ".svg":
            write_all({path: lambda temp: temp.write_text(self.svg, encoding="utf-8")})
        else:
            write_all({path: lambda temp: temp.write_bytes(self.png)})


@contextlib.contextmanager
def plain_text() -> Iterator[None]:
    """Texts made inside the block are plain text: user text (a phase named ``$\\foo{$``) is
    never parsed as mathtext or TeX, at layout (``tight_layout``) or at rendering."""
    try:
        from matplotlib import rc_context
    except ImportError:  # no matplotlib: no charts are drawn
        yield
        return
    with rc_context({"text.parse_math": False, "text.usetex": False}):
        yield


def new_figure(width: float = 8.0, height: float = 4.0) -> Any:
    """A :class:`matplotlib.figure.Figure` of ``width`` x ``height`` inches on its own Agg canvas.

    Draw user text (names from the site plan) with ``parse_math=False``; :func:`figure_chart`
    makes every text of the figure plain text anyway before rendering it.

    Typed ``Any``, not ``Figure``: matplotlib's stubs take floats where its unit converters take
    the dates the phasing timeline draws with (``axvspan``, ``step``, ``set_xlim``)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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
    from matplotlib import rc_context
    from matplotlib.text import Text

    for text in figure.findobj(Text):  # user text is data: no mathtext ($...$)
        text.set_parse_math(False)
    with rc_context(_DETERMINISTIC):  # and the tick labels made while drawing
        png, svg = io.BytesIO(), io.StringIO()
        figure.savefig(png, format="png", dpi=_PNG_DPI, metadata={"Software": None})
        figure.savefig(svg, format="svg", metadata={"Date": None, "Creator": None})
    return Chart(png=png.getvalue(), svg=svg.getvalue(), title=title)


# What draws charts: a callable returning {name: Chart}
Producer = Callable[[], "dict[str, Chart]"]


class LazyCharts(MutableMapping[str, Chart]):
    """A review's charts by name, drawn only when something reads them (the report).

    ``LazyCharts(producer, ...)``: each producer is a callable returning ``{name: Chart}``;
    drawing costs about a second a review, which a JSON-only run need not pay.
    """

    def __init__(self, *producers: Producer) -> None:
        self._charts: dict[str, Chart] = {}
        self._pending = list(producers)

    def add(self, producer: Producer) -> None:
        """Queue another producer (a callable returning ``{name: Chart}``)."""
        self._pending.append(producer)

    def _draw(self) -> None:
        while self._pending:
            with plain_text():
                self._charts.update(self._pending.pop(0)())

    def __getitem__(self, name: str) -> Chart:
        self._draw()
        return self._charts[name]

    def __setitem__(self, name: str, chart: Chart) -> None:
        self._charts[name] = chart

    def __delitem__(self, name: str) -> None:
        self._draw()
        del self._charts[name]

    def __iter__(self) -> Iterator[str]:
        self._draw()
        return iter(self._charts)

    def __len__(self) -> int:
        self._draw()
        return len(self._charts)
