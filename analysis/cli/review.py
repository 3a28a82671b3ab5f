"""``swppp review`` and ``swppp certification-form``: a site plan reviewed, its outputs written."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from ..errors import InputError, OutputError
from ..markup import terminal
from .options import (
    add_json_option,
    add_map_option,
    add_output_option,
    add_profile_option,
    add_quiet_option,
    add_store_option,
    clear_bar,
    emit_json,
    exit_status,
    progress_bar,
    site_mapping,
)
from .records import add_record_options, print_findings
from .rounds import print_round

__all__ = ["register", "PDF_WRITERS"]

# The PDF report is a QGIS print layout, which lives in the plugin package. The library never
# imports the plugin: a PDF writer registers itself under this entry-point group (pyproject.toml
# registers qgis_plugin.report_layout:standalone_pdf_report), and --pdf calls what is there.
PDF_WRITERS = "swppp_review.pdf_writers"


def register(commands) -> None:
    """Add ``review`` and ``certification-form`` to the ``swppp`` sub-command parser."""
    review = commands.add_parser(
        "review",
        help="review a site plan GeoPackage",
        description="A site plan reviewed against the chapter: the findings printed (fail, "
        "needs review, warn), and the JSON, HTML, PDF and findings GeoPackage "
        "outputs written.",
    )
    exit_status(
        review,
        ok="nothing failed (findings that need review are printed and counted: "
        "a reviewer decides them; they do not change the status)",
        fail="at least one finding is 'fail'",
    )
    review.add_argument("site", metavar="SITE", help="site plan GeoPackage (docs/CONTRACT.md layers)")
    add_store_option(review)
    add_profile_option(review)
    add_map_option(review)
    review.add_argument(
        "--sheet", metavar="PATH", action="append", default=[], help="a georeferenced plan sheet (repeatable)"
    )
    add_json_option(review)
    review.add_argument("--report", metavar="PATH.html", help="write the HTML report")
    review.add_argument("--findings", metavar="PATH.gpkg", help="write the findings GeoPackage")
    review.add_argument(
        "--pdf",
        metavar="PATH.pdf",
        help="write the report as a PDF (a QGIS print layout: needs a Python where QGIS's qgis.core imports)",
    )
    review.add_argument(
        "--land-cover-pre",
        metavar="RASTER",
        help="NLCD land-cover raster standing in for the land_cover_pre layer",
    )
    review.add_argument(
        "--land-cover-post",
        metavar="RASTER",
        help="NLCD land-cover raster standing in for the land_cover_post layer",
    )
    review.add_argument(
        "--confirmations",
        metavar="PATH",
        help="the reviewer's checklist confirmations: their JSON file, or the "
        "JSON result or findings GeoPackage of an earlier review",
    )
    rounds = review.add_argument_group(
        "review rounds", "the review recorded as the next round of the project's review file (docs/CLI.md)"
    )
    rounds.add_argument(
        "--round",
        metavar="FILE",
        help="record this review as the next round in the project's review file (a GeoPackage, "
        "or a PostgreSQL schema: 'postgresql://HOST/DB?schema=NAME'; made where none is yet); "
        "its decisions are carried to matching findings",
    )
    rounds.add_argument(
        "--decisions",
        metavar="PATH",
        help="the reviewer's decisions on this round's findings (TOML or CSV: accept, override "
        "with a reason, resolved, or withdraw to take one back); needs --round",
    )
    rounds.add_argument(
        "--reviewer", metavar="NAME", help="who made the decisions that name no reviewer; needs --round"
    )
    rounds.add_argument(
        "--compare-to",
        metavar="N",
        type=_round_number,
        help="print (and add to the JSON) what was resolved, is still open, is new or changed "
        "since round N of the review file; needs --round",
    )
    add_quiet_option(review)
    add_record_options(review, required=False)  # construction-phase records, optional
    review.set_defaults(handler=_run_review)
    form = commands.add_parser(
        "certification-form",
        help="write the contractor certification form (SWPPP G)",
        description="A printable HTML form: the statement of SWPPP G(1) word for word and the "
        "fields of G(2); --site fills in the site's name and address.",
    )
    exit_status(form, ok="the form was written")
    add_output_option(form, "FORM.html", "the HTML file to write", required=True, old=("--out",))
    form.add_argument("--site", metavar="SITE", help="site plan GeoPackage (fills in the site)")
    add_map_option(form)
    add_profile_option(form)
    add_json_option(form)
    add_quiet_option(form)
    form.set_defaults(handler=_run_certification_form)


def _run_review(args) -> int:
    from ..io.files import discard, publish
    from ..report.outputs import review_json, write_outputs
    from ..review import review_paths

    for option, path, suffix in (
        ("--report", args.report, ".html"),
        ("--findings", args.findings, ".gpkg"),
        ("--pdf", args.pdf, ".pdf"),
    ):
        if path and Path(path).suffix.lower() != suffix:
            raise InputError(
                f"{option} must name a {suffix} file", path=path, fix=f"use a file name ending in {suffix}"
            )
    for option, value in (
        ("--decisions", args.decisions),
        ("--reviewer", args.reviewer),
        ("--compare-to", args.compare_to),
    ):
        if value is not None and not args.round:
            raise InputError(
                f"{option} needs --round: decisions are recorded in the project's review file",
                fix="add --round FILE.gpkg (a new file is made for the first round)",
            )
    if args.round and Path(args.round).suffix.lower() != ".gpkg" and not _is_postgres(args.round):
        raise InputError(
            "--round must name a .gpkg file or a PostgreSQL schema (the project's review file)",
            path=args.round,
            fix="use a file name ending in .gpkg, or postgresql://HOST/DB?schema=NAME",
        )
    if args.reviewer is not None and not args.reviewer.strip():
        raise InputError("--reviewer is empty", fix="give the reviewer's name")
    mapping = site_mapping(args)
    stage_pdf = _pdf_layout() if args.pdf else None  # before the review: fail fast
    progress = progress_bar(args.quiet)
    records = {
        key: getattr(args, key) for key in ("log", "rain", "notices", "traps", "station", "rain_units")
    }
    review = review_paths(
        args.site,
        reference=args.reference,
        profile=args.profile,
        sheets=args.sheet,
        progress=progress,
        records=records if records["log"] or records["rain"] else None,
        land_cover_rasters={"pre": args.land_cover_pre, "post": args.land_cover_post},
        confirmations=args.confirmations,
        mapping=mapping,
    )
    to_stdout = args.json == "-"

    def write(review) -> None:
        staged = None
        try:
            if stage_pdf is not None:  # laid out first, moved in once the rest is written
                progress.step(0.95, "laying out the PDF report")  # the bar stays up meanwhile
                staged = stage_pdf(review, args.pdf, progress)
            write_outputs(
                review,
                json_path=None if to_stdout else args.json,
                html_path=args.report,
                findings_path=args.findings,
            )
            if staged is not None:
                publish(staged, args.pdf)
                staged = None
        except OutputError:  # an output of write_outputs: it names its file
            raise
        except OSError as err:  # laying out or moving in the PDF
            raise OutputError(
                f"could not write {args.pdf} ({err}); nothing was written. Choose a "
                "file path in a folder you can write to"
            ) from None
        finally:
            discard(staged)

    try:
        if args.round:
            from ..rounds.checksums import plan_files
            from ..rounds.record import record_round

            # The outputs are written while the round is not yet committed: either both are,
            # or the round is not recorded (an output that cannot be written).
            record_round(
                args.round,
                review,
                plan_files(args.site, args.map),
                decisions=args.decisions,
                reviewer=args.reviewer,
                before_commit=write,
                told=lambda text: print(f"swppp: note: {terminal(text)}", file=sys.stderr),
                compare_to=args.compare_to,
            )
        else:
            write(review)
    finally:
        clear_bar(progress)
    if to_stdout:
        sys.stdout.write(review_json(review) + "\n")
    if not args.quiet:
        written = (args.json, args.report, args.findings, args.pdf)
        out = sys.stderr if to_stdout else sys.stdout
        _summary(review, [p for p in written if p and p != "-"], out)
        if review.rounds is not None:
            print_round(review, args.round, out)
    return review.exit_status


def _is_postgres(target: str) -> bool:
    from ..reference.store import is_postgres

    return is_postgres(target)


def _round_number(text: str) -> int:
    """``--compare-to``'s value: a round's number (1, 2, ...)."""
    import argparse

    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a round's number (1, 2, ...)")
    return int(text)


def _run_certification_form(args) -> int:
    from ..checklist.certification import render_certification_form
    from ..io.files import write_text
    from ..profile import load_profile
    from ..siteplan.plan import load_site_plan

    if Path(args.output).suffix.lower() not in (".html", ".htm"):
        raise InputError(
            "--output must name an .html file",
            path=args.output,
            fix="use a file name ending in .html (print it, or save it as PDF)",
        )
    mapping = site_mapping(args, "--site")
    profile = load_profile(args.profile)
    site = load_site_plan(args.site, profile, mapping=mapping) if args.site else None
    write_text(args.output, render_certification_form(profile, site))
    emit_json(
        {"output": str(args.output), "site": site.name if site else None, "profile": profile.name}, args.json
    )
    if not args.quiet:
        print(f"wrote {terminal(args.output)}", file=sys.stderr if args.json == "-" else sys.stdout)
    return 0


def _pdf_layout():
    """The registered PDF writer, ``write(review, target, progress) -> staged path``."""
    return pdf_writer(
        "the PDF report is a QGIS print layout", "write the HTML report with --report and print it"
    )


def pdf_writer(laid_out: str, instead: str, module: Optional[str] = None, name: Optional[str] = None):
    """The registered PDF writer (entry points :data:`PDF_WRITERS`: the plugin package's), or
    ``name`` of its package's ``module`` where given (the letter's); InputError (exit 2) where
    none is registered or this Python cannot load it (no QGIS), saying ``laid_out`` (how the PDF
    is made) and what to do ``instead``."""
    from importlib import import_module
    from importlib.metadata import entry_points

    found = entry_points()
    writers = list(
        found.select(group=PDF_WRITERS) if hasattr(found, "select") else found.get(PDF_WRITERS, ())
    )  # Python 3.9
    how = (
        "run swppp with QGIS's Python (where 'import qgis.core' works) from an install that "
        f"includes the plugin package (pip install -e . in the repository), or {instead}"
    )
    if not writers:
        raise InputError(
            f"--pdf needs QGIS: no PDF writer is registered (entry points "
            f"'{PDF_WRITERS}') in this Python ({sys.executable})",
            fix=how,
            parameter="pdf",
        )
    try:
        if module is None:
            return writers[0].load()
        package = writers[0].value.split(":")[0].rsplit(".", 1)[0]
        return getattr(import_module(f"{package}.{module}"), name or "")
    except ImportError as err:
        raise InputError(
            f"--pdf needs QGIS: {laid_out}, and this Python cannot import "
            f"{err.name or writers[0].value} ({sys.executable})",
            fix=how,
            parameter="pdf",
        ) from None


def _summary(review, written, out) -> None:
    m = review.measurements
    c = review.to_dict()["conditions"]
    conditions = [k for k in ("A", "B", "C") if c[k]["applies"]]
    undecided = [k for k in ("A", "B", "C") if c[k].get("decided") is False]
    print(
        f"{terminal(review.site.name)}: {m['disturbed_acres']:.2f} acres disturbed; SWPPP "
        f"{'required' if review.swppp_required else 'not required'}; conditions applying: "
        f"{', '.join(conditions) or 'none'}"
        + (f" (not decided: {', '.join(undecided)})" if undecided else ""),
        file=out,
    )
    print_findings(review.findings, out)
    for path in written:
        print(f"  wrote {terminal(path)}", file=out)
