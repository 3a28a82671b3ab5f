"""Benchmark: the phasing check, its growth, 10,000 phases open at once, and the schedule proposal.

    PROJ_DATA=/usr/share/proj .venv/qgis/bin/python scripts/bench_phasing.py [--naive-all]
    .venv/plain/bin/python scripts/bench_phasing.py --smoke   # tiny sizes: the tests run this

The plans are made here, deterministically: phases on a grid, each of ``per_phase`` rectangles
overlapping one another and the neighbouring phases' ground, a new phase starting every 7 days.
Schedules:

- ``rolling``: each phase stabilised 30 days after it starts (about five phases open at once);
- ``accumulating``: nothing stabilised before the plan's last day, so every phase is open at
  the end (the open ground grows with every phase).

Printed, each case in a fresh process (its peak memory is its own): the time of
``analysis.checks.phasing.phasing_timeline`` for 100, 1,000 and 10,000 polygons (10 per phase)
beside the naive way (a fresh union of every active polygon at every moment), the growth exponent
(time ~ n^k between the two largest sizes); 10,000 phases of one polygon each all open at once
(the check with its findings, and the size of the timeline's JSON); and for 1,000 phases /
10,000 polygons (rolling, over the limit) the check and the proposal
(``analysis.phasing.proposal.propose_schedule``). Goals (issues 21 and 23): the check under 2 s
and the proposal under 10 s at 1,000 phases / 10,000 polygons; 10,000 phases open at once under
3 s and 500 MB with JSON proportional to the phases.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import subprocess
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import shapely

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.checks.phasing import check_phasing, phasing_timeline
from analysis.units import acres

CRS = "EPSG:2260"
PER_PHASE = 10


def make_plan(polygons: int, seed: int = 3, accumulating: bool = False, per_phase: int = PER_PHASE):
    """Geometries, phases, starts and stabilisation dates of a plan of ``polygons`` polygons."""
    rng = np.random.default_rng(seed)
    phases = max(1, polygons // per_phase)
    columns = int(np.ceil(np.sqrt(phases)))
    phase = np.repeat(np.arange(phases), per_phase)[:polygons]
    cell = 300.0  # feet per phase cell; rectangles reach 20% into the neighbouring cells
    x0 = (phase % columns) * cell + rng.uniform(-60, 200, len(phase))
    y0 = (phase // columns) * cell + rng.uniform(-60, 200, len(phase))
    width, height = rng.uniform(40, 160, len(phase)), rng.uniform(40, 160, len(phase))
    geometries = shapely.box(x0, y0, x0 + width, y0 + height)
    day0 = date(2027, 1, 1)
    starts = [(day0 + timedelta(days=int(7 * p))).isoformat() for p in phase]
    last = 7 * int(phase.max()) + 30
    ends = [(day0 + timedelta(days=last if accumulating else int(7 * p + 30))).isoformat() for p in phase]
    return geometries, [str(p + 1) for p in phase], starts, ends


def naive_timeline(geometries, starts, ends):
    """The maximum by a fresh union of the active polygons at every moment."""
    s, e = np.array(starts), np.array(ends)
    best = 0.0
    for moment in np.unique(np.concatenate([s, e])):
        active = (s <= moment) & (e > moment)
        if active.any():
            best = max(best, acres(shapely.union_all(geometries[active]), CRS))
    return best


def peak_mb() -> float:
    """This process's peak resident memory, MB (Linux reports kB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def case(kind: str, polygons: int, naive: bool) -> dict:
    """One measurement (run in its own process by ``main``)."""
    from analysis.cli.options import json_text
    from analysis.profile import load_profile

    profile = load_profile()
    per_phase = 1 if kind == "open" else PER_PHASE
    geometries, phases, starts, ends = make_plan(
        polygons, accumulating=kind in ("accumulating", "open"), per_phase=per_phase
    )
    labels = [f"disturbance:{i + 1}" for i in range(polygons)]
    out: dict = {"kind": kind, "polygons": polygons, "phases": len(set(phases))}
    started = time.perf_counter()
    plan = phasing_timeline(geometries, phases, starts, ends, labels, CRS)
    findings = check_phasing(plan, profile)
    out["check_s"] = time.perf_counter() - started
    out["moments"], out["max_acres"] = len(plan.timeline), plan.max_acres
    out["json_mb"] = (
        len(json_text({**plan.measurements(), "findings": [f.to_dict() for f in findings]})) / 1e6
    )
    if naive:
        started = time.perf_counter()
        out["naive_acres"] = naive_timeline(geometries, starts, ends)
        out["naive_s"] = time.perf_counter() - started
    if kind == "proposal":
        import geopandas as gpd

        from analysis.phasing.proposal import propose_schedule, shifted_dates

        frame = gpd.GeoDataFrame(
            {"phase": phases, "start_date": starts, "stabilized_date": ends},
            geometry=list(geometries),
            crs=CRS,
        )
        started = time.perf_counter()
        proposal = propose_schedule(frame, profile)
        out["proposal_s"] = time.perf_counter() - started
        out["proposal"] = proposal.status
        moved_s, moved_e = shifted_dates(phases, starts, ends, proposal.shifts)
        again = phasing_timeline(geometries, phases, moved_s, moved_e, labels, CRS)
        out["proposed_max_acres"] = again.max_acres
        out["completion"] = (proposal.completion, proposal.proposed_completion)
    out["peak_mb"] = peak_mb()
    return out


def run_case(kind: str, polygons: int, naive: bool, fresh: bool) -> dict:
    if not fresh:
        return case(kind, polygons, naive)
    command = [sys.executable, __file__, "--case", kind, str(polygons)] + (["--naive"] if naive else [])
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--naive-all", action="store_true", help="time the naive way on the accumulating 10,000 too (minutes)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="tiny sizes, in this process: checks the script runs"
    )
    parser.add_argument("--case", nargs=2, metavar=("KIND", "POLYGONS"), help=argparse.SUPPRESS)
    parser.add_argument("--naive", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.case:
        print(json.dumps(case(args.case[0], int(args.case[1]), args.naive)))
        return 0
    sizes = (20, 100) if args.smoke else (100, 1_000, 10_000)
    fresh = not args.smoke
    for schedule in ("rolling", "accumulating"):
        print(f"\n{schedule}")
        print(
            f"{'polygons':>9} {'phases':>7} {'moments':>8} {'check s':>8} {'naive s':>8} "
            f"{'ratio':>7} {'peak MB':>8}  max acres (check / naive)"
        )
        times = []
        for polygons in sizes:
            naive = polygons <= (sizes[-1] if schedule == "rolling" or args.naive_all else sizes[-2])
            r = run_case(schedule, polygons, naive, fresh)
            times.append((polygons, r["check_s"]))
            naive_s = f"{r['naive_s']:8.3f}" if naive else "       -"
            ratio = f"{r['naive_s'] / r['check_s']:6.1f}x" if naive else "      -"
            check = f" / {r['naive_acres']:.6f}" if naive else ""
            print(
                f"{polygons:>9,} {r['phases']:>7,} {r['moments']:>8,} {r['check_s']:8.3f} "
                f"{naive_s} {ratio} {r['peak_mb']:8.0f}  {r['max_acres']:.6f}{check}"
            )
        (n1, t1), (n2, t2) = times[-2], times[-1]
        print(f"growth: time ~ n^{math.log(t2 / t1) / math.log(n2 / n1):.2f} ({n1:,} -> {n2:,} polygons)")
    phases = 100 if args.smoke else 10_000
    print(f"\n{phases:,} phases of one polygon, all open at once at the end")
    r = run_case("open", phases, False, fresh)
    print(
        f"check {r['check_s']:.3f} s, {r['moments']:,} moments, JSON {r['json_mb']:.2f} MB, "
        f"peak {r['peak_mb']:.0f} MB (goal: under 3 s and 500 MB)"
    )
    polygons = 100 if args.smoke else 10_000
    print(f"\nproposal: {polygons // PER_PHASE:,} phases / {polygons:,} polygons, rolling")
    r = run_case("proposal", polygons, False, fresh)
    print(
        f"check {r['check_s']:.3f} s (goal < 2 s); proposal {r['proposal_s']:.3f} s (goal < 10 s),"
        f" {r['proposal']}: max {r['max_acres']:.2f} -> {r['proposed_max_acres']:.2f} acres, "
        f"completion {r['completion'][0]} -> {r['completion'][1]}; peak {r['peak_mb']:.0f} MB"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
