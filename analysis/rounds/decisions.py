"""What the reviewer decided: a decisions file (TOML or CSV) read, each row's finding found.

A decision names a finding of the round it is applied to by its stable key (its rule and its
feature ids, ``layer:id``) or by its number in that round (1 for the first, as the findings
GeoPackage numbers them), and says ``accept``, ``override`` (a reason is required) or
``resolved``, or ``withdraw`` (the finding's decision taken back: undecided again, the earlier
rows kept). Every refusal names the file, the row and the field, and how to fix it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ..errors import InputError

__all__ = [
    "ACCEPT",
    "OVERRIDE",
    "RESOLVED",
    "WITHDRAW",
    "DECISIONS",
    "RECORDED",
    "Decision",
    "DecisionRow",
    "read_decisions",
    "resolve_decisions",
    "finding_key",
    "key_text",
]

ACCEPT, OVERRIDE, RESOLVED, WITHDRAW = "accept", "override", "resolved", "withdraw"
DECISIONS = (ACCEPT, OVERRIDE, RESOLVED)  # a finding's standing decision (else it is undecided)
# What a decision row may say: a decision, or its withdrawal (the latest row wins, so a finding
# whose latest row withdraws is undecided again, and nothing is carried to the next round).
RECORDED = DECISIONS + (WITHDRAW,)
# The columns of a decisions CSV (the keys of a TOML [[decision]] table).
COLUMNS = ("finding", "rule", "features", "decision", "reason", "reviewer")
_FIX_KEY = (
    "name the finding by its number in this round (finding = 3) or by its rule and feature "
    'ids as the review\'s JSON gives them (rule = "easement_coverage", features = ["smp:SMP-2"])'
)


def finding_key(rule: str, features: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """A finding's stable key: its rule and its feature ids (sorted: their order is not part
    of what the finding is about)."""
    return str(rule), tuple(sorted(str(f) for f in features))


def key_text(key: tuple[str, tuple[str, ...]]) -> str:
    rule, features = key
    return f"{rule} [{'; '.join(features)}]" if features else f"{rule} [no features]"


@dataclass(frozen=True)
class Decision:
    """A decision as recorded: what, why, who, and where it came from (``source``: the file and
    row, or "carried from round N")."""

    decision: str
    reason: Optional[str]
    reviewer: str
    source: str
    carried_from: Optional[int] = None

    def __post_init__(self) -> None:
        if self.decision not in RECORDED:
            raise ValueError(f"decision must be one of {RECORDED}, not {self.decision!r}")


@dataclass(frozen=True)
class DecisionRow:
    """One row of a decisions file, before it is matched to a finding: ``where`` names it
    (``row 3``, ``[[decision]] 2``) for every message about it."""

    where: str
    number: Optional[int]
    rule: Optional[str]
    features: tuple[str, ...]
    decision: str
    reason: Optional[str]
    reviewer: Optional[str]


def read_decisions(path: str | Path, reviewer: Optional[str] = None) -> list[DecisionRow]:
    """The rows of a decisions file (``.toml`` or ``.csv``), each checked on its own: a known
    decision, a reason for an override, a way to name its finding, and someone who made it
    (the row's ``reviewer``, the file's, or ``reviewer``: ``--reviewer``)."""
    path = Path(path)
    if not path.is_file():
        raise InputError("the decisions file does not exist", path=path, fix="check the path")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        raw = _toml_rows(path)
    elif suffix == ".csv":
        raw = _csv_rows(path)
    else:
        raise InputError(
            "a decisions file is TOML (.toml) or CSV (.csv)",
            path=path,
            fix='save the decisions as NAME.toml or NAME.csv (docs/CLI.md, "Review rounds")',
        )
    file_reviewer = raw[0]
    rows = []
    for where, values in raw[1]:
        rows.append(_row(path, where, values, file_reviewer or reviewer))
    return rows


def _toml_rows(path: Path) -> tuple[Optional[str], list[tuple[str, Mapping[str, Any]]]]:
    from ..profile import read_toml

    data = read_toml(path, "decisions file")
    unknown = sorted(set(data) - {"reviewer", "decision"})
    if unknown:
        raise InputError(
            f"unknown key(s) {', '.join(repr(k) for k in unknown)}",
            path=path,
            fix="a decisions TOML holds 'reviewer' (optional) and [[decision]] tables",
        )
    reviewer = data.get("reviewer")
    if reviewer is not None and (not isinstance(reviewer, str) or not reviewer.strip()):
        raise InputError(
            "'reviewer' must be a name (text)", path=path, field="reviewer", fix='write reviewer = "A. Name"'
        )
    tables = data.get("decision", [])
    if not isinstance(tables, list) or not all(isinstance(t, dict) for t in tables):
        raise InputError(
            "'decision' must be an array of tables",
            path=path,
            field="decision",
            fix="write each as [[decision]]",
        )
    if not tables:
        raise InputError(
            "the decisions file holds no [[decision]]", path=path, fix="add a [[decision]] table per finding"
        )
    return reviewer, [(f"[[decision]] {i}", t) for i, t in enumerate(tables, start=1)]


def _csv_rows(path: Path) -> tuple[Optional[str], list[tuple[str, Mapping[str, Any]]]]:
    from ..io.csv_rows import read_csv

    rows = read_csv(path, (), "decisions file")
    unknown = [c for c in rows.header if c and c not in COLUMNS]
    if unknown or "decision" not in rows.header:
        raise InputError(
            "the decisions file's header must name 'decision' and may name "
            + ", ".join(f"'{c}'" for c in COLUMNS if c != "decision")
            + (f"; it names {', '.join(repr(c) for c in unknown)}" if unknown else ""),
            path=path,
            row=1,
            fix="write the header row finding,rule,features,decision,reason,reviewer",
        )
    out: list[tuple[str, Mapping[str, Any]]] = []
    for line, values in rows.rows:
        cells: dict[str, Any] = {k: v for k, v in values.items() if v != ""}
        if "features" in cells:
            cells["features"] = [f.strip() for f in str(cells["features"]).split(";") if f.strip()]
        if "finding" in cells:
            text = str(cells["finding"])
            cells["finding"] = int(text) if text.isdigit() else text
        out.append((f"row {line}", cells))
    return None, out


def refusal(
    path: str | Path,
    where: str,
    field: Optional[str],
    problem: str,
    fix: str,
    parameter: Optional[str] = None,
) -> InputError:
    """A refusal of one row: a CSV's by its line and column (``row 4``), a TOML's by its table
    and key (``[[decision]] 2``)."""
    if where.startswith("row "):
        return InputError(problem, path=path, row=int(where[4:]), column=field, fix=fix, parameter=parameter)
    return InputError(
        f"{where}" + (f", key '{field}'" if field else "") + f": {problem}",
        path=path,
        fix=fix,
        parameter=parameter,
    )


def _row(path: Path, where: str, values: Mapping[str, Any], reviewer: Optional[str]) -> DecisionRow:
    def refuse(problem: str, field: Optional[str], fix: str, parameter: Optional[str] = None) -> InputError:
        return refusal(path, where, field, problem, fix, parameter)

    unknown = sorted(set(values) - set(COLUMNS))
    if unknown:
        raise refuse(
            f"unknown key(s) {', '.join(repr(k) for k in unknown)}",
            unknown[0],
            "a decision holds " + ", ".join(COLUMNS),
        )
    decision = values.get("decision")
    if decision not in RECORDED:
        raise refuse(
            f"decision is {decision!r}, not one of {', '.join(RECORDED)}",
            "decision",
            "write accept, override (with a reason) or resolved, or withdraw to take a decision back",
        )
    reason = values.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise refuse("reason must be text", "reason", 'write reason = "..."')
    reason = reason.strip() if reason else None
    if decision == OVERRIDE and not reason:
        raise refuse(
            "an override needs a reason, and this one gives none",
            "reason",
            "say why the finding is overridden in its reason (it is shown on the decision page)",
        )
    who = values.get("reviewer", reviewer)
    if not isinstance(who, str) or not who.strip():
        raise refuse(
            "no reviewer made this decision",
            "reviewer",
            "give the row a reviewer, or the file a reviewer, or name the reviewer when the review is run",
            "reviewer",
        )
    number = values.get("finding")
    if number is not None and (isinstance(number, bool) or not isinstance(number, int) or number < 1):
        raise refuse(
            f"finding is {number!r}, not a finding's number (1, 2, ...)",
            "finding",
            _FIX_KEY,
        )
    rule = values.get("rule")
    features = values.get("features", [])
    if rule is not None and (not isinstance(rule, str) or not rule.strip()):
        raise refuse("rule must be a rule's name (text)", "rule", _FIX_KEY)
    if isinstance(features, str):
        features = [features]
    if not isinstance(features, list) or not all(isinstance(f, str) for f in features):
        raise refuse("features must be a list of 'layer:id' texts", "features", _FIX_KEY)
    if number is None and rule is None:
        raise refuse("it names no finding", "finding", _FIX_KEY)
    if number is not None and (rule is not None or features):
        raise refuse("it names its finding twice (a number and a rule)", "finding", "give one of the two")
    return DecisionRow(
        where=where,
        number=number,
        rule=rule.strip() if isinstance(rule, str) else None,
        features=tuple(f.strip() for f in features),
        decision=decision,
        reason=reason,
        reviewer=who.strip(),
    )


def resolve_decisions(
    path: str | Path, rows: Sequence[DecisionRow], findings: Sequence[Mapping[str, Any]]
) -> dict[int, Decision]:
    """Each row's finding (its number, 1 for the first, in ``findings``: the round's, as the
    JSON gives them) -> the decision; a later row on the same finding wins. A row naming no
    finding of this round, or one its key cannot tell from another, is refused by name."""
    by_key: dict[tuple[str, tuple[str, ...]], list[int]] = {}
    for number, f in enumerate(findings, start=1):
        by_key.setdefault(finding_key(f["rule"], f["features"]), []).append(number)
    name = Path(path).name
    out: dict[int, Decision] = {}
    for row in rows:
        if row.number is not None:
            if row.number > len(findings):
                raise refusal(
                    path,
                    row.where,
                    "finding",
                    f"finding {row.number} is not in this round, which has {len(findings)} finding(s)",
                    _FIX_KEY,
                )
            number = row.number
        else:
            key = finding_key(row.rule or "", row.features)
            found = by_key.get(key, [])
            if not found:
                rules = sorted({k[0] for k in by_key})
                hint = (
                    f"this round's findings of {row.rule} name "
                    + "; ".join(key_text(k) for k in by_key if k[0] == row.rule)
                    if row.rule in rules
                    else f"this round has no finding of rule {row.rule!r}"
                )
                raise refusal(
                    path,
                    row.where,
                    "features" if row.rule in rules else "rule",
                    f"no finding of this round is {key_text(key)} ({hint})",
                    _FIX_KEY,
                )
            if len(found) > 1:
                raise refusal(
                    path,
                    row.where,
                    "features",
                    f"{key_text(key)} names {len(found)} findings of this round "
                    f"(numbers {', '.join(map(str, found))})",
                    "name the finding by its number instead (finding = N)",
                )
            number = found[0]
        out[number] = Decision(row.decision, row.reason, row.reviewer or "", f"{name} {row.where}")
    return out
