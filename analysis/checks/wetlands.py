"""Disturbance inside wetlands and regulated wetlands' adjacent areas (SWPPP B(2); SWPPP F)."""

from __future__ import annotations

from typing import Optional

import geopandas as gpd
import numpy as np
import shapely

from ..findings import NEEDS_REVIEW, PASS, WARN, Finding
from ..judge.measure import WetlandMeasures, adjacent_distances_ft, measure_wetlands
from ..judge.wording import (
    inside_adjacent_area,
    inside_wetland,
    no_wetland_met,
    permits,
    wetland_evidence,
    wider_than_search,
)
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import acres
from ..values import feature_labels
from .applicability import DisturbedArea
from .base import Check, CheckResult

__all__ = ["CHECKS", "check_wetlands"]

RULE = "wetlands"


def check_wetlands(
    site: SitePlan, disturbed: DisturbedArea, profile: RulesProfile, wetlands: Optional[gpd.GeoDataFrame]
) -> tuple[list[Finding], dict, Optional[WetlandMeasures]]:
    """The ``wetlands`` findings, the measurements ``wetland_acres``,
    ``wetland_adjacent_area_acres``, and the engine's measures (None without a reference).

    ``wetlands`` are the reference wetlands read around the site (area CRS), or None where no
    reference was given. The measure is the screen's (:func:`analysis.judge.measure.
    measure_wetlands`, the disturbance as one site): ground inside two wetlands, or two
    adjacent areas, counts once; ground inside a wetland is not counted again in an adjacent
    area.
    """
    section = profile.section(RULE)
    if wetlands is None:
        return (
            [
                Finding(
                    RULE,
                    NEEDS_REVIEW,
                    section,
                    "not checked: no reference layers were given; check the disturbance "
                    "against wetlands and their adjacent areas by hand",
                )
            ],
            {"wetland_acres": None, "wetland_adjacent_area_acres": None},
            None,
        )
    crs = site.area_crs
    measured = measure_wetlands(np.array([disturbed.geometry], dtype=object), wetlands, profile, crs)
    measurements = {
        "wetland_acres": float(measured.wetland_acres[0]),
        "wetland_adjacent_area_acres": float(measured.adjacent_acres[0]),
    }
    reach_ft = adjacent_distances_ft(wetlands, profile)
    labels = np.asarray(feature_labels("wetlands", wetlands, "wetland_id"), dtype=object)
    dist_geoms = np.asarray(site.layers["disturbance"].geometry.values, dtype=object)
    dist_labels = np.asarray(site.labels("disturbance"), dtype=object)
    findings = []
    inside_met, adjacent_met = measured.in_wetland(profile), measured.in_adjacent_area(profile)
    assert (
        measured.inside is not None and measured.adjacent is not None and measured.zone is not None
    )  # the local measure gives the shapes
    for k, i in enumerate(measured.wetland.tolist()):
        if not (inside_met[k] or adjacent_met[k]):
            continue
        evidence = wetland_evidence(wetlands.iloc[i], reach_ft[i])
        causes = dist_labels[shapely.intersects(dist_geoms, measured.zone[k])].tolist()
        for met, part, words in (
            (inside_met[k], measured.inside[k], inside_wetland),
            (adjacent_met[k], measured.adjacent[k], inside_adjacent_area),
        ):
            if met:
                held = float(acres(part, crs))
                findings.append(
                    Finding(
                        RULE,
                        WARN,
                        section,
                        f"{words(held, evidence)}: {permits(evidence)}",
                        value=held,
                        limit=0.0,
                        units="acres",
                        features=[labels[i], *causes],
                        geometry=part,
                    )
                )
    search = profile.reference.search_distance_ft
    if len(reach_ft) and reach_ft.max() > search:
        widest = labels[int(np.argmax(reach_ft))]
        findings.append(
            Finding(
                RULE,
                NEEDS_REVIEW,
                section,
                wider_than_search(widest, float(reach_ft.max()), search),
                features=[widest],
            )
        )
    if not any(f.status == WARN for f in findings):
        findings.insert(
            0,
            Finding(
                RULE,
                PASS,
                section,
                no_wetland_met(len(wetlands), search),
                value=measurements["wetland_acres"] + measurements["wetland_adjacent_area_acres"],
                limit=0.0,
                units="acres",
            ),
        )
    return findings, measurements, measured


# --- the review's check ------------------------------------------------------------------


def _run(context, progress) -> CheckResult:
    wetlands = context.read("wetlands", needed_for="the wetlands check")
    findings, measurements, measured = check_wetlands(
        context.site, context.disturbed, context.profile, wetlands
    )
    return CheckResult(
        findings,
        measurements,
        extra={"wetlands": wetlands, "wetland_measures": measured} if wetlands is not None else {},
    )


CHECKS = (
    Check(
        "wetlands",
        regulated=True,
        rules=("wetlands",),
        reads=("site:disturbance", "reference:wetlands"),
        run=_run,
        doing="reading wetlands around the site",
        weight=3.0,
    ),
)
