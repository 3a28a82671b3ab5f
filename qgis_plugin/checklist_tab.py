"""The checklist tab of the review panel: the SWPPP contents checklist, ticked and noted.

The review fills the checklist in as far as the map and the records tell (the JSON
``checklist``); the reviewer ticks what they confirmed and types a note. The confirmations are
kept in the QGIS project (``QgsProject.writeEntry``, scope ``swppp_review``, as the JSON text of
``analysis.checklist.contents``) and written as the file ``swppp:review``'s CONFIRMATIONS takes.
The chosen item's chapter text and evidence show whole, wrapped, below the table (a dock is
narrower than the table's columns).
"""

import html
import json
from datetime import date

from qgis.PyQt.QtCore import QCoreApplication, Qt, pyqtSignal
from qgis.PyQt.QtGui import QColor
from qgis.PyQt.QtWidgets import (
    QAbstractItemView,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

__all__ = ["ChecklistTab", "SCOPE", "KEY", "REVIEWER_KEY"]

SCOPE = "swppp_review"
KEY = "checklist/confirmations"  # the confirmations' JSON text
REVIEWER_KEY = "checklist/reviewer"
COLUMNS = ("Item", "Status", "Confirmed", "Note", "Evidence", "The chapter requires")
ITEM, STATUS, CONFIRMED, NOTE, EVIDENCE, TEXT = range(len(COLUMNS))
# The status colours of the report (analysis.findings.STATUS_COLOURS), as the checklist uses them.
STATUS_COLOURS = {
    "provided": "#2e7d32",
    "missing": "#c62828",
    "confirmed": "#1565c0",
    "not applicable": "#757575",
}
# Per row, what a loaded confirmation said (reviewer, date), kept while the tick stays.
_HELD = Qt.ItemDataRole.UserRole + 1


class ChecklistTab(QWidget):
    """The checklist as a table: tick an item to confirm it, type a note beside it.

    ``show_checklist(items)`` shows a review's JSON ``checklist`` entries; ``confirmations()``
    gives the ticked items as ``{"item", "reviewer", "date", "note"}``.
    """

    confirmationsChanged = pyqtSignal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._pending = {}  # item -> confirmation loaded before the items were shown
        self._filling = False
        layout = QVBoxLayout(self)
        top = QHBoxLayout()
        top.addWidget(QLabel(self.tr("Reviewer")))
        self.reviewer = QLineEdit()
        self.reviewer.setPlaceholderText(self.tr("Your name, recorded with each confirmation"))
        top.addWidget(self.reviewer)
        layout.addLayout(top)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels([self.tr(c) for c in COLUMNS])
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)  # one line per item; the whole text is the tooltip
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(True)
        for column, width in ((ITEM, 110), (STATUS, 100), (CONFIRMED, 100), (NOTE, 260), (EVIDENCE, 280)):
            self.table.setColumnWidth(column, width)
        self.table.itemChanged.connect(self._item_changed)
        self.table.currentCellChanged.connect(self._show_detail)
        # The current item's chapter text and evidence, wrapped at the dock's width.
        self.detail = QTextBrowser()
        self.detail.setObjectName("checklistDetail")
        self.detail.setPlaceholderText(self.tr("Choose an item to read what the chapter requires."))
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.detail)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        layout.addWidget(split, 1)
        self.summary = QLabel()
        layout.addWidget(self.summary)

    def tr(self, text):
        return QCoreApplication.translate("ChecklistTab", text)

    # Showing ------------------------------------------------------------------------------
    def show_checklist(self, items):
        """Show the JSON ``checklist`` entries; an entry already ``confirmed`` (or confirmed in
        the project loaded before) comes ticked with its note."""
        held = {c["item"]: c for c in self.confirmations()} if self.table.rowCount() else {}
        held.update(self._pending)
        self._filling = True
        try:
            self.table.setRowCount(0)
            for entry in items:
                row = self.table.rowCount()
                self.table.insertRow(row)
                confirmation = held.get(entry["item"]) or entry.get("confirmation")
                self._fill_row(row, entry, confirmation)
        finally:
            self._filling = False
        self._pending = {}
        self._update_summary()
        if self.table.rowCount():
            self.table.setCurrentCell(0, ITEM)
            self._show_detail(0)
        else:
            self.detail.clear()

    def detail_text(self, row):
        """Row ``row``'s item as the detail pane shows it (plain text)."""

        def text(column):
            return self.table.item(row, column).text()

        return (
            f"{text(ITEM)} ({text(STATUS)})\n\n{self.tr('The chapter requires')}: "
            f"{text(TEXT)}\n\n{self.tr('Evidence')}: {text(EVIDENCE) or '-'}"
        )

    def _show_detail(self, row, *_columns):
        if 0 <= row < self.table.rowCount():
            self.detail.setPlainText(self.detail_text(row))

    def _fill_row(self, row, entry, confirmation):
        def cell(text, tooltip=None):
            item = QTableWidgetItem(text)
            item.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable)
            # Rich text, escaped: Qt wraps it (a plain tooltip is one line as wide as the text).
            item.setToolTip(f"<p>{html.escape(tooltip or text)}</p>" if tooltip or text else "")
            return item

        self.table.setItem(row, ITEM, cell(entry["item"]))
        status = cell(entry["status"].replace("_", " "))
        status.setForeground(QColor(STATUS_COLOURS.get(status.text(), "#444444")))
        self.table.setItem(row, STATUS, status)
        self.table.setItem(row, TEXT, cell(entry["text"]))
        self.table.setItem(row, EVIDENCE, cell(entry.get("evidence", "")))
        tick = QTableWidgetItem()
        tick.setFlags(
            Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsUserCheckable
        )
        tick.setCheckState(Qt.CheckState.Checked if confirmation else Qt.CheckState.Unchecked)
        if confirmation:
            tick.setData(
                _HELD,
                {"reviewer": confirmation.get("reviewer") or "", "date": confirmation.get("date") or ""},
            )
        self.table.setItem(row, CONFIRMED, tick)
        note = QTableWidgetItem((confirmation or {}).get("note") or "")
        note.setFlags(Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable | Qt.ItemFlag.ItemIsEditable)
        note.setToolTip(self.tr("Double-click to type what you checked"))
        self.table.setItem(row, NOTE, note)

    def _row_of(self, item):
        for row in range(self.table.rowCount()):
            if self.table.item(row, ITEM).text() == item:
                return row
        raise KeyError(item)

    # Ticking ------------------------------------------------------------------------------
    def set_confirmed(self, item, confirmed=True, note=None):
        """Tick (or untick) ``item`` and, where given, set its note: what a reviewer's click
        and typing do."""
        row = self._row_of(item)
        if note is not None:
            self.table.item(row, NOTE).setText(note)
        self.table.item(row, CONFIRMED).setCheckState(
            Qt.CheckState.Checked if confirmed else Qt.CheckState.Unchecked
        )

    def _item_changed(self, cell):
        if self._filling:
            return
        if cell.column() == CONFIRMED:
            if cell.checkState() == Qt.CheckState.Checked and not cell.data(_HELD):
                # Ticked now: by whoever is named at the top, today.
                self._filling = True
                cell.setData(_HELD, {"reviewer": "", "date": date.today().isoformat()})
                self._filling = False
            elif cell.checkState() != Qt.CheckState.Checked:
                self._filling = True
                cell.setData(_HELD, None)
                self._filling = False
        if cell.column() in (CONFIRMED, NOTE):
            self._update_summary()
            self.confirmationsChanged.emit()

    def _update_summary(self):
        statuses = [self.table.item(r, STATUS).text() for r in range(self.table.rowCount())]
        ticked = len(self.confirmations())
        self.summary.setText(
            self.tr("{n} items: {provided} provided, {missing} missing; {ticked} confirmed here").format(
                n=len(statuses),
                provided=statuses.count("provided"),
                missing=statuses.count("missing"),
                ticked=ticked,
            )
        )

    def confirmations(self):
        """The ticked items as ``{"item", "reviewer", "date", "note"}``, in checklist order."""
        out = []
        for row in range(self.table.rowCount()):
            tick = self.table.item(row, CONFIRMED)
            if tick is None or tick.checkState() != Qt.CheckState.Checked:
                continue
            held = tick.data(_HELD) or {}
            out.append(
                {
                    "item": self.table.item(row, ITEM).text(),
                    "reviewer": held.get("reviewer") or self.reviewer.text().strip(),
                    "date": held.get("date") or date.today().isoformat(),
                    "note": self.table.item(row, NOTE).text(),
                }
            )
        return out

    # Keeping them -------------------------------------------------------------------------
    def confirmations_text(self):
        """The confirmations file's text (validated: a reviewer's name for each)."""
        from analysis.checklist.contents import confirmations_json

        return confirmations_json(self.confirmations())

    def save_to_project(self, project):
        """Store the confirmations and the reviewer's name in ``project``.

        Stored as they are, so that saving on every tick works before the reviewer's name is
        typed; the confirmations file (``write_confirmations_file``) requires the name.
        """
        project.writeEntry(SCOPE, REVIEWER_KEY, self.reviewer.text())
        project.writeEntry(
            SCOPE,
            KEY,
            json.dumps(
                {
                    "format": "swppp-checklist-confirmations",
                    "version": 1,
                    "confirmations": self.confirmations(),
                },
                ensure_ascii=False,
            ),
        )

    def load_from_project(self, project):
        """Read the confirmations stored in ``project``; they tick the items shown (or those
        shown next). Returns how many were read."""
        from analysis.errors import InputError

        text, found = project.readEntry(SCOPE, KEY, "")
        reviewer, has_reviewer = project.readEntry(SCOPE, REVIEWER_KEY, "")
        if has_reviewer:
            self.reviewer.setText(reviewer)
        if not found or not text:
            return 0
        try:
            entries = json.loads(text)["confirmations"]
            read = {
                str(c["item"]): {
                    "item": str(c["item"]),
                    "reviewer": c.get("reviewer") or "",
                    "date": c.get("date") or "",
                    "note": c.get("note") or "",
                }
                for c in entries
            }
        except (ValueError, KeyError, TypeError, AttributeError):
            raise InputError(
                f"the project's entry {SCOPE}/{KEY} is not valid JSON of checklist confirmations",
                fix="tick the items again and save the project",
            ) from None
        if self.table.rowCount():
            self._filling = True
            try:
                for row in range(self.table.rowCount()):
                    confirmation = read.get(self.table.item(row, ITEM).text())
                    tick = self.table.item(row, CONFIRMED)
                    tick.setCheckState(Qt.CheckState.Checked if confirmation else Qt.CheckState.Unchecked)
                    tick.setData(
                        _HELD,
                        {"reviewer": confirmation["reviewer"], "date": confirmation["date"]}
                        if confirmation
                        else None,
                    )
                    self.table.item(row, NOTE).setText((confirmation or {}).get("note") or "")
            finally:
                self._filling = False
            self._update_summary()
        else:
            self._pending = read
        return len(read)

    def write_confirmations_file(self, path):
        """Write the file ``swppp:review``'s CONFIRMATIONS (and ``swppp review
        --confirmations``) takes; returns its path."""
        from analysis.io.files import write_text

        return str(write_text(path, self.confirmations_text()))
