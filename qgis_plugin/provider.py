"""The ``swppp`` Processing provider: one line per algorithm."""

from qgis.core import QgsProcessingProvider

from .algorithms.base import plugin_icon
from .algorithms.checklist import ChecklistAlgorithm
from .algorithms.condition_a import ConditionAAlgorithm
from .algorithms.easement_coverage import EasementCoverageAlgorithm
from .algorithms.hydrology import HydrologyAlgorithm
from .algorithms.inspections import InspectionsAlgorithm
from .algorithms.letter import LetterAlgorithm
from .algorithms.map_scale import MapScaleAlgorithm
from .algorithms.nov import NoticeOfViolationAlgorithm
from .algorithms.phasing import PhasingAlgorithm
from .algorithms.reference_diff import ReferenceDiffAlgorithm
from .algorithms.reference_import import ReferenceImportAlgorithm
from .algorithms.review import ReviewAlgorithm
from .algorithms.screen import ScreenAlgorithm
from .algorithms.wetlands import WetlandsAlgorithm

__all__ = ["SwpppProvider"]


class SwpppProvider(QgsProcessingProvider):
    def id(self):
        return "swppp"

    def name(self):
        return "SWPPP Review"

    def icon(self):
        return plugin_icon()

    def versionInfo(self):
        from analysis import __version__

        return __version__

    def supportedOutputVectorLayerExtensions(self):
        # The analysis writes findings as a GeoPackage and nothing else.
        return ["gpkg"]

    def loadAlgorithms(self):
        self.addAlgorithm(ReviewAlgorithm())
        self.addAlgorithm(LetterAlgorithm())
        self.addAlgorithm(ConditionAAlgorithm())
        self.addAlgorithm(WetlandsAlgorithm())
        self.addAlgorithm(PhasingAlgorithm())
        self.addAlgorithm(EasementCoverageAlgorithm())
        self.addAlgorithm(ReferenceImportAlgorithm())
        self.addAlgorithm(ReferenceDiffAlgorithm())
        self.addAlgorithm(ScreenAlgorithm())
        self.addAlgorithm(HydrologyAlgorithm())
        self.addAlgorithm(InspectionsAlgorithm())
        self.addAlgorithm(NoticeOfViolationAlgorithm())
        self.addAlgorithm(MapScaleAlgorithm())
        self.addAlgorithm(ChecklistAlgorithm())
