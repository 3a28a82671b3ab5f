"""Disturbance by phase (SWPPP B(4)): the acres each phase disturbs."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import shapely

from .area import acres
from .siteplan import SitePlan

__all__ = ["phase_summary"]


def phase_summary(site: SitePlan) -> list[dict]:
    """Per phase: its acres (union of its polygons), first start and last stabilisation.

    A phase with any polygon not yet scheduled for stabilisation has ``stabilized_date`` None.
    """
    frame = site.layer("disturbance")
    phases = frame["phase"].map(lambda v: None if pd.isna(v) else str(v))
    summary = []
    for phase in sorted(phases.dropna().unique(), key=_natural_key) + ([None] if phases.isna().any() else []):
        rows = frame[phases.isna()] if phase is None else frame[phases == phase]
        union = shapely.union_all(np.asarray(rows.geometry.values, dtype=object))
        starts = [str(v) for v in rows["start_date"] if not pd.isna(v)]
        ends = [str(v) for v in rows["stabilized_date"]]
        open_ended = any(pd.isna(v) for v in rows["stabilized_date"])
        summary.append({"phase": phase, "acres": acres(union, site.area_crs),
                        "start_date": min(starts) if starts else None,
                        "stabilized_date": None if open_ended or not ends else max(ends)})
    return summary


def _natural_key(text: str):
    """Phase "2" before "10"; numbers before words."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part)
            for part in re.split(r"(\d+)", text) if part]
