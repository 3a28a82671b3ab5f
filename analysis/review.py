"""The review: runs the registered checks on a site plan and gathers their results."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Optional

from .about import TOOL_NAME, __version__
from .charts import LazyCharts
from .checklist.contents import read_confirmations
from .checklist.not_checked import not_checked
from .checks.context import ReviewContext
from .checks.gating import missing_reference_layers, not_regulated, on_layers_present
from .checks.hydrology import land_cover_from_raster
from .checks.map_scale import LayoutMap, Sheet, read_sheets
from .crs import crs_label
from .errors import InputError
from .findings import MAP_RULES, Finding, HasFindings
from .profile import RulesProfile, load_profile
from .progress import SILENT, Progress
from .reference.read import REFERENCE_LAYERS, open_reference
from .registry import select
from .siteplan.plan import SitePlan, load_site_plan

__all__ = ["Review", "review_site", "review_paths", "MapLayers"]

log = logging.getLogger(__name__)

# The progress bar's share of loading the files (review_paths), then of reading plan sheets
# given as paths (review_site); the checks share the rest by their weights.
_LOADING = 0.3
_SHEETS = 0.05


@dataclass
class Review(HasFindings):
    """Everything one review found: measurements, conditions and findings."""

    profile: RulesProfile
    site: SitePlan
    measurements: dict
    conditions: dict
    swppp_required: Optional[bool]  # None where applicability did not run (review(rules=...))
    findings: list[Finding] = field(default_factory=list)
    reference: Optional[dict] = None
    # name -> charts.Chart (a LazyCharts), drawn when read
    charts: MutableMapping[str, Any] = field(default_factory=dict)
    hydrology: Optional[object] = None  # hydrology.HydrologyResult, for the report
    records: Optional[dict] = None  # construction-phase records checked, when given
    checklist: Optional[list] = None  # the SWPPP contents checklist (checklist.build_checklist)
    wetlands: Optional[object] = None  # reference wetlands read around the site (report's map)
    # Every reference layer read around the site, name -> frame (the report's map and inset):
    # a MapLayers, which reads the layers no check read only when the map looks at them
    reference_layers: Mapping = field(default_factory=dict)
    reviewed_on: str = field(default_factory=lambda: date.today().isoformat())
    # Recorded as a review round (``swppp review --round``; analysis.rounds): the JSON's
    # ``round`` and each finding's ``round``, in the findings' order. None: neither is written.
    rounds: Optional[dict] = None

    @property
    def area_crs(self) -> str:
        return crs_label(self.site.area_crs)

    def to_dict(self) -> dict:
        out = {
            "tool": {"name": TOOL_NAME, "version": __version__},
            "profile": self.profile.name,
            "reviewed_on": self.reviewed_on,
            "site": {
                "name": self.site.name,
                "path": Path(self.site.path).name,
                "input_crs": self.site.input_crs,
                "area_crs": self.area_crs,
            },
            "project": _json_safe(self.site.project),
            "measurements": self.measurements,
            "conditions": {
                "swppp_required": self.swppp_required,
                **{k: c.to_dict() for k, c in self.conditions.items()},
            },
            "findings": [f.to_dict() for f in self.findings],
        }
        if self.swppp_required is not None:  # a whole review: what no check covers, said
            out["not_checked"] = not_checked()
        if self.swppp_required is None:  # one check's result: only the conditions it decided
            out["conditions"] = {k: c.to_dict() for k, c in self.conditions.items()}
            if not out["conditions"]:
                del out["conditions"]
        if self.reference is not None:
            out["reference"] = self.reference
        if self.records is not None:
            out["records"] = self.records
        if self.checklist is not None:
            out["checklist"] = self.checklist
        if self.rounds is not None:
            out["round"] = self.rounds["round"]
            if "comparison" in self.rounds:
                out["comparison"] = self.rounds["comparison"]
            for finding, held in zip(out["findings"], self.rounds["findings"]):
                finding["round"] = held  # type: ignore[index]
        return out


def review_paths(
    site: str | Path,
    reference: str | Path | None = None,
    profile: str | Path | RulesProfile | None = None,
    sheets: Sequence = (),
    progress: Optional[Progress] = None,
    records: Optional[dict] = None,
    layout_maps: Optional[Sequence[LayoutMap]] = None,
    land_cover_rasters: Optional[dict] = None,
    confirmations: str | Path | None = None,
    mapping=None,
    rules: Optional[Sequence[str]] = None,
) -> Review:
    """Load the site plan (and reference layers, plan sheets) from files and review it
    (:func:`review_site`).

    ``records`` (optional): the construction-phase records, the keyword arguments of
    ``inspections.check_record_files`` (``log``, ``rain``, ``notices``, ``traps``, ``station``,
    ``rain_units``); their findings join the review's, over the site plan's period.
    ``layout_maps`` are the print-layout maps the QGIS side collects; None (the command line)
    means print layouts were not read.
    ``land_cover_rasters`` ({"pre": path, "post": path}, either optional) are NLCD rasters that
    stand in for the site plan's land_cover_pre / land_cover_post layers.
    ``confirmations`` (optional): the reviewer's checklist confirmations, a JSON file or an
    earlier findings GeoPackage (``checklist.read_confirmations``).
    ``mapping`` (a ``siteplan.mapping.FieldMap``): the site plan's own layer and field names.
    ``rules`` (optional): only these checks, as :func:`review_site` takes them.
    """
    progress = progress or SILENT
    loading = progress.sub(0.0, _LOADING)
    profile = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    confirmed = read_confirmations(confirmations) if confirmations else ()
    loading.step(0.0, f"reading site plan {Path(site).name}")
    plan = load_site_plan(site, profile, mapping=mapping)
    opened = None
    if reference is not None:
        loading.step(0.6, "opening reference layers")
        opened = open_reference(reference)
    land_cover = {}
    drainage = plan.layer("drainage_area")
    for condition, raster in (land_cover_rasters or {}).items():
        if raster and drainage is not None:
            loading.step(0.7, f"reading land-cover raster {Path(raster).name}")
            land_cover[condition] = land_cover_from_raster(raster, drainage)
    return review_site(
        plan,
        profile,
        reference=opened,
        sheets=read_sheets(sheets, loading.sub(0.8, 1.0)),
        progress=progress.sub(_LOADING, 1.0),
        layout_maps=layout_maps,
        land_cover=land_cover,
        confirmations=confirmed,
        rules=rules,
        records=records,
    )


def review_site(
    site: SitePlan,
    profile: RulesProfile,
    reference=None,
    sheets: Sequence[Sheet | str | Path] = (),
    progress: Optional[Progress] = None,
    layout_maps: Optional[Sequence[LayoutMap]] = None,
    land_cover: Optional[dict] = None,
    confirmations: Sequence = (),
    *,
    rules: Optional[Sequence[str]] = None,
    records: Optional[dict] = None,
) -> Review:
    """Run the registered checks (``registry``) on a loaded site plan.

    ``rules`` (check names or rule ids, e.g. ``["easement_coverage"]``; None: every check)
    runs only those checks, and the checks whose conditions they read: the result holds the
    findings of the checks asked for, the measurements and conditions of every check run, and
    ``swppp_required`` only where ``applicability`` ran (None otherwise: one check's result).
    ``reference`` is a :class:`~analysis.reference.read.Reference` (or its source: a
    GeoPackage path), read once around the site; None leaves Condition A and wetlands
    ``needs_review``. ``sheets`` are :class:`Sheet` or paths; ``records`` the keyword arguments
    of ``inspections.check_record_files`` (the records check runs only when given them).
    Each check reports its progress in its own part of the bar, in order: it only goes forward.
    """
    progress = progress or SILENT
    chosen = select(rules)
    paths = [s for s in sheets if not isinstance(s, Sheet)]
    read = iter(read_sheets(paths, progress.sub(0.0, _SHEETS)) if paths else ())
    context = ReviewContext(
        site=site,
        profile=profile,
        reference=open_reference(reference) if reference is not None else None,
        sheets=[s if isinstance(s, Sheet) else next(read) for s in sheets],
        layout_maps=layout_maps,
        land_cover=land_cover or {},
        confirmations=confirmations,
        records=records or None,
    )
    chosen = [
        (check, asked)
        for check, asked in chosen
        if check.only_with is None or getattr(context, check.only_with)
    ]
    findings: list[Finding] = []
    measurements: dict = {}
    extra: dict = {}
    charts = []
    unregulated = ""  # the applicability finding's reason, where the site is not regulated
    total = sum(check.weight for check, _asked in chosen) or 1.0
    done = 0.0
    # One review's reads of a GeoPackage reference through one SQLite connection.
    with context.reference.opened() if context.reference is not None else nullcontext():
        for check, asked in chosen:
            start = _SHEETS + (1.0 - _SHEETS) * done / total
            done += check.weight
            part = progress.sub(start, min(1.0, _SHEETS + (1.0 - _SHEETS) * done / total))
            part.step(0.0, check.doing or f"checking {check.name}")
            missing = missing_reference_layers(check, context.reference)
            if check.regulated and context.conditions.get("swppp_required") is False:
                result = not_regulated(check, unregulated, profile)
            elif missing and context.reference is not None:  # (missing: only with a reference)
                # a store without a layer serves the checks it can (issue 34, 4)
                result = on_layers_present(check, missing, context, part)
            else:
                result = check.run(context, part)
            if check.name == "applicability":
                unregulated = result.findings[0].message
            if asked:
                findings += result.findings
            measurements.update(result.measurements)
            context.conditions.update(result.conditions)
            if "charts" in result.extra:  # drawn when the report reads them
                charts.append(result.extra["charts"])
            extra.update({k: v for k, v in result.extra.items() if k != "charts"})
    progress.step(1.0, "gathering findings")
    order = {rule: i for i, rule in enumerate(MAP_RULES)}
    findings.sort(key=lambda f: order.get(f.rule, len(order)))
    conditions = {
        k: context.conditions[k] for k in sorted(context.conditions) if k != "swppp_required"
    }  # A, B, C
    described = context.reference.describe() if context.reference is not None else None
    return Review(
        profile=profile,
        site=site,
        measurements=measurements,
        conditions=conditions,
        swppp_required=context.conditions.get("swppp_required"),
        findings=findings,
        reference=described,
        charts=LazyCharts(*charts) if charts else {},
        hydrology=extra.get("hydrology"),
        records=extra.get("records"),
        checklist=extra.get("checklist"),
        wetlands=extra.get("wetlands"),
        reference_layers=MapLayers(context),
    )


class MapLayers(Mapping):
    """A review's reference layers around the site for the report's map and inset, name ->
    frame: those the checks read, and the others the source has, read at the first look.

    A review written as JSON alone (or a findings GeoPackage) never looks, so it reads no
    layer beyond what its checks read (issue 23: the one-site path). The reference must still
    be readable when the map is drawn (the review's outputs are written before its inputs go).
    """

    def __init__(self, context: ReviewContext):
        self._context: Optional[ReviewContext] = context
        self._layers: dict = {}

    def _all(self) -> dict:
        if self._context is not None:
            self._layers = _map_layers(self._context)
            self._context = None  # read once; the site plan and the rest are not held on to
        return self._layers

    def __getitem__(self, name: str):
        return self._all()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())


def _map_layers(context: ReviewContext) -> dict:
    """Every spatial reference layer around the site, for the report's map: those the checks
    read, and the others the source has (read after the JSON's record of what was read, when
    the map first looks: :class:`MapLayers`). A layer no check read and the map cannot draw
    (impaired waters kept without shapes, looked up by id and name; a copy of a QGIS layer's
    attribute table) is left off the map: it decided nothing."""
    if context.reference is not None:
        read = context.layers_read()
        for spec in REFERENCE_LAYERS:
            if spec.geometry is None or spec.name in read or not context.reference.has(spec.name):
                continue
            try:
                context.read(spec.name, needed_for="the report's map")
            except InputError as err:
                log.info("reference layer %s is not drawn on the map: %s", spec.name, err)
    return context.layers_read()


def _json_safe(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if hasattr(value, "item"):  # numpy scalar
            value = value.item()
        out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return out
