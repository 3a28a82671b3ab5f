"""``swppp:reference_import``: a new version of a reference layer, validated, in one transaction."""

from qgis.core import (
    QgsProcessingAlgorithm,
    QgsProcessingOutputNumber,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterEnum,
    QgsProcessingParameterFile,
    QgsProcessingParameterString,
)

from analysis.profile import DEFAULT_PROFILE
from analysis.reference.contract import FORMATS
from analysis.reference.contract import LAYER_NAMES as LAYERS

from .base import SwpppAlgorithm

__all__ = ["ReferenceAlgorithm", "ReferenceImportAlgorithm"]

HELP = """<p>Imports a new version of one reference layer (wetlands, impaired waters, TMDL \
watersheds, catchments) into a reference GeoPackage or a PostGIS schema, the way \
<code>swppp reference import</code> does.</p>
<p>The source is validated before anything is written: a CRS, the layer's geometry types, \
its required fields (after the field mapping, if one is given), unique ids; invalid geometries \
are repaired and counted, and what is rejected is listed with the reason. The new version, its \
<code>layer_versions</code> row and its archived features are written in one transaction: \
reviewers read the previous version or the new one, never a mixture, and a refused source \
changes nothing. A source already imported (same sha256) is not imported again.</p>
<p>FORMAT <i>ogr</i>: any vector file whose fields follow the contract, or a MAPPING (TOML). \
<i>attains</i>: an EPA ATTAINS assessments (impaired waters) or actions (TMDL watersheds) JSON \
response, joined by id to GEOMETRY. <i>pwl</i>: a NYSDEC Priority Waterbodies List table (CSV \
with PWL_ID, NAME and CAUSES), joined the same way. TARGET is a GeoPackage path or a PostgreSQL \
connection (postgresql://... or service=NAME) with SCHEMA.</p>"""


class ReferenceAlgorithm(SwpppAlgorithm):
    """Base of the reference-layer algorithms: no site plan, a TARGET store and its SCHEMA."""

    LAYER = "LAYER"
    TARGET = "TARGET"
    SCHEMA = "SCHEMA"
    READ_STRINGS = ("PROFILE", "TARGET")  # the store is read and written in place: an input

    def group(self):
        return self.tr("Reference layers")

    def groupId(self):
        return "reference"

    def add_target(self):
        self.addParameter(
            QgsProcessingParameterEnum(
                self.LAYER, self.tr("Reference layer"), options=list(LAYERS), defaultValue=0
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.TARGET,
                self.tr(
                    "Reference store: GeoPackage path, or PostgreSQL connection "
                    "(postgresql://... or service=NAME)"
                ),
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.SCHEMA, self.tr("PostgreSQL schema (default public)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.PROFILE, self.tr("Rules profile (name or TOML file)"), defaultValue=DEFAULT_PROFILE
            )
        )

    def target(self, parameters, context):
        return {
            "layer": LAYERS[self.parameterAsEnum(parameters, self.LAYER, context)],
            "target": self.parameterAsString(parameters, self.TARGET, context).strip(),
            "schema": self.parameterAsString(parameters, self.SCHEMA, context).strip() or None,
        }

    # No site plan: the site-plan checks and the project-layer export of the base do not apply.
    def checkParameterValues(self, parameters, context):
        return QgsProcessingAlgorithm.checkParameterValues(self, parameters, context)

    def prepareAlgorithm(self, parameters, context, feedback):
        return True


class ReferenceImportAlgorithm(ReferenceAlgorithm):
    SOURCE = "SOURCE"
    FORMAT = "FORMAT"
    GEOMETRY = "GEOMETRY"
    MAPPING = "MAPPING"
    SOURCE_DATE = "SOURCE_DATE"
    CAUSES = "CAUSES"
    ACCEPT_REJECTIONS = "ACCEPT_REJECTIONS"
    DERIVE_WATERSHEDS = "DERIVE_WATERSHEDS"
    REJECTIONS = "REJECTIONS"
    WRITTEN_STRINGS = ("REJECTIONS",)
    VERSION = "VERSION"
    NEW_VERSION = "NEW_VERSION"
    FEATURE_COUNT = "FEATURE_COUNT"
    REPAIRED_COUNT = "REPAIRED_COUNT"
    REJECTED_COUNT = "REJECTED_COUNT"

    def name(self):
        return "reference_import"

    def displayName(self):
        return self.tr("Import reference layer version")

    def shortHelpString(self):
        return self.tr(HELP)

    def initAlgorithm(self, config=None):
        self.add_target()
        self.addParameter(
            QgsProcessingParameterFile(self.SOURCE, self.tr("Source (vector file, ATTAINS JSON or PWL CSV)"))
        )
        self.addParameter(
            QgsProcessingParameterEnum(
                self.FORMAT, self.tr("Source format"), options=list(FORMATS), defaultValue=0
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.GEOMETRY, self.tr("Geometry file joined by id (attains, pwl)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.MAPPING,
                self.tr("Field mapping (TOML)"),
                optional=True,
                fileFilter="TOML (*.toml);;All files (*)",
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.SOURCE_DATE,
                self.tr(
                    "Source date (YYYY-MM-DD; default: the date the source "
                    "states; required where it states none)"
                ),
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.CAUSES,
                self.tr("ATTAINS assessments joined to a PWL table by id (pwl)"),
                optional=True,
                fileFilter="JSON (*.json);;All files (*)",
            )
        )
        self.addParameter(
            QgsProcessingParameterBoolean(
                self.DERIVE_WATERSHEDS,
                self.tr(
                    "Derive TMDL watersheds from the store's catchments "
                    "(attains; GEOMETRY gives the assessment units)"
                ),
                defaultValue=False,
            )
        )
        self.addParameter(
            QgsProcessingParameterBoolean(
                self.ACCEPT_REJECTIONS,
                self.tr("Accept rejected features over the profile's limits"),
                defaultValue=False,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.REJECTIONS,
                self.tr("List the rejected features in (CSV or GeoPackage; default beside the target)"),
                optional=True,
            )
        )
        for name, label in (
            (self.VERSION, "Version now current"),
            (
                self.NEW_VERSION,
                "1 when a new version was stored, 0 when the same source was already imported",
            ),
            (self.FEATURE_COUNT, "Features in the version"),
            (self.REPAIRED_COUNT, "Invalid geometries repaired"),
            (self.REJECTED_COUNT, "Features rejected"),
        ):
            self.addOutput(QgsProcessingOutputNumber(name, self.tr(label)))

    def processAlgorithm(self, parameters, context, feedback):
        from analysis.reference.operations import import_reference

        where = self.target(parameters, context)
        with self.analysis_run(parameters, context, feedback) as inputs:
            done = import_reference(
                where["layer"],
                self.parameterAsFile(parameters, self.SOURCE, context),
                where["target"],
                schema=where["schema"],
                fmt=FORMATS[self.parameterAsEnum(parameters, self.FORMAT, context)],
                geometry=self.parameterAsFile(parameters, self.GEOMETRY, context) or None,
                mapping=self.parameterAsFile(parameters, self.MAPPING, context) or None,
                source_date=self.parameterAsString(parameters, self.SOURCE_DATE, context) or None,
                profile=inputs["profile"],
                progress=inputs["progress"],
                causes=self.parameterAsFile(parameters, self.CAUSES, context) or None,
                accept_rejections=self.parameterAsBool(parameters, self.ACCEPT_REJECTIONS, context),
                derive_watersheds=self.parameterAsBool(parameters, self.DERIVE_WATERSHEDS, context),
                rejections=self.parameterAsString(parameters, self.REJECTIONS, context).strip() or None,
            )
        for line in done["report"]:
            feedback.pushInfo(line)
        version = done["version"]
        feedback.pushInfo(
            self.tr("{layer}: version {version} is current ({what})").format(
                layer=where["layer"],
                version=version["version"],
                what=self.tr("new") if done["new_version"] else self.tr("same sha256: nothing changed"),
            )
        )
        return {
            self.VERSION: version["version"],
            self.NEW_VERSION: int(done["new_version"]),
            self.FEATURE_COUNT: version["feature_count"],
            self.REPAIRED_COUNT: len(done["validation"]["repaired"]),
            self.REJECTED_COUNT: len(done["validation"]["rejected"]),
        }
