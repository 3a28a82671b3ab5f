"""Benchmark: a cold one-site review, from a user's command to its JSON (issue 37, goal 1).

    .venv/plain/bin/python scripts/bench_startup.py [--runs 9] [--importtime]
    .venv/plain/bin/python scripts/bench_startup.py --smoke   # one run each: the tests run this

Each figure is a fresh process, run ``--runs`` times on each stack present (``.venv/qgis``:
QGIS's Python and Debian's libraries; ``.venv/plain``: current PyPI releases), the byte-code
caches as a user has them (written by an untimed first run):

- **the anchor**: a bare Python importing shapely, pyproj and numpy (the issue's anchor);
- **the data-model floor**: a Python importing also pandas, geopandas and the stack's reader
  (fiona or pyogrio), which the review's site plan and reference layers are held in;
- **the review**: ``swppp review test_data/demo_site.gpkg --reference
  test_data/demo_reference.gpkg --json -`` (its summary to stderr, the JSON to stdout);
- **qgis_process** (not with ``--smoke``; where QGIS is installed): ``qgis_process run
  swppp:review`` on the same plan with the packaged plugin (``build/swppp_review``, made by
  ``bash scripts/package.sh``) in a temporary profile.

Printed: median and best wall seconds, median CPU seconds (user + system), peak memory (the
largest run's resident set), the ratios of the review to the anchor and to the floor, and the
load average before and after. ``--importtime`` adds the review's slowest imports
(``python -X importtime``, self time). The goal: the review within 3x the anchor.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "test_data" / "demo_site.gpkg"
REFERENCE = ROOT / "test_data" / "demo_reference.gpkg"
ANCHOR = "import shapely, pyproj, numpy"
FLOOR = (
    "import shapely, pyproj, numpy, pandas, geopandas\n"
    "try:\n    import pyogrio\nexcept ImportError:\n    import fiona"
)
REVIEW = "import sys; from analysis.cli.app import main; sys.exit(main(sys.argv[1:]))"
REVIEW_ARGS = ["review", str(SITE), "--reference", str(REFERENCE), "--json", "-"]
# Debian's qgis_process wrapper passes --noversioncheck, which qgis_process 3.22 refuses.
QGIS_PROCESS = shutil.which("qgis_process.bin") or shutil.which("qgis_process")


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak resident MB of one run of ``argv`` (its own rusage)."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    err = child.stderr.read().decode(errors="replace") if child.stderr else ""
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # 1: the review ran and a finding is "fail"
        raise RuntimeError(f"{' '.join(argv[:4])} exited {child.returncode}: {err.strip()[-400:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def measure(argv: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    run_once(argv, env)  # untimed: byte-code caches written, files in the page cache
    walls, cpus, peaks = zip(*(run_once(argv, env) for _ in range(runs)))
    return {
        "median": statistics.median(walls),
        "best": min(walls),
        "cpu": statistics.median(cpus),
        "peak_mb": max(peaks),
    }


def show(
    label: str, figures: dict[str, float], anchor: dict[str, float] | None = None, note: str = ""
) -> None:
    ratio = f"  {figures['median'] / anchor['median']:4.1f}x the anchor" if anchor else ""
    print(
        f"  {label:<34} median {figures['median']:5.2f} s  best {figures['best']:5.2f} s  "
        f"CPU {figures['cpu']:5.2f} s  peak {figures['peak_mb']:6.1f} MB{ratio}{note}"
    )


def stack_env(python: Path) -> dict[str, str]:
    # Each venv finds its own PROJ data (a wheel's PROJ refuses Debian's proj.db), except
    # Debian's pyproj, which looks under the venv unless told.
    # The byte-code cache works as a user has it: a shell that sets PYTHONDONTWRITEBYTECODE
    # (this project's build machines do) would have each run compile the project's modules again.
    unset = ("PROJ_DATA", "PYTHONDONTWRITEBYTECODE", "PYTHONPYCACHEPREFIX")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    if "qgis" in python.parent.parent.name:
        env["PROJ_DATA"] = "/usr/share/proj"
    return env


def slowest_imports(python: Path, env: dict[str, str], count: int = 15) -> list[tuple[int, int, str]]:
    """The review's ``count`` slowest imports by self time: (self us, cumulative us, module)."""
    done = subprocess.run(
        [str(python), "-X", "importtime", "-c", REVIEW, *REVIEW_ARGS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self" not in line:
            own, total, name = line[len("import time:") :].split("|")
            rows.append((int(own), int(total), name.strip()))
    return sorted(rows, reverse=True)[:count]


def qgis_review(runs: int, anchor: dict[str, float]) -> None:
    plugin = ROOT / "build" / "swppp_review"
    if QGIS_PROCESS is None or not plugin.is_dir():
        why = "no qgis_process" if QGIS_PROCESS is None else "run bash scripts/package.sh first"
        print(f"  {'qgis_process run swppp:review':<34} skipped: {why}")
        return
    with (
        tempfile.TemporaryDirectory(prefix="swppp-bench-qgis-") as home,
        tempfile.TemporaryDirectory() as out,
    ):
        env = {
            **os.environ,
            "HOME": home,
            "XDG_DATA_HOME": f"{home}/.local/share",
            "XDG_CONFIG_HOME": f"{home}/.config",
            "XDG_CACHE_HOME": f"{home}/.cache",
            "QGIS_PLUGINPATH": str(plugin.parent),
            "PYTHONPATH": str(next((ROOT / ".venv" / "qgis" / "lib").glob("python3*/site-packages"))),
            "PROJ_DATA": "/usr/share/proj",
            "QT_QPA_PLATFORM": "offscreen",
        }
        subprocess.run(
            [QGIS_PROCESS, "plugins", "enable", "swppp_review"], env=env, capture_output=True, check=True
        )
        argv = [
            QGIS_PROCESS,
            "run",
            "swppp:review",
            "--",
            f"SITE={SITE}",
            f"REFERENCE={REFERENCE}",
            f"OUTPUT_JSON={out}/review.json",
        ]
        show("qgis_process run swppp:review", measure(argv, runs, env), anchor)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="timed runs of each figure (default 9)")
    parser.add_argument("--smoke", action="store_true", help="one run each, no qgis_process")
    parser.add_argument("--importtime", action="store_true", help="the review's slowest imports")
    args = parser.parse_args(argv)
    runs = 1 if args.smoke else args.runs
    pythons = (
        [Path(sys.executable)]
        if args.smoke
        else [ROOT / ".venv" / s / "bin" / "python" for s in ("qgis", "plain")]
    )
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    for python in pythons:
        if not python.is_file():
            print(f"{python}: absent, skipped")
            continue
        env = stack_env(python)
        print(f"{python} (runs: {runs})")
        anchor = measure([str(python), "-c", ANCHOR], runs, env)
        floor = measure([str(python), "-c", FLOOR], runs, env)
        review = measure([str(python), "-c", REVIEW, *REVIEW_ARGS], runs, env)
        show("anchor: import shapely, pyproj, numpy", anchor)
        show("floor: + pandas, geopandas, reader", floor, anchor)
        show(
            "swppp review --json -", review, anchor, f" ({review['median'] / floor['median']:.1f}x the floor)"
        )
        if args.importtime:
            print("  slowest imports of the review (self ms, cumulative ms):")
            for own, total, name in slowest_imports(python, env):
                print(f"    {own / 1000:7.1f} {total / 1000:8.1f}  {name}")
        if "qgis" in python.parent.parent.name and not args.smoke:
            qgis_review(runs, anchor)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
