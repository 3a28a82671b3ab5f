"""TR-55 runoff before and after development, water quality volume, and the engineer's own figures.

SWPPP D(4)-(5): curve numbers from soils' hydrologic group and land cover (TR-55 Tables 2-2a and
2-2c, held as data in ``analysis/data``), composite CN per drainage area, runoff depth and
volume for the profile's design storms, peak discharge by TR-55's graphical method (Chapter 4)
within its limits, the water quality volume of the NYS Design Manual, and a comparison with the
figures the SWPPP states (``hydrology_claims``).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from numpy.typing import ArrayLike

from ..charts import Chart, figure_chart, new_figure
from ..errors import InputError
from ..findings import INFO, NEEDS_REVIEW, NOT_APPLICABLE, PASS, WARN, Finding
from ..geometry import as_multi, in_family, polygon_part
from ..limits import RASTER_MAX_DECIMATION, RASTER_MAX_PIXELS
from ..profile import DesignStorm, Pair, RulesProfile
from ..progress import Progress
from ..tr55 import (
    COVER_KEYS,
    HSG_GROUPS,
    cn_table,
    nlcd_cover_table,
    pond_swamp_table,
    resolve_hsg,
    unit_peak_table,
    valid_hsg,
)
from ..units import ACRES_PER_SQ_MI, INCHES_PER_FOOT, SQ_FT_PER_ACRE, square_feet
from ..values import present
from .base import Check, CheckResult
from .conditions import Condition

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from .context import ReviewContext

__all__ = [
    "CHECKS",
    "COVER_KEYS",
    "HSG_GROUPS",
    "HYDROLOGY_LAYERS",
    "curve_number",
    "runoff_depth",
    "initial_abstraction",
    "water_quality_volume",
    "unit_peak_discharge",
    "peak_discharge",
    "Peak",
    "MethodLimits",
    "resolve_hsg",
    "valid_hsg",
    "cover_pieces",
    "composite",
    "Composite",
    "land_cover_from_raster",
    "nlcd_cover_table",
    "HydrologyResult",
    "analyse_hydrology",
    "check_hydrology_pre_post",
    "hydrology_charts",
    "hydrology_paths",
    "hydrology_table",
    "cn_layer",
]

log = logging.getLogger(__name__)
# Layers of docs/CONTRACT.md "Hydrology inputs and API": the check needs the first four.
HYDROLOGY_LAYERS = ("drainage_area", "soils", "land_cover_pre", "land_cover_post")


def curve_number(cover: str, hsg: str, dual: str = "undrained") -> int:
    """TR-55 runoff curve number of a cover key and soil group (Tables 2-2a, 2-2c).

    >>> curve_number("woods_good", "B"), curve_number("commercial", "C/D")
    (55, 95)

    Raises ``KeyError`` for an unknown cover key, ``ValueError`` for an unknown soil group or a
    cover the tables give no number for (``water``).
    """
    if cover not in cn_table():
        raise KeyError(f"{cover!r} is not a cover key (one of {', '.join(COVER_KEYS)})")
    value: Optional[int] = cn_table()[cover]["cn"][resolve_hsg(hsg, dual)]
    if value is None:
        raise ValueError(f"TR-55 Tables 2-2a and 2-2c give no curve number for {cover!r}")
    return value


# --- runoff, volume, peak ---------------------------------------------------------------------


def initial_abstraction(cn: ArrayLike) -> np.ndarray:
    """Ia = 0.2 S, S = 1000/CN - 10 (inches; TR-55 eq. 2-2 and 2-4; Table 4-1 lists it)."""
    return 0.2 * (1000.0 / np.asarray(cn, dtype=float) - 10.0)


def runoff_depth(rain_in: ArrayLike, cn: ArrayLike) -> float | np.ndarray:
    """Runoff depth Q in inches (TR-55 eq. 2-3), 0 where P <= Ia = 0.2S.

    Q = (P - 0.2S)^2 / (P + 0.8S), S = 1000/CN - 10. Arrays broadcast; scalars give a float.

    >>> round(runoff_depth(6.0, 70), 2)  # TR-55 example 2-1
    2.81
    """
    p = np.asarray(rain_in, dtype=float)
    s = 1000.0 / np.asarray(cn, dtype=float) - 10.0
    excess = p - 0.2 * s
    q = np.where(excess > 0, np.square(np.maximum(excess, 0.0)) / (p + 0.8 * s), 0.0)
    return float(q) if q.ndim == 0 else q


def water_quality_volume(
    rain_in: float, impervious_fraction: float, area_acres: float, min_rv: Optional[float] = None
) -> float:
    """WQv = P Rv A / 12 in acre-feet, Rv = 0.05 + 0.009 I (I in percent impervious).

    ``min_rv`` is the Design Manual's minimum runoff coefficient (a profile value), if any.

    >>> round(water_quality_volume(1.0, 0.5, 12.0), 4)
    0.5
    """
    if not 0.0 <= impervious_fraction <= 1.0:
        raise ValueError(f"impervious_fraction must be 0 to 1, not {impervious_fraction}")
    rv = 0.05 + 0.009 * (100.0 * impervious_fraction)
    if min_rv is not None:
        rv = max(rv, float(min_rv))
    return rain_in * rv * area_acres / INCHES_PER_FOOT


@dataclass(frozen=True)
class MethodLimits:
    """TR-55 graphical method's stated limits (Chapter 4), read from the profile."""

    tc_hours: Pair
    cn: Pair
    ia_p: Pair
    max_pond_swamp_pct: float

    @classmethod
    def from_profile(cls, profile: RulesProfile) -> MethodLimits:
        return cls(
            profile.hydrology.tc_hours_range,
            profile.hydrology.cn_range,
            profile.hydrology.ia_p_range,
            profile.hydrology.max_pond_swamp_pct,
        )


def unit_peak_discharge(tc_hours: float, ia_p: float, rainfall_type: str) -> float:
    """Unit peak discharge qu in csm/in (TR-55 Exhibit 4, Table F-1 coefficients).

    ``ia_p`` is taken within the table's range (TR-55: "use the limiting value" outside it);
    between two tabulated Ia/P values qu is interpolated linearly, as on the exhibit.
    """
    if rainfall_type not in unit_peak_table():
        raise ValueError(
            f"rainfall distribution {rainfall_type!r} is not one of "
            f"{', '.join(unit_peak_table())} (TR-55 Table F-1)"
        )
    ratios, c0, c1, c2 = unit_peak_table()[rainfall_type]
    log_tc = math.log10(tc_hours)
    log_qu = c0 + c1 * log_tc + c2 * log_tc**2
    return float(np.interp(ia_p, ratios, 10.0**log_qu))


@dataclass
class Peak:
    """A peak discharge, or why the graphical method gives none."""

    cfs: Optional[float]
    unit_peak_csm_in: Optional[float] = None
    ia_p: Optional[float] = None
    fp: float = 1.0
    note: str = ""


def peak_discharge(
    area_acres: float,
    cn: float,
    rain_in: float,
    tc_hours: Optional[float],
    rainfall_type: str,
    limits: MethodLimits,
    pond_swamp_pct: float = 0.0,
) -> Peak:
    """qp = qu Am Q Fp (TR-55 eq. 4-1) in cfs, or ``Peak(None, note=...)`` outside the limits.

    Tc and CN outside the method's stated range give no figure (the method does not apply);
    Ia/P outside 0.1 to 0.5 uses the limiting value, as TR-55 Chapter 4 instructs, and says so.
    """
    if tc_hours is None or not np.isfinite(tc_hours):
        return Peak(None, note="no time of concentration (drainage_area.tc_hours) is given")
    low, high = limits.tc_hours
    if not low <= tc_hours <= high:
        return Peak(None, note=f"Tc {tc_hours:g} h is outside the graphical method's {low:g} to {high:g} h")
    low, high = limits.cn
    if not low <= cn <= high:
        return Peak(None, note=f"CN {cn:.1f} is outside the graphical method's {low:g} to {high:g}")
    if pond_swamp_pct > limits.max_pond_swamp_pct:
        return Peak(
            None,
            note=f"ponds and swamps cover {pond_swamp_pct:g}% (over "
            f"{limits.max_pond_swamp_pct:g}%): route them instead",
        )
    ratio = float(initial_abstraction(cn)) / rain_in
    low, high = limits.ia_p
    used = min(max(ratio, low), high)
    note = (
        ""
        if used == ratio
        else (f"Ia/P {ratio:.3f} outside {low:g} to {high:g}: TR-55's limiting value {used:g} used")
    )
    qu = unit_peak_discharge(tc_hours, used, rainfall_type)
    fp = float(np.interp(pond_swamp_pct, *pond_swamp_table()))
    q = float(runoff_depth(rain_in, cn))  # scalars: one depth
    return Peak(qu * (area_acres / ACRES_PER_SQ_MI) * q * fp, qu, ratio, fp, note)


# --- composite curve numbers ------------------------------------------------------------------


@dataclass
class Composite:
    """The area-weighted CN of one drainage area in one condition, and what it rests on."""

    drainage_area: str
    condition: str  # "pre" or "post"
    area_sq_ft: float
    cn: Optional[float]
    impervious_fraction: float
    areas: list[dict[str, Any]] = field(default_factory=list)  # {"cover", "hsg", "sq_ft", "cn"}
    problems: list[str] = field(default_factory=list)

    @property
    def area_acres(self) -> float:
        return self.area_sq_ft / SQ_FT_PER_ACRE


def cover_pieces(
    drainage: gpd.GeoDataFrame, soils: gpd.GeoDataFrame, cover: gpd.GeoDataFrame, dual: str
) -> gpd.GeoDataFrame:
    """Drainage area x soil x cover pieces (area CRS) with ``name``, ``hsg``, ``cover``, ``cn``:
    the polygonal parts each drainage area shares with each soil and then each cover polygon,
    in that order (drainage area, soil, cover), as ``geopandas.overlay``'s intersection with
    ``keep_geom_type`` gives them, by one STRtree query a layer (:func:`_shared_pieces`)."""
    names = np.asarray(drainage["name"], dtype=object)
    d, s, shared = _shared_pieces(np.asarray(drainage.geometry.values), np.asarray(soils.geometry.values))
    d2, c, shared = _shared_pieces(shared, np.asarray(cover.geometry.values))
    d, s = d[d2], s[d2]
    hsg = [resolve_hsg(v, dual) for v in np.asarray(soils["hsg"], dtype=object)[s]]
    covers = np.asarray(cover["cover"], dtype=object)[c]
    pieces = gpd.GeoDataFrame(
        {"name": names[d], "hsg": pd.Series(hsg, dtype=object), "cover": covers},
        geometry=gpd.GeoSeries(shared, crs=drainage.crs),
    )
    pieces["cn"] = [cn_table()[c]["cn"][g] for c, g in zip(pieces["cover"], pieces["hsg"])]
    pieces["sq_ft"] = square_feet(pieces.geometry.values, pieces.crs) if len(pieces) else []
    return pieces


def _shared_pieces(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(left index, right index, shared polygonal part)`` of every pair of ``left`` and
    ``right`` polygons that share an area, by left then right (a touch along an edge, or a
    shared line or point, is no piece)."""
    left, right = np.asarray(left, dtype=object), np.asarray(right, dtype=object)
    if not len(left) or not len(right):
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64), np.array([], dtype=object)
    li, ri = shapely.STRtree(right).query(left, predicate="intersects")
    order = np.lexsort((ri, li))
    li, ri = li[order].astype(np.int64), ri[order].astype(np.int64)
    shared = np.array([polygon_part(g) for g in shapely.intersection(left[li], right[ri])], dtype=object)
    keep = ~np.asarray(shapely.is_empty(shared), dtype=bool) & (shapely.area(shared) > 0)
    return li[keep], ri[keep], shared[keep]


def composite(
    drainage: gpd.GeoDataFrame,
    soils: gpd.GeoDataFrame,
    cover: gpd.GeoDataFrame,
    condition: str,
    dual: str,
    unmapped_tolerance: float,
) -> tuple[list[Composite], gpd.GeoDataFrame]:
    """Area-weighted CN per drainage area (TR-55 Worksheet 2) and the pieces it was made of.

    A drainage area more than ``unmapped_tolerance`` (a fraction) of which has no soil group or
    no cover, or with a cover the tables give no CN for, gets ``cn=None`` and the problem named.
    """
    pieces = cover_pieces(drainage, soils, cover, dual).assign(condition=condition)
    totals = dict(
        zip(drainage["name"], np.asarray(square_feet(drainage.geometry.values, drainage.crs), dtype=float))
    )
    results = []
    for name, total in totals.items():
        mine = pieces[pieces["name"] == name]
        grouped = mine.groupby(["cover", "hsg"], sort=True)["sq_ft"].sum()
        areas = [
            {"cover": c, "hsg": g, "sq_ft": float(a), "cn": cn_table()[c]["cn"][g]}
            for (c, g), a in grouped.items()
        ]
        problems = []
        mapped = float(mine["sq_ft"].sum())
        if total > 0 and (mapped - total) / total > unmapped_tolerance:
            problems.append(
                f"its soils or {condition}-development land cover polygons overlap "
                f"({(mapped - total) / total:.1%} of it is counted twice)"
            )
        elif total <= 0 or (total - mapped) / total > unmapped_tolerance:
            share = 1.0 if total <= 0 else (total - mapped) / total
            problems.append(f"{share:.1%} of it has no soil group or no {condition}-development land cover")
        missing = [a for a in areas if a["cn"] is None]
        for a in missing:
            problems.append(f"{a['cover']} ({a['sq_ft']:,.0f} sq ft) has no TR-55 curve number")
        known = [a for a in areas if a["cn"] is not None]
        weight = sum(a["sq_ft"] for a in known)
        cn = sum(a["cn"] * a["sq_ft"] for a in known) / weight if weight > 0 else None
        impervious = (
            (sum(cn_table()[a["cover"]]["impervious"] * a["sq_ft"] for a in areas) / mapped)
            if mapped > 0
            else 0.0
        )
        results.append(
            Composite(name, condition, float(total), None if problems else cn, impervious, areas, problems)
        )
    return results, pieces


def land_cover_from_raster(
    path: str | Path, drainage: gpd.GeoDataFrame, classes: Optional[dict[int, Optional[str]]] = None
) -> gpd.GeoDataFrame:
    """Cover polygons (area CRS, ``cover`` and ``nlcd`` columns) from an NLCD raster.

    Each pixel inside a drainage area counts whole; a pixel the drainage area's edge cuts counts
    by its exact part inside (shapely intersection, computed for the edge pixels only). Pixels
    of an unmapped class or nodata are left out, so the composite reports them as unmapped.
    """
    try:
        import rasterio
        from rasterio.enums import Resampling
        from rasterio.transform import Affine
        from rasterio.windows import Window, from_bounds
    except ImportError:
        raise InputError(
            "reading a land-cover raster needs rasterio, which is not installed",
            path=path,
            fix="install rasterio (Debian: python3-rasterio; pip: "
            "pip install rasterio), or give land-cover polygons",
        ) from None

    classes = nlcd_cover_table() if classes is None else classes
    try:
        src = rasterio.open(str(path))
    except Exception as err:  # noqa: BLE001 - any driver error means the same to a user
        raise InputError(
            f"the land-cover raster could not be read ({err})",
            path=path,
            fix="give a GeoTIFF of NLCD classes",
        ) from None
    with src:
        if src.crs is None:
            raise InputError(
                "the land-cover raster has no coordinate reference system",
                path=path,
                fix="assign its CRS (e.g. with gdal_edit.py -a_srs)",
            )
        area_crs = drainage.crs
        shape = shapely.union_all(np.asarray(drainage.to_crs(src.crs).geometry.values))
        exact = from_bounds(*shape.bounds, transform=src.transform)
        col0, row0 = math.floor(exact.col_off), math.floor(exact.row_off)
        window = Window(
            col0,
            row0,
            math.ceil(exact.col_off + exact.width) - col0,
            math.ceil(exact.row_off + exact.height) - row0,
        )
        try:
            window = window.intersection(Window(0, 0, src.width, src.height))
        except Exception:  # noqa: BLE001 - rasterio's WindowError: no overlap at all
            return gpd.GeoDataFrame({"nlcd": [], "cover": []}, geometry=[], crs=src.crs).to_crs(drainage.crs)
        out_shape, factor = _read_shape(path, int(window.height), int(window.width))
        if factor > 1:
            log.warning(
                "%s",
                InputError(
                    f"the land-cover raster's {int(window.width)} x {int(window.height)} pixels over "
                    f"the drainage areas were read at 1/{factor} of its resolution ({out_shape[1]} x "
                    f"{out_shape[0]}, each pixel the nearest one's class), within the "
                    f"{RASTER_MAX_PIXELS:,} pixels read",
                    path=path,
                    fix="give the raster at the resolution of its classes (NLCD's 30 m)",
                ),
            )
        # Nearest: a class is a label, never averaged
        data = src.read(1, window=window, masked=True, out_shape=out_shape, resampling=Resampling.nearest)
        transform = src.window_transform(window) * Affine.scale(
            window.width / out_shape[1], window.height / out_shape[0]
        )
    rows, cols = (index.ravel().astype(float) for index in np.indices(data.shape))
    a, b, c, d, e, f = (transform.a, transform.b, transform.c, transform.d, transform.e, transform.f)
    if b or d:
        raise InputError(
            "the land-cover raster is rotated", path=path, fix="warp it to a north-up grid (gdalwarp)"
        )
    x0, y0 = a * cols + c, e * rows + f
    x1, y1 = x0 + a, y0 + e
    boxes = shapely.box(np.minimum(x0, x1), np.minimum(y0, y1), np.maximum(x0, x1), np.maximum(y0, y1))
    values = np.ma.getdata(data).ravel()
    valid = ~np.ma.getmaskarray(data).ravel()
    shapely.prepare(shape)
    inside = shapely.contains_properly(shape, boxes)
    edge = shapely.intersects(shape, boxes) & ~inside
    pieces = boxes.copy()
    pieces[edge] = shapely.intersection(boxes[edge], shape)
    odd = edge & ~in_family(pieces, "polygon")  # lines where an edge only touches
    pieces[odd] = [polygon_part(g) for g in pieces[odd]]
    keep = (inside | edge) & valid & (shapely.area(pieces) > 0)
    codes = values[keep].astype(int)
    classes_present, which = np.unique(codes, return_inverse=True)
    covers = np.array([classes.get(int(v)) for v in classes_present], dtype=object)[which]
    mapped = covers != None  # noqa: E711 - elementwise on an object array
    frame = gpd.GeoDataFrame(
        {"nlcd": codes[mapped], "cover": covers[mapped]}, geometry=pieces[keep][mapped], crs=src.crs
    )
    return frame.to_crs(area_crs)


def _read_shape(path: str | Path, height: int, width: int) -> tuple[tuple[int, int], int]:
    """The (rows, columns) to read a window of ``height`` x ``width`` pixels as, at most
    ``RASTER_MAX_PIXELS``, and the decimation (1: full resolution); a window that would need
    more than ``RASTER_MAX_DECIMATION`` is refused (its classes could not be told apart)."""
    pixels = height * width
    if pixels <= RASTER_MAX_PIXELS:
        return (height, width), 1
    factor = math.ceil(math.sqrt(pixels / RASTER_MAX_PIXELS))
    while math.ceil(height / factor) * math.ceil(width / factor) > RASTER_MAX_PIXELS:
        factor += 1
    if factor > RASTER_MAX_DECIMATION:
        raise InputError(
            f"the land-cover raster has {width} x {height} pixels over the drainage areas "
            f"({pixels:,}): read within {RASTER_MAX_PIXELS:,} pixels, each would stand for "
            f"{factor} x {factor} (more than {RASTER_MAX_DECIMATION} x {RASTER_MAX_DECIMATION})",
            path=path,
            fix="resample the raster to its classes' resolution (gdalwarp -tr 30 30 -r mode), "
            "or check its georeferencing (pixel size and units)",
        )
    return (math.ceil(height / factor), math.ceil(width / factor)), factor


# --- the check --------------------------------------------------------------------------------


@dataclass
class HydrologyResult:
    """Everything the hydrology analysis found, for the review, the report and the algorithm."""

    rows: list[dict[str, Any]] = field(default_factory=list)  # per drainage area x storm (CONTRACT)
    composites: list[Composite] = field(default_factory=list)
    water_quality: list[dict[str, Any]] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    pieces: Optional[gpd.GeoDataFrame] = None  # the CN layer

    def measurements(self) -> dict[str, Any]:
        return {
            "hydrology": self.rows,
            "hydrology_cover_areas": [
                {"drainage_area": c.drainage_area, "condition": c.condition, **a}
                for c in self.composites
                for a in c.areas
            ],
            "water_quality_volume": self.water_quality,
        }


def hydrology_table(result: HydrologyResult) -> pd.DataFrame:
    """One flat row per drainage area and storm (pre_*/post_* columns), with the area's WQv."""
    wqv = {w["drainage_area"]: w["wqv_cf"] for w in result.water_quality}
    rows = []
    for r in result.rows:
        flat = {
            k: r[k] for k in ("drainage_area", "storm", "rain_in", "rainfall_source", "rainfall_distribution")
        }
        for condition in ("pre", "post"):
            for key in ("cn", "area_acres", "runoff_in", "volume_cf", "peak_cfs", "note"):
                flat[f"{condition}_{key}"] = r[condition].get(key)
        flat["post_wqv_cf"] = wqv.get(r["drainage_area"])
        rows.append(flat)
    return pd.DataFrame(rows)


def cn_layer(result: HydrologyResult) -> gpd.GeoDataFrame:
    """The drainage area x soil x cover pieces with their CN, as MultiPolygons (one type)."""
    pieces = result.pieces
    columns = ["condition", "name", "hsg", "cover", "cn", "sq_ft"]
    if pieces is None or len(pieces) == 0:
        return gpd.GeoDataFrame({c: [] for c in columns}, geometry=[], crs=None)
    geometries = as_multi(pieces.geometry.values, ("polygon",))
    out = gpd.GeoDataFrame(
        pieces[columns].rename(columns={"name": "drainage_area"}), geometry=list(geometries), crs=pieces.crs
    )
    out["cn"] = pd.to_numeric(out["cn"], errors="coerce").astype(float)
    return out


def hydrology_paths(
    site: str | Path,
    profile: RulesProfile | str | None = None,
    land_cover_rasters: Optional[dict[str, Optional[str | Path]]] = None,
    progress: Optional[Progress] = None,
) -> HydrologyResult:
    """Read the hydrology layers of a site-plan GeoPackage (and rasters) and analyse them.

    For ``swppp:hydrology``: needs ``drainage_area``, ``soils`` and a land cover (layer or
    raster) for each condition; no project or disturbance layers.
    """
    from ..profile import load_profile
    from ..progress import SILENT
    from ..siteplan.plan import load_layers

    progress = progress or SILENT
    rules = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    progress.step(0.0, f"reading hydrology layers of {Path(site).name}")
    layers, _repairs = load_layers(site, rules, HYDROLOGY_LAYERS + ("hydrology_claims",))
    if layers.get("drainage_area") is None or layers.get("soils") is None:
        raise InputError(
            "the hydrology needs a drainage_area and a soils layer",
            path=site,
            fix="add the layers docs/CONTRACT.md's 'Hydrology inputs' describes",
        )
    land_cover = {}
    for condition, raster in (land_cover_rasters or {}).items():
        if raster:
            progress.step(0.2, f"reading land-cover raster {Path(raster).name}")
            land_cover[condition] = land_cover_from_raster(raster, layers["drainage_area"])
    for condition in ("pre", "post"):
        if land_cover.get(condition) is None and layers.get(f"land_cover_{condition}") is None:
            raise InputError(
                f"no {condition}-development land cover: neither a land_cover_{condition} layer nor a raster",
                path=site,
                fix=f"add land_cover_{condition} or give a land-cover raster",
            )
    progress.step(0.5, "computing TR-55 runoff before and after development")
    return analyse_hydrology(layers, rules, land_cover)


def _storms(profile: RulesProfile) -> list[DesignStorm]:
    return list(profile.hydrology.storms)


def analyse_hydrology(
    layers: dict[str, Any], profile: RulesProfile, land_cover: Optional[dict[str, gpd.GeoDataFrame]] = None
) -> HydrologyResult:
    """Runoff, peaks and WQv per drainage area and storm, pre and post, and the claims' check.

    ``layers`` holds the site plan's layers by contract name (``drainage_area``, ``soils``,
    ``land_cover_pre``, ``land_cover_post``, optionally ``hydrology_claims``); ``land_cover``
    may give cover frames (e.g. from :func:`land_cover_from_raster`) for ``pre``/``post`` that
    stand in for the layers.
    """
    land_cover = land_cover or {}
    section = profile.section("hydrology_pre_post")
    dual = profile.hydrology.dual_soil_groups
    tolerance = profile.hydrology.unmapped_tolerance_fraction
    rain_type = profile.hydrology.rainfall_distribution
    limits = MethodLimits.from_profile(profile)
    drainage = layers["drainage_area"]
    drainage = drainage.assign(name=drainage["name"].astype(str))
    result = HydrologyResult()
    frames = []
    by_condition = {}
    for condition in ("pre", "post"):
        cover = land_cover.get(condition)
        if cover is None:
            cover = layers[f"land_cover_{condition}"]
        composites, pieces = composite(drainage, layers["soils"], cover, condition, dual, tolerance)
        result.composites += composites
        by_condition[condition] = {c.drainage_area: c for c in composites}
        frames.append(pieces)
    result.pieces = pd.concat(frames, ignore_index=True) if frames else None
    tc = dict(zip(drainage["name"], pd.to_numeric(drainage["tc_hours"], errors="coerce")))
    ponds = (
        dict(zip(drainage["name"], pd.to_numeric(drainage["pond_swamp_pct"], errors="coerce").fillna(0.0)))
        if "pond_swamp_pct" in drainage.columns
        else {}
    )
    storms = _storms(profile)
    for name in drainage["name"]:
        for storm in storms:
            row = {
                "drainage_area": name,
                "storm": storm.name,
                "rain_in": storm.depth_in,
                "rainfall_source": storm.source,
                "rainfall_distribution": rain_type,
            }
            for condition in ("pre", "post"):
                row[condition] = _figures(
                    by_condition[condition][name],
                    storm,
                    tc.get(name),
                    ponds.get(name, 0.0),
                    rain_type,
                    limits,
                )
            result.rows.append(row)
    result.water_quality = [_wqv(by_condition["post"][name], profile) for name in drainage["name"]]
    result.findings = (
        _peak_findings(result, profile, section)
        + _wqv_findings(result, profile)
        + _claim_findings(result, layers.get("hydrology_claims"), profile, section)
    )
    return result


def _figures(
    comp: Composite,
    storm: DesignStorm,
    tc_hours: Optional[float],
    pond_pct: float,
    rain_type: str,
    limits: MethodLimits,
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "cn": comp.cn,
        "area_acres": comp.area_acres,
        "runoff_in": None,
        "volume_cf": None,
        "peak_cfs": None,
        "note": "; ".join(comp.problems),
    }
    rain = storm.depth_in
    if comp.cn is None or rain is None:
        if rain is None:
            out["note"] = "no design rainfall depth in the profile"
        return out
    q = float(runoff_depth(rain, comp.cn))  # scalars: one depth
    out["runoff_in"] = q
    out["volume_cf"] = q / INCHES_PER_FOOT * comp.area_sq_ft
    peak = peak_discharge(comp.area_acres, comp.cn, rain, tc_hours, rain_type, limits, pond_pct)
    out["peak_cfs"] = peak.cfs
    out["unit_peak_csm_in"] = peak.unit_peak_csm_in
    out["note"] = peak.note
    return out


def _wqv(comp: Composite, profile: RulesProfile) -> dict[str, Any]:
    rain = profile.hydrology.water_quality_rain_in
    out: dict[str, Any] = {
        "drainage_area": comp.drainage_area,
        "rain_in": rain,
        "rainfall_source": profile.hydrology.water_quality_rain_source,
        "impervious_fraction": comp.impervious_fraction,
        "area_acres": comp.area_acres,
        "wqv_cf": None,
    }
    if rain is not None and not comp.problems:
        acre_feet = water_quality_volume(
            rain, comp.impervious_fraction, comp.area_acres, profile.hydrology.min_rv
        )
        out["wqv_cf"] = acre_feet * SQ_FT_PER_ACRE
    return out


def _illustrative(profile: RulesProfile) -> bool:
    return profile.hydrology.illustrative_rainfall


def _peak_findings(result: HydrologyResult, profile: RulesProfile, section: str) -> list[Finding]:
    control = profile.hydrology.peak_control_storms
    out = []
    caveat = (
        (
            " (computed with the profile's illustrative design rainfall: replace it with NOAA "
            "Atlas 14 values for the site)"
        )
        if _illustrative(profile)
        else ""
    )
    for row in result.rows:
        pre, post = row["pre"]["peak_cfs"], row["post"]["peak_cfs"]
        where = f"drainage area {row['drainage_area']}, {row['storm']} storm"
        features = [f"drainage_area:{row['drainage_area']}"]
        if pre is None or post is None:
            why = "; ".join(n for n in (row["pre"]["note"], row["post"]["note"]) if n)
            out.append(
                Finding(
                    "hydrology_pre_post",
                    NEEDS_REVIEW,
                    section,
                    f"{where}: no peak discharge by TR-55's graphical method ({why}); "
                    "check the SWPPP's figure by hand",
                    features=features,
                )
            )
            continue
        if row["storm"] not in control:
            continue
        if post > pre:
            out.append(
                Finding(
                    "hydrology_pre_post",
                    WARN,
                    section,
                    f"{where}: post-development peak {post:.2f} cfs exceeds the "
                    f"pre-development {pre:.2f} cfs: the SWPPP should show "
                    f"{control[row['storm']]} for this storm (the Design Manual's "
                    f'criterion: D(5) asks for a "Comparison of postdevelopment '
                    f'stormwater runoff conditions with predevelopment conditions", '
                    f"and Performance and design criteria A makes the Design Manual "
                    f'"the official guides and specifications"){caveat}',
                    value=post,
                    limit=pre,
                    units="cfs",
                    features=features,
                )
            )
        else:
            out.append(
                Finding(
                    "hydrology_pre_post",
                    PASS,
                    section,
                    f"{where}: post-development peak {post:.2f} cfs does not exceed "
                    f"the pre-development {pre:.2f} cfs{caveat}",
                    value=post,
                    limit=pre,
                    units="cfs",
                    features=features,
                )
            )
    if _illustrative(profile):
        out.append(
            Finding(
                "hydrology_pre_post",
                NEEDS_REVIEW,
                section,
                f"the design rainfall depths of the rules profile '{profile.name}' "
                "are illustrative, not the site's: before relying on these figures, "
                f"copy the profile ({Path(profile.source).name}), set its "
                "[hydrology] storms' depth_in to the site's NOAA Atlas 14 24-hour "
                "point estimates (NOAA's Precipitation Frequency Data Server) and "
                "water_quality_rain_in to the site's 90% rainfall depth, set "
                "illustrative_rainfall = false, and review with that profile",
            )
        )
    return out


def _wqv_findings(result: HydrologyResult, profile: RulesProfile) -> list[Finding]:
    section = profile.section("water_quality_volume")
    out = []
    for row in result.water_quality:
        features = [f"drainage_area:{row['drainage_area']}"]
        if row["wqv_cf"] is None:
            why = (
                "no 90% rainfall depth in the profile"
                if row["rain_in"] is None
                else "the post-development curve number could not be made"
            )
            out.append(
                Finding(
                    "water_quality_volume",
                    NEEDS_REVIEW,
                    section,
                    f"drainage area {row['drainage_area']}: no water quality volume ({why})",
                    features=features,
                )
            )
            continue
        out.append(
            Finding(
                "water_quality_volume",
                INFO,
                section,
                f"drainage area {row['drainage_area']}: WQv {row['wqv_cf']:,.0f} cu ft "
                f"(P {row['rain_in']:g} in, {row['impervious_fraction']:.0%} impervious,"
                f" {row['area_acres']:.2f} acres)",
                value=row["wqv_cf"],
                units="cu ft",
                features=features,
            )
        )
    return out


_CLAIMS = (
    ("pre_peak_cfs", "pre", "peak_cfs", "cfs"),
    ("post_peak_cfs", "post", "peak_cfs", "cfs"),
    ("pre_volume_cf", "pre", "volume_cf", "cu ft"),
    ("post_volume_cf", "post", "volume_cf", "cu ft"),
)


def _claim_findings(
    result: HydrologyResult, claims: Optional[pd.DataFrame], profile: RulesProfile, section: str
) -> list[Finding]:
    """Each figure the SWPPP states against ours; beyond the tolerance is needs_review."""
    if claims is None or len(claims) == 0:
        return []
    tolerance = profile.hydrology.claim_tolerance_fraction
    rows = {(r["drainage_area"], r["storm"]): r for r in result.rows}
    wqv = {r["drainage_area"]: r for r in result.water_quality}
    out, agreed = [], []
    for fid, claim in claims.iterrows():
        key = (str(claim["drainage_area"]), str(claim["storm"]))
        label = f"hydrology_claims:{fid}"
        if key[0] not in wqv:
            raise InputError(
                f"drainage_area {key[0]!r} is not a drainage area of the plan ({', '.join(wqv)})",
                layer="hydrology_claims",
                feature=fid,
                field="drainage_area",
                fix="use the drainage area's name",
            )
        checks = []
        if present(claim.get("wqv_cf")):
            checks.append(("wqv_cf", float(claim["wqv_cf"]), wqv[key[0]]["wqv_cf"], "cu ft"))
        if any(present(claim.get(f)) for f, *_ in _CLAIMS):
            if key not in rows:
                raise InputError(
                    f"storm {key[1]!r} is not a design storm of the profile "
                    f"({', '.join(s.name for s in _storms(profile))})",
                    layer="hydrology_claims",
                    feature=fid,
                    field="storm",
                    fix="name the storm as the profile does",
                )
            for name, condition, figure, units in _CLAIMS:
                if present(claim.get(name)):
                    checks.append((name, float(claim[name]), rows[key][condition][figure], units))
        for name, stated, ours, units in checks:
            what = f"{key[0]}, {key[1]}: {name}"
            if ours is None:
                out.append(
                    Finding(
                        "hydrology_pre_post",
                        NEEDS_REVIEW,
                        section,
                        f"{what}: the SWPPP states {stated:,.2f} {units}; this tool "
                        "could not compute it to compare",
                        value=stated,
                        units=units,
                        features=[label],
                    )
                )
            elif abs(stated - ours) > tolerance * max(abs(ours), abs(stated)):
                out.append(
                    Finding(
                        "hydrology_pre_post",
                        NEEDS_REVIEW,
                        section,
                        f"{what}: the SWPPP states {stated:,.2f} {units}, TR-55 from the "
                        f"map gives {ours:,.2f} {units} (differs by more than "
                        f"{tolerance:.0%})",
                        value=stated,
                        limit=ours,
                        units=units,
                        features=[label],
                    )
                )
            else:
                agreed.append(what)
    if agreed:
        out.append(
            Finding(
                "hydrology_pre_post",
                PASS,
                section,
                f"{len(agreed)} figure(s) the SWPPP states agree with TR-55 from the "
                f"map within {tolerance:.0%}: " + "; ".join(agreed),
            )
        )
    return out


def check_hydrology_pre_post(
    layers: dict[str, Any],
    conditions: Mapping[str, Condition],
    profile: RulesProfile,
    land_cover: Optional[dict[str, gpd.GeoDataFrame]] = None,
) -> HydrologyResult:
    """The review's hydrology: applies where Condition A, B or C applies (SWPPP C, D(4)-(5))."""
    section = profile.section("hydrology_pre_post")
    applies = [k for k, c in conditions.items() if c.applies]
    undecided = [k for k, c in conditions.items() if not c.decided]
    if not applies and not undecided:
        return HydrologyResult(
            findings=[
                Finding(
                    "hydrology_pre_post",
                    NOT_APPLICABLE,
                    section,
                    "no hydrologic analysis is required: none of Conditions A, B and C applies",
                )
            ]
        )
    missing = [
        n
        for n in HYDROLOGY_LAYERS
        if layers.get(n) is None
        and not (n.startswith("land_cover_") and (land_cover or {}).get(n[11:]) is not None)
    ]
    if missing:
        why = (
            "where Condition " + " and ".join(applies) + " applies"
            if applies
            else "while Condition " + " and ".join(undecided) + " is undecided"
        )
        return HydrologyResult(
            findings=[
                Finding(
                    "hydrology_pre_post",
                    NEEDS_REVIEW,
                    section,
                    f"the SWPPP needs a pre/post hydrologic analysis {why}, but the plan has no "
                    f"{', '.join(missing)} layer: check the SWPPP's TR-55 figures by hand",
                )
            ]
        )
    return analyse_hydrology(layers, profile, land_cover)


def hydrology_charts(result: HydrologyResult) -> dict[str, Chart]:
    """One bar chart per storm: pre- and post-development peak discharge per drainage area."""
    charts: dict[str, Chart] = {}
    try:
        import matplotlib  # noqa: F401 - only to know whether charts can be drawn
    except ImportError:
        log.warning("matplotlib is not installed: the report has no hydrology charts")
        return charts
    storms = list(dict.fromkeys(r["storm"] for r in result.rows))
    for storm in storms:
        rows = [r for r in result.rows if r["storm"] == storm]
        names = [r["drainage_area"] for r in rows]
        pre = [r["pre"]["peak_cfs"] or 0.0 for r in rows]
        post = [r["post"]["peak_cfs"] or 0.0 for r in rows]
        figure = new_figure(6.4, 3.2)
        axes = figure.add_subplot(1, 1, 1)
        x = np.arange(len(names))
        axes.bar(x - 0.2, pre, 0.4, label="pre-development", color="#2e7d32")
        axes.bar(x + 0.2, post, 0.4, label="post-development", color="#c62828")
        for offset, condition in ((-0.2, "pre"), (0.2, "post")):  # no figure: say so, not 0
            for i, r in enumerate(rows):
                if r[condition]["peak_cfs"] is None:
                    axes.text(i + offset, 0, "n/a", ha="center", va="bottom", fontsize=8)
        axes.set_xticks(x)
        axes.set_xticklabels(names)
        axes.set_ylabel("peak discharge (cfs)")
        title = f"Peak discharge, {storm} 24-hour storm (TR-55 graphical method)"
        axes.set_title(title, fontsize=10)
        axes.legend(fontsize=8)
        figure.tight_layout()
        charts[f"hydrology_{storm}"] = figure_chart(figure, title)
    return charts


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    result = check_hydrology_pre_post(
        context.site.layers, context.decided("A", "B", "C"), context.profile, context.land_cover
    )
    return CheckResult(
        result.findings,
        result.measurements(),
        extra={"hydrology": result, "charts": lambda: hydrology_charts(result)},
    )


CHECKS = (
    Check(
        "hydrology",
        regulated=True,
        rules=("hydrology_pre_post", "water_quality_volume"),
        reads=(
            "site:drainage_area",
            "site:soils",
            "site:land_cover_pre",
            "site:land_cover_post",
            "site:hydrology_claims",
            "land_cover",
            "conditions",
        ),
        run=_run,
        needs=("condition_a", "condition_b", "condition_c"),
        doing="computing TR-55 runoff before and after development",
        weight=4.0,
    ),
)
