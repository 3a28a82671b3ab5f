"""build/swppp_review.zip holds the plugin folder QGIS's "Install from ZIP" expects, no more."""
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.qgis


def test_zip_holds_one_plugin_folder_without_tests_or_caches(staged_plugin):
    archive = Path(staged_plugin.PLUGIN_DIR).parent / "swppp_review.zip"
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        metadata = opened.read("swppp_review/metadata.txt").decode("utf-8")

    assert {name.split("/")[0] for name in names} == {"swppp_review"}
    for shipped in ("__init__.py", "plugin.py", "provider.py", "icon.svg", "metadata.txt",
                    "LICENSE", "algorithms/review.py", "analysis/__init__.py",
                    "analysis/profiles/kiryas_joel.toml"):
        assert f"swppp_review/{shipped}" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/tests/" in n]
    assert "hasProcessingProvider=yes" in metadata and "icon=icon.svg" in metadata
    staged = sorted(str(p.relative_to(Path(staged_plugin.PLUGIN_DIR).parent))
                    for p in Path(staged_plugin.PLUGIN_DIR).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts)
    assert sorted(names) == staged
