"""``swppp:inspections``: inspection frequency, milestone notices and sediment cleanout from records."""

from qgis.core import (
    QgsProcessingParameterEnum,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterString,
)

from analysis.profile import DEFAULT_PROFILE, help_text

from .base import GPKG_FILTER
from .records import CSV_FILTER, RecordsAlgorithm

__all__ = ["InspectionsAlgorithm"]

RAIN_UNITS = ("", "in", "mm", "tenths_mm")

HELP = """<p>Checks a site's construction-phase records against the stormwater chapter:</p>
<ul>
<li><b>inspection_frequency</b> (Maintenance and repair A(2)): an inspection report at least every \
{p.inspections.interval_days} days while land development is under way, and within \
{p.inspections.storm_report_within_hours} hours of every storm of \
{p.inspections.storm_precip_in:g} inch or more (consecutive wet days are one storm; a report dated \
from its last wet day to the end of the day its {p.inspections.storm_report_within_hours} hours \
reach answers it).</li>
<li><b>inspection_notice</b> (Inspections A(1)(a)): each milestone the rules profile lists \
notified at least {p.inspections.notice_hours_before_milestone:g} hours ahead.</li>
<li><b>sediment_cleanout</b> (Maintenance and repair A(1)): a trap or pond at \
{p.inspections.sediment_cleanout_fraction:.0%} of its design capacity cleaned out by the next \
inspection.</li>
</ul>
<p>LOG: date, inspector, kind. RAIN: date, precip_in, or a NOAA GHCN-Daily CSV (give RAIN_UNITS: \
in or mm for CDO exports, tenths_mm for NCEI access files; STATION where it holds several). The \
period runs from the site plan's first start to its final stabilisation (SITE), or from FROM to \
TO. One <i>fail</i> per missed obligation, naming the due day. Figures shown are the default rules \
profile's ({p.name}).</p>"""


class InspectionsAlgorithm(RecordsAlgorithm):
    LOG = "LOG"
    RAIN = "RAIN"
    NOTICES = "NOTICES"
    TRAPS = "TRAPS"
    STATION = "STATION"
    RAIN_UNITS = "RAIN_UNITS"
    FROM = "FROM"
    TO = "TO"

    def name(self):
        return "inspections"

    def displayName(self):
        return self.tr("Check construction inspection records")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        for name, label, optional in (
            (self.LOG, "Inspection log (CSV)", False),
            (self.RAIN, "Daily rainfall (CSV or GHCN-Daily CSV)", False),
            (self.NOTICES, "Milestone notices (CSV)", True),
            (self.TRAPS, "Sediment traps (CSV)", True),
        ):
            self.addParameter(
                QgsProcessingParameterFile(
                    name,
                    self.tr(label),
                    behavior=QgsProcessingParameterFile.Behavior.File,
                    fileFilter=CSV_FILTER,
                    optional=optional,
                )
            )
        self.addParameter(
            QgsProcessingParameterString(
                self.STATION, self.tr("GHCN-Daily station (where the file holds several)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterEnum(
                self.RAIN_UNITS,
                self.tr("GHCN-Daily PRCP units"),
                options=[self.tr("simple CSV (inches)"), "in", "mm", "tenths_mm"],
                defaultValue=0,
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.SITE,
                self.tr("Site plan GeoPackage (its construction period)"),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter=GPKG_FILTER,
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.FROM, self.tr("Or first day of the period (YYYY-MM-DD)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.TO, self.tr("Last day of the period (YYYY-MM-DD)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.PROFILE, self.tr("Rules profile (name or TOML file)"), defaultValue=DEFAULT_PROFILE
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_JSON,
                self.tr("Result (JSON)"),
                self.tr("JSON files (*.json)"),
                optional=True,
                createByDefault=False,
            )
        )
        self.add_count_outputs()

    def processAlgorithm(self, parameters, context, feedback):
        from analysis.dates import given_day
        from analysis.profile import load_profile
        from analysis.records.inspections import check_record_files
        from analysis.report.outputs import write_json

        log, rain = (self.parameterAsFile(parameters, key, context) for key in (self.LOG, self.RAIN))
        optional = {
            name: self.parameterAsFile(parameters, key, context) or None
            for name, key in (("notices", self.NOTICES), ("traps", self.TRAPS))
        }
        units = RAIN_UNITS[self.parameterAsEnum(parameters, self.RAIN_UNITS, context)] or None
        json_path = self.parameterAsFileOutput(parameters, self.OUTPUT_JSON, context) or None
        with self.analysis_run(parameters, context, feedback) as inputs:
            result = check_record_files(
                load_profile(inputs["profile"]),
                log,
                rain,
                site=inputs["site"],
                start=given_day(self.parameterAsString(parameters, self.FROM, context) or None, "FROM"),
                end=given_day(self.parameterAsString(parameters, self.TO, context) or None, "TO"),
                station=self.parameterAsString(parameters, self.STATION, context) or None,
                rain_units=units,
                progress=inputs["progress"],
                **optional,
            )
            inputs["progress"].check_canceled()
            if json_path:
                write_json(result, json_path)
        for finding in result.findings:
            if finding.status in ("fail", "warn", "needs_review"):
                feedback.pushInfo(
                    f"{finding.status.upper()} {finding.rule} [{finding.section}]: {finding.message}"
                )
        results = self.count_results(result)
        if json_path:
            results[self.OUTPUT_JSON] = json_path
        return results
