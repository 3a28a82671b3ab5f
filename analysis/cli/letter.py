"""``swppp letter REVIEW_FILE.gpkg``: the comment letter to the applicant for one round of a
project's review file (``--html``, ``--pdf``; docs/CLI.md, "The comment letter")."""

from __future__ import annotations

import sys

from ..errors import InputError
from ..markup import terminal
from .options import add_json_option, add_profile_option, add_quiet_option, emit_json, exit_status

__all__ = ["register"]


def register(commands) -> None:
    """Add ``letter`` to the ``swppp`` parser's sub-commands."""
    letter = commands.add_parser(
        "letter",
        help="the comment letter to the applicant for a round of a review file",
        description="The open findings of one round of a project's review file (fail, warn, "
        "needs_review; not overridden nor resolved) as numbered comments grouped by topic, each "
        "with its citation, figure and what would satisfy it, under the village's letterhead "
        "(the profile's [letter]); the round before's comments are repeated, resolved or still open.",
    )
    exit_status(letter, ok="written")
    letter.add_argument(
        "review_file", metavar="REVIEW_FILE", help="the review file (.gpkg) of swppp review --round"
    )
    letter.add_argument(
        "--round", type=int, metavar="N", dest="round_number", help="the round to write (default: the latest)"
    )
    letter.add_argument("--html", metavar="LETTER.html", help="write the letter as HTML")
    letter.add_argument(
        "--docx",
        metavar="LETTER.docx",
        help="write the letter as a Word document, to edit and sign (needs python-docx)",
    )
    letter.add_argument(
        "--pdf", metavar="LETTER.pdf", help="write the letter as PDF (needs QGIS's Python: Qt lays it out)"
    )
    letter.add_argument("--reviewer", metavar="NAME", help="the name signed under the letter")
    letter.add_argument(
        "--date", metavar="YYYY-MM-DD", dest="dated", help="the letter's date (default: today)"
    )
    add_profile_option(letter)
    add_json_option(letter)
    add_quiet_option(letter)
    letter.set_defaults(handler=_run)


def _run(args) -> int:
    from dataclasses import asdict

    from ..profile import load_profile
    from ..report.letter import build_letter, letter_date, letter_summary, write_letter

    if not (args.html or args.pdf or args.docx or args.json):
        raise InputError(
            "nothing to write",
            fix="give --html LETTER.html, --pdf LETTER.pdf, --docx LETTER.docx or --json PATH",
            parameter="html",
        )
    dated = letter_date(args.dated)
    stage_pdf = _pdf_writer() if args.pdf else None  # before anything is read: fail fast
    if args.docx:
        from ..report.letter_docx import docx_available

        docx_available()
    profile = load_profile(args.profile)
    letter = build_letter(args.review_file, profile, args.round_number, reviewer=args.reviewer, dated=dated)
    write_letter(letter, args.html, args.pdf, stage_pdf, docx_path=args.docx)
    emit_json(asdict(letter), args.json)
    if not args.quiet and args.json != "-":
        out = sys.stdout
        print(f"  {letter_summary(letter, terminal(letter.review_file))}", file=out)
        for target in (args.html, args.pdf, args.docx):
            if target:
                print(f"  wrote {terminal(target)}", file=out)
    return 0


def _pdf_writer():
    """The letter's PDF writer, ``write(html, target) -> staged path``: ``stage_letter_pdf`` of
    the plugin package that registers the review's PDF writer."""
    from .review import pdf_writer

    return pdf_writer(
        "the letter's PDF is laid out by Qt",
        "write the letter with --html and print it",
        module="letter_pdf",
        name="stage_letter_pdf",
    )
