"""What ``swppp review --round`` prints: the round recorded, its decisions and how its findings
were matched to the round before (every name and reason escaped: ``terminal``)."""

from __future__ import annotations

from ..markup import terminal
from ..report.comparison import COMPARED, comparison_summary

__all__ = ["print_round", "print_comparison", "print_plan_changes"]


def print_round(review, path, out) -> None:
    """The round's line, then each decided finding (override first: they no longer block
    approval, and are never hidden), then the matching to the round before, counted, and each
    finding whose figure changed or that is new."""
    from ..rounds.record import round_summary
    from ..rounds.reviewfile import review_file_label

    info = review.rounds
    head = info["round"]
    print(f"  {round_summary(info, f' in {terminal(review_file_label(path))}')}", file=out)
    rows = list(zip(review.findings, info["findings"]))
    for wanted in ("override", "accept", "resolved"):
        for finding, held in rows:
            d = held["decision"]
            if d is None or d["decision"] != wanted:
                continue
            carried = f", carried from round {d['carried_from']}" if d["carried_from"] else ""
            reason = f": {terminal(d['reason'])}" if d["reason"] else ""
            print(
                f"  #{held['number']} {finding.rule} ({finding.status}) {wanted} by "
                f"{terminal(d['reviewer'])}{carried}{reason}",
                file=out,
            )
    if head["previous"]:
        by: dict[str, int] = {}
        for _finding, held in rows:
            by[held["match"]["by"]] = by.get(held["match"]["by"], 0) + 1
        print(
            f"  matched to round {head['previous']}: "
            + ", ".join(
                f"{n} by {k.replace('_', ' ')}" if k != "new" else f"{n} new" for k, n in sorted(by.items())
            ),
            file=out,
        )
        for finding, held in rows:
            m = held["match"]
            if m["by"] == "new":
                print(f"  #{held['number']} {finding.rule} ({finding.status}) is new", file=out)
            elif m["figure_changed"]:
                print(
                    f"  #{held['number']} {finding.rule} figure changed: {_figure(m['figure_before'])} -> "
                    f"{_figure(m['figure_after'])} (round {m['round']} #{m['number']}, matched by "
                    f"{m['by'].replace('_', ' ')})",
                    file=out,
                )
    if "comparison" in info:
        print_comparison(info["comparison"], out)


def _figure(value) -> str:
    return "none" if value is None else f"{value:.4g}"


def print_comparison(comparison: dict, out) -> None:
    """What changed since the round compared with: counted, then each finding of each list with
    its status and figure before and after, and how it was paired."""
    number = comparison["round"]
    print(f"  {comparison_summary(comparison)}", file=out)
    for key, label in COMPARED:
        for item in comparison[key]:
            before, after = item["before"], item["after"]
            features = "; ".join(terminal(f) for f in item["features"]) or "no features"
            was = (
                f"round {number} #{before['number']} {before['status']} {_figure(before['figure'])}"
                if before
                else "absent"
            )
            now = f"#{after['number']} {after['status']} {_figure(after['figure'])}" if after else "gone"
            how = f" (matched by {item['matched_by'].replace('_', ' ')})" if before and after else ""
            cause = f" [plan changes here: {', '.join(item['caused_by'])}]" if item.get("caused_by") else ""
            print(f"  {label}: {item['rule']} [{features}]: {was} -> {now}{how}{cause}", file=out)
    if "plan_changes" in comparison:
        print_plan_changes(comparison["plan_changes"], number, out)


def print_plan_changes(changes: dict, number: int, out) -> None:
    """The plan's geometry changes since round ``number``: counted, then each with its id (the
    findings' ``[plan changes here: C1]`` name them), or why they could not be measured."""
    if not changes["compared"]:
        print(f"  plan changes since round {number}: needs review: {terminal(changes['note'])}", file=out)
        return
    counted = [f"{n} {kind.replace('_', ' ')}" for kind, n in changes["counts"].items() if n]
    print(
        f"  plan changes since round {number}: " + (", ".join(counted) if counted else "none"),
        file=out,
    )
    for change in changes["changes"]:
        print(f"  plan change {change['id']}: {terminal(change['message'])}", file=out)
