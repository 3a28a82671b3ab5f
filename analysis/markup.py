"""Text made safe inside HTML and XML (element text and quoted attributes), and on a terminal:
one way to escape each."""

from __future__ import annotations

import html
import re

__all__ = [
    "escape",
    "breakable",
    "terminal",
    "shown",
    "shown_lines",
    "json_shown",
    "escape_shown",
    "report_shown",
    "document_text",
]

# A long id (``hydrology_claims:2``) may break after these, and only there.
_SEPARATOR = re.compile(r"(?<=[_:])(?=\S)")
# The one rule for text from a file shown to a person (terminal, HTML report, QGIS panel): every
# character that is not itself visible is shown as its escape. That is the control characters
# (Unicode category Cc: C0 but tab and line feed where lines are kept, DEL, C1), whose ANSI
# sequences (ESC [2J, OSC 8 hyperlinks) or carriage return could rewrite what a user sees; the
# line and paragraph separators (Zl, Zp); and every format character (Cf): the bidirectional
# overrides, embeddings, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E/U+200F,
# U+061C), which reorder what is shown so that a name reads as another, and the zero-width
# characters (U+200B-U+200D joiners included, U+2060-U+2064, U+FEFF, the soft hyphen), which
# make two names that differ look the same. A name is data: it is shown as it is held, every
# character accounted for. Cf as listed here is a superset of Python's unicodedata (3.10 to
# 3.12; tests/analysis/test_fuzz_injection.py checks it).
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f"
)
_UNSEEN = re.compile(f"[\x00-\x1f\x7f-\x9f\u2028\u2029{_FORMAT}]")
# The same, keeping tab and line feed: for text of several lines (a command's output, a report).
_UNSEEN_IN_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029{_FORMAT}]")
# What XML 1.0 cannot hold at all, beyond the controls above: the surrogates and U+FFFE/U+FFFF.
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")


def escape(value: object) -> str:
    """``value`` as text for HTML or XML: ``&``, ``<``, ``>`` and both quotes escaped; None is ''.

    >>> escape('<script>alert("x")</script> & \\'y\\'')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;y&#x27;'
    """
    return html.escape("" if value is None else str(value), quote=True)


def breakable(value: object, longer_than: int = 16) -> str:
    """``value`` escaped, with a break opportunity (``<wbr>``) after ``_`` and ``:`` in each
    word longer than ``longer_than``: a narrow column wraps a long id at its parts, never
    inside a word. The text is markup now: a template marks it ``| safe``.

    >>> breakable("smp:BR-2 and hydrology_claims:2 <b>")
    'smp:BR-2 and hydrology_<wbr>claims:<wbr>2 &lt;b&gt;'
    """
    words = re.split(r"(\s+)", "" if value is None else str(value))
    return "".join(
        "<wbr>".join(escape(part) for part in _SEPARATOR.split(word))
        if len(word) > longer_than
        else escape(word)
        for word in words
    )


def _escape_unseen(match: re.Match[str]) -> str:
    char = match.group()
    return repr(char)[1:-1] if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def shown(value: object) -> str:
    """``value`` as one line of text a person reads: every character that is not itself
    visible (control, format, line separator) written as its escape (``\\x1b``,
    ``\\u202e``), so that text from a file shows as data and as what it holds.

    >>> shown("Lot\\u202e1\\u2066 \\x1b[2J\\r")
    'Lot\\\\u202e1\\\\u2066 \\\\x1b[2J\\\\r'
    """
    return _UNSEEN.sub(_escape_unseen, "" if value is None else str(value))


def shown_lines(value: object) -> str:
    """``value`` as :func:`shown` does, its line feeds and tabs kept: for text of several
    lines (what a command prints, a report's text).

    >>> shown_lines("a\\u202eb\\n\\tc\\r")
    'a\\\\u202eb\\n\\tc\\\\r'
    """
    return _UNSEEN_IN_LINES.sub(_escape_unseen, "" if value is None else str(value))


def terminal(value: object) -> str:
    """``value`` as one line for a terminal (:func:`shown`).

    >>> terminal("Site\\x1b[2J\\rname\\n")
    'Site\\\\x1b[2J\\\\rname\\\\n'
    """
    return shown(value)


def json_shown(text: str) -> str:
    """JSON ``text`` with every character :func:`shown_lines` escapes written as its JSON
    escape (``\\u202e``): the same JSON (such characters occur only inside its strings), and
    nothing unseen on a terminal it is printed to.

    >>> json_shown('{"name": "Lot\\u202e1\\x85"}')
    '{"name": "Lot\\\\u202e1\\\\u0085"}'
    """
    return _UNSEEN_IN_LINES.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def escape_shown(value: object) -> str:
    """``value`` as text a person reads in HTML: :func:`shown_lines`, then :func:`escape` (a
    page written without the report's templates: the notice of violation, the certification
    form). Not for values a program matches (a style's category values keep :func:`escape`).

    >>> escape_shown("<b>\\u202e</b>")
    '&lt;b&gt;\\\\u202e&lt;/b&gt;'
    """
    return escape(shown_lines(value))


def report_shown(value: object) -> object:
    """Every expression's value as the report shows it (the report's Jinja2 ``finalize``, before the
    autoescape: no template can forget it): the characters not seen (a bidirectional override,
    an isolate, a zero-width joiner, a control) written visibly as their escapes (``\\u202e``,
    :func:`shown_lines`). Shown, not isolated with ``<bdi>``: an override
    inside an isolate still reverses the name's own letters, so the report would show a name
    other than the one the plan holds; the escape shows exactly what it holds. Markup (``|
    safe``) keeps its tags; numbers and None are left to Jinja2."""
    if isinstance(value, str) and hasattr(value, "__html__"):  # Markup: the same type, its tags kept
        return type(value)(shown_lines(value))
    if isinstance(value, str):
        return shown_lines(value)
    return value


def document_text(value: object) -> str:
    """``value`` as text inside a document's XML (a Word letter): :func:`shown_lines`, and
    every character XML 1.0 cannot hold (a lone surrogate, U+FFFE, U+FFFF) written as its
    escape too, where an XML writer would refuse the whole document.

    >>> document_text("Lot\\u202e\\ufffe1")
    'Lot\\\\u202e\\\\ufffe1'
    """
    return _NOT_XML.sub(lambda m: f"\\u{ord(m.group()):04x}", shown_lines(value))
