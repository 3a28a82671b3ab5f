"""Reference layers read from QGIS project layers: one more backend of ``analysis.reference.read``.

The analysis reads a reference through :class:`analysis.reference.read.Reference`, whose
backends say what a source holds (layer names, CRS) and hand over the features meeting a box or
the rows carrying given ids; the class itself checks the contract (fields in any case, numbers,
flags, geometry families, finite vertices), reprojects and repairs. :class:`QgisReference` is
that backend over the layers chosen as ``*_LAYER`` parameters, whatever their provider (a memory
layer, a selection, a layer with a subset string, a GeoPackage, PostGIS, a WFS...):

- by place: a ``QgsFeatureRequest`` with the box as its filter rectangle (in the layer's own
  CRS, placed there by the analysis), only the contract's attributes asked for, so a provider
  with a spatial index answers from it and a statewide layer is never read whole;
- by id: an expression request, ``"catchment_id" IN ('A', 'B')``, values quoted by
  ``QgsExpression.quotedValue``, at most ``IDS_PER_REQUEST`` at once; ids the analysis compares
  normalised (trimmed, upper case) that a layer stores otherwise (``"  B "``) are found through
  one read of that field alone, without geometry, then fetched by feature id.

A layer that is a GeoPackage table as it is on disk (no subset string, no selection, no unsaved
edits) is read by its source instead, through the analysis's own GeoPackage reader (SQLite and
the file's R-tree, values as stored): what ``swppp review`` reads of that file, and its
``layer_versions`` where the table has the contract's name. So is a table of a schema that
``swppp reference import`` filled (the contract's table name, a ``geom`` column), through the
analysis's PostGIS reader, where the connection QGIS has to it (credentials of an
``authcfg`` expanded) reaches it from Python too.

Every other layer is read through a snapshot taken on the main thread (:func:`snapshot`: a
``QgsVectorLayerFeatureSource``, or the selection's ``QgsVectorLayerSelectedFeatureSource``),
which QGIS lets another thread read: the analysis runs in Processing's task thread. The
subset string and uncommitted edits are the snapshot's, as the layer shows them.

Errors name the project layer as the project names it (its name in the Layers panel), with the
feature id QGIS shows and the field: ``layer 'County wetlands', feature 12, field 'regulated'``.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Optional

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsDataSourceUri,
    QgsExpression,
    QgsFeatureRequest,
    QgsGeometry,
    QgsProviderRegistry,
    QgsRectangle,
    QgsVectorLayerFeatureSource,
    QgsVectorLayerSelectedFeatureSource,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QDate, QDateTime, Qt, QTime, QVariant

from analysis.crs import crs_of
from analysis.errors import InputError
from analysis.reference.read import SPECS, Found, GeoPackageReference, PostgisReference, Reference

from .algorithms.base import layer_source

__all__ = ["LayerSnapshot", "QgisReference", "snapshot", "IDS_PER_REQUEST"]

# Values asked of a layer in one request (an IN list the provider is handed whole).
IDS_PER_REQUEST = 500
# What the review's JSON says its reference was (``reference.path``).
PROJECT_LAYERS = "QGIS project layers"


@dataclass(frozen=True)
class LayerSnapshot:
    """A project layer as the review reads it, taken on the main thread (:func:`snapshot`)."""

    role: str  # the contract's layer it is given as
    name: str  # its name in the project
    source: str  # its data source (no password)
    provider: str  # its provider ("ogr", "postgres", "memory", ...)
    subset: str  # its subset string ("" where none)
    selected_only: bool  # the selected features only
    crs: Optional[str]  # its CRS as the analysis names one (EPSG code, else WKT); None if none
    fields: tuple  # its field names
    features: Any  # a QgsFeatureSource another thread may read
    # (kind, source, table) of a layer read by its source: ("geopackage", path, table), or
    # ("postgis", connection with its schema, table); None: read through QGIS.
    by_source: Optional[tuple] = None

    def describe(self) -> dict:
        out = {
            "layer": self.name,
            "source": self.source,
            "provider": self.provider,
            "read_by": self.by_source[0] if self.by_source else "qgis",
            # Known only where read by source, from the file's layer_versions.
            "version": "unknown",
        }
        if self.subset:
            out["subset"] = self.subset
        if self.selected_only:
            out["selected_only"] = True
        return out


def snapshot(layer, role: str, selected_only: bool = False) -> LayerSnapshot:
    """``layer`` given as the reference layer ``role``, readable from another thread (call it
    on the main thread); ``selected_only``: its selected features only, as selected now."""
    crs = layer.crs()
    text = None
    if crs.isValid():
        text = (
            crs.authid()
            if crs.authid().upper().startswith("EPSG:")
            else crs.toWkt(QgsCoordinateReferenceSystem.WktVariant.WKT_PREFERRED)
        )
    features = (
        QgsVectorLayerSelectedFeatureSource(layer) if selected_only else QgsVectorLayerFeatureSource(layer)
    )
    # A field "fid" (a GeoPackage's key, as OGR shows it, or a copy of it) is the features'
    # id, as the analysis indexes them, not an attribute.
    fields = tuple(name for name in layer.fields().names() if name.lower() != "fid")
    return LayerSnapshot(
        role=role,
        name=layer.name(),
        source=layer_source(layer),
        provider=layer.providerType(),
        subset=layer.subsetString() or "",
        selected_only=bool(selected_only),
        crs=text,
        fields=fields,
        features=features,
        by_source=None if selected_only else _table_of(layer, role),
    )


def _table_of(layer, role) -> Optional[tuple]:
    """``(kind, source, table)`` where ``layer`` shows a table as it is stored (no subset
    string, no unsaved edits) that the analysis reads itself: a GeoPackage's named table, or
    the ``role`` table of a PostGIS schema ``swppp reference import`` made."""
    if layer.subsetString() or layer.isModified():
        return None
    if layer.providerType() == "ogr":
        parts = QgsProviderRegistry.instance().decodeUri("ogr", layer.source())
        path, table = parts.get("path") or "", parts.get("layerName") or ""
        if parts.get("subset") or not table or not path.lower().endswith(".gpkg") or not os.path.isfile(path):
            return None
        return "geopackage", os.path.abspath(path), table
    if layer.providerType() == "postgres":
        return _postgis_table(layer, role)
    return None


def _postgis_table(layer, role) -> Optional[tuple]:
    uri = QgsDataSourceUri(layer.source())
    if (
        uri.table() != role
        or uri.geometryColumn() != "geom"
        or uri.sql()
        or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", uri.schema() or "")
    ):
        return None
    source = f"{uri.connectionInfo(True)} schema={uri.schema()}"
    try:  # QGIS reaches it; whether Python does (psycopg, the same credentials) is asked once
        if role not in PostgisReference(source).layers:
            return None
    except Exception:  # noqa: BLE001 - any failure: read through QGIS, as the project does
        return None
    return "postgis", source, role


def _value(value):
    """An attribute as the analysis reads one from a GeoPackage: NULL as None, a date or time
    as its ISO text (SQLite stores it so), anything else as PyQGIS gives it."""
    if isinstance(value, QVariant):
        return None if value.isNull() else value.value()
    if isinstance(value, (QDate, QDateTime, QTime)):
        return None if value.isNull() else value.toString(Qt.DateFormat.ISODate)
    return value


def _wkb(geometry) -> Optional[bytes]:
    """A feature's geometry as WKB shapely reads (curves made linear, as OGR reads them from a
    GeoPackage); None where it has none."""
    if geometry.isNull():
        return None
    if QgsWkbTypes.isCurvedType(geometry.wkbType()):
        geometry = QgsGeometry(geometry.constGet().segmentize())
    return bytes(geometry.asWkb())


class QgisReference(Reference):
    """The reference layers given as project layers (``{contract layer: LayerSnapshot}``).

    An error names the project layer by its own name (no file: ``layer 'County wetlands',
    feature 12, field 'regulated': ...``). ``parameters`` maps a contract layer to the
    algorithm's parameter taking it, for the error of a layer not given.
    """

    kind = "qgis_layers"

    def __init__(self, layers: dict[str, LayerSnapshot], parameters: Optional[dict[str, str]] = None):
        self._given = dict(layers)
        self._parameters = dict(parameters or {})
        # The name each layer goes by in errors: its project name, told apart where two share it.
        names = [snap.name for snap in self._given.values()]
        self._names = {
            role: (snap.name if names.count(snap.name) == 1 else f"{snap.name} ({role})")
            for role, snap in self._given.items()
        }
        self._snaps = {self._names[role]: snap for role, snap in self._given.items()}
        self._odd: dict = {}  # (actual, field, normalise) -> {normalised id: [feature ids]}
        self._sources: dict = {}  # (kind, source) -> its Reference, opened on first read
        super().__init__("")  # no path: the layer's project name says where
        self._actual = dict(self._names)  # contract layer -> the project layer's name

    # What the review asks beyond the hooks -----------------------------------------------
    def require(self, layer: str, needed_for: str) -> str:
        actual = self._actual.get(layer)
        if actual is None:
            raise InputError(
                f"{self.lacks([layer])}, and {needed_for} needs it",
                fix=f"{self.adds(layer)}, or give a reference GeoPackage or PostGIS connection instead",
                parameter=f"{layer}_layer",
            )
        return actual

    def lacks(self, layers) -> str:
        given = ", ".join(f"{role} ('{self._names[role]}')" for role in sorted(self._given))
        return (
            f"no project layer is given as the reference layer "
            f"{', '.join(repr(m) for m in layers)} (reference layers given: "
            f"{given or 'none'})"
        )

    def adds(self, layer: str) -> str:
        return (
            f"choose the project layer holding the {layer} as "
            f"{self._parameters.get(layer, layer.upper() + '_LAYER')}"
        )

    def versions(self) -> dict[str, dict]:
        """Per contract layer read by source from a table of its name, the file's current
        ``layer_versions`` row of it (none for the others: a project layer does not say)."""
        out = {}
        for role, snap in self._given.items():
            if snap.by_source and snap.by_source[2].lower() == role:
                row = self._source(*snap.by_source[:2]).versions().get(snap.by_source[2])
                if row:
                    out[role] = row
        return out

    def describe(self) -> dict:
        described = super().describe()
        layers = {role: snap.describe() for role, snap in sorted(self._given.items())}
        for role, row in described["versions"].items():
            layers[role]["version"] = row["version"]
        return {**described, "path": PROJECT_LAYERS, "project_layers": layers}

    def _source(self, kind, source) -> Reference:
        if (kind, source) not in self._sources:
            self._sources[kind, source] = (
                GeoPackageReference(source) if kind == "geopackage" else PostgisReference(source)
            )
        return self._sources[kind, source]

    def _by_source(self, actual):
        """``(Reference, table)`` of a layer read by its source; else ``(None, None)``."""
        found = self._snaps[actual].by_source
        return (self._source(*found[:2]), found[2]) if found else (None, None)

    # Hooks. A layer read by its source: the review's reads around the site and look-ups are
    # its backend's (the screen's read_boxes, not run from QGIS, reads it through QGIS).
    def _fetch_around(self, actual, bounds, area_crs):
        source, table = self._by_source(actual)
        if source is not None:
            return source._fetch_around(table, bounds, area_crs)
        return super()._fetch_around(actual, bounds, area_crs)

    def _attributes(self, actual):
        source, table = self._by_source(actual)
        if source is not None:
            return source._attributes(table)
        request = QgsFeatureRequest()
        request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
        return self._table(actual, request)

    def _layer_names(self):
        return list(self._given)  # the contract's names, renamed to the project's after

    def _layer_crs(self, actual):
        text = self._snaps[actual].crs
        return crs_of(text) if text else None

    def _fetch(self, actual, bbox):
        fids, names, rows, geometries = self._read(actual, self._box_request(bbox))
        frame = self._frame(fids, names, rows)
        return gpd.GeoDataFrame(
            frame.assign(geometry=gpd.array.from_shapely(geometries)),
            geometry="geometry",
            crs=self._required_crs(actual),
        )

    def _fetch_found(self, actual, bbox):
        return Found.of_rows(*self._read(actual, self._box_request(bbox)))

    def _fetch_boxes(self, actual, boxes):
        # Box by box, so a provider's spatial index answers each; a feature once.
        if len(boxes) < 2:
            return super()._fetch_boxes(actual, boxes)
        frame = pd.concat([self._fetch(actual, tuple(map(float, box))) for box in boxes])
        return gpd.GeoDataFrame(
            frame[~frame.index.duplicated()], geometry="geometry", crs=self._required_crs(actual)
        )

    def _columns(self, actual):
        return self._frame([], self._snaps[actual].fields, [])

    def _lookup_rows(self, actual, field, wanted, normalise):
        """The rows whose ``field`` is one of ``wanted`` (normalised): asked of the provider by
        value (its index), and, for the values the layer stores otherwise than normalised
        (``"  B "`` for ``B``), by feature id after one read of that field alone."""
        snap = self._snaps[actual]
        if snap.by_source:
            return None  # the table read whole once by its source, as `swppp review` reads it
        column = next((name for name in snap.fields if name.lower() == field.lower()), None)
        if column is None:
            return None  # the contract check on the whole table says it is missing
        values = sorted(wanted)
        rows = []
        for start in range(0, len(values), IDS_PER_REQUEST):
            batch = values[start : start + IDS_PER_REQUEST]
            request = QgsFeatureRequest().setFilterExpression(
                f"{QgsExpression.quotedColumnRef(column)} IN "
                f"({', '.join(QgsExpression.quotedValue(v) for v in batch)})"
            )
            request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
            rows.append(self._table(actual, request))
        odd = self._odd_values(actual, column, normalise)
        fids = sorted({fid for value in values for fid in odd.get(value, ())})
        if fids:
            request = QgsFeatureRequest().setFilterFids(fids)
            request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
            rows.append(self._table(actual, request))
        frame = pd.concat(rows) if len(rows) > 1 else rows[0]
        return frame[~frame.index.duplicated()]

    # Reading -----------------------------------------------------------------------------
    def _odd_values(self, actual, column, normalise) -> dict:
        """``{normalised value: [feature ids]}`` of the features whose ``column`` is not stored
        as its normalised text (padded, lower case, a number): read once, that field alone."""
        key = (actual, column, normalise)
        if key not in self._odd:
            request = QgsFeatureRequest()
            request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
            request.setSubsetOfAttributes([column], self._snaps[actual].features.fields())
            odd: dict = {}
            for feature in self._snaps[actual].features.getFeatures(request):
                value = _value(feature[column])
                if value is None:
                    continue
                text = normalise(str(value))
                if not isinstance(value, str) or text != value:
                    odd.setdefault(text, []).append(feature.id())
            self._odd[key] = odd
        return self._odd[key]

    def _box_request(self, bbox) -> QgsFeatureRequest:
        return QgsFeatureRequest().setFilterRect(QgsRectangle(*map(float, bbox)))

    def _needed(self, actual) -> list[str]:
        """The layer's fields the contract reads (matched whatever their case)."""
        contract = {name.lower() for name in SPECS[self._snaps[actual].role].field_names}
        return [name for name in self._snaps[actual].fields if name.lower() in contract]

    def _read(self, actual, request):
        """``(fids, field names, rows, geometries)`` of the features ``request`` gives, with
        the contract's attributes read (the layer's other fields are named, left empty: the
        contract's checks of names see them all) and geometries as shapely's."""
        features = self._snaps[actual].features
        names = self._snaps[actual].fields
        needed = self._needed(actual)
        request.setSubsetOfAttributes(needed, features.fields())
        every = features.fields().names()
        positions = [(names.index(name), every.index(name)) for name in needed]
        fids, rows, wkbs = [], [], []
        for feature in features.getFeatures(request):
            attributes = feature.attributes()
            row = [None] * len(names)
            for k, source in positions:
                row[k] = _value(attributes[source])
            fids.append(feature.id())
            rows.append(tuple(row))
            wkbs.append(_wkb(feature.geometry()))
        geometries = shapely.from_wkb(np.array(wkbs, dtype=object)) if wkbs else np.empty(0, dtype=object)
        return fids, names, rows, np.asarray(geometries, dtype=object)

    def _table(self, actual, request) -> pd.DataFrame:
        fids, names, rows, _ = self._read(actual, request)
        return self._frame(fids, names, rows)

    @staticmethod
    def _frame(fids, names, rows) -> pd.DataFrame:
        index = pd.Index(fids, name="fid")
        if not rows:
            return pd.DataFrame({name: np.empty(0, dtype=object) for name in names}, index=index)
        return pd.DataFrame(rows, columns=list(names), index=index)
