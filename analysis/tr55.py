"""TR-55's published tables (curve numbers, unit peak discharge, pond and swamp factors), NLCD
classes and hydrologic soil groups, as data (``analysis/data/tr55_*.csv``, ``nlcd_cover.csv``).

Shared by the site plan's validation of coded values and the hydrology check.
"""

from __future__ import annotations

import csv
from functools import cache
from pathlib import Path
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "COVER_KEYS",
    "HSG_GROUPS",
    "valid_hsg",
    "resolve_hsg",
    "nlcd_cover_table",
    "cn_table",
    "unit_peak_table",
    "pond_swamp_table",
]

DATA = Path(__file__).resolve().parent / "data"
HSG_GROUPS = ("A", "B", "C", "D")


# --- the published tables, as data ------------------------------------------------------------


def _rows(name: str) -> list[dict[str, str]]:
    """The rows of ``analysis/data/<name>`` (lines starting with # are the source notes)."""
    with open(DATA / name, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


@cache
def cn_table() -> dict[str, dict[str, Any]]:
    """cover -> {"table", "description", "impervious": fraction, "cn": {hsg: int or None}}."""
    out = {}
    for row in _rows("tr55_cn.csv"):
        out[row["cover"]] = {
            "table": row["table"],
            "description": row["description"],
            "impervious": float(row["impervious_pct"]) / 100.0 if row["impervious_pct"] else 0.0,
            "cn": {g: (int(row[g]) if row[g] else None) for g in HSG_GROUPS},
        }
    return out


@cache
def unit_peak_table() -> dict[str, tuple[NDArray[np.float64], ...]]:
    """rainfall type -> (ia_p, c0, c1, c2) arrays, ia_p ascending (TR-55 Table F-1)."""
    grouped: dict[str, list[list[float]]] = {}
    for row in _rows("tr55_unit_peak.csv"):
        grouped.setdefault(row["rainfall_type"], []).append(
            [float(row[k]) for k in ("ia_p", "c0", "c1", "c2")]
        )
    return {k: tuple(np.array(sorted(v)).T) for k, v in grouped.items()}


@cache
def pond_swamp_table() -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    rows = _rows("tr55_pond_swamp.csv")
    return (np.array([float(r["pond_swamp_pct"]) for r in rows]), np.array([float(r["fp"]) for r in rows]))


@cache
def nlcd_cover_table() -> dict[int, Optional[str]]:
    """NLCD class -> cover key (None where the class has no TR-55 cover), with its rationale."""
    return {int(r["nlcd"]): (r["cover"] or None) for r in _rows("nlcd_cover.csv")}


COVER_KEYS = tuple(cn_table())


def valid_hsg(value: object) -> bool:
    """Whether ``value`` is a hydrologic soil group: A to D, or a dual group such as ``C/D``."""
    text = str(value).strip().upper()
    parts = text.split("/")
    return (len(parts) == 1 and text in HSG_GROUPS) or (
        len(parts) == 2 and parts[0] in HSG_GROUPS[:3] and parts[1] == "D"
    )


def resolve_hsg(value: object, dual: str = "undrained") -> str:
    """The single group to use: a dual group ``X/D`` is D undrained, X drained (TR-55 App. A)."""
    if not valid_hsg(value):
        raise ValueError(f"{value!r} is not a hydrologic soil group (A, B, C, D, A/D, B/D or C/D)")
    if dual not in ("undrained", "drained"):
        raise ValueError(f"dual soil groups are 'undrained' or 'drained', not {dual!r}")
    parts = str(value).strip().upper().split("/")
    return parts[0] if len(parts) == 1 or dual == "drained" else "D"
