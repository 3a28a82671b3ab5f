"""Erosion and sediment control practices (SWPPP B(7)-(11)) summarised per stage and checked."""

from __future__ import annotations

import numpy as np
import shapely

from ..findings import NEEDS_REVIEW, PASS, WARN, Finding
from ..geometry import in_family
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..units import feet, square_feet
from ..values import feature_labels, has_text

__all__ = ["RULE", "STAGES", "summarise_esc_practices", "check_esc_practices"]

RULE = "esc_practices"
LAYER = "esc_practice"
STAGES = ("temporary", "permanent", "converted")  # converted: temporary, then permanent (B(10))


def _text(value):
    return str(value).strip() if has_text(value) else None


def _number(value):
    return None if _text(value) is None else float(value)


def summarise_esc_practices(site: SitePlan) -> dict | None:
    """Per practice its stage, stated size and length, measured length (lines) or area
    (polygons), and schedule; per stage the count and measured totals. None without the layer."""
    frame = site.layer(LAYER)
    if frame is None:
        return None
    geometries = np.asarray(frame.geometry.values, dtype=object)
    lines = in_family(geometries, "line")
    polygons = in_family(geometries, "polygon")
    lengths = np.where(lines, feet(shapely.length(geometries), site.area_crs), np.nan)
    areas = np.where(polygons, square_feet(geometries, site.area_crs), np.nan)
    labels = feature_labels(LAYER, frame, None)
    practices = []
    for i, (label, (_fid, row)) in enumerate(zip(labels, frame.iterrows())):
        stage = (_text(row["stage"]) or "").lower() or None
        practices.append(
            {
                "feature": label,
                "practice": _text(row["practice"]),
                "stage": stage,
                "size": _text(row["size"]),
                "length_ft": _number(row["length_ft"]),
                "measured_length_ft": None if np.isnan(lengths[i]) else float(lengths[i]),
                "area_sq_ft": None if np.isnan(areas[i]) else float(areas[i]),
                "drainage_area_acres": _number(row["drainage_area_acres"]),
                "install_by": _text(row["install_by"]),
                "remove_after": _text(row["remove_after"]),
            }
        )
    by_stage = {}
    for stage in (*STAGES, None):
        chosen = [p for p in practices if p["stage"] == stage]
        if chosen:
            by_stage[stage or "not stated"] = {
                "practices": len(chosen),
                "measured_length_ft": float(sum(p["measured_length_ft"] or 0.0 for p in chosen)),
                "area_sq_ft": float(sum(p["area_sq_ft"] or 0.0 for p in chosen)),
            }
    return {"practices": practices, "by_stage": by_stage}


def _lacking(practice: dict, tolerance: float) -> list[str]:
    lacking = []
    stated, drawn = practice["length_ft"], practice["measured_length_ft"]
    if stated is not None and drawn is not None and abs(stated - drawn) > tolerance * max(stated, drawn):
        lacking.append(
            f"length_ft says {stated:,.1f} ft, the line drawn is {drawn:,.1f} ft "
            f"(they differ by more than {tolerance:.0%}; B(8))"
        )
    if practice["stage"] is None:
        lacking.append("no stage (temporary, permanent or converted; B(7), B(10))")
    if practice["size"] is None and practice["length_ft"] is None:
        lacking.append("no size or length (B(8))")
    if practice["install_by"] is None:
        lacking.append("no install_by date (B(11) implementation schedule)")
    if practice["stage"] in ("temporary", "converted") and practice["remove_after"] is None:
        lacking.append("no remove_after (B(11): how long it stays in place)")
    return lacking


def check_esc_practices(
    site: SitePlan,
    summary: dict | None,
    profile: RulesProfile,
) -> list[Finding]:
    """A ``warn`` naming each practice without a stage, a size or a schedule, or whose stated
    length disagrees with its line; else ``pass``; ``needs_review`` where the plan has no
    ``esc_practice`` layer."""
    section = profile.section(RULE)
    if summary is None or not summary["practices"]:
        return [
            Finding(
                RULE,
                NEEDS_REVIEW,
                section,
                "the site plan has no erosion and sediment control practices (layer "
                "esc_practice): check the SWPPP's drawings and schedule for the "
                "practices, their sizes and lengths, and when each is placed and removed",
            )
        ]
    frame = site.layers[LAYER]
    geometry = dict(zip(feature_labels(LAYER, frame, None), frame.geometry.values))
    findings = []
    tolerance = profile.esc_practices.length_tolerance_fraction
    for p in summary["practices"]:
        lacking = _lacking(p, tolerance)
        if lacking:
            findings.append(
                Finding(
                    RULE,
                    WARN,
                    section,
                    f"{p['practice'] or 'an unnamed practice'} ({p['feature']}): " + "; ".join(lacking),
                    features=[p["feature"]],
                    geometry=geometry[p["feature"]],
                )
            )
    if not findings:
        stages = ", ".join(f"{n['practices']} {stage}" for stage, n in summary["by_stage"].items())
        findings.append(
            Finding(
                RULE,
                PASS,
                section,
                f"{len(summary['practices'])} practices ({stages}), each with a "
                "stage, a size or length (as drawn) and an implementation "
                "schedule",
                value=float(len(summary["practices"])),
                units="practices",
                features=[p["feature"] for p in summary["practices"]],
            )
        )
    return findings
