"""``swppp:wetlands``: disturbance inside wetlands and regulated wetlands' adjacent areas."""

from qgis.core import QgsProcessingOutputNumber

from analysis.profile import help_text

from .reference_check import ReferenceCheckAlgorithm

__all__ = ["WetlandsAlgorithm"]

HELP = """<p>Wetlands (SWPPP B(2); SWPPP F): the acres of disturbance inside each wetland, and \
inside the adjacent area of each regulated wetland (its <i>adjacent_area_ft</i>, else the rules \
profile's default, {p.wetlands.default_adjacent_area_ft:g} ft) but outside any wetland. Where \
wetlands or adjacent areas overlap, ground is counted once. Any such disturbance is a warning \
that asks for SWPPP F's assurance: the applicant "shall assure that all other applicable \
environmental permits have been or will be acquired for the land development activity prior to \
approval of the final stormwater design plan". A permit may apply to a wetland the layer records \
as regulated; one it does not (an NWI wetland) may or may not be regulated, and no permit is \
claimed for it.</p>
<p>REFERENCE holds the reference layer <i>wetlands</i>, read only around the site; or choose it \
from the project (WETLANDS_LAYER, any provider): only its features near the site are copied for \
the check. The findings layer shows the disturbance inside each wetland and adjacent area. Figures \
shown are the default rules profile's ({p.name}).</p>"""


class WetlandsAlgorithm(ReferenceCheckAlgorithm):
    RULE = "wetlands"
    WETLAND_ACRES = "WETLAND_ACRES"
    WETLAND_ADJACENT_AREA_ACRES = "WETLAND_ADJACENT_AREA_ACRES"

    def displayName(self):
        return self.tr("Wetlands and adjacent areas")

    def shortHelpString(self):
        return help_text(self.tr(HELP))

    def add_check_outputs(self):
        self.addOutput(
            QgsProcessingOutputNumber(self.WETLAND_ACRES, self.tr("Disturbance inside wetlands (acres)"))
        )
        self.addOutput(
            QgsProcessingOutputNumber(
                self.WETLAND_ADJACENT_AREA_ACRES,
                self.tr("Disturbance inside regulated adjacent areas, not in a wetland (acres)"),
            )
        )

    def check_results(self, review):
        m = review.measurements
        return {
            self.WETLAND_ACRES: m["wetland_acres"],
            self.WETLAND_ADJACENT_AREA_ACRES: m["wetland_adjacent_area_acres"],
        }
