"""``swppp:review``: every map check of the stormwater chapter in one run."""

from qgis.core import (
    QgsProcessingException,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterFile,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from analysis.profile import help_text

from .base import REVIEW_PART, SwpppAlgorithm
from .checklist import CHECKLIST_ROLE_LAYERS, CONFIRMATIONS, add_confirmations_parameter

__all__ = ["ReviewAlgorithm"]

HELP = """<p>Reviews a construction site plan against the village stormwater chapter and reports \
every check a map can answer, each with the section it cites, the measured figure, the limit \
and the features that cause it.</p>
<ul>
<li><b>applicability</b> (Definitions, "Land development activity"; SWPPP A): disturbed acres, \
overlaps counted once; a SWPPP is required from {p.applicability.min_disturbed_acres:g} acre(s), \
or as part of a larger common plan of {p.applicability.min_common_plan_acres:g} acre(s) or \
more.</li>
<li><b>site_map_scale</b> (SWPPP B(2)): each plan sheet (SHEETS), each stated sheet scale (the \
layout_scale table) and each map of the project's print layouts at 1 inch = \
{p.site_map_scale.feet_per_inch:g} feet or larger.</li>
<li><b>phasing_five_acres</b> (SWPPP B(4)): never more than {p.phasing.max_concurrent_acres:g} \
acres disturbed and not yet stabilised at one time; <b>phasing_sequence</b> (Definitions, \
"Phasing"): each phase stabilised before the next is cleared (swppp:phasing gives the timeline \
itself).</li>
<li><b>condition_a</b>, <b>condition_b</b>, <b>condition_c</b> (SWPPP C(1) to C(3)): impaired \
waters or TMDL watersheds; {p.condition_b.min_disturbed_acres:g} acres or more; \
{p.condition_c.min_disturbed_acres:g} to {p.condition_c.max_disturbed_acres:g} acres except \
single-family residential and agricultural land.</li>
<li><b>postconstruction_controls</b> (SWPPP C, D(2), D(3), D(8)) and <b>easement_coverage</b> \
(SWPPP D(8); Maintenance and repair B): postconstruction practices inside recorded maintenance \
easements reaching a public right-of-way.</li>
<li><b>wetlands</b> (SWPPP B(2), F) and <b>disturbance_outside_site</b> (SWPPP B(2)).</li>
<li><b>swppp_contents</b> and the checklist (every item of SWPPP B, D, E, F, G, H, Maintenance \
and repair B, D, Inspections A(2), E), <b>contractor_certification</b>, \
<b>construction_guarantee</b>, <b>maintenance_bond</b>, <b>esc_practices</b>: as \
swppp:checklist does; CONFIRMATIONS holds the reviewer's confirmations.</li>
<li><b>hydrology_pre_post</b> (SWPPP D(4), D(5)) and <b>water_quality_volume</b> (Performance \
and design criteria A(1)): TR-55 runoff and peaks before and after development, and the WQv, from \
the drainage_area, soils and land_cover_pre/post layers; the SWPPP's own figures checked.</li>
</ul>
<p>Give the site plan either as a GeoPackage (SITE) or as one layer per role (the *_LAYER \
parameters). REFERENCE holds wetlands, impaired waters, TMDL watersheds and catchments; or choose \
those from the project (WETLANDS_LAYER, IMPAIRED_WATERS_LAYER, TMDL_WATERSHEDS_LAYER, \
CATCHMENTS_LAYER; not together with REFERENCE). Outputs are optional: the result as JSON, the \
report as HTML and as PDF, and the findings with their geometries as a GeoPackage. Bad input stops \
the run with a message naming the file, layer, feature and field, and nothing is written. A check \
this version cannot make yet reports <i>needs_review</i> and says what to check by hand. \
Thresholds and citations come from the rules profile (PROFILE). Figures shown are the default \
rules profile's ({p.name}).</p>"""


class ReviewAlgorithm(SwpppAlgorithm):
    DISTURBED_ACRES = "DISTURBED_ACRES"
    ROLE_LAYERS = SwpppAlgorithm.ROLE_LAYERS + SwpppAlgorithm.HYDROLOGY_ROLE_LAYERS + CHECKLIST_ROLE_LAYERS
    ROUND_FILE = "ROUND_FILE"
    REVIEWER = "REVIEWER"
    ROUND = "ROUND"
    ROUND_SUMMARY = "ROUND_SUMMARY"
    COMPARE_TO = "COMPARE_TO"
    COMPARISON = "COMPARISON"
    READS_LAYOUTS = True  # every print layout of the project, for site_map_scale

    def name(self):
        return "review"

    def displayName(self):
        return self.tr("Review site plan")

    def group(self):
        return self.tr("Review")

    def groupId(self):
        return "review"

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.add_inputs(reference=True, sheets=True)
        add_confirmations_parameter(self)
        self.addParameter(
            QgsProcessingParameterFile(
                self.ROUND_FILE,
                self.tr(
                    "Review file: record this review as its next round (GeoPackage, or a PostgreSQL "
                    "schema postgresql://HOST/DB?schema=NAME; made where none is yet)"
                ),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter="GeoPackage (*.gpkg *.GPKG)",
                optional=True,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.REVIEWER, self.tr("Reviewer (who decides on the round's findings)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                self.COMPARE_TO,
                self.tr("Compare with round (0: none; needs the review file)"),
                QgsProcessingParameterNumber.Type.Integer,
                defaultValue=0,
                minValue=0,
                optional=True,
            )
        )
        self.add_outputs()
        self.addOutput(QgsProcessingOutputNumber(self.DISTURBED_ACRES, self.tr("Disturbed area (acres)")))
        self.addOutput(QgsProcessingOutputNumber(self.ROUND, self.tr("Round recorded (0: none)")))
        self.addOutput(
            QgsProcessingOutputString(self.ROUND_SUMMARY, self.tr("Round recorded, its decisions"))
        )
        self.addOutput(
            QgsProcessingOutputString(
                self.COMPARISON, self.tr("What changed since the round compared with (one line)")
            )
        )

    def compare_to(self, parameters, context):
        """COMPARE_TO's round, or None (0 or not given)."""
        if parameters.get(self.COMPARE_TO) in (None, ""):
            return None
        return self.parameterAsInt(parameters, self.COMPARE_TO, context) or None

    def checkParameterValues(self, parameters, context):
        from analysis.reference.store import is_postgres

        value = parameters.get(self.ROUND_FILE)
        checked = parameters
        if isinstance(value, str) and is_postgres(value):
            # A PostgreSQL schema: no file, which the file parameter's own check would refuse
            # (its filter names .gpkg); the library checks the target when it opens it.
            checked = {k: v for k, v in parameters.items() if k != self.ROUND_FILE}
        ok, message = super().checkParameterValues(checked, context)
        if not ok:
            return ok, message
        number = self.compare_to(parameters, context)
        round_file = (self.parameterAsFile(parameters, self.ROUND_FILE, context) or "").strip()
        if number is not None and not round_file:
            return False, self._needs_round_file(number)
        return True, ""

    def _needs_round_file(self, number):
        return self.tr(
            "COMPARE_TO {n} needs ROUND_FILE: the rounds compared are those of the project's "
            "review file. Give ROUND_FILE, or set COMPARE_TO to 0."
        ).format(n=number)

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: it loads geopandas and shapely.
        from analysis.review import review_paths

        confirmations = self.parameterAsFile(parameters, CONFIRMATIONS, context) or None
        round_file = (self.parameterAsFile(parameters, self.ROUND_FILE, context) or "").strip()
        compare_to = self.compare_to(parameters, context)
        with self.analysis_run(parameters, context, feedback) as inputs:
            if compare_to is not None and not round_file:  # before the review: nothing to compare in
                raise QgsProcessingException(self._needs_round_file(compare_to))
            part = inputs["progress"].sub(0.0, REVIEW_PART)  # the outputs' share comes after
            review = review_paths(**{**inputs, "progress": part}, confirmations=confirmations)
            if round_file:
                results = self._record_round(review, round_file, inputs, parameters, context, feedback)
            else:
                results = self.write_results(
                    review, parameters, context, inputs["progress"], ready=_ready(feedback)
                )
        results[self.DISTURBED_ACRES] = review.measurements["disturbed_acres"]
        info = review.rounds
        results[self.ROUND] = info["round"]["number"] if info else 0
        if info:
            from analysis.rounds.record import round_summary

            results[self.ROUND_SUMMARY] = round_summary(info)
        else:
            results[self.ROUND_SUMMARY] = ""
        comparison = (info or {}).get("comparison")
        if comparison:
            from analysis.report.comparison import comparison_summary

            results[self.COMPARISON] = comparison_summary(comparison)
        else:
            results[self.COMPARISON] = ""
        return results

    def _record_round(self, review, round_file, inputs, parameters, context, feedback):
        """The review recorded as the next round of ``round_file`` (analysis.rounds), the
        outputs written while the round is not yet committed: both, or neither."""
        from analysis.rounds.checksums import plan_files
        from analysis.rounds.record import record_round, round_summary

        written = {}

        def write(review):
            written.update(
                self.write_results(review, parameters, context, inputs["progress"], ready=_ready(feedback))
            )

        reviewer = (self.parameterAsString(parameters, self.REVIEWER, context) or "").strip() or None
        record_round(
            round_file,
            review,
            plan_files(inputs["site"]),
            reviewer=reviewer,
            before_commit=write,
            told=feedback.pushWarning if feedback is not None else None,
            compare_to=self.compare_to(parameters, context),
        )
        if feedback is not None:
            feedback.pushInfo(round_summary(review.rounds))
            if "comparison" in review.rounds:
                from analysis.report.comparison import comparison_summary

                feedback.pushInfo(comparison_summary(review.rounds["comparison"]))
        return written


def _ready(feedback):
    """The feedback's ``review_ready`` (the panel's: it shows the findings before the reports
    are written), or None."""
    return getattr(feedback, "review_ready", None)
