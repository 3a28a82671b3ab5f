"""Coordinate reference systems worked out once: CRSs, their codes and transformers, cached.

pyproj answers slowly for a CRS that carries no EPSG code (a shapefile's ESRI WKT: reading it,
identifying it with ``to_authority`` and building a transformer from it each take tens to
hundreds of milliseconds). Every CRS question of the package goes through the functions
here, which answer each CRS (by its definition text) and each pair of CRSs once per process.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Optional, Union

import numpy as np
import shapely
from pyproj import CRS, Transformer

from .threads import each_piece

__all__ = [
    "crs_of",
    "authority",
    "epsg_code",
    "crs_label",
    "same_crs",
    "transformer",
    "transform_geometries",
    "to_crs",
    "CrsInput",
]

# What the functions take: a pyproj CRS, an authority string ("EPSG:2260"), WKT, or an EPSG code.
CrsInput = Union[CRS, str, int]
_PIECE_VERTICES = 1 << 16  # vertices transformed together by transform_geometries


def _key(crs: CrsInput) -> Union[str, int]:
    """The text a CRS was made from (a pyproj CRS keeps it): the cache key of that CRS."""
    return crs.srs if isinstance(crs, CRS) else crs


class _ByKey:
    """A CRS handed to a cache by its definition text alone: hashing a pyproj CRS writes its
    WKT and comparing two asks PROJ, which is the work the caches here are there to save."""

    __slots__ = ("crs", "key")

    def __init__(self, crs: CRS):
        self.key, self.crs = _key(crs), crs

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other) -> bool:
        return isinstance(other, _ByKey) and self.key == other.key


def crs_of(value: CrsInput) -> CRS:
    """``CRS.from_user_input(value)``, read once per definition (a CRS is returned as is)."""
    if isinstance(value, CRS):
        return value
    return _crs_of(value)


@lru_cache(maxsize=256)
def _crs_of(value: Union[str, int]) -> CRS:
    return CRS.from_user_input(value)


def authority(crs: CrsInput) -> Optional[tuple[str, str]]:
    """``(authority, code)`` of ``crs`` (``("EPSG", "2260")``), or None where none matches."""
    return _authority(_ByKey(crs_of(crs)))


@lru_cache(maxsize=256)
def _authority(given: _ByKey) -> Optional[tuple[str, str]]:
    found = given.crs.to_authority()
    return (str(found[0]), str(found[1])) if found else None


def epsg_code(crs: CrsInput) -> Optional[int]:
    """The EPSG code of ``crs`` (``to_epsg``), or None where it has none."""
    return _epsg(_ByKey(crs_of(crs)))


@lru_cache(maxsize=256)
def _epsg(given: _ByKey) -> Optional[int]:
    found = given.crs.to_epsg()
    return int(found) if found else None


def crs_label(crs: CrsInput) -> str:
    """``EPSG:2260`` where the CRS has an authority code, else its name (for reports)."""
    found = authority(crs)
    return ":".join(found) if found else crs_of(crs).name


def same_crs(a: CrsInput, b: CrsInput) -> bool:
    """Whether ``a`` and ``b`` are the same CRS, axis order aside (then nothing is transformed)."""
    return _same(_ByKey(crs_of(a)), _ByKey(crs_of(b)))


@lru_cache(maxsize=256)
def _same(a: _ByKey, b: _ByKey) -> bool:
    return bool(a.crs.equals(b.crs, ignore_axis_order=True))


def transformer(from_crs: CrsInput, to_crs: CrsInput) -> Transformer:
    """The transformer (x, y order whatever the CRS's axes) from ``from_crs`` to ``to_crs``,
    built once per pair."""
    return _transformer(_ByKey(crs_of(from_crs)), _ByKey(crs_of(to_crs)))


@lru_cache(maxsize=256)
def _transformer(a: _ByKey, b: _ByKey) -> Transformer:
    return Transformer.from_crs(a.crs, b.crs, always_xy=True)


def transform_geometries(geometries: np.ndarray, from_crs: CrsInput, to_crs: CrsInput) -> np.ndarray:
    """Shapely geometries (an object array) from ``from_crs`` into ``to_crs``; Z kept where
    there is one (as geopandas transforms them).

    The vertices are moved a piece at a time (``_PIECE_VERTICES`` of them): the same few
    small arrays serve every piece, where one array of every vertex (and its copies) would
    be fresh memory to fault in, which costs as much as PROJ's own work."""
    geometries = np.asarray(geometries, dtype=object)
    if same_crs(from_crs, to_crs) or not len(geometries):
        return geometries
    move = transformer(from_crs, to_crs).transform
    result = geometries.copy()
    has_z = shapely.has_z(geometries)
    counts = shapely.get_num_coordinates(geometries)
    for include_z in (False, True):
        chosen = np.flatnonzero(has_z == include_z)
        pieces = _pieces(chosen, counts[chosen])
        # The pieces are independent: moved in threads (PROJ releases the GIL).
        moved = each_piece(partial(_moved_at, geometries, move, include_z), pieces)
        for piece, done in zip(pieces, moved):
            result[piece] = done
    return result


def _pieces(positions: np.ndarray, counts: np.ndarray) -> list:
    """``positions`` cut into consecutive runs of about ``_PIECE_VERTICES`` vertices."""
    if not len(positions):
        return []
    ends = np.cumsum(counts)
    cuts = np.searchsorted(ends, np.arange(_PIECE_VERTICES, ends[-1], _PIECE_VERTICES)) + 1
    return [p for p in np.split(positions, np.unique(cuts[cuts < len(positions)])) if len(p)]


def _moved_at(geometries: np.ndarray, move, include_z: bool, piece: np.ndarray) -> np.ndarray:
    return _moved(geometries[piece], move, include_z)


def _moved(geometries: np.ndarray, move, include_z: bool) -> np.ndarray:
    """``geometries`` with each vertex moved by ``move`` (a transformer's ``transform``)."""
    coords = shapely.get_coordinates(geometries, include_z=include_z)
    if not len(coords):
        return geometries
    if len(coords) == 1:
        # One vertex (a point): pyproj's point call, given numbers. pyproj 3.7 tries arrays of
        # one element as numbers first (NumPy's "ndim > 0 to a scalar" DeprecationWarning).
        coords[0] = move(*coords[0].tolist())
        return shapely.set_coordinates(geometries.copy(), coords)
    axes = [np.ascontiguousarray(coords[:, k]) for k in range(coords.shape[1])]
    move(*axes, inplace=True)  # each axis contiguous and moved in place: no copy by pyproj
    for k, axis in enumerate(axes):
        coords[:, k] = axis
    return shapely.set_coordinates(geometries.copy(), coords)


def to_crs(frame, crs: CrsInput):
    """A GeoDataFrame (or GeoSeries) in ``crs``: ``frame.to_crs(crs)`` with the transformer
    from the cache; a frame already in ``crs`` is returned as it is."""
    target = crs_of(crs)
    if frame.crs is None:
        return frame.to_crs(target)  # geopandas's own error: the frame has no CRS to start from
    if same_crs(frame.crs, target):
        return frame if frame.crs is target else frame.set_crs(target, allow_override=True)
    moved = transform_geometries(np.asarray(frame.geometry.values, dtype=object), frame.crs, target)
    if hasattr(frame, "set_geometry"):  # a GeoDataFrame: the geometry column replaced
        out = frame.copy()
        column = frame.geometry.name
        out[column] = type(frame.geometry)(moved, index=frame.index, crs=target)
        return out  # its CRS is its geometry column's (geopandas 0.12 and 1.x): no second copy
    return type(frame)(moved, index=frame.index, crs=target, name=frame.name)
