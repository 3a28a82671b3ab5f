"""The panel's review rounds (issue 35): the rounds a review file holds (the "Compare to round"
choice), what changed since the round compared with as the Findings tab's *Changes* list, and
the comment letter written by ``swppp:letter``.

The comparison is the review JSON's ``comparison`` (docs/CONTRACT.md, "Review rounds"); each
line is plain text, every character that is not itself visible shown as its escape
(:func:`analysis.markup.shown_lines`, the rule of the terminal and the report).
"""

import os

from analysis.markup import shown_lines
from analysis.report.comparison import COMPARED

__all__ = [
    "LETTER_ALGORITHM",
    "recorded_rounds",
    "comparison_groups",
    "change_text",
    "change_tooltip",
    "letter_paths",
]

LETTER_ALGORITHM = "swppp:letter"


def recorded_rounds(path):
    """``(rounds, problem)``: the round numbers the review file at ``path`` (a GeoPackage or a
    PostgreSQL schema) holds (1 to the latest; [] where there is none yet or it holds none)
    and, where it cannot be read as a
    review file, why (the library's message, naming the file), else ''."""
    from analysis.errors import SwpppError
    from analysis.rounds.record import read_round
    from analysis.rounds.reviewfile import review_file_exists

    try:  # a GeoPackage, or a PostgreSQL schema (``postgresql://...?schema=NAME``)
        if not path or not review_file_exists(path):
            return [], ""
    except SwpppError as err:  # a PostgreSQL target that cannot be reached or has no schema
        return [], str(err)
    try:
        latest = int(read_round(path)["round"]["round"])
    except SwpppError as err:
        if "has no round 0" in str(err):  # a review file made, no round recorded in it yet
            return [], ""
        return [], str(err)
    except OSError as err:
        return [], str(err)
    return list(range(1, latest + 1)), ""


def _figure(value):
    return "none" if value is None else f"{value:.4g}"


def _side(side, number=None):
    """One round's side of a compared finding: ``fail 312`` (``round 1 #5`` where asked)."""
    if side is None:
        return "absent" if number is not None else "no longer found"
    where = f"round {number} #{side['number']}" if number is not None else f"#{side['number']}"
    return f"{side['status'].replace('_', ' ')} {_figure(side.get('figure'))} ({where})"


def change_text(item, number):
    """A compared finding as the list's two lines: its rule and features, then its status and
    figure in round ``number`` and now."""
    features = "; ".join(item.get("features") or []) or "no features"
    before, after = _side(item.get("before"), number), _side(item.get("after"))
    return shown_lines(f"{item['rule']} \u00b7 {features}\n{before} \u2192 {after}")


def change_tooltip(item, number):
    """The compared finding whole: how it was paired, and its message in each round."""
    lines = [change_text(item, number)]
    if item.get("before") and item.get("after"):
        lines.append(f"Paired by {(item.get('matched_by') or 'nothing').replace('_', ' ')}")
    for label, side in ((f"Round {number}", item.get("before")), ("Now", item.get("after"))):
        if side and side.get("message"):
            lines.append(f"{label}: {side['message']}")
    return shown_lines("\n".join(lines))


def comparison_groups(comparison):
    """``[(key, label, items)]``: the comparison's lists in their order (resolved, still
    open, new, changed), each with its items."""
    return [(key, label, list(comparison.get(key) or [])) for key, label in COMPARED]


def letter_paths(folder, number):
    """The letter's files in the run's folder, for round ``number``."""
    stem = os.path.join(folder, f"letter_round{int(number)}")
    return {"OUTPUT_HTML": stem + ".html", "OUTPUT_PDF": stem + ".pdf"}
