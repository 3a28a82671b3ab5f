"""The library's own promises: no QGIS or Qt inside it, one version from metadata.txt."""
import ast
import configparser
from pathlib import Path

import pytest

import analysis

PACKAGE = Path(analysis.__file__).resolve().parent
FORBIDDEN = ("qgis", "PyQt5", "PyQt6", "PySide2", "PySide6", "sip")


@pytest.mark.parametrize("module", sorted(PACKAGE.rglob("*.py")), ids=lambda p: p.name)
def test_analysis_imports_no_qgis_or_qt(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
                for alias in node.names]
    imported += [node.module for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and node.module and node.level == 0]
    assert not [name for name in imported if name.split(".")[0] in FORBIDDEN]


def test_version_is_the_plugin_metadata_version():
    metadata = configparser.ConfigParser()
    metadata.read(PACKAGE.parent / "metadata.txt", encoding="utf-8")
    assert analysis.__version__ == metadata.get("general", "version")


def test_profiles_ship_inside_the_package():
    assert (PACKAGE / "profiles" / "kiryas_joel.toml").is_file()
