"""What the analysis needs that this Python lacks; imports nothing heavy to find out."""
from __future__ import annotations

import importlib.util

__all__ = ["REQUIREMENTS", "missing"]

# distribution name -> (import name, minimum version or None)
REQUIREMENTS = {"shapely": ("shapely", "2.0"), "geopandas": ("geopandas", "0.12"),
                "pyproj": ("pyproj", "3.4"), "numpy": ("numpy", None), "pandas": ("pandas", None)}


def missing() -> list[str]:
    """Human-readable lines for each missing or too-old dependency; empty when all is well."""
    from importlib.metadata import PackageNotFoundError, version

    problems = []
    for dist, (module, minimum) in REQUIREMENTS.items():
        if importlib.util.find_spec(module) is None:
            problems.append(f"{dist}" + (f" >= {minimum}" if minimum else "") + " (not installed)")
            continue
        if minimum is None:
            continue
        try:
            found = version(dist)
        except PackageNotFoundError:
            continue
        if _as_tuple(found) < _as_tuple(minimum):
            problems.append(f"{dist} >= {minimum} (found {found})")
    if importlib.util.find_spec("pyogrio") is None and importlib.util.find_spec("fiona") is None:
        problems.append("fiona or pyogrio (not installed)")
    return problems


def _as_tuple(text: str) -> tuple:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
