"""A notice's PDF: its HTML laid out for print by Qt (the review's report is report_layout.py)."""

import os

from qgis.PyQt.QtCore import QMarginsF, QSizeF
from qgis.PyQt.QtGui import QPageLayout, QPageSize, QPdfWriter, QTextDocument

__all__ = ["write_pdf"]


def write_pdf(html, path, title=""):
    """Write ``html`` as a US Letter PDF at ``path``; raise OSError if no PDF came out."""
    writer = QPdfWriter(str(path))
    writer.setPageSize(QPageSize(QPageSize.PageSizeId.Letter))
    writer.setPageMargins(QMarginsF(15, 15, 15, 15), QPageLayout.Unit.Millimeter)
    writer.setResolution(300)
    writer.setTitle(title)
    writer.setCreator("SWPPP Review")
    document = QTextDocument()
    # Measure text at the PDF's resolution, so the report fills the page's width.
    document.documentLayout().setPaintDevice(writer)
    document.setHtml(html)
    document.setPageSize(QSizeF(writer.pageLayout().paintRectPixels(writer.resolution()).size()))
    document.print(writer)  # ends its painter, which completes the file
    if not os.path.isfile(path) or os.path.getsize(path) == 0:
        raise OSError(f"could not write the PDF report {path}")
