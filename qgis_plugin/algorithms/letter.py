"""``swppp:letter``: the comment letter to the applicant for one round of a project's review
file, as ``swppp letter`` writes it (the same library calls: analysis.report.letter)."""

from qgis.core import (
    QgsProcessingAlgorithm,
    QgsProcessingException,
    QgsProcessingFeedback,
    QgsProcessingOutputNumber,
    QgsProcessingOutputString,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterNumber,
    QgsProcessingParameterString,
)

from .base import SwpppAlgorithm, feedback_progress

__all__ = ["LetterAlgorithm"]

_NO_OUTPUT = "Give OUTPUT_HTML, OUTPUT_PDF or OUTPUT_DOCX (or several): the letter is written there."

HELP = """<p>The comment letter to the applicant for one round of the project's review file \
(REVIEW_FILE, the GeoPackage swppp:review's ROUND_FILE records rounds in), as <code>swppp \
letter</code> writes it: the round's open findings (fail, warn, needs review; not overridden \
nor marked resolved by the reviewer) as numbered comments grouped by topic, each with the \
chapter's citation, the measured figure and what would satisfy it, under the village's \
letterhead (the rules profile's [letter]) and signed by REVIEWER. The comments of the round \
before are repeated, each resolved or still open.</p>
<p>ROUND is the round to write (0: the latest). DATE is the letter's date (YYYY-MM-DD; \
default: today). The letter is written as HTML (OUTPUT_HTML), as PDF (OUTPUT_PDF) and as a Word \
document to edit and sign (OUTPUT_DOCX; needs the python-docx package in QGIS's Python): all or \
none. No output may be the review file: it is refused before anything is written.</p>"""


class LetterAlgorithm(SwpppAlgorithm):
    REVIEW_FILE = "REVIEW_FILE"
    ROUND = "ROUND"
    REVIEWER = "REVIEWER"
    OUTPUT_DOCX = "OUTPUT_DOCX"
    DATE = "DATE"
    COMMENTS = "COMMENTS"
    SUMMARY = "SUMMARY"
    ROLE_LAYERS = ()  # no site plan: the letter reads the review file only
    SITE_REQUIRED = False

    def name(self):
        return "letter"

    def displayName(self):
        return self.tr("Comment letter to the applicant")

    def group(self):
        return self.tr("Review")

    def groupId(self):
        return "review"

    def shortHelpString(self):
        return self.tr(HELP)

    def flags(self):
        # Laid out by Qt's rich-text engine (QTextDocument) on the main thread: a letter takes
        # a moment, and the review file is read whole.
        return super().flags() | QgsProcessingAlgorithm.Flag.FlagNoThreading

    def initAlgorithm(self, config=None):
        self.addParameter(
            QgsProcessingParameterFile(
                self.REVIEW_FILE,
                self.tr("Review file (GeoPackage of swppp:review's ROUND_FILE)"),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter="GeoPackage (*.gpkg *.GPKG)",
            )
        )
        self.addParameter(
            QgsProcessingParameterNumber(
                self.ROUND,
                self.tr("Round (0: the latest)"),
                QgsProcessingParameterNumber.Type.Integer,
                defaultValue=0,
                minValue=0,
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.REVIEWER, self.tr("Reviewer (the name signed under the letter)"), optional=True
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.DATE, self.tr("Date of the letter (YYYY-MM-DD; default: today)"), optional=True
            )
        )
        self.add_profile_parameter()
        for name, label, kinds in (
            (self.OUTPUT_HTML, "Letter (HTML)", "HTML files (*.html *.htm)"),
            (self.OUTPUT_PDF, "Letter (PDF)", "PDF files (*.pdf)"),
            (self.OUTPUT_DOCX, "Letter (Word document)", "Word documents (*.docx)"),
        ):
            self.addParameter(
                QgsProcessingParameterFileDestination(
                    name, self.tr(label), self.tr(kinds), optional=True, createByDefault=False
                )
            )
        self.addOutput(QgsProcessingOutputNumber(self.ROUND, self.tr("Round written")))
        self.addOutput(QgsProcessingOutputNumber(self.COMMENTS, self.tr("Comments in the letter")))
        self.addOutput(QgsProcessingOutputString(self.SUMMARY, self.tr("The letter in one line")))

    # No site plan: the site-plan checks and the project-layer export of the base do not apply.
    def checkParameterValues(self, parameters, context):
        ok, message = QgsProcessingAlgorithm.checkParameterValues(self, parameters, context)
        if not ok:
            return ok, message
        if not any(parameters.get(name) not in (None, "") for name in self._outputs()):
            return False, self.tr(_NO_OUTPUT)
        return True, ""

    def prepareAlgorithm(self, parameters, context, feedback):
        self._site_path = None
        return True

    def processAlgorithm(self, parameters, context, feedback):
        from analysis.profile import DEFAULT_PROFILE, load_profile
        from analysis.report.letter import build_letter, letter_date, letter_summary, write_letter

        from ..letter_pdf import stage_letter_pdf

        review_file = self.parameterAsFile(parameters, self.REVIEW_FILE, context)
        number = self.parameterAsInt(parameters, self.ROUND, context) or None
        reviewer = (self.parameterAsString(parameters, self.REVIEWER, context) or "").strip() or None
        html_path = self.parameterAsFileOutput(parameters, self.OUTPUT_HTML, context) or None
        pdf_path = self.parameterAsFileOutput(parameters, self.OUTPUT_PDF, context) or None
        docx_path = self.parameterAsFileOutput(parameters, self.OUTPUT_DOCX, context) or None
        if not (html_path or pdf_path or docx_path):
            raise QgsProcessingException(self.tr(_NO_OUTPUT))
        if feedback is None:
            feedback = QgsProcessingFeedback()
        progress = feedback_progress(feedback)
        with self.analysis_errors(feedback):
            if docx_path:
                from analysis.report.letter_docx import docx_available

                docx_available()  # before anything is read
            dated = letter_date(self.parameterAsString(parameters, self.DATE, context))
            profile_name = self.parameterAsString(parameters, self.PROFILE, context)
            profile = load_profile(profile_name or DEFAULT_PROFILE)
            progress.step(0.1, self.tr("reading the round from the review file"))
            letter = build_letter(review_file, profile, number, reviewer=reviewer, dated=dated)
            progress.step(0.5, self.tr("laying out the letter"))
            write_letter(
                letter,
                html_path,
                pdf_path,
                stage_letter_pdf if pdf_path else None,
                docx_path=docx_path,
            )
        feedback.setProgress(100.0)  # written: no cancelling it now
        summary = letter_summary(letter)
        feedback.pushInfo(summary)
        results = {self.ROUND: letter.round, self.COMMENTS: len(letter.comments), self.SUMMARY: summary}
        if html_path:
            results[self.OUTPUT_HTML] = html_path
        if pdf_path:
            results[self.OUTPUT_PDF] = pdf_path
        if docx_path:
            results[self.OUTPUT_DOCX] = docx_path
        return results

    def _outputs(self):
        return (self.OUTPUT_HTML, self.OUTPUT_PDF, self.OUTPUT_DOCX)
