"""The comment letter (``swppp letter``, issue 35): what the applicant must still do, from the
open findings of one round of a project's review file.

A finding is a comment when it is open (``fail``, ``warn`` or ``needs_review``) and the
reviewer has neither overridden it nor marked it resolved. Each comment gives the chapter's
citation (the finding's ``section``), the measured figure, the finding's own words (which say
what is wrong and, where the check can say it, how to fix it) and what would satisfy it (the
profile's ``[letter.requests]`` for the rule). Comments are numbered in order and grouped by
topic (the rule's title). The comments of the round before are repeated, each resolved or still
open, by the rounds' matching (:func:`~analysis.rounds.matching.match_findings`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from contextlib import closing
from datetime import date
from pathlib import Path
from typing import Callable, Optional

from ..errors import InputError, OutputError
from ..findings import INFO
from ..judge.wording import CONCERN
from ..profile import RulesProfile
from ..rounds.compare import OPEN
from ..rounds.contract import ROUNDS_TABLE
from ..rounds.decisions import OVERRIDE, RESOLVED
from ..rounds.matching import match_findings
from ..rounds.record import _held, latest_decisions
from ..rounds.reviewfile import ReviewConnection, open_review_file, review_file_name
from .letter_model import (
    LABELS,
    STILL_OPEN,
    WAS_RESOLVED,
    Comment,
    Earlier,
    Letter,
    earlier_status,
    intro,
    label,
)

__all__ = [
    "Comment",
    "Letter",
    "build_letter",
    "render_letter_html",
    "is_comment",
    "intro",
    "earlier_status",
    "label",
    "LABELS",
    "letter_date",
    "write_letter",
    "letter_summary",
]


def is_comment(finding: dict) -> bool:
    """Open, and neither overridden nor resolved by the reviewer."""
    decision = (finding.get("decision") or {}).get("decision")
    return finding["status"] in OPEN and decision not in (OVERRIDE, RESOLVED)


def _figure(finding: dict) -> str:
    value, limit, units = finding.get("value"), finding.get("limit"), finding.get("units") or ""
    if value is None:
        return ""
    text = f"{value:,.4g} {units}".strip()
    if limit is not None:
        text += f" (limit {limit:,.4g} {units})".rstrip(" )") + ")"
    return text


def _request(profile: RulesProfile, finding: dict) -> str:
    return profile.letter.requests.get(finding["rule"], profile.letter.requests.get("default", ""))


def _topic(profile: RulesProfile, rule: str) -> str:
    try:
        return profile.title(rule)
    except InputError:
        return rule


def _condition_a(profile: RulesProfile, findings: list[dict], result: dict) -> list[dict]:
    """Where Condition A applies: its finding (the first ``condition_a`` one), as a comment
    asking for controls for the pollutants of concern the review named (the JSON's
    ``conditions.A.evidence``), with the impaired water and any TMDL in its words."""
    a = (result.get("conditions") or {}).get("A") or {}
    if a.get("applies") is not True:
        return []
    found = next((f for f in findings if f["rule"] == "condition_a" and f["status"] == INFO), None)
    if found is None or (found.get("decision") or {}).get("decision") in (OVERRIDE, RESOLVED):
        return []
    evidence = [str(e) for e in a.get("evidence") or []]
    pollutants = next((e[len(CONCERN) :] for e in evidence if e.startswith(CONCERN)), "")
    request = profile.letter.requests.get("condition_a", "").replace(
        "{pollutants}", pollutants or "the pollutants of concern"
    )
    return [{**found, "request": request}]


def _comments(profile: RulesProfile, findings: list[dict], result: Optional[dict] = None) -> list[Comment]:
    chosen = _condition_a(profile, findings, result or {}) + [f for f in findings if is_comment(f)]
    # Grouped by topic in the order each topic first appears; numbered in that order.
    order: dict[str, int] = {}
    for f in chosen:
        order.setdefault(_topic(profile, f["rule"]), len(order))
    chosen.sort(key=lambda f: (order[_topic(profile, f["rule"])], f["number"]))
    return [
        Comment(
            number=i,
            finding=f["number"],
            rule=f["rule"],
            topic=_topic(profile, f["rule"]),
            status=f["status"],
            section=f["section"],
            figure=_figure(f),
            message=f["message"],
            request=f.get("request") or _request(profile, f),
            features=tuple(f.get("features") or ()),
            decision=(f.get("decision") or {}).get("decision") or "",
        )
        for i, f in enumerate(chosen, start=1)
    ]


def _round(con: ReviewConnection, path: str, number: Optional[int]) -> tuple[int, dict, list[dict]]:
    if number is None:
        number = con.execute(f"SELECT max(round) FROM {ROUNDS_TABLE}").fetchone()[0]
        if number is None:
            raise InputError(
                "the review file holds no round yet",
                path=path,
                fix="record a review round in it first",
            )
    row = con.execute(f"SELECT * FROM {ROUNDS_TABLE} WHERE round = ?", (number,)).fetchone()
    if row is None:
        last = con.execute(f"SELECT max(round) FROM {ROUNDS_TABLE}").fetchone()[0]
        raise InputError(
            f"the review file has no round {number}" + (f" (its rounds are 1 to {last})" if last else ""),
            path=path,
            field="round",
            fix="name a recorded round",
            parameter="round_number",
        )
    names = [c[0] for c in con.execute(f"SELECT * FROM {ROUNDS_TABLE} LIMIT 0").description]
    info = dict(zip(names, row))
    decided = latest_decisions(con, number)
    findings = [
        {**json.loads(text), "number": n, "decision": decided.get(n)}
        for n, text in con.execute(
            "SELECT finding, json FROM round_findings WHERE round = ? ORDER BY finding", (number,)
        )
    ]
    return number, info, findings


def build_letter(
    path: str | Path,
    profile: RulesProfile,
    number: Optional[int] = None,
    reviewer: Optional[str] = None,
    dated: Optional[date] = None,
) -> Letter:
    """The letter for round ``number`` (None: the latest) of the review file at ``path``."""
    with closing(open_review_file(path, create=False)) as con:
        where = con.label
        number, info, findings = _round(con, where, number)
        result = json.loads(info["result"]) if info.get("result") else {}
        comments = _comments(profile, findings, result)
        earlier: list[Earlier] = []
        previous = number - 1 if number > 1 else None
        if previous is not None:
            _n, info_before, before = _round(con, where, previous)
            result_before = json.loads(info_before["result"]) if info_before.get("result") else {}
            held_now, crs_now = _held(con, number)
            held_then, crs_then = _held(con, previous)
            matches = match_findings(held_now, held_then, profile, crs_now or profile.area_crs, crs_then)
            now_of: dict[int, int] = {}  # finding number then -> finding number now
            for h, m in zip(held_now, matches):
                if m.previous is not None and m.by != "new":
                    now_of[m.previous.number] = h.number
            by_number = {f["number"]: f for f in findings}
            comment_of = {c.finding: c.number for c in comments}
            for c in _comments(profile, before, result_before):
                now = now_of.get(c.finding)
                if now is None:
                    status, how, at = WAS_RESOLVED, "no longer found on the resubmitted plan", None
                elif now in comment_of:
                    status, how, at = STILL_OPEN, "", comment_of[now]
                else:
                    f = by_number[now]
                    d = (f.get("decision") or {}).get("decision")
                    how = (
                        "overridden by the reviewer"
                        if d == OVERRIDE
                        else "marked resolved by the reviewer"
                        if d == RESOLVED
                        else f"now {f['status'].replace('_', ' ')}"
                    )
                    status, at = WAS_RESOLVED, None
                earlier.append(Earlier(c.number, c.rule, c.topic, c.message, status, at, how))
    project = result.get("project") or {}
    groups: list[tuple[str, list[Comment]]] = []
    for c in comments:
        if not groups or groups[-1][0] != c.topic:
            groups.append((c.topic, []))
        groups[-1][1].append(c)
    return Letter(
        village=profile.letter.village,
        address=tuple(profile.letter.address),
        office=profile.letter.office,
        signature_title=profile.letter.signature_title,
        illustrative=profile.letter.illustrative,
        reviewer=reviewer or "",
        dated=(dated or date.today()).isoformat(),
        site=info.get("site_name") or project.get("name") or "",
        project_address=project.get("address") or "",
        applicant=project.get("applicant") or "",
        review_file=review_file_name(path),
        round=number,
        reviewed_on=info.get("reviewed_on") or "",
        plan_sha256=info.get("plan_sha256") or "",
        comments=comments,
        groups=groups,
        previous=previous,
        earlier=earlier,
    )


def render_letter_html(letter: Letter) -> str:
    """The letter as one self-contained HTML page (Jinja2, autoescaped)."""
    from .templating import template

    return template("letter.html.j2").render(
        letter=letter, intro=intro(letter), status=earlier_status, label=lambda key: label(key, letter)
    )


def letter_date(text: Optional[str]) -> Optional[date]:
    """The letter's date given as ``YYYY-MM-DD`` (None or blank: None, today's is written);
    :class:`InputError` naming the value where it is no date."""
    if text is None or not str(text).strip():
        return None
    try:
        return date.fromisoformat(str(text).strip())
    except ValueError:
        raise InputError(
            f"the date {text!r} is not a date", fix="give it as YYYY-MM-DD", parameter="dated"
        ) from None


def write_letter(
    letter: Letter,
    html_path: Optional[str | Path] = None,
    pdf_path: Optional[str | Path] = None,
    stage_pdf: Optional[Callable[[str, str | Path], str]] = None,
    more: Optional[Mapping[Optional[str | Path], Callable[[Path], object]]] = None,
    docx_path: Optional[str | Path] = None,
) -> str:
    """Write ``letter`` as HTML (``html_path``) and as PDF (``pdf_path``, laid out by
    ``stage_pdf(html, target) -> staged path``: the plugin's ``letter_pdf.stage_letter_pdf``):
    all or none (the PDF staged beside its target, moved in once the HTML is written).
    ``more`` (target -> ``write(staged path)``, None targets skipped) are further files written
    with the HTML; ``docx_path``: the letter as a Word document, among them. The letter's HTML
    is returned. Used by
    ``swppp letter`` and ``swppp:letter`` alike."""
    from ..io.files import discard, publish, write_all

    if pdf_path and stage_pdf is None:
        raise ValueError("a PDF needs stage_pdf")
    html = render_letter_html(letter)
    others = dict(more or {})
    if docx_path:  # the Word letter (report.letter_docx), written with the others
        from .letter_docx import write_letter_docx

        others[docx_path] = lambda path: write_letter_docx(letter, path)
    staged = None
    try:
        if pdf_path and stage_pdf is not None:
            staged = stage_pdf(html, pdf_path)
        write_all({html_path: lambda path: path.write_text(html, encoding="utf-8"), **others})
        if staged is not None:
            publish(staged, pdf_path)  # type: ignore[arg-type]
            staged = None
    except OutputError:
        raise
    except OSError as err:
        raise OutputError(
            f"could not write {pdf_path} ({err}); nothing was written. Choose a file path in a "
            "folder you can write to"
        ) from None
    finally:
        if staged is not None:
            discard(staged)
    return html


def letter_summary(letter: Letter, file_name: Optional[str] = None) -> str:
    """The letter in one line, as ``swppp letter`` prints it: its round, its comments and what
    became of the round before's (``file_name``: the review file's name as it is to be shown,
    escaped by the caller; default the letter's own)."""
    name = letter.review_file if file_name is None else file_name
    line = f"round {letter.round} of {name}: {len(letter.comments)} comment(s)"
    if letter.previous:
        resolved = sum(1 for e in letter.earlier if e.now is None)
        line += (
            f"; round {letter.previous}'s {len(letter.earlier)}: {resolved} resolved, "
            f"{len(letter.earlier) - resolved} still open"
        )
    return line
