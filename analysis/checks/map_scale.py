"""Site map scale (SWPPP B(2)): plan sheets, stated sheet scales and print-layout maps.

Three sources, one rule: a site map is at 1 inch = 100 feet or larger, i.e. its scale
denominator is at most the profile's ``[site_map_scale] max_scale_denominator``.

- Plan sheets (georeferenced GeoTIFF or GeoPDF), read with rasterio by :func:`read_sheet`
  into a plain :class:`Sheet`: the ground length of a pixel (the length of the affine
  transform's column and row vectors, so rotated and skewed sheets count right, in the CRS's
  linear unit, or measured on the ellipsoid at the sheet's centre for a geographic CRS) times
  the pixels per inch (TIFF resolution tags; a GeoPDF's DPI) gives ground feet per inch.
- Stated scales: the site plan's ``layout_scale`` table (sheet, scale_denominator).
- QGIS print layouts: :class:`LayoutMap` records the QGIS side collects (``qgis_plugin/layouts.py``).

The scale sentence of B(2) is about the site map; B(2)'s "general location map" is held to no
scale: a sheet is a location map where ``layout_scale``'s ``drawing`` says ``location_map``, or
(not given) where its title contains one of the profile's ``location_map_titles`` (``info``).

Ground feet are international feet (0.3048 m); a sheet drawn at exactly 1" = 100' in US survey
feet (1:1200.0024) passes through the profile's ``scale_tolerance_ratio``.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..crs import crs_of, transformer
from ..errors import InputError
from ..findings import FAIL, INFO, NEEDS_REVIEW, PASS, Finding, HasFindings
from ..profile import RulesProfile
from ..progress import Progress
from ..units import CM_PER_INCH, FOOT_M, INCHES_PER_FOOT
from ..values import has_text
from .base import Check, CheckResult

if TYPE_CHECKING:  # for the annotations only: the context imports the checks
    from .context import ReviewContext

__all__ = [
    "CHECKS",
    "Sheet",
    "SheetScale",
    "LayoutMap",
    "read_sheet",
    "read_sheets",
    "sheet_scale",
    "sheet_footprint",
    "check_site_map_scale",
    "MapScaleCheck",
]

log = logging.getLogger(__name__)

_PDF_DPI = 150.0  # asked of GDAL's PDF driver when the PDF does not state the DPI it renders at
RULE = "site_map_scale"


@dataclass(frozen=True)
class Sheet:
    """What a plan sheet's file says about its scale; plain data, no open file.

    ``transform`` is GDAL's affine ``(a, b, c, d, e, f)``: x = a*col + b*row + c,
    y = d*col + e*row + f; ``None`` where the file is not georeferenced. ``pixels_per_inch``
    is (across, down), ``None`` where the file does not say; ``resolution_source`` says where
    it came from or why it is unknown. ``name`` is the file name, ``file.pdf#2`` for a page.
    """

    name: str
    width: int
    height: int
    crs_wkt: Optional[str]
    transform: Optional[tuple[float, ...]]
    pixels_per_inch: Optional[tuple[float, float]]
    resolution_source: str
    pages: int = 1  # pages of the file (a multi-page PDF); this Sheet is one of them


@dataclass(frozen=True)
class SheetScale:
    """A sheet's measured scale, or why it has none (``denominator`` None, ``missing`` says)."""

    ground_ft_per_pixel: Optional[tuple[float, float]]
    denominators: Optional[tuple[float, float]]  # across, down
    missing: Optional[str] = None

    @property
    def denominator(self) -> Optional[float]:
        """The smaller scale of the two directions (the larger denominator)."""
        return None if self.denominators is None else max(self.denominators)


@dataclass(frozen=True)
class LayoutMap:
    """One map item of a QGIS print layout (``item_id`` None: the layout has no map item).

    ``scale`` is the item's scale denominator as QGIS computes it; ``footprint_wkt`` (in
    ``crs_wkt``) is the ground the item shows, for the findings layer.
    """

    layout: str
    item_id: Optional[str]
    scale: Optional[float]
    footprint_wkt: Optional[str] = None
    crs_wkt: Optional[str] = None

    @property
    def feature(self) -> str:
        return f"layout:{self.layout}" + (f"/{self.item_id}" if self.item_id is not None else "")


# --- reading a sheet ---------------------------------------------------------------------


def read_sheet(path: str | Path, page: Optional[int] = None) -> Sheet:
    """Read a plan sheet's size, georeferencing and resolution (``page``: of a multi-page PDF).

    Raises :class:`InputError` naming the file where it cannot be read as a raster, or where
    rasterio is not installed.
    """
    path = Path(path)
    try:
        import rasterio
        from rasterio.errors import NotGeoreferencedWarning
    except ImportError:
        raise InputError(
            "reading plan sheets needs rasterio, which is not installed",
            path=path,
            fix="install rasterio (pip install rasterio; Debian: python3-rasterio)",
        ) from None
    source = f"PDF:{page}:{path}" if page else str(path)  # GDAL's name for a page
    name = f"{path.name}#{page}" if page else path.name
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotGeoreferencedWarning)
            with rasterio.open(source) as src:
                if src.driver != "PDF" or "DPI" in src.tags():
                    return _sheet(name, src, src.driver, src.tags())
            # GDAL renders a PDF at some DPI and scales the transform to it: name the DPI.
            with rasterio.open(source, DPI=f"{_PDF_DPI:g}") as pdf:
                return _sheet(name, pdf, "PDF", {**pdf.tags(), "DPI": f"{_PDF_DPI:g}"})
    except Exception as err:
        if not (isinstance(err, OSError) or type(err).__module__.startswith("rasterio")):
            raise
        if _is_pdf(path):
            raise InputError(
                f"the GeoPDF cannot be read ({_first_line(err)}); the GDAL under "
                f"rasterio (GDAL {rasterio.__gdal_version__}) may lack a PDF reader "
                "(Poppler or PDFium), as rasterio's PyPI wheels do",
                path=path,
                fix="export the sheet as a GeoTIFF, or run with a GDAL that reads "
                "PDF (QGIS's, Debian's python3-rasterio)",
            ) from None
        raise InputError(
            f"the plan sheet cannot be read as a raster ({_first_line(err)})",
            path=path,
            fix="give a georeferenced GeoTIFF or GeoPDF",
        ) from None


def _is_pdf(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            return handle.read(5) == b"%PDF-"
    except OSError:
        return False


def read_sheets(paths: Sequence[str | Path], progress: Optional[Progress] = None) -> list[Sheet]:
    """:func:`read_sheet` for each path; a path that is no file is an :class:`InputError`."""
    sheets = []
    for path in paths:
        if not Path(path).is_file():
            raise InputError("the plan sheet does not exist", path=path, fix="check the path")
        if progress is not None:
            progress.step(0.35, f"reading plan sheet {Path(path).name}")
        sheet = read_sheet(path)
        # A multi-page PDF (a drawing set): each page is a sheet, named file#page.
        sheets += (
            [sheet] if sheet.pages == 1 else [read_sheet(path, page) for page in range(1, sheet.pages + 1)]
        )
    return sheets


def _sheet(name: str, src: Any, driver: str, tags: dict[str, str]) -> Sheet:  # src: rasterio's
    crs, transform = src.crs, None
    if crs is not None and not src.transform.is_identity:
        transform = tuple(src.transform)[:6]
    else:
        gcps, gcp_crs = src.gcps
        if gcps and gcp_crs is not None:  # georeferenced by control points: their best fit
            from rasterio.transform import from_gcps

            crs, transform = gcp_crs, tuple(from_gcps(gcps))[:6]
    ppi, source = _pixels_per_inch(driver, tags)
    pages = len(src.subdatasets) if driver == "PDF" and src.subdatasets else 1
    return Sheet(
        name=name,
        width=src.width,
        height=src.height,
        crs_wkt=crs.to_wkt() if crs else None,
        transform=transform,
        pixels_per_inch=ppi,
        resolution_source=source,
        pages=pages,
    )


def _pixels_per_inch(driver: str, tags: dict[str, str]) -> tuple[Optional[tuple[float, float]], str]:
    if driver == "PDF":
        dpi = _positive(tags.get("DPI"))
        return ((dpi, dpi), f"the PDF's {dpi:g} DPI") if dpi else (None, "the PDF states no DPI")
    x = _positive(tags.get("TIFFTAG_XRESOLUTION"))
    if x is None:
        return None, "the file has no resolution tags (TIFFTAG_XRESOLUTION/YRESOLUTION)"
    y = _positive(tags.get("TIFFTAG_YRESOLUTION")) or x
    unit_text = str(tags.get("TIFFTAG_RESOLUTIONUNIT", "2")).strip()
    unit = unit_text.split()[0] if unit_text else "2"
    if unit == "2":  # inch; also TIFF's default where the unit tag is absent
        return (x, y), f"resolution tags {x:g} x {y:g} pixels per inch"
    if unit == "3":
        return ((x * CM_PER_INCH, y * CM_PER_INCH), f"resolution tags {x:g} x {y:g} pixels per centimetre")
    return None, (f"the resolution tags ({x:g} x {y:g}) have no unit (TIFFTAG_RESOLUTIONUNIT {unit_text})")


def _positive(text: Optional[str | float]) -> Optional[float]:
    if text is None:
        return None
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value > 0 else None


def _first_line(err: BaseException) -> str:
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


# --- measuring a sheet -------------------------------------------------------------------


def sheet_scale(sheet: Sheet) -> SheetScale:
    """Ground feet per pixel and scale denominators (across, down) of a sheet.

    Returns a :class:`SheetScale` whose ``missing`` says why where the sheet has no scale (not
    georeferenced, no linear unit, unknown resolution). Here 0.3048 m per pixel at 100 pixels
    per inch is 100 ft per inch, 1:1200:

    >>> s = Sheet("a.tif", 100, 80, CRS("EPSG:26918").to_wkt(), (0.3048, 0, 500000, 0, -0.3048,
    ...           4500000), (100.0, 100.0), "tags")
    >>> [round(d, 9) for d in sheet_scale(s).denominators]
    [1200.0, 1200.0]
    """
    if sheet.transform is None or sheet.crs_wkt is None:
        return SheetScale(None, None, "the sheet is not georeferenced (no CRS and transform)")
    ground = _ground_ft_per_pixel(sheet, sheet.transform, sheet.crs_wkt)
    if isinstance(ground, str):
        return SheetScale(None, None, ground)
    if sheet.pixels_per_inch is None:
        return SheetScale(ground, None, f"resolution unknown ({sheet.resolution_source})")
    (ground_x, ground_y), (ppi_x, ppi_y) = ground, sheet.pixels_per_inch
    return SheetScale(ground, (ground_x * ppi_x * INCHES_PER_FOOT, ground_y * ppi_y * INCHES_PER_FOOT))


def _ground_ft_per_pixel(
    sheet: Sheet, transform: tuple[float, ...], crs_wkt: str
) -> tuple[float, float] | str:
    """Ground feet per pixel (across, down), or why there is no measure (the CRS's unit)."""
    a, b, _, d, e, _ = transform
    crs = _horizontal(crs_of(crs_wkt))
    across, down = math.hypot(a, d), math.hypot(b, e)  # CRS units per pixel along col / row
    if crs.is_geographic:
        return _geodesic_ft_per_pixel(sheet, transform, crs)
    axis = crs.axis_info[0] if crs.axis_info else None
    if axis is None or not axis.unit_conversion_factor or axis.unit_name in ("degree", "radian"):
        return f"its CRS ({crs.name}) has no linear unit"
    to_ft = axis.unit_conversion_factor / FOOT_M
    return across * to_ft, down * to_ft


def _horizontal(crs: CRS) -> CRS:
    return crs.sub_crs_list[0] if crs.is_compound and crs.sub_crs_list else crs


def _geodesic_ft_per_pixel(sheet: Sheet, transform: tuple[float, ...], crs: CRS) -> tuple[float, float] | str:
    """Ground length of the pixel's column and row vectors at the sheet's centre."""
    a, b, c, d, e, f = transform
    to_degrees = math.degrees(crs.axis_info[0].unit_conversion_factor) if crs.axis_info else 1.0
    geod = crs.get_geod()
    if geod is None:  # pyproj gives a geographic CRS no Geod only where it has no ellipsoid
        return f"its CRS ({crs.name}) has no ellipsoid to measure on"
    col, row = sheet.width / 2.0, sheet.height / 2.0

    def lonlat(dc: float, dr: float) -> tuple[float, float]:  # GDAL's x = longitude, y = latitude
        return (
            (a * (col + dc) + b * (row + dr) + c) * to_degrees,
            (d * (col + dc) + e * (row + dr) + f) * to_degrees,
        )

    def length(span: int, dc: int, dr: int) -> float:
        (lon0, lat0), (lon1, lat1) = (
            lonlat(-dc * span / 2, -dr * span / 2),
            lonlat(dc * span / 2, dr * span / 2),
        )
        _, _, metres = geod.inv(lon0, lat0, lon1, lat1)
        return float(metres) / span / FOOT_M

    return length(sheet.width, 1, 0), length(sheet.height, 0, 1)


def sheet_footprint(sheet: Sheet, area_crs: CRS) -> Optional[shapely.Polygon]:
    """The sheet's outline in ``area_crs`` (None where it is not georeferenced)."""
    if sheet.transform is None or sheet.crs_wkt is None:
        return None
    a, b, c, d, e, f = sheet.transform
    cols = np.array([0, sheet.width, sheet.width, 0, 0], dtype=float)
    rows = np.array([0, 0, sheet.height, sheet.height, 0], dtype=float)
    return _in_area_crs(a * cols + b * rows + c, d * cols + e * rows + f, sheet.crs_wkt, area_crs)


def _in_area_crs(x: np.ndarray, y: np.ndarray, crs_wkt: str, area_crs: CRS) -> Optional[shapely.Polygon]:
    try:
        x, y = transformer(crs_of(crs_wkt), area_crs).transform(x, y)
    except Exception as err:  # noqa: BLE001 - a footprint is decoration, never a reason to stop
        log.info("footprint not reprojected (a local grid?): %s", err)
        return None
    ring = shapely.polygons(np.column_stack([x, y]))
    return ring if shapely.is_valid(ring) and np.isfinite(np.asarray(x)).all() else None


# --- the rule ----------------------------------------------------------------------------


def check_site_map_scale(
    sheets: Sequence[Sheet],
    stated: Optional[pd.DataFrame],
    layout_maps: Optional[Sequence[LayoutMap]],
    profile: RulesProfile,
    area_crs: Optional[CRS] = None,
    stated_labels: Sequence[str] = (),
) -> tuple[list[Finding], list[dict[str, Any]]]:
    """One ``site_map_scale`` finding per sheet, stated scale and layout map; and the scales.

    Parameters
    ----------
    sheets
        Plan sheets as read by :func:`read_sheets`.
    stated
        The site plan's ``layout_scale`` table (``sheet``, ``scale_denominator``), or None.
    layout_maps
        Print-layout maps from the QGIS side; None means layouts were not read (the command
        line), an empty sequence that the QGIS project has none (said in one ``info`` finding).
    profile
        ``[site_map_scale] max_scale_denominator`` and ``scale_tolerance_ratio``.
    area_crs
        CRS of the findings' geometries (sheet and map footprints); the profile's by default.
    stated_labels
        Feature labels of ``stated``'s rows (``layout_scale:<sheet>`` by default).

    Returns
    -------
    findings, scales
        The findings (``value`` the scale denominator, ``limit`` the profile's); where no source
        gives anything, one ``needs_review`` finding saying what to provide. ``scales``: one
        ``{"feature", "source", "scale_denominator"}`` per sheet, stated scale and layout map.

    >>> from analysis.profile import load_profile
    >>> findings, _ = check_site_map_scale([], None, [LayoutMap("Plan", "Map 1", 600.0)],
    ...                                    load_profile())
    >>> [(f.status, f.value, f.features) for f in findings]
    [('pass', 600.0, ['layout:Plan/Map 1'])]
    """
    limit = profile.site_map_scale.max_scale_denominator
    tolerance = profile.site_map_scale.scale_tolerance_ratio
    section = profile.section(RULE)
    area_crs = crs_of(area_crs or profile.area_crs)
    judge = _Judge(limit, tolerance, section, profile.site_map_scale.smaller_scale_status)
    titles = profile.site_map_scale.location_map_titles
    findings: list[Finding] = []
    scales: list[dict[str, Any]] = []
    located = []  # the location-map findings (SWPPP B(2): no scale asked of them)
    for sheet in sheets:
        measured = sheet_scale(sheet)
        finding = judge.sheet(sheet, measured, sheet_footprint(sheet, area_crs))
        why = _location_map(sheet.name, None, titles)
        if why:
            finding = _as_location_map(finding, why)
            located.append(finding)
        findings.append(finding)
        scales.append(
            {"feature": f"sheet:{sheet.name}", "source": "sheet", "scale_denominator": measured.denominator}
        )
    if stated is not None and len(stated):
        labels = list(stated_labels) or [f"layout_scale:{s}" for s in stated["sheet"]]
        drawings = stated["drawing"] if "drawing" in stated.columns else [None] * len(stated)
        for label, value, sheet_title, drawing in zip(
            labels, stated["scale_denominator"], stated["sheet"], drawings
        ):
            finding = judge.stated(label, _positive(value))
            why = _location_map(str(sheet_title), drawing, titles)
            if why:
                finding = _as_location_map(finding, why)
                located.append(finding)
            findings.append(finding)
            scales.append({"feature": label, "source": "stated", "scale_denominator": _positive(value)})
    for item in layout_maps or ():
        geometry = _layout_footprint(item, area_crs) if item.footprint_wkt and item.crs_wkt else None
        finding = judge.layout(item, geometry)
        why = _location_map(f"{item.layout} {item.item_id or ''}", None, titles)
        if why:
            finding = _as_location_map(finding, why)
            located.append(finding)
        findings.append(finding)
        if item.item_id is not None:
            scales.append(
                {"feature": item.feature, "source": "layout", "scale_denominator": _positive(item.scale)}
            )
    if not findings:
        findings.append(Finding(RULE, NEEDS_REVIEW, section, _nothing_given(layout_maps)))
    elif len(located) == len(findings):
        findings.append(
            Finding(
                RULE,
                NEEDS_REVIEW,
                section,
                "every sheet given is a location map: no site map's scale was "
                "checked; " + _nothing_given(layout_maps).split(". ", 1)[-1],
            )
        )
    elif layout_maps is not None and not layout_maps:
        findings.append(
            Finding(
                RULE,
                INFO,
                section,
                "the QGIS project has no print layouts (or no project is open): "
                "only plan sheets and stated scales were checked",
            )
        )
    return findings, scales


@dataclass
class MapScaleCheck(HasFindings):
    """The map-scale check alone (``swppp:map_scale``): its findings and measured scales."""

    profile: RulesProfile
    findings: list[Finding]
    scales: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        """The review's JSON shape, its map-scale parts only."""
        from ..about import TOOL_NAME, __version__

        return {
            "tool": {"name": TOOL_NAME, "version": __version__},
            "profile": self.profile.name,
            "measurements": {"site_map_scales": self.scales},
            "findings": [f.to_dict() for f in self.findings],
        }


def _location_map(title: str, drawing: object, titles: Sequence[str]) -> str:
    """Why the sheet ``title`` is a location map ('' where it is not one)."""
    if has_text(drawing):
        return (
            "the layout_scale table says it is a location map"
            if str(drawing).strip() == "location_map"
            else ""
        )
    folded = " ".join(title.casefold().replace("_", " ").replace("-", " ").split())
    word = next((w for w in titles if w.casefold() in folded), None)
    return f"read as a location map from its title ('{word}')" if word else ""


def _as_location_map(finding: Finding, why: str) -> Finding:
    """A location map's finding: its scale said, not held to the site map's."""
    if finding.value is None:  # its scale unknown: nothing to say of a location map's scale
        words = "its scale is not known"
    else:
        words = f"its scale is 1:{finding.value:g} (1\" = {finding.value / INCHES_PER_FOOT:g}')"
    head = finding.message.split(":", 1)[0]
    return Finding(
        RULE,
        INFO,
        finding.section,
        f"{head}: a general location map ({why}); {words}. SWPPP B(2) asks for "
        'drawings "including a general location map" and sets a scale only for '
        'the site map ("Site map should be at a scale no smaller than one inch '
        'equals 100 feet"), so this sheet is not held to it',
        value=finding.value,
        limit=None,
        units=finding.units,
        features=finding.features,
        geometry=finding.geometry,
    )


def _nothing_given(layout_maps: Optional[Sequence[LayoutMap]]) -> str:
    where = (
        "the QGIS project has no print layouts (or no project is open)"
        if layout_maps is not None
        else "print layouts are read only when the review runs in QGIS"
    )
    return (
        "no site map scale to check: no plan sheet, no stated scale and no print layout "
        f"({where}). Provide georeferenced plan sheets (swppp review --sheet PATH, or SHEETS "
        "in QGIS), a 'layout_scale' table (sheet, scale_denominator) in the site plan, or "
        "print layouts in the QGIS project; or check each sheet's scale by hand "
        "(1 inch = 100 feet or larger)"
    )


def _layout_footprint(item: LayoutMap, area_crs: CRS) -> Optional[shapely.Polygon]:
    if item.footprint_wkt is None or item.crs_wkt is None:
        return None
    try:
        shape = shapely.from_wkt(item.footprint_wkt)
    except shapely.errors.GEOSException:
        return None
    coords = shapely.get_coordinates(shape)
    if len(coords) < 4:
        return None
    return _in_area_crs(coords[:, 0], coords[:, 1], item.crs_wkt, area_crs)


@dataclass(frozen=True)
class _Judge:
    limit: float
    tolerance: float
    section: str
    smaller: str  # the profile's status for a smaller scale: "warn" ("should") or "fail"

    def verdict(self, denominator: float) -> str:
        return PASS if denominator <= self.limit * (1 + self.tolerance) else self.smaller

    def finding(
        self, status: str, message: str, value: Optional[float], features: list[str], geometry: object = None
    ) -> Finding:
        if status == self.smaller:
            reading = "a requirement" if status == FAIL else "a recommendation"
            message += (
                '. SWPPP B(2): "Site map should be at a scale no smaller than one inch '
                f"equals 100 feet\"; read as {reading} (the profile's [site_map_scale] "
                f'smaller_scale_status = "{status}")'
            )
        return Finding(
            RULE,
            status,
            self.section,
            message,
            value=value,
            limit=self.limit,
            units="scale denominator",
            features=features,
            geometry=geometry,
        )

    def words(self, denominator: float) -> str:
        verdict = self.verdict(denominator)
        limit = f"1:{self.limit:g} (1\" = {self.limit / INCHES_PER_FOOT:g}')"
        return ("no smaller than " if verdict == PASS else "smaller than ") + limit

    def sheet(self, sheet: Sheet, measured: SheetScale, footprint: object) -> Finding:
        feature = [f"sheet:{sheet.name}"]
        # a sheet_scale with denominators has its ground and the sheet's resolution
        if (
            measured.denominators is None
            or measured.ground_ft_per_pixel is None
            or sheet.pixels_per_inch is None
        ):
            return self.finding(
                NEEDS_REVIEW,
                f"plan sheet {sheet.name}: its scale cannot be "
                f"measured: {measured.missing}; check its scale by hand or give a "
                "georeferenced sheet with its resolution (DPI)",
                None,
                feature,
                footprint,
            )
        across, down = measured.denominators
        den = max(across, down)  # the smaller scale counts (SheetScale.denominator)
        ground_x, ground_y = measured.ground_ft_per_pixel
        ppi_x, ppi_y = sheet.pixels_per_inch
        detail = f"{ground_x:.4g} ft per pixel at {ppi_x:g} pixels per inch, from {sheet.resolution_source}"
        if not math.isclose(across, down, rel_tol=self.tolerance):
            detail += (
                f"; across 1:{across:.1f}, down 1:{down:.1f} "
                f"({ground_y:.4g} ft per pixel at {ppi_y:g} pixels per inch), the smaller "
                "scale counts"
            )
        return self.finding(
            self.verdict(den),
            f"plan sheet {sheet.name}: 1\" = {den / INCHES_PER_FOOT:.2f}' "
            f"(1:{den:.1f}), {self.words(den)}; {detail}",
            den,
            feature,
            footprint,
        )

    def stated(self, label: str, denominator: Optional[float]) -> Finding:
        sheet = label.split(":", 1)[-1]
        if denominator is None:
            return self.finding(
                NEEDS_REVIEW,
                f"sheet {sheet}: the layout_scale table states no "
                "scale (scale_denominator empty or not a positive number); "
                "check the sheet by hand",
                None,
                [label],
            )
        return self.finding(
            self.verdict(denominator),
            f"sheet {sheet}: stated scale 1\" = {denominator / INCHES_PER_FOOT:g}' "
            f"(1:{denominator:g}), {self.words(denominator)}",
            denominator,
            [label],
        )

    def layout(self, item: LayoutMap, geometry: object) -> Finding:
        if item.item_id is None:
            return self.finding(
                NEEDS_REVIEW,
                f"print layout '{item.layout}' has no map item: "
                "its scale cannot be read; add a map item or check the sheet by "
                "hand",
                None,
                [item.feature],
            )
        scale = _positive(item.scale)
        if scale is None:
            return self.finding(
                NEEDS_REVIEW,
                f"print layout '{item.layout}', map "
                f"'{item.item_id}': QGIS gives it no scale (an empty extent?); "
                "check it in the layout",
                None,
                [item.feature],
                geometry,
            )
        return self.finding(
            self.verdict(scale),
            f"print layout '{item.layout}', map "
            f"'{item.item_id}': 1:{scale:.1f} (1\" = {scale / INCHES_PER_FOOT:.2f}'), "
            f"{self.words(scale)}",
            scale,
            [item.feature],
            geometry,
        )


# --- the review's check ------------------------------------------------------------------


def _run(context: ReviewContext, progress: Progress) -> CheckResult:
    site = context.site
    stated = site.layer("layout_scale")
    findings, scales = check_site_map_scale(
        context.sheets,
        stated,
        context.layout_maps,
        context.profile,
        area_crs=site.area_crs,
        stated_labels=site.labels("layout_scale") if stated is not None else (),
    )
    return CheckResult(findings, {"site_map_scales": scales})


CHECKS = (
    Check(
        "site_map_scale",
        regulated=True,
        rules=("site_map_scale",),
        reads=("site:layout_scale", "sheets", "layout_maps"),
        run=_run,
        doing="checking site map scales",
        weight=2.0,
    ),
)
