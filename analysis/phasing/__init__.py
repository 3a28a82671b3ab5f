"""The engineer's phasing path: a phasing plan read from any vector file or CAD export, a schedule table, and a proposal of start dates that keeps the site within the limit."""
from __future__ import annotations

__all__: list[str] = []
