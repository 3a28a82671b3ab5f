"""``swppp:nov``: the notice of violation (Enforcement C(1)-(5)) as HTML and PDF."""

from qgis.core import (
    QgsProcessingException,
    QgsProcessingParameterFile,
    QgsProcessingParameterFileDestination,
    QgsProcessingParameterString,
)

from analysis.profile import DEFAULT_PROFILE

from .records import RecordsAlgorithm

__all__ = ["NoticeOfViolationAlgorithm"]

HELP = """<p>Writes a notice of violation from a record (TOML) holding the five contents of \
Enforcement C: (1) name and address of the landowner, developer or applicant; (2) address or \
description of the land; (3) the nature of the violation and the sections violated; (4) the \
remedial measures and their time schedule; (5) the penalties that may be assessed (the kinds, \
criminal and/or civil, stated from the rules profile's schedule, and/or a statement). A record \
lacking any of the five is refused, naming it. Text from the record is escaped. The PDF is the \
same HTML laid out for US Letter.</p>"""


class NoticeOfViolationAlgorithm(RecordsAlgorithm):
    RECORD = "RECORD"

    def name(self):
        return "nov"

    def displayName(self):
        return self.tr("Write notice of violation")

    def shortHelpString(self):
        return self.tr(HELP)

    def initAlgorithm(self, config=None):
        self.addParameter(
            QgsProcessingParameterFile(
                self.RECORD,
                self.tr("Violation record (TOML)"),
                behavior=QgsProcessingParameterFile.Behavior.File,
                fileFilter="TOML files (*.toml);;All files (*)",
            )
        )
        self.addParameter(
            QgsProcessingParameterString(
                self.PROFILE, self.tr("Rules profile (name or TOML file)"), defaultValue=DEFAULT_PROFILE
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_HTML,
                self.tr("Notice (HTML)"),
                self.tr("HTML files (*.html *.htm)"),
                optional=True,
                createByDefault=False,
            )
        )
        self.addParameter(
            QgsProcessingParameterFileDestination(
                self.OUTPUT_PDF,
                self.tr("Notice (PDF)"),
                self.tr("PDF files (*.pdf)"),
                optional=True,
                createByDefault=False,
            )
        )

    def checkParameterValues(self, parameters, context):
        ok, message = super().checkParameterValues(parameters, context)
        if ok and not any(parameters.get(name) for name in (self.OUTPUT_HTML, self.OUTPUT_PDF)):
            return False, self.tr("Give OUTPUT_HTML or OUTPUT_PDF (or both).")
        return ok, message

    def processAlgorithm(self, parameters, context, feedback):
        from analysis.io.files import discard, publish, stage, write_text
        from analysis.profile import load_profile
        from analysis.records.nov import read_violation, render_notice_html

        from ..report_pdf import write_pdf

        html_path = self.parameterAsFileOutput(parameters, self.OUTPUT_HTML, context) or None
        pdf_path = self.parameterAsFileOutput(parameters, self.OUTPUT_PDF, context) or None
        with self.analysis_run(parameters, context, feedback) as inputs:
            profile = load_profile(inputs["profile"])
            # The profile's range of dates bounds issued_on and complete_by, as on the CLI.
            notice = read_violation(self.parameterAsFile(parameters, self.RECORD, context), profile.inputs)
            html = render_notice_html(notice, profile)
            staged = None
            try:
                if pdf_path:  # laid out first, moved in once the HTML is written
                    staged = stage(pdf_path)
                    write_pdf(html, staged, title=notice.data.get("notice_id") or "Notice of violation")
                if html_path:
                    write_text(html_path, html)
                if staged is not None and pdf_path:
                    publish(staged, pdf_path)
                    staged = None
            except OSError as err:
                raise QgsProcessingException(
                    self.tr("Could not write the notice (nothing was written): {}").format(err)
                ) from None
            finally:
                discard(staged)
        return {
            name: path for name, path in ((self.OUTPUT_HTML, html_path), (self.OUTPUT_PDF, pdf_path)) if path
        }
