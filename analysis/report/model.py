"""The report's one model: its sections, tables, paragraphs and figures, each label written once.

:func:`build_report` turns a review into a :class:`Report`; the HTML renderer
(:mod:`analysis.report.html`, Jinja2) and the PDF writer (``qgis_plugin/report_layout.py``, a
QGIS print layout) lay that same model out and add no words of their own, so both hold the same
sections and rows. Text here is plain text: the renderers escape it (HTML) or set it as table
cell text (PDF), never as markup.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Union

from ..checklist.contents import CONFIRMED, MISSING, STATUS_AS_FINDING
from ..findings import FAIL, INFO, NEEDS_REVIEW, NOT_APPLICABLE, PASS, REPORT_ORDER, WARN, sorted_findings
from ..review import Review
from ..rounds.contract import CHANGE_KINDS
from ..rounds.plan_changes import NO_CHANGE_HERE
from ..units import acres_text

__all__ = [
    "Cell",
    "Table",
    "Paragraph",
    "Figure",
    "Section",
    "Report",
    "build_report",
    "sorted_findings",
    "status_label",
    "REPORT_ORDER",
    "STATUS_MARKS",
    "NOT_YET_DUE",
    "BEFORE_APPROVAL",
    "SITE_MAP",
    "CHART",
]

# A status is read from its word and its mark, never from its colour alone.
STATUS_MARKS = {
    FAIL: "\u2717",
    NEEDS_REVIEW: "?",
    WARN: "!",
    PASS: "\u2713",
    INFO: "i",
    NOT_APPLICABLE: "\u2013",
}
# A finding's ``due`` (issue 18): absent means before approval.
BEFORE_APPROVAL = "before_approval"
NOT_YET_DUE = "not yet due"  # a checklist item due after construction, missing before approval
SITE_MAP, CHART = "site_map", "chart"
NOT_GIVEN = "not given"


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, lines under it (``notes``, shown quieter), and, for a status
    cell, the finding status whose colour it takes (``text`` then carries the word and mark)."""

    text: str
    notes: tuple[str, ...] = ()
    status: Optional[str] = None
    numeric: bool = False

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(t for t in (self.text, *self.notes) if t)


@dataclass(frozen=True)
class Table:
    """A table: ``header`` (None: each row's first cell heads it) and ``widths`` (relative, the
    PDF's millimetres on a 254 mm wide table; the HTML takes them as shares)."""

    header: Optional[tuple[str, ...]]
    rows: tuple[tuple[Cell, ...], ...]
    widths: tuple[float, ...]
    subtitle: str = ""


@dataclass(frozen=True)
class Paragraph:
    text: str
    quiet: bool = False
    strong: bool = False


@dataclass(frozen=True)
class Figure:
    """Pictures the renderer draws from the review: the site map's tiles (``SITE_MAP``) or the
    review's charts named ``names`` (``CHART``)."""

    kind: str
    names: tuple[str, ...] = ()


Block = Union[Table, Paragraph, Figure]


@dataclass(frozen=True)
class Section:
    """A part of the report; ``own_page``: it begins a new page (the PDF's, the HTML's printed
    one), else it follows the part before on that page where there is room (a short part)."""

    key: str
    title: str
    blocks: tuple[Block, ...]
    own_page: bool = True


@dataclass(frozen=True)
class Report:
    title: str
    sections: tuple[Section, ...]

    def section(self, key: str) -> Optional[Section]:
        return next((s for s in self.sections if s.key == key), None)


# Helpers -----------------------------------------------------------------------------------
def status_label(status: str) -> str:
    return f"{STATUS_MARKS.get(status, '')} {status.replace('_', ' ')}".strip()


def _status(status: str) -> Cell:
    return Cell(status_label(status), status=status)


def _text(value: Any, missing: str = NOT_GIVEN) -> str:
    return missing if value is None or value == "" else str(value)


def _number(value, digits=2) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _num(text: str) -> Cell:
    return Cell(text, numeric=True)


def _figure(value, digits) -> Cell:
    return _num("n/a" if value is None else _number(value, digits))


def _row(*cells) -> tuple[Cell, ...]:
    return tuple(c if isinstance(c, Cell) else Cell(_text(c, "")) for c in cells)


def _pairs(rows) -> Table:
    """A two-column table of labelled values."""
    return Table(None, tuple(_row(label, value) for label, value in rows), (70, 184))


def _due(finding: dict) -> str:
    return finding.get("due") or BEFORE_APPROVAL


def _decision_of(finding: dict) -> Optional[dict]:
    """The reviewer's latest decision on ``finding`` (a review recorded as a round), or None."""
    return (finding.get("round") or {}).get("decision")


def _overridden(finding: dict) -> bool:
    return (_decision_of(finding) or {}).get("decision") == "override"


def _decided_by(decision: dict) -> str:
    carried = f", carried from round {decision['carried_from']}" if decision.get("carried_from") else ""
    return f"{decision['reviewer']} ({decision['decided_at'][:10]}{carried})"


_DECISION_WORDS = {"accept": "accepted", "override": "overridden", "resolved": "resolved"}


def _round_notes(finding: dict) -> tuple[str, ...]:
    """What a round says of ``finding`` under its status: the decision, its reason and who made
    it, and how it was matched to the round before ("new", a figure that changed)."""
    held = finding.get("round")
    if not held:
        return ()
    notes = [f"#{held['number']} in this round"]
    d = held.get("decision")
    if d:
        notes.append(f"{_DECISION_WORDS[d['decision']]} by {_decided_by(d)}")
        if d.get("reason"):
            notes.append(f"reason: {d['reason']}")
    m = held.get("match")
    if m:
        if m["by"] == "new":
            notes.append("new in this round")
        else:
            notes.append(f"round {m['round']} #{m['number']}, matched by {m['by'].replace('_', ' ')}")
            if m["figure_changed"]:
                notes.append(
                    f"figure changed: {_figure_text(m['figure_before'])} to {_figure_text(m['figure_after'])}"
                )
    return tuple(notes)


def _figure_text(value) -> str:
    return NOT_GIVEN if value is None else f"{value:,.4g}"


def _findings_rows(findings, profile) -> tuple:
    return tuple(
        _row(
            Cell(status_label(f["status"]), _round_notes(f), f["status"])
            if f.get("round")
            else _status(f["status"]),
            Cell(profile.title(f["rule"]), (f["rule"],)),
            f["section"],
            f["message"],
            ", ".join(f["features"]),
        )
        for f in findings
    )


_FINDINGS_HEADER = ("Status", "Rule", "Section", "Finding", "Features")
_FINDINGS_WIDTHS = (26, 46, 38, 100, 44)


# Sections ----------------------------------------------------------------------------------
def _title(data) -> str:
    return f"SWPPP review: {data['project'].get('name') or data['site']['name']}"


def _sheets(review: Review) -> str:
    sheets = review.site.layer("layout_scale")
    if sheets is None or not len(sheets):
        return NOT_GIVEN
    dated = "revision_date" in sheets.columns
    return "; ".join(
        f"{_text(row['sheet'], 'unnamed sheet')} (revised "
        f"{_text(row['revision_date'] if dated else None, 'date not given')})"
        for _, row in sheets.iterrows()
    )


def _parcels(review: Review, project) -> str:
    if project.get("tax_map_id"):
        return str(project["tax_map_id"])
    boundary = review.site.layer("site_boundary")
    ids = (
        []
        if boundary is None or "parcel_id" not in boundary
        else [str(v) for v in boundary["parcel_id"] if v is not None and str(v) not in ("", "nan")]
    )
    return ", ".join(ids) + " (site boundary)" if ids else NOT_GIVEN


def _reference_versions(reference) -> str:
    versions = (reference or {}).get("versions") or {}
    if not versions:
        return "not recorded"
    return "; ".join(
        f"{layer} v{v['version']} (source {v.get('source_date') or 'undated'}, "
        f"sha256 {str(v.get('sha256') or '')[:12]})"
        for layer, v in versions.items()
    )


def _outcome(data, before, warned, undecided) -> str:
    text = _outcome_text(data, before, warned, undecided)
    overridden = [f for f in data["findings"] if _overridden(f)]
    if overridden:
        text += (
            f" {len(overridden)} finding(s) overridden by the reviewer, each with its reason, "
            "are listed below."
        )
    return text


def _outcome_text(data, before, warned, undecided) -> str:
    conditions = data.get("conditions") or {}
    if before:
        return f"Changes required: {len(before)} finding(s) must change before approval (listed below)."
    if conditions.get("swppp_required") is False:
        return _not_regulated(data)
    if undecided:
        return (
            f"Approvable once the reviewer has settled the {len(undecided)} finding(s) "
            f"that need review (listed below): nothing failed."
        )
    if warned:
        return (
            f"Approvable once the {len(warned)} warning(s) due before approval are "
            f"answered (listed below): nothing failed."
        )
    return "Approvable: no finding must change before approval."


def _not_regulated(data) -> str:
    """Why no SWPPP is required: the site is not a "land development activity" as the chapter
    defines it (the acres, or a larger common plan of development or sale), so SWPPP A does not
    reach it; the applicability finding gives the acres and the common plan as measured."""
    why = next((f["message"] for f in data["findings"] if f["rule"] == "applicability"), "")
    return (
        "Not regulated: not a land development activity as the chapter defines it "
        "(Definitions), so SWPPP A requires no SWPPP" + (f": {why}." if why else ".")
    )


def _before_approval(data, status) -> list:
    """The findings of ``status`` whose duty falls due before approval, the review's order; a
    finding the reviewer overrode (a review round's decision) is not among them: it is listed
    as overridden, with its reason (:func:`_overridden_list`)."""
    return [
        f
        for f in data["findings"]
        if f["status"] == status and _due(f) == BEFORE_APPROVAL and not _overridden(f)
    ]


def _overridden_list(review: Review, data) -> Optional[Table]:
    """Every finding the reviewer overrode, whatever its status: never hidden."""
    overridden = [f for f in data["findings"] if _overridden(f)]
    if not overridden:
        return None
    return Table(
        ("Status", "Finding", "Reason", "Decided by"),
        tuple(
            _row(
                _status(f["status"]),
                Cell(f["message"], (f["section"], review.profile.title(f["rule"]))),
                _decision_of(f)["reason"],  # type: ignore[index]
                _decided_by(_decision_of(f)),  # type: ignore[arg-type]
            )
            for f in overridden
        ),
        (26, 110, 70, 48),
        subtitle="Overridden by the reviewer (they do not block approval; the reason is the reviewer's)",
    )


def _decision_list(review: Review, findings, what: str, subtitle: str) -> Table:
    # The features are in the findings table: here what it is and where the law is.
    return Table(
        ("Section", what, "Rule"),
        tuple(
            _row(f["section"], f["message"], Cell(review.profile.title(f["rule"]), (f["rule"],)))
            for f in findings
        ),
        (50, 150, 54),
        subtitle=subtitle,
    )


def _decision(review: Review, data) -> Section:
    """The decision page: who decides under which chapter, the application, the outcome and the
    reviewer's block first (so that they print on the first page, whatever follows), then what
    stands before approval (what must change, the warnings due before it, what needs review),
    what the reviewer confirmed by hand, and the files and versions reviewed."""
    project, site, tool = data["project"], data["site"], data["tool"]
    reference, profile = data.get("reference"), review.profile
    application = _pairs(
        [
            (
                "Issuing authority",
                f"{profile.profile.authority}, under its chapter on {profile.profile.chapter_title}",
            ),
            ("Project", _text(project.get("name"))),
            ("Address", _text(project.get("address"))),
            ("Tax map / parcel id", _parcels(review, project)),
            ("Applicant", _text(project.get("applicant"))),
            ("Engineer of record", _text(project.get("engineer_of_record"))),
            ("Submission date", _text(project.get("submission_date"))),
            ("Date of review", data["reviewed_on"]),
        ]
    )
    reviewed = Table(
        None,
        tuple(
            _row(label, value)
            for label, value in (
                ("Plan sheets", _sheets(review)),
                ("Site plan file", f"{site['path']} ({site['input_crs']})"),
                (
                    "Reference layers",
                    f"{reference['path']}: {', '.join(reference['layers'])}" if reference else "none given",
                ),
                ("Reference versions", _reference_versions(reference)),
                ("Rules profile", data["profile"]),
                ("Tool", f"{tool['name']} {tool['version']}"),
            )
        )
        + _round_rows(data),
        (70, 184),
        subtitle="Files and versions reviewed",
    )
    before = _before_approval(data, FAIL)
    warned = _before_approval(data, WARN)
    undecided = [f for f in data["findings"] if f["status"] == NEEDS_REVIEW and not _overridden(f)]
    sign = Table(
        None,
        tuple(_row(label, "") for label in ("Reviewer (name and title)", "Decision", "Date", "Signature")),
        (70, 184),
        subtitle="Reviewer",
    )
    blocks: list[Block] = [
        application,
        Paragraph(_outcome(data, before, warned, undecided), strong=True),
        sign,
    ]
    if before:
        blocks.append(_decision_list(review, before, "What must change", "Must change before approval"))
    if warned:
        # Warnings whose duty falls before approval: e.g. the other environmental permits
        # SWPPP F wants "acquired ... prior to approval" where the plan disturbs a wetland.
        blocks.append(_decision_list(review, warned, "Warning", "Warnings to answer before approval"))
    if undecided:
        blocks.append(
            _decision_list(
                review, undecided, "Why it needs review", "Needs review: the checks could not decide"
            )
        )
    overridden = _overridden_list(review, data)
    if overridden is not None:
        blocks.append(overridden)
    confirmed = [e for e in data.get("checklist") or [] if e.get("confirmation")]
    if confirmed:
        blocks.append(
            Table(
                ("Item", "Confirmed by", "On", "Note"),
                tuple(
                    _row(
                        e["item"],
                        e["confirmation"]["reviewer"],
                        e["confirmation"]["date"],
                        e["confirmation"].get("note") or "",
                    )
                    for e in confirmed
                ),
                (34, 50, 30, 140),
                subtitle="Confirmed by the reviewer by hand",
            )
        )
    else:
        blocks.append(
            Paragraph(
                "Confirmed by the reviewer by hand: nothing (no checklist confirmations were given).",
                quiet=True,
            )
        )
    blocks.append(reviewed)
    return Section("decision", "Decision", tuple(blocks))


def _round_rows(data) -> tuple:
    """The review round the review was recorded as (``swppp review --round``), where it was."""
    held = data.get("round")
    if not held:
        return ()
    before = f"; matched to round {held['previous']}" if held.get("previous") else "; the first round"
    return (
        _row(
            "Review round",
            f"round {held['number']} of {held['file']}, recorded {held['recorded_at']}{before}",
        ),
        _row("Site plan sha256", held["plan_sha256"]),
    )


def _cover(review: Review, data) -> Section:
    """The summary: the findings counted by status with the rules each status holds, and the
    site's facts; short, so it follows the decision on its last page."""
    project, findings = data["project"], data["findings"]
    by_status = []
    for status in REPORT_ORDER:
        rules = list(dict.fromkeys(f["rule"] for f in findings if f["status"] == status))
        if rules:
            count = sum(f["status"] == status for f in findings)
            by_status.append(
                _row(_status(status), _num(str(count)), ", ".join(review.profile.title(r) for r in rules))
            )
    acres = data["measurements"].get("disturbed_acres")
    rows = [
        ("Land use", _text(project.get("land_use"))),
        ("Receiving waters", _text(project.get("receiving_waters"))),
        ("Disturbed area", f"{_number(acres)} acres" if acres is not None else NOT_GIVEN),
    ]
    return Section(
        "summary",
        "Summary",
        (
            Table(
                ("Status", "Findings", "Rules"),
                tuple(by_status),
                (30, 20, 204),
                subtitle=f"Findings by status ({len(findings)} in all)",
            ),
            _pairs(rows),
            Paragraph(
                "Each finding cites the village stormwater chapter. Findings are listed the "
                "most serious first: fail, needs review, warn, pass, info, not applicable.",
                quiet=True,
            ),
        ),
        own_page=False,
    )


def _site_map(review: Review, data) -> Section:
    return Section("site_map", "Site map", (Figure(SITE_MAP),))


def _phasing(review: Review, data) -> Optional[Section]:
    names = tuple(n for n in review.charts if not n.startswith("hydrology_"))
    return Section("phasing", "Phasing", (Figure(CHART, names),)) if names else None


def _findings(review: Review, data) -> Section:
    return Section(
        "findings",
        "Findings",
        (
            Table(
                _FINDINGS_HEADER,
                _findings_rows(sorted_findings(data["findings"]), review.profile),
                _FINDINGS_WIDTHS,
            ),
        ),
    )


_COMPARED = (
    ("resolved", "Resolved since round {n}"),
    ("still_open", "Still open since round {n}"),
    ("new", "New since round {n}"),
    ("changed", "Changed since round {n} (status, or figure beyond the profile's threshold)"),
)


def _compared_side(side: Optional[dict], number: Optional[int] = None) -> Cell:
    if side is None:
        return Cell("not in this round" if number is None else "not in that round")
    where = f"round {number} #{side['number']}" if number is not None else f"#{side['number']}"
    return Cell(f"{status_label(side['status'])}: {_figure_text(side['figure'])}", (where,), side["status"])


def _comparison(review: Review, data) -> Optional[Section]:
    """What changed since the round compared with (``--compare-to N``): resolved, still open,
    new and changed, each finding with its status and figure before and after, and how it was
    paired."""
    compared = data.get("comparison")
    if not compared:
        return None
    n = compared["round"]
    blocks: list[Block] = [
        Paragraph(
            f"Compared with round {n}: "
            + ", ".join(f"{len(compared[key])} {key.replace('_', ' ')}" for key, _ in _COMPARED)
            + ". Findings are paired by rule and feature ids, else by rule and place; each "
            "pairing is stated.",
        )
    ]
    changes = compared.get("plan_changes")
    for key, title in _COMPARED:
        items = compared[key]
        if not items:
            continue
        blocks.append(
            Table(
                ("Rule", "Features", f"Round {n}", "This round", "Paired by")
                + (("Plan changes here",) if changes else ()),
                tuple(
                    _row(
                        Cell(review.profile.title(i["rule"]), (i["rule"],)),
                        ", ".join(i["features"]) or "none",
                        _compared_side(i["before"], n),
                        _compared_side(i["after"]),
                        (i["matched_by"] or "not paired").replace("_", " "),
                        *((_cause(i),) if changes else ()),
                    )
                    for i in items
                ),
                (44, 56, 40, 40, 32, 42) if changes else (50, 70, 48, 48, 38),
                subtitle=title.format(n=n),
            )
        )
    if changes:
        blocks += _plan_changes(changes, n)
    return Section("comparison", f"Changes since round {n}", tuple(blocks))


def _cause(item: dict) -> Cell:
    """A compared finding's plan changes at its place: their ids, or why there are none."""
    cause = item.get("cause") or ""
    if item.get("caused_by"):
        return Cell(", ".join(item["caused_by"]))
    if cause == NO_CHANGE_HERE:
        return Cell("none")
    if cause.startswith(NO_CHANGE_HERE):
        return Cell("none", ("the finding has no place on the map",))
    return Cell("not measured", ("see the plan changes below",))


def _plan_changes(changes: dict, n: int) -> list:
    """The plan's geometry changes since round ``n`` (drawn on the site map), or the
    needs-review statement where a round recorded no plan."""
    if not changes["compared"]:
        return [Paragraph(f"Plan changes since round {n}: needs review. {changes['note']}.", strong=True)]
    listed = changes["changes"]
    if not listed:
        return [
            Paragraph(
                f"Plan changes since round {n}: none (disturbance, SMPs and easements as in round {n})."
            )
        ]

    def measured(c: dict) -> str:
        if c["distance_ft"] is not None:
            return f"moved {c['distance_ft']:,.1f} ft"
        if c["acres_before"] is not None or c["acres_after"] is not None:
            before = NOT_GIVEN if c["acres_before"] is None else f"{c['acres_before']:.4f}"
            after = NOT_GIVEN if c["acres_after"] is None else f"{c['acres_after']:.4f}"
            return f"{before} -> {after} acres"
        return NOT_GIVEN if c["acres"] is None else f"{c['acres']:.4f} acres"

    return [
        Table(
            ("Change", "What changed", "Feature", "Measured", "As said"),
            tuple(
                _row(c["id"], CHANGE_KINDS.get(c["kind"], c["kind"]), c["feature"], measured(c), c["message"])
                for c in listed
            ),
            (20, 44, 50, 50, 90),
            subtitle=(
                f"Plan changes since round {n} (drawn on the site map; a finding's "
                "'Plan changes here' names them)"
            ),
        )
    ]


def _measurements(review: Review, data) -> Section:
    m, profile = data["measurements"], review.profile
    # The acres the limits are decided on (ellipsoidal where measured), written as the findings
    # write them (never reading as a limit), the planar figure beside them.
    disturbed = _decided(
        m,
        "disturbed_acres",
        "threshold_area_method",
        (
            profile.applicability.min_disturbed_acres,
            profile.condition_b.min_disturbed_acres,
            profile.condition_c.min_disturbed_acres,
        ),
    )
    worst = _decided(
        m, "max_concurrent_disturbed_acres", "threshold_area_method", (profile.phasing.max_concurrent_acres,)
    )
    totals = _pairs(
        [
            ("Disturbed area (union of all disturbance)", disturbed),
            (
                "Disturbance outside the site boundary",
                f"{_number(m['disturbed_outside_site_sq_ft'], 0)} sq ft"
                if "disturbed_outside_site_sq_ft" in m
                else "not measured (no SWPPP is required)",
            ),
            (
                "Most disturbed and not yet stabilised at one time",
                f"{worst}, on {m.get('max_concurrent_at')}" if m.get("max_concurrent_at") else "not known",
            ),
        ]
    )
    blocks: list[Block] = [totals]
    if m.get("phases"):
        blocks.append(
            Table(
                ("Phase", "Acres", "New acres", "Start", "Stabilized"),
                tuple(
                    _row(
                        p["phase"],
                        _num(_number(p["acres"])),
                        _num(_number(p.get("new_acres"))),
                        p["start_date"],
                        p["stabilized_date"] or "not scheduled",
                    )
                    for p in m["phases"]
                ),
                (50, 40, 40, 60, 64),
                subtitle="Phases",
            )
        )
    uncovered = m.get("uncovered_smp_sq_ft") or {}
    if uncovered:
        blocks.append(
            Table(
                ("SMP", "Outside"),
                tuple(_row(smp, _num(f"{_number(sq_ft, 1)} sq ft")) for smp, sq_ft in uncovered.items()),
                (100, 154),
                subtitle="SMP area outside maintenance easements",
            )
        )
    blocks.append(
        Paragraph(
            f"Areas are planar in {data['site']['area_crs']}, in international "
            f"acres, except those the chapter's acre limits are decided on, which "
            f"are given as decided (the method named) with the planar beside "
            f"them.",
            quiet=True,
        )
    )
    return Section("measurements", "Measurements", tuple(blocks))


def _decided(m: dict, key: str, method_key: str, limits) -> str:
    """``m[key]``'s acres as a limit is decided on them: the ellipsoidal figure (``key`` +
    ``_ellipsoidal``) with its method and the planar beside it, else the planar alone."""
    planar, true = m.get(key), m.get(f"{key}_ellipsoidal")
    if true is None or not m.get(method_key):
        return f"{_number(planar)} acres"
    text = max((acres_text(true, limit) for limit in limits), key=len)
    return f"{text} acres ({m[method_key]}); {_number(planar)} planar"


def _conditions(review: Review, data) -> Section:
    conditions = data["conditions"]
    rows = [_row("SWPPP required", "yes" if conditions["swppp_required"] else "no")]
    for key in ("A", "B", "C"):
        c = conditions[key]
        verdict = (
            "not decided" if c.get("decided") is False else "applies" if c["applies"] else "does not apply"
        )
        rows.append(_row(f"Condition {key}", Cell(verdict, ("; ".join(c["evidence"]),))))
    return Section("conditions", "Conditions", (Table(None, tuple(rows), (70, 184)),))


def _reference(review: Review, data) -> Section:
    m, reference = data["measurements"], data.get("reference")
    if reference is None:
        return Section(
            "reference",
            "Wetlands and reference layers",
            (Paragraph("None given: Condition A and wetlands are not decided.", quiet=True),),
        )
    blocks: list[Block] = [
        Table(
            None,
            (
                _row("Disturbance inside wetlands", _num(f"{_number(m.get('wetland_acres'), 4)} acres")),
                _row(
                    "Disturbance inside regulated adjacent areas (not in a wetland)",
                    _num(f"{_number(m.get('wetland_adjacent_area_acres'), 4)} acres"),
                ),
            ),
            (120, 134),
        ),
        Table(
            ("Layer", "Features read", "Version", "Source date"),
            tuple(
                _row(
                    layer,
                    _num(str(info["features"])),
                    info.get("version", "not recorded"),
                    info.get("source_date", ""),
                )
                for layer, info in reference["read"].items()
            ),
            (80, 50, 60, 64),
            subtitle="Reference layers read",
        ),
    ]
    if reference.get("repaired"):
        blocks.append(
            Paragraph(
                "Invalid reference geometries repaired: " + ", ".join(reference["repaired"]), quiet=True
            )
        )
    return Section("reference", "Wetlands and reference layers", tuple(blocks))


def _records(review: Review, data) -> Optional[Section]:
    records = data.get("records")
    if not records:
        return None
    rain, period, m = records["rain"], records["period"], records["measurements"]
    blocks: list[Block] = [
        _pairs(
            [
                ("Inspection log", f"{records['log']} ({m['inspection_reports']} reports in the period)"),
                (
                    "Rainfall",
                    f"{rain['path']} ({rain['format']}"
                    + (f", station {rain['station']}" if rain["station"] else "")
                    + ")",
                ),
                ("Period", f"{period['from']} to {period['to']} (end: {period['to_from']})"),
                ("Notices", records.get("notices", NOT_GIVEN)),
                ("Sediment traps", records.get("traps", NOT_GIVEN)),
            ]
        )
    ]
    if m["storms"]:
        blocks.append(
            Table(
                ("Storm", "Inches", "Report due by end of", "Reported on"),
                tuple(
                    _row(
                        s["first_day"]
                        if s["first_day"] == s["last_day"]
                        else f"{s['first_day']} to {s['last_day']}",
                        _num(_number(s["precip_in"])),
                        s["due"],
                        s["reported_on"] or "none",
                    )
                    for s in m["storms"]
                ),
                (80, 40, 67, 67),
                subtitle="Storms in the period",
            )
        )
    return Section("records", "Construction-phase records", tuple(blocks))


def _hydrology(review: Review, data) -> Optional[Section]:
    m = data["measurements"]
    if not m.get("hydrology"):
        return None
    rows = []
    for r in m["hydrology"]:
        pre, post = r["pre"], r["post"]
        rows.append(
            _row(
                r["drainage_area"],
                r["storm"],
                _figure(r["rain_in"], 2),
                _figure(pre["cn"], 1),
                _figure(pre["runoff_in"], 2),
                _figure(pre["volume_cf"], 0),
                _figure(pre["peak_cfs"], 2),
                _figure(post["cn"], 1),
                _figure(post["runoff_in"], 2),
                _figure(post["volume_cf"], 0),
                _figure(post["peak_cfs"], 2),
                "; ".join(n for n in (pre["note"], post["note"]) if n),
            )
        )
    sources = sorted({r["rainfall_source"] for r in m["hydrology"] if r.get("rainfall_source")})
    blocks: list[Block] = [
        Table(
            (
                "Drainage area",
                "Storm",
                "P (in)",
                "Pre CN",
                "Pre Q (in)",
                "Pre volume (cu ft)",
                "Pre peak (cfs)",
                "Post CN",
                "Post Q (in)",
                "Post volume (cu ft)",
                "Post peak (cfs)",
                "Notes",
            ),
            tuple(rows),
            (24, 18, 13, 14, 16, 22, 18, 14, 16, 22, 18, 59),
        ),
        Paragraph(
            f"NRCS TR-55 (1986): curve numbers from Tables 2-2a and 2-2c, runoff by eq. "
            f"2-3, peaks by the graphical method (Chapter 4) for a Type "
            f"{m['hydrology'][0].get('rainfall_distribution')} distribution. Design "
            f"rainfall: {'; '.join(sources)}.",
            quiet=True,
        ),
    ]
    if m.get("water_quality_volume"):
        blocks.append(
            Table(
                ("Drainage area", "90% rainfall P (in)", "Impervious", "Acres", "WQv (cu ft)"),
                tuple(
                    _row(
                        w["drainage_area"],
                        _figure(w["rain_in"], 2),
                        _num(f"{w['impervious_fraction']:.0%}"),
                        _figure(w["area_acres"], 2),
                        _figure(w["wqv_cf"], 0),
                    )
                    for w in m["water_quality_volume"]
                ),
                (60, 50, 44, 44, 56),
                subtitle="Water quality volume",
            )
        )
    charts = tuple(n for n in review.charts if n.startswith("hydrology_"))
    if charts:
        blocks.append(Figure(CHART, charts))
    return Section("hydrology", "Hydrology (TR-55)", tuple(blocks))


def _checklist_status(entry) -> Cell:
    """A checklist item's status; one missing but due after construction is not yet due (grey,
    never red before approval)."""
    if entry["status"] == MISSING and entry.get("due", "approval") != "approval":
        return Cell(f"{STATUS_MARKS[NOT_APPLICABLE]} {NOT_YET_DUE}", status=NOT_APPLICABLE)
    finding = STATUS_AS_FINDING.get(entry["status"], INFO)
    mark = STATUS_MARKS[INFO] if entry["status"] == CONFIRMED else STATUS_MARKS.get(finding, "")
    return Cell(f"{mark} {entry['status'].replace('_', ' ')}", status=finding)


def _checklist(review: Review, data) -> Optional[Section]:
    checklist = data.get("checklist")
    if not checklist:
        return None
    rows = []
    for entry in checklist:
        notes = [f"Evidence: {entry['evidence']}"]
        c = entry.get("confirmation")
        if c:
            notes.append(
                f"Confirmed by {c['reviewer']} on {c['date']}" + (f": {c['note']}" if c.get("note") else "")
            )
        rows.append(_row(entry["item"], _checklist_status(entry), Cell(entry["text"], tuple(notes))))
    return Section(
        "checklist",
        "SWPPP contents checklist",
        (
            Paragraph(
                "Provided: the site plan shows it or the applicant's submission names a "
                "document; confirmed: a reviewer checked it. Items due after final "
                "construction are not counted before approval.",
                quiet=True,
            ),
            Table(("Item", "Status", "The chapter requires; evidence"), tuple(rows), (30, 30, 194)),
        ),
    )


def _esc(review: Review, data) -> Optional[Section]:
    esc = data["measurements"].get("esc_practices")
    if not esc:
        return None

    def figure(value, digits=0):
        return _num("" if value is None else _number(value, digits))

    return Section(
        "esc",
        "Erosion and sediment control practices",
        (
            Table(
                ("Stage", "Practices", "Measured length (ft)", "Area (sq ft)"),
                tuple(
                    _row(
                        stage,
                        _num(str(n["practices"])),
                        figure(n["measured_length_ft"]),
                        figure(n["area_sq_ft"]),
                    )
                    for stage, n in esc["by_stage"].items()
                ),
                (70, 50, 67, 67),
                subtitle="By stage",
            ),
            Table(
                (
                    "Practice",
                    "Feature",
                    "Stage",
                    "Size",
                    "Length stated (ft)",
                    "Length measured (ft)",
                    "Area (sq ft)",
                    "Drainage area (ac)",
                    "Install by",
                    "Remove after",
                ),
                tuple(
                    _row(
                        p["practice"] or "",
                        p["feature"],
                        p["stage"] or "not stated",
                        p["size"] or "",
                        figure(p["length_ft"]),
                        figure(p["measured_length_ft"]),
                        figure(p["area_sq_ft"]),
                        figure(p["drainage_area_acres"], 2),
                        p["install_by"] or "",
                        p["remove_after"] or "",
                    )
                    for p in esc["practices"]
                ),
                (58, 24, 20, 28, 18, 20, 18, 20, 24, 24),
                subtitle="Practices",
            ),
        ),
    )


def _not_checked(review: Review, data) -> Section:
    """The chapter's duties no check covers (the review's ``not_checked``), then what the
    checks could not decide (the ``needs_review`` findings)."""
    duties = data.get("not_checked")
    blocks: list[Block] = []
    if duties:
        blocks.append(
            Table(
                ("Section", "Duty", "Why this tool does not check it"),
                tuple(_row(d.get("section"), d.get("duty"), d.get("reason")) for d in duties),
                (44, 120, 90),
                subtitle="Duties of the chapter no check covers",
            )
        )
    else:
        blocks.append(
            Paragraph(
                "Duties of the chapter no check covers: this review does not "
                "list them; read the chapter for duties beyond the findings.",
                quiet=True,
            )
        )
    undecided = [f for f in data["findings"] if f["status"] == NEEDS_REVIEW]
    if undecided:
        blocks.append(
            Table(
                ("Rule", "Section", "Why it could not be checked", "Features"),
                tuple(
                    _row(
                        Cell(review.profile.title(f["rule"]), (f["rule"],)),
                        f["section"],
                        f["message"],
                        ", ".join(f["features"]),
                    )
                    for f in undecided
                ),
                (55, 38, 117, 44),
                subtitle="Checks that could not decide",
            )
        )
    else:
        blocks.append(Paragraph("Checks that could not decide: none, every check decided."))
    return Section("not_checked", "Not checked by this tool", tuple(blocks))


# The report's parts in order: each (review, data) -> Section, or None when it has no data.
_SECTIONS = (
    _decision,
    _cover,
    _site_map,
    _phasing,
    _findings,
    _comparison,
    _measurements,
    _conditions,
    _reference,
    _records,
    _hydrology,
    _checklist,
    _esc,
    _not_checked,
)


def build_report(review: Review, *, maps: bool = True, data: Optional[dict] = None) -> Report:
    """The report of ``review``; ``maps=False`` leaves out the site map (drawing it is most of
    the time), for checks of the report's text alone. ``data`` is ``review.to_dict()`` (given:
    a review's JSON as it was written, e.g. with the keys other parts of the tool add)."""
    data = review.to_dict() if data is None else data
    sections = [s(review, data) for s in _SECTIONS if maps or s is not _site_map]
    return Report(_title(data), tuple(s for s in sections if s is not None))
