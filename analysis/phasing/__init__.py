"""The engineer's phasing path: a plan from any vector file or CAD export, its schedule, a proposal."""

from __future__ import annotations

__all__: list[str] = []
