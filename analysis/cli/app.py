"""The ``swppp`` command line: ``swppp review SITE ...`` (CONTRACT.md)."""
from __future__ import annotations

import argparse
import logging
import os
import sys
import traceback
from typing import Optional, Sequence

from .. import __version__
from . import reference as cli_reference
from .records import add_record_options, register as register_records
from ..profile import DEFAULT_PROFILE

__all__ = ["main"]

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
# The PDF report is laid out by a QGIS print layout, which lives in the plugin package: the one
# part of this command that needs QGIS, imported by name only when --pdf is given (analysis/
# itself never imports QGIS).
PDF_LAYOUT_MODULE = "qgis_plugin.report_layout"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="swppp", description="Review a construction site plan against the stormwater chapter.")
    parser.add_argument("--version", action="version", version=f"swppp-review {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    review = commands.add_parser(
        "review", help="review a site plan GeoPackage",
        description="Exit status: 0 nothing failed; 1 at least one finding is 'fail'; "
                    "2 the input could not be reviewed (nothing is written).")
    review.add_argument("site", metavar="SITE", help="site plan GeoPackage (CONTRACT.md layers)")
    review.add_argument("--reference", metavar="REF", help="reference layers GeoPackage")
    review.add_argument("--profile", metavar="NAME_OR_PATH", default=None,
                        help=f"rules profile name or .toml path (default: {DEFAULT_PROFILE})")
    review.add_argument("--sheet", metavar="PATH", action="append", default=[],
                        help="a georeferenced plan sheet (repeatable)")
    review.add_argument("--json", metavar="PATH|-", help="write the result as JSON ('-' for stdout)")
    review.add_argument("--report", metavar="PATH.html", help="write the HTML report")
    review.add_argument("--findings", metavar="PATH.gpkg", help="write the findings GeoPackage")
    review.add_argument("--pdf", metavar="PATH.pdf",
                        help="write the report as a PDF (a QGIS print layout: needs a Python "
                             "where QGIS's qgis.core imports)")
    review.add_argument("--land-cover-pre", metavar="RASTER",
                        help="NLCD land-cover raster standing in for the land_cover_pre layer")
    review.add_argument("--land-cover-post", metavar="RASTER",
                        help="NLCD land-cover raster standing in for the land_cover_post layer")
    review.add_argument("--confirmations", metavar="PATH",
                        help="the reviewer's checklist confirmations: their JSON file, or the "
                             "JSON result or findings GeoPackage of an earlier review")
    review.add_argument("--quiet", action="store_true", help="print nothing but errors")
    add_record_options(review, required=False)  # construction-phase records, optional
    review.set_defaults(handler=_run_review)
    cli_reference.register(commands)
    register_records(commands)
    form = commands.add_parser(
        "certification-form", help="write the contractor certification form (SWPPP G)",
        description="A printable HTML form: the statement of SWPPP G(1) word for word and the "
                    "fields of G(2); --site fills in the site's name and address.")
    form.add_argument("--out", metavar="FORM.html", required=True, help="the HTML file to write")
    form.add_argument("--site", metavar="SITE", help="site plan GeoPackage (fills in the site)")
    form.add_argument("--profile", metavar="NAME_OR_PATH", default=None,
                      help=f"rules profile name or .toml path (default: {DEFAULT_PROFILE})")
    form.set_defaults(handler=_run_certification_form)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="swppp: %(message)s")
    from ..errors import Cancelled, InputError, OutputError

    try:
        return args.handler(args)
    except (InputError, OutputError) as err:
        print(f"swppp: error: {err}", file=sys.stderr)
        return EXIT_INPUT
    except (Cancelled, KeyboardInterrupt):
        print("swppp: cancelled; nothing was written", file=sys.stderr)
        return 130
    except Exception as err:  # noqa: BLE001 - no traceback reaches a user unless asked for
        if os.environ.get("SWPPP_DEBUG"):
            traceback.print_exc()
        print(f"swppp: internal error: {type(err).__name__}: {err}. Nothing was written. "
              "Set SWPPP_DEBUG=1 for details and report it.", file=sys.stderr)
        return EXIT_INTERNAL


def _run_review(args) -> int:
    from pathlib import Path

    from ..errors import InputError, OutputError
    from ..report.outputs import publish, review_json, write_outputs
    from ..progress import Progress
    from ..review import review_paths

    for option, path, suffix in (("--report", args.report, ".html"), ("--findings", args.findings, ".gpkg"),
                                 ("--pdf", args.pdf, ".pdf")):
        if path and Path(path).suffix.lower() != suffix:
            raise InputError(f"{option} must name a {suffix} file", path=path,
                             fix=f"use a file name ending in {suffix}")
    stage_pdf = _pdf_layout() if args.pdf else None  # before the review: fail fast
    show_progress = not args.quiet and sys.stderr.isatty()
    records = {key: getattr(args, key) for key in ("log", "rain", "notices", "traps", "station",
                                                   "rain_units")}
    review = review_paths(args.site, reference=args.reference, profile=args.profile,
                          sheets=args.sheet, progress=Progress(_bar if show_progress else None),
                          records=records if records["log"] or records["rain"] else None,
                          land_cover_rasters={"pre": args.land_cover_pre,
                                              "post": args.land_cover_post},
                          confirmations=args.confirmations)
    if show_progress:
        sys.stderr.write("\r" + " " * 78 + "\r")
    to_stdout = args.json == "-"
    staged = None
    try:
        if stage_pdf is not None:  # laid out first, moved in once the rest is written
            staged = stage_pdf(review, args.pdf, Progress(None))
        write_outputs(review, json_path=None if to_stdout else args.json, html_path=args.report,
                      findings_path=args.findings)
        if staged is not None:
            publish(staged, args.pdf)
            staged = None
    except OSError as err:
        raise OutputError(f"could not write {args.pdf} ({err}); nothing was written. Choose a "
                          "file path in a folder you can write to") from None
    finally:
        if staged is not None:
            Path(staged).unlink(missing_ok=True)
    if to_stdout:
        sys.stdout.write(review_json(review) + "\n")
    if not args.quiet:
        written = (args.json, args.report, args.findings, args.pdf)
        _summary(review, [p for p in written if p and p != "-"],
                 sys.stderr if to_stdout else sys.stdout)
    return review.exit_status


def _run_certification_form(args) -> int:
    from pathlib import Path

    from ..checklist.certification import render_certification_form
    from ..errors import InputError
    from ..report.outputs import write_text
    from ..profile import load_profile
    from ..siteplan.plan import load_site_plan

    if Path(args.out).suffix.lower() not in (".html", ".htm"):
        raise InputError("--out must name an .html file", path=args.out,
                         fix="use a file name ending in .html (print it, or save it as PDF)")
    profile = load_profile(args.profile)
    site = load_site_plan(args.site, profile) if args.site else None
    write_text(args.out, render_certification_form(profile, site))
    print(f"wrote {args.out}")
    return EXIT_OK


def _pdf_layout():
    """The QGIS side's ``standalone_pdf_report(review, target, progress)``; InputError (exit 2)
    where this Python has no QGIS or no plugin package."""
    import importlib
    from pathlib import Path

    from ..errors import InputError

    # In a checkout (the editable install the README's venv makes) the plugin package sits
    # beside this one; the console script does not have the checkout on sys.path.
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "qgis_plugin" / "report_layout.py").is_file() \
            and str(checkout) not in sys.path:
        sys.path.append(str(checkout))
    try:
        return importlib.import_module(PDF_LAYOUT_MODULE).standalone_pdf_report
    except ImportError as err:
        raise InputError(
            f"--pdf needs QGIS: the PDF report is a QGIS print layout, and this Python cannot "
            f"import {err.name or PDF_LAYOUT_MODULE} ({sys.executable})",
            fix="run swppp from the repository with QGIS's Python (where 'import qgis.core' "
                "works), or write the HTML report with --report and print it") from None


def _bar(fraction: float, message: str) -> None:
    width = 30
    done = int(round(fraction * width))
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] {fraction:4.0%} {message[:36]:<36}")
    sys.stderr.flush()


def _summary(review, written, out) -> None:
    m = review.measurements
    c = review.to_dict()["conditions"]
    conditions = [k for k in ("A", "B", "C") if c[k]["applies"]]
    undecided = [k for k in ("A", "B", "C") if c[k].get("decided") is False]
    print(f"{review.site.name}: {m['disturbed_acres']:.2f} acres disturbed; SWPPP "
          f"{'required' if review.swppp_required else 'not required'}; conditions applying: "
          f"{', '.join(conditions) or 'none'}"
          + (f" (not decided: {', '.join(undecided)})" if undecided else ""), file=out)
    for f in review.findings:
        if f.status in ("fail", "warn"):
            print(f"  {f.status.upper():5} {f.rule} [{f.section}]: {f.message}", file=out)
    counts = review.counts()
    print("  findings: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=out)
    for path in written:
        print(f"  wrote {path}", file=out)


if __name__ == "__main__":
    sys.exit(main())
