"""``swppp reference import | status | area-copy | diff``: keeping the reference layers current
(docs/CONTRACT.md)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..markup import terminal
from ..reference.contract import FORMATS, REFERENCE_LAYERS  # no I/O: cheap at --help
from .options import (
    add_json_option,
    add_output_option,
    add_profile_option,
    add_quiet_option,
    add_store_option,
    clear_bar,
    emit_json,
    exit_status,
    json_text,
    progress_bar,
)

__all__ = ["register"]


def register(commands) -> None:
    """Add ``reference`` and its sub-commands to the ``swppp`` parser's sub-commands."""
    reference = commands.add_parser(
        "reference", help="import, check and compare the reference layers (GIS staff)"
    )
    sub = reference.add_subparsers(dest="reference_command", metavar="COMMAND", required=True)
    layers = sorted(REFERENCE_LAYERS)

    def target(parser, old, ok):
        add_store_option(parser, dest="target", required=True, old=old)
        parser.add_argument("--schema", metavar="NAME", help="PostgreSQL schema (default public)")
        add_profile_option(parser)
        add_json_option(parser)
        add_quiet_option(parser)
        exit_status(parser, ok=ok)

    imp = sub.add_parser(
        "import",
        help="import a new version of a reference layer",
        description="Validates the source, then stores it as a new version in one "
        "transaction; a refused source (exit 2) changes nothing.",
    )
    imp.add_argument("layer", metavar="LAYER", choices=layers, help="%(choices)s")
    imp.add_argument("source", metavar="SOURCE", help="source file (path or path|layername=NAME)")
    target(imp, ("--into",), "imported (or already there: nothing changed)")
    imp.add_argument(
        "--format",
        default="ogr",
        choices=FORMATS,
        metavar="FORMAT",
        help="source format: %(choices)s (default ogr)",
    )
    imp.add_argument("--geometry", metavar="FILE", help="geometries joined by id (attains, pwl)")
    imp.add_argument("--map", dest="mapping", metavar="MAPPING.toml", help="field mapping")
    imp.add_argument(
        "--source-date",
        metavar="YYYY-MM-DD",
        help="date of the source (default: the date the source states: ATTAINS "
        "cycle or action date, GeoPackage/DBF/zip metadata; required where "
        "it states none)",
    )
    imp.add_argument(
        "--causes",
        metavar="ATTAINS.json",
        help="pwl: an ATTAINS assessments response whose causes, category and TMDL "
        "links are joined to the PWL rows by id",
    )
    imp.add_argument(
        "--accept-rejections",
        action="store_true",
        help="import even where the rejected features exceed the profile's limits "
        "([reference] max_rejected_with_tmdl, max_rejected_percent)",
    )
    imp.add_argument(
        "--derive-watersheds",
        action="store_true",
        help="tmdl_watersheds from attains: derive each unit's watershed from the "
        "store's catchments (the unit's own and all upstream by drains_to); "
        "--geometry gives the assessment units",
    )
    imp.add_argument(
        "--rejections",
        metavar="PATH",
        help="where to list the rejected features, .csv or .gpkg (default: beside "
        "the store, "
        "STORE.LAYER_rejected.csv)",
    )
    imp.add_argument(
        "--sites",
        metavar="SITES",
        help="sites on file (a vector file, one polygon per site, as swppp screen "
        "reads it): name those whose Condition A or wetland status this "
        "import changes, and the water, watershed or wetland that changed it",
    )
    imp.set_defaults(handler=_run_import)

    st = sub.add_parser("status", help="each layer's versions and ages; warnings")
    target(st, ("--in",), "done")
    st.set_defaults(handler=_run_status)

    copy = sub.add_parser(
        "area-copy",
        help="keep each layer also in the profile's area CRS (faster screens and reviews)",
        description="Copies each layer's current version into the rules profile's area CRS, "
        "repaired as a review repairs it, with its own spatial index, in one transaction: reviews "
        "and screens in that CRS read the copy and move nothing (the same geometries, vertex for "
        "vertex). The store keeps it current: an import makes the new version's copy; an edit of "
        "a layer by hand marks its copy stale (readers then move the features themselves) until "
        "this is run again, as it is when the profile's area CRS changes.",
    )
    target(copy, ("--in",), "done")
    copy.add_argument("--drop", action="store_true", help="remove the area copies instead")
    copy.set_defaults(handler=_run_area_copy)

    diff = sub.add_parser("diff", help="what changed between two versions of a layer")
    diff.add_argument("layer", metavar="LAYER", choices=layers, help="%(choices)s")
    target(diff, ("--in",), "done")
    diff.add_argument(
        "--from", dest="old", type=int, metavar="VERSION", help="older version (default: the one before --to)"
    )
    diff.add_argument(
        "--to", dest="new", type=int, metavar="VERSION", help="newer version (default: the current one)"
    )
    add_output_option(diff, "PATH.gpkg", "write the changes as a layer for QGIS")
    diff.add_argument(
        "--match",
        choices=("id", "geometry"),
        metavar="BY",
        help="match features by id or by geometry: id, geometry (default: by "
        "geometry where the ids were made from feature numbers, as NWI's are)",
    )
    diff.set_defaults(handler=_run_diff)


def _run_import(args) -> int:
    from ..io.files import discard, reserve

    # The --json file is staged before the import commits: a place it cannot be written is
    # refused while nothing is (was: refused after the commit, saying nothing was written).
    staged = reserve(args.json) if args.json and args.json != "-" else None
    try:
        return _import_into(args, staged)
    finally:
        discard(staged)


def _import_into(args, staged) -> int:
    from ..errors import OutputError
    from ..io.files import publish
    from ..screen.rescreen import import_and_rescreen, rescreen_lines

    progress = progress_bar(args.quiet)
    done = import_and_rescreen(
        args.layer,
        args.source,
        args.target,
        schema=args.schema,
        fmt=args.format,
        geometry=args.geometry,
        mapping=args.mapping,
        source_date=args.source_date,
        profile=args.profile,
        progress=progress,
        causes=args.causes,
        accept_rejections=args.accept_rejections,
        rejections=args.rejections,
        derive_watersheds=args.derive_watersheds,
        sites=args.sites,
    )
    out = sys.stderr if args.json == "-" else sys.stdout
    if not args.quiet:
        clear_bar(progress)
        version = done["version"]
        for line in done["report"]:
            print(terminal(line), file=out)
        if done["new_version"]:
            print(
                f"{args.layer}: imported as version {version['version']} "
                f"({version['feature_count']} features) into {terminal(done['store'])}",
                file=out,
            )
        else:
            print(
                f"{args.layer}: this source was already imported as version {version['version']} "
                f"(same sha256 {version['sha256'][:12]}...); nothing changed",
                file=out,
            )
        for line in rescreen_lines(done["rescreen"]) if "rescreen" in done else []:
            print(terminal(line), file=out)
    if staged is None:
        if args.json:
            emit_json(done, args.json)
        return 0
    try:
        staged.write_text(json_text(done), encoding="utf-8")
        publish(staged, args.json)
    except OSError as err:  # after the commit: the import stands, and is said to
        version = done["version"]
        raise OutputError(
            f"{args.layer} was imported (version {version['version']} in {done['store']}), but "
            f"its JSON could not be written to {args.json} ({err.strerror or err}). "
            "`swppp reference status --json PATH` writes the store's versions"
        ) from None
    return 0


def _run_status(args) -> int:
    from ..profile import load_profile
    from ..reference.connect import open_store
    from ..reference.store import status

    result = status(open_store(args.target, args.schema), load_profile(args.profile))
    result["checks"] = _checks_served(result)
    if args.json:
        emit_json(result, args.json)
    if args.quiet:
        return 0
    if args.json != "-":
        print(f"reference layers in {terminal(result['store'])}")
        for entry in result["layers"]:
            if entry["current"] is None:
                print(f"  {entry['layer']:<16} none")
                continue
            current = entry["versions"][-1]
            print(
                f"  {entry['layer']:<16} version {current['version']} of {len(entry['versions'])}, "
                f"{current['feature_count']} features, source "
                f"{terminal(Path(str(current['source'])).name)} "
                f"dated {current['source_date'] or 'unknown'} ({_age(entry['source_days_old'])}), "
                f"imported {str(current['imported_at'])[:10]} ({_age(entry['imported_days_ago'])})"
                + (f", listing cycle {entry['listing_cycle']}" if "listing_cycle" in entry else "")
                + _rejected(current)
                + (f", area copy in {terminal(entry['area_copy']['crs'])}" if "area_copy" in entry else "")
            )
        print("checks a review can make with it")
        for check in result["checks"]:
            print(
                f"  {check['check']:<16} "
                + (
                    "yes"
                    if check["serves"]
                    else "no: lacks " + ", ".join(check["lacks"]) + " (needs_review in a review)"
                )
            )
    for warning in result["warnings"]:
        print(f"  WARNING {terminal(warning)}", file=sys.stderr if args.json == "-" else sys.stdout)
    return 0


def _run_area_copy(args) -> int:
    from ..profile import load_profile
    from ..reference.connect import open_store

    store = open_store(args.target, args.schema)
    dropped: list[str] = []
    copies: dict[str, dict] = {}
    if args.drop:
        dropped = store.drop_area_copies()
    else:
        profile = load_profile(args.profile)
        progress = progress_bar(args.quiet)
        made = store.make_area_copies(profile.area_crs, progress)
        clear_bar(progress)
        copies = {c.layer: c.to_dict() for c in made}
    result = {"store": store.label, "dropped": dropped, "copies": copies}
    if args.json:
        emit_json(result, args.json)
    if args.quiet or args.json == "-":
        return 0
    if args.drop:
        print(f"area copies removed from {terminal(store.label)}: {', '.join(dropped) or 'none was kept'}")
        return 0
    print(f"area copies in {terminal(store.label)}")
    for layer, copy in copies.items():
        print(
            f"  {layer:<16} version {copy['version']}, {copy['features']} features in {terminal(copy['crs'])}"
            + (f", {copy['repaired']} repaired" if copy["repaired"] else "")
        )
    return 0


def _checks_served(result: dict) -> list:
    """Each check that reads reference layers (its ``Check.reads``), and whether the store has
    every one of them: a review makes the checks it can and says needs_review for the others."""
    from ..registry import REGISTRY

    stored = {entry["layer"] for entry in result["layers"] if entry["current"] is not None}
    out = []
    for check in REGISTRY:
        wanted = [r.split(":", 1)[1] for r in check.reads if r.startswith("reference:")]
        if wanted:
            lacks = [layer for layer in wanted if layer not in stored]
            out.append({"check": check.name, "reads": wanted, "serves": not lacks, "lacks": lacks})
    return out


def _run_diff(args) -> int:
    from ..reference.operations import diff_reference, write_diff_layer

    progress = progress_bar(args.quiet)
    diff = diff_reference(
        args.layer,
        args.target,
        schema=args.schema,
        old=args.old,
        new=args.new,
        profile=args.profile,
        match=args.match,
        progress=progress,
    )
    if args.output:
        progress.step(0.95, f"writing {args.output}")
        write_diff_layer(diff, args.output)
    clear_bar(progress)
    if args.json:
        emit_json(diff.to_dict(), args.json)
    if args.json != "-" and not args.quiet:
        print("\n".join(terminal(line) for line in diff.table()))
        if args.output:
            print(f"  wrote {terminal(args.output)}")
    return 0


def _rejected(row) -> str:
    if row.get("rejected_count") is None:
        return ""
    text = f", {row['rejected_count']} rejected ({row['rejected_with_tmdl']} with a TMDL)"
    if row.get("rejections_accepted"):
        text += ", accepted"
    return text + (f", derived: {row['method']}" if row.get("method") else "")


def _age(days) -> str:
    return "age unknown" if days is None else f"{days} days ago"
