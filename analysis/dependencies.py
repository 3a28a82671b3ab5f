"""What the analysis needs that this Python lacks, and the pip requirement that would fix each.

The needs come from ``analysis/data/requirements.txt``, the one list of the project's
dependencies (pyproject.toml reads it too), which ships inside the plugin's bundled ``analysis``.
What a distribution's package reports as its version is not trusted alone: a shapely whose
version is unknown (Debian testing's ``0+unknown``) is accepted when it works as shapely 2.
"""

from __future__ import annotations

import importlib.util
import operator
import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "REQUIREMENTS_FILE",
    "REQUIREMENTS",
    "OPTIONAL",
    "SHAPELY_WHEEL_GEOS",
    "Need",
    "Requirement",
    "read_requirements",
    "needs",
    "missing",
    "geos_conflict",
    "shapely_spec",
    "shapely_2_api",
]

REQUIREMENTS_FILE = Path(__file__).with_name("data") / "requirements.txt"


def _as_tuple(text: str) -> tuple:
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


@dataclass(frozen=True)
class Requirement:
    """One line of the requirements file: ``name``, ``minimum`` (``>=``) and ``below`` (``<``)
    versions or None, and whether its environment marker holds for this Python (``applies``)."""

    name: str
    minimum: str | None = None
    below: str | None = None
    applies: bool = True
    text: str = ""


_LINE = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*([^;]*?)\s*(?:;\s*(.*))?$")
_MARKER = re.compile(r"""^\s*(python_version|sys_platform)\s*(<=|>=|==|!=|<|>)\s*["']([^"']*)["']\s*$""")
_COMPARE = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "==": operator.eq,
    "!=": operator.ne,
}


def read_requirements(
    path: Path = REQUIREMENTS_FILE, python: tuple = sys.version_info[:2], platform: str = sys.platform
) -> list[Requirement]:
    """The requirements of ``path`` (pip's format: ``name>=x,<y; marker``), in their order.

    Markers may compare ``python_version`` or ``sys_platform`` (joined by ``and``); anything else
    is refused, so the list cannot say more than this check understands.

    >>> [r.name for r in read_requirements()][:3]
    ['shapely', 'geopandas', 'pandas']
    >>> [(r.name, r.applies) for r in read_requirements(python=(3, 10)) if r.name == "tomli"]
    [('tomli', True)]
    """
    out = []
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        match = _LINE.match(line)
        if not match:
            raise ValueError(f"{path}: cannot read the requirement {raw!r}")
        name, specifiers, marker = match.groups()
        minimum = below = None
        for spec in filter(None, (s.strip() for s in specifiers.split(","))):
            if spec.startswith(">="):
                minimum = spec[2:].strip()
            elif spec.startswith("<") and not spec.startswith("<="):
                below = spec[1:].strip()
            else:
                raise ValueError(f"{path}: only >= and < are understood, not {spec!r} ({raw!r})")
        applies = True
        for clause in filter(None, re.split(r"\s+and\s+", marker or "")):
            found = _MARKER.match(clause)
            if not found:
                raise ValueError(f"{path}: cannot evaluate the marker {clause!r} ({raw!r})")
            variable, op, value = found.groups()
            if variable == "python_version":
                applies &= _COMPARE[op](tuple(python[:2]), _as_tuple(value)[:2])
            else:
                applies &= _COMPARE[op](platform, value)
        out.append(Requirement(name.lower(), minimum, below, bool(applies), line))
    return out


# distribution name -> (import name, minimum version or None), for this Python (markers applied).
REQUIREMENTS = {r.name: (r.name.replace("-", "_"), r.minimum) for r in read_requirements() if r.applies}

# Requirements the plugin can start without: the analysis imports them only for one feature
# (rasterio: map sheets given as rasters; matplotlib: the hydrology charts) and says so there.
OPTIONAL = {"rasterio", "matplotlib"}

# shapely (major, minor) -> the GEOS (major, minor) its PyPI wheels are built with and carry
# (2.0.0-2.0.7: GEOS 3.11.x; 2.1.x: 3.13.x; 2.2.0: 3.14.x). A host linking GEOS itself (QGIS)
# can only share its process with a shapely whose GEOS is not newer than its own (geos_conflict).
SHAPELY_WHEEL_GEOS = {(2, 0): (3, 11), (2, 1): (3, 13), (2, 2): (3, 14)}

# PyPI wheels of these carry their own copy of a C library QGIS links too; on Linux two copies in
# qgis_process crashed it on exit (requirements/qgis.txt): there the distribution's package is
# the way, never pip.
OWN_LIBRARY = {"pyproj": "PROJ", "pyogrio": "GDAL", "fiona": "GDAL"}


@dataclass(frozen=True)
class Need:
    """One thing this Python lacks.

    Attributes
    ----------
    name : str
        The distribution, e.g. ``"shapely"``.
    problem : str
        For a person: what is needed and what was found, e.g. ``"shapely >= 2.0 (found 1.8.5)"``.
    spec : str or None
        The pip requirement that fixes it (``"shapely>=2,<2.1"``); None where pip is not the way.
    instead : str or None
        Where ``spec`` is None, what to do instead.
    """

    name: str
    problem: str
    spec: str | None = None
    instead: str | None = None


def needs(host_geos: tuple[int, ...] | None = None, platform: str = sys.platform) -> list[Need]:
    """Each missing or too old dependency, with the pip requirement that fixes it where pip can.

    Imports nothing heavy: versions come from the loaded module or the distribution metadata.

    Parameters
    ----------
    host_geos : tuple of int, optional
        The (major, minor) GEOS version of a host program that links GEOS itself (QGIS): a
        shapely built for a newer GEOS would mix the two libraries there, and the shapely to
        install is the newest whose wheels fit it.
    platform : str
        ``sys.platform`` of the Python asked about (decides which packages pip may bring).
    """
    found_needs = []
    for requirement in read_requirements():
        dist, minimum = requirement.name, requirement.minimum
        if not requirement.applies or dist in OPTIONAL:
            continue
        found = _found_version(dist, dist.replace("-", "_"))
        if found is False:
            problem = f"{dist}" + (f" >= {minimum}" if minimum else "") + " (not installed)"
        elif not _known(found):
            # A distribution's build may not know its own version (Debian testing's shapely says
            # "0+unknown"): what it can do decides.
            if dist != "shapely" or shapely_2_api() is None:
                continue
            problem = f"shapely 2 (found shapely {found or 'of unknown version'}: {shapely_2_api()})"
        elif minimum is not None and _as_tuple(found) < _as_tuple(minimum):
            problem = f"{dist} >= {minimum} (found {found})"
        elif requirement.below is not None and _as_tuple(found) >= _as_tuple(requirement.below):
            problem = f"{dist} < {requirement.below} (found {found})"
        else:
            continue
        found_needs.append(_with_spec(dist, problem, minimum, host_geos, platform))
    if importlib.util.find_spec("pyogrio") is None and importlib.util.find_spec("fiona") is None:
        found_needs.append(
            _with_spec("pyogrio", "fiona or pyogrio (not installed)", None, host_geos, platform)
        )
    if host_geos is not None and not any(n.name in ("shapely", "numpy") for n in found_needs):
        try:
            import shapely
        except ImportError as err:  # e.g. a shapely built for another numpy
            found_needs.append(
                _with_spec("shapely", f"a working shapely 2 ({err})", "2.0", host_geos, platform)
            )
        else:
            conflict = geos_conflict(shapely.__version__, shapely.geos_version, host_geos)
            if conflict:
                found_needs.append(_with_spec("shapely", conflict, "2.0", host_geos, platform))
    return found_needs


def shapely_2_api() -> str | None:
    """None when the importable shapely works as shapely 2, else what fails.

    Asked where the version says nothing: the calls the analysis relies on, each checked for
    its shapely 2 answer (vectorised functions on arrays, ``STRtree.query`` with a predicate
    giving indices, WKB round trips, ``GeometryType``).

    >>> shapely_2_api() is None
    True
    """
    try:
        import numpy as np
        import shapely

        points = shapely.points(np.array([[0.0, 0.0], [10.0, 10.0]]))
        areas = shapely.area(shapely.buffer(points, 1.0, quad_segs=16))
        if not (
            isinstance(areas, np.ndarray) and areas.shape == (2,) and abs(float(areas[0]) - 3.1365) < 0.01
        ):
            return "shapely.area is not vectorised"
        hits = shapely.STRtree(points).query(shapely.box(-1, -1, 1, 1), predicate="intersects")
        if list(np.asarray(hits).tolist()) != [0]:
            return "STRtree.query(predicate=...) does not give indices"
        if not shapely.equals(shapely.from_wkb(shapely.to_wkb(points)), points).all():
            return "from_wkb/to_wkb do not round-trip"
        if shapely.get_type_id(points[0]) != shapely.GeometryType.POINT:
            return "GeometryType is not shapely 2's"
    except Exception as err:  # noqa: BLE001 - any failure means: not a working shapely 2
        return f"{type(err).__name__}: {err}"
    return None


def missing(host_geos: tuple[int, ...] | None = None) -> list[str]:
    """Human-readable lines for each missing or too-old dependency; empty when all is well.

    ``host_geos`` as in :func:`needs`.
    """
    return [need.problem for need in needs(host_geos)]


def shapely_spec(host_geos: tuple[int, ...] | None) -> str | None:
    """The pip requirement for a shapely 2 whose wheels fit a host linking GEOS ``host_geos``.

    None where no shapely 2 wheel is built for a GEOS that old.

    >>> shapely_spec((3, 11)), shapely_spec((3, 13)), shapely_spec((3, 15)), shapely_spec(None)
    ('shapely>=2,<2.1', 'shapely>=2,<2.2', 'shapely>=2,<2.3', 'shapely>=2')
    >>> shapely_spec((3, 10)) is None
    True
    """
    if host_geos is None:
        return "shapely>=2"
    fitting = [release for release, geos in SHAPELY_WHEEL_GEOS.items() if geos <= tuple(host_geos[:2])]
    if not fitting:
        return None
    # Capped at the newest release known to fit: a later one may be built for a newer GEOS.
    major, minor = max(fitting)
    return f"shapely>={major},<{major}.{minor + 1}"


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
    spec = shapely_spec(host_geos)
    fits = f"that is {spec}" if spec else "no PyPI wheel fits: use a shapely built for it"
    return (
        f"a shapely 2 built for GEOS {host} or older (found shapely {shapely_version}, built "
        f"for GEOS {shapely_geos[0]}.{shapely_geos[1]}: this QGIS uses GEOS {host} and the "
        f"two would mix; for GEOS {host} {fits})"
    )


def _known(version) -> bool:
    """Whether ``version`` says something: ``None``, ``"0+unknown"``, ``"0.0.0"`` do not.

    >>> _known("2.1.1"), _known("0+unknown"), _known(None), _known("2.0.7+ds")
    (True, False, False, True)
    """
    return (
        bool(version)
        and re.match(r"\d+", str(version)) is not None
        and _as_tuple(str(version).split("+")[0]) > (0, 0, 0)
    )


def _found_version(dist: str, module: str):
    """The version of ``dist`` this Python would use; False when absent, None when unknown."""
    loaded = sys.modules.get(module)
    if loaded is not None and getattr(loaded, "__version__", None):
        # Already imported (by QGIS or another plugin): that copy is the one in use, whatever
        # the metadata first on sys.path says.
        return loaded.__version__
    if importlib.util.find_spec(module) is None:
        return False
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def _with_spec(dist, problem, minimum, host_geos, platform) -> Need:
    """``problem`` with the pip requirement that fixes it, or why pip is not the way."""
    if dist == "shapely":
        spec = shapely_spec(host_geos)
        if spec is None:
            return Need(
                dist,
                problem,
                instead=(
                    f"no shapely 2 wheel on PyPI is built for GEOS {host_geos[0]}.{host_geos[1]} "
                    "or older: install your distribution's shapely 2, built for QGIS's GEOS"
                ),
            )
        return Need(dist, problem, spec)
    if dist in OWN_LIBRARY and platform.startswith("linux"):
        return Need(
            dist,
            problem,
            instead=(
                f"its PyPI wheel carries its own {OWN_LIBRARY[dist]} beside QGIS's: install your "
                f"distribution's package (e.g. python3-{dist})"
            ),
        )
    if dist == "numpy":
        # GDAL's Python bindings (osgeo.gdal_array) on Debian 12 are built for numpy 1.
        spec = "numpy<2" if importlib.util.find_spec("osgeo") is not None else "numpy"
        return Need(dist, problem, spec)
    return Need(dist, problem, f"{dist}>={minimum}" if minimum else dist)
