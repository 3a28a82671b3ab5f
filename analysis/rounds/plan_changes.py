"""The plan's geometry in each round, and what changed in it between two rounds.

Each round records the plan's disturbance (with its phase), its SMPs and its easements
(review file format 2: the feature tables of :data:`~analysis.rounds.contract.PLAN_LAYERS`).
:func:`plan_changes` compares two rounds' plans: disturbance added and removed per phase
(phases matched by their id), SMPs added, removed and moved (by ``smp_id``; moved beyond the
profile's ``[rounds] place_tolerance_ft``), easements added, removed and changed (by
``easement_id``). :func:`tie_changes` says which changes lie at a compared finding's place.
A round recorded in format 1 has no plan: the comparison says so (a needs-review statement),
never nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import shapely

from ..checks.easements import recorded_flags
from ..crs import crs_label, same_crs, transform_geometries
from ..geometry import as_multi, in_family
from ..profile import RulesProfile
from ..units import acres, crs_units, ellipsoidal_acres
from .contract import CHANGE_KINDS, PLAN_LAYERS, PLANS_TABLE
from .matching import Held

__all__ = [
    "PlanLayer",
    "Plan",
    "PlanChange",
    "KINDS",
    "NO_CHANGE_HERE",
    "plan_of",
    "write_plan",
    "read_plan",
    "no_plan_note",
    "plan_changes",
    "tie_changes",
    "changes_json",
    "plan_changes_of",
]

KINDS = tuple(CHANGE_KINDS)
NO_CHANGE_HERE = "no plan change at this finding's place"
NO_PHASE = "no phase"


@dataclass(frozen=True)
class PlanLayer:
    """One plan layer as a round holds it: each feature's label (``smp:BR-1``), its key (the
    phase, ``smp_id`` or ``easement_id``; None where empty), its geometry and one more field
    (``practice``; ``recorded``)."""

    features: tuple[str, ...]
    keys: tuple[Optional[str], ...]
    geometries: Any  # numpy object array, in the plan's CRS
    extra: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Plan:
    """A round's plan: ``layers`` (disturbance, smp, easement -> :class:`PlanLayer`) in ``crs``."""

    crs: str
    layers: dict[str, PlanLayer]


@dataclass(frozen=True)
class PlanChange:
    """One change of the plan between two rounds; ``before`` and ``after`` are the geometries
    compared (None where absent), ``geometry`` the change's own (the area added or removed, an
    easement's difference; an SMP's both places)."""

    id: str
    kind: str
    layer: str
    feature: str
    phase: Optional[str]
    geometry: Any
    before: Any = None
    after: Any = None
    acres: Optional[float] = None
    acres_before: Optional[float] = None
    acres_after: Optional[float] = None
    distance_ft: Optional[float] = None
    message: str = ""
    area_method: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "layer": self.layer,
            "feature": self.feature,
            "phase": self.phase,
            "acres": _rounded(self.acres),
            "acres_before": _rounded(self.acres_before),
            "acres_after": _rounded(self.acres_after),
            "distance_ft": None if self.distance_ft is None else round(self.distance_ft, 2),
            "message": self.message,
        }


def _rounded(value: Optional[float]) -> Optional[float]:
    return None if value is None else round(float(value), 6)


def _text(value: Any) -> Optional[str]:
    if value is None or (isinstance(value, float) and value != value):
        return None
    text = str(value).strip()
    return text or None


# --- the plan of a review ------------------------------------------------------------------
def plan_of(site) -> Plan:
    """The plan's disturbance, SMPs and easements as the review read them (area CRS)."""
    layers = {}
    for name, key_field, extra_field in (
        ("disturbance", "phase", None),
        ("smp", "smp_id", "practice"),
        ("easement", "easement_id", "recorded"),
    ):
        frame = site.layer(name)
        if frame is None or not len(frame):
            layers[name] = PlanLayer((), (), np.empty(0, dtype=object))
            continue
        keys = (
            tuple(_text(v) for v in frame[key_field]) if key_field in frame.columns else (None,) * len(frame)
        )
        if name == "easement":
            extra: tuple = tuple(int(v) for v in recorded_flags(site))
        elif extra_field and extra_field in frame.columns:
            extra = tuple(_text(v) for v in frame[extra_field])
        else:
            extra = (None,) * len(frame)
        layers[name] = PlanLayer(
            tuple(site.labels(name)), keys, np.asarray(frame.geometry.values, dtype=object), extra
        )
    return Plan(crs_label(site.area_crs), layers)


def write_plan(con, number: int, plan: Plan, step: Callable[[str], None] = lambda _n: None) -> None:
    """Record ``plan`` as round ``number``'s in the review file open on ``con`` (a
    :class:`~analysis.rounds.reviewfile.ReviewConnection`), inside the caller's transaction:
    its rows in the plan tables (in the tables' CRS: the first plan's sets it; a later plan in
    another CRS is reprojected into it) and its row in ``round_plans``."""
    crs = con.plan_crs()
    if crs is None:
        crs = plan.crs
        con.set_plan_crs(crs)
    counts = {}
    for name, table in PLAN_LAYERS.items():
        layer = plan.layers[name]
        geometries = transform_geometries(layer.geometries, plan.crs, crs)
        if name != "smp":  # polygons as the tables declare them, MULTIPOLYGON
            geometries = as_multi(geometries, ("polygon",))
        values = con.plan_values(table, geometries, crs)
        extra_column = {"disturbance": None, "smp": "practice", "easement": "recorded"}[name]
        key_column = {"disturbance": "phase", "smp": "smp_id", "easement": "easement_id"}[name]
        columns = ["geom", "round", "feature", key_column] + ([extra_column] if extra_column else [])
        rows = []
        for value, feature, key, extra in zip(values, layer.features, layer.keys, layer.extra or layer.keys):
            row = [value, number, feature, key]
            if extra_column == "recorded":
                row.append(None if extra is None else int(extra))
            elif extra_column:
                row.append(extra)
            rows.append(row)
        if rows:
            marks = ", ".join([con.geometry_in] + ["?"] * (len(columns) - 1))
            con.executemany(f'INSERT INTO "{table}" ({", ".join(columns)}) VALUES ({marks})', rows)
        counts[name] = len(rows)
        step(f"plan {name}")
    con.execute(
        f"INSERT INTO {PLANS_TABLE} (round, area_crs, disturbance, smp, easement) VALUES (?, ?, ?, ?, ?)",
        (number, crs, counts["disturbance"], counts["smp"], counts["easement"]),
    )
    step("plan")


def read_plan(con, number: int, area_crs: str) -> Optional[Plan]:
    """Round ``number``'s plan, in ``area_crs``; None where the round recorded none (format 1)."""
    if not con.has_table(PLANS_TABLE):
        return None
    row = con.execute(f"SELECT area_crs FROM {PLANS_TABLE} WHERE round = ?", (number,)).fetchone()
    if row is None:
        return None
    crs = row[0]
    layers = {}
    for name, table in PLAN_LAYERS.items():
        key_column = {"disturbance": "phase", "smp": "smp_id", "easement": "easement_id"}[name]
        extra_column = {"disturbance": "NULL", "smp": "practice", "easement": "recorded"}[name]
        rows = con.execute(
            f"SELECT {con.geometry_out}, feature, {key_column}, {extra_column} "
            f'FROM "{table}" WHERE round = ? ORDER BY fid',
            (number,),
        ).fetchall()
        geometries = np.asarray(
            [None if r[0] is None else shapely.from_wkb(con.wkb_of(r[0])) for r in rows], dtype=object
        )
        geometries = transform_geometries(geometries, crs, area_crs)
        layers[name] = PlanLayer(
            tuple(r[1] for r in rows), tuple(r[2] for r in rows), geometries, tuple(r[3] for r in rows)
        )
    return Plan(area_crs, layers)


def no_plan_note(numbers: Sequence[int]) -> str:
    """The needs-review statement where rounds ``numbers`` recorded no plan geometry."""
    said = " and ".join(f"round {n}" for n in numbers)
    return (
        f"{said} recorded no plan geometry (review file format 1): the plan changes cannot be drawn; "
        "compare the two plans by eye"
    )


# --- the changes ---------------------------------------------------------------------------
def _true_acres(geometries, crs) -> tuple[list[float], str]:
    out, method = [], "planar"
    for g in geometries:
        value, method = ellipsoidal_acres(g, crs)
        out.append(value)
    return out, method


def _by_key(layer: PlanLayer) -> dict[str, int]:
    """Feature key (its id; its label where it has none) -> its index; the first of a repeated id."""
    out: dict[str, int] = {}
    for i, (key, feature) in enumerate(zip(layer.keys, layer.features)):
        out.setdefault(key if key is not None else feature, i)
    return out


def _without_slivers(geometries, tolerance: float):
    """Each of ``geometries`` without its parts thinner than ``tolerance`` (area CRS units):
    what two drawings of one line leave between them (reprojection and digitising round-off),
    never a change of the plan. A part kept is kept whole, so its area is measured as drawn."""
    geometries = np.asarray(geometries, dtype=object)
    parts, index = shapely.get_parts(geometries, return_index=True)
    kept = ~shapely.is_empty(shapely.buffer(parts, -tolerance / 2)) & (shapely.area(parts) > 0)
    out = np.empty(len(geometries), dtype=object)
    for i in range(len(geometries)):
        mine = parts[(index == i) & kept]
        out[i] = shapely.union_all(mine) if len(mine) else shapely.Polygon()
    return out


def _disturbance(before: PlanLayer, after: PlanLayer, crs, tolerance: float) -> list[dict]:
    def phases(layer):
        keys = np.asarray([k if k is not None else NO_PHASE for k in layer.keys], dtype=object)
        return {p: shapely.union_all(layer.geometries[keys == p]) for p in dict.fromkeys(keys.tolist())}

    was, now = phases(before), phases(after)
    names = list(dict.fromkeys([*was, *now]))
    empty = shapely.Polygon()
    old = np.asarray([was.get(p, empty) for p in names], dtype=object)
    new = np.asarray([now.get(p, empty) for p in names], dtype=object)
    added = _without_slivers(shapely.difference(new, old), tolerance)
    removed = _without_slivers(shapely.difference(old, new), tolerance)
    out = []
    for kind, parts, word in (
        ("disturbance_added", added, "added"),
        ("disturbance_removed", removed, "removed"),
    ):
        areas = shapely.area(parts)
        chosen = [i for i in range(len(names)) if areas[i] > 0]
        true, method = _true_acres(parts[chosen], crs)
        planar = np.atleast_1d(acres(parts[chosen], crs)) if chosen else np.empty(0)
        for i, value, flat in zip(chosen, true, planar):
            phase = names[i]
            out.append(
                dict(
                    kind=kind,
                    layer="disturbance",
                    feature=f"phase {phase}" if phase != NO_PHASE else NO_PHASE,
                    phase=None if phase == NO_PHASE else phase,
                    geometry=parts[i],
                    before=old[i],
                    after=new[i],
                    acres=value,
                    area_method=method,
                    message=(
                        f"disturbance {word}"
                        + (f" in phase {phase}" if phase != NO_PHASE else " (no phase)")
                        + f": {value:.4f} acres ({method}; {float(flat):.4f} planar)"
                    ),
                )
            )
    return out


def _area_acres(geometry, crs) -> Optional[float]:
    if geometry is None or in_family([geometry], "point")[0]:  # a point has no area
        return None
    return ellipsoidal_acres(geometry, crs)[0]


def _added_and_removed(
    layer: str, label: str, before: PlanLayer, after: PlanLayer, crs, *, measured: bool
) -> list[dict]:
    """The features of ``layer`` only one round holds: added (in ``after`` alone), then removed
    (in ``before`` alone); ``measured``: with their acres in the message and as ``acres``."""
    was, now = _by_key(before), _by_key(after)
    out = []
    for how, side, keys, others, plan in (
        ("added", "after", now, was, after),
        ("removed", "before", was, now, before),
    ):
        for key in keys:
            if key in others:
                continue
            g = plan.geometries[keys[key]]
            value = _area_acres(g, crs)
            change = dict(
                kind=f"{layer}_{how}",
                layer=layer,
                feature=plan.features[keys[key]],
                phase=None,
                geometry=g,
                message=f"{label} {key} {how}" + (f": {value or 0:.4f} acres" if measured else ""),
            )
            change.update({side: g, f"acres_{side}": value})
            if measured:
                change["acres"] = value
            out.append(change)
    return out


def _smp(before: PlanLayer, after: PlanLayer, crs, tolerance_ft: float) -> list[dict]:
    was, now = _by_key(before), _by_key(after)
    out = []
    foot = crs_units(1.0, crs)
    both = [k for k in now if k in was]
    if both:
        old = before.geometries[[was[k] for k in both]]
        new = after.geometries[[now[k] for k in both]]
        distance = shapely.distance(shapely.centroid(old), shapely.centroid(new)) / foot
        for key, a, b, feet in zip(both, old, new, distance):
            if feet > tolerance_ft:
                out.append(
                    dict(
                        kind="smp_moved",
                        layer="smp",
                        feature=after.features[now[key]],
                        phase=None,
                        geometry=shapely.union_all([a, b, shapely.LineString([a.centroid, b.centroid])]),
                        before=a,
                        after=b,
                        acres_before=_area_acres(a, crs),
                        acres_after=_area_acres(b, crs),
                        distance_ft=float(feet),
                        message=(
                            f"SMP {key} moved {feet:.1f} ft (beyond the {tolerance_ft:g} ft place tolerance)"
                        ),
                    )
                )
    return out + _added_and_removed("smp", "SMP", before, after, crs, measured=False)


def _easement(before: PlanLayer, after: PlanLayer, crs, tolerance: float) -> list[dict]:
    was, now = _by_key(before), _by_key(after)
    out = []
    both = [k for k in now if k in was]
    if both:
        old = before.geometries[[was[k] for k in both]]
        new = after.geometries[[now[k] for k in both]]
        difference = _without_slivers(shapely.symmetric_difference(old, new), tolerance)
        for key, a, b, gained_or_lost in zip(both, old, new, difference):
            if shapely.is_empty(gained_or_lost):
                continue
            acres_a, acres_b = _area_acres(a, crs), _area_acres(b, crs)
            out.append(
                dict(
                    kind="easement_changed",
                    layer="easement",
                    feature=after.features[now[key]],
                    phase=None,
                    geometry=gained_or_lost,
                    before=a,
                    after=b,
                    acres_before=acres_a,
                    acres_after=acres_b,
                    acres=abs((acres_b or 0.0) - (acres_a or 0.0)),
                    message=f"easement {key} changed: {acres_a or 0:.4f} -> {acres_b or 0:.4f} acres",
                )
            )
    return out + _added_and_removed("easement", "easement", before, after, crs, measured=True)


def plan_changes(before: Plan, after: Plan, profile: RulesProfile) -> list[PlanChange]:
    """What changed from ``before`` to ``after`` (both in ``after.crs``), in :data:`KINDS`'
    order, numbered ``C1``, ``C2``, ...: area added or removed, or an easement's area gained or
    lost, in parts thinner than the profile's ``[reference] geometry_change_tolerance_ft`` is
    reprojection and digitising round-off, not a change; an SMP moved when its centroid moved
    more than ``[rounds] place_tolerance_ft``."""
    crs = after.crs
    # Round-off, not a change: the reference diff's tolerance (a geometry that moved less).
    round_off = crs_units(profile.reference.geometry_change_tolerance_ft, crs)
    found = (
        _disturbance(before.layers["disturbance"], after.layers["disturbance"], crs, round_off)
        + _smp(before.layers["smp"], after.layers["smp"], crs, profile.rounds.place_tolerance_ft)
        + _easement(before.layers["easement"], after.layers["easement"], crs, round_off)
    )
    found.sort(key=lambda c: KINDS.index(c["kind"]))
    return [PlanChange(id=f"C{i}", **c) for i, c in enumerate(found, start=1)]


def tie_changes(
    changes: Sequence[PlanChange],
    before: Optional[Held],
    after: Optional[Held],
    tolerance: float,
    places_comparable: bool = True,
) -> tuple[list[str], str]:
    """The ids of the changes at a compared finding's place, and that said in words: a change
    on one of its features (``smp:BR-1``), or whose geometry lies within ``tolerance`` (area
    CRS units) of its place in either round (``places_comparable``: the round compared with
    measured in this round's CRS)."""
    features = set((after or before).features) if (after or before) else set()  # type: ignore[union-attr]
    places = [
        h.geometry
        for h, usable in ((before, places_comparable), (after, True))
        if h is not None and usable and h.geometry is not None and not shapely.is_empty(h.geometry)
    ]
    if not changes:
        return [], NO_CHANGE_HERE
    geometries = np.asarray([c.geometry for c in changes], dtype=object)
    near = np.zeros(len(changes), dtype=bool)
    for place in places:
        near |= shapely.distance(geometries, place) <= tolerance
    ids = [c.id for c, n in zip(changes, near) if n or c.feature in features]
    if ids:
        said = "; ".join(f"{c.id} {c.message}" for c in changes if c.id in ids)
        return ids, f"plan changes at its place: {said}"
    if not places and not features & {c.feature for c in changes}:
        return [], f"{NO_CHANGE_HERE} (the finding has no place on the map, and names no changed feature)"
    return [], NO_CHANGE_HERE


def changes_json(changes: Optional[Sequence[PlanChange]], note: Optional[str]) -> dict:
    """``comparison.plan_changes``: ``compared`` (false where a round has no plan: ``note``
    says why), ``note``, ``counts`` by kind, ``changes``."""
    listed = list(changes or ())
    return {
        "compared": changes is not None,
        "note": note,
        "counts": {k: sum(c.kind == k for c in listed) for k in KINDS},
        "changes": [c.to_dict() for c in listed],
    }


def plan_changes_of(review) -> tuple[list, Optional[int]]:
    """The plan changes a compared round measured (``swppp review --round --compare-to N``),
    with their geometries, and N; ([], None) where the review compared nothing."""
    rounds = getattr(review, "rounds", None) or {}
    if "comparison" not in rounds:
        return [], None
    return list(rounds.get("plan_changes") or []), rounds["comparison"]["round"]


def same_plan_crs(a: str, b: Optional[str]) -> bool:
    return b is not None and same_crs(a, b)
