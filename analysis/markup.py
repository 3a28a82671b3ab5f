"""Text made safe inside HTML and XML (element text and quoted attributes), and on a terminal:
one way to escape each."""

from __future__ import annotations

import html
import re

__all__ = ["escape", "breakable", "terminal"]

# A long id (``hydrology_claims:2``) may break after these, and only there.
_SEPARATOR = re.compile(r"(?<=[_:])(?=\S)")
# C0 controls but tab, DEL, C1 controls, and the line and paragraph separators: an ANSI escape
# sequence (ESC [ ...) or a carriage return in a project name could rewrite what a user sees.
_CONTROL = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")


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


def terminal(value: object) -> str:
    """``value`` as one line for a terminal: every control character (ESC, CR, LF, ...)
    written as its escape, so that text from a file prints as data.

    >>> terminal("Site\\x1b[2J\\rname\\n")
    'Site\\\\x1b[2J\\\\rname\\\\n'
    """
    return _CONTROL.sub(
        lambda m: repr(m.group())[1:-1] if m.group() not in "\u2028\u2029" else f"\\u{ord(m.group()):04x}",
        "" if value is None else str(value),
    )
