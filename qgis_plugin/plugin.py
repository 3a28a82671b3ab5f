"""The plugin object QGIS starts: registers the Processing provider and the menu entry."""
import os

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtGui import QIcon
from qgis.PyQt.QtWidgets import QAction

from . import PLUGIN_DIR, use_bundled_analysis

__all__ = ["SwpppReviewPlugin", "startup_problem"]

TITLE = "SWPPP Review"
REVIEW_ALGORITHM = "swppp:review"


def tr(text):
    return QCoreApplication.translate("SwpppReview", text)


def startup_problem():
    """Say why the plugin cannot run in this QGIS, or return None when it can.

    Imports only the light top of ``analysis`` (never shapely or geopandas), so a missing or
    too old dependency gives this message, not a traceback.
    """
    conflict = use_bundled_analysis()
    if conflict:
        return conflict
    from analysis.dependencies import missing

    # QGIS links GEOS itself: shapely must not be built for a newer GEOS than this QGIS's.
    needed = missing(host_geos=(Qgis.geosVersionMajor(), Qgis.geosVersionMinor()))
    if not needed:
        return None
    return (tr("SWPPP Review needs {needed}. Install it in the Python environment QGIS runs "
               "(OSGeo4W Shell on Windows; pip or your distribution's packages elsewhere), "
               "then restart QGIS.").format(needed="; ".join(needed)))


class SwpppReviewPlugin:
    """Registers the ``swppp`` Processing provider; with a QGIS window, adds a menu entry too."""

    def __init__(self, iface):
        self.iface = iface
        self.provider = None
        self.action = None
        self.problem = None  # why the plugin cannot run here, once checked
        self._checked = False

    def _problem_once(self):
        """The startup problem, shown to the user the first time it is asked for."""
        if not self._checked:
            self._checked = True
            self.problem = startup_problem()
            if self.problem:
                self._show(self.problem)
        return self.problem

    def _show(self, message):
        if self.iface is not None:
            self.iface.messageBar().pushMessage(TITLE, message, level=Qgis.Critical, duration=0)
        else:
            QgsMessageLog.logMessage(message, TITLE, Qgis.Critical)

    def initProcessing(self):
        if self.provider is not None or self._problem_once():
            return
        # Imported here: the provider imports analysis modules that need the dependencies.
        from .provider import SwpppProvider

        self.provider = SwpppProvider()
        QgsApplication.processingRegistry().addProvider(self.provider)

    def initGui(self):
        self.initProcessing()
        if self.iface is None or self.provider is None:
            return
        self.action = QAction(QIcon(os.path.join(PLUGIN_DIR, "icon.svg")),
                              tr("Review site plan…"), self.iface.mainWindow())
        self.action.setObjectName("swpppReviewAction")
        self.action.triggered.connect(self.open_review_dialog)
        self.iface.addPluginToMenu(tr("&SWPPP Review"), self.action)

    def open_review_dialog(self):
        import processing

        processing.execAlgorithmDialog(REVIEW_ALGORITHM)

    def unload(self):
        if self.action is not None:
            self.iface.removePluginMenu(tr("&SWPPP Review"), self.action)
            self.action.deleteLater()
            self.action = None
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
