"""The comment letter (issue 35, item 5): ``swppp letter`` on a real review file of two rounds,
run as a user runs it (subprocesses), the HTML read back and the PDF's text extracted."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DECISIONS = """reviewer = "A. Reviewer"

[[decision]]
rule = "easement_coverage"
features = ["smp:BR-2"]
decision = "override"
reason = "Easement for BR-2 recorded 2026-11-30, liber 1234 page 56"
"""


def swppp(*args):
    return subprocess.run(
        [sys.executable, "-m", "analysis.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


def _wider_site(site: Path) -> None:
    """The resubmittal: the site boundary drawn 200 ft wider, so that no disturbance lies
    outside it (disturbance_outside_site resolved). GDAL's bindings where this Python has them
    (the QGIS stacks), else pyogrio (the PyPI stack), the layer written again in place."""
    try:
        from osgeo import ogr
    except ImportError:
        import pyogrio

        frame = pyogrio.read_dataframe(site, layer="site_boundary")
        frame["geometry"] = frame.geometry.buffer(200.0)
        pyogrio.write_dataframe(frame, site, layer="site_boundary", driver="GPKG")
        return
    ds = ogr.Open(str(site), 1)
    layer = ds.GetLayerByName("site_boundary")
    for feature in layer:
        feature.SetGeometry(feature.GetGeometryRef().Buffer(200.0))
        layer.SetFeature(feature)
    ds = None


@pytest.fixture(scope="module")
def two_rounds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("letter")
    site = tmp / "site.gpkg"
    shutil.copyfile(ROOT / "test_data" / "demo_site.gpkg", site)
    reference = ROOT / "test_data" / "demo_reference.gpkg"
    decisions = tmp / "d.toml"
    decisions.write_text(DECISIONS, encoding="utf-8")
    file = tmp / "review_file.gpkg"
    first = swppp(
        "review", site, "--reference", reference, "--round", file, "--decisions", decisions, "--quiet"
    )
    assert first.returncode == 1, first.stderr
    _wider_site(site)
    second = swppp("review", site, "--reference", reference, "--round", file, "--quiet")
    assert second.returncode == 1, second.stderr
    return tmp, file


def _letter(tmp, file, *args):
    out = tmp / f"letter{len(list(tmp.glob('letter*.json')))}.json"
    done = swppp("letter", file, "--json", out, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text(encoding="utf-8")), done.stdout


def test_round_one_letter_numbers_the_open_findings_grouped_by_topic(two_rounds):
    tmp, file = two_rounds
    html = tmp / "round1.html"
    letter, out = _letter(tmp, file, "--round", "1", "--html", html, "--reviewer", "B. <i>Engineer</i>")
    comments = letter["comments"]
    assert [c["number"] for c in comments] == list(range(1, len(comments) + 1))
    assert all(c["status"] in ("fail", "warn", "needs_review") for c in comments[1:])
    # The overridden fail is no comment; the other fail (the contents checklist) is.
    assert not [c for c in comments if c["rule"] == "easement_coverage" and c["status"] == "fail"]
    contents = next(c for c in comments if c["rule"] == "swppp_contents")
    assert contents["section"].startswith("SWPPP B") and "Provide each listed item" in contents["request"]
    outside = next(c for c in comments if c["rule"] == "disturbance_outside_site")
    assert outside["figure"].startswith("3,125 sq ft")
    # Condition A applies: its comment asks for controls for the pollutants the review named.
    condition_a = comments[0]
    assert condition_a["rule"] == "condition_a" and condition_a["section"] == "SWPPP C(1)"
    assert "Silt/Sediment" in condition_a["message"] and "NY1301-0099" in condition_a["message"]
    assert "controls designed to remove sediment, phosphorus" in condition_a["request"]
    topics = [t for t, _ in letter["groups"]]
    assert len(topics) == len(set(topics))  # each topic once: its comments together
    assert letter["previous"] is None and letter["earlier"] == []
    text = html.read_text(encoding="utf-8")
    assert "Village of Kiryas Joel" in text and "illustrative letterhead" in text
    assert "B. &lt;i&gt;Engineer&lt;/i&gt;" in text and "<i>Engineer" not in text
    assert f"round 1 of {file.name}: {len(comments)} comment(s)" in out


def test_round_two_letter_repeats_round_ones_comments_resolved_or_still_open(two_rounds):
    tmp, file = two_rounds
    html = tmp / "round2.html"
    letter, out = _letter(tmp, file, "--html", html, "--date", "2026-12-07")
    assert letter["round"] == 2 and letter["previous"] == 1 and letter["dated"] == "2026-12-07"
    first, _ = _letter(tmp, file, "--round", "1")
    earlier = {e["number"]: e for e in letter["earlier"]}
    assert sorted(earlier) == [c["number"] for c in first["comments"]]
    outside = next(e for e in letter["earlier"] if e["rule"] == "disturbance_outside_site")
    assert outside["status"] == "resolved" and outside["now"] is None
    still = [e for e in letter["earlier"] if e["status"] == "still open"]
    assert still and all(letter["comments"][e["now"] - 1]["rule"] == e["rule"] for e in still)
    assert not [c for c in letter["comments"] if c["rule"] == "disturbance_outside_site"]
    text = html.read_text(encoding="utf-8")
    assert "Comments of round 1" in text and re.search(r"resolved \(", text)
    assert "1 resolved" in out


def test_a_missing_round_and_a_file_that_is_no_review_file_are_refused(two_rounds, tmp_path):
    _tmp, file = two_rounds
    done = swppp("letter", file, "--round", "9", "--html", tmp_path / "x.html")
    assert done.returncode == 2 and "no round 9" in done.stderr and "--round N" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.html").exists()
    site = ROOT / "test_data" / "demo_site.gpkg"
    done = swppp("letter", site, "--html", tmp_path / "x.html")
    assert done.returncode == 2 and "not a SWPPP review file" in done.stderr
    done = swppp("letter", file)
    assert done.returncode == 2 and "nothing to write" in done.stderr


@pytest.mark.skipif(importlib.util.find_spec("qgis") is not None, reason="QGIS is here: the PDF is written")
def test_pdf_without_qgis_is_refused_by_name(two_rounds, tmp_path):
    _tmp, file = two_rounds
    done = swppp("letter", file, "--html", tmp_path / "l.html", "--pdf", tmp_path / "l.pdf")
    assert done.returncode == 2 and "--pdf needs QGIS" in done.stderr and "--html" in done.stderr
    assert not (tmp_path / "l.pdf").exists() and not (tmp_path / "l.html").exists()


@pytest.mark.skipif(importlib.util.find_spec("qgis") is None, reason="the letter's PDF needs QGIS's Qt")
@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) reads the PDF")
def test_the_pdf_says_what_the_html_says(two_rounds, tmp_path):
    _tmp, file = two_rounds
    pdf = tmp_path / "l.pdf"
    done = swppp("letter", file, "--round", "1", "--pdf", pdf, "--reviewer", "C. Reviewer")
    assert done.returncode == 0, done.stderr
    text = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True, check=True).stdout
    words = " ".join(text.split())
    assert "Village of Kiryas Joel" in words and "C. Reviewer" in words
    assert "To satisfy this comment:" in words and "Chapter: SWPPP B(2)" in words


def test_condition_a_names_the_tmdl_and_its_date_where_the_layer_records_it(tmp_path):
    """Issue 35, item 6: a TMDL watershed with ``tmdl_date`` (ATTAINS actions' completionDate,
    imported by ``--format attains``) is named with its date in Condition A's finding, the
    JSON's evidence and so the letter's comment."""
    ogr = pytest.importorskip("osgeo.ogr", reason="the reference is edited with GDAL's bindings")

    reference = tmp_path / "reference_tmdl.gpkg"
    shutil.copyfile(ROOT / "test_data" / "variants" / "reference_tmdl.gpkg", reference)
    ds = ogr.Open(str(reference), 1)
    layer = ds.GetLayerByName("tmdl_watersheds")
    layer.CreateField(ogr.FieldDefn("tmdl_date", ogr.OFTString))
    for feature in layer:
        if feature.GetField("tmdl_id") == "NY-TMDL-0002":
            feature.SetField("tmdl_date", "2019-05-20")
            layer.SetFeature(feature)
    ds = None
    out = tmp_path / "r.json"
    site = ROOT / "test_data" / "demo_site.gpkg"
    done = swppp("review", site, "--reference", reference, "--json", out, "--quiet")
    assert done.returncode == 1, done.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    said = [f["message"] for f in data["findings"] if f["rule"] == "condition_a"]
    assert said and all("TMDL NY-TMDL-0002 of 2019-05-20 for Silt/Sediment" in m for m in said)
    assert any("TMDL NY-TMDL-0002 of 2019-05-20" in e for e in data["conditions"]["A"]["evidence"])
    assert "pollutants of concern: sediment, phosphorus" in data["conditions"]["A"]["evidence"]


def test_destroyed_2_letter_over_its_review_file_is_refused(two_rounds, tmp_path):
    """`swppp letter FILE --html FILE` would replace the review file with the letter: refused
    before anything runs, the file unchanged (analysis.io.inputs, the one rule)."""
    copy = tmp_path / "review_file.gpkg"
    shutil.copyfile(two_rounds[1], copy)
    before = copy.read_bytes()
    done = swppp("letter", copy, "--html", copy)
    assert done.returncode == 2, done.stderr
    assert "would destroy an input" in done.stderr and "REVIEW_FILE" in done.stderr
    assert copy.read_bytes() == before


def test_injection_a_bidi_override_in_the_reviewers_name_is_shown_as_its_escape(two_rounds, tmp_path):
    """The letter's page is written through the report's one environment (report.templating):
    a right-to-left override in a name is shown as ``\\u202e``, never reorders the signature."""
    _tmp, file = two_rounds
    out = tmp_path / "letter.html"
    done = swppp("letter", file, "--html", out, "--reviewer", "Ann\u202eeoD <b>")
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    assert "\u202e" not in page and "Ann\\u202eeoD &lt;b&gt;" in page


def test_the_letter_as_a_word_document_holds_the_same_comments(two_rounds, tmp_path):
    """`--docx`: the same letter (its numbered comments, citations, requests, the round
    before's comments with their status) in a Word document, read back with python-docx."""
    docx = pytest.importorskip("docx")
    _tmp, file = two_rounds
    data_path, out = tmp_path / "letter.json", tmp_path / "letter.docx"
    done = swppp("letter", file, "--docx", out, "--json", data_path, "--reviewer", "Ann\u202eeoD")
    assert done.returncode == 0, done.stderr
    assert f"wrote {out}" in done.stdout
    letter = json.loads(data_path.read_text(encoding="utf-8"))
    document = docx.Document(str(out))
    text = "\n".join(p.text for p in document.paragraphs)
    cells = [c.text for row in document.tables[0].rows for c in row.cells] if document.tables else []
    assert letter["comments"], "the demo's second round has open comments"
    for c in letter["comments"]:
        assert f"{c['number']}. {c['message']}" in text
        assert c["section"] in text
        if c["request"]:
            assert c["request"] in text
    assert len(letter["earlier"]) == len(document.tables[0].rows) - 1
    for e in letter["earlier"]:
        assert f"{letter['previous']}.{e['number']}" in cells
    assert "Ann\\u202eeoD" in text and "\u202e" not in text  # the name shown as it is held


def test_docx_without_python_docx_is_refused_before_anything_is_written(two_rounds, tmp_path):
    """A Python without python-docx: exit 2 naming the fix, nothing written (the HTML asked
    beside it neither)."""
    _tmp, file = two_rounds
    html, out = tmp_path / "l.html", tmp_path / "l.docx"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; sys.modules['docx'] = None; from analysis.cli import main; sys.exit(main())",
            "letter",
            str(file),
            "--html",
            str(html),
            "--docx",
            str(out),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert "python-docx" in done.stderr and "--docx LETTER.docx" in done.stderr
    assert "Traceback" not in done.stderr
    assert not html.exists() and not out.exists()
