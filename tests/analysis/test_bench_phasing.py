"""scripts/bench_phasing.py runs (tiny sizes, in-process) so the benchmark cannot rot."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT


def test_the_phasing_benchmark_runs_in_smoke_mode(capsys):
    spec = importlib.util.spec_from_file_location("bench_phasing", ROOT / "scripts" / "bench_phasing.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--smoke"]) == 0
    out = capsys.readouterr().out
    assert "growth: time ~ n^" in out and "phases of one polygon, all open" in out
    assert "proposal" in out and ": proposed:" not in out
    # The proposal brings the rolling plan within the profile's limit.
    line = next(line for line in out.splitlines() if line.startswith("check") and "proposal" in line)
    after = float(line.split("->")[1].split()[0])
    from analysis.profile import load_profile

    assert after <= load_profile().phasing.max_concurrent_acres
