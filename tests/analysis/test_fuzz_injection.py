"""Issue 36 item 16 (injection): terminal escapes and bidirectional overrides in names never
reach the terminal or the HTML report raw.

A hostile name (ESC [2J, an OSC 8 hyperlink, a CSI colour, a carriage return, U+202E RLO, the
isolates, the marks) is put where each command reads names (the site plan's project and
features, the sites file, the reference's source file name, a NOV record, a file name in an
error) and every command runs: nothing printed on stdout or stderr holds a control, format or
separator character but line feed and tab (checked here with ``unicodedata``, not with the
sanitizer's own rule), and the HTML report holds none raw. The one guard: ``analysis.cli.console``
(every line a command prints) and the report's Jinja2 ``finalize`` (every expression), both
through ``analysis.markup.shown_lines``.
"""

from __future__ import annotations

import csv
import json
import shutil
import unicodedata
from pathlib import Path

import geopandas as gpd
import pytest
import shapely

from analysis.cli import main
from analysis.reference.importer import read_candidate
from tests.analysis.test_fuzz import RECORDS, REFERENCE, SITE, _copy, _sql
from tests.analysis.test_screen import stored
from tests.analysis.test_screen_since import SITES, moved_to_4a

HOSTILE = (
    "Evil\x1b[2J\x1b]8;;https://x.example/\x07link\x1b]8;;\x07\x1b[31mred\rCR"
    "\u202eexe.txt\u202d\u202a\u202b\u202c\u2066iso\u2067\u2068\u2069\u200e\u200f\u061c\u200d\x85"
)


def _unseen(text: str) -> list[str]:
    """The characters of ``text`` a terminal or browser would act on or hide."""
    return sorted(
        {
            f"U+{ord(c):04X}"
            for c in text
            if c not in "\n\t" and unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp")
        }
    )


def _strings(data) -> list[str]:
    """Every string in a JSON value."""
    if isinstance(data, dict):
        return [t for k, v in data.items() for t in _strings(k) + _strings(v)]
    if isinstance(data, list):
        return [t for v in data for t in _strings(v)]
    return [data] if isinstance(data, str) else []


def _hostile_plan(folder: Path) -> Path:
    plan = _copy(SITE, folder)
    _sql(
        plan,
        "UPDATE project SET name = ?",
        "UPDATE disturbance SET phase = ? || phase",
        params=(HOSTILE,),
    )
    return plan


def _sites(folder: Path) -> Path:
    path = folder / "sites.gpkg"
    frame = gpd.GeoDataFrame(
        {"site_id": [f"{name}{HOSTILE}" for name in SITES]},
        geometry=[shapely.box(x, y, x + 400, y + 400) for x, y in SITES.values()],
        crs="EPSG:2260",
    )
    frame.to_file(path, layer="parcels", driver="GPKG")
    return path


def _review(folder):
    return ["review", _hostile_plan(folder), "--reference", REFERENCE, "--report", folder / "r.html"]


def _review_json(folder):
    return ["review", _hostile_plan(folder), "--json", "-"]


def _phasing(folder):
    return ["phasing", _hostile_plan(folder)]


def _screen(folder):
    return ["screen", _sites(folder), "--reference", REFERENCE, "--json", "-"]


def _screen_since(folder):
    store = stored(REFERENCE, folder)
    store.import_candidate(read_candidate("impaired_waters", moved_to_4a(folder)))
    return ["screen", _sites(folder), "--reference", store.path, "--since", "1"]


def _hostile_source(folder: Path) -> Path:
    """Version 2 of the 303(d) list in a file whose name holds the bidirectional characters
    (pyogrio opens no path holding a control character or ';')."""
    name = "".join(c for c in HOSTILE if unicodedata.category(c) == "Cf")
    source = folder / f"waters\u202eexe.txt{name}.gpkg"
    shutil.copyfile(moved_to_4a(folder), source)
    return source


def _reference_import(folder):
    return [
        "reference",
        "import",
        "impaired_waters",
        _hostile_source(folder),
        "--reference",
        stored(REFERENCE, folder).path,
        "--json",
        "-",
    ]


def _store_with_hostile_source(folder):
    store = stored(REFERENCE, folder)
    store.import_candidate(read_candidate("impaired_waters", _hostile_source(folder)))
    return store.path


def _reference_status(folder):
    return ["reference", "status", "--reference", _store_with_hostile_source(folder)]


def _reference_diff(folder):
    """Version 2 of the 303(d) list, one water's id hostile: the diff names it."""
    store = stored(REFERENCE, folder)
    waters = gpd.read_file(moved_to_4a(folder), layer="impaired_waters")
    waters.loc[0, "waterbody_id"] = f"NY-{HOSTILE}"
    source = folder / "waters_hostile.gpkg"
    waters.to_file(source, layer="impaired_waters", driver="GPKG")
    store.import_candidate(read_candidate("impaired_waters", source))
    return ["reference", "diff", "impaired_waters", "--reference", store.path]


def _nov(folder):
    text = (RECORDS / "violation.toml").read_text(encoding="utf-8")
    record = folder / "violation.toml"
    record.write_text(text.replace("Forest Road Commons LLC", json.dumps(HOSTILE)[1:-1]), encoding="utf-8")
    return ["nov", record, "--output", folder / "nov.html"]


def _inspections(folder):
    traps = folder / "traps.csv"
    with open(RECORDS / "traps.csv", newline="", encoding="utf-8") as source:
        rows = [[cell.replace("ST-1", "ST-1" + HOSTILE) for cell in row] for row in csv.reader(source)]
    with open(traps, "w", newline="", encoding="utf-8") as target:
        csv.writer(target).writerows(rows)  # quoted: the carriage return stays in the cell
    return [
        "inspections",
        "check",
        "--log",
        RECORDS / "inspection_log.csv",
        "--rain",
        RECORDS / "rain.csv",
        "--traps",
        traps,
        "--site",
        _hostile_plan(folder),
        "--json",
        "-",
    ]


def _certification(folder):
    return ["certification-form", "--output", folder / "form.html", "--site", _hostile_plan(folder)]


def _missing_file(folder):
    return ["review", folder / f"plan{HOSTILE.replace('/', '_')}.gpkg"]


def _bad_option(folder):
    return ["review", SITE, f"--nonsense{HOSTILE}"]


COMMANDS = [
    pytest.param(_review, id="injection-16-review-project-and-phase-names-html"),
    pytest.param(_review_json, id="injection-16-review-json-stdout"),
    pytest.param(_phasing, id="injection-16-phasing-phase-names"),
    pytest.param(_screen, id="injection-16-screen-site-ids"),
    pytest.param(_screen_since, id="injection-16-screen-since-site-ids"),
    pytest.param(_reference_import, id="injection-16-reference-import-source-name"),
    pytest.param(_reference_status, id="injection-16-reference-status-source-name"),
    pytest.param(_reference_diff, id="injection-16-reference-diff"),
    pytest.param(_nov, id="injection-16-nov-recipient-name"),
    pytest.param(_inspections, id="injection-16-inspections-check-trap-id"),
    pytest.param(_certification, id="injection-16-certification-form-site-name"),
    pytest.param(_missing_file, id="injection-16-error-names-hostile-file"),
    pytest.param(_bad_option, id="injection-16-usage-error-hostile-option"),
]


@pytest.mark.parametrize("build", COMMANDS)
def test_no_raw_control_or_bidi_character_is_printed(build, tmp_path, capsys):
    argv = [str(a) for a in build(tmp_path)]
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit_:  # argparse's usage error
        code = exit_.code
    out = capsys.readouterr()
    assert code in (0, 1, 2), out.err
    assert _unseen(out.out) == [] and _unseen(out.err) == [], (out.out + out.err)[-2000:]
    for html in tmp_path.glob("*.html"):
        assert _unseen(html.read_text(encoding="utf-8")) == [], html.name
    if "-" in argv:  # JSON on standard output stays valid, the override in it as data
        strings = _strings(json.loads(out.out))
        if build is _review_json:  # the name as the plan holds it, every character
            assert json.loads(out.out)["site"]["name"] == HOSTILE
        assert build is _reference_import or any("\u202eexe.txt" in t for t in strings)


def test_injection_16_report_shows_the_override_visibly(tmp_path, capsys):
    """The report says the override is there (``\\u202e``), not a name reordered or hidden."""
    assert main([str(a) for a in _review(tmp_path)]) in (0, 1)
    html = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "\\u202eexe.txt" in html and "\\x1b[2J" in html


def test_injection_16_rule_covers_every_format_character():
    """The sanitizer's listed format characters cover this Python's Unicode category Cf, and
    every control (Cc) and separator (Zl, Zp) but the kept line feed and tab."""
    from analysis.markup import json_shown, shown, shown_lines

    missed = [
        f"U+{c:04X}"
        for c in range(0x110000)
        if unicodedata.category(chr(c)) in ("Cc", "Cf", "Zl", "Zp")
        and chr(c) not in "\n\t"
        and shown_lines(chr(c)) == chr(c)
    ]
    assert missed == []
    assert (
        shown("a\nb\tc") == "a\\nb\\tc"
        and json.loads(json_shown(json.dumps(HOSTILE, ensure_ascii=False))) == HOSTILE
    )
