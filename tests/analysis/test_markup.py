"""One way to escape text for HTML and XML (analysis.markup.escape), used by every writer."""

import ast
from pathlib import Path

import pytest

import analysis
from analysis.markup import escape

PACKAGE = Path(analysis.__file__).resolve().parent


@pytest.mark.parametrize(
    "value, expected",
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ('say "hi"', "say &quot;hi&quot;"),
        ("O'Brien", "O&#x27;Brien"),
        ("Smith & Sons", "Smith &amp; Sons"),
        ("&amp;", "&amp;amp;"),  # text, not markup: escaped again
        (None, ""),
        (3.5, "3.5"),
        ("Route 17 – Forest Rd", "Route 17 – Forest Rd"),  # noqa: RUF001 - the en dash is the point
    ],
)
def test_escape(value, expected):
    assert escape(value) == expected


def test_an_escaped_attribute_cannot_be_closed_early():
    html = f'<p title="{escape(chr(34) + " onmouseover=" + chr(39) + "x")}">'
    assert html.count('"') == 2 and "'" not in html


def test_no_module_escapes_on_its_own():
    """html.escape is called in analysis.markup only: every HTML/XML writer goes through it."""
    callers = []
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:  # not .html, the report's
                modules = [node.module]
            else:
                continue
            if {"html", "markupsafe"} & {m.split(".")[0] for m in modules}:
                callers.append(path.relative_to(PACKAGE).as_posix())
    assert callers == ["markup.py"]
