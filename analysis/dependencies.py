"""What the analysis needs that this Python lacks; imports nothing heavy to find out."""
from __future__ import annotations

import importlib.util

__all__ = ["REQUIREMENTS", "missing", "geos_conflict"]

# distribution name -> (import name, minimum version or None)
REQUIREMENTS = {"shapely": ("shapely", "2.0"), "geopandas": ("geopandas", "0.12"),
                "pyproj": ("pyproj", "3.4"), "numpy": ("numpy", None), "pandas": ("pandas", None)}


def missing(host_geos: tuple[int, ...] | None = None) -> list[str]:
    """Human-readable lines for each missing or too-old dependency; empty when all is well.

    ``host_geos`` is the (major, minor) GEOS version of a host program that links GEOS itself
    (QGIS): a shapely built for a newer GEOS would mix the two libraries there.
    """
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
    if host_geos is not None and not problems:
        import shapely

        conflict = geos_conflict(shapely.__version__, shapely.geos_version, host_geos)
        if conflict:
            problems.append(conflict)
    return problems


def geos_conflict(shapely_version: str, shapely_geos: tuple, host_geos: tuple) -> str | None:
    """Why this shapely cannot share a process with a host linking GEOS ``host_geos``, if so.

    The dynamic linker binds shapely's GEOS calls to the host's GEOS where it has them and to
    shapely's own GEOS where it does not; a shapely built for a newer GEOS minor version than
    the host's then mixes two GEOS libraries in one call sequence.

    >>> geos_conflict("2.2.0", (3, 14, 1), (3, 11, 1))[:44]
    'a shapely 2 built for GEOS 3.11 or older (fo'
    >>> geos_conflict("2.0.7", (3, 11, 4), (3, 11, 1)) is None
    True
    """
    if tuple(shapely_geos[:2]) <= tuple(host_geos[:2]):
        return None
    host = f"{host_geos[0]}.{host_geos[1]}"
    return (f"a shapely 2 built for GEOS {host} or older (found shapely {shapely_version}, built "
            f"for GEOS {shapely_geos[0]}.{shapely_geos[1]}: this QGIS uses GEOS {host} and the "
            f"two would mix; for GEOS 3.11 that is shapely>=2,<2.1)")


def _as_tuple(text: str) -> tuple:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)
