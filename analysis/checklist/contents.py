"""The SWPPP contents checklist: each item the chapter requires, filled in from the site plan.

The items are data (``analysis/data/checklist.csv``: item, due, applies, evidence rule, the
chapter's text). An item is ``provided`` where the site plan shows it (its evidence rule holds)
or the applicant's ``submission`` table points at a document for it, ``missing`` otherwise, and
``not_applicable`` where it does not apply (the D items when no condition applies). A reviewer
may confirm any item: it is then ``confirmed``, with the reviewer's name, the date and a note.

Reviewer confirmations (a JSON file, or a findings GeoPackage written earlier: its ``checklist``
table) look like this::

    {"format": "swppp-checklist-confirmations", "version": 1,
     "confirmations": [{"item": "B(5)", "reviewer": "R. Levi", "date": "2027-03-02",
                        "note": "Litter and chemicals: SWPPP report section 4.2"}]}

``item`` is an item id of the checklist, ``reviewer`` and ``date`` (ISO) are required, ``note``
is free text (shown escaped in the report).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from ..checks.base import Check, CheckResult
from ..dates import parse_date
from ..errors import InputError
from ..findings import FAIL, INFO, NEEDS_REVIEW, NOT_APPLICABLE, PASS, Finding
from ..profile import RulesProfile
from ..siteplan.plan import SitePlan
from ..values import has_text
from .certification import CertificationResult, check_contractor_certification
from .esc_practices import check_esc_practices, summarise_esc_practices
from .guarantees import GuaranteeResult, check_guarantees
from .items import DATA, ChecklistItem, checklist_items, item_ids, site_map_contents

__all__ = [
    "CHECKS",
    "ChecklistItem",
    "Confirmation",
    "Contents",
    "checklist_items",
    "item_ids",
    "CONFIRMATIONS_FORMAT",
    "CHECKLIST_LAYER",
    "read_confirmations",
    "parse_confirmations",
    "confirmations_json",
    "confirmations_from_checklist",
    "build_checklist",
    "check_swppp_contents",
    "check_contents",
    "checklist_frame",
    "PROVIDED",
    "MISSING",
    "CONFIRMED",
    "NOT_YET_DUE",
    "STATUS_AS_FINDING",
]

RULE = "swppp_contents"
CONFIRMATIONS_FORMAT = "swppp-checklist-confirmations"
CHECKLIST_LAYER = "checklist"  # the table of the findings GeoPackage
PROVIDED, MISSING, CONFIRMED = "provided", "missing", "confirmed"
NOT_YET_DUE = "not_yet_due"  # not shown, and due only after approval (before construction, ...)
# A checklist status drawn in the colour of the finding status it reads as (report, PDF).
STATUS_AS_FINDING = {
    PROVIDED: PASS,
    MISSING: FAIL,
    CONFIRMED: INFO,
    NOT_APPLICABLE: NOT_APPLICABLE,
    NOT_YET_DUE: INFO,
}
# What "due" says of an item not due before approval (checklist.csv's due).
_DUE_WORDS = {
    "before_construction": "due before construction, not before approval",
    "during_construction": "due during construction, not before approval",
    "completion": "due after final construction, not counted before approval",
}


@dataclass(frozen=True)
class Confirmation:
    """A reviewer's confirmation of one item."""

    item: str
    reviewer: str
    date: str  # ISO YYYY-MM-DD
    note: str = ""

    def to_dict(self) -> dict:
        return {"item": self.item, "reviewer": self.reviewer, "date": self.date, "note": self.note}


@dataclass
class Contents:
    """The checklist and the findings of the contents checks."""

    checklist: list[dict]
    findings: list[Finding]
    esc_practices: Optional[dict]


def _key(item) -> str:
    """An item id compared without case or spaces: ``b (13)`` is ``B(13)``."""
    return re.sub(r"\s+", "", str(item)).lower()


def _canonical(item, source, layer=None, feature=None, field="item") -> str:
    ids = {_key(i): i for i in item_ids()}
    found = ids.get(_key(item))
    if found is None:
        raise InputError(
            f"{item!r} is not an item of the SWPPP contents checklist",
            path=source,
            layer=layer,
            feature=feature,
            field=field,
            fix="use one of " + ", ".join(item_ids()),
        )
    return found


# --- reviewer confirmations ---------------------------------------------------------------


def parse_confirmations(data, source="confirmations") -> list[Confirmation]:
    """Validate the confirmations JSON (already parsed); one per item, the last one kept."""
    if (
        not isinstance(data, dict)
        or data.get("format") != CONFIRMATIONS_FORMAT
        or not isinstance(data.get("confirmations"), list)
    ):
        raise InputError(
            f'not a checklist confirmations file (a JSON object with "format": '
            f'"{CONFIRMATIONS_FORMAT}" and a list "confirmations")',
            path=source,
            fix="write it as the checklist tab or analysis.checklist.contents documents",
        )
    out = {}
    for number, entry in enumerate(data["confirmations"], start=1):
        where = f"confirmation {number}"
        if not isinstance(entry, dict):
            raise InputError(
                f"{where} is not an object", path=source, fix="give item, reviewer, date and note"
            )
        item = _canonical(entry.get("item"), source, feature=number)
        reviewer = str(entry.get("reviewer") or "").strip()
        if not reviewer:
            raise InputError(
                f"{where} ({item}) names no reviewer",
                path=source,
                feature=number,
                field="reviewer",
                fix="give the reviewer's name",
            )
        day, readable = parse_date(entry.get("date"))
        if day is None:
            raise InputError(
                f"{where} ({item}) has no date, or {entry.get('date')!r} is not one (YYYY-MM-DD)"
                if readable
                else f"{where} ({item}): date {entry.get('date')!r} is not YYYY-MM-DD",
                path=source,
                feature=number,
                field="date",
                fix="give the date of the confirmation as YYYY-MM-DD",
            )
        note = entry.get("note")
        out[item] = Confirmation(item, reviewer, day.isoformat(), "" if note is None else str(note))
    return list(out.values())


def read_confirmations(path: str | Path) -> list[Confirmation]:
    """Confirmations from a JSON file (the confirmations format, or a review's JSON result), or
    from the ``checklist`` table of a findings GeoPackage written by an earlier review (its
    ``confirmed`` rows), so that they reload."""
    path = Path(path)
    if not path.is_file():
        raise InputError("the confirmations file does not exist", path=path, fix="check the path")
    if path.suffix.lower() == ".gpkg":
        from ..io.vector import list_layers, read_layer

        layers = {name.lower(): name for name in list_layers(path)}
        if CHECKLIST_LAYER not in layers:
            raise InputError(
                f"the GeoPackage has no '{CHECKLIST_LAYER}' table",
                path=path,
                fix="give a findings GeoPackage written by a SWPPP review, or the confirmations JSON",
            )
        frame = read_layer(path, layers[CHECKLIST_LAYER], read_geometry=False).frame
        return confirmations_from_checklist(frame.to_dict("records"), path)
    if path.suffix.lower() in (".xlsx", ".ods", ".xls", ".csv"):
        raise InputError(
            "the confirmations are read from their JSON file or a findings GeoPackage, not from a table",
            path=path,
            fix="save them from the plugin's checklist tab, or write the JSON as "
            "analysis.checklist.contents documents",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as err:
        raise InputError(
            f"the confirmations file is not valid JSON ({err})",
            path=path,
            fix="write it as analysis.checklist.contents documents",
        ) from None
    if isinstance(data, dict) and "format" not in data and isinstance(data.get("checklist"), list):
        return confirmations_from_checklist(data["checklist"], path)  # a review's JSON result
    return parse_confirmations(data, path)


def confirmations_from_checklist(rows: Iterable[Mapping], source="checklist") -> list[Confirmation]:
    """The confirmations held by checklist rows (a review's JSON ``checklist`` or the table)."""
    entries = []
    for row in rows:
        if row.get("status") != CONFIRMED:
            continue
        held = row.get("confirmation") or row  # JSON entries nest it; the table is flat
        entries.append(
            {
                "item": row.get("item"),
                "reviewer": held.get("reviewer"),
                "date": held.get("date") or held.get("confirmed_on"),
                "note": held.get("note"),
            }
        )
    return parse_confirmations({"format": CONFIRMATIONS_FORMAT, "confirmations": entries}, source)


def confirmations_json(confirmations: Sequence[Confirmation | Mapping]) -> str:
    """The confirmations file's text."""
    entries = [c.to_dict() if isinstance(c, Confirmation) else dict(c) for c in confirmations]
    parse_confirmations({"format": CONFIRMATIONS_FORMAT, "confirmations": entries})
    return (
        json.dumps(
            {"format": CONFIRMATIONS_FORMAT, "version": 1, "confirmations": entries},
            indent=2,
            ensure_ascii=False,
        )
        + "\n"
    )


# --- evidence in the site plan -----------------------------------------------------------


class _Evidence:
    """Evaluates the checklist's evidence rules on one site plan."""

    def __init__(
        self,
        site: SitePlan,
        certification: CertificationResult,
        guarantees: GuaranteeResult,
        location_titles: Sequence[str] = ("location map",),
    ):
        self.site, self.certification, self.guarantees = site, certification, guarantees
        self.location_titles = [t.casefold() for t in location_titles]

    def holds(self, rule: str) -> tuple[bool, str]:
        """(whether the plan shows it, what shows it or what is lacking)."""
        lacking = []
        for alternative in rule.split(" or "):
            results = [self._term(term.strip()) for term in alternative.split(" and ")]
            if all(ok for ok, _ in results):
                return True, "; ".join(text for _, text in results)
            lacking += [text for ok, text in results if not ok]
        return False, "; ".join(lacking)

    def _term(self, term: str) -> tuple[bool, str]:
        kind, _, argument = term.partition(":")
        if kind == "layer":
            return self._layer(argument)
        if kind == "field":
            table, _, names = argument.partition(".")
            assert table == "project", term
            values = {f: self.site.project.get(f) for f in names.split("+")}
            missing = [f for f, v in values.items() if not has_text(v)]
            if missing:
                return False, "project " + ", ".join(missing) + " empty"
            return True, "; ".join(f"project {f}: {v}" for f, v in values.items())
        if kind == "compared":
            return self._compared(argument)
        if kind == "stages":
            return self._stages(argument.split("+"))
        if kind == "phasing":
            return self._phasing()
        if kind == "recorded_easement":
            return self._recorded_easements()
        if kind == "certification":
            c = self.certification
            ok = c.signed_in_time if argument == "signed" else c.complete
            if not c.records:
                return False, "no contractor_certification records"
            if ok:
                return True, (
                    f"{c.records} contractor certification(s) signed on or before work started"
                    if argument == "signed"
                    else f"{c.records} contractor certification(s) with every G(2) field"
                )
            return False, "contractor certification(s) incomplete: " + ", ".join(c.problems)
        if kind == "guarantee":
            return self.guarantees.met[argument], self.guarantees.evidence[argument]
        if kind == "submission":
            return False, "the site plan cannot show it"
        if kind == "location_map":
            return self._location_map()
        raise ValueError(f"unknown evidence rule {term!r} in {DATA}")

    def _layer(self, argument: str) -> tuple[bool, str]:
        name, _, fields = argument.partition("[")
        frame = self.site.layer(name)
        if frame is None:
            return False, f"no {name} layer"
        if len(frame) == 0:
            return False, f"layer {name} has no features"
        count = f"layer {name}: {len(frame)} feature{'s' * (len(frame) != 1)}"
        if not fields:
            return True, count
        names = fields.rstrip("]").split("|")
        has = pd.Series(False, index=frame.index)
        for f in names:
            has |= frame[f].map(has_text)
        if has.all():
            return True, f"{count}, each with {' or '.join(names)}"
        labels = [label for label, ok in zip(self.site.labels(name), has) if not ok]
        return False, (
            f"{len(labels)} of {len(frame)} {name} features lack "
            f"{' or '.join(names)}: {', '.join(labels[:5])}" + (" ..." if len(labels) > 5 else "")
        )

    def _compared(self, name: str) -> tuple[bool, str]:
        """D(5): "Comparison of postdevelopment stormwater runoff conditions with predevelopment
        conditions": a row with both figures of one quantity; post figures alone are none."""
        frame = self.site.layer(name)
        if frame is None or len(frame) == 0:
            return False, f"no {name} rows"
        pairs = (("peak", "pre_peak_cfs", "post_peak_cfs"), ("volume", "pre_volume_cf", "post_volume_cf"))
        compared = [
            f"{label} ({quantity})"
            for label, (_, row) in zip(self.site.labels(name), frame.iterrows())
            for quantity, pre, post in pairs
            if pre in frame and post in frame and pd.notna(row[pre]) and pd.notna(row[post])
        ]
        if compared:
            return True, (
                f"{name}: pre- and post-development figures compared for " + ", ".join(compared[:5])
            )
        return False, (
            f"{name}: no row gives both a pre- and a post-development figure of one "
            "quantity (peak or volume); post-development figures alone are no comparison"
        )

    def _stages(self, wanted: Sequence[str]) -> tuple[bool, str]:
        """B(7): "Temporary and permanent structural and vegetative measures": practices of each
        stage (a practice converted from temporary to permanent counts as both)."""
        frame = self.site.layer("esc_practice")
        stages = (
            set()
            if frame is None or "stage" not in frame
            else {str(v).strip() for v in frame["stage"] if has_text(v)}
        )
        if "converted" in stages:
            stages |= {"temporary", "permanent"}
        missing = [w for w in wanted if w not in stages]
        if missing:
            return False, (
                "no " + " and no ".join(missing) + " measures in esc_practice (B(7): "
                '"Temporary and permanent" measures)'
            )
        return True, "esc_practice: " + " and ".join(wanted) + " measures"

    def _location_map(self) -> tuple[bool, str]:
        frame = self.site.layer("layout_scale")
        if frame is None or len(frame) == 0:
            return False, "no layout_scale sheet is a location map"
        drawings = frame["drawing"] if "drawing" in frame.columns else [None] * len(frame)
        for sheet, drawing in zip(frame["sheet"], drawings):
            if (
                str(drawing).strip() == "location_map"
                if has_text(drawing)
                else any(t in str(sheet).casefold() for t in self.location_titles)
            ):
                return True, f"layout_scale: sheet {sheet}"
        return False, "no layout_scale sheet is a location map"

    def _phasing(self) -> tuple[bool, str]:
        frame = self.site.layers["disturbance"]
        starts = [parse_date(v)[0] for v in frame["start_date"]]
        lacking = [
            label
            for label, phase, start in zip(self.site.labels("disturbance"), frame["phase"], starts)
            if not has_text(phase) or start is None
        ]
        if lacking:
            return False, f"disturbance without a phase or start date: {', '.join(lacking[:5])}"
        phases = len(set(map(str, frame["phase"])))
        return True, (
            f"disturbance: {len(frame)} polygons in {phases} phase"
            f"{'s' * (phases != 1)}, each with a start date"
        )

    def _recorded_easements(self) -> tuple[bool, str]:
        frame = self.site.layer("easement")
        if frame is None or len(frame) == 0:
            return False, "no maintenance easement in the plan"
        recorded = (pd.to_numeric(frame["recorded"], errors="coerce").fillna(0) == 1) & frame[
            "instrument"
        ].map(has_text)
        labels = self.site.labels("easement")
        if not recorded.all():
            return False, (
                "no executed easement declaration shown: easement(s) not yet recorded "
                "(recorded 1 with an instrument): "
                + ", ".join(label for label, ok in zip(labels, recorded) if not ok)
                + " (a submission naming the executed declaration shows it; the "
                "County Clerk records it after approval by the Village's counsel)"
            )
        return True, (
            f"{len(frame)} easement{'s' * (len(frame) != 1)} recorded: "
            + "; ".join(f"{label} ({instrument})" for label, instrument in zip(labels, frame["instrument"]))
        )


# --- the checklist ----------------------------------------------------------------------


def _submissions(site: SitePlan) -> dict[str, list[str]]:
    """Item -> the applicant's documents for it (``submission`` table); unknown items refused."""
    frame = site.layer("submission")
    out: dict[str, list[str]] = {}
    if frame is None:
        return out
    for fid, row in frame.iterrows():
        if not has_text(row["item"]):
            raise InputError(
                "a submission row names no item",
                path=site.path,
                layer="submission",
                feature=fid,
                field="item",
                fix="give the checklist item it covers, e.g. B(5), or delete the row",
            )
        if not has_text(row["document"]):
            raise InputError(
                f"the submission row for {row['item']} names no document",
                path=site.path,
                layer="submission",
                feature=fid,
                field="document",
                fix="give the document (and page) that covers the item",
            )
        item = _canonical(row["item"], site.path, layer="submission", feature=fid)
        note = f" ({row['note']})" if has_text(row["note"]) else ""
        out.setdefault(item, []).append(f"{row['document']}{note}")
    return out


def _applies(item: ChecklistItem, conditions, has_smp: bool, smps_held: str) -> str:
    """yes, no or undecided. ``has_smp``: the plan shows SMPs; ``smps_held``: the profile's
    ``[easement_coverage] smps_held`` ("shown": the required_facility items reach every SMP
    shown; "required": only a condition's)."""
    if item.applies == "always":
        return "yes"
    if item.applies in ("on_request", "village_choice"):
        return "no"
    decided = [c for c in conditions.values() if c is not None and c.decided]
    held = item.applies == "facility" or (item.applies == "required_facility" and smps_held == "shown")
    if any(c.applies for c in decided) or (held and has_smp):
        return "yes"
    if len(decided) < len(conditions):
        return "undecided"
    return "no"


def build_checklist(
    site: SitePlan,
    conditions: Mapping,
    certification: CertificationResult,
    guarantees: GuaranteeResult,
    confirmations: Sequence[Confirmation] = (),
    location_titles: Sequence[str] = ("location map",),
    smps_held: str = "required",
) -> list[dict]:
    """One entry per item: ``{"item", "text", "status", "evidence", "due", "applies",
    "confirmation"}`` (docs/CONTRACT.md's four keys and three more); B(2)'s also ``contents``: each
    content of the site map with its own status. ``location_titles``: the profile's
    ``[site_map_scale] location_map_titles``; ``smps_held``: ``[easement_coverage] smps_held``
    ("required": the facility items apply only where a condition does)."""
    evidence = _Evidence(site, certification, guarantees, location_titles)
    submitted = _submissions(site)
    confirmed = {c.item: c for c in confirmations}
    smp = site.layer("smp")
    has_smp = smp is not None and len(smp) > 0
    entries = []
    for item in checklist_items():
        applies = _applies(item, conditions, has_smp, smps_held)
        shown, text = evidence.holds(item.evidence)
        optional = item.applies in ("on_request", "village_choice")
        if applies == "no" and not (optional and (item.item in submitted or shown)):
            status = NOT_APPLICABLE
            said = (
                "only if the Stormwater Management Administrator requests more information"
                if item.applies == "on_request"
                else 'the Village "may require" it: a reviewer\'s choice, not a requirement of '
                "the chapter (if required, due before construction)"
                if item.applies == "village_choice"
                else "no condition (A, B or C) applies"
                + (
                    " and the plan has no SMP"
                    if item.applies == "facility"
                    or (item.applies == "required_facility" and smps_held == "shown")
                    else ': no stormwater management facility is "one of the requirements" '
                    "(Maintenance and repair B)"
                    if item.applies == "required_facility"
                    else ""
                )
            )
        elif shown:
            status, said = PROVIDED, f"site plan: {text}"
        elif item.item in submitted:
            status, said = PROVIDED, "submission: " + "; ".join(submitted[item.item])
        else:
            status, said = (
                MISSING,
                (
                    f"not in the site plan ({text}) and no submission names it"
                    if item.evidence != "submission"
                    else "no submission names a document for it"
                ),
            )
            if item.due != "approval":
                status, said = NOT_YET_DUE, f"{said}; {_DUE_WORDS[item.due]}"
        contents = _site_map_contents(evidence, item.item in submitted) if item.item == "B(2)" else None
        if contents is not None:
            count = sum(c["status"] == PROVIDED for c in contents)
            said += (
                f"; the site map shows {count} of {len(contents)} contents B(2) says it "
                '"should show" (each listed)'
            )
            located = next(c for c in contents if c["content"] == "location_map")
            if status == PROVIDED and located["status"] != PROVIDED:
                # "shall provide ... Site map/construction drawing(s) for the project, including
                # a general location map": unlike the contents the site map "should show", the
                # location map is part of what B(2) requires (round 3, point 3).
                status = MISSING
                said = (
                    f'no general location map: {located["evidence"]} (B(2): "including a '
                    f'general location map"; add a layout_scale sheet whose drawing is '
                    f"location_map, or a submission for B(2)); {said}"
                )
        confirmation = confirmed.get(item.item)
        if confirmation is not None:
            status = CONFIRMED
        entry: dict[str, Any] = {
            "item": item.item,
            "text": item.text,
            "status": status,
            "evidence": said,
            "due": item.due,
            "applies": applies,
            "confirmation": confirmation.to_dict() if confirmation else None,
        }
        if contents is not None:
            entry["contents"] = contents
        entries.append(entry)
    return entries


def _site_map_contents(evidence: _Evidence, submitted: bool) -> list[dict]:
    """B(2)'s site-map contents (``analysis/data/site_map_contents.csv``), each with its status."""
    out = []
    for row in site_map_contents():
        shown, text = evidence.holds(row["evidence"])
        if not shown and submitted and "submission" in row["evidence"]:
            shown, text = True, "a submission for B(2)"
        out.append(
            {
                "content": row["content"],
                "text": row["text"],
                "status": PROVIDED if shown else MISSING,
                "evidence": f"site plan: {text}"
                if shown and not text.startswith("a sub")
                else text
                if shown
                else f"not shown ({text})",
            }
        )
    return out


def check_swppp_contents(
    checklist: Sequence[dict], profile: RulesProfile, swppp_required: Optional[bool] = True
) -> Finding:
    """``fail`` naming each item required before approval and missing; ``needs_review`` where
    only items resting on an undecided condition are missing; ``pass`` otherwise."""
    section = profile.section(RULE)
    if swppp_required is False:
        return Finding(RULE, NOT_APPLICABLE, section, "no SWPPP is required, so its contents are not checked")
    due = [e for e in checklist if e["due"] == "approval"]
    missing = [e for e in due if e["status"] == MISSING and e["applies"] == "yes"]
    undecided = [e for e in due if e["status"] == MISSING and e["applies"] == "undecided"]
    counts = {s: sum(e["status"] == s for e in due) for s in (PROVIDED, CONFIRMED)}
    features = [f"checklist:{e['item']}" for e in missing or undecided]
    if missing:
        return Finding(
            RULE,
            FAIL,
            section,
            f"the SWPPP lacks {len(missing)} item{'s' * (len(missing) != 1)} required "
            f"before approval: {', '.join(e['item'] for e in missing)} (provide them, "
            "or confirm each in the checklist with a note)",
            value=float(len(missing)),
            limit=0.0,
            units="items",
            features=features,
        )
    if undecided:
        return Finding(
            RULE,
            NEEDS_REVIEW,
            section,
            f"{', '.join(e['item'] for e in undecided)} "
            f"{'is' if len(undecided) == 1 else 'are'} missing and required if a "
            "condition not yet decided applies",
            value=float(len(undecided)),
            limit=0.0,
            units="items",
            features=features,
        )
    return Finding(
        RULE,
        PASS,
        section,
        f"every item required before approval is there: {counts[PROVIDED]} provided "
        f"(site plan or submission), {counts[CONFIRMED]} confirmed by a reviewer",
        value=0.0,
        limit=0.0,
        units="items",
    )


def check_contents(
    site: SitePlan,
    conditions: Mapping,
    profile: RulesProfile,
    swppp_required: Optional[bool] = True,
    confirmations: Sequence[Confirmation] = (),
) -> Contents:
    """The checklist, ``swppp_contents``, ``contractor_certification``, the guarantees
    (``construction_guarantee``, ``maintenance_bond``) and ``esc_practices``."""
    certification = check_contractor_certification(site, profile)
    guarantees = check_guarantees(site, profile)
    esc = summarise_esc_practices(site)
    checklist = build_checklist(
        site,
        conditions,
        certification,
        guarantees,
        confirmations,
        profile.site_map_scale.location_map_titles,
        profile.easement_coverage.smps_held,
    )
    findings = [check_swppp_contents(checklist, profile, swppp_required)]
    if swppp_required is False:  # nothing of a SWPPP is owed: say so once per rule
        findings += [
            Finding(
                rule, NOT_APPLICABLE, profile.section(rule), "no SWPPP is required, so this is not checked"
            )
            for rule in (
                "contractor_certification",
                "construction_guarantee",
                "maintenance_bond",
                "esc_practices",
            )
        ]
    else:
        findings += certification.findings + guarantees.findings
        findings += check_esc_practices(site, esc, profile)
    return Contents(checklist=checklist, findings=findings, esc_practices=esc)


def checklist_frame(checklist: Sequence[dict]) -> pd.DataFrame:
    """The checklist as the findings GeoPackage's ``checklist`` table (no geometry)."""
    rows = [
        {
            "item": e["item"],
            "status": e["status"],
            "evidence": e["evidence"],
            "due": e["due"],
            "applies": e["applies"],
            "reviewer": (e["confirmation"] or {}).get("reviewer"),
            "confirmed_on": (e["confirmation"] or {}).get("date"),
            "note": (e["confirmation"] or {}).get("note"),
            "text": e["text"],
        }
        for e in checklist
    ]
    return pd.DataFrame(
        rows,
        columns=["item", "status", "evidence", "due", "applies", "reviewer", "confirmed_on", "note", "text"],
        dtype=object,
    )


# --- the review's check ------------------------------------------------------------------


def _run(context, progress) -> CheckResult:
    contents = check_contents(
        context.site,
        context.decided("A", "B", "C"),
        context.profile,
        context.conditions["swppp_required"],
        context.confirmations,
    )
    return CheckResult(
        contents.findings, {"esc_practices": contents.esc_practices}, extra={"checklist": contents.checklist}
    )


CHECKS = (
    Check(
        "checklist",
        rules=(
            "swppp_contents",
            "contractor_certification",
            "construction_guarantee",
            "maintenance_bond",
            "esc_practices",
        ),
        reads=(
            "site:project",
            "site:disturbance",
            "site:smp",
            "site:easement",
            "site:esc_practice",
            "site:submission",
            "site:contractor_certification",
            "site:guarantee",
            "confirmations",
            "conditions",
            "swppp_required",
        ),
        run=_run,
        needs=("applicability", "condition_a", "condition_b", "condition_c"),
        doing="filling in the SWPPP contents checklist",
        weight=2.0,
    ),
)
