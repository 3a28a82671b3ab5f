"""``swppp:condition_a``: does the site discharge to an impaired water or lie in a TMDL watershed?"""

from qgis.core import QgsProcessingOutputNumber, QgsProcessingOutputString

from .reference_check import ReferenceCheckAlgorithm

__all__ = ["ConditionAAlgorithm"]

HELP = """<p>Condition A of SWPPP C(1): stormwater runoff that discharges a pollutant of concern \
to a 303(d)-listed impaired water, or from a TMDL watershed where stormwater is a source of the \
impairment. The receiving waters are the discharge points' <i>waterbody_id</i>s and the waters \
named by the <i>drains_to</i> of the catchments the runoff flows through: the one each discharge \
point lies in (else those the disturbance lies in) and those downstream of it (at most the \
profile's downstream_catchment_hops); a receiving water named like a \
listed water is used with a warning. Pollutants of concern are the sediment family plus every \
pollutant impairing the receiving water, whatever their spelling (the rules profile's aliases).</p>
<p>REFERENCE holds the reference layers (impaired_waters, tmdl_watersheds, catchments); they \
are read only around the site and the catchments downstream of it. Or choose them from the \
project (IMPAIRED_WATERS_LAYER, \
TMDL_WATERSHEDS_LAYER, CATCHMENTS_LAYER: a GeoPackage, PostGIS or other layer with the \
contract's fields); only their features near the site are copied for the check, with the \
catchments downstream by <i>drains_to</i> and the TMDL watersheds around them. The findings \
layer shows the TMDL watersheds and catchments that make Condition A apply. Without reference \
layers, Condition A is reported as not decided.</p>"""


class ConditionAAlgorithm(ReferenceCheckAlgorithm):
    RULE = "condition_a"
    CONDITION_A_APPLIES = "CONDITION_A_APPLIES"
    CONDITION_A_DECIDED = "CONDITION_A_DECIDED"
    CONDITION_A_EVIDENCE = "CONDITION_A_EVIDENCE"

    def displayName(self):
        return self.tr("Condition A: impaired waters and TMDL watersheds")

    def shortHelpString(self):
        return self.tr(HELP)

    def add_check_outputs(self):
        self.addOutput(
            QgsProcessingOutputNumber(self.CONDITION_A_APPLIES, self.tr("Condition A applies (1) or not (0)"))
        )
        self.addOutput(
            QgsProcessingOutputNumber(
                self.CONDITION_A_DECIDED, self.tr("Condition A decided (1) or needs review (0)")
            )
        )
        self.addOutput(
            QgsProcessingOutputString(self.CONDITION_A_EVIDENCE, self.tr("Evidence, one piece per line"))
        )

    def check_results(self, review):
        a = review.conditions["A"]
        return {
            self.CONDITION_A_APPLIES: int(a.applies),
            self.CONDITION_A_DECIDED: int(a.decided),
            self.CONDITION_A_EVIDENCE: "\n".join(a.evidence),
        }
