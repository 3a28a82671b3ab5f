"""The HTML report in a real browser (Debian's chromium, headless): it loads with no console
message (no error, no blocked load), prints to US Letter landscape with the sections on pages
of their own, and a screenshot lands under build/ for a person to look at."""
import shutil
import subprocess
from pathlib import Path

import pytest

from analysis.report.html import render_html
from analysis.report.model import build_report
from analysis.review import review_paths
from tests.conftest import TEST_DATA

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="no chromium on this machine (scripts/setup.sh installs Debian's "
                             "chromium on the host only, not in the QGIS releases' root "
                             "filesystems)")


def chromium(*args):
    return subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu",
                           "--hide-scrollbars", "--enable-logging=stderr", "--v=0", *args],
                          capture_output=True, text=True, timeout=120)


def test_report_loads_without_console_messages_and_prints_to_letter(tmp_path):
    review = review_paths(TEST_DATA / "demo_site.gpkg",
                          reference=TEST_DATA / "demo_reference.gpkg")
    page = tmp_path / "report.html"
    page.write_text(render_html(review), encoding="utf-8")
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    shot = build / "report_html.png"
    shot.unlink(missing_ok=True)

    shown = chromium("--window-size=1280,2000", f"--screenshot={shot}", page.as_uri())
    console = [line for line in shown.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    assert shot.stat().st_size > 20_000  # a page drawn, not a blank one

    printed = tmp_path / "report.pdf"
    chromium("--no-pdf-header-footer", f"--print-to-pdf={printed}", page.as_uri())
    info = subprocess.run(["pdfinfo", str(printed)], capture_output=True, text=True,
                          check=True).stdout
    assert "792 x 612 pts (letter)" in info  # US Letter, landscape
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    assert pages >= len(build_report(review).sections)  # each section begins a page
    text = subprocess.run(["pdftotext", str(printed), "-"], capture_output=True, text=True,
                          check=True).stdout
    assert text.index("Decision") < text.index("Signature") < text.index("Summary")
