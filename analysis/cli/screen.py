"""``swppp screen SITES --reference REF``: many sites screened at once (Condition A, wetlands)."""

from __future__ import annotations

import sys

from .options import (
    add_json_option,
    add_output_option,
    add_profile_option,
    add_quiet_option,
    add_store_option,
    clear_bar,
    emit_json,
    exit_status,
    progress_bar,
)

__all__ = ["register"]


def register(commands) -> None:
    """Add ``screen`` to the ``swppp`` parser's sub-commands."""
    screen = commands.add_parser(
        "screen",
        help="screen many sites at once: Condition A, wetlands (GIS staff)",
        description="Each site (one polygon per feature, e.g. parcels or permits on file) is "
        "screened as if it were all disturbed: Condition A from the catchments it "
        "lies in and the TMDL watersheds it overlaps, and its acres inside wetlands "
        "and regulated wetlands' adjacent areas.",
    )
    exit_status(screen, ok="screened (a site the tool could not decide says needs_review in the table)")
    screen.add_argument("sites", metavar="SITES", help="vector file of sites (path or path|layername=NAME)")
    add_store_option(
        screen,
        required=True,
        help="the reference store: a GeoPackage, or PostgreSQL (postgresql://... or "
        "service=NAME; screened in the database)",
    )
    screen.add_argument(
        "--layer", metavar="NAME", help="the sites' layer (default: the only one with geometry)"
    )
    screen.add_argument(
        "--id",
        dest="id_field",
        metavar="FIELD",
        help="the sites' id field (default: site_id, parcel_id, permit_id or id; else the feature id)",
    )
    add_output_option(screen, "PATH", "the table: .csv, .gpkg (a layer for QGIS) or .json")
    screen.add_argument(
        "--since",
        type=int,
        metavar="VERSION",
        help="also name the sites whose Condition A or wetland status changed "
        "since this version of each reference layer",
    )
    add_profile_option(screen)
    add_json_option(screen)
    add_quiet_option(screen)
    screen.set_defaults(handler=_run)


def _run(args) -> int:
    from ..screen.operations import run_screen

    progress = progress_bar(args.quiet)
    done = run_screen(
        args.sites,
        args.reference,
        profile=args.profile,
        layer=args.layer,
        id_field=args.id_field,
        output=args.output,
        since=args.since,
        progress=progress,
    )
    clear_bar(progress)
    out = sys.stderr if args.json == "-" else sys.stdout
    if not args.quiet:
        for line in done.summary():
            print(line, file=out)
    if args.json:
        emit_json(done.to_dict(), args.json)
    return 0
