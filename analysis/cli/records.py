"""The construction-phase commands: ``swppp inspections check``, ``swppp penalty``, ``swppp nov``."""

from __future__ import annotations

import sys
from pathlib import Path

from ..errors import InputError
from ..markup import terminal
from .options import (
    add_json_option,
    add_map_option,
    add_output_option,
    add_profile_option,
    add_quiet_option,
    describe_on_help,
    emit_json,
    exit_status,
    site_mapping,
)

__all__ = ["register", "add_record_options"]

RAIN_UNITS = ("in", "mm", "tenths_mm")
PENALTY_DESCRIPTION = (
    "The offence number within the previous {p.penalty.lookback_years} years and "
    "the ranges that may be assessed; with --until, the separate violations "
    "of a continuing one. Figures from the rules profile ({p.name} unless "
    "--profile gives another)."
)


# The findings a person must act on, in this order, on every command that prints findings.
SHOWN = (("fail", "FAIL"), ("needs_review", "NEEDS REVIEW"), ("warn", "WARN"))


def print_findings(findings, out) -> None:
    """The failing, needs-review and warning findings (in that order), then the count of each
    status: what needs review is decided by a person, so it is printed, never left to the JSON."""
    counts: dict = {}
    for f in findings:
        counts[f.status] = counts.get(f.status, 0) + 1
    for status, label in SHOWN:
        for f in findings:
            if f.status == status:
                print(f"  {label} {f.rule} [{f.section}]: {terminal(f.message)}", file=out)
    print("  findings: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())), file=out)
    if counts.get("needs_review"):
        print(
            f"  {counts['needs_review']} finding(s) need review: the tool could not decide "
            "them, a reviewer must (they do not change the exit status)",
            file=out,
        )


def add_record_options(parser, required: bool) -> None:
    """--log, --rain, --notices, --traps, --station, --rain-units (shared with ``review``)."""
    log_flag = "--log" if required else "--inspections"
    parser.add_argument(
        log_flag,
        dest="log",
        metavar="LOG.csv",
        required=required,
        help="inspection log: date, inspector, kind",
    )
    parser.add_argument(
        "--rain",
        metavar="RAIN.csv",
        required=required,
        help="daily rainfall: date,precip_in, or a NOAA GHCN-Daily CSV",
    )
    parser.add_argument(
        "--notices", metavar="NOTICES.csv", help="milestone notices: milestone, milestone_at, notified_at"
    )
    parser.add_argument(
        "--traps",
        metavar="TRAPS.csv",
        help="sediment traps: trap_id, date, design_capacity_cf, sediment_cf, cleaned_on",
    )
    parser.add_argument("--station", metavar="ID", help="GHCN-Daily station to use (several in the file)")
    parser.add_argument(
        "--rain-units",
        choices=RAIN_UNITS,
        metavar="UNITS",
        help="GHCN-Daily PRCP units: in or mm (CDO exports), tenths_mm (NCEI access files)",
    )


def register(commands) -> None:
    """Add the three commands to the ``swppp`` sub-command parser."""
    inspections = commands.add_parser("inspections", help="construction-phase inspection records")
    actions = inspections.add_subparsers(dest="action", metavar="ACTION", required=True)
    check = actions.add_parser(
        "check",
        help="inspection frequency, milestone notices and sediment cleanout",
        description="The records of a site under way checked against the chapter's "
        "inspection, notice and cleanout duties.",
    )
    exit_status(
        check,
        ok="nothing failed (findings that need review are printed and counted: "
        "a person decides them; they do not change the status)",
        fail="at least one finding is 'fail'",
    )
    add_record_options(check, required=True)
    check.add_argument(
        "--site",
        metavar="SITE.gpkg",
        help="site plan: the period runs from its first start to its final stabilisation",
    )
    add_map_option(check)
    check.add_argument("--from", dest="start", metavar="YYYY-MM-DD", help="first day of the period")
    check.add_argument("--to", dest="end", metavar="YYYY-MM-DD", help="last day of the period")
    add_profile_option(check)
    add_json_option(check)
    add_quiet_option(check)
    check.set_defaults(handler=_run_inspections)

    penalty = commands.add_parser("penalty", help="offence number and penalty ranges (Enforcement E, F)")
    describe_on_help(penalty, _penalty_description)
    penalty.add_argument(
        "--history", metavar="HISTORY.csv", required=True, help="earlier offences: person, date, kind"
    )
    penalty.add_argument("--person", metavar="NAME", required=True)
    penalty.add_argument(
        "--on",
        metavar="YYYY-MM-DD",
        required=True,
        help="date of the offence (first day of a continuing one)",
    )
    penalty.add_argument("--until", metavar="YYYY-MM-DD", help="last day of a continuing violation")
    penalty.add_argument(
        "--kind",
        choices=("criminal", "civil"),
        metavar="KIND",
        required=True,
        help="criminal (Enforcement E) or civil (Enforcement F)",
    )
    exit_status(penalty, ok="assessed")
    add_profile_option(penalty)
    add_json_option(penalty)
    add_quiet_option(penalty)
    penalty.set_defaults(handler=_run_penalty)

    nov = commands.add_parser("nov", help="write a notice of violation (Enforcement C)")
    nov.add_argument(
        "record",
        metavar="VIOLATION.toml",
        help="the violation record with the five contents of Enforcement C(1)-(5)",
    )
    exit_status(nov, ok="the notice was written")
    add_output_option(
        nov,
        "NOTICE.html",
        "the notice as HTML (PDF: QGIS's swppp:nov algorithm)",
        required=True,
        old=("--out",),
    )
    add_profile_option(nov)
    add_json_option(nov)
    add_quiet_option(nov)
    nov.set_defaults(handler=_run_nov)


def _penalty_description() -> str:
    from ..profile import help_text

    return help_text(PENALTY_DESCRIPTION)


def _run_inspections(args) -> int:
    from ..dates import given_day
    from ..profile import load_profile
    from ..records.inspections import check_record_files
    from ..siteplan.plan import load_site_plan

    profile = load_profile(args.profile)
    mapping = site_mapping(args, "--site")
    site = load_site_plan(args.site, profile, mapping=mapping) if mapping else args.site
    result = check_record_files(
        profile,
        args.log,
        args.rain,
        site=site,
        start=given_day(args.start, "--from", profile.inputs),
        end=given_day(args.end, "--to", profile.inputs),
        notices=args.notices,
        traps=args.traps,
        station=args.station,
        rain_units=args.rain_units,
    )
    emit_json(result.to_dict(), args.json)
    if not args.quiet:
        out = sys.stderr if args.json == "-" else sys.stdout
        print(f"records from {result.period['from']} to {result.period['to']}", file=out)
        print_findings(result.findings, out)
    return result.exit_status


def _run_penalty(args) -> int:
    from ..dates import given_day
    from ..profile import load_profile
    from ..records.penalty import SECTIONS, assess_penalty, read_history

    profile = load_profile(args.profile)
    assessment = assess_penalty(
        read_history(args.history, profile.inputs),
        args.person,
        given_day(args.on, "--on", profile.inputs),
        args.kind,
        profile,
        until=given_day(args.until, "--until", profile.inputs),
    )
    emit_json(assessment.to_dict(), args.json)
    if args.json != "-" and not args.quiet:
        a = assessment
        counted = ", ".join(d.isoformat() for d in a.counted) or "none"
        print(
            f"{terminal(a.person)}, {a.kind} offence on {a.on}: offence number {a.offence_number} "
            f"(earlier offences counted: {counted}); fine ${a.fine_min:,.0f} to ${a.fine_max:,.0f}"
            + (f"; imprisonment up to {a.imprisonment_max_days} days" if a.imprisonment_max_days else "")
            + f" [{SECTIONS[a.kind]}]"
        )
        if a.continuing:
            c = a.continuing
            print(
                f"  continuing {c['days']} days to {c['until']}: {c['separate_violations']} "
                f"separate violations, total ${c['total_fine_min']:,.0f} to "
                f"${c['total_fine_max']:,.0f}"
                + (
                    f", imprisonment up to {c['total_imprisonment_max_days']} days"
                    if c["total_imprisonment_max_days"]
                    else ""
                )
                + f" ({c['reading']})"
            )
    return 0


def _run_nov(args) -> int:
    from ..io.files import write_text
    from ..profile import load_profile
    from ..records.nov import read_violation, render_notice_html

    suffix = Path(args.output).suffix.lower()
    if suffix == ".pdf":
        raise InputError(
            "the command line writes the notice as HTML only",
            path=args.output,
            fix="use --output NOTICE.html and print it, or run the QGIS algorithm swppp:nov with OUTPUT_PDF",
        )
    if suffix not in (".html", ".htm"):
        raise InputError(
            "--output must name a .html file", path=args.output, fix="use a file name ending in .html"
        )
    profile = load_profile(args.profile)
    notice = read_violation(args.record, profile.inputs)
    write_text(args.output, render_notice_html(notice, profile))
    emit_json({"output": str(args.output), "record": str(args.record), "profile": profile.name}, args.json)
    if not args.quiet:
        print(f"wrote {terminal(args.output)}", file=sys.stderr if args.json == "-" else sys.stdout)
    return 0
