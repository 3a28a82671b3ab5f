"""Issue 36 item 16 (injection) in real QGIS: the review panel shows a name holding terminal
escapes and bidirectional overrides as its escapes (``\\u202e``), in the findings list, its
tooltips, the detail pane and the summary (``analysis.markup.shown_lines``, the rule of the
terminal and the report)."""

from __future__ import annotations

import json
import unicodedata

import pytest

from analysis.cli import main
from tests.analysis.test_fuzz import SITE, _copy, _sql
from tests.analysis.test_fuzz_injection import HOSTILE

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]


def _unseen(text: str) -> list[str]:
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        }
    )


def test_injection_16_panel_shows_hostile_names_as_escapes(qgis_iface, staged_plugin, tmp_path, capsys):
    from swppp_review.panel import ReviewPanel

    plan = _copy(SITE, tmp_path)
    _sql(plan, "UPDATE project SET name = ?", "UPDATE smp SET smp_id = smp_id || ?", params=(HOSTILE,))
    assert main(["review", str(plan), "--json", str(tmp_path / "r.json"), "--quiet"]) in (0, 1)
    capsys.readouterr()
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert result["site"]["name"] == HOSTILE
    assert any(
        "\u202e" in json.dumps(f, ensure_ascii=False) for f in result["findings"]
    )  # names reach findings

    from qgis.core import QgsProject

    QgsProject.instance().clear()  # a new project, as a reviewer would start
    panel = ReviewPanel(qgis_iface)
    try:
        panel.show_findings(result)
        texts = [panel.summary.text()]
        for i in range(panel.tree.topLevelItemCount()):
            item = panel.tree.topLevelItem(i)
            texts += [item.text(0), item.toolTip(0)]
            panel.tree.setCurrentItem(item)
            texts.append(panel.detail.toPlainText())
        assert _unseen("\n".join(texts)) == []
        assert "\\u202eexe.txt" in panel.summary.text()
    finally:
        panel.unload()
        panel.deleteLater()
