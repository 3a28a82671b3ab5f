"""What changed in a reference layer between two stored versions.

Features are matched by the layer's id (``waterbody_id``, ...). A water in the newer version
only is *newly listed*, one in the older only *delisted* (for other layers: added, removed);
pollutants added or removed and other changed fields are listed per id; a geometry counts as
changed where it moved by more than the profile's tolerance (Hausdorff distance in the area
CRS), so a reprojection's round-off is not a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely

from ..progress import SILENT
from .contract import REFERENCE_LAYERS

__all__ = ["Change", "LayerDiff", "diff_versions", "diff_frames"]


@dataclass
class Change:
    """One feature's change between two versions."""

    kind: str  # "newly listed" / "delisted" / "added" / "removed" / "changed"
    feature_id: str
    name: Optional[str] = None
    pollutants_added: list = field(default_factory=list)
    pollutants_removed: list = field(default_factory=list)
    fields_changed: dict = field(default_factory=dict)  # field -> [old, new]
    geometry_changed: bool = False
    geometry: object = None  # the newer geometry (older for a removed feature), area CRS

    def to_dict(self) -> dict:
        return {
            "change": self.kind,
            "id": self.feature_id,
            "name": self.name,
            "pollutants_added": self.pollutants_added,
            "pollutants_removed": self.pollutants_removed,
            "fields_changed": self.fields_changed,
            "geometry_changed": self.geometry_changed,
        }

    def summary(self) -> str:
        parts = []
        if self.pollutants_added:
            parts.append("pollutants added: " + ", ".join(self.pollutants_added))
        if self.pollutants_removed:
            parts.append("pollutants removed: " + ", ".join(self.pollutants_removed))
        parts += [f"{k}: {old!r} -> {new!r}" for k, (old, new) in self.fields_changed.items()]
        if self.geometry_changed:
            parts.append("geometry changed")
        return "; ".join(parts)


@dataclass
class LayerDiff:
    """Every change of one layer from version ``old`` to version ``new``."""

    layer: str
    old: int
    new: int
    changes: list
    crs: object = None

    def counts(self) -> dict:
        out: dict[str, int] = {}
        for change in self.changes:
            out[change.kind] = out.get(change.kind, 0) + 1
        # Among the features in both versions (a newly listed water's pollutants are all new).
        out["pollutants added"] = sum(1 for c in self.changes if c.kind == "changed" and c.pollutants_added)
        out["pollutants removed"] = sum(
            1 for c in self.changes if c.kind == "changed" and c.pollutants_removed
        )
        out["geometry changed"] = sum(1 for c in self.changes if c.geometry_changed)
        return out

    def to_dict(self) -> dict:
        return {
            "layer": self.layer,
            "from": self.old,
            "to": self.new,
            "counts": self.counts(),
            "changes": [c.to_dict() for c in self.changes],
        }

    def table(self) -> list[str]:
        """The diff for a person: one line per changed feature."""
        head = f"{self.layer}: version {self.old} -> {self.new}: " + (
            ", ".join(f"{n} {k}" for k, n in self.counts().items() if n) or "no changes"
        )
        rows = [
            f"  {c.kind:<13} {c.feature_id:<20} {(c.name or '')[:30]:<30} {c.summary()}".rstrip()
            for c in self.changes
        ]
        return [head] + rows

    def frame(self) -> gpd.GeoDataFrame:
        """The changes as a layer for QGIS (one feature per change, the newer geometry)."""
        records = [
            {
                "change": c.kind,
                "feature_id": c.feature_id,
                "name": c.name,
                "pollutants_added": ";".join(c.pollutants_added),
                "pollutants_removed": ";".join(c.pollutants_removed),
                "fields_changed": "; ".join(f"{k}: {o} -> {n}" for k, (o, n) in c.fields_changed.items()),
                "geometry_changed": int(c.geometry_changed),
            }
            for c in self.changes
        ]
        columns = [
            "change",
            "feature_id",
            "name",
            "pollutants_added",
            "pollutants_removed",
            "fields_changed",
            "geometry_changed",
        ]
        return gpd.GeoDataFrame(
            pd.DataFrame(records, columns=columns), geometry=[c.geometry for c in self.changes], crs=self.crs
        )


def diff_versions(
    store,
    layer: str,
    old: Optional[int],
    new: Optional[int],
    profile,
    match: Optional[str] = None,
    progress=None,
) -> LayerDiff:
    """The diff of ``layer`` between two versions of ``store`` (default: the last two), matched
    by id, or by geometry (``match``; default: by geometry where a version's ids were made
    from feature numbers, as ``layer_versions.stable_ids`` records)."""
    rows = store.versions(layer)
    new_row = store.version_row(layer, new)
    if old is None:
        earlier = [r for r in rows if r.version < new_row.version]
        old_row = earlier[-1] if earlier else new_row
    else:
        old_row = store.version_row(layer, old)
    area_crs = profile.area_crs
    step = (progress or SILENT).step
    step(0.0, f"reading {layer} version {old_row.version}")
    before = store.read_version(layer, old_row.version).to_crs(area_crs)
    step(0.3, f"reading {layer} version {new_row.version}")
    after = store.read_version(layer, new_row.version).to_crs(area_crs)
    tolerance = profile.reference.geometry_change_tolerance_ft
    if match is None:  # ids made from feature numbers ({fid}) are not stable between releases
        match = "geometry" if _unstable(old_row) or _unstable(new_row) else "id"
    step(0.6, f"comparing by {match}")
    return diff_frames(layer, before, after, old_row.version, new_row.version, tolerance, match)


def _unstable(row) -> bool:
    return row.stable_ids is not None and not row.stable_ids


def diff_frames(
    layer: str,
    before: gpd.GeoDataFrame,
    after: gpd.GeoDataFrame,
    old: int,
    new: int,
    tolerance: float,
    match: str = "id",
) -> LayerDiff:
    """Compare two versions' frames (same CRS) feature by feature, matched by id, or by
    geometry (``match="geometry"``) where the source has no stable id."""
    if match == "geometry":
        return _diff_by_geometry(layer, before, after, old, new, tolerance)
    spec = REFERENCE_LAYERS[layer]
    added_name, removed_name = spec.change_words
    key = spec.id_field
    old_frame, new_frame = before.set_index(key), after.set_index(key)
    changes = []
    for fid in new_frame.index.difference(old_frame.index, sort=False):
        changes.append(
            Change(
                added_name,
                fid,
                _name(new_frame, fid),
                pollutants_added=_pollutants(new_frame, fid, spec),
                geometry=new_frame.geometry.loc[fid],
            )
        )
    for fid in old_frame.index.difference(new_frame.index, sort=False):
        changes.append(
            Change(
                removed_name,
                fid,
                _name(old_frame, fid),
                pollutants_removed=_pollutants(old_frame, fid, spec),
                geometry=old_frame.geometry.loc[fid],
            )
        )
    common = new_frame.index.intersection(old_frame.index, sort=False)
    moved = _moved(
        np.asarray(old_frame.geometry.loc[common].array),
        np.asarray(new_frame.geometry.loc[common].array),
        tolerance,
    )
    others = [f for f in spec.fields if f != key and f not in spec.pollutant_fields]
    for fid, geometry_changed in zip(common, moved):
        was, now = _pollutants(old_frame, fid, spec), _pollutants(new_frame, fid, spec)
        changed = {
            f: [_plain(old_frame.at[fid, f]), _plain(new_frame.at[fid, f])]
            for f in others
            if _plain(old_frame.at[fid, f]) != _plain(new_frame.at[fid, f])
        }
        change = Change(
            "changed",
            fid,
            _name(new_frame, fid),
            pollutants_added=sorted(set(now) - set(was)),
            pollutants_removed=sorted(set(was) - set(now)),
            fields_changed=changed,
            geometry_changed=bool(geometry_changed),
            geometry=new_frame.geometry.loc[fid],
        )
        if change.pollutants_added or change.pollutants_removed or changed or geometry_changed:
            changes.append(change)
    order = {added_name: 0, removed_name: 1, "changed": 2}
    changes.sort(key=lambda c: (order[c.kind], c.feature_id))
    return LayerDiff(layer, old, new, changes, crs=after.crs if after.crs is not None else before.crs)


def _moved(old, new, tolerance: float) -> np.ndarray:
    """Where a geometry moved more than ``tolerance``: exact-equal ones skip the Hausdorff cost."""
    if not len(old):
        return np.zeros(0, dtype=bool)
    same = shapely.equals_exact(shapely.normalize(old), shapely.normalize(new), tolerance)
    out = ~same
    check = np.flatnonzero(out)
    if len(check):
        out[check] = shapely.hausdorff_distance(old[check], new[check]) > tolerance
    return out


def _pollutants(frame, fid, spec) -> list:
    """The pollutant names of feature ``fid`` (its layer's pollutant fields), each once."""
    names = set()
    for name in spec.pollutant_fields:
        value = frame.at[fid, name] if name in frame.columns else None
        # Upper case: a version kept from before the import folded names may spell them otherwise.
        if isinstance(value, str):
            names |= {p.strip().upper() for p in value.split(";") if p.strip()}
    return sorted(names)


def _name(frame, fid):
    return _plain(frame.at[fid, "name"]) if "name" in frame.columns else None


def _plain(value):
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


# --- matching by geometry (sources without a stable id) ---------------------------------------


def _diff_by_geometry(layer, before, after, old, new, tolerance) -> LayerDiff:
    """Features matched by shape: equal or near-equal (Hausdorff distance within
    ``tolerance``) is the same feature (its other fields changed: *reclassified*); otherwise
    the old feature overlapping a new one most, by at least half of either's area, is the same
    feature *reshaped*; what is left is *removed* or *added*."""
    spec = REFERENCE_LAYERS[layer]
    key = spec.id_field
    others = [f for f in spec.fields if f != key]
    old_geoms = np.asarray(before.geometry.array, dtype=object)
    new_geoms = np.asarray(after.geometry.array, dtype=object)
    tree = shapely.STRtree(old_geoms)
    taken = np.zeros(len(old_geoms), dtype=bool)
    pairs: list[tuple[int, int, bool]] = []  # (old index, new index, reshaped)
    unmatched = []
    near = shapely.buffer(shapely.envelope(new_geoms), tolerance) if len(new_geoms) else new_geoms
    for j, candidates in _candidates(tree, near):
        found = None
        for i in candidates:
            if not taken[i] and (
                shapely.equals_exact(
                    shapely.normalize(old_geoms[i]), shapely.normalize(new_geoms[j]), tolerance
                )
                or shapely.hausdorff_distance(old_geoms[i], new_geoms[j]) <= tolerance
            ):
                found = i
                break
        if found is None:
            unmatched.append((j, candidates))
        else:
            taken[found] = True
            pairs.append((found, j, False))
    added = []
    for j, candidates in unmatched:
        best, share = None, 0.5
        for i in candidates:
            if taken[i]:
                continue
            overlap = shapely.area(shapely.intersection(old_geoms[i], new_geoms[j]))
            least = min(shapely.area(old_geoms[i]), shapely.area(new_geoms[j])) or 1.0
            if overlap / least >= share:
                best, share = i, overlap / least
        if best is None:
            added.append(j)
        else:
            taken[best] = True
            pairs.append((best, j, True))
    changes = [
        Change("added", str(after.iloc[j][key]), _name(after, after.index[j]), geometry=new_geoms[j])
        for j in added
    ]
    changes += [
        Change("removed", str(before.iloc[i][key]), _name(before, before.index[i]), geometry=old_geoms[i])
        for i in np.flatnonzero(~taken)
    ]
    for i, j, reshaped in pairs:
        was, now = before.iloc[i], after.iloc[j]
        fields = {f: [_plain(was[f]), _plain(now[f])] for f in others if _plain(was[f]) != _plain(now[f])}
        if not fields and not reshaped:
            continue
        changes.append(
            Change(
                "reshaped" if reshaped else "reclassified",
                str(now[key]),
                _plain(now["name"]) if "name" in now.index else None,
                fields_changed=fields,
                geometry_changed=reshaped,
                geometry=new_geoms[j],
            )
        )
    order = {"added": 0, "removed": 1, "reshaped": 2, "reclassified": 3}
    changes.sort(key=lambda c: (order[c.kind], c.feature_id))
    return LayerDiff(layer, old, new, changes, crs=after.crs if after.crs is not None else before.crs)


def _candidates(tree, boxes):
    """(new index, old indices whose envelope meets the new one's, nearest first in order)."""
    if not len(boxes):
        return []
    new_index, old_index = tree.query(boxes)
    grouped: dict[int, list[int]] = {int(j): [] for j in range(len(boxes))}
    for j, i in zip(new_index, old_index):
        grouped[int(j)].append(int(i))
    return sorted(grouped.items())
