"""The one Jinja2 environment of every page the tool writes from a template (the report, the
comment letter): autoescaped, and every value shown as :func:`~analysis.markup.report_shown`
shows it (a bidirectional override or a control in a name or a reason written as its escape),
so that no template can forget either."""

from __future__ import annotations

from functools import cache

from ..markup import breakable, report_shown

__all__ = ["template"]


@cache
def _environment():
    from jinja2 import Environment, PackageLoader, select_autoescape  # only where a page is written

    env = Environment(
        loader=PackageLoader("analysis.report", "templates"),
        finalize=report_shown,
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["breakable"] = breakable
    return env


def template(name: str):
    """The template ``name`` of analysis/report/templates."""
    return _environment().get_template(name)
