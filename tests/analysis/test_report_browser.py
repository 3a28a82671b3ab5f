"""The HTML report in a real browser (Debian's chromium, headless): it loads with no console
message (no error, no blocked load), prints to US Letter landscape with the sections on pages
of their own and the reviewer's block on page 1, and a screenshot and the printed page 1 land
under build/ for a person to look at."""

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
    CHROMIUM is None,
    reason="no chromium on this machine (scripts/setup.sh installs Debian's "
    "chromium on the host only, not in the QGIS releases' root "
    "filesystems)",
)


def chromium(*args):
    return subprocess.run(
        [
            CHROMIUM,
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--enable-logging=stderr",
            "--v=0",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_report_loads_without_console_messages_and_prints_to_letter(tmp_path):
    review = review_paths(TEST_DATA / "demo_site.gpkg", reference=TEST_DATA / "demo_reference.gpkg")
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
    info = subprocess.run(["pdfinfo", str(printed)], capture_output=True, text=True, check=True).stdout
    assert "792 x 612 pts (letter)" in info  # US Letter, landscape
    pages = int(next(line.split()[-1] for line in info.splitlines() if line.startswith("Pages:")))
    assert pages >= len(build_report(review).sections)  # each section begins a page
    text = subprocess.run(["pdftotext", str(printed), "-"], capture_output=True, text=True, check=True).stdout
    assert text.index("Decision") < text.index("Signature") < text.index("Summary")


def printed_page_1(page: Path, pdf: Path) -> str:
    """``page`` printed by chromium to ``pdf``: page 1's text (pdftotext)."""
    chromium("--no-pdf-header-footer", f"--print-to-pdf={pdf}", page.as_uri())
    return subprocess.run(
        ["pdftotext", "-f", "1", "-l", "1", "-layout", str(pdf), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


SIGN_OFF = ("Reviewer (name and title)", "Decision", "Date", "Signature")


def test_printed_page_1_holds_the_authority_the_outcome_and_the_whole_sign_off(tmp_path):
    """Print CSS: page 1 of the printed demo report names the issuing authority and holds the
    outcome and the reviewer's block whole, above what must change (which runs on); page 1 as
    a PNG under build/ to look at."""
    review = review_paths(TEST_DATA / "demo_site.gpkg", reference=TEST_DATA / "demo_reference.gpkg")
    page = tmp_path / "report.html"
    page.write_text(render_html(review, maps=False), encoding="utf-8")
    printed = tmp_path / "report.pdf"
    first = printed_page_1(page, printed)
    authority = review.profile.profile.authority
    at = 0
    for text in ("Issuing authority", authority, "Changes required", *SIGN_OFF):
        at = first.find(text, at)  # each after the one before
        assert at > -1, (text, first)
    build = ROOT / "build"
    build.mkdir(exist_ok=True)
    (build / "report_html_page1.png").unlink(missing_ok=True)
    subprocess.run(
        [
            "pdftoppm",
            "-f",
            "1",
            "-l",
            "1",
            "-r",
            "80",
            "-png",
            "-singlefile",
            str(printed),
            str(build / "report_html_page1"),
        ],
        check=True,
    )
    assert (build / "report_html_page1.png").stat().st_size > 10_000


def test_a_long_decision_still_prints_the_sign_off_on_page_1(tmp_path):
    """32 findings that must change (30 SMPs outside any easement): the lists run over the
    pages after page 1, the sign-off stays on page 1, whole."""
    from tests.qgis_plugin.test_report_signoff import write_many_failures

    site = write_many_failures(TEST_DATA / "demo_site.gpkg", tmp_path / "many.gpkg")
    review = review_paths(site)
    page = tmp_path / "report.html"
    page.write_text(render_html(review, maps=False), encoding="utf-8")
    first = printed_page_1(page, tmp_path / "report.pdf")
    assert all(label in first for label in SIGN_OFF), first
    assert "BR-39" not in first  # the last SMP's finding is on a later page
