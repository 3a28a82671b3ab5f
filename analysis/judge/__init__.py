"""Judging sites against the reference layers: one engine for the review (one site) and the
screen (many), whichever store measured them.

- :mod:`.measure`: what each site meets (wetlands: overlap and adjacent-area acres per pair);
- :mod:`.evidence`: the typed evidence about a site's waters and watersheds;
- :mod:`.decide`: Condition A (SWPPP C(1)) decided from that evidence, once;
- :mod:`.wording`: every sentence about a water, a watershed or a wetland.

It reads nothing and writes nothing: ``checks`` (findings) and ``screen`` (table rows) are its
adapters; it imports neither.
"""
