"""``swppp reference import | status | diff``: keeping the reference layers current (CONTRACT.md)."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

from ..errors import InputError
from ..profile import DEFAULT_PROFILE, load_profile
from ..progress import SILENT, Progress
from ..reference.importer import FORMATS, REFERENCE_LAYERS, read_candidate

__all__ = ["register", "import_reference", "diff_reference"]


def register(commands) -> None:
    """Add ``reference`` and its sub-commands to the ``swppp`` parser's sub-commands."""
    reference = commands.add_parser(
        "reference", help="import, check and compare the reference layers (GIS staff)",
        description="Exit status: 0 done; 2 the input was refused (nothing changed).")
    sub = reference.add_subparsers(dest="reference_command", metavar="COMMAND", required=True)
    layers = sorted(REFERENCE_LAYERS)

    def target(parser, flag):
        parser.add_argument(flag, dest="target", metavar="TARGET", required=True,
                            help="reference GeoPackage, or PostgreSQL (postgresql://... or service=NAME)")
        parser.add_argument("--schema", help="PostgreSQL schema (default public)")
        parser.add_argument("--profile", metavar="NAME_OR_PATH", default=None,
                            help=f"rules profile name or .toml path (default: {DEFAULT_PROFILE})")
        parser.add_argument("--json", metavar="PATH|-", help="write the result as JSON ('-' for stdout)")

    imp = sub.add_parser("import", help="import a new version of a reference layer",
                         description="Validates the source, then stores it as a new version in one "
                                     "transaction; a refused source (exit 2) changes nothing.")
    imp.add_argument("layer", metavar="LAYER", choices=layers, help=", ".join(layers))
    imp.add_argument("source", metavar="SOURCE", help="source file (path or path|layername=NAME)")
    target(imp, "--into")
    imp.add_argument("--format", default="ogr", choices=FORMATS, help="source format (default ogr)")
    imp.add_argument("--geometry", metavar="FILE", help="geometries joined by id (attains, pwl)")
    imp.add_argument("--map", dest="mapping", metavar="MAPPING.toml", help="field mapping")
    imp.add_argument("--source-date", metavar="YYYY-MM-DD",
                     help="date of the source (default: the source file's modification date)")
    imp.add_argument("--quiet", action="store_true", help="print nothing but errors")
    imp.set_defaults(handler=_run_import)

    st = sub.add_parser("status", help="each layer's versions and ages; warnings")
    target(st, "--in")
    st.set_defaults(handler=_run_status)

    diff = sub.add_parser("diff", help="what changed between two versions of a layer")
    diff.add_argument("layer", metavar="LAYER", choices=layers, help=", ".join(layers))
    target(diff, "--in")
    diff.add_argument("--from", dest="old", type=int, metavar="VERSION",
                      help="older version (default: the one before --to)")
    diff.add_argument("--to", dest="new", type=int, metavar="VERSION",
                      help="newer version (default: the current one)")
    diff.add_argument("--output", metavar="PATH.gpkg", help="write the changes as a layer for QGIS")
    diff.set_defaults(handler=_run_diff)


def import_reference(layer: str, source, target, *, schema: Optional[str] = None, fmt: str = "ogr",
                     geometry=None, mapping=None, source_date: Optional[str] = None, profile=None,
                     progress: Optional[Progress] = None) -> dict:
    """Validate ``source`` and store it as a new version of ``layer``; what was done, as a dict.

    The one import the CLI and the QGIS algorithm both call.
    """
    from ..reference.store import open_store

    progress = progress or SILENT
    rules = load_profile(profile)
    store = open_store(target, schema)
    date = _source_date(source_date, source)
    progress.step(0.0, f"reading {Path(str(source).split('|')[0]).name}")
    candidate = read_candidate(layer, source, fmt, geometry=geometry, mapping=mapping,
                               synonyms=dict(rules.value("reference", "pollutant_synonyms")))
    progress.step(0.1, f"writing {len(candidate.frame)} features")
    result = store.import_candidate(candidate, source_date=date, progress=progress)
    progress.step(1.0, "done")
    return {"layer": layer, "store": store.label, "new_version": result.new,
            "version": result.version.to_dict(), "validation": candidate.report.to_dict(),
            "report": candidate.report.lines()}


def diff_reference(layer: str, target, *, schema=None, old=None, new=None, profile=None):
    """The :class:`~analysis.reference.diff.LayerDiff` of ``layer`` in the store at ``target``."""
    from ..reference.diff import diff_versions
    from ..reference.store import open_store

    return diff_versions(open_store(target, schema), layer, old, new, load_profile(profile))


def _source_date(given: Optional[str], source) -> str:
    from datetime import date, datetime

    if given:
        try:
            return date.fromisoformat(given).isoformat()
        except ValueError:
            raise InputError(f"--source-date '{given}' is not a date", fix="give YYYY-MM-DD") from None
    path = Path(str(source).split("|")[0])
    if not path.exists():
        raise InputError("the file does not exist", path=path, fix="check the path")
    return datetime.fromtimestamp(path.stat().st_mtime).date().isoformat()


def _emit_json(data, path) -> None:
    import tempfile

    from ..report.outputs import publish

    text = json.dumps(data, indent=2, default=str) + "\n"
    if path == "-":
        sys.stdout.write(text)
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, staged = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".json", dir=target.parent)
    with open(handle, "w", encoding="utf-8") as out:
        out.write(text)
    try:
        publish(staged, target)
    finally:
        Path(staged).unlink(missing_ok=True)


def _run_import(args) -> int:
    progress = Progress(_bar) if not args.quiet and sys.stderr.isatty() else SILENT
    done = import_reference(args.layer, args.source, args.target, schema=args.schema, fmt=args.format,
                            geometry=args.geometry, mapping=args.mapping,
                            source_date=args.source_date, profile=args.profile, progress=progress)
    out = sys.stderr if args.json == "-" else sys.stdout
    if not args.quiet:
        if progress is not SILENT:
            sys.stderr.write("\r" + " " * 78 + "\r")
        version = done["version"]
        for line in done["report"]:
            print(line, file=out)
        if done["new_version"]:
            print(f"{args.layer}: imported as version {version['version']} "
                  f"({version['feature_count']} features) into {done['store']}", file=out)
        else:
            print(f"{args.layer}: this source was already imported as version {version['version']} "
                  f"(same sha256 {version['sha256'][:12]}...); nothing changed", file=out)
    if args.json:
        _emit_json(done, args.json)
    return 0


def _run_status(args) -> int:
    from ..reference.store import open_store, status

    result = status(open_store(args.target, args.schema), load_profile(args.profile))
    if args.json:
        _emit_json(result, args.json)
    if args.json != "-":
        print(f"reference layers in {result['store']}")
        for entry in result["layers"]:
            if entry["current"] is None:
                print(f"  {entry['layer']:<16} none")
                continue
            current = entry["versions"][-1]
            print(f"  {entry['layer']:<16} version {current['version']} of {len(entry['versions'])}, "
                  f"{current['feature_count']} features, source {Path(str(current['source'])).name} "
                  f"dated {current['source_date'] or 'unknown'} ({_age(entry['source_days_old'])}), "
                  f"imported {str(current['imported_at'])[:10]} ({_age(entry['imported_days_ago'])})"
                  + (f", listing cycle {entry['listing_cycle']}" if "listing_cycle" in entry else ""))
    for warning in result["warnings"]:
        print(f"  WARNING {warning}", file=sys.stderr if args.json == "-" else sys.stdout)
    return 0


def _run_diff(args) -> int:
    diff = diff_reference(args.layer, args.target, schema=args.schema, old=args.old, new=args.new,
                          profile=args.profile)
    if args.output:
        write_diff_layer(diff, args.output)
    if args.json:
        _emit_json(diff.to_dict(), args.json)
    if args.json != "-":
        print("\n".join(diff.table()))
        if args.output:
            print(f"  wrote {args.output}")
    return 0


def write_diff_layer(diff, path) -> None:
    """The diff as GeoPackage layer ``<layer>_diff`` at ``path`` (written whole or not at all)."""
    from ..report.outputs import publish
    from ..io.vector import write_geopackage

    path = Path(path)
    if path.suffix.lower() != ".gpkg":
        raise InputError("--output must name a .gpkg file", path=path, fix="use a name ending in .gpkg")
    path.parent.mkdir(parents=True, exist_ok=True)
    staged = path.with_name(f".{path.stem}.staged.gpkg")
    try:
        write_geopackage(staged, {f"{diff.layer}_diff": diff.frame()})
        publish(str(staged), str(path))
    finally:
        staged.unlink(missing_ok=True)


def _age(days) -> str:
    return "age unknown" if days is None else f"{days} days ago"


def _bar(fraction: float, message: str) -> None:
    from .app import _bar as review_bar  # the one progress bar (cli imports this module)

    review_bar(fraction, message)
