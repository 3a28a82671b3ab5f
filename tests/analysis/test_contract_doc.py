"""docs/CONTRACT.md is what scripts/contract_doc.py writes from the contract modules, and every
document a message or a doc cites exists in the repository (issue 34, item 7)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    spec = importlib.util.spec_from_file_location("contract_doc", ROOT / "scripts" / "contract_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_contract_document_is_current():
    written = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    assert written == _script().render(), "run: python scripts/contract_doc.py"


def test_it_names_every_layer_and_field_of_both_contracts():
    from analysis.reference.contract import REFERENCE_LAYERS
    from analysis.siteplan.contract import SITE_PLAN_LAYERS

    text = (ROOT / "docs" / "CONTRACT.md").read_text(encoding="utf-8")
    for spec in SITE_PLAN_LAYERS:
        assert f"### `{spec.name}`" in text
        assert all(f"| `{f.name}` |" in text for f in spec.fields)
    for spec in REFERENCE_LAYERS.values():
        assert f"### `{spec.name}`" in text
        assert all(f"| `{f.name}` |" in text for f in spec.columns)


CITED = re.compile(
    r"(?<![\w/.])((?:docs|scripts|test_data|analysis|qgis_plugin)/[\w./-]+"
    r"\.(?:md|py|sh|toml|csv|gpkg))"
)


def test_every_document_a_message_or_a_doc_cites_exists():
    sources = [
        *ROOT.glob("analysis/**/*.py"),
        *ROOT.glob("qgis_plugin/**/*.py"),
        *ROOT.glob("docs/*.md"),
        ROOT / "README.md",
        *ROOT.glob("scripts/*.sh"),
        *ROOT.glob("analysis/profiles/*.toml"),
    ]
    missing = sorted(
        {
            (path.relative_to(ROOT).as_posix(), cited)
            for path in sources
            if "__pycache__" not in path.parts
            for cited in CITED.findall(path.read_text(encoding="utf-8"))
            if not (ROOT / cited).exists()
        }
    )
    assert missing == []
    for path in sources:
        text = path.read_text(encoding="utf-8")
        for name in ("RULES.md", "ARCHITECTURE.md", "STYLE.md"):
            assert name not in text, f"{path}: cites {name}, which is not in the repository"
