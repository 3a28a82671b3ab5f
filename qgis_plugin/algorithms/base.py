"""What every ``swppp`` algorithm shares: site-plan inputs, outputs, progress and errors.

An algorithm declares its parameters with :meth:`SwpppAlgorithm.add_inputs` and
:meth:`SwpppAlgorithm.add_outputs`, runs the analysis inside :meth:`SwpppAlgorithm.analysis_run`
(which hands it the analysis call's keyword arguments and turns the analysis's errors into
``QgsProcessingException``), and returns :meth:`SwpppAlgorithm.write_results`.
"""
import contextlib
import functools
import os
import shutil
import tempfile
import traceback

from qgis.core import (
    QgsCoordinateReferenceSystem,
    QgsDataSourceUri,
    QgsExpression,
    QgsFeature,
    QgsFeatureRequest,
    QgsProcessing,
    QgsField,
    QgsGeometry,
    QgsProcessingAlgorithm,
    QgsProcessingParameterDefinition,
    QgsProcessingException,
    QgsProcessingFeedback,
    QgsProcessingLayerPostProcessorInterface,
    QgsProcessingOutputNumber,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorDestination,
    QgsProcessingParameterVectorLayer,
    QgsProcessingUtils,
    QgsRectangle,
    QgsVectorFileWriter,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtGui import QIcon

from analysis.errors import InputError, SwpppError
from analysis.findings import STATUSES
from analysis.profile import DEFAULT_PROFILE
from analysis.progress import Progress
from analysis.siteplan.contract import layer_spec, layers_of
from analysis.siteplan.mapping import parse_field_map as read_field_map_json

from .. import PLUGIN_DIR
from ..compat import keep_pyproj_context
from ..layouts import project_layout_maps

__all__ = ["SwpppAlgorithm", "count_output", "feedback_progress", "plugin_icon",
           "parse_field_map", "role_layers", "role_parameter", "export_layer", "layer_source",
           "append_downstream_catchments"]

GPKG_FILTER = "GeoPackage (*.gpkg *.GPKG);;All files (*)"
# The analysis's name of an input (InputError.parameters) -> this plugin's parameter, where it
# is not the same name in capitals.
PARAMETER_NAMES = {"start": "FROM", "end": "TO"}


def plugin_icon():
    return QIcon(os.path.join(PLUGIN_DIR, "icon.svg"))


# The analysis reports in 0..REVIEW_PART of the bar; writing the outputs (the PDF layout at
# 0.95) comes after it, so the bar only goes forward.
REVIEW_PART = 0.9


def feedback_progress(feedback):
    """An analysis ``Progress`` that reports to, and is cancelled through, ``feedback``."""

    def report(fraction, message):
        feedback.setProgress(100.0 * fraction)
        feedback.pushInfo(message)

    return Progress(report=report, is_canceled=feedback.isCanceled)


def parse_field_map(text, roles):
    """FIELD_MAP's JSON text, ``{"role.field": "source field"}``, as ``{role: {field: source}}``.

    Read and checked against the contract by the library (``analysis.siteplan.mapping``, the
    operation ``swppp review --map`` uses); ``roles`` are the role names the algorithm takes.
    A wrong map is a ``QgsProcessingException`` naming the key.
    """
    try:
        mapping = read_field_map_json(text, roles)
    except InputError as err:
        raise QgsProcessingException(str(err)) from None
    return {role: mapping.source_fields(role) for role in mapping.fields}


def role_parameter(role):
    """The parameter taking the site plan's layer ``role``: ``layout_scale`` -> ``LAYOUT_SCALE_LAYER``."""
    return f"{layer_spec(role).name.upper()}_LAYER"


def role_layers(*groups):
    """``(role, parameter, label, accepted layer types)`` of the contract's layers of ``groups``
    (``site``, ``hydrology``, ``checklist``): each site-plan layer's parameter is ``<ROLE>_LAYER``."""
    kinds = {"point": QgsProcessing.SourceType.TypeVectorPoint,
             "line": QgsProcessing.SourceType.TypeVectorLine,
             "polygon": QgsProcessing.SourceType.TypeVectorPolygon}
    out = []
    for spec in layers_of(*groups):
        if spec.geometry is None:
            types = [QgsProcessing.SourceType.TypeVector]
        elif set(spec.geometry) == set(kinds):
            types = [QgsProcessing.SourceType.TypeVectorAnyGeometry]
        else:
            types = [kinds[family] for family in spec.geometry]
        out.append((spec.name, role_parameter(spec.name), spec.label, types))
    return tuple(out)


def missing_fields(layer, role, fields):
    """Say which mapped source field ``layer`` lacks (None when it has them all)."""
    names = layer.fields().names()
    for contract, source in (fields or {}).items():
        if source not in names:
            return (f"Layer '{layer.name()}' ({layer.source()}), given as the site plan's "
                    f"'{role}' layer, has no field '{source}' to read as '{contract}' (FIELD_MAP). "
                    f"Its fields: {', '.join(names) or 'none'}. Choose one of them.")
    return None


class _RenameFields(QgsVectorFileWriter.FieldValueConverter):
    """Renames source fields to the contract's names as the layer is written; values unchanged."""

    def __init__(self, renames):
        super().__init__()
        self._renames = renames  # source field name -> contract field name

    def fieldDefinition(self, field):
        out = QgsField(field)
        if field.name() in self._renames:
            out.setName(self._renames[field.name()])
        return out

    def convert(self, index, value):
        return value

    def clone(self):
        return _RenameFields(self._renames)


def layer_source(layer):
    """``layer``'s data source as a person may read it: any password in the URI left out."""
    return QgsDataSourceUri.removePassword(layer.source())


def export_layer(layer, role, gpkg_path, context, feedback, fields=None, extent=None,
                 geometry=True, given_as=None):
    """Copy ``layer`` into ``gpkg_path`` as the layer named ``role`` (the file is created first);
    the number of features copied.

    ``fields`` (``{contract field: source field}``, from FIELD_MAP) renames the layer's fields
    on the way: a CAD or county layer rarely uses the contract's names. A field already named
    like a mapped contract field is left out, so the mapped one is the one read.

    ``extent`` (a ``QgsRectangle`` in the layer's own CRS) copies only the features that meet
    it: the writer asks the provider with ``QgsFeatureRequest.setFilterRect``, which a
    GeoPackage answers from its R-tree and PostGIS from its GiST index, so a statewide layer is
    never read whole. ``geometry=False`` copies the attribute table only. ``given_as`` says in
    an error what the layer was given as (default: the site plan's ``role`` layer).
    """
    given_as = given_as or f"the site plan's '{role}' layer"
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = role
    options.fileEncoding = "UTF-8"
    options.feedback = feedback
    options.actionOnExistingFile = (QgsVectorFileWriter.ActionOnExistingFile.CreateOrOverwriteLayer
                                    if os.path.exists(gpkg_path)
                                    else QgsVectorFileWriter.ActionOnExistingFile.CreateOrOverwriteFile)
    if extent is not None:
        options.filterExtent = extent
    if not geometry:
        options.overrideGeometryType = QgsWkbTypes.Type.NoGeometry
    converter = None
    if fields:
        names = layer.fields().names()
        missing = missing_fields(layer, role, fields)
        if missing:
            raise QgsProcessingException(missing)
        renames = {source: contract for contract, source in fields.items()}
        shadowed = {c.lower() for c in fields} - {s.lower() for s in fields.values()}
        options.attributes = [i for i, name in enumerate(names)
                              if name in renames or name.lower() not in shadowed]
        converter = _RenameFields(renames)  # held here until the write is done
        options.fieldValueConverter = converter
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        layer, gpkg_path, context.transformContext(), options)
    del converter
    if error != QgsVectorFileWriter.WriterError.NoError:
        raise QgsProcessingException(
            f"Could not copy layer '{layer.name()}' ({layer_source(layer)}) as {given_as}: "
            f"{message}")
    copied = QgsVectorLayer(f"{gpkg_path}|layername={role}", role, "ogr")
    return copied.featureCount() if copied.isValid() else 0


# Source ids asked of a layer in one request (an IN list the provider is handed whole).
_IDS_PER_REQUEST = 500


def _crs_text(layer):
    """``layer``'s CRS as the analysis names one: its EPSG code, else its WKT."""
    crs = layer.crs()
    return (crs.authid() if crs.authid().upper().startswith("EPSG:")
            else crs.toWkt(QgsCoordinateReferenceSystem.WktVariant.WKT_PREFERRED))


def _field_named(layer, name):
    """``layer``'s field read as the contract field ``name`` (matched whatever its case, as the
    analysis matches reference fields); None when it has none."""
    return next((f for f in layer.fields().names() if f.lower() == name), None)


def _append_features(source_features, copied):
    """Append ``source_features`` (with geometry) to the GeoPackage layer ``copied``, each
    attribute by name (its own fid left to the GeoPackage); the number appended."""
    keys = set(copied.dataProvider().pkAttributeIndexes())
    names = [(i, name) for i, name in enumerate(copied.fields().names()) if i not in keys]
    out = []
    for source in source_features:
        feature = QgsFeature(copied.fields())
        have = source.fields().names()
        for i, name in names:
            if name in have:
                feature.setAttribute(i, source[name])
        feature.setGeometry(source.geometry())
        out.append(feature)
    if out and not copied.dataProvider().addFeatures(out):
        raise QgsProcessingException(
            f"Could not add {len(out)} features to the copied layer {copied.name()}: "
            f"{'; '.join(copied.dataProvider().errors())}")
    return len(out)


def append_downstream_catchments(layer, gpkg_path, hops, feedback=None):
    """Append to the copied ``catchments`` layer of ``gpkg_path`` the catchments of ``layer``
    downstream of those copied: the walk Condition A takes (:func:`analysis.reference.route.
    walk`, ``hops`` steps), which looks up the catchments the last step names too (to say the
    route was cut, not read them as waters), all of them copied.

    The walk asks ``layer`` by attribute (:func:`_catchments_by_id`), so a statewide layer is
    not read whole; the ids copied already are answered from the copy.
    Returns ``(features appended, [their geometries in the layer's CRS])``.
    """
    from analysis.reference.route import walk

    id_field, drains_field = _field_named(layer, "catchment_id"), _field_named(layer, "drains_to")
    copied = QgsVectorLayer(f"{gpkg_path}|layername=catchments", "catchments", "ogr")
    if id_field is None or drains_field is None or not copied.isValid():
        return 0, []
    starts = [(None, str(f[id_field]).strip(), f[drains_field], "") for f in copied.getFeatures()
              if f[id_field] is not None]
    have = {own: drains for _, own, drains, _ in starts}
    fetched = {}  # {trimmed id: QgsFeature} read from ``layer``, in the order read
    padded = []   # [{trimmed id: feature ids}] of the ids stored with spaces, once asked

    def lookup(wanted):
        if feedback is not None and feedback.isCanceled():
            return {}  # nothing more is followed
        found = {t: have[t] for t in wanted if t in have}
        new = _catchments_by_id(layer, id_field, sorted(set(wanted) - set(found)), padded)
        fetched.update(new)
        return {**found, **{t: f[drains_field] for t, f in new.items()}}

    walk(starts, lookup, hops)
    return (_append_features(fetched.values(), copied),
            [QgsGeometry(f.geometry()) for f in fetched.values()])


def _catchments_by_id(layer, id_field, ids, padded):
    """{trimmed id: QgsFeature} of ``layer``'s features whose ``id_field`` is one of ``ids``.

    Asked by attribute (``"catchment_id" IN (...)``, values quoted by ``QgsExpression``, at most
    ``_IDS_PER_REQUEST`` at once). Ids are compared trimmed, as the analysis compares them
    (``Reference.lookup(..., normalise=str.strip)``): the exact request keeps the provider's
    index; where an id is not found so, the layer's ids are read once (``padded``, filled on
    first need by :func:`_padded_ids`) and those stored with white space around them fetched by
    feature id. An id two features carry is refused, as the analysis refuses it
    (``analysis.reference.route.unique_catchments``)."""
    from analysis.reference.route import unique_catchments

    rows = []  # (trimmed id, feature)
    for start in range(0, len(ids), _IDS_PER_REQUEST):
        batch = ids[start:start + _IDS_PER_REQUEST]
        request = QgsFeatureRequest().setFilterExpression(
            f"{QgsExpression.quotedColumnRef(id_field)} IN "
            f"({', '.join(QgsExpression.quotedValue(v) for v in batch)})")
        rows += [(str(f[id_field]).strip(), QgsFeature(f)) for f in layer.getFeatures(request)]
    missing = sorted(set(ids) - {t for t, _ in rows})
    if missing:
        if not padded:
            padded.append(_padded_ids(layer, id_field))
        fids = sorted(fid for t in missing for fid in padded[0].get(t, ()))
        if fids:
            rows += [(str(f[id_field]).strip(), QgsFeature(f))
                     for f in layer.getFeatures(QgsFeatureRequest().setFilterFids(fids))]
    unique_catchments(((t, None) for t, _ in rows), layer_source(layer))
    return dict(rows)


def _padded_ids(layer, id_field):
    """``{trimmed id: [feature ids]}`` of ``layer``'s features whose ``id_field`` has white
    space around it (usually none). The ids are read without geometry and trimmed in Python, as
    the analysis trims them: an expression's ``trim()`` would be compiled to the provider's SQL,
    whose trim removes spaces only (a tab would stay)."""
    request = QgsFeatureRequest()
    request.setFlags(QgsFeatureRequest.Flag.NoGeometry)
    request.setSubsetOfAttributes([id_field], layer.fields())
    out: dict = {}
    for feature in layer.getFeatures(request):
        value = feature[id_field]
        text = str(value) if value is not None else ""
        if text.strip() and text != text.strip():
            out.setdefault(text.strip(), []).append(feature.id())
    return out


class SwpppAlgorithm(QgsProcessingAlgorithm):
    """Base of the ``swppp`` algorithms; a subclass adds name, help and ``processAlgorithm``."""

    def __init_subclass__(cls, **kwargs):
        """Each subclass's ``processAlgorithm`` ends by ``compat.keep_pyproj_context``: it runs
        in QGIS's task threads (the panel, the Processing dialog), where pyproj 3.7 would free
        the thread's PROJ context and crash the next run."""
        super().__init_subclass__(**kwargs)
        process = cls.__dict__.get("processAlgorithm")
        if process is None or getattr(process, "_keeps_pyproj_context", False):
            return

        @functools.wraps(process)
        def processAlgorithm(self, parameters, context, feedback):
            try:
                return process(self, parameters, context, feedback)
            finally:
                keep_pyproj_context()

        processAlgorithm._keeps_pyproj_context = True
        cls.processAlgorithm = processAlgorithm

    SITE = "SITE"
    REFERENCE = "REFERENCE"
    PROFILE = "PROFILE"
    SHEETS = "SHEETS"
    OUTPUT_JSON = "OUTPUT_JSON"
    OUTPUT_HTML = "OUTPUT_HTML"
    OUTPUT_PDF = "OUTPUT_PDF"
    OUTPUT_FINDINGS = "OUTPUT_FINDINGS"
    EXIT_STATUS = "EXIT_STATUS"
    FIELD_MAP = "FIELD_MAP"
    WETLANDS_LAYER = "WETLANDS_LAYER"
    IMPAIRED_WATERS_LAYER = "IMPAIRED_WATERS_LAYER"
    TMDL_WATERSHEDS_LAYER = "TMDL_WATERSHEDS_LAYER"
    CATCHMENTS_LAYER = "CATCHMENTS_LAYER"

    # (site-plan layer name, parameter, label, accepted layer types), from the contract
    # (analysis.siteplan.contract): CONTRACT.md's site plan, and its "Hydrology inputs".
    ROLE_LAYERS = role_layers("site")
    HYDROLOGY_ROLE_LAYERS = role_layers("hydrology")

    # CONTRACT.md "Reference layers" chosen from the project instead of REFERENCE (any provider).
    REFERENCE_ROLE_LAYERS = (
        ("wetlands", WETLANDS_LAYER, "Wetlands", [QgsProcessing.SourceType.TypeVectorPolygon]),
        ("impaired_waters", IMPAIRED_WATERS_LAYER, "303(d) impaired waters",
         [QgsProcessing.SourceType.TypeVectorLine, QgsProcessing.SourceType.TypeVectorPolygon]),
        ("tmdl_watersheds", TMDL_WATERSHEDS_LAYER, "TMDL watersheds",
         [QgsProcessing.SourceType.TypeVectorPolygon]),
        ("catchments", CATCHMENTS_LAYER, "Catchments", [QgsProcessing.SourceType.TypeVectorPolygon]),
    )
    # Read by id and name wherever they lie (a discharge point's water may be listed miles
    # downstream), never by place: their attribute table is copied whole, without geometry.
    LOOKED_UP_REFERENCE_LAYERS = ("impaired_waters",)

    # An algorithm that checks map scales reads the project's print layouts (main thread).
    READS_LAYOUTS = False
    SITE_REQUIRED = True  # SITE or the site plan's layers must be given

    def __init__(self):
        super().__init__()
        self._site_path = None
        self._layers_dir = None
        self._layout_maps = None
        self._reference_dir = None
        self._reference_path = None
        self._reference_layers = {}  # contract layer -> what was copied from the project layer
        self._prepare_error = None

    def createInstance(self):
        return type(self)()

    def tr(self, text):
        return QCoreApplication.translate("SwpppAlgorithm", text)

    def icon(self):
        return plugin_icon()

    def group(self):
        return self.tr("Checks")

    def groupId(self):
        return "checks"

    # Parameters ---------------------------------------------------------------------------
    def add_inputs(self, reference=True, sheets=True):
        """SITE or one layer per role, then REFERENCE, PROFILE and SHEETS."""
        self.addParameter(QgsProcessingParameterFile(
            self.SITE, self.tr("Site plan GeoPackage (or give its layers below)"),
            behavior=QgsProcessingParameterFile.Behavior.File, fileFilter=GPKG_FILTER, optional=True))
        for _role, name, label, types in self.ROLE_LAYERS:
            self.addParameter(QgsProcessingParameterVectorLayer(
                name, self.tr("Or layer: {label}").format(label=self.tr(label)), types,
                optional=True))
        field_map = QgsProcessingParameterString(
            self.FIELD_MAP, self.tr('Field names of those layers, where they differ (JSON: '
                                    '{"disturbance.phase": "PHASE_NO"})'), optional=True)
        field_map.setFlags(field_map.flags() | QgsProcessingParameterDefinition.Flag.FlagAdvanced)
        self.addParameter(field_map)
        if reference:
            self.addParameter(QgsProcessingParameterFile(
                self.REFERENCE, self.tr("Reference layers (GeoPackage or PostGIS connection)"),
                behavior=QgsProcessingParameterFile.Behavior.File, fileFilter=GPKG_FILTER, optional=True))
            for _role, name, label, types in self.REFERENCE_ROLE_LAYERS:
                self.addParameter(QgsProcessingParameterVectorLayer(
                    name, self.tr("Or reference layer: {label}").format(label=self.tr(label)),
                    types, optional=True))
        self.add_profile_parameter()
        if sheets:
            self.add_sheets_parameter()

    def add_profile_parameter(self):
        self.addParameter(QgsProcessingParameterString(
            self.PROFILE, self.tr("Rules profile (name or TOML file)"),
            defaultValue=DEFAULT_PROFILE))

    def add_sheets_parameter(self):
        self.addParameter(QgsProcessingParameterMultipleLayers(
            self.SHEETS, self.tr("Plan sheets (georeferenced GeoTIFF or GeoPDF)"),
            QgsProcessing.SourceType.TypeFile, optional=True))

    def add_outputs(self, reports=True):
        """OUTPUT_JSON, OUTPUT_HTML, OUTPUT_PDF, OUTPUT_FINDINGS (each optional), finding counts.

        ``reports=False`` leaves out the HTML and PDF reports (a single check's result has no
        full report).
        """
        self.addParameter(QgsProcessingParameterFileDestination(
            self.OUTPUT_JSON, self.tr("Result (JSON)"), self.tr("JSON files (*.json)"),
            optional=True, createByDefault=False))
        if reports:
            self.addParameter(QgsProcessingParameterFileDestination(
                self.OUTPUT_HTML, self.tr("Report (HTML)"), self.tr("HTML files (*.html *.htm)"),
                optional=True, createByDefault=False))
            self.addParameter(QgsProcessingParameterFileDestination(
                self.OUTPUT_PDF, self.tr("Report (PDF)"), self.tr("PDF files (*.pdf)"),
                optional=True, createByDefault=False))
        self.addParameter(QgsProcessingParameterVectorDestination(
            self.OUTPUT_FINDINGS, self.tr("Findings"), QgsProcessing.SourceType.TypeVectorAnyGeometry,
            optional=True, createByDefault=False))
        self.add_count_outputs()

    def add_count_outputs(self):
        """EXIT_STATUS and a count per finding status."""
        self.addOutput(QgsProcessingOutputNumber(
            self.EXIT_STATUS, self.tr("Exit status (0 nothing failed, 1 a finding failed)")))
        for status in STATUSES:
            self.addOutput(QgsProcessingOutputNumber(
                count_output(status), self.tr("Findings with status {}").format(status)))

    # Checks before running ----------------------------------------------------------------
    def checkParameterValues(self, parameters, context):
        ok, message = super().checkParameterValues(parameters, context)
        if not ok:
            return ok, message
        site = self.parameterAsFile(parameters, self.SITE, context)
        layers = [name for _role, name, _label, _types in self.ROLE_LAYERS
                  if parameters.get(name) not in (None, "")]
        if site and layers:
            return False, self.tr("Give either SITE (a site-plan GeoPackage) or the site plan's "
                                  "layers ({}), not both.").format(", ".join(layers))
        if not site and not layers and self.SITE_REQUIRED:
            return False, self.no_site_message()
        if self.parameterDefinition(self.FIELD_MAP) is not None:
            field_map = self.parameterAsString(parameters, self.FIELD_MAP, context)
            if site and field_map.strip():
                return False, self.tr("FIELD_MAP renames the fields of the *_LAYER parameters; "
                                      "a SITE GeoPackage must use the contract's field names.")
            try:
                mapped = parse_field_map(field_map, [r for r, *_ in self.ROLE_LAYERS])
            except QgsProcessingException as err:
                return False, str(err)
            given = {role for role, name, _label, _types in self.ROLE_LAYERS
                     if parameters.get(name) not in (None, "")}
            if set(mapped) - given:
                return False, self.tr("FIELD_MAP maps fields of {} but no layer is given for "
                                      "it.").format(", ".join(sorted(set(mapped) - given)))
            for role, name, _label, _types in self.ROLE_LAYERS:
                layer = self.parameterAsVectorLayer(parameters, name, context)
                missing = missing_fields(layer, role, mapped.get(role)) if layer else None
                if missing:
                    return False, missing
        if self.parameterDefinition(self.REFERENCE) is not None:
            ok, message = self.check_reference_layers(parameters, context)
            if not ok:
                return ok, message
        if self.parameterDefinition(self.OUTPUT_FINDINGS) is not None:
            findings = self.parameterAsOutputLayer(parameters, self.OUTPUT_FINDINGS, context)
            if findings and not findings.lower().endswith(".gpkg"):
                return False, self.tr("OUTPUT_FINDINGS must be a GeoPackage (.gpkg), not {}"
                                      ).format(findings)
        return True, ""

    def given_reference_layers(self, parameters, context):
        """``{contract layer: QgsVectorLayer}`` of the *_LAYER reference parameters given."""
        if self.parameterDefinition(self.REFERENCE) is None:
            return {}
        given = {}
        for role, name, _label, _types in self.REFERENCE_ROLE_LAYERS:
            layer = self.parameterAsVectorLayer(parameters, name, context)
            if layer is not None:
                given[role] = layer
        return given

    def check_reference_layers(self, parameters, context):
        """REFERENCE or reference layers, not both; each layer has a CRS and the contract's
        fields (matched whatever their case, as the analysis matches them)."""
        given = self.given_reference_layers(parameters, context)
        if not given:
            return True, ""
        if self.parameterAsFile(parameters, self.REFERENCE, context):
            names = [name for role, name, *_ in self.REFERENCE_ROLE_LAYERS if role in given]
            return False, self.tr(
                "Give either REFERENCE (a reference GeoPackage or PostGIS connection) or the "
                "reference layers ({}), not both: a review reads its reference layers from one "
                "place.").format(", ".join(names))
        from analysis.reference.read import SPECS

        for role, layer in given.items():
            where = (f"Layer '{layer.name()}' ({layer_source(layer)}), given as the reference "
                     f"layer '{role}'")
            if not layer.crs().isValid():
                return False, self.tr("{where}, has no coordinate reference system. Assign its "
                                      "true CRS in QGIS.").format(where=where)
            names = layer.fields().names()
            have = {n.lower() for n in names}
            missing = [f for f in SPECS[role].required_fields if f not in have]  # added ones may lack
            if missing:
                return False, self.tr(
                    "{where}, has no field {missing} (CONTRACT.md, reference layers). Its "
                    "fields: {names}. Add or rename the field.").format(
                        where=where, missing=", ".join(f"'{f}'" for f in missing),
                        names=", ".join(names) or "none")
        return True, ""

    def no_site_message(self):
        """What to say when neither SITE nor any role layer is given."""
        return self.tr("Give SITE (a site-plan GeoPackage) or the site plan's layers (at least "
                       "PROJECT_LAYER, SITE_BOUNDARY_LAYER and DISTURBANCE_LAYER).")

    # Running ------------------------------------------------------------------------------
    def layout_filter(self, parameters, context):
        """Names of the print layouts to read (None: all of them)."""
        return

    def read_layouts(self, parameters, context, feedback):
        """The project's print-layout maps, as plain records (main thread only)."""
        self._layout_maps = project_layout_maps(context.project(),
                                                self.layout_filter(parameters, context))
        if not self._layout_maps:
            feedback.pushInfo(self.tr("No print layouts to check (no project, or none in it)."))

    def prepareAlgorithm(self, parameters, context, feedback):
        # On the main thread: project layers and layouts are read here, never from the worker.
        if self.READS_LAYOUTS:
            self.read_layouts(parameters, context, feedback)
        self._reference_path, self._reference_layers, self._prepare_error = None, {}, None
        self.prepare_site(parameters, context, feedback)
        given = self.given_reference_layers(parameters, context)
        if given:
            try:
                self.export_reference(given, parameters, context, feedback)
            except (QgsProcessingException, SwpppError) as err:
                # Processing shows an error raised here only in the log: it is raised again
                # from processAlgorithm, where the user sees it.
                self._prepare_error = self._for_person(str(err)) + self.parameter_hint(err)
        return True

    def prepare_site(self, parameters, context, feedback):
        """``self._site_path``: SITE, or a temporary GeoPackage of the site plan's layers."""
        self._site_path = self.parameterAsFile(parameters, self.SITE, context) or None
        if self._site_path:
            return
        self._layers_dir = tempfile.mkdtemp(prefix="swppp_layers_",
                                            dir=QgsProcessingUtils.tempFolder())
        self._site_path = os.path.join(self._layers_dir, "qgis_layers.gpkg")
        field_map = (parse_field_map(self.parameterAsString(parameters, self.FIELD_MAP, context),
                                     [r for r, *_ in self.ROLE_LAYERS])
                     if self.parameterDefinition(self.FIELD_MAP) is not None else {})
        for role, name, _label, _types in self.ROLE_LAYERS:
            layer = self.parameterAsVectorLayer(parameters, name, context)
            if layer is not None:
                export_layer(layer, role, self._site_path, context, feedback,
                             fields=field_map.get(role))

    def export_reference(self, given, parameters, context, feedback):
        """Copy the features of the ``given`` project layers near the site into a temporary
        reference GeoPackage, ``self._reference_path``, with the contract's layer names.

        Near: the box the analysis reads (the site's boundary, disturbance and discharge
        points widened by ``[reference] search_distance_ft``), transformed into each layer's
        CRS the way the analysis transforms it, so everything the analysis would read from the
        layer itself is copied and nothing far away is; but for where Condition A follows the
        runoff beyond the box: :meth:`copy_downstream`.
        """
        from analysis.profile import load_profile
        from analysis.reference.read import bounds_in_crs, site_file_bounds
        from analysis.siteplan.plan import load_site_plan

        profile = load_profile(self.parameterAsString(parameters, self.PROFILE, context)
                               or DEFAULT_PROFILE)
        # Only the layers that make the box: the main thread is not held up reading the plan.
        bounds = site_file_bounds(self._site_path, profile)
        if bounds is None:
            load_site_plan(self._site_path, profile)  # raises the review's own message
        self._reference_dir = tempfile.mkdtemp(prefix="swppp_reference_",
                                               dir=QgsProcessingUtils.tempFolder())
        self._reference_path = os.path.join(self._reference_dir, "qgis_reference.gpkg")
        for role, layer in given.items():
            if feedback.isCanceled():
                return
            whole = role in self.LOOKED_UP_REFERENCE_LAYERS
            extent = None
            if not whole:
                extent = QgsRectangle(*bounds_in_crs(bounds, profile.area_crs, _crs_text(layer)))
            copied = export_layer(layer, role, self._reference_path, context, feedback,
                                  extent=extent, geometry=not whole,
                                  given_as=f"the reference layer '{role}'")
            # No total: counting a PostGIS table would read it whole.
            feedback.pushInfo(self.tr("Reference layer {role}: {n} features of '{name}' "
                                      "copied ({how}).").format(
                role=role, n=copied, name=layer.name(),
                how=self.tr("its attribute table, looked up by id and name") if whole
                else self.tr("those near the site")))
            self._reference_layers[role] = {
                "layer": layer.name(), "source": layer_source(layer),
                "provider": layer.providerType(), "features_copied": copied,
                "copied": "attributes" if whole else "near the site",
                # A project layer does not say which layer_versions row it came from.
                "version": "unknown"}
        if "catchments" in given and not feedback.isCanceled():
            self.copy_downstream(given, bounds, profile, feedback)

    def copy_downstream(self, given, bounds, profile, feedback):
        """Append to the copied reference what Condition A reads beyond the site's box: the
        catchments downstream by ``drains_to`` (:func:`append_downstream_catchments`) and the
        TMDL watersheds around them (read around each downstream catchment widened by
        ``[reference] search_distance_ft``, as ``routed_watersheds`` reads them)."""
        from analysis.reference.read import bounds_in_crs
        from analysis.units import crs_units

        catchments = given["catchments"]
        added, geometries = append_downstream_catchments(
            catchments, self._reference_path, profile.condition_a.downstream_catchment_hops,
            feedback)
        if added:
            self._reference_layers["catchments"]["features_copied"] += added
            self._reference_layers["catchments"]["copied"] = "near the site and downstream"
        feedback.pushInfo(self.tr("Reference layer catchments: {n} catchments downstream of "
                                  "those near the site added (drains_to followed at most {hops} "
                                  "steps, [condition_a] downstream_catchment_hops, and the "
                                  "last step's catchments named).").format(
            n=added, hops=profile.condition_a.downstream_catchment_hops))
        sheds = given.get("tmdl_watersheds")
        if sheds is None or not geometries:
            return
        pad = crs_units(profile.reference.search_distance_ft, profile.area_crs)
        boxes = []
        for geometry in geometries:
            box = geometry.boundingBox()
            x0, y0, x1, y1 = bounds_in_crs((box.xMinimum(), box.yMinimum(), box.xMaximum(),
                                            box.yMaximum()), _crs_text(catchments),
                                           profile.area_crs)
            boxes.append(QgsRectangle(*bounds_in_crs((x0 - pad, y0 - pad, x1 + pad, y1 + pad),
                                                     profile.area_crs, _crs_text(sheds))))
        near = QgsRectangle(*bounds_in_crs(bounds, profile.area_crs, _crs_text(sheds)))
        taken = {f.id() for f in sheds.getFeatures(QgsFeatureRequest().setFilterRect(near)
                                                    .setNoAttributes())}
        more = {}
        for box in boxes:
            for feature in sheds.getFeatures(QgsFeatureRequest().setFilterRect(box)):
                if feature.id() not in taken:
                    more.setdefault(feature.id(), QgsFeature(feature))
        copied = QgsVectorLayer(f"{self._reference_path}|layername=tmdl_watersheds",
                                "tmdl_watersheds", "ogr")
        n = _append_features(more.values(), copied)
        if n:
            self._reference_layers["tmdl_watersheds"]["features_copied"] += n
            self._reference_layers["tmdl_watersheds"]["copied"] = (
                "near the site and around the catchments downstream")
        feedback.pushInfo(self.tr("Reference layer tmdl_watersheds: {n} watersheds around the "
                                  "downstream catchments added.").format(n=n))

    @contextlib.contextmanager
    def analysis_run(self, parameters, context, feedback):
        """Yield the analysis call's keyword arguments (site, reference, profile, sheets, progress,
        and layout_maps where the algorithm reads layouts).

        Inside the block, the analysis's own errors (bad input, cancellation) become a
        ``QgsProcessingException`` carrying the analysis's message and no traceback.
        """
        if feedback is None:
            feedback = QgsProcessingFeedback()
        inputs = {"site": self._site_path,
                  "profile": self.parameterAsString(parameters, self.PROFILE, context)
                  or DEFAULT_PROFILE,
                  "progress": feedback_progress(feedback)}
        if self.parameterDefinition(self.REFERENCE) is not None:
            inputs["reference"] = (self._reference_path or
                                   self.parameterAsFile(parameters, self.REFERENCE, context)
                                   or None)
        if self.parameterDefinition(self.SHEETS) is not None:
            inputs["sheets"] = [path for path in
                                self.parameterAsFileList(parameters, self.SHEETS, context) if path]
        if self.READS_LAYOUTS:
            inputs["layout_maps"] = self._layout_maps
        try:
            if self._prepare_error:
                raise QgsProcessingException(self._prepare_error)
            with self.analysis_errors(feedback):
                yield inputs
        finally:
            for folder in (self._layers_dir, self._reference_dir):
                if folder:
                    shutil.rmtree(folder, ignore_errors=True)
            self._layers_dir = self._reference_dir = None

    @contextlib.contextmanager
    def analysis_errors(self, feedback):
        """The analysis's own errors (bad input, cancellation) as a ``QgsProcessingException``
        carrying the analysis's message; anything else as one line, the traceback in the log."""
        try:
            yield
        except SwpppError as err:
            raise QgsProcessingException(self._for_person(str(err)) + self.parameter_hint(err)) \
                from None
        except QgsProcessingException:
            raise
        except Exception as err:  # noqa: BLE001 - a bug: one line for the user, details in the log
            feedback.pushDebugInfo(traceback.format_exc())
            raise QgsProcessingException(self.tr(
                "Internal error ({kind}: {error}); nothing was written. Please report it with "
                "the log.").format(kind=type(err).__name__, error=err)) from None

    def parameter_hint(self, err):
        """This algorithm's parameters for the inputs an analysis error is about, or ''.

        The analysis names the input (``InputError.parameters``: ``"rain"``, ``"station"``);
        here it is the parameter of that name in capitals (``PARAMETER_NAMES`` where not).
        """
        shown = []
        for name in getattr(err, "parameters", ()):
            definition = self.parameterDefinition(PARAMETER_NAMES.get(name, name.upper()))
            if definition is not None:
                shown.append(f"'{definition.description()}' ({definition.name()})")
        return self.tr(" (parameter: {})").format(", ".join(shown)) if shown else ""

    def _for_person(self, message):
        # The temporary GeoPackages made from project layers mean nothing to the user.
        if self._layers_dir and self._site_path:
            given = self.tr("the site-plan layers given as *_LAYER parameters")
            message = message.replace(f"file {self._site_path}", given)
            message = message.replace(self._site_path, given)
        if self._reference_path:
            for role, copied in self._reference_layers.items():
                message = message.replace(
                    f"file {self._reference_path}, layer '{role}'",
                    f"reference layer '{role}' (project layer '{copied['layer']}', "
                    f"{copied['source']})")
            given = self.tr("the reference layers given as *_LAYER parameters ({})").format(
                ", ".join(self._reference_layers) or "none")
            message = message.replace(f"file {self._reference_path}", given)
            message = message.replace(self._reference_path, given)
        return message

    def describe_reference(self, review):
        """The review's JSON ``reference`` naming the project layers read, not the temporary
        GeoPackage they were copied into (a no-op when REFERENCE was given)."""
        if self._reference_path and review.reference is not None:
            review.reference = {**review.reference, "path": "QGIS project layers",
                                "kind": "qgis_layers", "project_layers": self._reference_layers}

    def write_results(self, review, parameters, context, progress):
        """Write the requested outputs (all or none) and return the algorithm's results."""
        from analysis.io.files import discard, publish
        from analysis.report.outputs import write_outputs

        self.describe_reference(review)
        paths = {name: self.parameterAsFileOutput(parameters, name, context)
                 if self.parameterDefinition(name) is not None else ""
                 for name in (self.OUTPUT_JSON, self.OUTPUT_HTML, self.OUTPUT_PDF)}
        paths[self.OUTPUT_FINDINGS] = self.parameterAsOutputLayer(parameters, self.OUTPUT_FINDINGS,
                                                                  context)
        progress.check_canceled()
        staged_pdf = None
        try:
            if paths[self.OUTPUT_PDF]:
                # Imported here: the layout module loads the analysis (shapely, matplotlib).
                from ..report_layout import stage_pdf_report

                # Laid out first beside its target, moved in once the analysis wrote the rest.
                staged_pdf = stage_pdf_report(review, paths[self.OUTPUT_PDF], progress)
            write_outputs(review, json_path=paths[self.OUTPUT_JSON] or None,
                          html_path=paths[self.OUTPUT_HTML] or None,
                          findings_path=paths[self.OUTPUT_FINDINGS] or None)
            if staged_pdf:
                publish(staged_pdf, paths[self.OUTPUT_PDF])
                staged_pdf = None
        except SwpppError:
            raise  # the analysis's own message (OutputError names the file)
        except OSError as err:
            raise QgsProcessingException(
                self.tr("Could not write the outputs (nothing was written): {}").format(err)
            ) from None
        finally:
            discard(staged_pdf)
        findings_path = paths[self.OUTPUT_FINDINGS]
        if findings_path and context.willLoadLayerOnCompletion(findings_path):
            details = context.layerToLoadOnCompletionDetails(findings_path)
            details.name = self.tr("SWPPP findings")
            details.setPostProcessor(FindingsLayerStyler.instance())
        results = {name: path for name, path in paths.items() if path}
        results.update(self.count_results(review))
        return results

    def count_results(self, result):
        """EXIT_STATUS and the count per status of a result holding findings."""
        counts = result.counts()
        out = {self.EXIT_STATUS: result.exit_status}
        out.update({count_output(status): counts.get(status, 0) for status in STATUSES})
        return out


class FindingsLayerStyler(QgsProcessingLayerPostProcessorInterface):
    """Gives the loaded findings layer its name and the style stored in its GeoPackage.

    Processing loads output layers without their default style; this applies it.
    """

    _instance = None  # Processing keeps a bare pointer: the Python object must outlive the run

    @classmethod
    def instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def postProcessLayer(self, layer, context, feedback):
        _message, loaded = layer.loadDefaultStyle()
        if not loaded:
            feedback.pushInfo(f"The findings layer {layer.source()} has no stored style.")
        layer.setName(QCoreApplication.translate("SwpppAlgorithm", "SWPPP findings"))
        layer.triggerRepaint()


def count_output(status):
    """The name of the output counting findings with ``status``: ``pass`` -> ``PASS_COUNT``."""
    return f"{status.upper()}_COUNT"

