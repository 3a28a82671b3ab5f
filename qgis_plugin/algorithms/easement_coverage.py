"""``swppp:easement_coverage``: maintenance easements over every SMP, reaching a right-of-way."""

from qgis.core import QgsProcessingOutputNumber

from analysis.profile import help_text

from .base import REVIEW_PART, SwpppAlgorithm

__all__ = ["EasementCoverageAlgorithm"]

HELP = """<p>Checks that maintenance easements cover every postconstruction stormwater management \
practice (SMP) of the site plan (SWPPP D(8)) and that the SMPs can be reached for inspection and \
repair (Maintenance and repair B). The full review (<i>swppp:review</i>) runs the same check.</p>
<ul>
<li><b>fail</b> for each SMP with more of its area outside every easement than the profile's \
tolerance ({p.easement_coverage.uncovered_tolerance_sq_ft:g} sq ft or \
{p.easement_coverage.uncovered_tolerance_fraction:.1%} of the SMP, whichever is larger); the \
uncovered part is the finding's geometry. A point SMP outside every easement fails with 0 sq ft \
and its distance to the nearest easement.</li>
<li><b>warn</b> for each SMP held only by easements not yet recorded (field <i>recorded</i> 0 or \
empty), naming them.</li>
<li><b>warn</b> for each SMP whose easements, directly or through touching easements, do not \
reach a <i>public_row</i> polygon, with the gap in feet; <b>needs_review</b> where the plan has no \
public right-of-way layer.</li>
</ul>
<p>Give the site plan as a GeoPackage (SITE) or as one layer per role (the *_LAYER parameters; \
SMP_LAYER, EASEMENT_LAYER and PUBLIC_ROW_LAYER matter here, with the project, site boundary and \
disturbance every site plan has). Outputs: the result as JSON, and the findings with their \
geometries as a GeoPackage. Figures shown are the default rules profile's ({p.name}).</p>"""


class EasementCoverageAlgorithm(SwpppAlgorithm):
    UNCOVERED_SQ_FT = "UNCOVERED_SQ_FT"

    def name(self):
        return "easement_coverage"

    def displayName(self):
        return self.tr("Maintenance easements over every SMP")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.add_inputs(reference=False, sheets=False)
        self.add_outputs(reports=False)
        self.addOutput(
            QgsProcessingOutputNumber(
                self.UNCOVERED_SQ_FT, self.tr("SMP area outside every easement (sq ft, all SMPs)")
            )
        )

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: it loads geopandas and shapely.
        from analysis.review import review_paths

        with self.analysis_run(parameters, context, feedback) as inputs:
            review = review_paths(
                inputs["site"],
                profile=inputs["profile"],
                rules=["easement_coverage"],
                progress=inputs["progress"].sub(0.0, REVIEW_PART),
            )
            results = self.write_results(review, parameters, context, inputs["progress"])
        results[self.UNCOVERED_SQ_FT] = sum(review.measurements["uncovered_smp_sq_ft"].values())
        return results
