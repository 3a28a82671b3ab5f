"""The reference store's operations both front ends call: import a source as a new version, diff two."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from ..dates import require_date
from ..errors import InputError
from ..profile import load_profile
from ..progress import SILENT, Progress
from .derive import METHOD
from .importer import StormwaterReading, stream_candidate
from .store import is_postgres

__all__ = [
    "import_reference",
    "diff_reference",
    "write_diff_layer",
    "write_rejections",
    "default_rejections_path",
]


def import_reference(
    layer: str,
    source,
    target,
    *,
    schema: Optional[str] = None,
    fmt: str = "ogr",
    geometry=None,
    mapping=None,
    source_date: Optional[str] = None,
    profile=None,
    progress: Optional[Progress] = None,
    causes=None,
    accept_rejections: bool = False,
    rejections=None,
    derive_watersheds: bool = False,
) -> dict:
    """Validate ``source`` and store it as a new version of ``layer``; what was done, as a dict.

    The one import the CLI and the QGIS algorithm both call. Rejected features are written to
    ``rejections`` (CSV, or a GeoPackage layer ``<layer>_rejected``; by default beside a
    GeoPackage target); where they exceed the profile's limits the import is refused unless
    ``accept_rejections``. The source date is the one given, else the one the source states
    (ATTAINS cycle or action date, GeoPackage/DBF/zip metadata); a source that states none
    needs one given. ``derive_watersheds``: TMDL watersheds derived from the store's current
    ``catchments`` (analysis.reference.derive), the method recorded in ``layer_versions``.
    (Sites re-screened around the import: :mod:`analysis.screen.rescreen`.)
    """
    from .connect import open_store

    progress = progress or SILENT
    rules = load_profile(profile)
    store = open_store(target, schema)
    given = _given_date(source_date)
    progress.step(0.0, f"reading {Path(str(source).split('|')[0]).name}")
    catchments, method = None, None
    if derive_watersheds:
        if layer != "tmdl_watersheds" or fmt != "attains" or not geometry:
            raise InputError(
                "watersheds are derived for tmdl_watersheds from an ATTAINS actions "
                "response with the assessment units as the geometry file",
                parameter="derive_watersheds",
                fix="give the attains format with the assessment units as the "
                "geometry file, or do not derive the watersheds",
            )
        row = store.version_row("catchments", None)
        catchments = store.read_version("catchments", row.version)
        method = METHOD.format(version=row.version)
    candidate = stream_candidate(
        layer,
        source,
        fmt,
        geometry=geometry,
        mapping=mapping,
        synonyms=dict(rules.reference.pollutant_synonyms),
        causes=causes,
        reading=StormwaterReading(
            point_source=rules.reference.tmdl_point_source_is_stormwater,
            nonpoint_source=rules.reference.tmdl_nonpoint_source_is_stormwater,
        ),
        catchments=catchments,
        categories=rules.categories,
    )
    try:
        candidate.method = method
        report = candidate.report
        if given is not None:
            candidate.source_date, candidate.source_date_from = given, "given"
        elif candidate.source_date is None:
            raise InputError(
                "the source does not state its date, and none was given",
                path=str(source),
                parameter="source_date",
                fix="give the date the source was published (YYYY-MM-DD), as its "
                "download page or metadata says",
            )
        listed: list = []  # the rejections file, once written

        def check_rejections() -> None:
            """Once every feature is written (a streamed source's counts are complete only
            then), inside the store's transaction: list the rejected features, and refuse
            (the transaction is rolled back) over the profile's limits unless accepted."""
            if report.rejected:
                listed.append(Path(rejections) if rejections else default_rejections_path(target, layer))
                write_rejections(candidate, listed[0])
            over = _over_limits(report, rules)
            if over and not accept_rejections:
                raise InputError(
                    f"{len(report.rejected)} of {report.read} feature(s) rejected "
                    f"({len(report.rejected_with_tmdl)} with a TMDL): {over}; "
                    f"nothing was imported. The rejected features are listed in "
                    f"{listed[0] if listed else None}",
                    path=str(source),
                    parameter="accept_rejections",
                    fix="correct the source (or its geometry file) and import again, "
                    "or accept the loss explicitly",
                )
            candidate.rejections_accepted = bool(over) and accept_rejections

        candidate.on_written = check_rejections
        progress.step(0.1, f"writing {candidate.expected or 'the'} features")
        result = store.import_candidate(candidate, source_date=candidate.source_date, progress=progress)
    finally:
        candidate.close()
    progress.step(1.0, "done")
    lines = report.lines()
    if listed:
        lines.append(
            f"  rejected features listed in {listed[0]}"
            + (" (accepted: --accept-rejections)" if candidate.rejections_accepted else "")
        )
    return {
        "layer": layer,
        "store": store.label,
        "new_version": result.new,
        "version": result.version.to_dict(),
        "validation": report.to_dict(),
        "rejections_file": str(listed[0]) if listed else None,
        "report": lines,
    }


def _over_limits(report, profile) -> Optional[str]:
    """Which of the profile's rejection limits the report exceeds (None: within them)."""
    reasons = []
    with_tmdl = len(report.rejected_with_tmdl)
    limit = profile.reference.max_rejected_with_tmdl
    if with_tmdl > limit:
        reasons.append(
            f"{with_tmdl} rejected unit(s) have a TMDL, more than the profile's "
            f"[reference] max_rejected_with_tmdl = {limit}"
        )
    share = 100.0 * len(report.rejected) / report.read if report.read else 0.0
    if share > profile.reference.max_rejected_percent:
        reasons.append(
            f"{share:.1f}% rejected, more than the profile's [reference] "
            f"max_rejected_percent = {profile.reference.max_rejected_percent:g}"
        )
    return "; ".join(reasons) or None


def default_rejections_path(target, layer: str) -> Path:
    """Where the rejected features are listed by default: beside a GeoPackage target, else in
    the working directory."""
    name = f"{layer}_rejected.csv"
    if is_postgres(target):
        return Path(name)
    target = Path(str(target))
    return target.with_name(f"{target.stem}.{name}")


def write_rejections(candidate, path) -> None:
    """The rejected features as a CSV (feature, reason, has_tmdl) or a GeoPackage layer
    ``<layer>_rejected`` (with the geometry rejected, where it had one), written whole."""
    import geopandas as gpd

    from ..io.csv_cells import write_csv
    from ..io.files import staged
    from ..io.vector import write_geopackage

    path = Path(path)
    report = candidate.report
    rows = [
        {"feature": label, "reason": reason, "has_tmdl": int(label in report.tmdl_ids)}
        for label, reason in report.rejected
    ]
    with staged(path) as temp:
        if path.suffix.lower() == ".gpkg":
            geoms = [report.rejected_geometries.get(r["feature"]) for r in rows]
            frame = gpd.GeoDataFrame(rows, geometry=geoms, crs=candidate.crs)
            write_geopackage(temp, {f"{candidate.layer}_rejected": frame})
        else:
            write_csv(temp, ("feature", "reason", "has_tmdl"), rows)


def diff_reference(
    layer: str, target, *, schema=None, old=None, new=None, profile=None, match=None, progress=None
):
    """The :class:`~analysis.reference.diff.LayerDiff` of ``layer`` in the store at ``target``."""
    from .connect import open_store
    from .diff import diff_versions

    return diff_versions(
        open_store(target, schema), layer, old, new, load_profile(profile), match, progress=progress
    )


def _given_date(given: Optional[str]) -> Optional[str]:
    day = (
        require_date(given, "the source date", fix="give YYYY-MM-DD", parameter="source_date")
        if given
        else None
    )
    return None if day is None else day.isoformat()  # blank text (a QGIS field) is no date


def write_diff_layer(diff, path) -> None:
    """The diff as GeoPackage layer ``<layer>_diff`` at ``path`` (written whole or not at all)."""
    from ..io.files import staged
    from ..io.vector import write_geopackage

    path = Path(path)
    if path.suffix.lower() != ".gpkg":
        raise InputError(
            "the changes layer must be a GeoPackage (.gpkg)",
            path=path,
            fix="use a name ending in .gpkg",
            parameter="output",
        )
    with staged(path) as temp:
        write_geopackage(temp, {f"{diff.layer}_diff": diff.frame()})
