"""Benchmark: the phasing timeline of plans of 100, 1,000 and 10,000 polygons (10 per phase).

    PROJ_DATA=/usr/share/proj .venv/qgis/bin/python scripts/bench_phasing.py [--naive-all]

Prints the time ``analysis.checks.phasing.phasing_timeline`` takes, and the naive way (a fresh union of
every active polygon at every moment) beside it with the ratio. The plans are made here,
deterministically: phases on a grid, each of ten rectangles overlapping one another and the
neighbouring phases' ground, a new phase starting every 7 days. Two schedules:

- ``rolling``: each phase stabilised 30 days after it starts (about five phases open at once);
  the naive way is linear here too, only slower.
- ``accumulating``: nothing stabilised before the plan's last day, so the open ground grows with
  every phase and the naive way is quadratic; it runs on 10,000 polygons only with --naive-all
  (minutes).
"""
from __future__ import annotations

import argparse
import sys
import time
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import shapely

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.units import acres
from analysis.checks.phasing import phasing_timeline

CRS = "EPSG:2260"
PER_PHASE = 10


def make_plan(polygons: int, seed: int = 3, accumulating: bool = False):
    """Geometries, phases, starts and stabilisation dates of a plan of ``polygons`` polygons."""
    rng = np.random.default_rng(seed)
    phases = polygons // PER_PHASE
    columns = int(np.ceil(np.sqrt(phases)))
    phase = np.repeat(np.arange(phases), PER_PHASE)
    cell = 300.0  # feet per phase cell; rectangles reach 20% into the neighbouring cells
    x0 = (phase % columns) * cell + rng.uniform(-60, 200, len(phase))
    y0 = (phase // columns) * cell + rng.uniform(-60, 200, len(phase))
    width, height = rng.uniform(40, 160, len(phase)), rng.uniform(40, 160, len(phase))
    geometries = shapely.box(x0, y0, x0 + width, y0 + height)
    day0 = date(2027, 1, 1)
    starts = [(day0 + timedelta(days=int(7 * p))).isoformat() for p in phase]
    last = 7 * int(phase.max()) + 30
    ends = [(day0 + timedelta(days=last if accumulating else int(7 * p + 30))).isoformat()
            for p in phase]
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--naive-all", action="store_true",
                        help="time the naive way on the accumulating 10,000 too (minutes)")
    args = parser.parse_args()
    for schedule in ("rolling", "accumulating"):
        print(f"\n{schedule}")
        run(schedule == "accumulating", 10_000 if schedule == "rolling" or args.naive_all else 1_000)
    return 0


def run(accumulating: bool, naive_max: int) -> None:
    print(f"{'polygons':>9} {'phases':>7} {'moments':>8} {'sweep s':>9} {'naive s':>9} {'ratio':>7}"
          f"  max acres (sweep / naive)")
    previous = None
    for polygons in (100, 1_000, 10_000):
        geometries, phases, starts, ends = make_plan(polygons, accumulating=accumulating)
        labels = [f"disturbance:{i + 1}" for i in range(polygons)]
        started = time.perf_counter()
        plan = phasing_timeline(geometries, phases, starts, ends, labels, CRS)
        sweep = time.perf_counter() - started
        naive_text, ratio_text, check = "-", "-", ""
        if polygons <= naive_max:
            started = time.perf_counter()
            naive_acres = naive_timeline(geometries, starts, ends)
            naive = time.perf_counter() - started
            naive_text, ratio_text = f"{naive:9.3f}", f"{naive / sweep:6.1f}x"
            check = f" / {naive_acres:.6f}"
        growth = f"  (x{sweep / previous:.1f} time for x10 polygons)" if previous else ""
        print(f"{polygons:>9,} {polygons // PER_PHASE:>7,} {len(plan.timeline):>8,} {sweep:9.3f} "
              f"{naive_text:>9} {ratio_text:>7}  {plan.max_acres:.6f}{check}{growth}")
        previous = sweep


if __name__ == "__main__":
    sys.exit(main())
