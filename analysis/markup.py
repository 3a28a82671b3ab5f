"""Text made safe inside HTML and XML (element text and quoted attributes): one way to escape."""
from __future__ import annotations

import html

__all__ = ["escape"]


def escape(value: object) -> str:
    """``value`` as text for HTML or XML: ``&``, ``<``, ``>`` and both quotes escaped; None is ''.

    >>> escape('<script>alert("x")</script> & \\'y\\'')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#x27;y&#x27;'
    """
    return html.escape("" if value is None else str(value), quote=True)
