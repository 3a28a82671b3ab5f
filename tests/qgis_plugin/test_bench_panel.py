"""``scripts/bench_panel.py --smoke`` runs (issue 37: each benchmark's smoke form is in the test
command, so it cannot rot); its figures are printed, not judged: no timing in a test."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.qgis


def test_bench_panel_smoke():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "bench_panel.py"), "--smoke"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert re.search(r"Run review -> findings shown +median +\d+\.\d\d s", out), out
    assert re.search(r"findings shown / swppp review: \d+\.\dx", out), out
    assert "run over" in out and "load average after" in out, out
