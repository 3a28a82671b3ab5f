"""build/swppp_review.zip holds the plugin folder QGIS's "Install from ZIP" expects, no more;
qgis-plugin-ci built it, with the plugins.xml of a plugin repository, and the tests load it."""

import os
import zipfile
from pathlib import Path
from xml.etree import ElementTree

import pytest

pytestmark = pytest.mark.qgis


def test_zip_holds_one_plugin_folder_without_tests_or_caches(staged_plugin):
    archive = Path(staged_plugin.PLUGIN_DIR).parent / "swppp_review.zip"
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        metadata = opened.read("swppp_review/metadata.txt").decode("utf-8")

    assert {name.split("/")[0] for name in names} == {"swppp_review"}
    for shipped in (
        "__init__.py",
        "plugin.py",
        "provider.py",
        "icon.svg",
        "metadata.txt",
        "LICENSE",
        "algorithms/review.py",
        "analysis/__init__.py",
        "analysis/profiles/kiryas_joel.toml",
    ):
        assert f"swppp_review/{shipped}" in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or "/tests/" in n]
    assert "hasProcessingProvider=yes" in metadata and "icon=icon.svg" in metadata
    staged = sorted(
        str(p.relative_to(Path(staged_plugin.PLUGIN_DIR).parent))
        for p in Path(staged_plugin.PLUGIN_DIR).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )
    assert sorted(names) == staged


def metadata_fields(text):
    """``key=value`` lines of a metadata.txt as a dict."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_the_zip_qgis_plugin_ci_built_is_the_plugin_the_tests_load(staged_plugin):
    build = Path(staged_plugin.PLUGIN_DIR).parent
    root = build.parent
    version = metadata_fields((root / "metadata.txt").read_text(encoding="utf-8"))["version"]
    built = build / "repository" / f"swppp_review.{version}.zip"
    install_zip = build / "swppp_review.zip"
    assert built.read_bytes() == install_zip.read_bytes()

    loaded = Path(staged_plugin.__file__).resolve().parent
    with zipfile.ZipFile(built) as opened:
        shipped = {name: opened.read(name) for name in opened.namelist() if not name.endswith("/")}
    on_disk = {
        str(p.relative_to(loaded.parent)): p.read_bytes()
        for p in loaded.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert sorted(shipped) == sorted(on_disk)
    assert [name for name in shipped if shipped[name] != on_disk[name]] == []
    # ... and it is this checkout's source, metadata.txt as written plus the addresses package.sh
    # adds (from SWPPP_HOMEPAGE etc., else the ones that say "not published"); the tool adds nothing.
    written = (root / "metadata.txt").read_bytes()
    added = shipped.pop("swppp_review/metadata.txt").removeprefix(written).decode("utf-8")
    assert sorted(line.split("=")[0] for line in added.splitlines()) in (
        ["email", "homepage", "repository", "tracker"],
        ["homepage", "repository", "tracker"],
    )
    sources = {
        f"swppp_review/{p.relative_to(root / 'qgis_plugin')}": p
        for p in (root / "qgis_plugin").rglob("*")
        if p.is_file()
    }
    sources.update(
        {f"swppp_review/{p.relative_to(root)}": p for p in (root / "analysis").rglob("*") if p.is_file()}
    )
    sources["swppp_review/LICENSE"] = root / "LICENSE"
    sources = {
        name: path
        for name, path in sources.items()  # what package.sh leaves out
        if not {"__pycache__", ".pytest_cache"} & set(path.parts)
        and not any(part.endswith(".egg-info") for part in path.parts)
        and path.suffix not in (".pyc", ".pyo")
    }
    assert sorted(sources) == sorted(shipped)
    assert [name for name, path in sources.items() if path.read_bytes() != shipped[name]] == []


def test_plugins_xml_names_the_version_and_the_zip(staged_plugin):
    build = Path(staged_plugin.PLUGIN_DIR).parent
    metadata = metadata_fields((build.parent / "metadata.txt").read_text(encoding="utf-8"))
    repository = ElementTree.parse(build / "repository" / "plugins.xml").getroot()

    assert repository.tag == "plugins" and repository.get("generator_name") == "qgis-plugin-ci"
    (plugin,) = repository.findall("pyqgis_plugin")
    zip_name = f"swppp_review.{metadata['version']}.zip"
    assert plugin.get("name") == metadata["name"]
    assert plugin.get("version") == plugin.findtext("version") == metadata["version"]
    assert plugin.findtext("file_name") == zip_name
    # QGIS's plugin manager takes the plugin's id from the file name up to its first dot
    # (pyplugin_installer/installer_data.py): it must be the folder the zip installs.
    assert zip_name.partition(".")[0] == Path(staged_plugin.PLUGIN_DIR).name == "swppp_review"
    # By default the repository's own folder, as a file:// address QGIS's plugin manager reads.
    served_from = os.environ.get("PLUGIN_REPO_URL", f"file://{build / 'repository'}/")
    assert plugin.findtext("download_url") == f"{served_from.rstrip('/')}/{zip_name}"
    assert plugin.findtext("qgis_minimum_version") == metadata["qgisMinimumVersion"]
    assert (build / "repository" / zip_name).is_file()
