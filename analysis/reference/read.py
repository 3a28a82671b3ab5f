"""Reference layers (wetlands, impaired waters, TMDL watersheds, catchments) read around a site.

A review never reads a statewide layer whole: :meth:`Reference.read` asks the source for the
features in a box around the site only (a GeoPackage answers through its R-tree), then
reprojects those to the area CRS and repairs the invalid ones among them. The contract of the
layers (docs/CONTRACT.md, "Reference layers") is checked on what is read; a missing layer or field
is an :class:`~analysis.errors.InputError` naming the file, the layer and the field.

Sources are told apart by their kind: a GeoPackage path, or a PostgreSQL connection
(``postgresql://...``, ``service=...``, the schema as ``schema=NAME`` in it), read through
``analysis.reference.postgis`` with a spatial WHERE that the GiST index answers. A backend implements
the hooks of :class:`Reference`; the checks see one interface.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Callable, Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

from .. import threads
from ..crs import crs_of, same_crs, to_crs, transform_geometries, transformer
from ..errors import InputError
from ..geometry import geometry_array, in_family, repaired
from ..io.geopackage import (
    geopackage_box_rows,
    geopackage_layers,
    geopackage_reader,
    read_geopackage_boxes,
    read_geopackage_table,
    reader_connection,
    with_stored_texts,
)
from ..io.vector import layer_crs, list_layers, read_layer
from ..siteplan.contract import BOOLEAN_WORDS, FieldSpec, LayerSpec
from ..siteplan.plan import load_layers, match_layer_names, normalise_fields
from ..units import unit_metres
from ..values import feature_labels, present
from .area_copy import AREA_TABLES, AreaCopy, check_finite, copy_rtree, copy_table, gpkg_copies
from .contract import FLAG_FIELDS, NUMERIC_FIELDS
from .contract import REFERENCE_LAYERS as CONTRACT
from .links import LINKS_TABLE
from .store import HISTORY_TABLE, GeoPackageStore, is_postgres

__all__ = [
    "REFERENCE_LAYERS",
    "Reference",
    "GeoPackageReference",
    "PostgisReference",
    "open_reference",
    "is_postgis_source",
    "bounds_in_crs",
    "boxes_in_crs",
    "meeting_boxes",
    "site_bounds",
    "site_file_bounds",
]

log = logging.getLogger(__name__)

# The contract's layers as the site plan's reader checks them (a field added later: the
# column may be missing), and the table of versions a store keeps.
REFERENCE_LAYERS = tuple(
    LayerSpec(
        spec.name,
        spec.families,
        tuple(FieldSpec(f.name, column_required=not f.added) for f in spec.columns),
        id_field=spec.id_field,
        label=spec.label,
    )
    for spec in CONTRACT.values()
) + (
    LayerSpec(
        "layer_versions",
        None,
        tuple(
            FieldSpec(f)
            for f in ("layer", "version", "source", "source_date", "imported_at", "feature_count", "sha256")
        ),
    ),
)
SPECS = {spec.name: spec for spec in REFERENCE_LAYERS}
_NUMERIC = NUMERIC_FIELDS
_FLAGS = FLAG_FIELDS  # 1 or 0
_DENSIFY_POINTS = 21  # points per edge when a box is transformed into another CRS
_BOX_PAD = 1e-3  # relative margin: the box stays covering between the densified points
# The shortest piece a projected box's edge is cut into for :func:`boxes_in_crs`: a chord this
# long strays from the transformed edge by about 2 cm (its length squared over eight times the
# earth's radius), a fiftieth of the margin ``_BOX_PAD`` gives a box with such edges (less for
# a smaller box: a 300 m box's corners stray by 2 mm from its edges, against a 0.3 m margin).
_DENSIFY_SEGMENT_M = 1_000.0
# At most this many reaches are told apart when features are read to their own reach
# (``Reference.read_boxes``): beyond, each reach is taken up to the next one kept.
_REACH_LEVELS = 4


def is_postgis_source(source) -> bool:
    """Whether ``source`` names a PostgreSQL connection rather than a file."""
    return is_postgres(source)


def open_reference(source) -> Reference:
    """The reference layers at ``source``: a GeoPackage path or a PostgreSQL connection.

    >>> open_reference("/nowhere/ref.gpkg")
    Traceback (most recent call last):
    ...
    analysis.errors.InputError: file /nowhere/ref.gpkg: the file does not exist. Fix: check the path
    """
    if isinstance(source, Reference):
        return source
    if is_postgis_source(source):
        return PostgisReference(str(source))
    return GeoPackageReference(source)


def bounds_in_crs(bounds: Sequence[float], from_crs, to_crs) -> tuple[float, float, float, float]:
    """A box that covers ``bounds`` (in ``from_crs``) once transformed into ``to_crs``.

    The edges are densified before transforming, so a box that curves in the other CRS is
    still covered, and a small margin is added.
    """
    minx, miny, maxx, maxy = map(float, bounds)
    if same_crs(from_crs, to_crs):
        return minx, miny, maxx, maxy
    minx, miny, maxx, maxy = transformer(from_crs, to_crs).transform_bounds(
        minx, miny, maxx, maxy, densify_pts=_DENSIFY_POINTS
    )
    pad = _BOX_PAD * max(maxx - minx, maxy - miny)
    return minx - pad, miny - pad, maxx + pad, maxy + pad


def boxes_in_crs(boxes: np.ndarray, from_crs, to_crs) -> np.ndarray:
    """:func:`bounds_in_crs` of many boxes at once (an (n, 4) array of minx, miny, maxx, maxy).

    Each edge is densified as :func:`bounds_in_crs` densifies it, into at most
    ``_DENSIFY_POINTS - 1`` pieces, but (in a projected CRS) into none shorter than
    ``_DENSIFY_SEGMENT_M``: a site's box (hundreds of metres) is transformed by its corners,
    whose chords stray from the curved edges by millimetres, far inside the margin added."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    if same_crs(from_crs, to_crs) or not len(boxes):
        return boxes
    moved, pad = _outlines_in_crs(boxes, from_crs, to_crs)
    return shapely.bounds(moved) + np.column_stack([-pad, -pad, pad, pad])


def _outlines_in_crs(boxes: np.ndarray, from_crs, to_crs) -> tuple[np.ndarray, np.ndarray]:
    """The boxes' outlines, densified as :func:`boxes_in_crs` says, moved into ``to_crs``, and
    the margin each needs to cover its box there."""
    size = np.maximum(boxes[:, 2] - boxes[:, 0], boxes[:, 3] - boxes[:, 1])
    step = np.maximum(size, 1e-9) / (_DENSIFY_POINTS - 1)
    source = crs_of(from_crs)
    if source.is_projected:
        step = np.maximum(step, _DENSIFY_SEGMENT_M / unit_metres(source))
    moved = transform_geometries(shapely.segmentize(shapely.box(*boxes.T), step), from_crs, to_crs)
    placed = shapely.bounds(moved)
    return moved, _BOX_PAD * np.maximum(placed[:, 2] - placed[:, 0], placed[:, 3] - placed[:, 1])


def _shapes_in_crs(boxes: np.ndarray, from_crs, to_crs) -> np.ndarray:
    """Polygons covering each of ``boxes`` once moved into ``to_crs``: the moved outline
    widened by the margin of :func:`boxes_in_crs` (tighter than its box where the grids are
    turned from each other)."""
    if same_crs(from_crs, to_crs) or not len(boxes):
        return shapely.box(*boxes.T)
    moved, pad = _outlines_in_crs(boxes, from_crs, to_crs)
    return shapely.buffer(moved, pad, join_style="mitre")


class Found:
    """What a source gave for a box, before a frame is made of it: the features' ids, their
    attributes (made into a frame only when asked, of the features still kept), their
    geometries (None where the layer has no geometry column)."""

    def __init__(
        self,
        fids: Sequence,
        attributes: Callable[[np.ndarray], pd.DataFrame],
        geometries: Optional[np.ndarray],
        positions: Optional[np.ndarray] = None,
    ):
        self.fids = fids
        self.geometries = geometries
        self._attributes = attributes
        self._positions = np.arange(len(fids)) if positions is None else positions

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Found:
        """What a backend's frame (a GeoDataFrame, or a DataFrame of a table) holds."""
        if not isinstance(frame, gpd.GeoDataFrame):
            return cls(frame.index, frame.iloc.__getitem__, None)
        geometries = np.asarray(frame.geometry.values, dtype=object)
        attributes = pd.DataFrame(frame.drop(columns=frame.geometry.name))
        return cls(frame.index, attributes.iloc.__getitem__, geometries)

    @classmethod
    def of_rows(
        cls, fids: Sequence[int], names: Sequence[str], rows: Sequence[tuple], geometries: np.ndarray
    ) -> Found:
        """Rows read from a table (each feature's attributes a tuple in ``names`` order),
        made into a frame indexed by ``fid`` as :func:`~analysis.io.geopackage.read_geopackage_boxes`
        makes it."""

        def attributes(positions: np.ndarray) -> pd.DataFrame:
            index = pd.Index([fids[k] for k in positions], name="fid")
            if not len(positions):  # the same empty object columns, made ~4x faster on pandas 1.5
                return pd.DataFrame({name: np.empty(0, dtype=object) for name in names}, index=index)
            return pd.DataFrame([rows[k] for k in positions], columns=list(names), index=index)

        return cls(fids, attributes, geometries)

    def take(self, positions: np.ndarray) -> Found:
        """The features at ``positions`` (of those still kept) alone."""
        return Found(
            [self.fids[k] for k in positions],
            self._attributes,
            None if self.geometries is None else self.geometries[positions],
            self._positions[positions],
        )

    def with_geometries(self, geometries: np.ndarray) -> Found:
        return Found(self.fids, self._attributes, geometries, self._positions)

    def attributes(self) -> pd.DataFrame:
        """The kept features' attributes, one frame made."""
        return self._attributes(self._positions)


class Reference:
    """Reference layers from one source, read only around a site.

    A backend implements the hooks :meth:`_layer_names`, :meth:`_layer_crs`, :meth:`_fetch`
    (features whose envelope meets a box in the layer's own CRS, through the source's spatial
    index) and :meth:`_attributes` (a layer's attribute table, for look-ups by value); this
    class validates the contract, reprojects, repairs and records what was read.
    """

    kind = "reference"

    def __init__(self, label: str):
        self.label = label
        self._read_fids: dict[str, set] = {}  # per contract layer, the features read
        self.repaired: list[str] = []
        self._actual = match_layer_names(label, self._layer_names())
        self._tables: dict[str, pd.DataFrame] = {}  # attribute tables read for look-ups
        self._crss: dict[str, CRS] = {}  # each layer's CRS, asked of the source once
        self._copied: set[str] = set()  # the layers read through their area copy

    # Hooks for a backend ---------------------------------------------------------------
    def _layer_names(self) -> list[str]:
        raise NotImplementedError

    def _layer_crs(self, actual: str) -> Optional[CRS]:
        raise NotImplementedError

    def _fetch(self, actual: str, bbox: tuple[float, float, float, float]) -> pd.DataFrame:
        raise NotImplementedError

    def _attributes(self, actual: str) -> pd.DataFrame:
        raise NotImplementedError

    def _lookup_rows(
        self, actual: str, field: str, wanted: set, normalise: Callable[[str], str]
    ) -> Optional[pd.DataFrame]:
        """For :meth:`lookup`: attribute rows of the layer among which are all those whose
        contract ``field`` normalised is one of ``wanted`` (a backend that can ask its source
        by value); None (the default): the whole table is read once and kept."""
        return None

    def _columns(self, actual: str) -> pd.DataFrame:
        """:meth:`_attributes` without its rows (a backend that can, reads none)."""
        return self._attributes(actual).iloc[0:0]

    def _links(self, wanted: set) -> Optional[dict]:
        """For :meth:`water_links`: {catchment_id: [waterbody_id]} of ``wanted`` from the
        store's route table; None where the source has none (a layer file, QGIS layers)."""
        return None

    def _area_copy(self, actual: str, area_crs) -> Optional[AreaCopy]:
        """The store's area copy of ``actual`` where it serves a reader in ``area_crs`` (made
        from the current version, in that CRS, not edited since: ``reference.area_copy``); None
        (the default) where the source keeps none."""
        return None

    def _fetch_copy(self, actual: str, boxes: np.ndarray) -> pd.DataFrame:
        """:meth:`_fetch_boxes` of the features of ``actual`` through its area copy (``boxes``
        and the geometries in the area CRS), for a backend whose :meth:`_area_copy` gives one."""
        raise NotImplementedError

    def _copy_repaired(self, actual: str) -> set:
        """The features of ``actual`` its area copy keeps repaired (their ids)."""
        return set()

    # What the checks use ----------------------------------------------------------------
    def water_links(self, wanted: Iterable[str]) -> Optional[dict]:
        """The waters in each catchment of ``wanted`` (trimmed ids), as the import linked them
        (:mod:`analysis.reference.links`); None where the source holds no such links."""
        return self._links({str(c).strip() for c in wanted})

    @contextmanager
    def opened(self) -> Iterator[Reference]:
        """The source kept open while inside (one review's reads), where a backend can: a
        GeoPackage is read through one SQLite connection, not one per question."""
        yield self

    @property
    def features_read(self) -> dict[str, int]:
        """Per contract layer, how many features the review has read (each counted once)."""
        return {layer: len(fids) for layer, fids in self._read_fids.items()}

    @property
    def layers(self) -> list[str]:
        """The source's layer names, as they are spelt there."""
        return sorted(self._actual.values())

    def has(self, layer: str) -> bool:
        return layer in self._actual

    def lacks(self, layers: Sequence[str]) -> str:
        """How a finding says this reference lacks the contract layers ``layers``."""
        return (
            f"the reference {self.label} has no {', '.join(repr(m) for m in layers)} layer "
            f"(layers found: {', '.join(self.layers) or 'none'})"
        )

    def adds(self, layer: str) -> str:
        """What adds contract layer ``layer`` to this reference."""
        return f"swppp reference import {layer} SOURCE --reference {self.label}"

    def require(self, layer: str, needed_for: str) -> str:
        """The source's name of contract layer ``layer``; an error naming it where it is missing."""
        actual = self._actual.get(layer)
        if actual is None:
            raise InputError(
                f"the reference layer '{layer}' is missing, and {needed_for} needs "
                f"it (layers found: {', '.join(self.layers) or 'none'})",
                path=self.label,
                layer=layer,
                fix=f"add a layer named '{layer}' as docs/CONTRACT.md describes "
                "(SWPPP Review's reference import makes one)",
            )
        return actual

    def read(
        self, layer: str, bounds: Sequence[float], area_crs, needed_for: str = "the review"
    ) -> gpd.GeoDataFrame:
        """The features of ``layer`` that intersect ``bounds``, in ``area_crs``.

        ``bounds`` is (minx, miny, maxx, maxy) in ``area_crs``. Only features whose envelope
        meets the box are read from the source, and only those whose shape meets it (told in
        the layer's own CRS, by the box placed there, as :meth:`read_boxes` tells it) are
        reprojected, checked against the contract and repaired (make_valid, keeping the
        layer's geometry family). One frame is made, of the features kept.
        """
        spec = SPECS[layer]
        actual = self.require(layer, needed_for)
        area_crs = crs_of(area_crs)
        found = self._fetch_around(actual, bounds, area_crs)
        attributes = self._contract_frame(actual, spec, found.attributes())
        if found.geometries is None:
            raise InputError(
                "the layer has no geometry",
                path=self.label,
                layer=actual,
                fix=f"'{spec.name}' must hold {' or '.join(spec.geometry or ())} features",
            )
        self._check_families(actual, spec, found.geometries, attributes.index)
        geometries = self._repaired(
            spec, found.geometries, attributes, self._before(actual, area_crs, attributes)
        )
        inside = shapely.intersects(geometries, shapely.box(*bounds))
        if not inside.all():
            attributes, geometries = attributes[inside], geometries[inside]
        # The geometry column assigned, then named: GeoDataFrame(attributes, geometry=array)
        # costs ~1.7x as much on both stacks (geopandas asks the frame for the geometry column
        # it does not have yet, and builds an error message to throw away).
        frame = gpd.GeoDataFrame(
            attributes.assign(geometry=geometry_array(geometries, crs=area_crs)),
            geometry="geometry",
            copy=False,
        )
        self._read_fids.setdefault(layer, set()).update(frame.index)
        return frame

    def read_boxes(
        self,
        layer: str,
        boxes: np.ndarray,
        area_crs,
        needed_for: str = "the screen",
        reach: Optional[tuple[np.ndarray, Callable[[pd.DataFrame], np.ndarray]]] = None,
        known: Optional[set] = None,
    ) -> gpd.GeoDataFrame:
        """The features of ``layer`` that intersect any of ``boxes`` (an (n, 4) array in
        ``area_crs``), in ``area_crs``: :meth:`read` for many sites at once, the source asked
        once for the union of the boxes (a GeoPackage through its R-tree joined with them).

        ``reach``: (the sites' own boxes in ``area_crs``, a function giving each feature's
        reach in ``area_crs`` units from its contract fields). A feature that comes within its
        reach of no site's box is left unread (neither reprojected nor repaired): it can meet
        no site at its own distance. What is read is always checked whole (fields, vertices,
        geometry types), as :meth:`read` checks it.

        ``known``: features a caller holds already from earlier reads (their ids, as the
        frames' index gave them), left out unread (neither reprojected nor checked again): the
        screen's route, reading around downstream catchments next to those it holds."""
        spec = SPECS[layer]
        actual = self.require(layer, needed_for)
        area_crs = crs_of(area_crs)
        boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
        copy = self._area_copy(actual, area_crs)
        if copy is None:
            crs = self._required_crs(actual)
            own_boxes = boxes_in_crs(boxes, area_crs, crs)
            frame = self._fetch_boxes(actual, own_boxes)
        else:  # read already moved and repaired: the same geometries, nothing moved here
            crs, own_boxes = area_crs, boxes
            frame = self._fetch_copy(actual, boxes)
        if known:
            frame = frame[~frame.index.isin(list(known))]
        if isinstance(frame, gpd.GeoDataFrame):
            geometries = np.asarray(frame.geometry.values, dtype=object)
            self._check_finite(actual, geometries, frame.index)
            if len(frame):  # only the features meeting a box (or in reach) are reprojected
                if reach is None:
                    keep = np.zeros(len(frame), dtype=bool)
                    keep[meeting_boxes(geometries, own_boxes)] = True
                else:
                    frame = self._contract_frame(actual, spec, frame)
                    sites, distances = reach
                    keep = _within_reach(
                        geometries,
                        np.asarray(distances(frame), dtype=float),
                        np.asarray(sites, dtype=float).reshape(-1, 4),
                        area_crs,
                        crs,
                    )
                keep |= shapely.is_missing(geometries) | shapely.is_empty(geometries)
                frame = frame[keep]
            frame = to_crs(frame.set_crs(crs, allow_override=True), area_crs)
        frame = self._features(actual, spec, frame, area_crs if copy is not None else None)
        if copy is None or reach is not None:  # (read through the copy, meeting the boxes was told)
            hit = meeting_boxes(np.asarray(frame.geometry.values, dtype=object), boxes)  # sorted, once each
            frame = frame.iloc[hit]
        self._read_fids.setdefault(layer, set()).update(frame.index)
        return frame

    def _fetch_boxes(self, actual: str, boxes: np.ndarray) -> pd.DataFrame:
        """Features whose envelope meets any of ``boxes`` (the layer's CRS): by default those
        in the box around them all; a backend with a spatial index asks it box by box."""
        minx, miny = boxes[:, :2].min(axis=0)
        maxx, maxy = boxes[:, 2:].max(axis=0)
        return self._fetch(actual, (float(minx), float(miny), float(maxx), float(maxy)))

    def lookup(
        self,
        layer: str,
        field: str,
        values: Iterable[str],
        normalise: Callable[[str], str] = str,
        needed_for: str = "the review",
    ) -> pd.DataFrame:
        """Attribute rows of ``layer`` whose ``field``, normalised, is one of ``values`` normalised.

        For finding a water by its id or name wherever it lies (no geometry is read).
        """
        spec = SPECS[layer]
        actual = self.require(layer, needed_for)
        wanted = {normalise(str(v)) for v in values}
        if not wanted and layer not in self._tables:  # nothing asked: the fields checked alone
            return _without_geometry(self._contract_frame(actual, spec, self._columns(actual)))
        rows = None if layer in self._tables else self._lookup_rows(actual, field, wanted, normalise)
        if rows is not None:  # the backend's candidates, not kept; the layer counted as read
            frame = _without_geometry(self._contract_frame(actual, spec, rows))
            self._read_fids.setdefault(layer, set())
        else:
            if layer not in self._tables:
                self._tables[layer] = _without_geometry(
                    self._contract_frame(actual, spec, self._attributes(actual))
                )
            frame = self._tables[layer]
        if not wanted or frame.empty:
            return frame.iloc[0:0]
        matched = np.fromiter(
            (present(v) and normalise(str(v)) in wanted for v in frame[field].to_numpy(dtype=object)),
            dtype=bool,
            count=len(frame),
        )
        read = self._read_fids.setdefault(layer, set())  # the layer counted as read, if none
        if not matched.any():  # none found: the table's first none (no rows copied)
            return frame.iloc[0:0]
        found = frame[matched]
        read.update(found.index)
        return found

    def versions(self) -> dict[str, dict]:
        """Per layer, its current ``layer_versions`` row (the store's; empty without the table)."""
        store = self._store()
        if store is None or not self.has("layer_versions"):
            return {}
        rows = {r.layer: r for r in self._current_versions()}  # by layer, version: the last is current
        return {
            layer: {
                "version": r.version,
                "source_date": r.source_date,
                "imported_at": r.imported_at,
                "sha256": r.sha256,
            }
            for layer, r in sorted(rows.items())
        }

    def _store(self):
        """The reference store (``analysis.reference.store``) behind this source, if any."""
        return

    def _current_versions(self) -> list:
        """The store's ``layer_versions`` rows (:meth:`versions`)."""
        return self._store().versions()

    def describe(self) -> dict:
        """What the review's JSON records under ``reference``: the source, its layers, each
        layer's current version (``versions``), and per layer read the features read and the
        version they came from (``read``); the reference features repaired."""
        versions = self.versions()
        read = {
            layer: {
                "features": count,
                **(
                    {"version": versions[layer]["version"], "source_date": versions[layer]["source_date"]}
                    if layer in versions
                    else {}
                ),
                **({"area_copy": True} if self._actual.get(layer) in self._copied else {}),
            }
            for layer, count in sorted(self.features_read.items())
        }
        return {
            "path": self.label,
            "kind": self.kind,
            "layers": self.layers,
            "versions": versions,
            "read": read,
            "repaired": list(self.repaired),
        }

    def _fetch_around(self, actual, bounds, area_crs) -> Found:
        """The features whose shape meets ``bounds`` (area CRS), their geometries reprojected
        to the area CRS: the box is transformed into the layer's own CRS for the source's
        spatial index, which gives the features whose envelope meets it; of those, the ones
        whose shape meets that box are kept (a feature with no geometry, or an empty one,
        meets none), their vertices checked finite first, and only those are reprojected."""
        crs = self._required_crs(actual)
        box = bounds_in_crs(bounds, area_crs, crs)
        found = self._fetch_found(actual, box)
        if found.geometries is None:
            return found
        self._check_finite(actual, found.geometries, found.fids)
        meets = shapely.intersects(found.geometries, shapely.box(*box))
        kept = found if meets.all() else found.take(np.flatnonzero(meets))
        geometries = kept.geometries
        if geometries is None:  # not so: taken from a frame with geometries
            return kept
        return kept.with_geometries(transform_geometries(geometries, crs, area_crs))

    def _fetch_found(self, actual: str, bbox: tuple[float, float, float, float]) -> Found:
        """:meth:`_fetch` as a :class:`Found`: a backend that can say what it read before
        making a frame of it gives that instead."""
        return Found.of(self._fetch(actual, bbox))

    def _features(self, actual, spec, frame, copied=None) -> gpd.GeoDataFrame:
        """What the source gave, as the contract's features: fields checked, features without
        geometry dropped, geometry families checked, invalid ones repaired (``copied``: the
        area CRS of the area copy they were read from, which keeps them repaired)."""
        frame = self._contract_frame(actual, spec, frame)
        if not isinstance(frame, gpd.GeoDataFrame):
            raise InputError(
                "the layer has no geometry",
                path=self.label,
                layer=actual,
                fix=f"'{spec.name}' must hold {' or '.join(spec.geometry)} features",
            )
        geometries = np.asarray(frame.geometry.values, dtype=object)
        if copied is not None:  # the copy's repaired ones recorded, those a repair emptied too
            self._record_repaired(spec, frame, self._before(actual, copied, frame))
        none = shapely.is_missing(geometries) | shapely.is_empty(geometries)
        if none.any():
            frame, geometries = frame[~none], geometries[~none]
        self._check_families(actual, spec, geometries, frame.index)
        repaired = self._repaired(spec, geometries, frame)
        if repaired is geometries:
            return frame
        return frame.set_geometry(gpd.GeoSeries(geometry_array(repaired, crs=frame.crs), index=frame.index))

    def _before(self, actual, area_crs, frame: pd.DataFrame) -> Optional[np.ndarray]:
        """Which features of ``frame`` (indexed by id) the area copy they were read from keeps
        repaired; None where they were not read from one."""
        if self._area_copy(actual, area_crs) is None:
            return None
        self._copied.add(actual)
        repaired = self._copy_repaired(actual)
        return frame.index.isin(list(repaired)) if repaired else np.zeros(len(frame), dtype=bool)

    def _required_crs(self, actual) -> CRS:
        """The layer's CRS; an InputError where it has none (nothing could be placed)."""
        crs = self._crss.get(actual) or self._layer_crs(actual)
        if crs is None:
            raise InputError(
                "the layer has no coordinate reference system (or an undefined one)",
                path=self.label,
                layer=actual,
                fix="assign the layer's true CRS in QGIS and save it again",
            )
        self._crss[actual] = crs
        return crs

    def _check_finite(self, actual, geometries: np.ndarray, fids: Sequence) -> None:
        """An InputError naming the first of ``geometries`` (the features ``fids``) with a NaN
        or infinite vertex (no geometry to use)."""
        check_finite(self.label, actual, fids, geometries)

    # Validation of what is read -------------------------------------------------------------
    def _contract_frame(self, actual, spec, frame):
        frame = normalise_fields(self.label, actual, spec, frame)
        columns = set(frame.columns)  # asked of a set: of pandas 3's Index, a lookup each
        for name in spec.field_names:  # a field added to the contract later: empty where absent
            if name not in columns:
                frame[name] = None
        for name in _NUMERIC & set(spec.field_names):
            # A column of numbers already (a GeoPackage's REAL or INTEGER column as SQLite
            # gives it) is checked as it is: converting it would give it back unchanged.
            column = frame[name]
            numeric = pd.api.types.is_numeric_dtype(column.dtype)
            if name in _FLAGS and not numeric:  # yes/no/true/false spell 1/0, as in the site plan
                column = column.map(
                    lambda v: BOOLEAN_WORDS.get(v.strip().lower(), v) if isinstance(v, str) else v
                )
            # The column is put in the frame once, converted (each assignment copies on pandas 3).
            numbers = column if numeric else pd.to_numeric(column, errors="coerce")
            values = numbers.to_numpy(dtype=float, na_value=np.nan)
            unread = np.zeros(len(values), dtype=bool) if numeric else np.isnan(values)
            if unread.any():  # text that is no number (only these are looked at)
                unread[unread] = column[unread].map(present).astype(bool).to_numpy()
            bad = unread | np.isinf(values)
            if name in _FLAGS:
                bad |= ~np.isnan(values) & ~np.isin(values, (0, 1))
            if bad.any():
                fid = frame.index[np.flatnonzero(bad)[0]]
                held = column.loc[fid]
                held = held.item() if isinstance(held, np.generic) else held  # inf, not np.float64(inf)
                raise InputError(
                    f"{name} is {held!r}, not a "
                    + ("flag (1 or 0, yes or no)" if name in _FLAGS else "finite number"),
                    path=self.label,
                    layer=actual,
                    feature=fid,
                    field=name,
                    fix="enter a number (0/1 for a flag) or leave it empty",
                )
            if not numeric:
                frame[name] = numbers
        return frame

    def _check_families(self, actual, spec, geometries: np.ndarray, fids: Sequence):
        """An InputError naming the first of ``geometries`` (the features ``fids``) not of
        the layer's geometry family."""
        types = shapely.get_type_id(geometries)
        wrong = ~in_family(geometries, *spec.geometry)
        if wrong.any():
            fid = fids[np.flatnonzero(wrong)[0]]
            raise InputError(
                f"a {shapely.GeometryType(types[wrong][0]).name.title()} where "
                f"{' or '.join(spec.geometry)} geometry is required",
                path=self.label,
                layer=actual,
                feature=fid,
                fix="keep only the contract's geometry in the layer",
            )

    def _repaired(
        self, spec, geometries: np.ndarray, frame: pd.DataFrame, before: Optional[np.ndarray] = None
    ) -> np.ndarray:
        """``geometries`` (those of the features of ``frame``) with the invalid ones repaired
        and recorded by their labels; ``geometries`` itself where none is invalid. ``before``:
        which of them were repaired already (read from the store's area copy, which keeps them
        repaired): recorded as repaired all the same."""
        geometries, invalid = repaired(geometries, spec.geometry == ("polygon",))
        self._record_repaired(spec, frame, invalid if before is None else invalid | before)
        return geometries

    def _record_repaired(self, spec, frame: pd.DataFrame, which: Optional[np.ndarray]) -> None:
        """The features of ``frame`` that ``which`` picks recorded as repaired, by their labels."""
        if which is not None and which.any():
            self.repaired.extend(feature_labels(spec.name, frame[which], spec.id_field))
            log.info("repaired %d invalid %s geometries", int(which.sum()), spec.name)


class LayersPresent:
    """``reference`` with each contract layer it lacks read as empty (the contract's fields, no
    feature), so that a check or the screen decides on the layers the store has (issue 34,
    item 4); ``lacking`` names them, for the findings to say."""

    def __init__(self, reference: Reference, lacking: Sequence[str]):
        self._reference, self.lacking = reference, tuple(lacking)

    def __getattr__(self, name: str):
        return getattr(self._reference, name)

    def has(self, layer: str) -> bool:
        return True

    def _empty(self, layer: str, crs) -> gpd.GeoDataFrame:
        return gpd.GeoDataFrame(
            {name: pd.Series(dtype=object) for name in SPECS[layer].field_names},
            geometry=gpd.GeoSeries([], crs=crs_of(crs)),
        )

    def read(self, layer: str, bounds, area_crs, *args, **keywords) -> gpd.GeoDataFrame:
        if layer in self.lacking:
            return self._empty(layer, area_crs)
        return self._reference.read(layer, bounds, area_crs, *args, **keywords)

    def read_boxes(self, layer: str, boxes, area_crs, *args, **keywords) -> gpd.GeoDataFrame:
        if layer in self.lacking:
            return self._empty(layer, area_crs)
        return self._reference.read_boxes(layer, boxes, area_crs, *args, **keywords)

    def lookup(self, layer: str, *args, **keywords) -> pd.DataFrame:
        if layer in self.lacking:
            return pd.DataFrame(columns=list(SPECS[layer].field_names))
        return self._reference.lookup(layer, *args, **keywords)


def _grouped(rows) -> dict:
    """{catchment_id: [waterbody_id, ...]} of (catchment_id, waterbody_id) rows."""
    out: dict = {}
    for catchment, water in rows:
        out.setdefault(str(catchment).strip(), []).append(str(water).strip())
    return out


def _without_geometry(frame: pd.DataFrame) -> pd.DataFrame:
    """An attribute table as the look-ups keep it: a plain frame, no geometry column."""
    return pd.DataFrame(frame.drop(columns="geometry")) if "geometry" in frame.columns else frame


def meeting_boxes(geometries: np.ndarray, boxes: np.ndarray) -> np.ndarray:
    """The positions in ``geometries`` of those intersecting one of ``boxes`` ((n, 4) bounds,
    or polygons) (sorted, once each); those whose envelope meets none are not looked at."""
    if not len(geometries) or not len(boxes):
        return np.zeros(0, dtype=int)
    shapes = boxes if boxes.dtype == object else shapely.box(*np.asarray(boxes).T)
    tree = shapely.STRtree(shapes)
    near = np.unique(threads.query(tree, geometries)[0])
    return near[np.unique(threads.query(tree, geometries[near], predicate="intersects")[0])]


def _within_reach(geometries, distances, sites, area_crs, crs) -> np.ndarray:
    """Which of ``geometries`` (in ``crs``) come within their ``distances`` (``area_crs``
    units) of one of the boxes ``sites`` (``area_crs``), told by the boxes grown by each
    distance and placed in ``crs`` by polygons that cover them: a True may be a little too
    far, a False is never within reach. Where more than ``_REACH_LEVELS`` distances occur,
    each is taken up to the next one told apart."""
    keep = np.zeros(len(geometries), dtype=bool)
    levels = np.unique(distances[np.isfinite(distances)])
    if len(levels) > _REACH_LEVELS:
        levels = levels[np.unique(np.linspace(0, len(levels) - 1, _REACH_LEVELS).round().astype(int))]
    level = np.searchsorted(levels, distances, side="left")
    keep[level >= len(levels)] = True  # no distance told (NaN): kept
    for k, distance in enumerate(levels.tolist()):
        pick = np.flatnonzero(level == k)
        if len(pick):
            grown = _shapes_in_crs(
                sites + np.array([-distance, -distance, distance, distance]), area_crs, crs
            )
            keep[pick[meeting_boxes(geometries[pick], grown)]] = True
    return keep


class GeoPackageReference(Reference):
    """Reference layers in a GeoPackage (or another OGR file), read through its spatial index."""

    kind = "geopackage"

    def __init__(self, path):
        self.path = Path(path)
        self._gpkg_store = GeoPackageStore(self.path) if self.path.suffix.lower() == ".gpkg" else None
        if self._gpkg_store is not None:
            self._gpkg_store.recover()  # what a killed import left is rolled back first
        self._con = None  # the SQLite connection kept while opened()
        # The connection that read the layer names, kept for the first opened() (a review's
        # reads): each new connection reads the file's schema again, about as long as the
        # reads of a one-site review themselves. Closed when that ends, or with this object.
        self._first = (
            geopackage_reader(self.path) if self._gpkg_store is not None and self.path.is_file() else None
        )
        self._version_rows: Optional[list] = None  # read through the open connection, once
        self._copies: Optional[dict] = None  # the store's area copies, read once while opened()
        self._repaired_ids: dict[str, set] = {}  # per layer, the features its area copy repaired
        try:
            if self._first is not None and self._gpkg_store is not None:
                # not a readable GeoPackage: the reading below refuses it by name
                with suppress(sqlite3.DatabaseError):
                    self._gpkg_store.repair_indexes(self._first)  # R-trees checked; rebuilt if writable
            super().__init__(str(self.path))
        except BaseException:
            self._close_first()
            raise

    def _close_first(self) -> None:
        first, self._first = getattr(self, "_first", None), None
        if first is not None:
            first.close()

    def __del__(self):
        self._close_first()

    @contextmanager
    def opened(self) -> Iterator[Reference]:
        if self._gpkg_store is None or self._con is not None:
            yield self
            return
        self._con, self._first = self._first or geopackage_reader(self.path), None
        try:
            # One read transaction across the versions and every read that follows: its first
            # SELECT takes the file's shared lock, so an import cannot commit until it ends (it
            # waits, docs/REFERENCE.md), and the versions recorded are the ones read.
            self._con.execute("BEGIN DEFERRED")
            self._version_rows = self._copies = None
            self._repaired_ids = {}
            try:
                self._con.execute("SELECT count(*) FROM sqlite_master").fetchone()
                if self.has("layer_versions"):
                    self._version_rows = self._gpkg_store.versions_through(self._con)
            except sqlite3.Error:
                self._version_rows = None
            yield self
        finally:
            con, self._con = self._con, None
            self._copies = None
            try:
                if con.in_transaction:
                    con.execute("ROLLBACK")  # read only: nothing to keep
            finally:
                con.close()

    def _store(self):
        return self._gpkg_store

    def _current_versions(self):
        rows = self._version_rows
        if self._con is None:  # after opened(): the versions it read, once
            self._version_rows = None
        return super()._current_versions() if rows is None else rows

    def _connection(self) -> Optional[sqlite3.Connection]:
        """The connection open to the file (opened(), or the one kept for it), if any."""
        return self._con or self._first

    def _layer_names(self):
        # A plain GeoPackage answered by SQLite; anything else (or odder) by the driver.
        return geopackage_layers(
            self.path, unlisted=(HISTORY_TABLE, LINKS_TABLE, *AREA_TABLES), con=self._connection()
        ) or list_layers(self.path)

    def _area_copy(self, actual, area_crs):
        if self._gpkg_store is None:
            return None
        copies = self._copies
        if copies is None:
            con = self._connection()
            with reader_connection(self.path, con) as reader:
                copies = gpkg_copies(reader)
            if con is not None:  # kept while this connection is (not opened(): asked again)
                self._copies = copies
        copy = copies.get(actual)
        if copy is None:
            return None
        current = self.versions().get(actual, {}).get("version")
        return copy if copy.serves(current, area_crs) else None

    def _fetch_copy(self, actual, boxes):
        found = read_geopackage_boxes(
            self.path, actual, boxes, self._connection(), via=(copy_table(actual), copy_rtree(actual))
        )
        if found is None:  # not so: the copy's tables are there while it is recorded
            raise RuntimeError(f"the area copy of '{actual}' could not be read")
        return found

    def _fetch_around(self, actual, bounds, area_crs):
        if self._area_copy(actual, area_crs) is None:
            return super()._fetch_around(actual, bounds, area_crs)
        rows = geopackage_box_rows(
            self.path, actual, [bounds], self._connection(), via=(copy_table(actual), copy_rtree(actual))
        )
        if rows is None:
            raise RuntimeError(f"the area copy of '{actual}' could not be read")
        found = Found.of_rows(*rows)
        if found.geometries is None or not len(found.fids):
            return found
        self._check_finite(actual, found.geometries, found.fids)
        # Those a repair emptied are kept where the copy's index found them (by their envelope
        # before the repair), to be recorded as repaired as a reader of the layer records them.
        meets = shapely.intersects(found.geometries, shapely.box(*bounds)) | shapely.is_empty(
            found.geometries
        )
        return found if meets.all() else found.take(np.flatnonzero(meets))

    def _copy_repaired(self, actual):
        known = self._repaired_ids.get(actual)
        if known is not None:
            return known
        con = self._connection()
        with reader_connection(self.path, con) as reader:
            found = {
                int(r[0])
                for r in reader.execute(f'SELECT fid FROM "{copy_table(actual)}" WHERE repaired = 1')
            }
        if self._con is not None:  # opened(): one version read throughout, asked once
            self._repaired_ids[actual] = found
        return found

    def _layer_crs(self, actual):
        return layer_crs(self.path, actual, self._connection())

    def _fetch(self, actual, bbox):
        # A GeoPackage is read by SQLite through its R-tree, as for the screen's boxes (values
        # as stored: text in a numeric column stays text); another file through OGR.
        found = (
            read_geopackage_boxes(self.path, actual, [bbox], self._connection())
            if self._gpkg_store is not None
            else None
        )
        if found is not None:
            return found
        return with_stored_texts(self.path, actual, read_layer(self.path, actual, bbox=bbox).frame)

    def _fetch_found(self, actual, bbox):
        # As _fetch, the rows kept as SQLite gives them until the features are picked.
        rows = (
            geopackage_box_rows(self.path, actual, [bbox], self._connection())
            if self._gpkg_store is not None
            else None
        )
        return super()._fetch_found(actual, bbox) if rows is None else Found.of_rows(*rows)

    def _columns(self, actual):
        found = (
            read_geopackage_table(self.path, actual, self._connection(), rows=False)
            if self._gpkg_store is not None
            else None
        )
        return super()._columns(actual) if found is None else found

    def _attributes(self, actual):
        # A GeoPackage's table read by SQLite (values as stored), another file through OGR.
        found = (
            read_geopackage_table(self.path, actual, self._connection())
            if self._gpkg_store is not None
            else None
        )
        if found is not None:
            return found
        return with_stored_texts(self.path, actual, read_layer(self.path, actual, read_geometry=False).frame)

    def _links(self, wanted):
        if self._gpkg_store is None:
            return None
        con = self._connection()
        closing_it = con is None
        con = con or geopackage_reader(self.path)
        try:
            if not con.execute("SELECT 1 FROM sqlite_master WHERE name = ?", (LINKS_TABLE,)).fetchone():
                return None
            return _grouped(
                con.execute(
                    f'SELECT trim(catchment_id), waterbody_id FROM "{LINKS_TABLE}" WHERE '
                    f"trim(catchment_id) IN ({', '.join('?' * len(wanted))}) ORDER BY 1, 2",
                    sorted(wanted),
                ).fetchall()
                if wanted
                else []
            )
        finally:
            if closing_it:
                con.close()

    def _fetch_boxes(self, actual, boxes):
        found = (
            read_geopackage_boxes(self.path, actual, boxes, self._connection())
            if self._gpkg_store is not None and len(boxes)
            else None
        )
        return super()._fetch_boxes(actual, boxes) if found is None else found

    def describe(self) -> dict:
        return {**super().describe(), "path": self.path.name}


class PostgisReference(Reference):
    """Reference layers in a PostGIS schema (``analysis.reference.postgis``), read around the site with a
    spatial WHERE the GiST index answers; look-ups by value are parameterised queries."""

    kind = "postgis"

    def __init__(self, source: str):
        from . import postgis

        self._postgis = postgis
        self._reader = postgis.PostgisReference(source)
        super().__init__(self._reader.source)

    def _store(self):
        return self._reader.store

    @contextmanager
    def opened(self) -> Iterator[Reference]:
        # One snapshot across the versions and every read (PostgisStore.snapshot): the versions
        # recorded are the ones read.
        store = self._reader.store
        if store._held is not None:
            yield self
            return
        with store.snapshot(self.layers):
            self._version_rows = store.versions() if self.has("layer_versions") else None
            yield self

    _version_rows: Optional[list] = None

    def _current_versions(self):
        rows = self._version_rows
        if self._reader.store._held is None:  # after opened(): the versions it read, once
            self._version_rows = None
        return super()._current_versions() if rows is None else rows

    def _layer_names(self):
        return self._reader.layers()

    def _fetch_around(self, actual, bounds, area_crs):
        return Found.of(self._reader.read(actual, bounds, area_crs))

    def _links(self, wanted):
        return self._reader.links(wanted)

    def _attributes(self, actual):
        store = self._reader.store
        sql = store.sql
        with store.connection() as con:
            columns = [
                r[0]
                for r in con.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_schema = %s AND "
                    "table_name = %s AND column_name <> 'geom' ORDER BY ordinal_position",
                    (store.schema, actual),
                ).fetchall()
            ]
            rows = con.execute(
                sql.SQL("SELECT {} FROM {}").format(
                    sql.SQL(", ").join(map(sql.Identifier, columns)), store.ids.table(actual)
                )
            ).fetchall()
        frame = pd.DataFrame(rows, columns=columns)
        return frame.set_index("fid") if "fid" in frame.columns else frame


# The site-plan layers whose extent, widened by the search distance, is the box read.
BOX_LAYERS = ("site_boundary", "disturbance", "discharge_point")


def site_bounds(site, profile) -> tuple[float, float, float, float]:
    """The box (area CRS) reference layers are read from: the site's boundary, disturbance and
    discharge points, widened by the profile's ``[reference] search_distance_ft``."""
    return _widened([site.layer(name) for name in BOX_LAYERS], site.area_crs, profile)


def site_file_bounds(path, profile) -> Optional[tuple[float, float, float, float]]:
    """:func:`site_bounds` of the site plan at ``path``, reading only the layers it needs (for
    QGIS, which copies the reference features in that box before the run); None where the
    plan has none of them (the review then refuses the plan itself)."""
    layers, _repairs = load_layers(path, profile, BOX_LAYERS)
    frames = [layers.get(name) for name in BOX_LAYERS]
    if not any(f is not None and len(f) for f in frames):
        return None
    return _widened(frames, crs_of(profile.area_crs), profile)


def _widened(frames, area_crs, profile) -> tuple[float, float, float, float]:
    from .window import search_windows

    boxes = np.array([f.total_bounds for f in frames if f is not None and len(f)])
    minx, miny, maxx, maxy = search_windows(
        [boxes[:, 0].min(), boxes[:, 1].min(), boxes[:, 2].max(), boxes[:, 3].max()], area_crs, profile
    ).tolist()
    return (minx, miny, maxx, maxy)
