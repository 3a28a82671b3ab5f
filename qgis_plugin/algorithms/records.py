"""What the construction-phase record algorithms share: file inputs, no site-plan layers."""

from qgis.core import QgsProcessingAlgorithm

from .base import SwpppAlgorithm

__all__ = ["RecordsAlgorithm"]

CSV_FILTER = "CSV files (*.csv *.CSV);;All files (*)"


class RecordsAlgorithm(SwpppAlgorithm):
    """Base of ``swppp:inspections`` and ``swppp:nov``: records are files, a site plan optional."""

    def group(self):
        return self.tr("Construction records")

    def groupId(self):
        return "records"

    def checkParameterValues(self, parameters, context):
        # Not the site-plan checks of SwpppAlgorithm: a records run needs no site plan.
        return QgsProcessingAlgorithm.checkParameterValues(self, parameters, context)

    def prepareAlgorithm(self, parameters, context, feedback):
        self._site_path = None
        if self.parameterDefinition(self.SITE) is not None:
            self._site_path = self.parameterAsFile(parameters, self.SITE, context) or None
        return True
