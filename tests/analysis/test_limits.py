"""analysis/limits.py and docs/DESIGN.md's "Limits" table say the same bounds: every constant is
in the table with its value, and the table names no constant the module does not have."""

import re

from analysis import limits
from tests.conftest import ROOT


def _table() -> dict[str, str]:
    text = (ROOT / "docs" / "DESIGN.md").read_text(encoding="utf-8")
    section = text.split("\n## Limits\n", 1)[1].split("\n## ", 1)[0]
    return dict(re.findall(r"^\| `([A-Z_]+)` \| ([^|]+) \|", section, flags=re.M))


def _shown(value) -> set[str]:
    """The ways the table may write ``value``: 64 MiB, 1,000,000, 1e8, 60 s."""
    shown = {f"{value:,}", f"{value:g}", f"{value:,g}"}
    if isinstance(value, float):
        shown |= {f"{value:g} s", f"{value:.0e}".replace("e+0", "e")}
    if isinstance(value, int) and value % 2**20 == 0:
        shown.add(f"{value // 2**20} MiB")
    return shown


def test_every_limit_is_in_the_design_table_with_its_value():
    table = _table()
    assert sorted(table) == sorted(limits.__all__)
    for name in limits.__all__:
        assert table[name].strip() in _shown(getattr(limits, name)), (name, table[name])
