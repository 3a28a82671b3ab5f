"""``swppp:screen``: many sites (parcels, permits on file) screened at once for Condition A and wetlands."""

import os
import shutil
import tempfile

from qgis.core import (
    QgsProcessing,
    QgsProcessingException,
    QgsProcessingOutputNumber,
    QgsProcessingParameterField,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
    QgsProcessingParameterVectorDestination,
    QgsProcessingParameterVectorLayer,
)

from analysis.profile import DEFAULT_PROFILE

from .base import export_layer
from .reference_import import ReferenceAlgorithm

__all__ = ["ScreenAlgorithm"]

HELP = """<p>Screens many sites at once, as <code>swppp screen</code> does: each feature of \
SITES (one polygon per site, e.g. parcels or permits on file, with its id in ID_FIELD) is \
treated as if it were all disturbed. Condition A (SWPPP C(1)) is decided from the catchments the \
site lies in (their <code>drains_to</code> water on the 303(d) list with a pollutant) and the \
TMDL watersheds it overlaps (stormwater a source), as a review of the site decides it; the acres \
inside wetlands and inside regulated wetlands' adjacent areas are measured.</p>
<p>REFERENCE is a reference GeoPackage, or a PostgreSQL connection (postgresql://... or \
service=NAME) with SCHEMA, where the screen runs as SQL in the database. SINCE (a version \
number) also names the sites whose Condition A or wetland status changed since that version \
of each layer, and the water or watershed that changed it.</p>
<p>OUTPUT is a layer with one feature per site (fields <code>condition_a</code>, \
<code>listed_waters</code>, <code>tmdl_watersheds</code>, <code>wetland_acres</code>, ...); \
OUTPUT_TABLE the same as CSV, OUTPUT_JSON as JSON.</p>"""

COUNTS = (
    ("APPLIES_COUNT", "Sites where Condition A applies"),
    ("NOT_DECIDED_COUNT", "Sites where Condition A is not decided"),
    ("DOES_NOT_APPLY_COUNT", "Sites where Condition A does not apply"),
    ("WETLAND_COUNT", "Sites in a wetland or its adjacent area"),
    ("CHANGED_COUNT", "Sites changed since the version given"),
)


class ScreenAlgorithm(ReferenceAlgorithm):
    SITES = "SITES"
    ID_FIELD = "ID_FIELD"
    SINCE = "SINCE"
    OUTPUT = "OUTPUT"
    OUTPUT_TABLE = "OUTPUT_TABLE"

    def name(self):
        return "screen"

    def displayName(self):
        return self.tr("Screen many sites (Condition A, wetlands)")

    def shortHelpString(self):
        return self.tr(HELP)

    def initAlgorithm(self, config=None):
        self.addParameter(
            QgsProcessingParameterVectorLayer(
                self.SITES,
                self.tr("Sites (one polygon per site)"),
                [QgsProcessing.SourceType.TypeVectorPolygon],
            )
        )
        self.addParameter(
            QgsProcessingParameterField(
                self.ID_FIELD,
                self.tr("Site id field (default: site_id, parcel_id, permit_id or id)"),
                parentLayerParameterName=self.SITES,
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.TARGET,
                self.tr(
                    "Reference: GeoPackage path, or PostgreSQL connection (postgresql://... or service=NAME)"
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
        self.addParameter(
            QgsProcessingParameterNumber(
                self.SINCE,
                self.tr("Name the sites changed since this version of each layer"),
                QgsProcessingParameterNumber.Type.Integer,
                optional=True,
                minValue=1,
            )
        )
        self.addParameter(
            QgsProcessingParameterVectorDestination(
                self.OUTPUT, self.tr("Screen"), QgsProcessing.SourceType.TypeVectorPolygon
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_TABLE,
                self.tr("Screen (CSV)"),
                self.tr("CSV files (*.csv)"),
                optional=True,
                createByDefault=False,
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_JSON,
                self.tr("Screen (JSON)"),
                self.tr("JSON files (*.json)"),
                optional=True,
                createByDefault=False,
            )
        )
        for name, label in COUNTS:
            self.addOutput(QgsProcessingOutputNumber(name, self.tr(label)))

    def prepareAlgorithm(self, parameters, context, feedback):
        """Copy the sites layer into a GeoPackage for the analysis (here: on the main thread)."""
        layer = self.parameterAsVectorLayer(parameters, self.SITES, context)
        if layer is None:
            raise QgsProcessingException(self.tr("The sites layer could not be opened."))
        self._sites_dir = tempfile.mkdtemp(prefix="swppp-screen-")
        self._sites_path = os.path.join(self._sites_dir, "sites.gpkg")
        export_layer(layer, "sites", self._sites_path, context, feedback, given_as=self.tr("the sites layer"))
        return True

    def processAlgorithm(self, parameters, context, feedback):
        import json

        from analysis.io.files import write_text
        from analysis.screen.operations import run_screen
        from analysis.screen.output import write_screen

        target = self.parameterAsString(parameters, self.TARGET, context).strip()
        schema = self.parameterAsString(parameters, self.SCHEMA, context).strip()
        if schema:
            target = (
                f"{target}{'&' if '?' in target else '?'}schema={schema}"
                if target.startswith(("postgresql://", "postgres://"))
                else f"{target} schema={schema}"
            )
        since = (
            self.parameterAsInt(parameters, self.SINCE, context)
            if parameters.get(self.SINCE) not in (None, "")
            else None
        )
        id_field = self.parameterAsString(parameters, self.ID_FIELD, context) or None
        output = self.parameterAsOutputLayer(parameters, self.OUTPUT, context)
        table = self.parameterAsFileOutput(parameters, self.OUTPUT_TABLE, context)
        json_path = self.parameterAsFileOutput(parameters, self.OUTPUT_JSON, context)
        try:
            with self.analysis_run(parameters, context, feedback) as inputs:
                done = run_screen(
                    self._sites_path,
                    target,
                    profile=inputs["profile"],
                    layer="sites",
                    id_field=id_field,
                    output=output,
                    since=since,
                    progress=inputs["progress"],
                )
                if table:
                    write_screen(done.screen, table)
                if json_path:
                    write_text(json_path, json.dumps(done.to_dict(), indent=2, default=str))
        finally:
            shutil.rmtree(self._sites_dir, ignore_errors=True)
        for line in done.summary():
            feedback.pushInfo(line)
        statuses = [row["condition_a"] for row in done.screen.rows]
        results = {
            self.OUTPUT: output,
            "APPLIES_COUNT": statuses.count("applies"),
            "NOT_DECIDED_COUNT": statuses.count("not decided"),
            "DOES_NOT_APPLY_COUNT": statuses.count("does not apply"),
            "WETLAND_COUNT": sum(r["wetland_status"] != "none" for r in done.screen.rows),
            "CHANGED_COUNT": len(done.changes),
        }
        for name, path in ((self.OUTPUT_TABLE, table), (self.OUTPUT_JSON, json_path)):
            if path:
                results[name] = path
        return results
