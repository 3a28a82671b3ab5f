"""The panel's run timed in real QGIS, for ``scripts/bench_panel.py`` (issue 37, goal 1): not a
test (pytest collects it only when named), it asserts only that the run gave findings.

From *Run review* (``ReviewPanel.run``) to the findings shown (the Findings tab filled) and to
the run over (reports written, layers loaded), with each step the algorithm reports
(``PanelFeedback.message``) on the way; written as JSON to ``$SWPPP_BENCH_PANEL_OUT``.
"""

import json
import os
import time

import pytest
from qgis.core import QgsApplication

from tests.qgis_plugin.test_panel import panel  # noqa: F401 - the fixture

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

RUNS = int(os.environ.get("SWPPP_BENCH_PANEL_RUNS", "3"))


def test_panel_run_timed(panel, data_copy, tmp_path):  # noqa: F811
    site, reference = data_copy("demo_site.gpkg"), data_copy("demo_reference.gpkg")
    runs = []
    for n in range(RUNS + 1):  # the first warms the imports, as a user's second run has them
        review = panel()
        review.reference.setFilePath(str(reference))
        review.site_file.setFilePath(str(site))
        review.output_folder.setFilePath(str(tmp_path / f"results{n}"))
        marks: list = []
        shown: dict = {}
        start = time.perf_counter()
        original = review.show_findings

        def show(result, original=original, shown=shown, start=start):
            shown.setdefault("at", time.perf_counter() - start)
            return original(result)

        review.show_findings = show
        review.run()
        review._run[2].message.connect(
            lambda text, marks=marks, start=start: marks.append((time.perf_counter() - start, text))
        )
        while review.is_running():
            QgsApplication.processEvents()
            time.sleep(0.005)
        QgsApplication.processEvents()
        done = time.perf_counter() - start
        assert review.result is not None and review.findings, review.status.text()
        runs.append({"findings_shown": shown["at"], "done": done, "steps": marks})
    out = os.environ.get("SWPPP_BENCH_PANEL_OUT")
    if out:
        with open(out, "w", encoding="utf-8") as handle:
            json.dump({"warm_up": runs[0], "runs": runs[1:]}, handle)
