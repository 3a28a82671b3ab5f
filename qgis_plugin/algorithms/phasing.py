"""``swppp:phasing``: acres per phase and disturbed at once over time (SWPPP B(4))."""

from qgis.core import (
    NULL,
    QgsCoordinateReferenceSystem,
    QgsFeature,
    QgsFeatureSink,
    QgsGeometry,
    QgsProcessing,
    QgsProcessingOutputHtml,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterBoolean,
    QgsProcessingParameterFeatureSink,
    QgsProcessingParameterFeatureSource,
    QgsProcessingParameterField,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterString,
    QgsProcessingUtils,
    QgsVectorLayer,
    QgsWkbTypes,
)
from qgis.PyQt.QtCore import QDate, QDateTime, Qt, QVariant

from analysis.profile import DEFAULT_PROFILE, help_text

from ..compat import parameter_as_strings
from .base import SwpppAlgorithm, feedback_progress

__all__ = ["PhasingAlgorithm"]

HELP = """<p>The disturbance of a phasing plan over time (SWPPP B(4): not more than \
{p.phasing.max_concurrent_acres:g} acres disturbed at any one time). A polygon counts from its \
start date until its stabilisation date (the day it is stabilised it no longer counts); one with \
no stabilisation date counts until the plan's last date. At every moment the disturbed area is the \
union of the polygons open then, so ground cleared in two phases counts once.</p>
<p>Choose the disturbance layer and its phase, start and stabilisation fields (ISO \
<i>YYYY-MM-DD</i> text or date fields). Outputs: a table per phase (acres, new acres not disturbed \
by an earlier phase, first start, last stabilisation), the timeline (the disturbed acres from each \
date on, and the phases open), the worst moment's disturbed ground as a polygon, and the timeline \
chart (PNG or SVG, by the file's extension). The same analysis runs in <b>swppp:review</b>. \
Thresholds come from the rules profile (PROFILE); WAIVER stands for an approved waiver of the \
{p.phasing.max_concurrent_acres:g}-acre limit (a warning instead of a failure). Figures shown are \
the default rules profile's ({p.name}).</p>
<p><b>From CAD</b>: load the DXF's boundaries (closed polylines become polygons), choose its \
<i>Layer</i> field as the phase field and give PHASE_PATTERN, a regular expression over the CAD \
layer names whose first group is the phase (<i>C-PHAS-(\\d+)</i>; entities on other CAD layers are \
left out). SCHEDULE takes the dates from a table (CSV or XLSX: <i>phase,start,stabilized</i>) \
instead of the layer's fields.</p>
<p><b>A fix</b>: where the limit is exceeded, the Proposal table gives each phase the smallest \
delay of its start (its duration and the order of the phases kept) that keeps the site within \
the limit, and the completion that follows; a phase over the limit alone must be split. Every \
output is optional; the chart opens from the Results Viewer.</p>"""


def _plain(value):
    """A QGIS attribute value as plain Python: NULL as None, QDate/QDateTime as date/datetime."""
    if value is None or (isinstance(value, QVariant) and value.isNull()):
        return None
    if isinstance(value, QDateTime):
        return value.toPyDateTime() if value.isValid() else None
    if isinstance(value, QDate):
        return value.toPyDate() if value.isValid() else None
    return value


def _qdate(text):
    return QDate.fromString(text, Qt.DateFormat.ISODate) if text else NULL


class PhasingAlgorithm(SwpppAlgorithm):
    DISTURBANCE = "DISTURBANCE"
    PHASE_FIELD = "PHASE_FIELD"
    START_FIELD = "START_FIELD"
    STABILIZED_FIELD = "STABILIZED_FIELD"
    WAIVER = "WAIVER"
    PHASE_PATTERN = "PHASE_PATTERN"
    SCHEDULE = "SCHEDULE"
    OUTPUT_PHASES = "OUTPUT_PHASES"
    OUTPUT_PROPOSAL = "OUTPUT_PROPOSAL"
    CHART_HTML = "CHART_HTML"
    PROPOSAL = "PROPOSAL"
    OUTPUT_TIMELINE = "OUTPUT_TIMELINE"
    OUTPUT_WORST = "OUTPUT_WORST"
    OUTPUT_CHART = "OUTPUT_CHART"
    MAX_CONCURRENT_ACRES = "MAX_CONCURRENT_ACRES"
    MAX_CONCURRENT_AT = "MAX_CONCURRENT_AT"
    STATUS = "STATUS"

    # (parameter, contract field of analysis.checks.phasing.FIELDS, label)
    FIELD_PARAMETERS = (
        (PHASE_FIELD, "phase", "Phase field"),
        (START_FIELD, "start_date", "Start date field (YYYY-MM-DD or date)"),
        (STABILIZED_FIELD, "stabilized_date", "Stabilisation date field (empty: not yet scheduled)"),
    )

    def name(self):
        return "phasing"

    def displayName(self):
        return help_text(
            self.tr("Disturbance phasing ({p.phasing.max_concurrent_acres:g} acres at any one time)")
        )

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.addParameter(
            QgsProcessingParameterFeatureSource(
                self.DISTURBANCE,
                self.tr("Disturbance (polygons, or a DXF's closed polylines)"),
                [QgsProcessing.SourceType.TypeVectorAnyGeometry],
            )
        )
        for parameter, contract, label in self.FIELD_PARAMETERS:
            # Optional so that the contract's name applies when none is given (QGIS 3.22 checks
            # a required field parameter's value without looking at its default).
            self.addParameter(
                QgsProcessingParameterField(
                    parameter,
                    self.tr(label),
                    defaultValue=contract,
                    parentLayerParameterName=self.DISTURBANCE,
                    optional=True,
                )
            )
        self.addParameter(
            QgsProcessingParameterString(
                self.PHASE_PATTERN,
                self.tr(
                    "Phase pattern over the phase field (a regular expression, "
                    "first group the phase), e.g. C-PHAS-(\\d+)"
                ),
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFile(
                self.SCHEDULE,
                self.tr("Schedule table (phase,start,stabilized; CSV or XLSX)"),
                optional=True,
                fileFilter=self.tr("Tables (*.csv *.xlsx *.ods)"),
            )
        )
        self.addParameter(
            QgsProcessingParameterBoolean(
                self.WAIVER,
                help_text(
                    self.tr(
                        "The project has an approved waiver of the "
                        "{p.phasing.max_concurrent_acres:g}-acre limit"
                    )
                ),
                defaultValue=False,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.PROFILE, self.tr("Rules profile (name or TOML file)"), defaultValue=DEFAULT_PROFILE
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                self.OUTPUT_PHASES, self.tr("Phases"), QgsProcessing.SourceType.TypeVector, optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                self.OUTPUT_TIMELINE, self.tr("Timeline"), QgsProcessing.SourceType.TypeVector, optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                self.OUTPUT_WORST,
                self.tr("Worst moment's disturbed ground"),
                QgsProcessing.SourceType.TypeVectorPolygon,
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFeatureSink(
                self.OUTPUT_PROPOSAL,
                self.tr("Proposal (start dates within the limit)"),
                QgsProcessing.SourceType.TypeVector,
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_CHART,
                self.tr("Timeline chart"),
                self.tr("PNG images (*.png);;SVG images (*.svg)"),
                optional=True,
                createByDefault=False,
            )
        )
        self.addOutput(
            QgsProcessingOutputNumber(
                self.MAX_CONCURRENT_ACRES,
                self.tr(
                    "Most acres disturbed at one time (the verdict's figure: ellipsoidal, as the log says)"
                ),
            )
        )
        self.addOutput(
            QgsProcessingOutputString(self.MAX_CONCURRENT_AT, self.tr("When that first happens (YYYY-MM-DD)"))
        )
        self.addOutput(QgsProcessingOutputString(self.STATUS, self.tr("phasing_five_acres status")))
        self.addOutput(
            QgsProcessingOutputString(
                self.PROPOSAL, self.tr("The proposal (not_needed, proposed, split, cannot_propose)")
            )
        )
        self.addOutput(QgsProcessingOutputHtml(self.CHART_HTML, self.tr("Timeline chart")))

    def prepareAlgorithm(self, parameters, context, feedback):
        return True  # no site plan to stage: the layer is read in processAlgorithm

    def checkParameterValues(self, parameters, context):
        return super(SwpppAlgorithm, self).checkParameterValues(parameters, context)

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: they load geopandas and matplotlib.
        from analysis.charts import plain_text
        from analysis.checks.phasing import (
            disturbance_from_frame,
            proposed_phasing,
            review_phasing,
            timeline_chart,
        )
        from analysis.phasing.proposal import propose_schedule
        from analysis.profile import load_profile

        progress = feedback_progress(feedback)
        with self.analysis_errors(feedback):
            profile = load_profile(
                self.parameterAsString(parameters, self.PROFILE, context) or DEFAULT_PROFILE
            )
            source = self.parameterAsSource(parameters, self.DISTURBANCE, context)
            fields = {
                contract: (parameter_as_strings(self, parameters, parameter, context) or [contract])[0]
                for parameter, contract, _label in self.FIELD_PARAMETERS
            }
            schedule = self.parameterAsFile(parameters, self.SCHEDULE, context) or None
            read = [fields["phase"]] if schedule else list(fields.values())
            frame, crs = self._read(source, read, progress)
            frame, fields = self._phases(
                frame,
                fields,
                source.sourceName(),
                self.parameterAsString(parameters, self.PHASE_PATTERN, context),
                schedule,
            )
            progress.step(0.3, "sweeping the phasing timeline")
            prepared, repairs = disturbance_from_frame(frame, crs, fields, profile, layer=source.sourceName())
            for repair in repairs:
                feedback.pushWarning(
                    f"{repair.feature} had an invalid geometry ({repair.reason});"
                    f" it was repaired with make_valid"
                )
            plan, findings = review_phasing(
                prepared,
                profile,
                waiver=self.parameterAsBoolean(parameters, self.WAIVER, context),
                progress=progress,
            )
            progress.step(0.6, "proposing start dates within the limit")
            proposal = propose_schedule(prepared, profile)
            progress.step(0.8, "writing the tables and the chart")
            chart_path = self.parameterAsFileOutput(parameters, self.OUTPUT_CHART, context)
            with plain_text():  # phase names are user text, never mathtext (as LazyCharts)
                chart = timeline_chart(
                    plan,
                    profile.phasing.max_concurrent_acres,
                    proposed=proposed_phasing(prepared, proposal, profile),
                )
            if chart_path and chart is not None:
                chart.write(chart_path)
            html = None
            if chart is not None:  # the Results Viewer opens it
                html = QgsProcessingUtils.generateTempFilename("phasing_timeline.html")
                with open(html, "w", encoding="utf-8") as handle:
                    handle.write(
                        f'<html><body><img alt="timeline" src="{chart.data_uri("svg")}"></body></html>'
                    )
        for finding in findings:
            feedback.pushInfo(f"{finding.status.upper()} {finding.rule}: {finding.message}")
        if plan.max_at is not None:  # the verdict's figure and method, as `swppp phasing` prints
            feedback.pushInfo(
                f"worst moment: {plan.decided_acres!r} acres ({plan.area_method}) "
                f"on {plan.max_at.isoformat()}; timeline acres: "
                f"{plan.timeline_method}"
            )
        feedback.pushInfo(f"proposal: {proposal.message}")
        results = {
            self.MAX_CONCURRENT_ACRES: plan.decided_acres,
            self.MAX_CONCURRENT_AT: plan.max_at.isoformat() if plan.max_at else None,
            self.STATUS: findings[0].status,
            self.PROPOSAL: proposal.status,
        }
        if chart_path:
            results[self.OUTPUT_CHART] = chart_path
        if html:
            results[self.CHART_HTML] = html
        results.update(self._write_tables(plan, findings[0], proposal, profile, parameters, context))
        return results

    def _phases(self, frame, fields, layer, pattern, schedule):
        """The phase by ``pattern`` (entities matching no CAD layer left out; closed polylines
        as polygons) and the dates from ``schedule``; returns the frame and its field names."""
        import geopandas as gpd
        import numpy as np

        from analysis.siteplan.cad import cad_areas, cad_layer_matches
        from analysis.siteplan.schedule import phase_name, read_schedule

        phase = fields["phase"]
        if pattern:
            view = frame.rename(columns={phase: "Layer"})
            matched, groups = cad_layer_matches(
                None, layer, view, pattern, parameter="phase_pattern", given_by="PHASE_PATTERN"
            )
            names = [g if g is not None else v for g, v in zip(groups, frame[phase])]
            frame = frame.assign(**{phase: [phase_name(n) for n in names]})[matched]
        frame = (
            gpd.GeoDataFrame(frame, geometry=list(cad_areas(None, layer, frame)), crs=frame.crs)
            if len(frame)
            else frame
        )
        if schedule:
            dates = read_schedule(schedule)
            phases = [phase_name(v) for v in frame[phase]]
            missing = sorted({p for p in phases if p not in dates}, key=str)
            if missing:
                from analysis.errors import InputError

                raise InputError(
                    f"phase(s) {', '.join(map(str, missing[:10]))} of the layer have no row",
                    path=schedule,
                    parameter="schedule",
                    fix="add a row per phase: phase,start,stabilized",
                )
            frame = frame.assign(
                start_date=np.array([dates[p][0] for p in phases], dtype=object),
                stabilized_date=np.array([dates[p][1] for p in phases], dtype=object),
            )
            fields = {**fields, "start_date": "start_date", "stabilized_date": "stabilized_date"}
        return frame, fields

    def _read(self, source, names, progress):
        """The layer's features as a GeoDataFrame indexed by feature id, and its CRS."""
        import geopandas as gpd
        import pandas as pd
        import shapely
        from pyproj import CRS

        names = list(dict.fromkeys(names))
        fids: list = []
        geometries: list = []
        rows: list = []
        total = max(source.featureCount(), 1)
        for count, feature in enumerate(source.getFeatures()):
            if count % 1000 == 0:
                progress.step(0.3 * count / total, "reading the disturbance layer")
            geometry = feature.geometry()
            if geometry is None or geometry.isEmpty():
                geometries.append(None)
            else:
                if QgsWkbTypes.isCurvedType(geometry.wkbType()):
                    geometry.convertToStraightSegment()
                geometries.append(shapely.from_wkb(bytes(geometry.asWkb())))
            fids.append(feature.id())
            rows.append([_plain(feature.attribute(name)) for name in names])
        wkt = source.sourceCrs().toWkt() if source.sourceCrs().isValid() else None
        crs = CRS.from_wkt(wkt) if wkt else None
        frame = gpd.GeoDataFrame(
            pd.DataFrame(rows, columns=names, index=pd.Index(fids, name="fid"), dtype=object),
            geometry=gpd.GeoSeries(geometries, index=pd.Index(fids, name="fid")),
        )
        return frame, crs

    def _write_tables(self, plan, verdict, proposal, profile, parameters, context):
        import shapely

        from analysis.checks.phasing import open_phases
        from analysis.io.csv_cells import csv_cell

        def sink(name, fields, geometry_type=QgsWkbTypes.Type.NoGeometry, crs=None):
            return self.parameterAsSink(
                parameters,
                name,
                context,
                fields,
                geometry_type,
                crs if crs is not None else QgsCoordinateReferenceSystem(),
            )

        def fields_of(*spec):
            # Typed as the memory provider reads them ("acres:double(0,0)"): one spelling for
            # every QGIS, where QgsField takes a QVariant.Type up to 3.36 and a QMetaType.Type
            # from 3.38 (the only one Qt 6 has).
            definition = "&".join(f"field={name}:{kind}(0,0)" for name, kind in spec)
            return QgsVectorLayer(f"None?{definition}", "fields", "memory").fields()

        def feature(fields, values, geometry=None, output=None):
            """A feature of output ``output``: its text cells guarded against formulas where
            that output is a CSV file (as every CSV the project writes: csv_cells)."""
            if output is not None and to_csv(output):
                values = [csv_cell(v) if isinstance(v, str) else v for v in values]
            out = QgsFeature(fields)
            out.setAttributes(values)
            if geometry is not None:
                out.setGeometry(geometry)
            return out

        def to_csv(name):
            """Whether output ``name`` goes to a CSV file, where GDAL writes a date field as
            YYYY/MM/DD: there the dates are ISO text instead."""
            destination = parameters.get(name)
            destination = getattr(destination, "sink", destination)
            if hasattr(destination, "staticValue"):
                destination = destination.staticValue()
            return str(destination or "").lower().endswith(".csv")

        def day_kind(name):
            return "string" if to_csv(name) else "date"

        def day(name):
            return (lambda text: text if text else NULL) if to_csv(name) else _qdate

        results = {}
        kind, on = day_kind(self.OUTPUT_PHASES), day(self.OUTPUT_PHASES)
        phase_fields = fields_of(
            ("phase", "string"),
            ("acres", "double"),
            ("new_acres", "double"),
            ("start_date", kind),
            ("stabilized_date", kind),
        )
        phases, results[self.OUTPUT_PHASES] = sink(self.OUTPUT_PHASES, phase_fields)
        for row in plan.phases if phases is not None else ():
            phases.addFeature(
                feature(
                    phase_fields,
                    [
                        row["phase"] if row["phase"] is not None else NULL,
                        row["acres"],
                        row["new_acres"],
                        on(row["start_date"]),
                        on(row["stabilized_date"]),
                    ],
                    output=self.OUTPUT_PHASES,
                ),
                QgsFeatureSink.Flag.FastInsert,
            )
        kind, on = day_kind(self.OUTPUT_TIMELINE), day(self.OUTPUT_TIMELINE)
        timeline_fields = fields_of(
            ("date", kind), ("acres", "double"), ("phases", "string"), ("polygons", "integer")
        )
        timeline, results[self.OUTPUT_TIMELINE] = sink(self.OUTPUT_TIMELINE, timeline_fields)
        for row, open_now in zip(plan.timeline if timeline is not None else (), open_phases(plan.timeline)):
            timeline.addFeature(
                feature(
                    timeline_fields,
                    [
                        on(row["date"]),
                        row["acres"],
                        ", ".join("(no phase)" if p is None else str(p) for p in open_now),
                        row["polygons"],
                    ],
                    output=self.OUTPUT_TIMELINE,
                ),
                QgsFeatureSink.Flag.FastInsert,
            )
        kind, on = day_kind(self.OUTPUT_WORST), day(self.OUTPUT_WORST)
        worst_fields = fields_of(
            ("status", "string"),
            ("acres", "double"),
            ("area_method", "string"),
            ("limit_acres", "double"),
            ("at", kind),
            ("phases", "string"),
            ("features", "string"),
        )
        worst, results[self.OUTPUT_WORST] = sink(
            self.OUTPUT_WORST,
            worst_fields,
            QgsWkbTypes.Type.MultiPolygon,
            QgsCoordinateReferenceSystem(profile.area_crs),
        )
        if worst is not None and plan.worst_geometry is not None and not plan.worst_geometry.is_empty:
            geometry = QgsGeometry()
            geometry.fromWkb(shapely.to_wkb(plan.worst_geometry))
            geometry.convertToMultiType()
            worst.addFeature(
                feature(
                    worst_fields,
                    [
                        verdict.status,
                        plan.decided_acres,
                        plan.area_method,
                        verdict.limit,
                        on(plan.max_at.isoformat()),
                        ", ".join("(no phase)" if p is None else str(p) for p in plan.worst_phases),
                        "; ".join(plan.worst_features),
                    ],
                    geometry,
                    self.OUTPUT_WORST,
                ),
                QgsFeatureSink.Flag.FastInsert,
            )
        kind, on = day_kind(self.OUTPUT_PROPOSAL), day(self.OUTPUT_PROPOSAL)
        proposal_fields = fields_of(
            ("phase", "string"),
            ("start_date", kind),
            ("stabilized_date", kind),
            ("duration_days", "integer"),
            ("shift_days", "integer"),
            ("proposed_start", kind),
            ("proposed_stabilized", kind),
        )
        table, results[self.OUTPUT_PROPOSAL] = sink(self.OUTPUT_PROPOSAL, proposal_fields)
        for row in proposal.rows if table is not None else ():
            table.addFeature(
                feature(
                    proposal_fields,
                    [
                        row["phase"] if row["phase"] is not None else NULL,
                        on(row["start_date"]),
                        on(row["stabilized_date"]),
                        row["duration_days"],
                        row["shift_days"],
                        on(row["proposed_start"]),
                        on(row["proposed_stabilized"]),
                    ],
                    output=self.OUTPUT_PROPOSAL,
                ),
                QgsFeatureSink.Flag.FastInsert,
            )
        return {key: value for key, value in results.items() if value}  # outputs not asked for: none
