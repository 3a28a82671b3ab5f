"""What every ``swppp`` algorithm shares: site-plan inputs, outputs, progress and errors.

An algorithm declares its parameters with :meth:`SwpppAlgorithm.add_inputs` and
:meth:`SwpppAlgorithm.add_outputs`, runs the analysis inside :meth:`SwpppAlgorithm.analysis_run`
(which hands it the analysis call's keyword arguments and turns the analysis's errors into
``QgsProcessingException``), and returns :meth:`SwpppAlgorithm.write_results`.
"""

import contextlib
import functools
import logging
import os
import shutil
import tempfile
import threading
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from qgis.core import (
    QgsDataSourceUri,
    QgsField,
    QgsProcessing,
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingFeatureSourceDefinition,
    QgsProcessingFeedback,
    QgsProcessingLayerPostProcessorInterface,
    QgsProcessingOutputNumber,
    QgsProcessingParameterDefinition,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterMapLayer,
    QgsProcessingParameterMultipleLayers,
    QgsProcessingParameterRasterLayer,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorDestination,
    QgsProcessingParameterVectorLayer,
    QgsProcessingUtils,
    QgsProviderRegistry,
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
from analysis.reference.contract import REFERENCE_LAYERS
from analysis.siteplan.contract import layer_spec, layers_of
from analysis.siteplan.mapping import parse_field_map as read_field_map_json

from .. import PLUGIN_DIR
from ..compat import keep_pyproj_context
from ..layouts import project_layout_maps

__all__ = [
    "SwpppAlgorithm",
    "count_output",
    "feedback_progress",
    "plugin_icon",
    "parse_field_map",
    "role_layers",
    "role_parameter",
    "export_layer",
    "layer_source",
]

GPKG_FILTER = "GeoPackage (*.gpkg *.GPKG);;All files (*)"
# The analysis's name of an input (InputError.parameters) -> this plugin's parameter, where it
# is not the same name in capitals.
PARAMETER_NAMES = {"start": "FROM", "end": "TO", "dated": "DATE", "round_number": "ROUND"}
# The processAlgorithm wrappers SwpppAlgorithm made: a subclass reusing one is not wrapped twice
_KEEPING_CONTEXT: weakref.WeakSet[Callable[..., Any]] = weakref.WeakSet()


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


class _FeedbackLog(logging.Handler):
    """The analysis's warnings (a store another process holds: "waiting for another import to
    finish", a layer left off the map, ...) shown in ``feedback``, as the CLI prints them to
    standard error: those of this run's thread only, so two runs at once keep their own."""

    def __init__(self, feedback):
        super().__init__(logging.WARNING)
        self.feedback = feedback
        self.thread = threading.get_ident()

    def emit(self, record):
        if record.thread == self.thread and self.feedback is not None:
            self.feedback.pushWarning(self.format(record))


@contextlib.contextmanager
def analysis_log_to(feedback):
    """Within it, the ``analysis`` library's warnings of this thread go to ``feedback``."""
    handler = _FeedbackLog(feedback)
    logger = logging.getLogger("analysis")
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


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


_KINDS = {
    "point": QgsProcessing.SourceType.TypeVectorPoint,
    "line": QgsProcessing.SourceType.TypeVectorLine,
    "polygon": QgsProcessing.SourceType.TypeVectorPolygon,
}


def reference_role_layers():
    """``(layer, parameter, label, accepted layer types)`` of each reference layer of the
    contract: its parameter is ``<LAYER>_LAYER`` (``WETLANDS_LAYER``)."""
    return tuple(
        (spec.name, f"{spec.name.upper()}_LAYER", spec.label, [_KINDS[family] for family in spec.families])
        for spec in REFERENCE_LAYERS.values()
    )


def role_layers(*groups):
    """``(role, parameter, label, accepted layer types)`` of the contract's layers of ``groups``
    (``site``, ``hydrology``, ``checklist``): each site-plan layer's parameter is ``<ROLE>_LAYER``."""
    kinds = _KINDS
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
            return (
                f"Layer '{layer.name()}' ({layer.source()}), given as the site plan's "
                f"'{role}' layer, has no field '{source}' to read as '{contract}' (FIELD_MAP). "
                f"Its fields: {', '.join(names) or 'none'}. Choose one of them."
            )
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


def export_layer(
    layer, role, gpkg_path, context, feedback, fields=None, extent=None, geometry=True, given_as=None
):
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
    options.actionOnExistingFile = (
        QgsVectorFileWriter.ActionOnExistingFile.CreateOrOverwriteLayer
        if os.path.exists(gpkg_path)
        else QgsVectorFileWriter.ActionOnExistingFile.CreateOrOverwriteFile
    )
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
        options.attributes = [
            i for i, name in enumerate(names) if name in renames or name.lower() not in shadowed
        ]
        converter = _RenameFields(renames)  # held here until the write is done
        options.fieldValueConverter = converter
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        layer, gpkg_path, context.transformContext(), options
    )
    del converter
    if error != QgsVectorFileWriter.WriterError.NoError:
        raise QgsProcessingException(
            f"Could not copy layer '{layer.name()}' ({layer_source(layer)}) as {given_as}: {message}"
        )
    copied = QgsVectorLayer(f"{gpkg_path}|layername={role}", role, "ogr")
    return copied.featureCount() if copied.isValid() else 0


def _parameter_layer(algorithm, parameters, name, context):
    """The layer of a layer or feature-source parameter (a ``QgsProcessingFeatureSourceDefinition``
    read for its layer: QGIS 3.22's ``parameterAsLayer`` does not resolve one), or None."""
    value = parameters.get(name)
    if isinstance(value, QgsProcessingFeatureSourceDefinition):
        source, _ok = value.source.valueAsString(context.expressionContext())
        return QgsProcessingUtils.mapLayerFromString(source, context) if source else None
    return algorithm.parameterAsLayer(parameters, name, context)


def _layer_file(layer):
    """The file a layer reads (its provider's ``path``), or None (PostGIS, memory, none)."""
    if layer is None:
        return None
    parts = QgsProviderRegistry.instance().decodeUri(layer.providerType(), layer.source())
    return parts.get("path") or None


def _sink_file(value):
    """The file a sink or destination writes: ``ogr:dbname='x.gpkg' table=...`` is x.gpkg;
    ``memory:`` and ``postgres:`` none (the library's rule leaves them out)."""
    if value and value.startswith("ogr:"):
        return QgsDataSourceUri(value[len("ogr:") :]).database() or None
    return value or None


def reference_parameter_layer(algorithm, parameters, name, context):
    """``(layer, selected features only)`` of the feature-source parameter ``name`` (None where
    not given). A value that is a ``QgsProcessingFeatureSourceDefinition`` (the dialog's
    "Selected features only", or a caller's) is read for its layer and that flag: QGIS 3.22's
    ``parameterAsVectorLayer`` does not resolve one given by layer id."""
    value = parameters.get(name)
    if isinstance(value, QgsProcessingFeatureSourceDefinition):
        source, _ok = value.source.valueAsString(context.expressionContext())
        layer = QgsProcessingUtils.mapLayerFromString(source, context) if source else None
        if isinstance(layer, QgsVectorLayer):
            return layer, bool(value.selectedFeaturesOnly)
    return algorithm.parameterAsVectorLayer(parameters, name, context), False


class SwpppAlgorithm(QgsProcessingAlgorithm):
    """Base of the ``swppp`` algorithms; a subclass adds name, help and ``processAlgorithm``."""

    def __init_subclass__(cls, **kwargs):
        """Each subclass's ``processAlgorithm`` ends by ``compat.keep_pyproj_context``: it runs
        in QGIS's task threads (the panel, the Processing dialog), where pyproj 3.7 would free
        the thread's PROJ context and crash the next run."""
        super().__init_subclass__(**kwargs)
        process = cls.__dict__.get("processAlgorithm")
        if process is None or process in _KEEPING_CONTEXT:
            return

        @functools.wraps(process)
        def processAlgorithm(self, parameters, context, feedback):
            try:
                with analysis_log_to(feedback):
                    self.refuse_outputs_over_inputs(parameters, context)
                    return process(self, parameters, context, feedback)
            finally:
                keep_pyproj_context()

        _KEEPING_CONTEXT.add(processAlgorithm)
        cls.processAlgorithm = processAlgorithm

    SITE = "SITE"
    REFERENCE = "REFERENCE"
    PROFILE = "PROFILE"
    SHEETS = "SHEETS"
    OUTPUT_JSON = "OUTPUT_JSON"
    OUTPUT_HTML = "OUTPUT_HTML"
    OUTPUT_PDF = "OUTPUT_PDF"
    OUTPUT_LAYOUT = "OUTPUT_LAYOUT"
    OUTPUT_FINDINGS = "OUTPUT_FINDINGS"
    EXIT_STATUS = "EXIT_STATUS"
    FIELD_MAP = "FIELD_MAP"
    WETLANDS_LAYER = "WETLANDS_LAYER"
    IMPAIRED_WATERS_LAYER = "IMPAIRED_WATERS_LAYER"
    TMDL_WATERSHEDS_LAYER = "TMDL_WATERSHEDS_LAYER"
    CATCHMENTS_LAYER = "CATCHMENTS_LAYER"

    # (site-plan layer name, parameter, label, accepted layer types), from the contract
    # (analysis.siteplan.contract): docs/CONTRACT.md's site plan, and its "Hydrology inputs".
    ROLE_LAYERS = role_layers("site")
    HYDROLOGY_ROLE_LAYERS = role_layers("hydrology")

    # The reference layers chosen from the project instead of REFERENCE (any provider), from the
    # reference-layer contract (analysis.reference.contract).
    REFERENCE_ROLE_LAYERS = reference_role_layers()

    # String parameters naming a file read or written (the typed ones are found by their type:
    # files_given); PROFILE names a file where it ends in .toml.
    READ_STRINGS: tuple[str, ...] = ("PROFILE",)
    WRITTEN_STRINGS: tuple[str, ...] = ()

    # An algorithm that checks map scales reads the project's print layouts (main thread).
    READS_LAYOUTS = False
    SITE_REQUIRED = True  # SITE or the site plan's layers must be given

    def __init__(self):
        super().__init__()
        self._site_path = None
        self._layers_dir = None
        self._layout_maps = None
        self._reference = None  # the reference layers given as project layers (QgisReference)
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
        self.addParameter(
            QgsProcessingParameterFile(
                self.SITE,
                self.tr("Site plan GeoPackage (or give its layers below)"),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter=GPKG_FILTER,
                optional=True,
            )
        )
        for _role, name, label, types in self.ROLE_LAYERS:
            self.addParameter(
                QgsProcessingParameterVectorLayer(
                    name, self.tr("Or layer: {label}").format(label=self.tr(label)), types, optional=True
                )
            )
        field_map = QgsProcessingParameterString(
            self.FIELD_MAP,
            self.tr(
                'Field names of those layers, where they differ (JSON: {"disturbance.phase": "PHASE_NO"})'
            ),
            optional=True,
        )
        field_map.setFlags(field_map.flags() | QgsProcessingParameterDefinition.Flag.FlagAdvanced)
        self.addParameter(field_map)
        if reference:
            self.addParameter(
                QgsProcessingParameterFile(
                    self.REFERENCE,
                    self.tr("Reference layers (GeoPackage or PostGIS connection)"),
                    behavior=QgsProcessingParameterFile.Behavior.File,
                    fileFilter=GPKG_FILTER,
                    optional=True,
                )
            )
            for _role, name, label, types in self.REFERENCE_ROLE_LAYERS:
                # A feature source: "Selected features only" is the parameter's to say.
                self.addParameter(
                    QgsProcessingParameterFeatureSource(
                        name,
                        self.tr("Or reference layer: {label}").format(label=self.tr(label)),
                        types,
                        optional=True,
                    )
                )
        self.add_profile_parameter()
        if sheets:
            self.add_sheets_parameter()

    def add_profile_parameter(self):
        self.addParameter(
            QgsProcessingParameterString(
                self.PROFILE, self.tr("Rules profile (name or TOML file)"), defaultValue=DEFAULT_PROFILE
            )
        )

    def add_sheets_parameter(self):
        self.addParameter(
            QgsProcessingParameterMultipleLayers(
                self.SHEETS,
                self.tr("Plan sheets (georeferenced GeoTIFF or GeoPDF)"),
                QgsProcessing.SourceType.TypeFile,
                optional=True,
            )
        )

    def add_outputs(self, reports=True):
        """OUTPUT_JSON, OUTPUT_HTML, OUTPUT_PDF, OUTPUT_LAYOUT, OUTPUT_FINDINGS (each
        optional), finding counts.

        ``reports=False`` leaves out the HTML and PDF reports and the layout (a single check's
        result has no full report).
        """
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_JSON,
                self.tr("Result (JSON)"),
                self.tr("JSON files (*.json)"),
                optional=True,
                createByDefault=False,
            )
        )
        if reports:
            self.addParameter(
                QgsProcessingParameterFileDestination(
                    self.OUTPUT_HTML,
                    self.tr("Report (HTML)"),
                    self.tr("HTML files (*.html *.htm)"),
                    optional=True,
                    createByDefault=False,
                )
            )
            self.addParameter(
                QgsProcessingParameterFileDestination(
                    self.OUTPUT_PDF,
                    self.tr("Report (PDF)"),
                    self.tr("PDF files (*.pdf)"),
                    optional=True,
                    createByDefault=False,
                )
            )
            self.addParameter(
                QgsProcessingParameterFileDestination(
                    self.OUTPUT_LAYOUT,
                    self.tr(
                        "Report layout (QGIS layout template; its layers in the folder <name>_data beside it)"
                    ),
                    self.tr("QGIS layout templates (*.qpt)"),
                    optional=True,
                    createByDefault=False,
                )
            )
        self.addParameter(
            QgsProcessingParameterVectorDestination(
                self.OUTPUT_FINDINGS,
                self.tr("Findings"),
                QgsProcessing.SourceType.TypeVectorAnyGeometry,
                optional=True,
                createByDefault=False,
            )
        )
        self.add_count_outputs()

    def add_count_outputs(self):
        """EXIT_STATUS and a count per finding status."""
        self.addOutput(
            QgsProcessingOutputNumber(
                self.EXIT_STATUS, self.tr("Exit status (0 nothing failed, 1 a finding failed)")
            )
        )
        for status in STATUSES:
            self.addOutput(
                QgsProcessingOutputNumber(
                    count_output(status), self.tr("Findings with status {}").format(status)
                )
            )

    # Checks before running ----------------------------------------------------------------
    def files_given(self, parameters, context):
        """``(inputs, outputs)``: ``(parameter, file or layer source)`` of every parameter given
        that reads or writes a file, found by its type (file, layer, feature source, multiple
        layers; file, vector, raster and folder destinations, feature sinks) and by
        ``READ_STRINGS``/``WRITTEN_STRINGS``; a source that is no file (PostGIS, memory) is
        left out by the library's rule."""
        inputs, outputs = [], []
        for definition in self.parameterDefinitions():
            name = definition.name()
            if parameters.get(name) in (None, ""):
                continue
            if name in self.WRITTEN_STRINGS:
                outputs.append((name, self.parameterAsString(parameters, name, context)))
            elif name in self.READ_STRINGS:
                value = self.parameterAsString(parameters, name, context)
                if name != self.PROFILE or value.strip().lower().endswith(".toml"):
                    inputs.append((name, value))
            elif isinstance(definition, QgsProcessingParameterFileDestination):
                outputs.append((name, self.parameterAsFileOutput(parameters, name, context)))
            elif definition.isDestination():
                outputs.append((name, _sink_file(self.parameterAsOutputLayer(parameters, name, context))))
            elif isinstance(definition, QgsProcessingParameterFile):
                inputs.append((name, self.parameterAsFile(parameters, name, context)))
            elif isinstance(definition, QgsProcessingParameterMultipleLayers):
                if definition.layerType() == QgsProcessing.SourceType.TypeFile:
                    files = self.parameterAsFileList(parameters, name, context)
                    inputs += [(name, path) for path in files]
                else:
                    layers = self.parameterAsLayerList(parameters, name, context)
                    inputs += [(name, _layer_file(layer)) for layer in layers]
            elif isinstance(
                definition,
                (
                    QgsProcessingParameterFeatureSource,
                    QgsProcessingParameterMapLayer,
                    QgsProcessingParameterVectorLayer,
                    QgsProcessingParameterRasterLayer,
                ),
            ):
                inputs.append((name, _layer_file(_parameter_layer(self, parameters, name, context))))
        return inputs, outputs

    def refuse_outputs_over_inputs(self, parameters, context):
        """A ``QgsProcessingException`` before anything runs where an output would replace a
        file an input reads, or another output: the command line's one rule
        (``analysis.io.inputs``; docs/CLI.md, "An output on an input")."""
        from analysis.io.inputs import refuse_outputs_over_inputs

        inputs, outputs = self.files_given(parameters, context)
        try:
            refuse_outputs_over_inputs(inputs, outputs)
        except InputError as err:
            raise QgsProcessingException(str(err)) from None

    def checkParameterValues(self, parameters, context):
        ok, message = super().checkParameterValues(parameters, context)
        if not ok:
            return ok, message
        site = self.parameterAsFile(parameters, self.SITE, context)
        layers = [
            name for _role, name, _label, _types in self.ROLE_LAYERS if parameters.get(name) not in (None, "")
        ]
        if site and layers:
            return False, self.tr(
                "Give either SITE (a site-plan GeoPackage) or the site plan's layers ({}), not both."
            ).format(", ".join(layers))
        if not site and not layers and self.SITE_REQUIRED:
            return False, self.no_site_message()
        if self.parameterDefinition(self.FIELD_MAP) is not None:
            field_map = self.parameterAsString(parameters, self.FIELD_MAP, context)
            if site and field_map.strip():
                return False, self.tr(
                    "FIELD_MAP renames the fields of the *_LAYER parameters; "
                    "a SITE GeoPackage must use the contract's field names."
                )
            try:
                mapped = parse_field_map(field_map, [r for r, *_ in self.ROLE_LAYERS])
            except QgsProcessingException as err:
                return False, str(err)
            given = {
                role
                for role, name, _label, _types in self.ROLE_LAYERS
                if parameters.get(name) not in (None, "")
            }
            if set(mapped) - given:
                return False, self.tr("FIELD_MAP maps fields of {} but no layer is given for it.").format(
                    ", ".join(sorted(set(mapped) - given))
                )
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
                return False, self.tr("OUTPUT_FINDINGS must be a GeoPackage (.gpkg), not {}").format(findings)
        return True, ""

    def given_reference_layers(self, parameters, context):
        """``{contract layer: QgsVectorLayer}`` of the *_LAYER reference parameters given."""
        if self.parameterDefinition(self.REFERENCE) is None:
            return {}
        given = {}
        for role, name, _label, _types in self.REFERENCE_ROLE_LAYERS:
            layer, _selected = reference_parameter_layer(self, parameters, name, context)
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
                "place."
            ).format(", ".join(names))
        from analysis.reference.read import SPECS

        for role, layer in given.items():
            where = f"Layer '{layer.name()}' ({layer_source(layer)}), given as the reference layer '{role}'"
            if not layer.crs().isValid():
                return False, self.tr(
                    "{where}, has no coordinate reference system. Assign its true CRS in QGIS."
                ).format(where=where)
            names = layer.fields().names()
            have = {n.lower() for n in names}
            missing = [f for f in SPECS[role].required_fields if f not in have]  # added ones may lack
            if missing:
                return False, self.tr(
                    "{where}, has no field {missing} (docs/CONTRACT.md, reference layers). Its "
                    "fields: {names}. Add or rename the field."
                ).format(
                    where=where,
                    missing=", ".join(f"'{f}'" for f in missing),
                    names=", ".join(names) or "none",
                )
        return True, ""

    def no_site_message(self):
        """What to say when neither SITE nor any role layer is given."""
        return self.tr(
            "Give SITE (a site-plan GeoPackage) or the site plan's layers (at least "
            "PROJECT_LAYER, SITE_BOUNDARY_LAYER and DISTURBANCE_LAYER)."
        )

    # Running ------------------------------------------------------------------------------
    def layout_filter(self, parameters, context):
        """Names of the print layouts to read (None: all of them)."""
        return

    def read_layouts(self, parameters, context, feedback):
        """The project's print-layout maps, as plain records (main thread only)."""
        self._layout_maps = project_layout_maps(context.project(), self.layout_filter(parameters, context))
        if not self._layout_maps:
            feedback.pushInfo(self.tr("No print layouts to check (no project, or none in it)."))

    def prepareAlgorithm(self, parameters, context, feedback):
        # On the main thread: project layers and layouts are read here, never from the worker.
        if self.READS_LAYOUTS:
            self.read_layouts(parameters, context, feedback)
        self._reference, self._prepare_error = None, None
        self.prepare_site(parameters, context, feedback)
        self._reference = self.reference_layers(parameters, context, feedback)
        return True

    def reference_layers(self, parameters, context, feedback):
        """The reference layers given as project layers, as the analysis reads a reference
        (``reference_source.QgisReference``: each layer read where the analysis asks, by box or
        by id, through a snapshot another thread may read); None where none is given."""
        given = self.given_reference_layers(parameters, context)
        if not given:
            return None
        # Imported here: the backend loads the analysis's readers (geopandas, shapely).
        from ..reference_source import QgisReference, snapshot

        snaps = {}
        names = {role: name for role, name, *_ in self.REFERENCE_ROLE_LAYERS}
        for role, layer in given.items():
            _layer, selected = reference_parameter_layer(self, parameters, names[role], context)
            snaps[role] = snapshot(layer, role, selected_only=selected)
            feedback.pushInfo(
                self.tr(
                    "Reference layer {role}: '{name}' ({source}){how}, read where the review needs it."
                ).format(
                    role=role,
                    name=layer.name(),
                    source=layer_source(layer),
                    how=self.tr(", its selected features only") if selected else "",
                )
            )
        return QgisReference(snaps, names)

    def prepare_site(self, parameters, context, feedback):
        """``self._site_path``: SITE, or a temporary GeoPackage of the site plan's layers."""
        self._site_path = self.parameterAsFile(parameters, self.SITE, context) or None
        if self._site_path:
            return
        self._layers_dir = tempfile.mkdtemp(prefix="swppp_layers_", dir=QgsProcessingUtils.tempFolder())
        self._site_path = os.path.join(self._layers_dir, "qgis_layers.gpkg")
        field_map = (
            parse_field_map(
                self.parameterAsString(parameters, self.FIELD_MAP, context), [r for r, *_ in self.ROLE_LAYERS]
            )
            if self.parameterDefinition(self.FIELD_MAP) is not None
            else {}
        )
        for role, name, _label, _types in self.ROLE_LAYERS:
            layer = self.parameterAsVectorLayer(parameters, name, context)
            if layer is not None:
                export_layer(layer, role, self._site_path, context, feedback, fields=field_map.get(role))

    @contextlib.contextmanager
    def analysis_run(self, parameters, context, feedback):
        """Yield the analysis call's keyword arguments (site, reference, profile, sheets, progress,
        and layout_maps where the algorithm reads layouts).

        Inside the block, the analysis's own errors (bad input, cancellation) become a
        ``QgsProcessingException`` carrying the analysis's message and no traceback.
        """
        if feedback is None:
            feedback = QgsProcessingFeedback()
        inputs = {
            "site": self._site_path,
            "profile": self.parameterAsString(parameters, self.PROFILE, context) or DEFAULT_PROFILE,
            "progress": feedback_progress(feedback),
        }
        if self.parameterDefinition(self.REFERENCE) is not None:
            inputs["reference"] = (
                self._reference or self.parameterAsFile(parameters, self.REFERENCE, context) or None
            )
        if self.parameterDefinition(self.SHEETS) is not None:
            inputs["sheets"] = [
                path for path in self.parameterAsFileList(parameters, self.SHEETS, context) if path
            ]
        if self.READS_LAYOUTS:
            inputs["layout_maps"] = self._layout_maps
        try:
            if self._prepare_error:
                raise QgsProcessingException(self._prepare_error)
            with self.analysis_errors(feedback):
                yield inputs
        finally:
            if self._layers_dir:
                shutil.rmtree(self._layers_dir, ignore_errors=True)
            self._layers_dir = None

    @contextlib.contextmanager
    def analysis_errors(self, feedback):
        """The analysis's own errors (bad input, cancellation) as a ``QgsProcessingException``
        carrying the analysis's message; anything else as one line, the traceback in the log."""
        try:
            yield
        except SwpppError as err:
            raise QgsProcessingException(self._for_person(str(err)) + self.parameter_hint(err)) from None
        except QgsProcessingException:
            raise
        except Exception as err:  # noqa: BLE001 - a bug: one line for the user, details in the log
            feedback.pushDebugInfo(traceback.format_exc())
            raise QgsProcessingException(
                self.tr(
                    "Internal error ({kind}: {error}); nothing was written. Please report it with the log."
                ).format(kind=type(err).__name__, error=err)
            ) from None

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
        # The temporary GeoPackage made from the site plan's project layers means nothing to
        # the user (the reference layers are read where they are: their errors name them).
        if self._layers_dir and self._site_path:
            given = self.tr("the site-plan layers given as *_LAYER parameters")
            message = message.replace(f"file {self._site_path}", given)
            message = message.replace(self._site_path, given)
        return message

    def write_results(self, review, parameters, context, progress, ready=None):
        """Write the requested outputs (all or none) and return the algorithm's results.
        ``ready(result)`` (the review's JSON as a dict), where given, is told before the outputs
        are written: the panel shows the findings while the PDF is laid out."""
        from analysis.io.files import discard, publish
        from analysis.report.outputs import write_outputs

        paths = {
            name: self.parameterAsFileOutput(parameters, name, context)
            if self.parameterDefinition(name) is not None
            else ""
            for name in (self.OUTPUT_JSON, self.OUTPUT_HTML, self.OUTPUT_PDF, self.OUTPUT_LAYOUT)
        }
        paths[self.OUTPUT_FINDINGS] = self.parameterAsOutputLayer(parameters, self.OUTPUT_FINDINGS, context)
        progress.check_canceled()
        if ready is not None:
            ready(review.to_dict())
        staged_pdf = None
        try:
            if paths[self.OUTPUT_PDF]:
                # Imported here: the layout module loads the analysis (shapely, matplotlib).
                from ..report_layout import stage_pdf_report

                # Laid out first beside its target, moved in once the analysis wrote the rest;
                # the layout kept as a template where asked (one layout for both).
                staged_pdf = stage_pdf_report(
                    review, paths[self.OUTPUT_PDF], progress, template=paths[self.OUTPUT_LAYOUT] or None
                )
            elif paths[self.OUTPUT_LAYOUT]:
                from ..report_layout import write_layout_template

                write_layout_template(review, paths[self.OUTPUT_LAYOUT], progress)
            write_outputs(
                review,
                json_path=paths[self.OUTPUT_JSON] or None,
                html_path=paths[self.OUTPUT_HTML] or None,
                findings_path=paths[self.OUTPUT_FINDINGS] or None,
            )
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
