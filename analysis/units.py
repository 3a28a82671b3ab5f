"""Units: every conversion constant, written once; planar areas and lengths in international
acres and feet from the profile's area CRS (whose own unit, metre or US survey foot, is read
from the CRS itself)."""

from __future__ import annotations

from typing import Optional, Union

import numpy as np
import shapely
from numpy.typing import ArrayLike, NDArray
from pyproj import CRS, Geod

from .crs import crs_of, transformer

__all__ = [
    "ACRE_M2",
    "FOOT_M",
    "SQ_FT_PER_ACRE",
    "ACRES_PER_SQ_MI",
    "INCHES_PER_FOOT",
    "CM_PER_INCH",
    "MM_PER_INCH",
    "acres",
    "square_feet",
    "unit_metres",
    "feet",
    "crs_units",
    "ellipsoidal_acres",
    "acres_text",
]

ACRE_M2 = 4046.8564224  # international acre in square metres, exactly (docs/CONTRACT.md)
FOOT_M = 0.3048  # international foot in metres, exactly
SQ_FT_PER_ACRE = 43560.0  # square feet in an acre (TR-55's unit conversion; = ACRE_M2 / FOOT_M**2)
ACRES_PER_SQ_MI = 640.0  # acres in a square mile (TR-55's unit peak discharge is per sq mi)
INCHES_PER_FOOT = 12.0
CM_PER_INCH = 2.54  # exactly
MM_PER_INCH = 25.4  # exactly

# What the functions below take: a CRS as pyproj reads one; one geometry or an array of them.
CrsLike = Union[CRS, str, int]
Geometries = Union[shapely.Geometry, ArrayLike]


def unit_metres(crs: CrsLike) -> float:
    """Metres per linear unit of a projected CRS (US survey foot: 1200/3937)."""
    crs = crs_of(crs)
    if not crs.is_projected:
        raise ValueError(f"areas are measured in a projected CRS, not {crs.name}")
    return float(crs.axis_info[0].unit_conversion_factor)


def _area_m2(geometries: Geometries, crs: CrsLike) -> NDArray[np.float64]:
    factor = unit_metres(crs) ** 2
    area: NDArray[np.float64] = shapely.area(np.asarray(geometries, dtype=object))
    return area * factor


def acres(geometries: Geometries, crs: CrsLike) -> NDArray[np.float64] | float:
    """Planar area of each geometry (or of one geometry) in international acres.

    >>> from shapely import box
    >>> round(acres(box(0, 0, 208.71, 208.71), "EPSG:2260"), 4)
    1.0
    """
    result = _area_m2(geometries, crs) / ACRE_M2
    return float(result) if np.ndim(result) == 0 else result


def square_feet(geometries: Geometries, crs: CrsLike) -> NDArray[np.float64] | float:
    """Planar area of each geometry (or of one geometry) in international square feet."""
    result = _area_m2(geometries, crs) / FOOT_M**2
    return float(result) if np.ndim(result) == 0 else result


def ellipsoidal_acres(geometry: Optional[shapely.Geometry], crs: CrsLike) -> tuple[float, str]:
    """The area of ``geometry`` (in ``crs``) on ``crs``'s ellipsoid (pyproj ``Geod``, as QGIS's
    measure tool), in acres, and the method said in words."""
    crs = crs_of(crs)
    geographic = crs.geodetic_crs
    ellipsoid = geographic.ellipsoid if geographic is not None else None
    if geometry is None or shapely.is_empty(geometry) or geographic is None or ellipsoid is None:
        return float(acres(geometry, crs)) if geometry is not None else 0.0, "planar"
    to_degrees = transformer(crs, geographic)  # built once per CRS (cached)
    lonlat = shapely.transform(geometry, lambda xy: np.column_stack(to_degrees.transform(xy[:, 0], xy[:, 1])))
    geod = Geod(a=ellipsoid.semi_major_metre, rf=ellipsoid.inverse_flattening)
    area, _perimeter = geod.geometry_area_perimeter(lonlat)
    return abs(area) / ACRE_M2, f"ellipsoidal area on {ellipsoid.name}, pyproj Geod"


def acres_text(value: float, threshold: float) -> str:
    """``value`` in acres, with the decimals it needs not to read as ``threshold``
    (0.99982 is "0.9998", never "1.00" beside "under 1").

    >>> acres_text(0.99982, 1.0), acres_text(2.5, 1.0)
    ('0.9998', '2.50')
    """
    for decimals in (2, 4, 6):
        if round(value, decimals) != threshold or value == threshold:
            return f"{value:.{decimals}f}"
    return f"{value:.8f}"


def feet(lengths: ArrayLike, crs: CrsLike) -> NDArray[np.float64] | float:
    """Lengths in the linear unit of ``crs`` as international feet."""
    result = np.asarray(lengths, dtype=float) * (unit_metres(crs) / FOOT_M)
    return float(result) if np.ndim(result) == 0 else result


def crs_units(length_ft: float, crs: CrsLike) -> float:
    """International feet as a length in the linear unit of ``crs``."""
    return float(length_ft) * FOOT_M / unit_metres(crs)
