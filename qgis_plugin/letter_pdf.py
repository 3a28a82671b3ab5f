"""The comment letter (``swppp letter --pdf``) as PDF: its HTML laid out by Qt's own rich text
engine (``QTextDocument``) onto US Letter pages through ``QPdfWriter``; the same HTML the
``--html`` letter is, so that the two say the same words."""

from __future__ import annotations

import os

from qgis.core import QgsApplication
from qgis.PyQt.QtCore import QMarginsF
from qgis.PyQt.QtGui import QFont, QPageLayout, QPageSize, QPdfWriter, QTextDocument

from analysis.io.files import discard, stage

__all__ = ["write_letter_pdf", "stage_letter_pdf"]

_STANDALONE: list = []
# Qt lays an unpaginated document out within 2 cm of the writer's page rectangle (and numbers
# its pages): with no margin of the writer's own, the letter's margins are those 2 cm.
_MARGIN_MM = 0.0


def write_letter_pdf(html: str, path) -> None:
    """Lay ``html`` out on US Letter pages and write the PDF to ``path``."""
    writer = QPdfWriter(str(path))
    writer.setCreator("SWPPP Review")
    writer.setTitle("Review comments")
    writer.setResolution(300)
    layout = QPageLayout(
        QPageSize(QPageSize.PageSizeId.Letter),
        QPageLayout.Orientation.Portrait,
        QMarginsF(_MARGIN_MM, _MARGIN_MM, _MARGIN_MM, _MARGIN_MM),
        QPageLayout.Unit.Millimeter,
    )
    writer.setPageLayout(layout)
    document = QTextDocument()
    font = QFont("DejaVu Sans")
    font.setPointSizeF(10.5)
    document.setDefaultFont(font)
    document.setHtml(html)
    document.print(writer)  # laid out anew on the writer's pages, at its resolution


def stage_letter_pdf(html: str, target) -> str:
    """For the command line: start QGIS headless where none runs, write the PDF beside
    ``target`` (staged; the caller moves it in); its path."""
    if QgsApplication.instance() is None:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        application = QgsApplication([], False)
        application.initQgis()
        _STANDALONE.append(application)
    staged = stage(target)
    try:
        write_letter_pdf(html, staged)
    except BaseException:
        discard(staged)
        raise
    return str(staged)
