"""Disturbance inside wetlands and regulated wetlands' adjacent areas (SWPPP B(2); SWPPP F)."""
from __future__ import annotations

from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from .applicability import DisturbedArea
from .base import Check, CheckResult
from ..units import FOOT_M, acres, square_feet, unit_metres
from ..findings import NEEDS_REVIEW, PASS, WARN, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..values import feature_labels, has_text

__all__ = ["CHECKS", "check_wetlands", "adjacent_distances_ft"]

RULE = "wetlands"
PERMITS = "other environmental permits are needed before approval (SWPPP F)"


def adjacent_distances_ft(wetlands: pd.DataFrame, profile: RulesProfile) -> np.ndarray:
    """Each wetland's adjacent area in feet: its ``adjacent_area_ft``, the profile's default where
    that is empty, and 0 for a wetland that is not regulated."""
    default = profile.wetlands.default_adjacent_area_ft
    given = pd.to_numeric(wetlands["adjacent_area_ft"], errors="coerce").to_numpy(dtype=float)
    regulated = pd.to_numeric(wetlands["regulated"], errors="coerce").fillna(0).to_numpy() == 1
    distances = np.where(np.isnan(given) | (given <= 0), default, given)
    return np.where(regulated, distances, 0.0)


def check_wetlands(site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile,
                   wetlands: Optional[gpd.GeoDataFrame]) -> tuple[list[Finding], dict]:
    """The ``wetlands`` findings and the measurements ``wetland_acres``,
    ``wetland_adjacent_area_acres``.

    ``wetlands`` are the reference wetlands read around the site (area CRS), or None where no
    reference was given. Ground inside two wetlands, or two adjacent areas, counts once in the
    measurements; ground inside a wetland is not counted again in an adjacent area.
    """
    section = profile.section(RULE)
    if wetlands is None:
        return [Finding(RULE, NEEDS_REVIEW, section,
                        "not checked: no reference layers were given; check the disturbance "
                        "against wetlands and their adjacent areas by hand")], \
            {"wetland_acres": None, "wetland_adjacent_area_acres": None}
    crs = site.area_crs
    minimum = profile.wetlands.min_overlap_sq_ft
    to_crs_units = FOOT_M / unit_metres(crs)
    ground = disturbed.geometry
    geometries = np.asarray(wetlands.geometry.values, dtype=object)
    reach_ft = adjacent_distances_ft(wetlands, profile)
    zones = shapely.buffer(geometries, reach_ft * to_crs_units)
    touched = np.flatnonzero(shapely.intersects(zones, ground))
    labels = np.asarray(feature_labels("wetlands", wetlands, "wetland_id"), dtype=object)

    inside_each = shapely.intersection(geometries[touched], ground)
    wet_ground = shapely.union_all(inside_each)
    adjacent_each = shapely.difference(shapely.intersection(zones[touched], ground), wet_ground)
    adjacent_ground = shapely.union_all(adjacent_each)
    measurements = {"wetland_acres": acres(wet_ground, crs),
                    "wetland_adjacent_area_acres": acres(adjacent_ground, crs)}

    findings = []
    dist_geoms = np.asarray(site.layers["disturbance"].geometry.values, dtype=object)
    dist_labels = np.asarray(site.labels("disturbance"), dtype=object)
    inside_sq_ft = np.atleast_1d(square_feet(inside_each, crs))
    adjacent_sq_ft = np.atleast_1d(square_feet(adjacent_each, crs))
    for k, i in enumerate(touched):
        row = wetlands.iloc[i]
        what = _describe(row)
        causes = dist_labels[shapely.intersects(dist_geoms, zones[i])].tolist()
        if inside_sq_ft[k] >= minimum:
            findings.append(Finding(
                RULE, WARN, section,
                f"{acres(inside_each[k], crs):.2f} acres of disturbance lie inside wetland "
                f"{what}: {PERMITS}", value=acres(inside_each[k], crs), limit=0.0, units="acres",
                features=[labels[i], *causes], geometry=inside_each[k]))
        if adjacent_sq_ft[k] >= minimum:
            findings.append(Finding(
                RULE, WARN, section,
                f"{acres(adjacent_each[k], crs):.2f} acres of disturbance lie inside the "
                f"{reach_ft[i]:g}-ft adjacent area of regulated wetland {what} (outside any "
                f"wetland): {PERMITS}", value=acres(adjacent_each[k], crs), limit=0.0,
                units="acres", features=[labels[i], *causes], geometry=adjacent_each[k]))
    search = profile.reference.search_distance_ft
    if len(reach_ft) and reach_ft.max() > search:
        widest = labels[int(np.argmax(reach_ft))]
        findings.append(Finding(
            RULE, NEEDS_REVIEW, section,
            f"{widest} has a {reach_ft.max():g}-ft adjacent area, wider than the {search:g} ft "
            f"around the site that reference wetlands are read from: a wetland farther away "
            f"may reach the site; raise [reference] search_distance_ft in the profile",
            features=[widest]))
    if not any(f.status == WARN for f in findings):
        findings.insert(0, Finding(
            RULE, PASS, section,
            f"no disturbance inside a wetland or a regulated wetland's adjacent area "
            f"({len(wetlands)} reference wetland(s) within {search:g} ft of the site)",
            value=measurements["wetland_acres"] + measurements["wetland_adjacent_area_acres"],
            limit=0.0, units="acres"))
    return findings, measurements


def _describe(row) -> str:
    facts = [str(row["source"])] if has_text(row["source"]) else []
    if has_text(row["wetland_class"]):
        facts.append(f"class {row['wetland_class']}")
    name = row["wetland_id"] if has_text(row["wetland_id"]) else f"#{row.name}"
    return f"{name} ({', '.join(facts)})" if facts else str(name)


# --- the review's check ------------------------------------------------------------------

def _run(context, progress) -> CheckResult:
    wetlands = context.read("wetlands", needed_for="the wetlands check")
    findings, measurements = check_wetlands(context.site, context.disturbed, context.profile,
                                            wetlands)
    return CheckResult(findings, measurements,
                       extra={"wetlands": wetlands} if wetlands is not None else {})


CHECKS = (Check("wetlands", regulated=True, rules=("wetlands",),
                reads=("site:disturbance", "reference:wetlands"), run=_run,
                doing="reading wetlands around the site", weight=3.0),)
