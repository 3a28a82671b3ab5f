"""The "SWPPP Review" dock panel: choose the plan, run the review in the background, read the findings.

The run goes through ``swppp:review`` as a ``QgsProcessingAlgRunnerTask`` in QGIS's task
manager, so QGIS stays responsive; the panel shows its progress and can cancel it. The findings
appear as a list (status icon, rule, section, message, wrapped at the dock's width; the whole
finding in a tooltip and in the detail pane below the list); choosing one selects and zooms to
its features in the result layers, which load as one styled group, the plan's and the
reference's layers (from their GeoPackages) under them as context. The run writes the report
as HTML and as PDF (a QGIS print layout), each opened by its button; the layout itself opens in
QGIS's layout designer, added to the project's layouts, for editing.

The panel is a ``QTabWidget`` (Review, Findings): further tabs (the checklist) are added with
:meth:`ReviewPanel.add_tab`.
"""

import contextlib
import html
import json
import os
import time
from typing import Any, ClassVar, Optional

from qgis.core import (
    Qgis,
    QgsApplication,
    QgsProcessingAlgRunnerTask,
    QgsProcessingContext,
    QgsProcessingFeedback,
    QgsProcessingUtils,
    QgsProject,
)
from qgis.gui import QgsCollapsibleGroupBox, QgsFileWidget
from qgis.PyQt.QtCore import QCoreApplication, QRect, QSize, Qt, QUrl, pyqtSignal
from qgis.PyQt.QtGui import QColor, QDesktopServices, QIcon, QPainter, QPixmap
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QButtonGroup,
    QCheckBox,
    QComboBox,
    QDockWidget,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QProgressBar,
    QPushButton,
    QRadioButton,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTabWidget,
    QTextBrowser,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from analysis.findings import FAIL, NEEDS_REVIEW, REPORT_ORDER, STATUS_COLOURS, WARN, sorted_findings
from analysis.markup import escape_shown, shown_lines
from analysis.profile import DEFAULT_PROFILE, available_profiles

from .checklist_tab import ChecklistTab
from .panel_mapping import PROJECT_SCOPE, REFERENCE_MAPPING_KEY, RoleMappingWidget, role_specs
from .panel_rounds import (
    LETTER_ALGORITHM,
    change_text,
    change_tooltip,
    comparison_groups,
    letter_paths,
    recorded_rounds,
)
from .result_layers import (
    feature_selection,
    finding_selection,
    load_context_layers,
    load_result_layers,
    select_and_zoom,
)

__all__ = ["ReviewPanel", "PanelFeedback", "status_icon", "rich_tooltip", "REVIEW_ALGORITHM", "RESULT_GROUP"]

REVIEW_ALGORITHM = "swppp:review"
RESULT_GROUP = "SWPPP Review results"
NEEDS_ACTION = (FAIL, WARN, NEEDS_REVIEW)  # what "only what needs action" keeps in the list
FINDING_ROLE = Qt.ItemDataRole.UserRole  # the finding's dict, on its tree item
INDEX_ROLE = Qt.ItemDataRole.UserRole + 1  # its position in the review (its ``finding`` number - 1)
CHANGE_ROLE = Qt.ItemDataRole.UserRole  # a compared finding's dict, on its row of the Changes list
# The list's one column: each finding's status (word and icon), rule and section on its first
# line, its message wrapped below, so that the message has the dock's width (a column of its
# own beside status and rule was a few characters wide at the dock's default width).
# Then the reviewer's decision on it (issue 35): accept, override or resolved, with its reason
# and who, or "carried from round N"; none by default.
COLUMNS = ("Finding", "Decision")
# analysis.rounds.decisions.RECORDED ("": none chosen); withdraw takes the decision back.
DECISION_CHOICES = ("", "accept", "override", "resolved", "withdraw")
# The width the panel asks for (its size hint). QGIS's main window may give a new dock less
# (about 370 px under Xvfb at 1600 px wide, scripts/qgis_screenshot.sh): the rows wrap to
# whatever it gets.
DOCK_WIDTH = 440
DECISION_WIDTH = 130  # the decision column's width at first (the finding's column has the rest)
# Panel settings kept in the project beside the layer mapping (panel_mapping.MAPPING_KEY).
_SETTINGS = ("source", "site", "reference", "sheets", "profile", "output_folder", "review_file")
# The reason field of an override refused without one.
_MISSING_REASON_STYLE = "QLineEdit { border: 2px solid #c62828; background: #ffebee; }"


def rich_tooltip(text):
    """``text`` as a tooltip Qt wraps (rich text wraps; a plain one is one line as wide as the
    text): escaped, so nothing in it is read as markup."""
    return f"<p>{html.escape(text)}</p>" if text else ""


def finding_row(finding):
    """A finding as its row in the list: status, rule and section, then the message; the
    characters not seen (a bidirectional override in a name) shown as their escapes
    (:func:`analysis.markup.shown_lines`, the rule of the terminal and the report)."""
    return shown_lines(
        f"{finding.get('status', '').replace('_', ' ')} \u00b7 {finding.get('rule', '')} "
        f"\u00b7 {finding.get('section', '')}\n{finding.get('message', '')}"
    )


def finding_text(finding):
    """A finding whole, as the detail pane shows it (plain text)."""
    lines = [
        f"{finding.get('status', '').replace('_', ' ')}: {finding.get('rule', '')} "
        f"[{finding.get('section', '')}]",
        "",
        finding.get("message", ""),
    ]
    if finding.get("features"):
        lines += ["", "Features: " + ", ".join(finding["features"])]
    if finding.get("due"):
        lines += ["", "Due: " + finding["due"].replace("_", " ")]
    return shown_lines("\n".join(lines))


def decision_of(finding):
    """The finding's latest decision in its round (the result JSON's ``round.decision``), or None."""
    return (finding.get("round") or {}).get("decision")


def decision_cell(finding):
    """The decision column's text: the decision, "carried from round N", its reason and who
    (plain text, characters not seen shown as their escapes); "" when undecided."""
    d = decision_of(finding)
    if not d:
        return ""
    lines = [d.get("decision", "")]
    if d.get("carried_from"):
        lines[0] += f" (carried from round {d['carried_from']})"
    if d.get("reason"):
        lines.append(d["reason"])
    if d.get("reviewer"):
        lines.append(f"by {d['reviewer']}")
    return shown_lines("\n".join(lines))


def decision_html(finding):
    """The decision as the detail pane's rich text: every name and reason escaped
    (:func:`analysis.markup.escape_shown`)."""
    d = decision_of(finding)
    if not d:
        return ""
    carried = f" (carried from round {int(d['carried_from'])})" if d.get("carried_from") else ""
    reason = f": {escape_shown(d['reason'])}" if d.get("reason") else ""
    return (
        f"<p><b>Decision: {escape_shown(d.get('decision'))}</b>{carried} by "
        f"{escape_shown(d.get('reviewer'))}{reason}</p>"
    )


def status_icon(status, size=14):
    """A filled circle in the status's colour (the report's and the findings layer's palette)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(QColor(STATUS_COLOURS.get(status, "#9e9e9e")))
    painter.setPen(Qt.PenStyle.NoPen)
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pixmap)


class _WrappedRows(QStyledItemDelegate):
    """Rows as tall as their text wrapped at the column's width (QTreeView alone does not
    measure wrapped text: it would cut long messages at two lines)."""

    def __init__(self, tree):
        super().__init__(tree)
        self._tree = tree

    def sizeHint(self, option, index):
        hint = super().sizeHint(option, index)
        # Qt's own measure of a wrapped cell (the style's, as it draws it), given what the view
        # leaves out: the column's width and the wrapping. A few pixels narrower than the column,
        # so that a line short here never elides the message's end.
        cell = QStyleOptionViewItem(option)
        self.initStyleOption(cell, index)
        # A child row is indented by the tree (the Changes list's findings under their group).
        depth, parent = 0, index.parent()
        while parent.isValid():
            depth, parent = depth + 1, parent.parent()
        indent = self._tree.indentation() * (depth + (1 if self._tree.rootIsDecorated() else 0))
        width = self._tree.header().sectionSize(index.column()) - 6 - (indent if index.column() == 0 else 0)
        cell.rect = QRect(0, 0, width, 100000)
        cell.features |= QStyleOptionViewItem.ViewItemFeature.WrapText
        needed = self._tree.style().sizeFromContents(
            QStyle.ContentsType.CT_ItemViewItem, cell, QSize(), self._tree
        )
        return QSize(hint.width(), max(hint.height(), needed.height() + 4))


class _Tabs(QTabWidget):
    """The panel's tabs, asking for ``DOCK_WIDTH`` when the dock is first laid out."""

    def sizeHint(self):
        hint = super().sizeHint()
        return QSize(max(hint.width(), DOCK_WIDTH), hint.height())


def _file_name(path):
    """The review file as the panel names it: a GeoPackage's file name, or a PostgreSQL
    schema and its connection without a password."""
    from analysis.rounds.reviewfile import review_file_name

    return review_file_name(path)


class PanelFeedback(QgsProcessingFeedback):
    """Processing feedback whose messages and errors reach the panel (queued to its thread)."""

    message = pyqtSignal(str)
    reviewed = pyqtSignal(object)  # the review's JSON (a dict), before its reports are written

    def __init__(self):
        super().__init__()
        self.errors = []

    def review_ready(self, result):
        """Told by swppp:review (from the task's thread) once the review is made."""
        self.reviewed.emit(result)

    def pushInfo(self, info):
        super().pushInfo(info)
        self.message.emit(info)

    def reportError(self, error, fatalError=False):  # noqa: N803 - QGIS's names
        super().reportError(error, fatalError)
        self.errors.append(error)


class ReviewPanel(QDockWidget):
    """The dock panel. ``finished`` is emitted after each run (True when it produced results)."""

    finished = pyqtSignal(bool)

    def __init__(self, iface, parent=None):
        super().__init__(QCoreApplication.translate("ReviewPanel", "SWPPP Review"), parent)
        self.setObjectName("SwpppReviewPanel")
        self.iface = iface
        # (task, context, feedback) while a review runs: kept alive here
        self._run: Optional[tuple[Any, Any, Any]] = None
        self.findings = []
        self.result_shown = {}  # the result JSON the list shows
        self._previewed = False  # the run going on has shown its findings (before its reports)
        self.result = None  # the last run's result JSON (dict)
        self.result_paths = {}
        self.result_layers = {}
        self.context_layers = {}
        # The files the plan's and the reference's context layers load from after a run.
        self._context_files = {}
        self._restoring = False
        self._cancelled = False
        self._run_round_file = None  # the review file of the run going on
        self.round_file = None  # the review file the last run's round was recorded in
        self._compared_round = None  # the round the Changes list compares with
        self._run_profile = DEFAULT_PROFILE  # the rules profile of the run going on, or the last
        # Opens a written report or letter in the desktop's viewer (a test puts a recorder here).
        self.open_url = QDesktopServices.openUrl
        # Callables ``provider(folder) -> dict`` adding parameters to each run (the checklist's
        # CONFIRMATIONS file, written into the run's folder); see :meth:`add_tab`.
        self.parameter_providers = []
        from .algorithms.review import ReviewAlgorithm

        # Layers leaving the project (or a new project) empty the combo boxes: no choice of the
        # user's, so not saved. Connected before the combo boxes exist, so these run before
        # the combo boxes' own models drop the layers.
        project = QgsProject.instance()
        project.layersWillBeRemoved.connect(self._suspend_saving)
        project.layersRemoved.connect(self._resume_saving)
        self.tabs = _Tabs(self)
        self.tabs.setObjectName("swpppTabs")
        self.setWidget(self.tabs)
        self.mapping = RoleMappingWidget(role_specs(ReviewAlgorithm))
        self.reference_mapping = RoleMappingWidget(
            role_specs(ReviewAlgorithm, reference=True),
            key=REFERENCE_MAPPING_KEY,
            hint=self.tr(
                "Or choose reference layers of this project (any provider: "
                "GeoPackage, PostGIS, ...) instead of the reference file above; only "
                "their features near the site are read."
            ),
        )
        self.tabs.addTab(self._review_tab(), self.tr("Review"))
        self.tabs.addTab(self._findings_tab(), self.tr("Findings"))
        self.checklist = ChecklistTab()
        self.add_tab(self.checklist, self.tr("Checklist"), parameters=self._confirmations)
        self.checklist.confirmationsChanged.connect(self._save_confirmations)
        self.checklist.reviewer.editingFinished.connect(self._save_confirmations)
        self.mapping.changed.connect(self.save_to_project)
        self.reference_mapping.changed.connect(self.save_to_project)
        self.load_from_project()
        project.readProject.connect(self._project_read)
        project.cleared.connect(self._project_read)

    # Building the tabs --------------------------------------------------------------------
    def add_tab(self, widget, title, parameters=None):
        """Add a tab (the checklist) after Review and Findings; returns its index.

        ``parameters`` (optional), ``callable(folder) -> dict``, adds the tab's parameters to
        every run; ``folder`` is the run's results folder (it exists when called).
        """
        if parameters is not None:
            self.parameter_providers.append(parameters)
        return self.tabs.addTab(widget, title)

    def _review_tab(self):
        tab = QWidget()
        layout = QVBoxLayout(tab)
        source = QHBoxLayout()
        self.from_file = QRadioButton(self.tr("Site plan GeoPackage"))
        self.from_layers = QRadioButton(self.tr("Layers of this project"))
        self.from_file.setChecked(True)
        group = QButtonGroup(tab)
        group.addButton(self.from_file)
        group.addButton(self.from_layers)
        source.addWidget(self.from_file)
        source.addWidget(self.from_layers)
        layout.addLayout(source)

        self.source_stack = QStackedWidget()
        file_page = QWidget()
        file_form = QFormLayout(file_page)
        self.site_file = QgsFileWidget()
        self.site_file.setObjectName("siteFile")
        self.site_file.setFilter(self.tr("GeoPackage (*.gpkg *.GPKG)"))
        file_form.addRow(self.tr("Site plan"), self.site_file)
        self.source_stack.addWidget(file_page)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(self.mapping)
        self.source_stack.addWidget(scroll)
        layout.addWidget(self.source_stack, 1)
        self.from_file.toggled.connect(self._source_changed)

        form = QFormLayout()
        self.reference = QgsFileWidget()
        self.reference.setObjectName("referenceFile")
        self.reference.setFilter(self.tr("GeoPackage (*.gpkg *.GPKG)"))
        self.reference.setToolTip(
            self.tr(
                "Wetlands, impaired waters, TMDL watersheds, catchments: "
                "a GeoPackage, or type a PostGIS connection "
                "(service=NAME or postgresql://...)"
            )
        )
        form.addRow(self.tr("Reference layers"), self.reference)
        reference_box = QgsCollapsibleGroupBox(self.tr("Reference layers of this project"))
        reference_box.setObjectName("referenceLayers")
        reference_box.setCollapsed(True)
        QVBoxLayout(reference_box).addWidget(self.reference_mapping)
        form.addRow(reference_box)
        self.sheets = QgsFileWidget()
        self.sheets.setObjectName("sheetFiles")
        self.sheets.setStorageMode(QgsFileWidget.StorageMode.GetMultipleFiles)
        self.sheets.setFilter(self.tr("Plan sheets (*.tif *.tiff *.pdf *.TIF *.TIFF *.PDF)"))
        self.sheets.setToolTip(
            self.tr("Georeferenced GeoTIFF or GeoPDF plan sheets, for the site map scale (SWPPP B(2))")
        )
        form.addRow(self.tr("Plan sheets"), self.sheets)
        self.profile = QComboBox()
        self.profile.setObjectName("profile")
        self.profile.setEditable(True)
        self.profile.addItems(available_profiles() or [DEFAULT_PROFILE])
        self.profile.setCurrentText(DEFAULT_PROFILE)
        self.profile.setToolTip(self.tr("A shipped profile's name, or the path of a TOML profile"))
        form.addRow(self.tr("Rules profile"), self.profile)
        self.output_folder = QgsFileWidget()
        self.output_folder.setObjectName("outputFolder")
        self.output_folder.setStorageMode(QgsFileWidget.StorageMode.GetDirectory)
        self.output_folder.lineEdit().setPlaceholderText(self.tr("(a temporary folder)"))
        form.addRow(self.tr("Save results in"), self.output_folder)
        self.review_file = QgsFileWidget()
        self.review_file.setObjectName("reviewFile")
        self.review_file.setStorageMode(QgsFileWidget.StorageMode.SaveFile)
        self.review_file.setConfirmOverwrite(False)  # an existing review file gets the next round
        self.review_file.setFilter(self.tr("GeoPackage (*.gpkg *.GPKG)"))
        self.review_file.lineEdit().setPlaceholderText(self.tr("(none: no round recorded)"))
        self.review_file.setToolTip(
            self.tr(
                "The project's review file (a GeoPackage, made where none is yet; or, typed, a "
                "PostgreSQL schema: postgresql://HOST/DB?schema=NAME): each run is recorded as "
                "its next round, the decisions of the round before carried"
            )
        )
        form.addRow(self.tr("Review file"), self.review_file)
        self.compare_to = QComboBox()
        self.compare_to.setObjectName("compareTo")
        form.addRow(self.tr("Compare to round"), self.compare_to)
        self.review_file.fileChanged.connect(self.refresh_rounds)
        self.refresh_rounds()
        layout.addLayout(form)
        for widget in (self.site_file, self.reference, self.sheets, self.output_folder, self.review_file):
            widget.fileChanged.connect(self.save_to_project)
        self.profile.currentTextChanged.connect(self.save_to_project)

        buttons = QHBoxLayout()
        self.run_button = QPushButton(self.tr("Run review"))
        self.run_button.setObjectName("runButton")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton(self.tr("Cancel"))
        self.cancel_button.setObjectName("cancelButton")
        self.cancel_button.setEnabled(False)
        self.cancel_button.clicked.connect(self.cancel)
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        layout.addLayout(buttons)
        self.progress = QProgressBar()
        self.progress.setRange(0, 100)
        self.progress.setValue(0)
        layout.addWidget(self.progress)
        self.status = QLabel(self.tr("Choose the site plan, then Run review."))
        self.status.setObjectName("statusLabel")
        self.status.setWordWrap(True)
        self.status.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(self.status)
        return tab

    def _findings_tab(self):
        tab = QWidget()
        layout = QVBoxLayout(tab)
        self.summary = QLabel(self.tr("No review yet."))
        self.summary.setObjectName("summaryLabel")
        self.summary.setWordWrap(True)
        layout.addWidget(self.summary)
        self.action_only = QCheckBox(self.tr("Only what needs action (fail, warn, needs review)"))
        self.action_only.setObjectName("actionOnly")
        self.action_only.toggled.connect(self._filter_findings)
        layout.addWidget(self.action_only)
        self.tree = QTreeWidget()
        self.tree.setObjectName("findingsTree")
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels([self.tr(c) for c in COLUMNS])
        self.tree.setRootIsDecorated(False)
        self.tree.setAlternatingRowColors(True)
        self.tree.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.tree.setWordWrap(True)  # long messages wrap inside their column
        self.tree.setItemDelegate(_WrappedRows(self.tree))
        self.tree.setUniformRowHeights(False)
        self.tree.setIconSize(QSize(14, 14))
        self.tree.setTextElideMode(Qt.TextElideMode.ElideNone)
        # Always there: a scroll bar appearing after the rows were measured would narrow the
        # message column under them.
        self.tree.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        header = self.tree.header()
        # The finding takes the width; the decision column (shown once a round is recorded,
        # hidden otherwise) a fixed share of it, resizable.
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(1, DECISION_WIDTH)
        self.tree.setColumnHidden(1, True)
        # Rows are as tall as their wrapped text at the column's current width.
        header.sectionResized.connect(lambda *_: self.tree.doItemsLayout())
        self.tree.itemSelectionChanged.connect(self._finding_chosen)
        # The chosen finding whole, wrapped at the dock's width, below the list (drag to share).
        self.detail = QTextBrowser()
        self.detail.setObjectName("findingDetail")
        self.detail.setPlaceholderText(self.tr("Choose a finding to read it whole here."))
        split = QSplitter(Qt.Orientation.Vertical)
        split.setObjectName("findingsSplit")
        split.addWidget(self.tree)
        split.addWidget(self._changes_box())
        split.addWidget(self.detail)
        split.setCollapsible(0, False)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 2)
        split.setStretchFactor(2, 1)
        layout.addWidget(split, 1)
        # The reviewer's decision on the chosen finding, appended to the round at once.
        decide = QHBoxLayout()
        self.decision = QComboBox()
        self.decision.setObjectName("decisionChoice")
        for value in DECISION_CHOICES:
            self.decision.addItem(value or self.tr("(no decision)"), value)
        self.decision.setToolTip(
            self.tr(
                "accept the finding, override it (a reason is required), or mark it resolved; "
                "withdraw takes the decision back (the finding is undecided again, the earlier "
                "decision kept in the review file's history)"
            )
        )
        self.reason = QLineEdit()
        self.reason.setObjectName("decisionReason")
        self.reason.setPlaceholderText(self.tr("Reason (required for override)"))
        self.reason.textEdited.connect(lambda *_: self.reason.setStyleSheet(""))
        self.save_decision_button = QPushButton(self.tr("Save decision"))
        self.save_decision_button.setObjectName("saveDecision")
        self.save_decision_button.clicked.connect(self.save_decision)
        decide.addWidget(self.decision)
        decide.addWidget(self.reason, 1)
        decide.addWidget(self.save_decision_button)
        layout.addLayout(decide)
        self.decision_note = QLabel()
        self.decision_note.setObjectName("decisionNote")
        self.decision_note.setWordWrap(True)
        layout.addWidget(self.decision_note)
        self._decision_enabled(False)
        reports = QHBoxLayout()
        self.open_report = QPushButton(self.tr("Open the HTML report"))
        self.open_report.setObjectName("openReport")
        self.open_report.setEnabled(False)
        self.open_report.clicked.connect(lambda: self._open("OUTPUT_HTML"))
        self.open_pdf = QPushButton(self.tr("Open the PDF report"))
        self.open_pdf.setObjectName("openPdf")
        self.open_pdf.setEnabled(False)
        self.open_pdf.clicked.connect(lambda: self._open("OUTPUT_PDF"))
        reports.addWidget(self.open_report)
        reports.addWidget(self.open_pdf)
        layout.addLayout(reports)
        letter = QHBoxLayout()
        self.letter_button = QPushButton(self.tr("Comment letter…"))
        self.letter_button.setObjectName("commentLetter")
        self.letter_button.clicked.connect(lambda: self.write_letter())
        letter.addWidget(self.letter_button)
        self.letter_note = QLabel()
        self.letter_note.setObjectName("letterNote")
        self.letter_note.setWordWrap(True)
        letter.addWidget(self.letter_note, 1)
        layout.addLayout(letter)
        self._letter_enabled()
        self.edit_layout = QPushButton(self.tr("Edit the report layout"))
        self.edit_layout.setObjectName("editLayout")
        self.edit_layout.setToolTip(
            self.tr(
                "The PDF's print layout, added to this project's layouts and opened in the layout designer"
            )
        )
        self.edit_layout.setEnabled(False)
        self.edit_layout.clicked.connect(self.open_layout)
        layout.addWidget(self.edit_layout)
        return tab

    def _source_changed(self, from_file):
        self.source_stack.setCurrentIndex(0 if from_file else 1)
        self.save_to_project()

    # Settings kept in the project ---------------------------------------------------------
    def settings(self):
        return {
            "source": "file" if self.from_file.isChecked() else "layers",
            "site": self.site_file.filePath(),
            "reference": self.reference.filePath(),
            "sheets": self.sheets.filePath(),
            "profile": self.profile.currentText(),
            "output_folder": self.output_folder.filePath(),
            "review_file": self.review_file.filePath(),
        }

    def save_to_project(self, *_args):
        """Write the panel's choices and the layer mapping into the current project."""
        if self._restoring:
            return
        project = QgsProject.instance()
        for key, value in self.settings().items():
            project.writeEntry(PROJECT_SCOPE, key, value)
        self.mapping.save_to_project(project)
        self.reference_mapping.save_to_project(project)

    def load_from_project(self):
        """Restore the choices and the layer mapping saved in the current project (if any)."""
        project = QgsProject.instance()
        self._restoring = True
        try:
            values = {key: project.readEntry(PROJECT_SCOPE, key, "") for key in _SETTINGS}
            values = {key: text for key, (text, found) in values.items() if found}
            (self.from_layers if values.get("source") == "layers" else self.from_file).setChecked(True)
            self.source_stack.setCurrentIndex(1 if values.get("source") == "layers" else 0)
            self.site_file.setFilePath(values.get("site", ""))
            self.reference.setFilePath(values.get("reference", ""))
            self.sheets.setFilePath(values.get("sheets", ""))
            self.profile.setCurrentText(values.get("profile") or DEFAULT_PROFILE)
            self.output_folder.setFilePath(values.get("output_folder", ""))
            self.review_file.setFilePath(values.get("review_file", ""))
            self.mapping.load_from_project(project)
            self.reference_mapping.load_from_project(project)
            try:
                self.checklist.load_from_project(project)
            except ValueError as err:  # a hand-edited project (InputError) must not stop the panel opening
                self._say(str(err), Qgis.MessageLevel.Warning)
        finally:
            self._restoring = False

    def _project_read(self, *_args):
        self.load_from_project()

    def _suspend_saving(self, *_args):
        self._restoring = True

    def _resume_saving(self, *_args):
        self._restoring = False

    def _save_confirmations(self, *_args):
        if not self._restoring:
            self.checklist.save_to_project(QgsProject.instance())

    def _confirmations(self, folder):
        """The reviewer's ticks as swppp:review's CONFIRMATIONS file (none ticked: nothing)."""
        if not self.checklist.confirmations():
            return {}
        path = os.path.join(folder, "confirmations.json")
        return {"CONFIRMATIONS": self.checklist.write_confirmations_file(path)}

    # Running ------------------------------------------------------------------------------
    def parameters(self, folder):
        """``swppp:review``'s parameters from the panel; ValueError says what is missing."""
        params = {}
        if self.from_file.isChecked():
            site = self.site_file.filePath().strip()
            if not site:
                raise ValueError(self.tr("Choose the site plan GeoPackage."))
            params["SITE"] = site
        else:
            params.update(self.mapping.parameters())
            if not any(key.endswith("_LAYER") for key in params):
                raise ValueError(
                    self.tr(
                        "Choose the project's layers for the site plan (at "
                        "least project, site boundary and disturbance)."
                    )
                )
        reference = self.reference.filePath().strip()
        reference_layers = self.reference_mapping.parameters()
        if reference and reference_layers:
            raise ValueError(
                self.tr(
                    "Give the reference as a file or as project layers, not "
                    "both: clear the reference file, or the reference layers."
                )
            )
        if reference:
            params["REFERENCE"] = reference
        params.update(reference_layers)
        sheets = QgsFileWidget.splitFilePaths(self.sheets.filePath())
        if sheets:
            params["SHEETS"] = sheets
        params["PROFILE"] = self.profile.currentText().strip() or DEFAULT_PROFILE
        self.result_paths = {
            "OUTPUT_JSON": os.path.join(folder, "review.json"),
            "OUTPUT_HTML": os.path.join(folder, "report.html"),
            "OUTPUT_PDF": os.path.join(folder, "report.pdf"),
            "OUTPUT_LAYOUT": os.path.join(folder, "report_layout.qpt"),
            "OUTPUT_FINDINGS": os.path.join(folder, "findings.gpkg"),
        }
        params.update(self.result_paths)
        review_file = self.review_file.filePath().strip()
        if review_file:
            params["ROUND_FILE"] = review_file
            reviewer = self.checklist.reviewer.text().strip()
            if reviewer:
                params["REVIEWER"] = reviewer
            compare_to = self.compare_to.currentData()
            if compare_to:
                params["COMPARE_TO"] = int(compare_to)
        self._run_profile = params["PROFILE"]
        self._run_round_file = review_file or None
        self._context_files = {
            "site": params.get("SITE"),
            "reference": reference if reference.lower().endswith(".gpkg") else None,
        }
        if self.parameter_providers:
            os.makedirs(folder, exist_ok=True)
            for provider in self.parameter_providers:
                params.update(provider(folder))
        return params

    def _new_run_folder(self):
        base = self.output_folder.filePath().strip() or QgsProcessingUtils.tempFolder()
        folder = os.path.join(base, time.strftime("swppp_review_%Y%m%d_%H%M%S"))
        suffix = 1
        while os.path.exists(folder):  # two runs within a second
            suffix += 1
            folder = os.path.join(base, time.strftime("swppp_review_%Y%m%d_%H%M%S") + f"_{suffix}")
        return folder

    def is_running(self):
        return self._run is not None

    def run(self):
        """Start ``swppp:review`` as a background task (nothing happens if one is running)."""
        if self._run is not None:
            return
        try:
            params = self.parameters(self._new_run_folder())
        except ValueError as err:
            self._say(str(err), Qgis.MessageLevel.Warning)
            return
        self.save_to_project()
        algorithm = QgsApplication.processingRegistry().createAlgorithmById(REVIEW_ALGORITHM)
        if algorithm is None:
            self._say(
                self.tr(
                    "The swppp:review algorithm is not registered (see the plugin's message at start-up)."
                ),
                Qgis.MessageLevel.Critical,
            )
            return
        context = QgsProcessingContext()
        context.setProject(QgsProject.instance())
        feedback = PanelFeedback()
        feedback.progressChanged.connect(self._progress)
        feedback.message.connect(self._step)
        feedback.reviewed.connect(self._reviewed)
        ok, message = algorithm.checkParameterValues(params, context)
        if not ok:
            self._say(message, Qgis.MessageLevel.Warning)
            return
        # prepare() runs in this constructor, on the main thread (project layers are read
        # there); the review itself in the task's thread.
        task = QgsProcessingAlgRunnerTask(algorithm, params, context, feedback)
        task.executed.connect(self._finished)
        self._run = (task, context, feedback)
        self._cancelled = False
        self.run_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.status.setText(self.tr("Reviewing…"))
        QgsApplication.taskManager().addTask(task)

    def cancel(self):
        if self._run is not None:
            task, _context, feedback = self._run
            self._cancelled = True
            # Said first: a task not started yet finishes inside task.cancel().
            self.status.setText(self.tr("Cancelling…"))
            feedback.cancel()
            task.cancel()

    def _progress(self, value):
        self.progress.setValue(int(value))

    def _step(self, text):
        if self._run is not None:
            shown = self.tr("Findings shown; {step}").format(step=text)
            self.status.setText(shown if self._previewed else text)

    def _reviewed(self, result):
        """The findings shown as soon as the review has made them, while its reports (the PDF's
        layout above all: seconds) are written; decisions wait for the run's end (its round is
        not recorded before)."""
        if self._run is None or self._cancelled:
            return
        self.result = None
        self.round_file = None
        self._previewed = True
        self.show_findings(result)
        self.tabs.setCurrentIndex(1)
        self.status.setText(self.tr("Findings shown; writing the reports…"))  # then each step's

    def _finished(self, successful, results):
        if self._run is None:  # no run of this panel's (a task reports its end once)
            return
        previewed, self._previewed = self._previewed, False
        _task, _context, feedback = self._run
        self._run = None
        self.run_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        if not successful or feedback.isCanceled():
            # A failed prepare() also cancels the task: only the user's Cancel reads as one.
            errors = [e for e in feedback.errors if e.strip()]
            if self._cancelled:
                text = self.tr("Cancelled: nothing was written.")
            else:
                text = errors[-1] if errors else self.tr("The review did not run.")
            self.progress.setValue(0)
            if previewed:  # the findings shown early belong to a run that wrote nothing
                self.show_findings({})
                self.summary.clear()
            self._say(text, Qgis.MessageLevel.Warning if self._cancelled else Qgis.MessageLevel.Critical)
            self.finished.emit(False)
            return
        self.progress.setValue(100)
        try:
            with open(self.result_paths["OUTPUT_JSON"], encoding="utf-8") as handle:
                self.result = json.load(handle)
        except (OSError, ValueError) as err:
            self._say(
                self.tr("The review ran but its result could not be read: {}").format(err),
                Qgis.MessageLevel.Critical,
            )
            self.finished.emit(False)
            return
        self.round_file = self._run_round_file if self.result.get("round") else None
        self.refresh_rounds()  # the round just recorded is the one the next compares to
        chosen = self._chosen_index() if previewed else None
        self.show_findings(self.result)
        if chosen is not None:  # what the reviewer chose while the reports were written
            self.select_finding(chosen)
        self.checklist.show_checklist(self.result.get("checklist") or [])
        self.result_layers = load_result_layers(self.result_paths["OUTPUT_FINDINGS"], RESULT_GROUP)
        # The plan and the reference around the results (layers of this project already are).
        self.context_layers = load_context_layers(RESULT_GROUP, **self._context_files)
        counts = ", ".join(
            f"{results.get(f'{s.upper()}_COUNT', 0):g} {s.replace('_', ' ')}"
            for s in REPORT_ORDER
            if results.get(f"{s.upper()}_COUNT")
        )
        self.status.setText(
            self.tr("Done: {counts}. Results in {folder}").format(
                counts=counts, folder=os.path.dirname(self.result_paths["OUTPUT_JSON"])
            )
        )
        self.open_report.setEnabled(os.path.exists(self.result_paths["OUTPUT_HTML"]))
        self.open_pdf.setEnabled(os.path.exists(self.result_paths["OUTPUT_PDF"]))
        self.edit_layout.setEnabled(os.path.exists(self.result_paths["OUTPUT_LAYOUT"]))
        self.tabs.setCurrentIndex(1)
        self.finished.emit(True)

    def _say(self, text, level):
        self.status.setText(text)
        if self.iface is not None and hasattr(self.iface, "messageBar"):
            self.iface.messageBar().pushMessage(self.tr("SWPPP Review"), text, level=level, duration=8)

    # Findings -----------------------------------------------------------------------------
    def show_findings(self, result):
        """Fill the list from a result JSON (docs/CONTRACT.md's shape), the worst first, as the
        report lists them (``REPORT_ORDER``); ``self.findings`` keeps the review's order."""
        self.findings = list(result.get("findings", []))
        self.result_shown = result
        self.tree.clear()
        self.detail.clear()
        self._decision_enabled(False)
        self.decision_note.clear()
        self.tree.setColumnHidden(1, not result.get("round"))
        position = {id(finding): index for index, finding in enumerate(self.findings)}
        for finding in sorted_findings(self.findings):
            index = position[id(finding)]
            status = finding.get("status", "")
            item = QTreeWidgetItem([finding_row(finding), decision_cell(finding)])
            item.setIcon(0, status_icon(status))
            item.setToolTip(0, rich_tooltip(finding_text(finding)))
            item.setData(0, FINDING_ROLE, finding)
            item.setData(0, INDEX_ROLE, index)
            self.tree.addTopLevelItem(item)
        self._filter_findings(self.action_only.isChecked())
        self._show_summary()
        self.show_comparison(result.get("comparison"))
        self._letter_enabled()

    def _show_summary(self):
        """The line over the list: the site, its acres, the findings counted by status and,
        where the run was recorded as a round, its number and the decisions counted (those
        saved since included)."""
        result = self.result_shown
        site = result.get("site", {}).get("name", "")
        acres = result.get("measurements", {}).get("disturbed_acres")
        counts = {s: sum(f.get("status") == s for f in self.findings) for s in REPORT_ORDER}
        shown = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items() if n)
        acres_text = f"{acres:.2f} acres disturbed; " if isinstance(acres, (int, float)) else ""
        held = result.get("round")
        if held:
            made = [(decision_of(f) or {}).get("decision") for f in self.findings]
            decided = ", ".join(
                f"{made.count(k)} {k}" for k in ("override", "accept", "resolved") if made.count(k)
            )
            shown += f"; round {held.get('number')}" + (f" ({decided})" if decided else "")
        self.summary.setText(shown_lines(f"{site}: {acres_text}{shown}"))

    def _filter_findings(self, action_only):
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            status = item.data(0, FINDING_ROLE).get("status")
            item.setHidden(bool(action_only) and status not in NEEDS_ACTION)

    def select_finding(self, index):
        """Select the review's ``index``-th finding (its ``finding`` number - 1) in the list,
        and so on the map."""
        for i in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(i)
            if item.data(0, INDEX_ROLE) == index:
                self.tree.setCurrentItem(item)
                return

    def _chosen_index(self):
        """The review's index of the finding chosen in the list, or None."""
        items = self.tree.selectedItems()
        return items[0].data(0, INDEX_ROLE) if items else None

    def _finding_chosen(self):
        items = self.tree.selectedItems()
        if items:
            chosen = items[0].data(0, FINDING_ROLE)
            self.detail.setHtml(
                decision_html(chosen)
                + "<p style='white-space: pre-wrap'>"
                + escape_shown(finding_text(chosen))
                + "</p>"
            )
            self._show_decision(chosen)
        if not items or not self.result_layers:
            return
        finding = items[0].data(0, FINDING_ROLE)
        index = items[0].data(0, INDEX_ROLE)
        selection = feature_selection(finding.get("features", []), self.result_layers)
        selection.update(finding_selection(index + 1, self.result_layers))
        canvas = self.iface.mapCanvas() if self.iface is not None else None
        if canvas is not None:
            select_and_zoom(canvas, selection, self.result_layers)
        else:
            for name, layer in self.result_layers.items():
                layer.selectByIds(selection.get(name, []))

    # Decisions ----------------------------------------------------------------------------
    def _decision_enabled(self, enabled):
        for widget in (self.decision, self.reason, self.save_decision_button):
            widget.setEnabled(enabled)
        self.save_decision_button.setToolTip(
            self.tr(
                "Append the decision to this round of the review file (the latest wins), "
                "made by the reviewer named in the Checklist tab"
            )
            if enabled
            else self.tr("Choose a review file in the Review tab and run the review to decide")
        )

    def _show_decision(self, finding):
        """The editor shows the chosen finding's latest decision (none: "(no decision)")."""
        d = decision_of(finding) or {}
        self.decision.setCurrentIndex(max(0, self.decision.findData(d.get("decision") or "")))
        self.reason.setText(d.get("reason") or "")
        self.reason.setCursorPosition(0)  # the reason's beginning
        self.reason.setStyleSheet("")
        self._decision_enabled(self.round_file is not None)

    def decide(self, index, decision, reason=""):
        """Set the editor for the review's ``index``-th finding and save (what a click does);
        returns True where the decision was recorded."""
        self.select_finding(index)
        self.decision.setCurrentIndex(self.decision.findData(decision))
        self.reason.setText(reason)
        return self.save_decision()

    def save_decision(self):
        """Append the editor's decision on the chosen finding to this round of the review file
        (analysis.rounds.add_decisions: the latest wins), made by the Checklist tab's reviewer.
        An override without a reason, or no reviewer, is refused with a message; returns True
        where the decision was recorded."""
        from analysis.errors import SwpppError
        from analysis.rounds.decisions import OVERRIDE, WITHDRAW, Decision
        from analysis.rounds.record import add_decisions, read_round

        if self.is_running():
            self._decision_say(
                self.tr("The review is still writing its reports: decide once its round is recorded."),
                Qgis.MessageLevel.Warning,
            )
            return False
        items = self.tree.selectedItems()
        if not items or self.round_file is None or not self.result or not self.result.get("round"):
            self._decision_say(
                self.tr(
                    "Choose a finding of a review recorded in a review file (Review tab) to decide on it."
                ),
                Qgis.MessageLevel.Warning,
            )
            return False
        index = items[0].data(0, INDEX_ROLE)
        choice = self.decision.currentData()
        reason = self.reason.text().strip()
        reviewer = self.checklist.reviewer.text().strip()
        if not choice:
            self._decision_say(
                self.tr("Choose accept, override or resolved, or withdraw to take the decision back."),
                Qgis.MessageLevel.Warning,
            )
            return False
        if choice == WITHDRAW and decision_of(items[0].data(0, FINDING_ROLE)) is None:
            self._decision_say(
                self.tr("Finding {n} has no decision to withdraw.").format(n=index + 1),
                Qgis.MessageLevel.Warning,
            )
            return False
        if choice == OVERRIDE and not reason:
            self.reason.setStyleSheet(_MISSING_REASON_STYLE)
            self.reason.setFocus()
            self._decision_say(
                self.tr(
                    "An override needs a reason: "
                    "say why the finding is overridden (it is shown in the report)."
                ),
                Qgis.MessageLevel.Warning,
            )
            return False
        if not reviewer:
            self._decision_say(
                self.tr(
                    "Type your name in the Checklist tab's Reviewer field: each decision records who made it."
                ),
                Qgis.MessageLevel.Warning,
            )
            return False
        number = int(self.result["round"]["number"])
        try:
            add_decisions(
                self.round_file,
                number,
                {index + 1: Decision(choice, reason or None, reviewer, "QGIS panel")},
            )
            held = read_round(self.round_file, number)["findings"][index]["decision"]
        except (SwpppError, OSError) as err:
            self._decision_say(str(err), Qgis.MessageLevel.Critical)
            return False
        finding = self.findings[index]
        finding.setdefault("round", {})["decision"] = held
        items[0].setData(0, FINDING_ROLE, finding)  # the item holds a copy
        items[0].setText(1, decision_cell(finding))
        self.reason.setStyleSheet("")
        self._finding_chosen()
        self.tree.doItemsLayout()
        self._show_summary()
        self.decision_note.setText(
            shown_lines(
                (
                    self.tr("Finding {n}: decision withdrawn in round {round} of {file} (undecided)")
                    if choice == WITHDRAW
                    else self.tr("Finding {n}: {decision} saved in round {round} of {file}")
                ).format(n=index + 1, decision=choice, round=number, file=_file_name(self.round_file))
            )
        )
        return True

    def _decision_say(self, text, level):
        """A decision refused or failed: said under the decision's editor and in the message bar."""
        self.decision_note.setText(shown_lines(text))
        self._say(text, level)

    # Rounds: the round compared with, the changes, the comment letter ------------------------
    def refresh_rounds(self, *_args):
        """The "Compare to round" choice from the review file's rounds: none, or one of them
        (by default the latest recorded, the round before the next run's); disabled, saying
        why, where the file holds no round yet or is no review file."""
        path = self.review_file.filePath().strip()
        rounds, problem = recorded_rounds(path)
        self.compare_to.clear()
        self.compare_to.addItem(self.tr("(none)"), 0)
        for number in rounds:
            self.compare_to.addItem(self.tr("round {}").format(number), number)
        if rounds:  # the latest recorded: the round before the next run's
            self.compare_to.setCurrentIndex(self.compare_to.findData(rounds[-1]))
        self.compare_to.setEnabled(bool(rounds))
        if rounds:
            tip = self.tr(
                "The next run is recorded as round {next} and compared with the round chosen: "
                "what was resolved, is still open, is new or changed (Findings tab, Changes)"
            ).format(next=rounds[-1] + 1)
        elif problem:
            tip = self.tr("No round to compare with: {}").format(problem)
        else:
            tip = self.tr(
                "No round to compare with: the review file holds no round yet (choose one in Review file)"
            )
        self.compare_to.setToolTip(rich_tooltip(shown_lines(tip)))

    def _changes_box(self):
        """The Findings tab's Changes group (hidden until a run compared two rounds)."""
        self.changes_box = QgsCollapsibleGroupBox(self.tr("Changes"))
        self.changes_box.setObjectName("changesBox")
        box = QVBoxLayout(self.changes_box)
        self.changes_summary = QLabel()
        self.changes_summary.setObjectName("changesSummary")
        self.changes_summary.setWordWrap(True)
        box.addWidget(self.changes_summary)
        self.changes = QTreeWidget()
        self.changes.setObjectName("changesTree")
        self.changes.setColumnCount(1)
        self.changes.setHeaderHidden(True)
        self.changes.setWordWrap(True)
        self.changes.setItemDelegate(_WrappedRows(self.changes))
        self.changes.setUniformRowHeights(False)
        self.changes.setIconSize(QSize(14, 14))
        self.changes.setTextElideMode(Qt.TextElideMode.ElideNone)
        self.changes.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.changes.header().setStretchLastSection(True)
        self.changes.header().sectionResized.connect(lambda *_: self.changes.doItemsLayout())
        self.changes.itemSelectionChanged.connect(self._change_chosen)
        box.addWidget(self.changes, 1)
        self.changes_box.setVisible(False)
        return self.changes_box

    def show_comparison(self, comparison):
        """The Changes group from the result JSON's ``comparison`` (none: hidden): the summary
        line ``swppp review --compare-to`` prints, then resolved, still open, new and changed,
        each finding with its rule, features, and its status and figure before and after."""
        from analysis.report.comparison import comparison_summary

        self.changes.clear()
        self._compared_round = None
        if not comparison:
            self.changes_box.setVisible(False)
            self.changes_summary.clear()
            return
        number = self._compared_round = int(comparison["round"])
        self.changes_box.setTitle(self.tr("Changes since round {}").format(number))
        self.changes_summary.setText(shown_lines(comparison_summary(comparison)))
        for _key, label, items in comparison_groups(comparison):
            group = QTreeWidgetItem([f"{label} ({len(items)})"])
            font = group.font(0)
            font.setBold(True)
            group.setFont(0, font)
            group.setFlags(group.flags() & ~Qt.ItemFlag.ItemIsSelectable)
            for item in items:
                row = QTreeWidgetItem([change_text(item, number)])
                status = (item.get("after") or item.get("before") or {}).get("status", "")
                row.setIcon(0, status_icon(status if item.get("after") else "pass"))
                row.setToolTip(0, rich_tooltip(change_tooltip(item, number)))
                row.setData(0, CHANGE_ROLE, item)
                group.addChild(row)
            self.changes.addTopLevelItem(group)
            group.setExpanded(True)
        self.changes_box.setVisible(True)
        self.changes_box.setCollapsed(False)

    def _change_chosen(self):
        """A compared finding chosen: its finding of this round chosen in the list (and on the
        map), where it is in this round; else read whole in the detail pane."""
        items = self.changes.selectedItems()
        item = items[0].data(0, CHANGE_ROLE) if items else None
        if not item:
            return
        after = item.get("after")
        if after:
            self.select_finding(int(after["number"]) - 1)
        else:  # resolved: no finding of this round; the compared finding read whole
            self.tree.clearSelection()
            number = self._compared_round
            self.detail.setHtml(
                "<p style='white-space: pre-wrap'>" + escape_shown(change_tooltip(item, number)) + "</p>"
            )

    def _letter_enabled(self):
        number = ((self.result or {}).get("round") or {}).get("number")
        enabled = bool(self.round_file and number)
        self.letter_button.setEnabled(enabled)
        if enabled:
            tip = self.tr(
                "Write the comment letter to the applicant for round {n} of {file} (HTML and PDF, "
                "in the run's folder), signed by the Checklist tab's reviewer, and open it"
            ).format(n=number, file=_file_name(str(self.round_file)))
        else:
            tip = self.tr(
                "No round recorded: choose a review file in the Review tab and run the review; "
                "the letter is written for the round recorded"
            )
        self.letter_button.setToolTip(rich_tooltip(shown_lines(tip)))

    def write_letter(self, open_it=True):
        """Run ``swppp:letter`` for the round just recorded in the panel's review file, signed
        by the Checklist tab's reviewer, writing HTML and PDF into the run's folder; open the
        PDF (``open_it``). Returns ``swppp:letter``'s results, or None (said why)."""
        number = ((self.result or {}).get("round") or {}).get("number")
        if not self.round_file or not number:
            self._letter_say(
                self.tr("No round recorded: choose a review file in the Review tab and run the review."),
                Qgis.MessageLevel.Warning,
            )
            return None
        folder = (
            os.path.dirname(self.result_paths.get("OUTPUT_JSON") or "") or QgsProcessingUtils.tempFolder()
        )
        paths = letter_paths(folder, number)
        params = {"REVIEW_FILE": self.round_file, "ROUND": int(number), "PROFILE": self._run_profile, **paths}
        reviewer = self.checklist.reviewer.text().strip()
        if reviewer:
            params["REVIEWER"] = reviewer
        algorithm = QgsApplication.processingRegistry().createAlgorithmById(LETTER_ALGORITHM)
        if algorithm is None:
            self._letter_say(
                self.tr(
                    "The swppp:letter algorithm is not registered (see the plugin's message at start-up)."
                ),
                Qgis.MessageLevel.Critical,
            )
            return None
        context = QgsProcessingContext()
        context.setProject(QgsProject.instance())
        feedback = PanelFeedback()
        ok, message = algorithm.checkParameterValues(params, context)
        results = {}
        if ok:
            QApplication.setOverrideCursor(Qt.CursorShape.WaitCursor)
            try:
                results, ok = algorithm.run(params, context, feedback)
            finally:
                QApplication.restoreOverrideCursor()
            errors = [e for e in feedback.errors if e.strip()]
            message = errors[-1] if errors else self.tr("The letter was not written.")
        if not ok:
            self._letter_say(message, Qgis.MessageLevel.Critical)
            return None
        self.letter_paths = paths
        self.letter_note.setText(
            shown_lines(
                self.tr("Letter: {summary}. {pdf}").format(
                    summary=results.get("SUMMARY", ""), pdf=os.path.basename(paths["OUTPUT_PDF"])
                )
            )
        )
        self.letter_note.setToolTip(rich_tooltip(shown_lines(paths["OUTPUT_PDF"])))
        if open_it:
            self.open_url(QUrl.fromLocalFile(paths["OUTPUT_PDF"]))
        return results

    def _letter_say(self, text, level):
        self.letter_note.setText(shown_lines(text))
        self._say(text, level)

    def _open(self, output):
        """Open the last run's ``output`` (OUTPUT_HTML, OUTPUT_PDF) in the desktop's viewer."""
        path = self.result_paths.get(output)
        if path and os.path.exists(path):
            self.open_url(QUrl.fromLocalFile(path))

    def open_layout(self):
        """Add the last run's report layout to this project's layouts (its map layers in a
        group of their own) and open it in QGIS's layout designer; returns the layout."""
        from .report_layout import load_layout_template

        path = self.result_paths.get("OUTPUT_LAYOUT")
        if not path:
            return None
        name = self.tr("SWPPP review {}").format(os.path.basename(os.path.dirname(path)))
        try:
            layout = load_layout_template(path, QgsProject.instance(), name=name)
        except OSError as err:
            self._say(str(err), Qgis.MessageLevel.Warning)
            return None
        if self.iface is not None and hasattr(self.iface, "openLayoutDesigner"):
            self.iface.openLayoutDesigner(layout)
        return layout

    def closeEvent(self, event):
        self.save_to_project()
        super().closeEvent(event)

    # Runs of unloaded panels: the task (the task manager's) runs on until it sees the cancel,
    # reading its context and feedback, so they are held here until the task is deleted.
    _ending_runs: ClassVar[dict] = {}

    def unload(self):
        """Cancel a running review and stop following the project and the run's task (the
        plugin is unloading): no signal of what outlives the panel reaches it afterwards."""
        run = self._run  # a task not started yet ends inside cancel(), which forgets it
        self.cancel()
        project = QgsProject.instance()
        with contextlib.suppress(TypeError):  # unloaded before
            project.layersWillBeRemoved.disconnect(self._suspend_saving)
            project.layersRemoved.disconnect(self._resume_saving)
            project.readProject.disconnect(self._project_read)
            project.cleared.disconnect(self._project_read)
        if run is not None:
            task, _context, feedback = run
            with contextlib.suppress(TypeError, RuntimeError):  # ended already; task deleted
                task.executed.disconnect(self._finished)
            with contextlib.suppress(TypeError):
                feedback.progressChanged.disconnect(self._progress)
                feedback.message.disconnect(self._step)
            key = id(task)
            ReviewPanel._ending_runs[key] = run
            # Ends with the task: the only connection left, and it holds nothing of the panel.
            task.destroyed.connect(lambda *_: ReviewPanel._ending_runs.pop(key, None))
            self._run = None
