"""Issue 35 item 2 in QGIS: the panel records each run as the next round of the project's
review file, the reviewer decides on findings in the Findings tab's decision column (appended
to the round through analysis.rounds), and the decisions are carried to the next round; and
``swppp:review``'s ROUND_FILE under qgis_process."""

import json
import time

import pytest
from qgis.core import QgsApplication, QgsProject

from analysis.rounds.record import read_round
from tests.qgis_plugin.test_panel import panel, run_review, wait_for  # noqa: F401 - the fixture
from tests.qgis_plugin.test_qgis_process import qgis_process  # noqa: F401 - the fixture

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

REVIEWER = "A. <b>Reviewer</b>"  # markup in a name: shown as text, never read as markup
REASON = "Easement extended <i>2026-11-30</i>, liber 1234"


def item_of(review, index):
    from swppp_review.panel import INDEX_ROLE

    tree = review.tree
    return next(
        tree.topLevelItem(i)
        for i in range(tree.topLevelItemCount())
        if tree.topLevelItem(i).data(0, INDEX_ROLE) == index
    )


def test_decisions_are_saved_to_the_round_and_carried_to_the_next(panel, data_copy, tmp_path):  # noqa: F811
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    review_file = tmp_path / "project_review.gpkg"
    review = panel()
    review.reference.setFilePath(str(reference))
    review.review_file.setFilePath(str(review_file))
    review.checklist.reviewer.setText(REVIEWER)
    run_review(review, site, tmp_path)
    assert review.result is not None, review.status.text()
    assert review.result["round"]["number"] == 1
    assert review_file.is_file()
    assert not review.tree.isColumnHidden(1)
    assert review.tree.headerItem().text(1) == "Decision"
    findings = review.findings
    failing = next(i for i, f in enumerate(findings) if f["status"] == "fail")
    other = next(
        i for i, f in enumerate(findings) if i != failing and f["status"] in ("warn", "needs_review", "fail")
    )
    assert all(item_of(review, i).text(1) == "" for i in range(len(findings)))  # none by default

    # An override without a reason is refused, said, the reason field highlighted; nothing saved.
    assert review.decide(failing, "override", "  ") is False
    assert "override needs a reason" in review.decision_note.text()
    assert "border" in review.reason.styleSheet()
    assert read_round(review_file, 1)["findings"][failing]["decision"] is None

    assert review.decide(failing, "override", REASON) is True
    assert review.reason.styleSheet() == ""
    assert review.decide(other, "accept") is True
    held = read_round(review_file, 1)["findings"]
    assert held[failing]["decision"]["decision"] == "override"
    assert held[failing]["decision"]["reason"] == REASON
    assert held[failing]["decision"]["reviewer"] == REVIEWER
    assert held[other]["decision"]["decision"] == "accept"
    assert sum(f["decision"] is not None for f in held) == 2
    # The latest wins: accept, then resolved.
    assert review.decide(other, "resolved") is True
    assert read_round(review_file, 1)["findings"][other]["decision"]["decision"] == "resolved"
    review.decide(other, "accept")

    assert "round 1 (1 override, 1 accept)" in review.summary.text()
    row = item_of(review, failing)
    assert row.text(1).startswith("override") and REASON in row.text(1) and REVIEWER in row.text(1)
    review.select_finding(failing)
    plain = review.detail.toPlainText()  # the markup in the reason and the name shown as text
    assert REASON in plain and REVIEWER in plain and "Decision: override" in plain
    assert "<i>2026" not in review.detail.toHtml()

    # The review file is kept in the project; the project reopened, a second round carries both.
    project_path = str(tmp_path / "project.qgs")
    assert QgsProject.instance().write(project_path)
    QgsProject.instance().clear()
    assert QgsProject.instance().read(project_path)
    again = panel()
    assert again.review_file.filePath() == str(review_file)
    again.checklist.reviewer.setText(REVIEWER)
    again.action_only.setChecked(True)
    run_review(again, site, tmp_path)
    assert again.result is not None, again.status.text()
    assert again.result["round"]["number"] == 2
    carried = read_round(review_file, 2)["findings"]
    assert carried[failing]["decision"]["carried_from"] == 1
    assert carried[failing]["decision"]["decision"] == "override"
    assert carried[other]["decision"]["decision"] == "accept"
    row = item_of(again, failing)
    assert not row.isHidden()  # overridden, still listed
    assert "override (carried from round 1)" in row.text(1) and REASON in row.text(1)
    assert "round 2" in again.summary.text()
    # A decision on round 2 is appended to round 2, round 1 untouched.
    assert again.decide(failing, "resolved") is True
    assert read_round(review_file, 2)["findings"][failing]["decision"]["decision"] == "resolved"
    assert read_round(review_file, 1)["findings"][failing]["decision"]["decision"] == "override"
    # Withdrawn: undecided again (the column empty), the history kept; nothing left to withdraw.
    assert again.decide(failing, "withdraw") is True
    assert read_round(review_file, 2)["findings"][failing]["decision"] is None
    assert item_of(again, failing).text(1) == ""
    assert "decision withdrawn in round 2" in again.decision_note.text()
    assert again.decide(failing, "withdraw") is False
    assert "has no decision to withdraw" in again.decision_note.text()


def test_no_review_file_no_decision_column(panel, data_copy, tmp_path):  # noqa: F811
    review = panel()
    run_review(review, data_copy("demo_site.gpkg"), tmp_path)
    assert review.result is not None and "round" not in review.result
    assert review.tree.isColumnHidden(1)
    review.select_finding(0)
    assert not review.save_decision_button.isEnabled()
    assert review.decide(0, "accept") is False


def test_review_records_a_round_under_qgis_process(qgis_process, data_copy, tmp_path):  # noqa: F811
    site = data_copy("demo_site.gpkg")
    review_file, result = tmp_path / "review.gpkg", tmp_path / "r.json"
    for number in (1, 2):
        completed = qgis_process(
            "run",
            "swppp:review",
            "--",
            f"SITE={site}",
            f"ROUND_FILE={review_file}",
            "REVIEWER=A. Reviewer",
            f"OUTPUT_JSON={result}",
        )
        assert completed.returncode == 0, completed.stdout + completed.stderr
        assert f"round {number} recorded" in completed.stdout + completed.stderr
        data = json.loads(result.read_text(encoding="utf-8"))
        assert data["round"]["number"] == number
        assert read_round(review_file)["round"]["round"] == number
    assert data["round"]["previous"] == 1


def test_a_file_that_is_no_review_file_is_refused_by_name(panel, data_copy, tmp_path):  # noqa: F811
    site = data_copy("demo_site.gpkg")
    before = site.read_bytes()
    review = panel()
    review.review_file.setFilePath(str(site))  # the site plan chosen as the review file by mistake
    outcome = []
    review.finished.connect(outcome.append)
    run_review(review, site, tmp_path)
    assert outcome == [False]
    assert str(site.name) in review.status.text() and "review file" in review.status.text()
    assert site.read_bytes() == before  # never written into
    assert review.result is None


def test_findings_are_shown_before_the_reports_and_decisions_wait_for_the_round(panel, data_copy, tmp_path):  # noqa: F811
    """Issue 37 goal 1: the findings are listed as soon as the review has made them, while the
    PDF is laid out (seconds); a decision waits for the round to be recorded, the finding
    chosen meanwhile kept."""
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    review = panel()
    review.reference.setFilePath(str(reference))
    review.review_file.setFilePath(str(tmp_path / "project_review.gpkg"))
    review.checklist.reviewer.setText(REVIEWER)
    review.site_file.setFilePath(str(site))
    review.output_folder.setFilePath(str(tmp_path / "results"))
    review.run()
    deadline = time.monotonic() + 120
    while review.is_running() and not review.findings:
        assert time.monotonic() < deadline, "no findings shown"
        QgsApplication.processEvents()
        time.sleep(0.005)
    assert review.is_running(), "the run ended before its findings were shown"
    assert review.tree.topLevelItemCount() == len(review.findings) > 0
    assert review.status.text().startswith("Findings shown; "), review.status.text()
    assert review.decide(3, "accept") is False
    assert "still writing its reports" in review.decision_note.text()
    wait_for(review)
    assert review.result is not None and review.result["round"]["number"] == 1, review.status.text()
    assert review._chosen_index() == 3  # the finding chosen while the reports were written
    assert review.decide(3, "accept") is True


def test_the_review_file_may_be_a_postgis_schema(panel, data_copy, tmp_path, postgis_server):  # noqa: F811
    """Issue 35 item 1 in QGIS: the Review file typed as a PostgreSQL schema; rounds recorded
    there, decided on, compared, the schema named without a password."""
    pytest.importorskip("psycopg")
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    target = f"{postgis_server.uri()}&schema=panel_{tmp_path.name[-12:].lower().replace('-', '_')}"
    review = panel()
    review.reference.setFilePath(str(reference))
    review.review_file.setFilePath(target)
    review.checklist.reviewer.setText(REVIEWER)
    run_review(review, site, tmp_path)
    assert review.result is not None and review.result["round"]["number"] == 1, review.status.text()
    failing = next(i for i, f in enumerate(review.findings) if f["status"] == "fail")
    assert review.decide(failing, "override", REASON) is True
    assert "saved in round 1 of schema panel_" in review.decision_note.text()
    assert read_round(target, 1)["findings"][failing]["decision"]["reason"] == REASON
    outside = next(i for i, f in enumerate(review.findings) if f["rule"] == "disturbance_outside_site")
    assert review.decide(outside, "accept") is True
    review.refresh_rounds()
    assert review.compare_to.isEnabled() and review.compare_to.currentData() == 1
    run_review(review, data_copy("demo_site_round2.gpkg"), tmp_path / "second")
    assert review.result["round"]["number"] == 2, review.status.text()
    assert review.result["comparison"]["round"] == 1
    now = next(i for i, f in enumerate(review.findings) if f["rule"] == "disturbance_outside_site")
    assert read_round(target, 2)["findings"][now]["decision"]["carried_from"] == 1
