"""A reference store another process holds, met by a Processing algorithm in real QGIS (issue
36, crash 3): the algorithm says in its feedback that it waits, as the CLI does on standard
error, then refuses naming the store (the bound shortened here)."""

import shutil

import pytest
from qgis.core import QgsProcessingException, QgsProcessingFeedback

from tests.analysis.test_fuzz_store import _hold
from tests.conftest import TEST_DATA

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


class Recorded(QgsProcessingFeedback):
    def __init__(self):
        super().__init__()
        self.warnings = []

    def pushWarning(self, text):
        self.warnings.append(text)
        super().pushWarning(text)


def test_crash_3_review_algorithm_says_it_waits_for_a_held_store_then_refuses(tmp_path, monkeypatch):
    import processing

    from analysis.io import geopackage

    monkeypatch.setattr(geopackage, "STORE_BUSY_TIMEOUT_S", 2.5)
    monkeypatch.setattr(geopackage, "STORE_BUSY_NOTICE_S", 0.5)
    store = tmp_path / "ref.gpkg"
    shutil.copyfile(TEST_DATA / "demo_reference.gpkg", store)
    feedback = Recorded()
    holder = _hold(store, "BEGIN EXCLUSIVE", 60)
    try:
        with pytest.raises(QgsProcessingException, match="another process has held this GeoPackage") as err:
            processing.run(
                "swppp:review",
                {
                    "SITE": str(TEST_DATA / "demo_site.gpkg"),
                    "REFERENCE": str(store),
                    "OUTPUT_JSON": str(tmp_path / "r.json"),
                },
                feedback=feedback,
            )
    finally:
        holder.kill()
        holder.wait()
    assert str(store) in str(err.value)
    assert any("waiting for another import to finish" in w for w in feedback.warnings), feedback.warnings
    assert not (tmp_path / "r.json").exists()
