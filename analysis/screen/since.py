"""Re-screen on change: the sites whose Condition A or wetland status a new version changed.

The store keeps every imported version (``reference_history``). The sites are screened again
against the layers as they were at version ``since`` (each layer that has a newer version;
the others as they are now), and each site whose answer differs is named with the waters,
watersheds or wetlands that made the difference; a water whose category changed between the
versions (5 to 4a: a TMDL approved) says what it was and what it is now.
"""

from __future__ import annotations

from typing import Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from ..crs import crs_of, transform_geometries
from ..errors import InputError
from ..profile import RulesProfile
from ..reference.connect import open_store
from ..reference.contract import LAYER_NAMES, REFERENCE_LAYERS, ReferenceLayerSpec
from ..reference.links import links
from ..reference.read import Reference
from ..reference.route import water_id
from ..values import has_text
from .screen import Screen, screen_sites
from .sites import Sites

__all__ = ["changes_since", "differences", "FrameReference", "LAYERS"]

LAYERS = LAYER_NAMES  # the reference contract's layers


class FrameReference(Reference):
    """Reference layers held as GeoDataFrames (a stored version read back), read like a file."""

    kind = "versions"

    def __init__(self, label: str, frames: dict[str, gpd.GeoDataFrame]):
        self._frames = {name: frame.rename_axis("fid") for name, frame in frames.items()}
        self._linked: Optional[dict] = None
        super().__init__(label)

    def _layer_names(self) -> list[str]:
        return list(self._frames)

    def _layer_crs(self, actual: str) -> Optional[CRS]:
        crs = self._frames[actual].crs
        return crs_of(crs) if crs is not None else None

    def _fetch(self, actual: str, bbox) -> pd.DataFrame:
        frame = self._frames[actual]
        inside = shapely.intersects(
            shapely.envelope(np.asarray(frame.geometry.values, dtype=object)), shapely.box(*bbox)
        )
        return frame[inside]

    def _attributes(self, actual: str) -> pd.DataFrame:
        return pd.DataFrame(self._frames[actual].drop(columns="geometry"))

    def _links(self, wanted: set) -> Optional[dict]:
        """The waters in each catchment, linked as the import links them
        (:func:`analysis.reference.links.links`), from the versions held: a version's links
        are its own waters'."""
        if self._linked is None:
            catchments = self._frames.get("catchments")
            waters = self._frames.get("impaired_waters")
            if catchments is None or waters is None:
                self._linked = {}
            else:
                shapes = np.asarray(waters.geometry.values, dtype=object)
                if waters.crs is not None and catchments.crs is not None:
                    shapes = transform_geometries(shapes, waters.crs, catchments.crs)
                self._linked = {}
                for catchment, water in links(
                    catchments["catchment_id"], catchments.geometry.values, waters["waterbody_id"], shapes
                ):
                    self._linked.setdefault(catchment, []).append(water)
        return {c: self._linked[c] for c in wanted if c in self._linked}


def changes_since(
    sites: Sites, reference, since: int, profile: RulesProfile, now: Screen
) -> tuple[dict, list[dict]]:
    """(what was compared, the changes): each site whose Condition A or wetland status at
    version ``since`` of the layers differs from ``now`` (the screen against the current ones)."""
    store = open_store(reference) if not isinstance(reference, Reference) else reference._store()
    if store is None:
        raise InputError(
            "a comparison with an earlier version needs the stored versions, and "
            "this reference is not a store made by a reference import",
            path=str(reference),
            fix="give the reference GeoPackage or PostGIS schema the imports went into",
            parameter="since",
        )
    frames, compared, categories = {}, {}, {}
    for layer in LAYERS:
        rows = store.versions(layer)
        if not rows:
            continue
        versions = [r.version for r in rows]
        now_version = versions[-1]
        if since not in versions and since < now_version:
            raise InputError(
                f"there is no version {since} of '{layer}'",
                path=store.label,
                layer=layer,
                fix="versions stored: " + ", ".join(map(str, versions)),
                parameter="since",
            )
        then = min(since, now_version)
        if then != now_version:
            compared[layer] = {"from": then, "to": now_version}
        frames[layer] = store.read_version(layer, then)  # every imported version is kept
        if REFERENCE_LAYERS[layer].category_fields and then != now_version:
            categories = category_changes(
                frames[layer], store.read_version(layer, now_version), REFERENCE_LAYERS[layer]
            )
    label = f"version {since}"
    info = {"label": label, "version": since, "layers": compared}
    if not compared:
        return info, []
    before = screen_sites(sites, FrameReference(f"{store.label} ({label})", frames), profile)
    return info, differences(before.by_site(), now.by_site(), categories)


def category_changes(
    then: pd.DataFrame, now: pd.DataFrame, spec: ReferenceLayerSpec = REFERENCE_LAYERS["impaired_waters"]
) -> dict:
    """{water id: (its category then, now)} of the impaired waters (``spec``'s layer) in both
    versions whose category changed (several rows of one water: their categories, each once)."""
    field = spec.category_fields[0]

    def categories(frame) -> dict:
        out: dict = {}
        recorded = frame[field] if field in frame else [None] * len(frame)
        for wid, category in zip(frame[spec.id_field], recorded):
            if has_text(wid):
                text = str(category).strip() if has_text(category) else ""
                out.setdefault(water_id(wid), {})[text] = None
        return {k: ", ".join(v) for k, v in out.items()}

    before, after = categories(then), categories(now)
    return {k: (before[k], after[k]) for k in before.keys() & after.keys() if before[k] != after[k]}


def differences(before: dict, after: dict, categories: Optional[dict] = None) -> list[dict]:
    """Each site of ``after`` whose Condition A or wetland status differs from ``before``'s,
    and why; ``categories`` (:func:`category_changes`) tells a listed water's change of
    category."""
    out = []
    for site_id, new in after.items():
        old = before.get(site_id)
        if old is None:
            continue
        if old["condition_a"] != new["condition_a"]:
            out.append(
                {
                    "site_id": site_id,
                    "what": "Condition A",
                    "before": old["condition_a"],
                    "after": new["condition_a"],
                    "because": _because_a(old, new, categories or {}),
                }
            )
        if old["wetland_status"] != new["wetland_status"]:
            out.append(
                {
                    "site_id": site_id,
                    "what": "wetlands",
                    "before": old["wetland_status"],
                    "after": new["wetland_status"],
                    "because": _moved("wetland", old["wetlands"], new["wetlands"]),
                }
            )
    return out


def _because_a(old: dict, new: dict, categories: dict) -> str:
    parts = [
        _moved(
            "303(d)-listed water",
            old["listed_waters"],
            new["listed_waters"],
            ("newly listed", "no longer listed"),
            lambda name: _recategorised(categories.get(water_id(name))),
        ),
        _moved("TMDL watershed", old["tmdl_watersheds"], new["tmdl_watersheds"]),
        _moved("receiving water", old["receiving_waters"], new["receiving_waters"]),
    ]
    found = "; ".join(p for p in parts if p)
    return found or f"now: {new['why']}"


def _moved(what: str, old: str, new: str, words=("now met", "no longer met"), told=lambda name: "") -> str:
    before, after = set(filter(None, old.split(";"))), set(filter(None, new.split(";")))
    parts = [f"{what} {name} {words[0]}{told(name)}" for name in sorted(after - before)]
    parts += [f"{what} {name} {words[1]}{told(name)}" for name in sorted(before - after)]
    return "; ".join(parts)


def _recategorised(change: Optional[tuple]) -> str:
    """`` (was category 5, now category 4a)`` for a water whose category changed; else ""."""
    if change is None:
        return ""
    was, now = (f"category {c}" if c else "no category recorded" for c in change)
    return f" (was {was}, now {now})"
