"""Recording a review as the next round of its review file, with the reviewer's decisions.

One transaction (``begin`` ... ``commit`` of the review file's
:class:`~analysis.rounds.reviewfile.ReviewConnection`, a GeoPackage or a PostGIS schema): the
round, its findings, the plan it read (its disturbance, SMPs and easements:
:mod:`.plan_changes`), the decisions carried from the round before and those of the decisions
file are all written or none is; a process killed during the save leaves the file as it was
(SQLite's rollback journal; the server's rollback). Two saves at once take turns (SQLite's
lock, the wait of :class:`~analysis.io.geopackage.WaitingConnection`; PostgreSQL's lock on
``review_rounds``); the second is told that it became the round after the first's. A round is
never rewritten: decisions are rows of their own.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

import shapely

from ..errors import InputError
from ..io import geopackage
from ..review import Review
from ..units import crs_units
from .checksums import file_sha256, plan_checksum
from .compare import compare_rounds
from .contract import DECISIONS_TABLE, FINDINGS_TABLE, ROUNDS_TABLE
from .decisions import DECISIONS, OVERRIDE, WITHDRAW, Decision, read_decisions, resolve_decisions
from .matching import Held, Match, match_findings
from .plan_changes import (
    changes_json,
    no_plan_note,
    plan_changes,
    plan_of,
    read_plan,
    tie_changes,
    write_plan,
)
from .reviewfile import open_review_file, review_file_exists, review_file_label, review_file_name

__all__ = ["record_round", "add_decisions", "read_round", "latest_decisions", "round_summary"]

log = logging.getLogger(__name__)

# Called with a step's name after each statement of a save (tests: a process killed between
# them, tests/analysis/test_rounds_faults.py). None: nothing.
between_statements: Optional[Callable[[str], None]] = None


def _step(name: str) -> None:
    if between_statements is not None:
        between_statements(name)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def record_round(
    path: str | Path,
    review: Review,
    plan_files: Sequence[Mapping[str, str]],
    decisions: Optional[str | Path] = None,
    reviewer: Optional[str] = None,
    before_commit: Optional[Callable[[Review], object]] = None,
    told: Optional[Callable[[str], None]] = None,
    compare_to: Optional[int] = None,
) -> dict:
    """Record ``review`` as the next round of the review file at ``path`` (made where none is
    yet) and return what it adds to the JSON (also set as ``review.rounds``).

    ``plan_files`` (:func:`~analysis.rounds.checksums.plan_files`) are the site plan's files
    read. ``decisions`` (a TOML or CSV file) are applied to this round's findings, after the
    decisions carried from the round before; ``reviewer`` makes the rows that name no one.
    ``before_commit(review)`` writes the outputs while the round is not yet committed: where it
    fails, the round is not recorded. ``told`` is told what the user should know (another save
    came first). ``compare_to`` (a round recorded before this one) adds ``comparison``: what
    was resolved, is still open, is new or changed since that round
    (:func:`~analysis.rounds.compare.compare_rounds`), the plan's changes since it
    (``comparison.plan_changes``; their geometries, for the site map, in ``plan_changes``) and
    those at each compared finding's place. A format 1 file is made format 2 in the same
    transaction. Bad input raises :class:`InputError`
    before anything is written.
    """
    review.rounds = None
    where = review_file_label(path)
    data = review.to_dict()
    findings = data["findings"]
    chosen: dict[int, Decision] = {}
    if decisions is not None:
        chosen = resolve_decisions(decisions, read_decisions(decisions, reviewer), findings)
    profile_sha = file_sha256(review.profile.source) if Path(review.profile.source).is_file() else None
    reference = data.get("reference") or {}
    if compare_to is not None and not review_file_exists(path):  # refused before the file is made
        raise InputError(
            f"there is no round {compare_to} to compare with: the review file does not exist yet",
            path=where,
            fix="record a first round before comparing with it",
            parameter="compare_to",
        )
    with closing(open_review_file(path)) as con:
        say = told or log.warning
        con.waiting = lambda _text: say(  # type: ignore[attr-defined]
            f"waiting for another process to finish with {where} (it holds the file: another "
            f"save, or a program with it open; waiting up to {geopackage.STORE_BUSY_TIMEOUT_S:g} s)"
        )
        seen = _latest_round(con)
        try:
            con.begin()
        except InputError as err:
            raise InputError(
                f"another save held this review file too long; this round was not recorded ({err.problem})",
                path=where,
                fix="wait for the other save to finish and run this review again",
            ) from None
        try:
            con.upgrade()  # a format 1 file: its plan tables added, in this transaction
            number = (_latest_round(con) or 0) + 1
            if number - 1 != (seen or 0) and told is not None:
                told(
                    f"another save recorded round {number - 1} in {where} while this one waited; "
                    f"this review is round {number}"
                )
            previous = number - 1 if number > 1 else None
            area_crs = review.area_crs
            plan = plan_of(review.site)
            changes = None
            held_now = [
                Held(
                    i,
                    f["rule"],
                    tuple(f["features"]),
                    f["value"],
                    review.findings[i - 1].geometry,
                    f["status"],
                    f["message"],
                )
                for i, f in enumerate(findings, start=1)
            ]
            matches: list[Optional[Match]] = [None] * len(findings)
            carried: dict[int, tuple[Decision, str]] = {}
            if previous is not None:
                before, before_crs = _held(con, previous)
                matches = list(match_findings(held_now, before, review.profile, area_crs, before_crs))
                decided = latest_decisions(con, previous)
                for i, m in enumerate(matches, start=1):
                    if m is not None and m.previous is not None and m.previous.number in decided:
                        d = decided[m.previous.number]
                        kept = Decision(
                            d["decision"],
                            d["reason"],
                            d["reviewer"],
                            f"carried from round {previous}",
                            previous,
                        )
                        carried[i] = (kept, d["decided_at"])
            comparison = None
            if compare_to is not None:
                if not 1 <= compare_to < number:
                    raise InputError(
                        f"there is no round {compare_to} to compare with: the file holds "
                        + (f"rounds 1 to {number - 1}" if number > 1 else "no round yet")
                        + f", and this review becomes round {number}",
                        path=where,
                        fix="compare with a round recorded before this one",
                        parameter="compare_to",
                    )
                then, then_crs = _held(con, compare_to)
                paired = match_findings(held_now, then, review.profile, area_crs, then_crs)
                then_plan = read_plan(con, compare_to, area_crs)
                note = None if then_plan is not None else no_plan_note([compare_to])
                changes = None if then_plan is None else plan_changes(then_plan, plan, review.profile)
                tolerance = crs_units(review.profile.rounds.place_tolerance_ft, area_crs)
                comparable = then_crs in (None, area_crs)

                def tie(before, after):
                    if changes is None:
                        return [], str(note)
                    return tie_changes(changes, before, after, tolerance, comparable)

                comparison = compare_rounds(compare_to, held_now, then, paired, tie)
                comparison["plan_changes"] = changes_json(changes, note)
            recorded_at = _now()
            con.execute(
                f"INSERT INTO {ROUNDS_TABLE} (round, recorded_at, reviewed_on, site_name, plan_sha256, "
                "plan_files, profile, profile_sha256, tool_version, reference_versions, area_crs, result) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    number,
                    recorded_at,
                    data["reviewed_on"],
                    data["site"]["name"],
                    plan_checksum([dict(f) for f in plan_files]),
                    json.dumps(list(plan_files)),
                    data["profile"],
                    profile_sha,
                    data["tool"]["version"],
                    json.dumps(reference["versions"]) if reference.get("versions") else None,
                    area_crs,
                    json.dumps(data, ensure_ascii=False, allow_nan=False),
                ),
            )
            _step("round")
            for (i, f), m in zip(enumerate(findings, start=1), matches):
                geometry = review.findings[i - 1].geometry
                con.execute(
                    f"INSERT INTO {FINDINGS_TABLE} (round, finding, rule, features, status, value, json, "
                    "geometry, matched_round, matched_finding, matched_by) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        number,
                        i,
                        f["rule"],
                        json.dumps(f["features"], ensure_ascii=False),
                        f["status"],
                        f["value"],
                        json.dumps(f, ensure_ascii=False, allow_nan=False),
                        None if geometry is None or shapely.is_empty(geometry) else shapely.to_wkb(geometry),
                        previous if m is not None and m.previous is not None else None,
                        m.previous.number if m is not None and m.previous is not None else None,
                        m.by if m is not None else None,
                    ),
                )
                _step(f"finding {i}")
            write_plan(con, number, plan, _step)
            for i, (kept, when) in carried.items():  # as made: who and when
                _insert_decision(con, number, i, kept, when)
                _step(f"carried decision {i}")
            for i, made in chosen.items():
                _insert_decision(con, number, i, made, recorded_at)
                _step(f"decision {i}")
            now_decided = latest_decisions(con, number)
            info = _round_info(
                path, number, recorded_at, plan_files, profile_sha, previous, findings, matches, now_decided
            )
            if comparison is not None:
                info["comparison"] = comparison
                # The changes' geometries, for the site map (not in the JSON).
                info["plan_changes"] = changes
            review.rounds = info
            if before_commit is not None:
                before_commit(review)
            _step("commit")
            con.commit()
        except BaseException:
            review.rounds = None
            if con.in_transaction:
                con.rollback()
            raise
    return info


def _insert_decision(con, number: int, finding: int, d: Decision, decided_at: str) -> None:
    con.execute(
        f"INSERT INTO {DECISIONS_TABLE} (round, finding, decision, reason, reviewer, decided_at, source, "
        "carried_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (number, finding, d.decision, d.reason, d.reviewer, decided_at, d.source, d.carried_from),
    )


def _latest_round(con) -> Optional[int]:
    value = con.execute(f"SELECT max(round) FROM {ROUNDS_TABLE}").fetchone()[0]
    return None if value is None else int(value)


def _held(con, number: int) -> tuple[list[Held], Optional[str]]:
    crs = con.execute(f"SELECT area_crs FROM {ROUNDS_TABLE} WHERE round = ?", (number,)).fetchone()
    rows = con.execute(
        f"SELECT finding, rule, features, value, geometry, status, json FROM {FINDINGS_TABLE} "
        "WHERE round = ? ORDER BY finding",
        (number,),
    ).fetchall()
    held = [
        Held(
            n,
            rule,
            tuple(json.loads(features)),
            value,
            shapely.from_wkb(blob) if blob else None,
            status,
            json.loads(text)["message"],
        )
        for n, rule, features, value, blob, status, text in rows
    ]
    return held, crs[0] if crs else None


def latest_decisions(con, number: int) -> dict[int, dict[str, Any]]:
    """Finding number -> its latest decision in round ``number`` (the last appended wins; a
    finding whose latest row withdraws its decision is left out: undecided)."""
    out: dict[int, dict[str, Any]] = {}
    for finding, decision, reason, reviewer, decided_at, source, carried_from in con.execute(
        "SELECT finding, decision, reason, reviewer, decided_at, source, carried_from "
        f"FROM {DECISIONS_TABLE} "
        "WHERE round = ? ORDER BY id",
        (number,),
    ):
        out[finding] = {
            "decision": decision,
            "reason": reason,
            "reviewer": reviewer,
            "decided_at": decided_at,
            "source": source,
            "carried_from": carried_from,
        }
    return {finding: d for finding, d in out.items() if d["decision"] != WITHDRAW}


def _round_info(
    path, number, recorded_at, plan_files, profile_sha, previous, findings, matches, decided
) -> dict:
    counts = dict.fromkeys(DECISIONS, 0)
    counts["undecided"] = 0
    for i in range(1, len(findings) + 1):
        counts[decided[i]["decision"] if i in decided else "undecided"] += 1
    return {
        "round": {
            "file": review_file_name(path),
            "number": number,
            "recorded_at": recorded_at,
            "plan_sha256": plan_checksum([dict(f) for f in plan_files]),
            "plan_files": [dict(f) for f in plan_files],
            "profile_sha256": profile_sha,
            "previous": previous,
            "decisions": counts,
        },
        "findings": [
            {
                "number": i,
                "decision": decided.get(i),
                "match": None if m is None else m.to_dict(previous, f["value"]),
            }
            for (i, f), m in zip(enumerate(findings, start=1), matches)
        ],
    }


def add_decisions(path: str | Path, number: int, decisions: Mapping[int, Decision]) -> None:
    """Append ``decisions`` (finding number -> decision) to round ``number`` of the review file,
    in one transaction; the round itself is not touched."""
    where = review_file_label(path)
    with closing(open_review_file(path, create=False)) as con:
        con.begin()
        try:
            count = con.execute(
                f"SELECT count(*) FROM {FINDINGS_TABLE} WHERE round = ?", (number,)
            ).fetchone()[0]
            if not count:
                raise InputError(
                    f"the review file has no round {number}", path=where, fix="name a recorded round"
                )
            for finding, d in decisions.items():
                if not 1 <= finding <= count:
                    raise InputError(
                        f"round {number} has no finding {finding} (it has {count})",
                        path=where,
                        fix="name a finding of the round by its number",
                    )
                if d.decision == OVERRIDE and not d.reason:
                    raise InputError(
                        f"finding {finding}: an override needs a reason", path=where, fix="give its reason"
                    )
                _insert_decision(con, number, finding, d, _now())
            con.commit()
        except BaseException:
            if con.in_transaction:
                con.rollback()
            raise


def read_round(path: str | Path, number: Optional[int] = None) -> dict:
    """Round ``number`` (None: the latest) of the review file: ``round`` (its row), ``findings``
    (the JSON of each, with its ``number`` and latest ``decision``)."""
    where = review_file_label(path)
    with closing(open_review_file(path, create=False)) as con:
        number = number if number is not None else (_latest_round(con) or 0)
        row = con.execute(f"SELECT * FROM {ROUNDS_TABLE} WHERE round = ?", (number,)).fetchone()
        if row is None:
            raise InputError(
                f"the review file has no round {number}", path=where, fix="name a recorded round"
            )
        names = [c[0] for c in con.execute(f"SELECT * FROM {ROUNDS_TABLE} LIMIT 0").description]
        decided = latest_decisions(con, number)
        findings = []
        for n, text in con.execute(
            f"SELECT finding, json FROM {FINDINGS_TABLE} WHERE round = ? ORDER BY finding", (number,)
        ):
            findings.append({**json.loads(text), "number": n, "decision": decided.get(n)})
    return {"round": dict(zip(names, row)), "findings": findings}


def round_summary(info: dict, where: str = "") -> str:
    """One line for a recorded round (a review's ``rounds``): its number, ``where`` it was
    recorded (" in FILE"), the round it was matched to, and its findings counted by decision
    (the CLI's and the algorithm's line)."""
    head = info["round"]
    counts = head["decisions"]
    return (
        f"round {head['number']} recorded{where}"
        + (f" (matched to round {head['previous']})" if head["previous"] else " (the first)")
        + ": "
        + ", ".join(f"{counts[k]} {k}" for k in ("override", "accept", "resolved", "undecided"))
    )
