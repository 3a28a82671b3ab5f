"""The comment letter as a Word document (``swppp letter --docx``), for a reviewer who edits
and signs letters in a word processor: the same letter as the HTML and PDF (its model,
:class:`~analysis.report.letter_model.Letter`, and its words, :data:`~analysis.report.letter_model.LABELS`),
written with python-docx (optional: ``pip install python-docx``).

Text from the plan and the review file (names, reasons, messages) is written as
:func:`~analysis.markup.document_text` shows it: a control, a bidirectional override or a
character XML cannot hold written as its escape, never dropped or reordering the letter.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from ..markup import document_text as t
from .letter_model import Letter, earlier_status, intro, label

__all__ = ["docx_available", "write_letter_docx", "DOCX_FIX"]

DOCX_FIX = (
    "install python-docx into the Python that runs swppp (pip install python-docx), or leave out --docx"
)


def docx_available() -> None:
    """Refuse (:class:`InputError`, naming the fix) where python-docx is not installed: asked
    before anything is read or written."""
    try:
        import docx  # noqa: F401
    except ImportError:
        raise InputError(
            "a Word letter is written with python-docx, which this Python does not have",
            fix=DOCX_FIX,
            parameter="docx",
        ) from None


def write_letter_docx(letter: Letter, target: Path) -> None:
    """Write ``letter`` to ``target`` (.docx): letterhead, date and addressee, the opening
    paragraph, the round before's comments with their status (a table), the numbered comments
    grouped by topic, each with its chapter section, measured figure and request, the
    signature block and the review file's footer."""
    from docx import Document
    from docx.enum.text import WD_ALIGN_PARAGRAPH
    from docx.shared import Inches, Pt, RGBColor

    doc = Document()
    for section in doc.sections:
        section.page_width, section.page_height = Inches(8.5), Inches(11)
        section.left_margin = section.right_margin = Inches(0.9)
        section.top_margin = section.bottom_margin = Inches(0.75)
    doc.styles["Normal"].font.size = Pt(11)

    def centred(text: str, size: float = 11, bold: bool = False, colour=None) -> None:
        p = doc.add_paragraph()
        p.alignment = WD_ALIGN_PARAGRAPH.CENTER
        p.paragraph_format.space_after = Pt(0)
        run = p.add_run(t(text))
        run.font.size, run.bold = Pt(size), bold
        if colour is not None:
            run.font.color.rgb = colour

    centred(letter.village, 16, bold=True)
    centred(letter.office)
    for line in letter.address:
        centred(line)
    if letter.illustrative:
        centred(label("illustrative", letter), 9, colour=RGBColor(0x8A, 0x1C, 0x1C))
    doc.add_paragraph()
    doc.add_paragraph(t(letter.dated))
    to = doc.add_paragraph()
    if letter.applicant:
        to.add_run(t(letter.applicant)).add_break()
    if letter.site:
        where = f", {letter.project_address}" if letter.project_address else ""
        to.add_run(t(f"Re: {letter.site}{where}"))
        to.runs[-1].add_break()
    to.add_run(t(label("heading", letter)))
    doc.add_paragraph(t(intro(letter)))

    if letter.earlier:
        doc.add_heading(t(label("earlier", letter)), level=2)
        table = doc.add_table(rows=1, cols=3)
        table.style = "Table Grid"
        for cell, text in zip(table.rows[0].cells, ("No.", "Comment", "Status")):
            cell.paragraphs[0].add_run(text).bold = True
        for e in letter.earlier:
            row = table.add_row().cells
            row[0].text = t(f"{letter.previous}.{e.number}")
            row[1].paragraphs[0].add_run(t(e.topic)).bold = True
            row[1].paragraphs[0].add_run(t(f": {e.message}"))
            row[2].text = t(earlier_status(e))

    if letter.comments:
        doc.add_heading(t(label("comments", letter)), level=2)
        for topic, comments in letter.groups:
            doc.add_heading(t(topic), level=3)
            for c in comments:
                p = doc.add_paragraph()
                p.add_run(f"{c.number}. ").bold = True
                p.add_run(t(c.message))
                detail = doc.add_paragraph()
                detail.paragraph_format.left_indent = Inches(0.4)
                detail.add_run(t(f"{label('chapter', letter)} {c.section}"))
                if c.figure:
                    detail.add_run(t(f"; {label('measured', letter)} {c.figure}"))
                if c.decision == "accept":
                    detail.add_run(t(f"; {label('accepted', letter)}"))
                if c.request:
                    asked = doc.add_paragraph()
                    asked.paragraph_format.left_indent = Inches(0.4)
                    asked.add_run(t(label("request", letter))).italic = True
                    asked.add_run(t(f" {c.request}"))

    doc.add_paragraph()
    doc.add_paragraph(t(label("closing", letter)))
    doc.add_paragraph()
    sign = doc.add_paragraph()
    sign.add_run(t(letter.reviewer or label("signature_blank", letter))).add_break()
    sign.add_run(t(letter.signature_title)).add_break()
    sign.add_run(t(letter.village))
    footer = doc.add_paragraph()
    run = footer.add_run(t(label("footer", letter)))
    run.font.size, run.font.color.rgb = Pt(8), RGBColor(0x55, 0x55, 0x55)
    doc.core_properties.title = t(f"{letter.village}: review comments, {letter.site}, round {letter.round}")
    doc.core_properties.author = t(letter.reviewer or letter.office)
    doc.save(str(target))
