"""The plugin object QGIS starts: registers the Processing provider, the panel and menu entries."""

import html
import os

from qgis.core import Qgis, QgsApplication, QgsMessageLog
from qgis.PyQt.QtCore import QCoreApplication
from qgis.PyQt.QtGui import QIcon

try:  # Qt 6 (QGIS 4) has QAction in QtGui, Qt 5 in QtWidgets
    from qgis.PyQt.QtGui import QAction
except ImportError:
    from qgis.PyQt.QtWidgets import QAction

from . import PLUGIN_DIR, use_bundled_analysis

__all__ = ["SwpppReviewPlugin", "startup_check", "startup_problem"]

TITLE = "SWPPP Review"
REVIEW_ALGORITHM = "swppp:review"


def tr(text):
    return QCoreApplication.translate("SwpppReview", text)


def startup_problem(gui=False):
    """Say why the plugin cannot run in this QGIS, or return None when it can.

    Imports only the light top of ``analysis`` (never shapely or geopandas), so a missing or
    too old dependency gives this message, not a traceback. ``gui``: the message is for the
    message bar beside an "Install…" button, not the log of qgis_process.
    """
    return startup_check(gui)[0]


def startup_check(gui=False):
    """``(message, offer)``: why the plugin cannot run here (None when it can), and the install
    it offers for that (a dict of ``specs``, ``folder``, ``python``, ``host``), or None."""
    conflict = use_bundled_analysis()
    if conflict:
        return conflict, None
    from analysis.dependencies import needs

    from . import dependency_installer as installer

    # Before asking: what the installer put in this profile comes first on the path.
    installer.use_dependency_folder()
    # QGIS links GEOS itself: shapely must not be built for a newer GEOS than this QGIS's.
    host = installer.host_geos()
    return installer.describe(needs(host_geos=host), host, gui)


class SwpppReviewPlugin:
    """Registers the ``swppp`` Processing provider; with a QGIS window, the panel and menu entries."""

    def __init__(self, iface):
        self.iface = iface
        self.provider = None
        self.action = None
        self.panel_action = None
        self.panel = None  # the dock panel, made the first time it is shown
        self.problem = None  # why the plugin cannot run here, once checked
        self.offer = None  # the install of missing dependencies offered for it, if any
        self._checked = False
        # The message bar item with the "Install…" button, kept (with its handler) for as long
        # as it is shown: dropped, its Python handler was freed and a click crashed QGIS 3.22.
        self.install_offer = None

    def _problem_once(self):
        """The startup problem, shown to the user the first time it is asked for."""
        if not self._checked:
            self._checked = True
            self.problem, self.offer = startup_check(gui=self.iface is not None)
            if self.problem:
                self._show(self.problem, self.offer)
        return self.problem

    def _show(self, message, offer=None):
        """``message`` in the message bar (with an "Install…" button for ``offer``), or in the
        log under qgis_process."""
        if self.iface is None:
            QgsMessageLog.logMessage(message, TITLE, Qgis.MessageLevel.Critical)
        elif offer:
            from .dependency_installer import message_with_install_button

            self.install_offer = message_with_install_button(
                self.iface.messageBar(), message, plugin_dir=PLUGIN_DIR, **offer
            )
        else:
            # The message bar shows HTML; the message holds "<" ("shapely>=2,<2.1") and paths.
            self.iface.messageBar().pushMessage(
                TITLE, html.escape(message), level=Qgis.MessageLevel.Critical, duration=0
            )

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
        icon = QIcon(os.path.join(PLUGIN_DIR, "icon.svg"))
        # The panel is the main entry (menu and toolbar); the Processing dialog stays in the menu.
        self.panel_action = QAction(icon, tr("SWPPP Review panel"), self.iface.mainWindow())
        self.panel_action.setObjectName("swpppReviewPanelAction")
        self.panel_action.setCheckable(True)
        self.panel_action.toggled.connect(self.show_panel)
        self.iface.addPluginToMenu(tr("&SWPPP Review"), self.panel_action)
        self.iface.addToolBarIcon(self.panel_action)
        self.action = QAction(icon, tr("Review site plan (Processing dialog)…"), self.iface.mainWindow())
        self.action.setObjectName("swpppReviewAction")
        self.action.triggered.connect(self.open_review_dialog)
        self.iface.addPluginToMenu(tr("&SWPPP Review"), self.action)

    def show_panel(self, visible=True):
        """Show (creating it the first time) or hide the SWPPP Review dock panel."""
        if self.panel is None:
            if not visible:
                return
            # Imported on first use: the panel reads the site-plan contract (geopandas).
            from qgis.PyQt.QtCore import Qt

            from .panel import ReviewPanel

            self.panel = ReviewPanel(self.iface, self.iface.mainWindow())
            self.iface.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, self.panel)
            self.panel.visibilityChanged.connect(self._panel_visibility)
        self.panel.setVisible(visible)
        if visible:
            self.panel.raise_()

    def _panel_visibility(self, visible):
        if self.panel_action is not None and self.panel_action.isChecked() != visible:
            self.panel_action.setChecked(visible)

    def open_review_dialog(self):
        import processing

        processing.execAlgorithmDialog(REVIEW_ALGORITHM)

    def unload(self):
        """Everything initGui and the start-up check made is undone: every connection
        disconnected, every widget removed, so that a reload leaves nothing behind."""
        if self.install_offer is not None:
            self.install_offer.close()
            self.install_offer = None
        if self.panel is not None:
            self.panel.visibilityChanged.disconnect(self._panel_visibility)
            self.panel.unload()
            self.iface.removeDockWidget(self.panel)
            self.panel.deleteLater()
            self.panel = None
        if self.panel_action is not None:
            self.panel_action.toggled.disconnect(self.show_panel)
            self.iface.removePluginMenu(tr("&SWPPP Review"), self.panel_action)
            self.iface.removeToolBarIcon(self.panel_action)
            self.panel_action.deleteLater()
            self.panel_action = None
        if self.action is not None:
            self.action.triggered.disconnect(self.open_review_dialog)
            self.iface.removePluginMenu(tr("&SWPPP Review"), self.action)
            self.action.deleteLater()
            self.action = None
        if self.provider is not None:
            QgsApplication.processingRegistry().removeProvider(self.provider)
            self.provider = None
