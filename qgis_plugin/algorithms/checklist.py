"""``swppp:checklist``: the SWPPP contents checklist, filled in from the site plan."""

from qgis.core import QgsProcessingOutputNumber, QgsProcessingParameterFile

from analysis.profile import help_text

from .base import REVIEW_PART, SwpppAlgorithm, role_layers

__all__ = ["ChecklistAlgorithm", "CHECKLIST_ROLE_LAYERS", "add_confirmations_parameter", "CONFIRMATIONS"]

CONFIRMATIONS = "CONFIRMATIONS"
# docs/CONTRACT.md "SWPPP contents checklist": the optional layers, from the contract.
CHECKLIST_ROLE_LAYERS = role_layers("checklist")

HELP = """<p>Fills in the SWPPP contents checklist: every item the chapter requires of a SWPPP \
and its approval (SWPPP B(1)-(17), D(2)-(8), E, F, G, H; Maintenance and repair B, D; \
Inspections A(2), E(1), E(2)), each <i>provided</i> where the site plan shows it or the \
applicant's <i>submission</i> table names a document, <i>missing</i>, <i>not_applicable</i> (the \
D items when no condition applies) or <i>confirmed</i> by a reviewer (CONFIRMATIONS: the file \
the checklist tab writes, or a findings GeoPackage of an earlier review).</p>
<ul>
<li><b>swppp_contents</b>: fail naming each item required before approval that is missing.</li>
<li><b>contractor_certification</b> (SWPPP G): each record with every field of G(2), signed on \
or before its own work starts (its phase's first start date, else the first disturbance \
start date).</li>
<li><b>construction_guarantee</b>, <b>maintenance_bond</b> (Inspections E(1), E(2)): at least \
{p.guarantees.construction_years_after_acceptance} year(s) after final acceptance, and \
{p.guarantees.maintenance_years_after_completion} year(s) after substantial completion; the plan \
records neither date, so a fixed end date needs review unless the profile lets the last \
stabilisation date stand for them, and each is the security the chapter names.</li>
<li><b>esc_practices</b> (SWPPP B(7)-(11)): each practice with a stage, a size or length, and \
its implementation schedule.</li>
</ul>
<p>The full review (<i>swppp:review</i>) runs the same checks. Outputs: the result as JSON (its \
<i>checklist</i>), and the findings GeoPackage with the <i>checklist</i> table. Figures shown are \
the default rules profile's ({p.name}).</p>"""


def add_confirmations_parameter(algorithm):
    algorithm.addParameter(
        QgsProcessingParameterFile(
            CONFIRMATIONS,
            algorithm.tr("Reviewer's checklist confirmations (JSON, or an earlier findings GeoPackage)"),
            behavior=QgsProcessingParameterFile.Behavior.File,
            fileFilter="Confirmations (*.json *.JSON *.gpkg *.GPKG);;All files (*)",
            optional=True,
        )
    )


class ChecklistAlgorithm(SwpppAlgorithm):
    PROVIDED_ITEMS = "PROVIDED_ITEMS"
    MISSING_ITEMS = "MISSING_ITEMS"
    CONFIRMED_ITEMS = "CONFIRMED_ITEMS"
    ROLE_LAYERS = SwpppAlgorithm.ROLE_LAYERS + SwpppAlgorithm.HYDROLOGY_ROLE_LAYERS + CHECKLIST_ROLE_LAYERS

    def name(self):
        return "checklist"

    def displayName(self):
        return self.tr("SWPPP contents checklist")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def initAlgorithm(self, config=None):
        self.add_inputs(reference=True, sheets=False)
        add_confirmations_parameter(self)
        self.add_outputs(reports=False)
        for name, label in (
            (self.PROVIDED_ITEMS, "Items provided"),
            (self.MISSING_ITEMS, "Items missing"),
            (self.CONFIRMED_ITEMS, "Items confirmed by a reviewer"),
        ):
            self.addOutput(QgsProcessingOutputNumber(name, self.tr(label)))

    def processAlgorithm(self, parameters, context, feedback):
        # Imported on first run, not at QGIS start-up: it loads geopandas and shapely.
        from analysis.review import review_paths

        confirmations = self.parameterAsFile(parameters, CONFIRMATIONS, context) or None
        with self.analysis_run(parameters, context, feedback) as inputs:
            review = review_paths(
                inputs["site"],
                inputs["reference"],
                inputs["profile"],
                confirmations=confirmations,
                rules=["checklist"],
                progress=inputs["progress"].sub(0.0, REVIEW_PART),
            )
            results = self.write_results(review, parameters, context, inputs["progress"])
        for name, status in (
            (self.PROVIDED_ITEMS, "provided"),
            (self.MISSING_ITEMS, "missing"),
            (self.CONFIRMED_ITEMS, "confirmed"),
        ):
            results[name] = sum(e["status"] == status for e in review.checklist or ())
        return results
