"""Issue 35 item 5 in QGIS: ``swppp:letter`` through Processing and through qgis_process on the
packaged plugin, on a review file of two rounds of the shipped demo recorded by swppp:review;
the letter's PDF rendered to PNG and read back; an output over the review file refused."""

import shutil
import subprocess
from pathlib import Path

import pytest
from qgis.core import QgsProcessingException, QgsProcessingFeedback

from tests.qgis_plugin.test_panel import panel, run_review  # noqa: F401 - the fixture
from tests.qgis_plugin.test_qgis_process import qgis_process  # noqa: F401 - the fixture

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROOT = Path(__file__).resolve().parents[2]
REVIEWER = "A. <b>Reviewer</b>, P.E."  # markup in a name: shown as text


def run(algorithm, parameters, feedback=None):
    import processing

    return processing.run(algorithm, parameters, feedback=feedback)


def record_two_rounds(folder):
    """The shipped demo as round 1 and its resubmittal as round 2 (compared with round 1) of a
    review file in ``folder``, by swppp:review; the review file and round 2's results."""
    for name in ("demo_site.gpkg", "demo_site_round2.gpkg", "demo_reference.gpkg"):
        shutil.copyfile(ROOT / "test_data" / name, folder / name)
    review_file = folder / "review_file.gpkg"
    results = None
    for number, plan in ((1, "demo_site.gpkg"), (2, "demo_site_round2.gpkg")):
        parameters = {
            "SITE": str(folder / plan),
            "REFERENCE": str(folder / "demo_reference.gpkg"),
            "ROUND_FILE": str(review_file),
            "REVIEWER": "A. Reviewer",
            "OUTPUT_JSON": str(folder / f"round{number}.json"),
        }
        if number == 2:
            parameters["COMPARE_TO"] = 1
        results = run("swppp:review", parameters)
        assert results["ROUND"] == number
    return review_file, results


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory):
    return record_two_rounds(tmp_path_factory.mktemp("rounds"))


def png_of(pdf, tmp_path):
    """The PDF's first page as PNG (pdftoppm -r 60), to look at."""
    if shutil.which("pdftoppm") is None:
        pytest.skip("pdftoppm (poppler-utils) is not installed")
    stem = tmp_path / pdf.stem
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", str(pdf), str(stem)], check=True)
    pages = sorted(tmp_path.glob(f"{pdf.stem}*.png"))
    assert pages, "pdftoppm wrote no page"
    return pages[0]


def pdf_text(pdf):
    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    return subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout


def test_the_letter_of_round_1_through_processing(two_rounds, tmp_path):
    review_file, _ = two_rounds
    before = review_file.read_bytes()
    html, pdf = tmp_path / "letter.html", tmp_path / "letter.pdf"
    feedback = QgsProcessingFeedback()
    results = run(
        "swppp:letter",
        {
            "REVIEW_FILE": str(review_file),
            "ROUND": 1,
            "REVIEWER": REVIEWER,
            "DATE": "2026-12-07",
            "OUTPUT_HTML": str(html),
            "OUTPUT_PDF": str(pdf),
        },
        feedback,
    )
    assert results["ROUND"] == 1 and results["COMMENTS"] > 0
    assert results["OUTPUT_HTML"] == str(html) and results["OUTPUT_PDF"] == str(pdf)
    assert results["SUMMARY"] == f"round 1 of review_file.gpkg: {results['COMMENTS']} comment(s)"
    assert feedback.progress() == 100
    text = html.read_text(encoding="utf-8")
    assert "A. &lt;b&gt;Reviewer&lt;/b&gt;, P.E." in text and "<b>Reviewer</b>" not in text
    assert "2026-12-07" in text
    assert pdf.read_bytes().startswith(b"%PDF")
    words = " ".join(pdf_text(pdf).split())
    assert "A. <b>Reviewer</b>, P.E." in words  # the name as typed, never read as markup
    assert "SWPPP" in words or "Stormwater" in words or "stormwater" in words
    page = png_of(pdf, tmp_path)
    assert page.stat().st_size > 5000  # a page with text on it, looked at by hand
    assert review_file.read_bytes() == before  # read, never written


def test_the_latest_round_repeats_round_1s_comments(two_rounds, tmp_path):
    review_file, _ = two_rounds
    html = tmp_path / "latest.html"
    results = run("swppp:letter", {"REVIEW_FILE": str(review_file), "OUTPUT_HTML": str(html)})
    assert results["ROUND"] == 2
    assert "round 1's" in results["SUMMARY"] and "resolved" in results["SUMMARY"]
    assert html.is_file()


def test_the_letter_as_a_word_document_from_qgis(two_rounds, tmp_path):
    """OUTPUT_DOCX: the same letter as `swppp letter --docx`, read back with python-docx."""
    docx = pytest.importorskip("docx")
    review_file, _ = two_rounds
    out = tmp_path / "letter.docx"
    results = run(
        "swppp:letter", {"REVIEW_FILE": str(review_file), "REVIEWER": REVIEWER, "OUTPUT_DOCX": str(out)}
    )
    assert results["OUTPUT_DOCX"] == str(out)
    text = "\n".join(p.text for p in docx.Document(str(out)).paragraphs)
    assert REVIEWER in text and f"{results['COMMENTS']}. " in text


@pytest.mark.parametrize("output", ["OUTPUT_HTML", "OUTPUT_PDF", "OUTPUT_DOCX"])
def test_an_output_over_the_review_file_is_refused(two_rounds, output):
    review_file, _ = two_rounds
    before = review_file.read_bytes()
    with pytest.raises(QgsProcessingException) as raised:
        run("swppp:letter", {"REVIEW_FILE": str(review_file), output: str(review_file)})
    message = str(raised.value)
    assert output in message and "REVIEW_FILE" in message and "nothing was run" in message, message
    assert review_file.read_bytes() == before


@pytest.mark.parametrize(
    ("parameters", "named"),
    [({"ROUND": 9}, "ROUND"), ({"DATE": "7 Dec"}, "DATE")],
)
def test_a_round_or_date_that_is_not_there_is_refused_by_name(two_rounds, tmp_path, parameters, named):
    review_file, _ = two_rounds
    html = tmp_path / "letter.html"
    with pytest.raises(QgsProcessingException) as raised:
        run("swppp:letter", {"REVIEW_FILE": str(review_file), "OUTPUT_HTML": str(html), **parameters})
    assert f"({named})" in str(raised.value), str(raised.value)
    assert not html.exists()


def test_a_file_that_is_no_review_file_is_refused_by_name(tmp_path):
    site = tmp_path / "demo_site.gpkg"
    shutil.copyfile(ROOT / "test_data" / "demo_site.gpkg", site)
    with pytest.raises(QgsProcessingException) as raised:
        run("swppp:letter", {"REVIEW_FILE": str(site), "OUTPUT_HTML": str(tmp_path / "l.html")})
    assert "demo_site.gpkg" in str(raised.value) and "review file" in str(raised.value)


def test_nothing_to_write_is_refused(two_rounds):
    review_file, _ = two_rounds
    with pytest.raises(QgsProcessingException) as raised:
        run("swppp:letter", {"REVIEW_FILE": str(review_file)})
    assert "OUTPUT_HTML, OUTPUT_PDF or OUTPUT_DOCX" in str(raised.value)


def test_a_cancelled_letter_writes_nothing(two_rounds, tmp_path):
    review_file, _ = two_rounds
    html, pdf = tmp_path / "letter.html", tmp_path / "letter.pdf"
    feedback = QgsProcessingFeedback()
    feedback.cancel()
    with pytest.raises(QgsProcessingException) as raised:
        run(
            "swppp:letter",
            {"REVIEW_FILE": str(review_file), "OUTPUT_HTML": str(html), "OUTPUT_PDF": str(pdf)},
            feedback,
        )
    assert "cancelled" in str(raised.value)
    assert not html.exists() and not pdf.exists() and list(tmp_path.iterdir()) == []


def test_the_letter_under_qgis_process(qgis_process, two_rounds, tmp_path):  # noqa: F811
    review_file, _ = two_rounds
    html, pdf = tmp_path / "letter.html", tmp_path / "letter.pdf"
    completed = qgis_process(
        "run",
        "swppp:letter",
        "--",
        f"REVIEW_FILE={review_file}",
        "ROUND=1",
        "REVIEWER=A. Reviewer",
        f"OUTPUT_HTML={html}",
        f"OUTPUT_PDF={pdf}",
    )
    out = completed.stdout + completed.stderr
    assert completed.returncode == 0, out
    assert "round 1 of review_file.gpkg" in out
    assert "A. Reviewer" in html.read_text(encoding="utf-8")
    assert pdf.read_bytes().startswith(b"%PDF")
    refused = qgis_process(
        "run", "swppp:letter", "--", f"REVIEW_FILE={review_file}", f"OUTPUT_HTML={review_file}"
    )
    assert refused.returncode != 0
    assert "REVIEW_FILE" in refused.stdout + refused.stderr
    assert review_file.stat().st_size > 0


def test_the_panels_comment_letter(panel, data_copy, tmp_path):  # noqa: F811
    from qgis.PyQt.QtCore import QUrl

    review = panel()
    opened = []
    review.open_url = opened.append  # the desktop's viewer is not started under tests
    assert not review.letter_button.isEnabled()
    assert "No round recorded" in review.letter_button.toolTip()
    # A run without a review file records no round: still no letter.
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    assert review.result is not None, review.status.text()
    assert not review.letter_button.isEnabled()
    assert review.write_letter() is None and "No round recorded" in review.letter_note.text()

    review_file = tmp_path / "project_review.gpkg"
    review.reference.setFilePath(str(data_copy("demo_reference.gpkg")))
    review.review_file.setFilePath(str(review_file))
    review.checklist.reviewer.setText(REVIEWER)
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    assert review.result["round"]["number"] == 1, review.status.text()
    assert review.letter_button.isEnabled()
    assert "round 1 of project_review.gpkg" in review.letter_button.toolTip()
    review.letter_button.click()
    folder = Path(review.result_paths["OUTPUT_JSON"]).parent
    pdf, html = folder / "letter_round1.pdf", folder / "letter_round1.html"
    assert opened == [QUrl.fromLocalFile(str(pdf))], review.letter_note.text()
    assert pdf.read_bytes().startswith(b"%PDF") and html.is_file()
    assert "round 1 of project_review.gpkg" in review.letter_note.text()
    words = " ".join(pdf_text(pdf).split())
    assert REVIEWER in words  # the Checklist tab's reviewer signs it, as typed
    page = png_of(pdf, tmp_path)
    shutil.copyfile(page, tmp_path / "panel_letter_page1.png")
    assert page.stat().st_size > 5000

    # The letter's file cannot be written (its folder is a file now): said, nothing opened.
    opened.clear()
    pdf.unlink()
    html.unlink()
    blocked = tmp_path / "blocked"
    blocked.write_text("not a folder", encoding="utf-8")
    review.result_paths["OUTPUT_JSON"] = str(blocked / "review.json")
    assert review.write_letter() is None
    assert opened == [] and review.letter_note.text()


def test_write_letter_writes_its_files_all_or_none(two_rounds, tmp_path):
    """The library call both front ends make: a further format written with the HTML, and a
    file that cannot be written leaves none of them."""
    from analysis.errors import OutputError
    from analysis.profile import load_profile
    from analysis.report.letter import build_letter, write_letter

    review_file, _ = two_rounds
    letter = build_letter(review_file, load_profile("kiryas_joel"), 1, reviewer="A. Reviewer")
    html, extra = tmp_path / "l.html", tmp_path / "l.txt"
    write_letter(letter, html, more={extra: lambda path: path.write_text("more", encoding="utf-8")})
    assert "A. Reviewer" in html.read_text(encoding="utf-8") and extra.read_text(encoding="utf-8") == "more"
    html.unlink()
    extra.unlink()
    with pytest.raises(OutputError):
        write_letter(letter, html, more={tmp_path / "no" / "such" / "x.txt": lambda path: path.mkdir()})
    assert not html.exists() and [p for p in tmp_path.rglob("*") if p.is_file()] == []  # no staged file left
