"""The review: runs every check on a site plan and gathers measurements and findings."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Optional, Sequence

from .about import TOOL_NAME, __version__
from .checks.applicability import check_applicability, disturbed_area
from .checks.condition_a import check_condition_a, normalise_name, receiving_waters, water_id
from .charts import LazyCharts
from .checklist.contents import check_contents, read_confirmations
from .checks.conditions import check_condition_b, check_condition_c
from .checks.easements import check_easement_coverage
from .errors import InputError
from .findings import MAP_RULES, NEEDS_REVIEW, WARN, Finding, HasFindings
from .checks.hydrology import check_hydrology_pre_post, hydrology_charts, land_cover_from_raster
from .checks.map_scale import LayoutMap, Sheet, check_site_map_scale, read_sheets
from .checks.phasing import review_phasing, timeline_chart
from .checks.postconstruction import check_postconstruction_controls
from .profile import RulesProfile, load_profile
from .progress import SILENT, Progress
from .reference.read import Reference, open_reference, site_bounds
from .checks.site_boundary import check_disturbance_outside_site
from .siteplan.plan import SitePlan, crs_label, load_site_plan
from .checks.wetlands import check_wetlands

__all__ = ["Review", "review_site", "review_paths", "review_easements", "review_reference",
           "review_checklist", "NOT_IMPLEMENTED"]

# Map checks still to come, each with what a reviewer must do meanwhile.
NOT_IMPLEMENTED = {
}


@dataclass
class Review(HasFindings):
    """Everything one review found: measurements, conditions and findings."""

    profile: RulesProfile
    site: SitePlan
    measurements: dict
    conditions: dict
    swppp_required: Optional[bool]  # None in one check's result (review_easements)
    findings: list[Finding] = field(default_factory=list)
    reference: Optional[dict] = None
    charts: dict = field(default_factory=dict)  # name -> charts.Chart (a LazyCharts), drawn when read
    hydrology: Optional[object] = None  # hydrology.HydrologyResult, for the report
    records: Optional[dict] = None  # construction-phase records checked, when given
    checklist: Optional[list] = None  # the SWPPP contents checklist (checklist.build_checklist)
    wetlands: Optional[object] = None  # reference wetlands read around the site (report's map)
    reviewed_on: str = field(default_factory=lambda: date.today().isoformat())

    @property
    def area_crs(self) -> str:
        return crs_label(self.site.area_crs)

    def to_dict(self) -> dict:
        out = {
            "tool": {"name": TOOL_NAME, "version": __version__},
            "profile": self.profile.name,
            "reviewed_on": self.reviewed_on,
            "site": {"name": self.site.name, "path": Path(self.site.path).name,
                     "input_crs": self.site.input_crs, "area_crs": self.area_crs},
            "project": _json_safe(self.site.project),
            "measurements": self.measurements,
            "conditions": {"swppp_required": self.swppp_required,
                           **{k: c.to_dict() for k, c in self.conditions.items()}},
            "findings": [f.to_dict() for f in self.findings],
        }
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
        return out


def review_paths(site: str | Path, reference: str | Path | None = None,
                 profile: str | Path | RulesProfile | None = None, sheets: Sequence = (),
                 progress: Optional[Progress] = None, records: Optional[dict] = None,
                 layout_maps: Optional[Sequence[LayoutMap]] = None,
                 land_cover_rasters: Optional[dict] = None,
                 confirmations: str | Path | None = None, mapping=None) -> Review:
    """Load the site plan (and reference layers, plan sheets) from files and review it.

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
    """
    progress = progress or SILENT
    rules = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    confirmed = read_confirmations(confirmations) if confirmations else ()
    progress.step(0.0, f"reading site plan {Path(site).name}")
    plan = load_site_plan(site, rules, mapping=mapping)
    opened = None
    if reference is not None:
        progress.step(0.3, "opening reference layers")
        opened = open_reference(reference)
    land_cover = {}
    drainage = plan.layer("drainage_area")
    for condition, raster in (land_cover_rasters or {}).items():
        if raster and drainage is not None:
            progress.step(0.35, f"reading land-cover raster {Path(raster).name}")
            land_cover[condition] = land_cover_from_raster(raster, drainage)
    review = review_site(plan, rules, reference=opened, sheets=read_sheets(sheets, progress),
                         progress=progress, layout_maps=layout_maps,
                         land_cover=land_cover, confirmations=confirmed)
    if records:
        add_records(review, records, progress)
    return review


def add_records(review: Review, records: dict, progress: Optional[Progress] = None) -> None:
    """Check the construction-phase records over the site plan's period; add their findings."""
    from .records.inspections import check_record_files

    if not records.get("log") or not records.get("rain"):
        raise InputError("the inspection log and the rainfall record are both needed to check "
                         "construction-phase records", fix="give both", parameter=("log", "rain"))
    result = check_record_files(review.profile, site=review.site, progress=progress, **records)
    review.findings += result.findings
    review.records = {**result.records, "period": result.period,
                      "measurements": result.measurements}


def review_easements(site: str | Path, profile: str | Path | RulesProfile | None = None,
                     progress: Optional[Progress] = None) -> Review:
    """Only ``easement_coverage`` (``swppp:easement_coverage``), the analysis the review runs.

    The result holds that rule's findings and the ``uncovered_smp_sq_ft`` measurement.
    """
    progress = progress or SILENT
    rules = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    progress.step(0.0, f"reading site plan {Path(site).name}")
    plan = load_site_plan(site, rules)
    progress.step(0.5, "checking maintenance easements over the SMPs")
    findings, uncovered_smp_sq_ft = check_easement_coverage(plan, rules)
    progress.step(0.9, "gathering findings")
    return Review(profile=rules, site=plan,
                  measurements={"uncovered_smp_sq_ft": uncovered_smp_sq_ft}, conditions={},
                  swppp_required=None, findings=findings)


def review_reference(site: str | Path, reference, profile: str | Path | RulesProfile | None = None,
                     progress: Optional[Progress] = None,
                     rules: Sequence[str] = ("condition_a", "wetlands")) -> Review:
    """Only ``condition_a`` and/or ``wetlands`` (``swppp:condition_a``, ``swppp:wetlands``), the
    analysis the review runs; the reference layers those rules need are read around the site."""
    progress = progress or SILENT
    rules_profile = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    progress.step(0.0, f"reading site plan {Path(site).name}")
    plan = load_site_plan(site, rules_profile)
    opened = open_reference(reference) if reference is not None else None
    progress.step(0.4, "reading reference layers around the site")
    disturbed = disturbed_area(plan)
    a_findings, a, wetland_findings, measurements, _ = _reference_checks(
        plan, disturbed, rules_profile, opened, rules)
    progress.step(0.9, "gathering findings")
    return Review(profile=rules_profile, site=plan,
                  measurements=measurements if "wetlands" in rules else {},
                  conditions={"A": a} if "condition_a" in rules else {}, swppp_required=None,
                  findings=a_findings + wetland_findings,
                  reference=opened.describe() if opened is not None else None)


def review_checklist(site: str | Path, reference=None,
                     profile: str | Path | RulesProfile | None = None,
                     confirmations: str | Path | None = None,
                     progress: Optional[Progress] = None) -> Review:
    """Only the SWPPP contents checklist and its checks (``swppp:checklist``), as the review
    runs them: the conditions it rests on (A from ``reference`` where given), the checklist,
    ``swppp_contents``, contractor certifications, guarantees and ESC practices."""
    progress = progress or SILENT
    rules = profile if isinstance(profile, RulesProfile) else load_profile(profile)
    confirmed = read_confirmations(confirmations) if confirmations else ()
    progress.step(0.0, f"reading site plan {Path(site).name}")
    plan = load_site_plan(site, rules)
    progress.step(0.4, "deciding the conditions")
    disturbed = disturbed_area(plan)
    _applicability, required = check_applicability(plan, disturbed, rules)
    _b_finding, b = check_condition_b(plan, disturbed, rules)
    _c_finding, c = check_condition_c(plan, disturbed, rules)
    opened = open_reference(reference) if reference is not None else None
    a = _reference_checks(plan, disturbed, rules, opened, ("condition_a",))[1]
    progress.step(0.7, "filling in the SWPPP contents checklist")
    contents = check_contents(plan, {"A": a, "B": b, "C": c}, rules, required, confirmed)
    progress.step(0.9, "gathering findings")
    return Review(profile=rules, site=plan,
                  measurements={"disturbed_acres": disturbed.acres,
                                "esc_practices": contents.esc_practices},
                  conditions={"A": a, "B": b, "C": c}, swppp_required=required,
                  findings=contents.findings,
                  reference=opened.describe() if opened is not None else None,
                  checklist=contents.checklist)

def review_site(site: SitePlan, profile: RulesProfile, reference=None,
                sheets: Sequence[Sheet | str | Path] = (), progress: Optional[Progress] = None,
                layout_maps: Optional[Sequence[LayoutMap]] = None,
                land_cover: Optional[dict] = None, confirmations: Sequence = ()) -> Review:
    """Run every check on a loaded site plan (plan sheets given as :class:`Sheet` or paths).

    ``reference`` is a :class:`~analysis.reference.read.Reference` (or its source: a GeoPackage
    path), read once around the site for Condition A and wetlands; None leaves those two
    ``needs_review``.
    """
    progress = progress or SILENT
    sheets = [read for s in sheets for read in ([s] if isinstance(s, Sheet) else read_sheets([s]))]
    progress.step(0.4, "measuring disturbed area")
    disturbed = disturbed_area(site)
    findings = []
    applicability, required = check_applicability(site, disturbed, profile)
    findings.append(applicability)
    progress.step(0.6, "deciding Conditions B and C")
    condition_b, b = check_condition_b(site, disturbed, profile)
    condition_c, c = check_condition_c(site, disturbed, profile)
    findings += [condition_b, condition_c]
    progress.step(0.7, "checking disturbance against the site boundary")
    outside, outside_sq_ft = check_disturbance_outside_site(site, disturbed, profile)
    findings.append(outside)
    findings += [_repair_finding(r, profile) for r in site.repairs]
    progress.step(0.75, "sweeping the phasing timeline")
    phasing, phasing_findings = review_phasing(site.layer("disturbance"), profile,
                                               waiver=bool(site.project.get("five_acre_waiver")),
                                               progress=progress)
    findings += phasing_findings
    progress.step(0.8, "checking site map scales")
    stated = site.layer("layout_scale")
    scale_findings, map_scales = check_site_map_scale(
        sheets, stated, layout_maps, profile, area_crs=site.area_crs,
        stated_labels=site.labels("layout_scale") if stated is not None else ())
    findings += scale_findings
    progress.step(0.82, "reading reference layers around the site")
    reference = open_reference(reference) if reference is not None else None
    a_findings, a, wetland_findings, wetland_measurements, wetlands = _reference_checks(
        site, disturbed, profile, reference)
    findings += a_findings + wetland_findings
    findings.append(check_postconstruction_controls(site, {"A": a, "B": b, "C": c}, profile))
    progress.step(0.85, "checking maintenance easements over the SMPs")
    easement_findings, uncovered_smp_sq_ft = check_easement_coverage(site, profile)
    findings += easement_findings
    findings += [Finding(rule, NEEDS_REVIEW, profile.section(rule),
                         f"not implemented yet in this version: {todo}")
                 for rule, todo in NOT_IMPLEMENTED.items()]
    progress.step(0.88, "computing TR-55 runoff before and after development")
    hydrology = check_hydrology_pre_post(site.layers, {"A": a, "B": b, "C": c}, profile,
                                         land_cover)
    findings += hydrology.findings
    progress.step(0.89, "filling in the SWPPP contents checklist")
    contents = check_contents(site, {"A": a, "B": b, "C": c}, profile, required, confirmations)
    findings += contents.findings
    progress.step(0.9, "gathering findings")
    measurements = {
        "disturbed_acres": disturbed.acres,
        "disturbed_outside_site_sq_ft": outside_sq_ft,
        "uncovered_smp_sq_ft": uncovered_smp_sq_ft,
        **phasing.measurements(),
        **hydrology.measurements(),
        "site_map_scales": map_scales,
        **wetland_measurements,
        "esc_practices": contents.esc_practices,
    }
    order = {rule: i for i, rule in enumerate(MAP_RULES)}
    findings.sort(key=lambda f: order.get(f.rule, len(order)))
    return Review(profile=profile, site=site, measurements=measurements,
                  conditions={"A": a, "B": b, "C": c}, swppp_required=required,
                  findings=findings,
                  reference=reference.describe() if reference is not None else None,
                  charts=LazyCharts(lambda: _phasing_charts(phasing, profile),
                                    lambda: hydrology_charts(hydrology)),
                  hydrology=hydrology, checklist=contents.checklist, wetlands=wetlands)


def _reference_checks(site: SitePlan, disturbed, profile: RulesProfile,
                      reference: Optional[Reference], rules=("condition_a", "wetlands")):
    """Condition A and wetlands (those of ``rules``), from reference layers read once around
    the site: (Condition A findings, Condition A, wetlands findings, wetland measurements,
    the wetlands read or None)."""
    a_findings, a, wetland_findings, measurements, wetlands = [], None, [], {}, None
    if reference is None:
        if "condition_a" in rules:
            a_findings, a = check_condition_a(site, disturbed, profile, None, None, None, None)
        if "wetlands" in rules:
            wetland_findings, measurements = check_wetlands(site, disturbed, profile, None)
        return a_findings, a, wetland_findings, measurements, wetlands
    bounds = site_bounds(site, profile)
    crs = site.area_crs
    if "wetlands" in rules:
        wetlands = reference.read("wetlands", bounds, crs, needed_for="the wetlands check")
        wetland_findings, measurements = check_wetlands(site, disturbed, profile, wetlands)
    if "condition_a" in rules:
        a_findings, a = _condition_a(site, disturbed, profile, reference, bounds)
    return a_findings, a, wetland_findings, measurements, wetlands


def _condition_a(site, disturbed, profile, reference, bounds):
    crs = site.area_crs
    needed = "Condition A (SWPPP C(1))"
    sheds = reference.read("tmdl_watersheds", bounds, crs, needed_for=needed)
    receiving = receiving_waters(site, disturbed, None, profile)
    if receiving.route == "none":  # no discharge point names its water: the catchments do
        catchments = reference.read("catchments", bounds, crs, needed_for=needed)
        receiving = receiving_waters(site, disturbed, catchments, profile)
    by_id = reference.lookup("impaired_waters", "waterbody_id", receiving.ids,
                             normalise=water_id, needed_for=needed)
    by_name = reference.lookup("impaired_waters", "name", receiving.names,
                               normalise=normalise_name, needed_for=needed)
    return check_condition_a(site, disturbed, profile, receiving, by_id, by_name, sheds)


def _phasing_charts(phasing, profile: RulesProfile) -> dict:
    chart = timeline_chart(phasing, profile.phasing.max_concurrent_acres)
    return {"phasing_timeline": chart} if chart else {}


def _repair_finding(repair, profile: RulesProfile) -> Finding:
    return Finding("input_geometry", WARN, profile.section("input_geometry"),
                   f"{repair.feature} had an invalid geometry ({repair.reason}); it was repaired "
                   f"with make_valid and reviewed as repaired: correct it in the plan",
                   features=[repair.feature], geometry=repair.geometry)


def _json_safe(row: dict) -> dict:
    out = {}
    for key, value in row.items():
        if hasattr(value, "item"):  # numpy scalar
            value = value.item()
        out[key] = value if isinstance(value, (str, int, float, bool, type(None))) else str(value)
    return out
