"""Benchmark: the QGIS panel's run, from *Run review* to the findings shown (issue 37, goal 1).

    .venv/qgis/bin/python scripts/bench_panel.py [--runs 3] [--smoke]

Runs ``tests/qgis_plugin/bench_panel_run.py`` in real QGIS (pytest-qgis; under Xvfb where
``xvfb-run`` is installed, else Qt's offscreen platform), which opens the review panel on the
shipped demo and times ``--runs`` runs after a warm-up run: from *Run review* to the findings
shown in the panel, and to the run over (reports written, result layers loaded), with every
step the algorithm reports on the way. Beside it, in the same run, the anchor: ``swppp review``
of the same plan writing the same outputs (JSON, HTML, findings GeoPackage; no PDF, which
needs QGIS), a fresh process each time. Prints the medians, the ratio, peak memory of the
QGIS process, the slowest steps, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
QGIS_PYTHON = Path(sys.executable)  # QGIS's Python (run this with it)


def panel_runs(runs: int, work: Path) -> tuple[dict, float]:
    """The panel's timings (bench_panel_run.py's JSON) and the QGIS process's peak memory (MB)."""
    out = work / "panel.json"
    rss = work / "rss"
    command = [
        str(QGIS_PYTHON),
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        "-q",
        "tests/qgis_plugin/bench_panel_run.py",
    ]
    if shutil.which("xvfb-run"):
        command = ["xvfb-run", "-a", "-s", "-screen 0 1600x1000x24", *command]
    env = {**os.environ, "SWPPP_BENCH_PANEL_OUT": str(out), "SWPPP_BENCH_PANEL_RUNS": str(runs)}
    if not shutil.which("xvfb-run"):
        env["QT_QPA_PLATFORM"] = "offscreen"
    timer = ["/usr/bin/time", "-f", "%M", "-o", str(rss)] if os.path.exists("/usr/bin/time") else []
    done = subprocess.run(timer + command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0 or not out.is_file():
        raise SystemExit(f"the panel's run failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    peak = float(rss.read_text().split()[-1]) / 1024 if timer else float("nan")
    return json.loads(out.read_text()), peak


def cli_runs(runs: int, work: Path) -> list[float]:
    """``swppp review`` of the demo writing the panel's outputs but the PDF, a fresh process each."""
    out = []
    for n in range(runs + 1):
        folder = work / f"cli{n}"
        command = [
            str(QGIS_PYTHON),
            "-m",
            "analysis.cli",
            "review",
            "test_data/demo_site.gpkg",
            "--reference",
            "test_data/demo_reference.gpkg",
            "--json",
            str(folder / "review.json"),
            "--report",
            str(folder / "report.html"),
            "--findings",
            str(folder / "findings.gpkg"),
            "--quiet",
        ]
        folder.mkdir()
        start = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 1):
            raise SystemExit(f"swppp review failed: {done.stderr[-2000:]}")
        if n:  # the first warms the byte-code caches
            out.append(time.perf_counter() - start)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--smoke", action="store_true", help="one run each")
    args = parser.parse_args(argv)
    runs = 1 if args.smoke else args.runs
    print(f"load average before {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="swppp-bench-panel-") as folder:
        work = Path(folder)
        timings, peak = panel_runs(runs, work)
        cli = cli_runs(runs, work)
    shown = statistics.median(r["findings_shown"] for r in timings["runs"])
    done = statistics.median(r["done"] for r in timings["runs"])
    anchor = statistics.median(cli)
    print(
        f"panel: Run review -> findings shown   median {shown:6.2f} s  ({runs} runs; QGIS peak {peak:.0f} MB)"
    )
    print(f"panel: Run review -> run over         median {done:6.2f} s")
    print(f"swppp review, the same outputs but the PDF  median {anchor:6.2f} s  (a fresh process each)")
    print(f"findings shown / swppp review: {shown / anchor:.1f}x")
    last = timings["runs"][-1]
    steps = [*last["steps"], (last["done"], "run over")]
    gaps = sorted(
        ((later[0] - earlier[0], earlier[1]) for earlier, later in zip(steps, steps[1:])), reverse=True
    )[:6]
    print("slowest steps of the last run (seconds until the next step):")
    for seconds, text in gaps:
        print(f"  {seconds:6.2f} s  {text}")
    print(f"load average after {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
