"""What every ``swppp`` algorithm shares: site-plan inputs, outputs, progress and errors.

An algorithm declares its parameters with :meth:`SwpppAlgorithm.add_inputs` and
:meth:`SwpppAlgorithm.add_outputs`, runs the analysis inside :meth:`SwpppAlgorithm.analysis_run`
(which hands it the analysis call's keyword arguments and turns the analysis's errors into
``QgsProcessingException``), and returns :meth:`SwpppAlgorithm.write_results`.
"""
import contextlib
import os
import shutil
import tempfile
import traceback

from qgis.core import (
    QgsProcessing,
    QgsProcessingAlgorithm,
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
    QgsVectorFileWriter,
)
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtGui import QIcon

from analysis.errors import SwpppError
from analysis.findings import STATUSES
from analysis.profile import DEFAULT_PROFILE
from analysis.progress import Progress

from .. import PLUGIN_DIR
from ..layouts import project_layout_maps

__all__ = ["SwpppAlgorithm", "count_output", "feedback_progress", "plugin_icon"]

GPKG_FILTER = "GeoPackage (*.gpkg *.GPKG);;All files (*)"


def plugin_icon():
    return QIcon(os.path.join(PLUGIN_DIR, "icon.svg"))


def feedback_progress(feedback):
    """An analysis ``Progress`` that reports to, and is cancelled through, ``feedback``."""

    def report(fraction, message):
        feedback.setProgress(100.0 * fraction)
        feedback.pushInfo(message)

    return Progress(report=report, is_canceled=feedback.isCanceled)


def export_layer(layer, role, gpkg_path, context, feedback):
    """Copy ``layer`` into ``gpkg_path`` as the layer named ``role`` (the file is created first)."""
    options = QgsVectorFileWriter.SaveVectorOptions()
    options.driverName = "GPKG"
    options.layerName = role
    options.fileEncoding = "UTF-8"
    options.feedback = feedback
    options.actionOnExistingFile = (QgsVectorFileWriter.CreateOrOverwriteLayer
                                    if os.path.exists(gpkg_path)
                                    else QgsVectorFileWriter.CreateOrOverwriteFile)
    error, message, _, _ = QgsVectorFileWriter.writeAsVectorFormatV3(
        layer, gpkg_path, context.transformContext(), options)
    if error != QgsVectorFileWriter.NoError:
        raise QgsProcessingException(
            f"Could not copy layer '{layer.name()}' ({layer.source()}) as the site plan's "
            f"'{role}' layer: {message}")


class SwpppAlgorithm(QgsProcessingAlgorithm):
    """Base of the ``swppp`` algorithms; a subclass adds name, help and ``processAlgorithm``."""

    SITE = "SITE"
    PROJECT_LAYER = "PROJECT_LAYER"
    SITE_BOUNDARY_LAYER = "SITE_BOUNDARY_LAYER"
    DISTURBANCE_LAYER = "DISTURBANCE_LAYER"
    SMP_LAYER = "SMP_LAYER"
    EASEMENT_LAYER = "EASEMENT_LAYER"
    DISCHARGE_POINT_LAYER = "DISCHARGE_POINT_LAYER"
    PUBLIC_ROW_LAYER = "PUBLIC_ROW_LAYER"
    LAYOUT_SCALE_LAYER = "LAYOUT_SCALE_LAYER"
    REFERENCE = "REFERENCE"
    PROFILE = "PROFILE"
    SHEETS = "SHEETS"
    OUTPUT_JSON = "OUTPUT_JSON"
    OUTPUT_HTML = "OUTPUT_HTML"
    OUTPUT_PDF = "OUTPUT_PDF"
    OUTPUT_FINDINGS = "OUTPUT_FINDINGS"
    EXIT_STATUS = "EXIT_STATUS"
    DRAINAGE_AREA_LAYER = "DRAINAGE_AREA_LAYER"
    SOILS_LAYER = "SOILS_LAYER"
    LAND_COVER_PRE_LAYER = "LAND_COVER_PRE_LAYER"
    LAND_COVER_POST_LAYER = "LAND_COVER_POST_LAYER"
    HYDROLOGY_CLAIMS_LAYER = "HYDROLOGY_CLAIMS_LAYER"

    # (site-plan layer name of CONTRACT.md, parameter, label, accepted layer types)
    ROLE_LAYERS = (
        ("project", PROJECT_LAYER, "Project (one-row table)", [QgsProcessing.TypeVector]),
        ("site_boundary", SITE_BOUNDARY_LAYER, "Site boundary", [QgsProcessing.TypeVectorPolygon]),
        ("disturbance", DISTURBANCE_LAYER, "Disturbance", [QgsProcessing.TypeVectorPolygon]),
        ("smp", SMP_LAYER, "Stormwater management practices (SMP)",
         [QgsProcessing.TypeVectorPolygon, QgsProcessing.TypeVectorPoint]),
        ("easement", EASEMENT_LAYER, "Maintenance easements", [QgsProcessing.TypeVectorPolygon]),
        ("discharge_point", DISCHARGE_POINT_LAYER, "Discharge points",
         [QgsProcessing.TypeVectorPoint]),
        ("public_row", PUBLIC_ROW_LAYER, "Public right-of-way", [QgsProcessing.TypeVectorPolygon]),
        ("layout_scale", LAYOUT_SCALE_LAYER, "Stated sheet scales (table)",
         [QgsProcessing.TypeVector]),
    )
    # CONTRACT.md "Hydrology inputs": swppp:review and swppp:hydrology take them by these names.
    HYDROLOGY_ROLE_LAYERS = (
        ("drainage_area", DRAINAGE_AREA_LAYER, "Drainage areas", [QgsProcessing.TypeVectorPolygon]),
        ("soils", SOILS_LAYER, "Soils (hsg)", [QgsProcessing.TypeVectorPolygon]),
        ("land_cover_pre", LAND_COVER_PRE_LAYER, "Land cover before development (cover)",
         [QgsProcessing.TypeVectorPolygon]),
        ("land_cover_post", LAND_COVER_POST_LAYER, "Land cover after development (cover)",
         [QgsProcessing.TypeVectorPolygon]),
        ("hydrology_claims", HYDROLOGY_CLAIMS_LAYER, "The SWPPP's stated hydrology figures (table)",
         [QgsProcessing.TypeVector]),
    )

    # An algorithm that checks map scales reads the project's print layouts (main thread).
    READS_LAYOUTS = False
    SITE_REQUIRED = True  # SITE or the site plan's layers must be given

    def __init__(self):
        super().__init__()
        self._site_path = None
        self._layers_dir = None
        self._layout_maps = None

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
            behavior=QgsProcessingParameterFile.File, fileFilter=GPKG_FILTER, optional=True))
        for _role, name, label, types in self.ROLE_LAYERS:
            self.addParameter(QgsProcessingParameterVectorLayer(
                name, self.tr("Or layer: {label}").format(label=self.tr(label)), types,
                optional=True))
        if reference:
            self.addParameter(QgsProcessingParameterFile(
                self.REFERENCE, self.tr("Reference layers (GeoPackage or PostGIS connection)"),
                behavior=QgsProcessingParameterFile.File, fileFilter=GPKG_FILTER, optional=True))
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
            QgsProcessing.TypeFile, optional=True))

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
            self.OUTPUT_FINDINGS, self.tr("Findings"), QgsProcessing.TypeVectorAnyGeometry,
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
        if self.parameterDefinition(self.OUTPUT_FINDINGS) is not None:
            findings = self.parameterAsOutputLayer(parameters, self.OUTPUT_FINDINGS, context)
            if findings and not findings.lower().endswith(".gpkg"):
                return False, self.tr("OUTPUT_FINDINGS must be a GeoPackage (.gpkg), not {}"
                                      ).format(findings)
        return True, ""

    def no_site_message(self):
        """What to say when neither SITE nor any role layer is given."""
        return self.tr("Give SITE (a site-plan GeoPackage) or the site plan's layers (at least "
                       "PROJECT_LAYER, SITE_BOUNDARY_LAYER and DISTURBANCE_LAYER).")

    # Running ------------------------------------------------------------------------------
    def layout_filter(self, parameters, context):
        """Names of the print layouts to read (None: all of them)."""
        return None

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
        self._site_path = self.parameterAsFile(parameters, self.SITE, context) or None
        if self._site_path:
            return True
        self._layers_dir = tempfile.mkdtemp(prefix="swppp_layers_",
                                            dir=QgsProcessingUtils.tempFolder())
        self._site_path = os.path.join(self._layers_dir, "qgis_layers.gpkg")
        for role, name, _label, _types in self.ROLE_LAYERS:
            layer = self.parameterAsVectorLayer(parameters, name, context)
            if layer is not None:
                export_layer(layer, role, self._site_path, context, feedback)
        return True

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
            inputs["reference"] = self.parameterAsFile(parameters, self.REFERENCE, context) or None
        if self.parameterDefinition(self.SHEETS) is not None:
            inputs["sheets"] = [path for path in
                                self.parameterAsFileList(parameters, self.SHEETS, context) if path]
        if self.READS_LAYOUTS:
            inputs["layout_maps"] = self._layout_maps
        try:
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
            raise QgsProcessingException(self._for_person(str(err))) from None
        except QgsProcessingException:
            raise
        except Exception as err:  # noqa: BLE001 - a bug: one line for the user, details in the log
            feedback.pushDebugInfo(traceback.format_exc())
            raise QgsProcessingException(self.tr(
                "Internal error ({kind}: {error}); nothing was written. Please report it with "
                "the log.").format(kind=type(err).__name__, error=err)) from None

    def _for_person(self, message):
        # The temporary GeoPackage made from project layers means nothing to the user.
        if self._layers_dir and self._site_path:
            given = self.tr("the site-plan layers given as *_LAYER parameters")
            message = message.replace(f"file {self._site_path}", given)
            message = message.replace(self._site_path, given)
        return message

    def write_results(self, review, parameters, context, progress):
        """Write the requested outputs (all or none) and return the algorithm's results."""
        from analysis.outputs import publish, write_outputs

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
            if staged_pdf:
                os.remove(staged_pdf)
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

    def postProcessLayer(self, layer, context, feedback):  # noqa: N802 - QGIS's name
        _message, loaded = layer.loadDefaultStyle()
        if not loaded:
            feedback.pushInfo(f"The findings layer {layer.source()} has no stored style.")
        layer.setName(QCoreApplication.translate("SwpppAlgorithm", "SWPPP findings"))
        layer.triggerRepaint()


def count_output(status):
    """The name of the output counting findings with ``status``: ``pass`` -> ``PASS_COUNT``."""
    return f"{status.upper()}_COUNT"

