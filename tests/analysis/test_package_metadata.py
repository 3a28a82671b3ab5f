"""Issue 34, item 15: metadata.txt carries no placeholder address; scripts/package.sh takes the
plugin's addresses from the environment (SWPPP_HOMEPAGE, SWPPP_TRACKER, SWPPP_REPOSITORY,
SWPPP_EMAIL) and the zip it builds then passes the QGIS plugin repository's metadata checks as
qgis-plugin-ci, the repository's upload validator and the plugin analyzer apply them (all but
the validator's and the analyzer's reachability requests, which need the network).

package.sh runs on a copy of the checkout's plugin sources in a temporary folder: the build/ the
QGIS tests load is left alone.
"""

import configparser
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from urllib.parse import urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOOL = Path(os.environ.get("QGIS_PLUGIN_CI", ROOT / ".venv" / "plain" / "bin" / "qgis-plugin-ci"))
ADDRESSES = ("homepage", "tracker", "repository", "email")
PUBLISHED = {
    "SWPPP_HOMEPAGE": "https://gis.swppp-village.us/swppp-review",
    "SWPPP_TRACKER": "https://gis.swppp-village.us/swppp-review/issues",
    "SWPPP_REPOSITORY": "https://gis.swppp-village.us/swppp-review/source",
    "SWPPP_EMAIL": "gis@swppp-village.us",
}

# The repository's upload validator (QGIS-Django, plugins/validator.py): these fields required,
# tracker/repository/homepage URLs with a scheme and a host, not its named stand-ins.
REQUIRED = (
    "name",
    "description",
    "version",
    "qgisMinimumVersion",
    "author",
    "email",
    "about",
    "tracker",
    "repository",
)
FORBIDDEN = {"tracker": "http://bugs", "repository": "http://repo", "homepage": "http://homepage"}
# The plugin analyzer's metadata rules (qgis-plugin-analyzer, metadata_audit.py). Its
# METADATA_SUPPORTS_QT6 ("deprecated") is not applied: QGIS 3.44's plugin installer reads
# supportsQt6 to offer a plugin to a Qt 6 QGIS (docs/QGIS.md).
CATEGORIES = {"raster", "vector", "database", "mesh", "web"}


def repository_problems(archive):
    """What the plugin repository's validator and the analyzer refuse in the zip ``archive``."""
    problems = []
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
        package = names[0].split("/")[0]
        parser = configparser.ConfigParser()
        parser.optionxform = str
        parser.read_string(opened.read(f"{package}/metadata.txt").decode("utf-8"))
        metadata = dict(parser.items("general"))
        icon = metadata.get("icon", "")
        if not icon or f"{package}/{icon}" not in names:
            problems.append(f"icon {icon!r} not in the zip")
    if not re.match(r"^[A-Za-z][A-Za-z0-9-_]+$", package):
        problems.append(f"folder name {package}")
    problems += [
        f"forbidden entry {n}"
        for n in names
        if ".." in n
        or n.startswith("/")
        or ".pyc" in n
        or {"__MACOSX", ".git", "__pycache__"} & set(n.split("/"))
    ]
    if f"{package}/__init__.py" not in names or f"{package}/LICENSE" not in names:
        problems.append("no __init__.py or LICENSE")
    problems += [f"{key} missing" for key in REQUIRED if not metadata.get(key)]
    for key, stand_in in FORBIDDEN.items():
        url = metadata.get(key, "")
        parsed = urlparse(url)
        if url == stand_in or not (parsed.scheme and parsed.netloc):
            problems.append(f"{key}={url!r} is not a URL")
    if "/" in metadata.get("author", ""):
        problems.append("author has a slash")
    if not re.match(r"^\d+\.\d+\.\d+$", metadata.get("version", "")):
        problems.append("version is not X.Y.Z")
    if metadata.get("category", "").lower() not in CATEGORIES:
        problems.append(f"category {metadata.get('category')!r}")
    maximum = metadata.get("qgisMaximumVersion")
    if maximum and tuple(int(p) for p in maximum.split(".")[:2]) < (4, 0):
        problems.append("qgisMaximumVersion below 4.0")
    return problems, metadata


@pytest.fixture
def package(tmp_path):
    """``package(env)``: scripts/package.sh run on a copy of the plugin's sources."""
    if not TOOL.is_file():
        pytest.skip(f"qgis-plugin-ci is not installed here ({TOOL}; scripts/setup.sh installs it)")
    if shutil.which("git") is None:  # a release's root filesystem: the host packages the zip
        pytest.skip("git is not installed here (qgis-plugin-ci packages a git checkout)")
    copy = tmp_path / "checkout"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", ".pytest_cache")
    for folder in ("analysis", "qgis_plugin", "packaging"):
        shutil.copytree(ROOT / folder, copy / folder, ignore=ignore)
    (copy / "scripts").mkdir()
    for name in ("metadata.txt", "LICENSE", "scripts/package.sh"):
        shutil.copy2(ROOT / name, copy / name)

    def run(**env):
        clean = {k: v for k, v in os.environ.items() if not k.startswith("SWPPP_") and k != "PLUGIN_REPO_URL"}
        completed = subprocess.run(
            ["bash", str(copy / "scripts" / "package.sh")],
            env={**clean, "QGIS_PLUGIN_CI": str(TOOL), **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        return completed, copy / "build" / "swppp_review.zip"

    return run


def test_metadata_txt_carries_no_address_and_its_category_is_one_the_repository_lists():
    parser = configparser.ConfigParser()
    parser.optionxform = str
    parser.read(ROOT / "metadata.txt", encoding="utf-8")
    assert not [key for key in ADDRESSES if parser.has_option("general", key)]
    assert parser.get("general", "category").lower() in CATEGORIES


def test_the_addresses_given_make_a_zip_the_plugin_repository_takes(package):
    completed, archive = package(**PUBLISHED)
    assert completed.returncode == 0, completed.stderr
    assert "not for upload" not in completed.stderr
    problems, metadata = repository_problems(archive)
    assert problems == []
    assert {key: metadata[key] for key in ADDRESSES} == {
        "homepage": PUBLISHED["SWPPP_HOMEPAGE"],
        "tracker": PUBLISHED["SWPPP_TRACKER"],
        "repository": PUBLISHED["SWPPP_REPOSITORY"],
        "email": PUBLISHED["SWPPP_EMAIL"],
    }


def test_without_addresses_the_zip_says_it_is_not_for_upload(package):
    completed, archive = package()
    assert completed.returncode == 0, completed.stderr
    assert "not for upload" in completed.stderr and "SWPPP_HOMEPAGE" in completed.stderr
    problems, metadata = repository_problems(archive)
    assert problems == ["email missing"]  # refused by the repository, as it should be
    assert {metadata[key] for key in ("homepage", "tracker", "repository")} == {
        "https://not-published.invalid/"
    }
    # The plugins.xml beside it downloads from its own folder unless PLUGIN_REPO_URL says where.
    plugins_xml = (archive.parent / "repository" / "plugins.xml").read_text(encoding="utf-8")
    assert f"<download_url>file://{archive.parent / 'repository'}/swppp_review.0." in plugins_xml


@pytest.mark.parametrize(
    "env, named",
    [
        ({"SWPPP_HOMEPAGE": PUBLISHED["SWPPP_HOMEPAGE"]}, "SWPPP_TRACKER SWPPP_REPOSITORY SWPPP_EMAIL"),
        ({**PUBLISHED, "SWPPP_TRACKER": "https://example.org/swppp-review/issues"}, "SWPPP_TRACKER="),
        ({**PUBLISHED, "SWPPP_REPOSITORY": "git@host:swppp.git"}, "SWPPP_REPOSITORY="),
        ({**PUBLISHED, "SWPPP_HOMEPAGE": "https://swppp.test/"}, "SWPPP_HOMEPAGE="),
        ({**PUBLISHED, "SWPPP_EMAIL": "someone@example.com"}, "SWPPP_EMAIL="),
    ],
)
def test_missing_or_placeholder_addresses_are_refused_naming_them(package, env, named):
    completed, archive = package(**env)
    assert completed.returncode == 2 and named in completed.stderr
    assert "Traceback" not in completed.stderr and not archive.exists()


def test_an_address_written_in_metadata_txt_is_refused(package, tmp_path):
    metadata = tmp_path / "checkout" / "metadata.txt"
    metadata.write_text(metadata.read_text(encoding="utf-8") + "tracker=https://x.org/\n", encoding="utf-8")
    completed, _ = package(**PUBLISHED)
    assert completed.returncode == 2 and "remove it" in completed.stderr
