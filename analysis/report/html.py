"""The HTML report: the report model (:mod:`.model`) through Jinja2, autoescaped, self-contained.

Every word comes from the model; the templates (``templates/``) only lay it out. Nothing loads
from outside the file: inline styles, and charts and map tiles as data: images.
"""

from __future__ import annotations

from ..findings import STATUS_COLOURS
from ..review import Review
from .model import CHART, SITE_MAP, Figure, Report, Table, build_report
from .site_map import HTML_FRAME_IN, site_map_charts
from .templating import template

__all__ = ["render_html", "render_report_html"]

_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _shares(table: Table) -> list:
    total = sum(table.widths) or 1
    return [f"{100 * w / total:.1f}" for w in table.widths]


def _pictures(review: Review):
    def pictures(figure: Figure) -> list:
        if figure.kind == SITE_MAP:
            return [
                {
                    "src": chart.data_uri("png"),
                    "title": tile.title,
                    "map": True,
                    "caption": f"{tile.title} when printed at 100% (not fitted to the page).",
                    "width": f"{HTML_FRAME_IN[0]:g}",
                }
                for tile, chart in site_map_charts(review)
            ]
        if figure.kind == CHART:
            return [
                {
                    "src": review.charts[name].data_uri("png"),
                    "title": review.charts[name].title,
                    "caption": review.charts[name].title,
                }
                for name in figure.names
            ]
        raise ValueError(f"unknown figure kind {figure.kind!r}")

    return pictures


def render_report_html(review: Review, report: Report) -> str:
    """``report`` (built from ``review``, which draws its figures) as one HTML document."""
    page = template("report.html.j2")
    return page.render(
        report=report,
        title=report.title,
        csp=_CSP,
        colours=STATUS_COLOURS,
        shares=_shares,
        pictures=_pictures(review),
    )


def render_html(review: Review, *, maps: bool = True) -> str:
    """The report as one HTML document; ``maps=False`` leaves out the site map pages (drawing
    them is most of the time), for checks of the report's text alone."""
    return render_report_html(review, build_report(review, maps=maps))
