"""The report's site map: tiles at the chapter's map scale over the site, drawn with matplotlib.

:func:`map_tiles` cuts the site into frames that each show the ground at the profile's site map
scale (``[site_map_scale] max_scale_denominator``, 1 inch = 100 feet): a long site gets more
tiles, never a smaller scale. The HTML report draws each tile with :func:`site_map_charts`
(a figure whose map frame is sized in inches, so printed at its size it is at that scale); the
PDF (``qgis_plugin/report_layout.py``) puts the same tiles into a QGIS print layout.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import geopandas as gpd
import numpy as np
import shapely

from ..charts import Chart, figure_chart, new_figure
from ..checks.easements import recorded_flags
from ..findings import FAIL, NEEDS_REVIEW, PASS, STATUS_COLOURS, STATUSES, WARN
from ..geometry import in_family, polygons
from ..judge.measure import adjacent_distances_ft
from ..profile import RulesProfile
from ..reference.contract import REFERENCE_LAYERS, Style
from ..rounds.plan_changes import plan_changes_of
from ..units import FOOT_M, INCHES_PER_FOOT
from .layer_style import PLAN_CHANGE_COLOURS, RECORDED_COLOURS, SMP_COLOUR, change_colour, phase_colours

__all__ = [
    "MapTile",
    "map_scale",
    "units_per_foot",
    "site_footprint",
    "map_footprint",
    "plan_changes_of",
    "PLAN_CHANGE_STYLE",
    "PLAN_CHANGE_COLOURS",
    "PLAN_CHANGE_TITLES",
    "map_tiles",
    "site_map_charts",
    "plan_phases",
    "adjacent_areas",
    "map_layers",
    "MAP_LAYER_TITLES",
    "LABEL_FIELDS",
]

# The HTML report's map frame, inches: the report prints on US Letter pages in landscape
# (0.4 in margins: 10.2 x 7.7 in), the legend below the frame.
HTML_FRAME_IN = (10.0, 6.2)
_LEGEND_IN = 0.75
_OVERLAP_IN = 0.5  # neighbouring tiles share this much paper, so nothing falls on a seam
# The colours of the findings GeoPackage's stored styles (layer_style), so the map in the
# report reads like the layers in QGIS.
_PATTERNS = {"solid": "-", "dash": "--", "dot": ":"}
_HATCHES = {"dots": "..", "diagonal": "\\\\"}


def _matplotlib(style: Style, line: bool) -> dict[str, Any]:
    """A reference layer's contract style (``reference.contract.Style``) as matplotlib's
    keywords: a line's colour and width, or a polygon's face, edge, opacity, pattern, hatch."""
    if line:
        return dict(color=style.colour, linewidth=style.width_pt)
    out: dict[str, Any] = dict(
        facecolor=style.colour if style.filled else "none",
        edgecolor=style.outline_colour,
        linewidth=style.width_pt,
    )
    if style.opacity < 1:
        out["alpha"] = style.opacity
    if style.pattern != "solid":
        out["linestyle"] = _PATTERNS[style.pattern]
    if style.hatch:
        out["hatch"] = _HATCHES[style.hatch]
    return out


# The reference layers' styles, from the contract; lines where the layer may hold lines.
_REFERENCE_STYLE = {
    name: _matplotlib(spec.style, "line" in spec.families) for name, spec in REFERENCE_LAYERS.items()
}
_STYLE: dict[str, dict[str, Any]] = {
    "site_boundary": dict(facecolor="none", edgecolor="#212121", linestyle="--", linewidth=1.2),
    "easement": dict(facecolor="none", edgecolor=RECORDED_COLOURS[1], linewidth=1.2),
    "easement_unrecorded": dict(
        facecolor="none", edgecolor=RECORDED_COLOURS[0], linewidth=1.2, linestyle="--"
    ),
    "smp": dict(facecolor=SMP_COLOUR, edgecolor=SMP_COLOUR, alpha=0.6, linewidth=0.8),
}
# Findings where they lie: fail and warn filled, needs review hatched, pass as a green outline
# (a pass often covers the whole disturbance, which must stay readable under it).
_FINDING_STYLE: dict[str, dict[str, Any]] = {
    FAIL: dict(facecolor=STATUS_COLOURS[FAIL], edgecolor=STATUS_COLOURS[FAIL], alpha=0.9, linewidth=1.0),
    WARN: dict(facecolor=STATUS_COLOURS[WARN], edgecolor=STATUS_COLOURS[WARN], alpha=0.55, linewidth=1.0),
    NEEDS_REVIEW: dict(facecolor="none", edgecolor=STATUS_COLOURS[NEEDS_REVIEW], hatch="//", linewidth=1.0),
    PASS: dict(facecolor="none", edgecolor=STATUS_COLOURS[PASS], linewidth=1.4),
}
# What the findings talk about around the site: the plan's discharge points and public
# right-of-way, the reference layers read around it (drawn under the plan's own layers).
_CONTEXT_STYLE: dict[str, dict[str, Any]] = {
    **_REFERENCE_STYLE,
    "adjacent_areas": dict(facecolor="none", edgecolor="#0277bd", linestyle="--", linewidth=0.8),
    "public_row": dict(facecolor="#bdbdbd", edgecolor="#616161", alpha=0.6, linewidth=0.8),
    "drainage_area": dict(facecolor="none", edgecolor="#6a1b9a", linestyle="-.", linewidth=1.0),
    "discharge_point": dict(color="#d81b60", marker="v", s=60, edgecolors="white"),
}
_TITLES = {
    "site_boundary": "Site boundary",
    "easement": "Easement, recorded",
    "easement_unrecorded": "Easement, not recorded",
    "smp": "SMP",
    "adjacent_areas": "Wetland adjacent area (regulated)",
    "public_row": "Public right-of-way",
    "discharge_point": "Discharge point",
    "drainage_area": "Drainage area",
    **{name: spec.legend for name, spec in REFERENCE_LAYERS.items()},
}
# Each drawn layer's name field: its features are labelled on the map.
_LABEL_FIELDS = {
    "public_row": "name",
    "discharge_point": "waterbody_id",
    "drainage_area": "name",
    **{name: spec.label_field for name, spec in REFERENCE_LAYERS.items()},
}
_INSET_IN = 1.9  # the location inset's width and height, inches
# The plan's context layers' places in the drawing order (bottom first), among the reference
# layers' (their contract style's ``order``).
_PLAN_CONTEXT_ORDER = {"adjacent_areas": 25, "drainage_area": 45, "public_row": 50, "discharge_point": 90}
_DRAWN_AT = {**_PLAN_CONTEXT_ORDER, **{n: s.style.order for n, s in REFERENCE_LAYERS.items()}}
_CONTEXT_ORDER = tuple(sorted(_DRAWN_AT, key=_DRAWN_AT.__getitem__))
MAP_LAYER_TITLES = _TITLES  # the legend's words, the PDF's too
LABEL_FIELDS = _LABEL_FIELDS


@dataclass(frozen=True)
class MapTile:
    """One map frame: ``bounds`` (xmin, ymin, xmax, ymax) in the area CRS, at ``scale`` (1:n)."""

    bounds: tuple
    scale: float
    number: int
    count: int

    @property
    def title(self) -> str:
        feet = self.scale / INCHES_PER_FOOT
        sheet = f", sheet {self.number} of {self.count}" if self.count > 1 else ""
        return f"Site map{sheet}: 1 inch = {feet:g} feet (1:{self.scale:g})"


def map_scale(profile: RulesProfile) -> float:
    """The map's scale denominator: the chapter's smallest allowed site map scale (1:1200)."""
    return profile.site_map_scale.max_scale_denominator


def units_per_foot(crs) -> float:
    """Area-CRS units in one international foot (1 for feet, 0.3048 for metres)."""
    factor = crs.axis_info[0].unit_conversion_factor  # metres per unit
    return FOOT_M / factor


def plan_phases(review) -> list:
    """The plan's phases in its order (the phasing measurements), then any others."""
    order = [p["phase"] for p in review.measurements.get("phases") or [] if p["phase"]]
    disturbance = review.site.layer("disturbance")
    found = {str(p) for p in disturbance["phase"] if p} if disturbance is not None else set()
    return order + sorted(found - set(order))


def site_footprint(site):
    """What the map must show: the union of the site boundary and the plan's areas (not the
    wetlands around it, which are drawn where they fall on the tiles)."""
    geometries = [
        np.asarray(site.layer(name).geometry.values, dtype=object)
        for name in ("site_boundary", "disturbance", "smp", "easement")
        if site.layer(name) is not None and len(site.layer(name))
    ]
    return shapely.union_all(np.concatenate(geometries)) if geometries else shapely.Polygon()


# The plan's changes since the round compared with (``--compare-to N``): disturbance added
# filled, removed hatched and outlined, an SMP's move an arrow from its old place (hollow) to
# its new, an easement's change (the area it gained or lost) outlined.
PLAN_CHANGE_STYLE: dict[str, dict[str, Any]] = {
    "disturbance_added": dict(
        facecolor=PLAN_CHANGE_COLOURS["added"],
        edgecolor=PLAN_CHANGE_COLOURS["added"],
        alpha=0.55,
        linewidth=1.2,
    ),
    "disturbance_removed": dict(
        facecolor="none", edgecolor=PLAN_CHANGE_COLOURS["removed"], hatch="xx", linestyle="--", linewidth=1.2
    ),
    "smp_before": dict(
        facecolor="none", edgecolor=PLAN_CHANGE_COLOURS["moved"], linestyle="--", linewidth=1.4
    ),
    "smp_added": dict(facecolor="none", edgecolor=PLAN_CHANGE_COLOURS["added"], linewidth=2.0),
    "easement_changed": dict(facecolor="none", edgecolor=PLAN_CHANGE_COLOURS["easement"], linewidth=2.2),
}
PLAN_CHANGE_TITLES = {
    "disturbance_added": "Since round {n}: disturbance added",
    "disturbance_removed": "Since round {n}: disturbance removed",
    "smp_before": "Since round {n}: SMP's old place",
    "smp_moves": "Since round {n}: SMP moved, old -> new",
    "smp_added": "Since round {n}: SMP added",
    "easement_changed": "Since round {n}: easement area changed",
}


def map_footprint(review):
    """What the map must show: the site's footprint and the plan changes' places (disturbance
    or an SMP taken away since the round compared with is drawn too)."""
    changes, _n = plan_changes_of(review)
    places = [c.geometry for c in changes if c.geometry is not None and not shapely.is_empty(c.geometry)]
    return (
        shapely.union_all([site_footprint(review.site), *places]) if places else site_footprint(review.site)
    )


def map_tiles(
    footprint, scale: float, frame_in: tuple, units_foot: float, overlap_in: float = _OVERLAP_IN
) -> list[MapTile]:
    """Frames of ``frame_in`` (width, height) inches at 1:``scale`` covering ``footprint``.

    One frame centred on the footprint when it fits; otherwise a grid of frames overlapping by
    ``overlap_in``, centred on the footprint, keeping those that touch it. Sizes on the ground
    are ``inches x scale / 12`` feet, in area-CRS units through ``units_foot``.
    """
    if footprint is None or shapely.is_empty(footprint):
        return []
    xmin, ymin, xmax, ymax = shapely.bounds(footprint)
    ground = units_foot * scale / INCHES_PER_FOOT  # area-CRS units per inch of paper
    width, height = frame_in[0] * ground, frame_in[1] * ground
    overlap = overlap_in * ground

    def cells(low, high, size):
        extent = high - low
        n = 1 if extent <= size else math.ceil((extent - overlap) / (size - overlap))
        span = n * size - (n - 1) * overlap
        start = (low + high) / 2 - span / 2
        return [start + i * (size - overlap) for i in range(n)]

    xs, ys = cells(xmin, xmax, width), cells(ymin, ymax, height)
    # North to south, west to east: the order a reader turns the sheets.
    lows = np.array([(x, y) for y in reversed(ys) for x in xs], dtype=float)
    boxes = shapely.box(lows[:, 0], lows[:, 1], lows[:, 0] + width, lows[:, 1] + height)
    kept = lows[shapely.intersects(boxes, footprint)]
    return [
        MapTile((float(x), float(y), float(x + width), float(y + height)), scale, i + 1, len(kept))
        for i, (x, y) in enumerate(kept)
    ]


def _polygon_path(geometries):
    """One matplotlib ``Path`` of every polygon in ``geometries`` (holes as holes).

    ``normalize`` orients shells clockwise and holes anticlockwise, so the non-zero fill rule
    leaves the holes empty; lines and points are left out.
    """
    from matplotlib.path import Path

    geometries = np.asarray(geometries, dtype=object)
    parts = shapely.normalize(polygons(geometries[~shapely.is_empty(geometries)]))
    rings = shapely.get_rings(parts)
    if len(rings) == 0:
        return None
    coords, index = shapely.get_coordinates(rings, return_index=True)
    codes = np.full(len(coords), Path.LINETO, dtype=np.uint8)
    starts = np.r_[0, np.flatnonzero(np.diff(index)) + 1]
    codes[starts] = Path.MOVETO
    codes[np.r_[starts[1:] - 1, len(coords) - 1]] = Path.CLOSEPOLY
    return Path(coords, codes)


def _draw(ax, geometries, label, zorder, **style):
    from matplotlib.patches import PathPatch

    path = _polygon_path(geometries)
    points = shapely.get_coordinates(
        np.asarray(
            [g for g in np.asarray(geometries, dtype=object) if in_family([g], "point")[0]], dtype=object
        )
    )
    handle = None
    if path is not None:
        handle = ax.add_patch(PathPatch(path, label=label, zorder=zorder, **style))
    if len(points):
        colour = style.get("edgecolor") if style.get("facecolor") == "none" else style["facecolor"]
        handle = ax.scatter(
            points[:, 0],
            points[:, 1],
            s=30,
            color=colour,
            zorder=zorder + 0.5,
            label=label,
            edgecolors="white",
        )
    return handle


def _text(ax, x, y, text, **kwargs):
    # parse_math=False: an id such as "$5" is text, not mathtext.
    return ax.text(x, y, str(text), parse_math=False, **kwargs)


def _labels(ax, frame, field, bounds, corner=False):
    """Each feature's id at a point inside it (``corner``: its north-west corner, so an
    easement's label does not sit on the SMP inside it), where that point is on the tile."""
    if frame is None or field not in frame.columns or not len(frame):
        return
    geometries = np.asarray(frame.geometry.values, dtype=object)
    if corner:
        box = shapely.bounds(geometries)
        xy = np.column_stack([box[:, 0], box[:, 3]])
    else:
        xy = shapely.get_coordinates(shapely.point_on_surface(geometries))
    inside = (xy[:, 0] > bounds[0]) & (xy[:, 0] < bounds[2]) & (xy[:, 1] > bounds[1]) & (xy[:, 1] < bounds[3])
    for (x, y), name in zip(xy[inside], frame[field].to_numpy()[inside]):
        if name is not None and str(name) not in ("", "nan", "None"):
            _text(
                ax,
                x,
                y,
                name,
                fontsize=7,
                ha="left" if corner else "center",
                va="bottom" if corner else "center",
                zorder=9,
                color="#212121",
                bbox=dict(boxstyle="round,pad=0.15", facecolor="white", edgecolor="none", alpha=0.75),
            )


def _phase_labels(ax, disturbance, bounds):
    """ "Phase N" inside each disturbance polygon that has a phase."""
    if disturbance is None or not len(disturbance) or "phase" not in disturbance.columns:
        return
    frame = disturbance.assign(
        _phase=[f"Phase {p}" if p not in (None, "") else None for p in disturbance["phase"]]
    )
    _labels(ax, frame, "_phase", bounds)


def _scale_bar(ax, tile: MapTile, units_foot: float):
    """A bar of one inch of paper (100 feet at 1:1200), and north: the area CRS is projected
    and its grid north is up."""
    xmin, ymin, xmax, ymax = tile.bounds
    ground = units_foot * tile.scale / INCHES_PER_FOOT  # one inch of paper
    x0, y0 = xmin + 0.3 * ground, ymin + 0.3 * ground
    feet = tile.scale / INCHES_PER_FOOT
    for i, colour in enumerate(("#212121", "white")):
        ax.add_patch(
            _rectangle(
                (x0 + i * ground / 2, y0),
                ground / 2,
                0.06 * ground,
                facecolor=colour,
                edgecolor="#212121",
                linewidth=0.8,
                zorder=10,
            )
        )
    for offset, text in ((0, "0"), (ground, f"{feet:g} ft")):
        _text(ax, x0 + offset, y0 + 0.1 * ground, text, fontsize=7, ha="center", va="bottom", zorder=10)
    _text(
        ax,
        x0,
        y0 - 0.08 * ground,
        f"1 inch = {feet:g} feet (1:{tile.scale:g})",
        fontsize=7,
        ha="left",
        va="top",
        zorder=10,
    )
    nx, ny = xmax - 0.35 * ground, ymax - 0.75 * ground
    ax.annotate(
        "",
        xy=(nx, ny + 0.45 * ground),
        xytext=(nx, ny),
        zorder=10,
        arrowprops=dict(facecolor="#212121", edgecolor="#212121", width=3, headwidth=10),
    )
    _text(ax, nx, ny + 0.5 * ground, "N", fontsize=10, fontweight="bold", ha="center", va="bottom", zorder=10)


def _rectangle(xy, width, height, **style):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, width, height, **style)


def adjacent_areas(wetlands, profile, units_foot):
    """The regulated wetlands' adjacent areas (their reach in feet around each), outside the
    wetlands themselves; None where there are none."""
    if wetlands is None or not len(wetlands):
        return None
    reach = adjacent_distances_ft(wetlands, profile)
    geometries = np.asarray(wetlands.geometry.values, dtype=object)
    chosen = reach > 0
    if not chosen.any():
        return None
    zones = shapely.buffer(geometries[chosen], reach[chosen] * units_foot)
    return shapely.difference(shapely.union_all(zones), shapely.union_all(geometries))


def _draw_lines(ax, geometries, label, zorder, **style):
    coordinates = [
        shapely.get_coordinates(part)
        for g in geometries
        if g is not None
        for part in shapely.get_parts(shapely.boundary(g) if in_family([g], "polygon")[0] else g)
    ]
    handle = None
    for xy in coordinates:
        (handle,) = ax.plot(xy[:, 0], xy[:, 1], zorder=zorder, label=label, **style)
    return handle


def map_layers(review) -> dict:
    """What the map draws around the plan's own layers (both the HTML's and the PDF's map),
    bottom first: name -> frame. The reference layers read around the site, the regulated
    wetlands' adjacent areas, the plan's drainage areas, public right-of-way and discharge
    points; layers absent or empty are left out."""
    site = review.site
    reference = dict(getattr(review, "reference_layers", None) or {})
    if review.wetlands is not None:
        reference["wetlands"] = review.wetlands
    zones = adjacent_areas(review.wetlands, review.profile, units_per_foot(site.area_crs))
    out = {}
    for name in _CONTEXT_ORDER:
        if name == "adjacent_areas":
            frame = (
                None
                if zones is None or shapely.is_empty(zones)
                else gpd.GeoDataFrame(geometry=[zones], crs=site.area_crs)
            )
        else:
            frame = reference.get(name) if name in reference else site.layer(name)
        if frame is not None and len(frame) and isinstance(frame, gpd.GeoDataFrame):
            out[name] = frame
    return out


def _context(ax, review, tile, units_foot, handles):
    """The layers of :func:`map_layers`, styled, in the legend, labelled by their ids."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    layers = map_layers(review)
    for zorder, (name, frame) in enumerate(layers.items()):
        style = _CONTEXT_STYLE[name]
        geometries = frame.geometry.values
        spec = REFERENCE_LAYERS.get(name)
        if spec is not None and "line" in spec.families:
            _draw_lines(ax, geometries, _TITLES[name], 1 + zorder / 10, **style)
            handles.append(Line2D([], [], label=_TITLES[name], **style))
        elif name == "discharge_point":
            xy = shapely.get_coordinates(np.asarray(geometries, dtype=object))
            ax.scatter(xy[:, 0], xy[:, 1], zorder=7, label=_TITLES[name], **style)
            handles.append(
                Line2D(
                    [],
                    [],
                    linestyle="none",
                    marker=style["marker"],
                    color=style["color"],
                    label=_TITLES[name],
                )
            )
        else:
            filled = spec is not None and spec.style.filled  # a filled reference layer: under all
            _draw(ax, geometries, _TITLES[name], 1 if filled else 0.5 + zorder / 10, **style)
            handles.append(Patch(label=_TITLES[name], **style))
        if name in _LABEL_FIELDS:
            _labels(ax, frame, _LABEL_FIELDS[name], tile.bounds, corner=name == "discharge_point")


def _inset(figure, review, tile, frame_in, height_total):
    """The location inset (top left): the reference layers read around the site, the site in
    red and this sheet's frame; None without reference layers."""
    layers = {
        k: v
        for k, v in (getattr(review, "reference_layers", None) or {}).items()
        if v is not None and len(v) and hasattr(v, "geometry")
    }
    if not layers:
        return None
    width = _INSET_IN / frame_in[0]
    height = _INSET_IN / height_total
    ax = figure.add_axes([0.005, 1 - height - 0.005, width, height])
    ax.set_xticks([])
    ax.set_yticks([])
    ax.set_facecolor("white")
    boxes = [
        shapely.bounds(shapely.union_all(np.asarray(f.geometry.values, dtype=object)))
        for f in layers.values()
    ]
    footprint = site_footprint(review.site)
    boxes.append(shapely.bounds(footprint))
    box = np.array(boxes, dtype=float)
    xmin, ymin = np.nanmin(box[:, 0]), np.nanmin(box[:, 1])
    xmax, ymax = np.nanmax(box[:, 2]), np.nanmax(box[:, 3])
    side = max(xmax - xmin, ymax - ymin) * 1.05
    cx, cy = (xmin + xmax) / 2, (ymin + ymax) / 2
    ax.set_xlim(cx - side / 2, cx + side / 2)
    ax.set_ylim(cy - side / 2, cy + side / 2)
    ax.set_aspect("equal", adjustable="box")
    for name, frame in layers.items():
        spec = REFERENCE_LAYERS.get(name)
        if spec is not None and "line" in spec.families:
            _draw_lines(ax, frame.geometry.values, None, 1, color=spec.style.colour, linewidth=1.0)
        else:
            style = dict(
                _CONTEXT_STYLE.get(name, dict(facecolor="#81d4fa", edgecolor="#0277bd", linewidth=0.5))
            )
            style.pop("hatch", None)
            _draw(ax, frame.geometry.values, None, 1, **style)
    _draw(ax, [footprint], None, 3, facecolor="#c62828", edgecolor="#c62828", linewidth=1.0)
    ax.add_patch(
        _rectangle(
            tile.bounds[:2],
            tile.bounds[2] - tile.bounds[0],
            tile.bounds[3] - tile.bounds[1],
            facecolor="none",
            edgecolor="#212121",
            linewidth=0.8,
            zorder=4,
        )
    )
    _text(
        ax,
        0.5,
        0.02,
        "Location",
        transform=ax.transAxes,
        fontsize=6,
        ha="center",
        va="bottom",
        bbox=dict(facecolor="white", edgecolor="none", alpha=0.8, pad=0.5),
    )
    return ax


def _plan_changes(ax, review, tile, handles) -> None:
    """The plan changes since the compared round (:data:`PLAN_CHANGE_STYLE`), each labelled by
    its id (``C1``: the report's table and the findings' "Plan changes here" name it), with a
    legend entry for each kind drawn."""
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    changes, n = plan_changes_of(review)
    if not changes:
        return
    drawn: dict[str, Any] = {}

    def draw(key, geometries, zorder):
        geometries = [g for g in geometries if g is not None and not shapely.is_empty(g)]
        if geometries:
            _draw(ax, geometries, None, zorder, **PLAN_CHANGE_STYLE[key])
            drawn[key] = Patch(label=PLAN_CHANGE_TITLES[key].format(n=n), **PLAN_CHANGE_STYLE[key])

    draw("disturbance_added", [c.geometry for c in changes if c.kind == "disturbance_added"], 5.2)
    draw("disturbance_removed", [c.geometry for c in changes if c.kind == "disturbance_removed"], 5.3)
    easements = [c for c in changes if c.layer == "easement"]
    draw("easement_changed", [c.geometry for c in easements], 5.4)
    draw("smp_added", [c.after for c in changes if c.kind == "smp_added"], 5.5)
    old = [c.before for c in changes if c.kind in ("smp_moved", "smp_removed")]
    style = PLAN_CHANGE_STYLE["smp_before"]
    polygons_old = [g for g in old if g is not None and not in_family([g], "point")[0]]
    points_old = [g for g in old if g is not None and in_family([g], "point")[0]]
    if polygons_old:
        _draw(ax, polygons_old, None, 5.6, **style)
    if points_old:
        xy = shapely.get_coordinates(np.asarray(points_old, dtype=object))
        ax.scatter(xy[:, 0], xy[:, 1], s=60, facecolors="none", edgecolors=style["edgecolor"], linewidths=1.4,
                   zorder=5.6)  # fmt: skip
    if old:
        drawn["smp_before"] = Line2D(
            [], [], linestyle="none", marker="o", markerfacecolor="none", markeredgecolor=style["edgecolor"],
            label=PLAN_CHANGE_TITLES["smp_before"].format(n=n),
        )  # fmt: skip
    for c in changes:
        if c.kind != "smp_moved":
            continue
        (x0, y0), (x1, y1) = shapely.get_coordinates(
            shapely.centroid(np.asarray([c.before, c.after], dtype=object))
        )
        ax.annotate(
            "",
            xy=(x1, y1),
            xytext=(x0, y0),
            zorder=7.5,
            arrowprops=dict(
                arrowstyle="-|>", color=PLAN_CHANGE_COLOURS["moved"], linewidth=2.2, mutation_scale=18
            ),
        )
        drawn["smp_moves"] = Line2D(
            [], [], color=PLAN_CHANGE_COLOURS["moved"], linewidth=1.8, marker=">", markevery=[1],
            label=PLAN_CHANGE_TITLES["smp_moves"].format(n=n),
        )  # fmt: skip
    # Each change's id where it lies on this tile.
    xmin, ymin, xmax, ymax = tile.bounds
    for c in changes:
        g = c.before if c.kind == "smp_moved" else c.geometry  # a move: at its tail
        if g is None or shapely.is_empty(g):
            continue
        at = shapely.point_on_surface(g) if not in_family([g], "point")[0] else g
        x, y = at.x, at.y
        if xmin < x < xmax and ymin < y < ymax:
            box = dict(boxstyle="round,pad=0.2", facecolor=change_colour(c.kind), edgecolor="none")
            _text(ax, x, y, c.id, fontsize=7, fontweight="bold", ha="right", va="top", zorder=9.5,
                  color="white", bbox=box)  # fmt: skip
    handles.extend(drawn[k] for k in PLAN_CHANGE_TITLES if k in drawn)


def _draw_tile(review, tile: MapTile, frame_in, wetlands, units_foot) -> Chart:
    from matplotlib.patches import Patch

    site = review.site
    width, height = frame_in
    figure = new_figure(width, height + _LEGEND_IN)
    # The map fills exactly width x height inches: at print size it is at the tile's scale.
    ax = figure.add_axes([0, _LEGEND_IN / (height + _LEGEND_IN), 1, height / (height + _LEGEND_IN)])
    xmin, ymin, xmax, ymax = tile.bounds
    ax.set_xlim(xmin, xmax)
    ax.set_ylim(ymin, ymax)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xticks([])
    ax.set_yticks([])
    handles: list = []
    _context(ax, review, tile, units_foot, handles)
    disturbance = site.layer("disturbance")
    if disturbance is not None and len(disturbance):
        phases = disturbance["phase"].astype(str).to_numpy()
        for phase, colour in phase_colours(plan_phases(review)).items():
            chosen = phases == str(phase)
            if chosen.any():
                style: dict[str, Any] = dict(facecolor=colour, edgecolor=colour, alpha=0.4, linewidth=0.8)
                _draw(ax, disturbance.geometry.values[chosen], f"Disturbance, phase {phase}", 2, **style)
                handles.append(Patch(label=f"Disturbance, phase {phase}", **style))
    easement = site.layer("easement")
    if easement is not None and len(easement):
        recorded = recorded_flags(site)
        for name, chosen in (("easement", recorded), ("easement_unrecorded", ~recorded)):
            if chosen.any():
                _draw(ax, easement.geometry.values[chosen], _TITLES[name], 3, **_STYLE[name])
                handles.append(Patch(label=_TITLES[name], **_STYLE[name]))
    for name, zorder in (("smp", 4), ("site_boundary", 5)):
        frame = site.layer(name)
        if frame is not None and len(frame):
            _draw(ax, frame.geometry.values, _TITLES[name], zorder, **_STYLE[name])
            handles.append(Patch(label=_TITLES[name], **_STYLE[name]))
    placed = [
        f
        for f in review.findings
        if f.geometry is not None and not shapely.is_empty(f.geometry) and f.status in _FINDING_STYLE
    ]
    # Worst on top: fail over warn over needs review over pass.
    for status in reversed(STATUSES):
        geometries = [f.geometry for f in placed if f.status == status]
        if geometries:
            style = _FINDING_STYLE[status]
            _draw(ax, geometries, status, 6, **style)
            handles.append(Patch(label=f"Finding: {status.replace('_', ' ')}", **style))
    _plan_changes(ax, review, tile, handles)
    _labels(ax, site.layer("smp"), "smp_id", tile.bounds)
    _labels(ax, site.layer("easement"), "easement_id", tile.bounds, corner=True)
    _phase_labels(ax, disturbance, tile.bounds)
    _scale_bar(ax, tile, units_foot)
    _inset(figure, review, tile, frame_in, height + _LEGEND_IN)
    figure.legend(
        handles=handles, loc="lower center", ncol=6, fontsize=6.5, frameon=False, bbox_to_anchor=(0.5, 0.0)
    )
    return figure_chart(figure, tile.title)


def site_map_charts(review, frame_in: tuple = HTML_FRAME_IN, scale: Optional[float] = None) -> list:
    """The site map as charts, one per tile: [(MapTile, Chart)], north to south.

    Each figure is ``frame_in`` inches of map plus the legend below: shown at that size in
    print (the report sets the image's width in inches), the map is at 1:``scale`` (default
    the profile's limit). The reference wetlands read around the site (``review.wetlands``)
    are drawn where a reference was given.
    """
    scale = scale or map_scale(review.profile)
    units_foot = units_per_foot(review.site.area_crs)
    tiles = map_tiles(map_footprint(review), scale, frame_in, units_foot)
    return [(tile, _draw_tile(review, tile, frame_in, review.wetlands, units_foot)) for tile in tiles]
