"""The findings GeoPackage a review writes for QGIS: the findings (polygons, and points and
lines where some findings are), the site plan's layers beside them, the checklist, and, with a
compared round, the plan's changes since it; each with its default style. Imported only when
that file is asked for: geopandas and pandas are not loaded for a review written as JSON or
HTML alone (issue 37: the cold one-site review)."""

from __future__ import annotations

from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from shapely import GeometryType

from ..checks.easements import recorded_flags
from ..geometry import as_multi, in_family, polygon_part
from ..io.vector import write_geopackage
from ..review import Review
from ..rounds.plan_changes import plan_changes_of
from .layer_style import (
    LINE,
    POINT,
    POLYGON,
    disturbance_qml,
    easement_qml,
    findings_qml,
    plan_changes_qml,
    smp_qml,
    store_default_style,
)

__all__ = [
    "write_findings",
    "findings_frame",
    "findings_frames",
    "site_frames",
    "plan_change_frames",
    "PLAN_CHANGES_LAYERS",
    "FINDINGS_LAYER",
    "FINDINGS_POINTS",
    "FINDINGS_LINES",
    "FINDING",
    "SITE_LAYERS",
    "PLAN_FID",
]

FINDINGS_LAYER = "findings"
FINDINGS_POINTS, FINDINGS_LINES = "findings_points", "findings_lines"
FINDING = "finding"  # a finding's number in the review (1 for the first): its findings fid
# The plan's changes since the round compared with (``--round --compare-to N``), by geometry.
PLAN_CHANGES_LAYERS = {POLYGON: "plan_changes", POINT: "plan_changes_points", LINE: "plan_changes_lines"}
# The site plan's layers written beside the findings, so a reviewer gets one styled group.
SITE_LAYERS = ("disturbance", "smp", "easement")
# Each written feature's fid in the reviewed plan: a finding's `disturbance:3` or `smp:#4`.
PLAN_FID = "plan_fid"


def findings_frame(review: Review) -> gpd.GeoDataFrame:
    """The findings with their geometries (null where a finding has no place).

    One row per finding, in the review's order; ``finding`` is its number (1 for the first),
    the feature id the findings layer gets. Polygonal geometries only: a layer has one geometry
    type, so points and lines are left to :func:`findings_frames`' other layers.
    """
    return findings_frames(review)[FINDINGS_LAYER]


def findings_frames(review: Review) -> dict[str, gpd.GeoDataFrame]:
    """``findings`` (every finding, polygons drawn) and, where some findings are points or
    lines, ``findings_points`` and ``findings_lines`` holding those rows, same fields."""
    rows = [f.to_dict() for f in review.findings]
    for row in rows:
        row["features"] = "; ".join(row["features"])
    frame = gpd.GeoDataFrame(
        rows, columns=["rule", "status", "section", "message", "value", "limit", "units", "features"]
    )
    frame["value"] = frame["value"].astype(float)
    frame["limit"] = frame["limit"].astype(float)
    frame.insert(0, FINDING, np.arange(1, len(frame) + 1, dtype=np.int64))
    geometries = np.array([f.geometry for f in review.findings], dtype=object)
    kinds = _kinds(geometries)
    out = {}
    for name, kind in ((FINDINGS_LAYER, POLYGON), (FINDINGS_POINTS, POINT), (FINDINGS_LINES, LINE)):
        mine = kinds == kind
        if name != FINDINGS_LAYER:
            if not mine.any():
                continue
            part = frame[mine].reset_index(drop=True)
            shapes = geometries[mine]
        else:  # every finding, so its fid is its number; its place where that is polygonal
            part = frame
            shapes = geometries.copy()
            shapes[~mine] = None
        shapes = _multi_polygons(shapes) if kind == POLYGON else shapes
        out[name] = part.set_geometry(gpd.GeoSeries(shapes, crs=review.site.area_crs))
    return out


def _kinds(geometries: np.ndarray) -> np.ndarray:
    """ "point", "line" or "polygon" per geometry (None: no place); a collection by its
    polygonal parts (what make_valid leaves of a polygon)."""
    kinds = np.full(len(geometries), None, dtype=object)
    kinds[in_family(geometries, "point")] = POINT
    kinds[in_family(geometries, "line")] = LINE
    kinds[in_family(geometries, "polygon")] = POLYGON
    kinds[shapely.get_type_id(geometries) == GeometryType.GEOMETRYCOLLECTION] = POLYGON
    return kinds


def _multi_polygons(geometries: np.ndarray) -> np.ndarray:
    # Polygons as MultiPolygons, so that a layer of polygonal features has one geometry type.
    geometries = as_multi(geometries, ("polygon",))
    for at in np.flatnonzero(shapely.get_type_id(geometries) == GeometryType.GEOMETRYCOLLECTION):
        part = polygon_part(geometries[at])  # a collection: its polygonal parts
        geometries[at] = None if shapely.is_empty(part) else part
    return geometries


def plan_change_frames(review: Review) -> dict[str, gpd.GeoDataFrame]:
    """The plan's changes since the compared round as layers (:data:`PLAN_CHANGES_LAYERS`, one
    per geometry type present), each change's ``comparison.plan_changes`` fields with ``change``
    its id (``C1``) and ``since_round``; none where the review compared no plans or found no
    change."""
    changes, since = plan_changes_of(review)
    if not changes:
        return {}
    rows = []
    for change in changes:
        row = change.to_dict()
        rows.append({"change": row.pop("id"), **row, "since_round": since})
    frame = pd.DataFrame(rows)
    geometries = np.array([c.geometry for c in changes], dtype=object)
    kinds = _kinds(geometries)
    out = {}
    for kind, name in PLAN_CHANGES_LAYERS.items():
        mine = kinds == kind
        if not mine.any():
            continue
        shapes = _multi_polygons(geometries[mine]) if kind == POLYGON else geometries[mine]
        part = gpd.GeoDataFrame(frame[mine].reset_index(drop=True))
        out[name] = part.set_geometry(gpd.GeoSeries(shapes, crs=review.site.area_crs))
    return out


def _display_copy(frame: gpd.GeoDataFrame) -> gpd.GeoDataFrame:
    """The layer as written for display: its fields (text where not numbers), ``plan_fid``."""
    out = gpd.GeoDataFrame(index=range(len(frame)))
    out[PLAN_FID] = np.asarray(frame.index, dtype=np.int64)
    for column in frame.columns.drop(frame.geometry.name):
        values = frame[column]
        if values.dtype.kind in "biuf":
            out[column] = values.to_numpy()
        else:  # dates, mixed objects: as the text the review read; missing stays missing
            out[column] = [
                None if v is None or (not isinstance(v, str) and pd.isna(v)) else str(v) for v in values
            ]
    geometries = _multi_polygons(np.asarray(frame.geometry.values, dtype=object))
    return out.set_geometry(gpd.GeoSeries(geometries, crs=frame.crs))


def site_frames(review: Review) -> dict[str, tuple[gpd.GeoDataFrame, str]]:
    """The site plan's ``disturbance``, ``smp`` and ``easement`` as written beside the findings,
    each with its QML: name -> (frame, qml). Absent layers are left out.

    Point SMPs among polygon ones go to their own layer ``smp_points`` (one geometry type a
    layer); the uncovered parts of SMPs are already the findings' geometries, not repeated.
    """
    out = {}
    site = review.site
    disturbance = site.layer("disturbance")
    if disturbance is not None:
        frame = _display_copy(disturbance)
        phases = [p["phase"] for p in review.measurements.get("phases") or [] if p["phase"]]
        phases += sorted({p for p in frame["phase"] if p} - set(phases))
        out["disturbance"] = (frame, disturbance_qml(phases))
    smp = site.layer("smp")
    if smp is not None and len(smp):
        points = in_family(smp.geometry.values, "point")
        if points.all():
            out["smp"] = (_display_copy(smp), smp_qml(POINT))
        else:
            out["smp"] = (_display_copy(smp[~points]), smp_qml(POLYGON))
            if points.any():
                out["smp_points"] = (_display_copy(smp[points]), smp_qml(POINT))
    easement = site.layer("easement")
    if easement is not None and len(easement):
        frame = _display_copy(easement)
        frame["recorded"] = recorded_flags(site).astype(np.int64)  # 0 or empty: not recorded
        out["easement"] = (frame, easement_qml())
    return out


def write_findings(path: str | Path, review: Review) -> None:
    """The findings, the site's layers and the checklist, in the area CRS, each with its style."""
    from ..checklist.contents import CHECKLIST_LAYER, checklist_frame

    findings = findings_frames(review)
    site = site_frames(review)
    changes = plan_change_frames(review)
    layers = {**findings, **changes, **{name: frame for name, (frame, _) in site.items()}}
    if review.checklist is not None:  # the checklist and its confirmations, so they reload
        layers[CHECKLIST_LAYER] = checklist_frame(review.checklist)
    write_geopackage(path, layers)
    for name, kind in ((FINDINGS_LAYER, POLYGON), (FINDINGS_POINTS, POINT), (FINDINGS_LINES, LINE)):
        if name in findings:
            store_default_style(path, name, findings_qml(geometry=kind), "SWPPP findings by status")
    for kind, name in PLAN_CHANGES_LAYERS.items():
        if name in changes:
            store_default_style(
                path,
                name,
                plan_changes_qml(kind),
                "SWPPP plan changes",
                description="SWPPP Review: the plan's changes since the round compared with",
            )
    for name, (_, qml) in site.items():
        store_default_style(
            path, name, qml, f"SWPPP {name}", description=f"SWPPP Review: the site plan's {name}"
        )
