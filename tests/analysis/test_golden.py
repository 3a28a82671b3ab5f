"""The safety net for refactoring: every command on every shipped plan, compared with a stored copy.

Each case runs the ``swppp`` command line in-process and stores what a user gets: the exit
status, the JSON the command prints or writes, and the text of the files it writes (HTML). The
stored copies live in ``tests/golden/``; they change only when an issue asks for a different
answer. Dates of today, the tool's version, temporary paths and the stored versions' import
times are replaced by placeholders; numbers are compared to 1e-9 (relative), so that both
Python stacks (Debian's geopandas 0.12 + fiona, PyPI's geopandas 1.x + pyogrio) share one copy.

Regenerate after an intended change: ``SWPPP_GOLDEN_UPDATE=1 pytest tests/analysis/test_golden.py``
and review the diff of ``tests/golden/``.
"""

from __future__ import annotations

import json
import math
import os
import re
from datetime import date
from pathlib import Path

import pytest

import analysis
from analysis.cli import main

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "test_data"
GOLDEN = ROOT / "tests" / "golden"
REFERENCE = DATA / "demo_reference.gpkg"
RECORDS = DATA / "records"
SOURCES = DATA / "reference_sources"
UPDATE = bool(os.environ.get("SWPPP_GOLDEN_UPDATE"))

PLANS = sorted(
    [DATA / "demo_site.gpkg", DATA / "demo_site_round2.gpkg"]  # the demo and its resubmittal
    + [p for p in (DATA / "variants").glob("*.gpkg") if not p.name.startswith("reference_")]
)
RECORD_FILES = [
    "--inspections",
    RECORDS / "inspection_log.csv",
    "--rain",
    RECORDS / "rain.csv",
    "--notices",
    RECORDS / "notices.csv",
    "--traps",
    RECORDS / "traps.csv",
]
SHEETS = [
    "--sheet",
    DATA / "sheets" / "sheet_2260_100ft.tif",
    "--sheet",
    DATA / "sheets" / "sheet_utm18n_50ft_cm.tif",
    "--sheet",
    DATA / "sheets" / "sheet_2260_200ft.tif",
]


def _review(plan: Path, *extra) -> list:
    return ["review", plan, "--reference", REFERENCE, "--json", "{tmp}/out.json", "--quiet", *extra]


CASES: dict[str, list[list]] = {
    **{f"review_{p.stem}": [_review(p)] for p in PLANS},
    "review_demo_no_reference": [["review", DATA / "demo_site.gpkg", "--json", "{tmp}/out.json", "--quiet"]],
    "review_demo_sheets_records_confirmations": [
        _review(
            DATA / "demo_site.gpkg",
            *SHEETS,
            *RECORD_FILES,
            "--confirmations",
            DATA / "checklist" / "confirmations.json",
            "--report",
            "{tmp}/report.html",
        )
    ],
    "review_demo_land_cover_rasters_from_plan": [
        _review(DATA / "variants" / "contents_complete.gpkg", "--findings", "{tmp}/findings.gpkg")
    ],
    **{
        f"review_demo_{r.stem}": [
            ["review", DATA / "demo_site.gpkg", "--reference", r, "--json", "{tmp}/out.json", "--quiet"]
        ]
        for r in sorted((DATA / "variants").glob("reference_*.gpkg"))
    },
    "inspections_check": [
        [
            "inspections",
            "check",
            "--log",
            RECORDS / "inspection_log.csv",
            "--rain",
            RECORDS / "rain.csv",
            "--notices",
            RECORDS / "notices.csv",
            "--traps",
            RECORDS / "traps.csv",
            "--site",
            DATA / "demo_site.gpkg",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ]
    ],
    "inspections_check_ghcn": [
        [
            "inspections",
            "check",
            "--log",
            RECORDS / "inspection_log.csv",
            "--rain",
            RECORDS / "rain_ghcn.csv",
            "--station",
            "USC00309991",
            "--rain-units",
            "in",
            "--from",
            "2027-04-01",
            "--to",
            "2027-11-15",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ]
    ],
    "penalty_civil_continuing": [
        [
            "penalty",
            "--history",
            RECORDS / "history.csv",
            "--person",
            "Forest Road Commons LLC",
            "--on",
            "2027-06-14",
            "--until",
            "2027-06-20",
            "--kind",
            "civil",
            "--json",
            "{tmp}/out.json",
        ]
    ],
    "penalty_criminal": [
        [
            "penalty",
            "--history",
            RECORDS / "history.csv",
            "--person",
            "J. Example",
            "--on",
            "2026-02-01",
            "--kind",
            "criminal",
            "--json",
            "{tmp}/out.json",
        ]
    ],
    "nov": [["nov", RECORDS / "violation.toml", "--output", "{tmp}/notice.html"]],
    "certification_form": [
        ["certification-form", "--site", DATA / "demo_site.gpkg", "--output", "{tmp}/form.html"]
    ],
    "reference_import_status_diff": [
        [
            "reference",
            "import",
            "impaired_waters",
            SOURCES / "pwl_2022.csv",
            "--reference",
            "{tmp}/ref.gpkg",
            "--format",
            "pwl",
            "--geometry",
            SOURCES / "waters.gpkg",
            "--map",
            SOURCES / "pwl_geometry_mapping.toml",
            "--source-date",
            "2022-04-01",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ],
        [
            "reference",
            "import",
            "impaired_waters",
            SOURCES / "pwl_2024.csv",
            "--reference",
            "{tmp}/ref.gpkg",
            "--format",
            "pwl",
            "--geometry",
            SOURCES / "waters.gpkg",
            "--map",
            SOURCES / "pwl_geometry_mapping.toml",
            "--source-date",
            "2024-04-01",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ],
        [
            "reference",
            "import",
            "catchments",
            SOURCES / "wbd_huc12.gpkg",
            "--reference",
            "{tmp}/ref.gpkg",
            "--map",
            SOURCES / "wbd_mapping.toml",
            "--source-date",
            "2024-01-01",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ],
        [
            "reference",
            "import",
            "tmdl_watersheds",
            SOURCES / "tmdl_watersheds.gpkg",
            "--reference",
            "{tmp}/ref.gpkg",
            "--source-date",
            "2024-01-01",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ],
        [
            "reference",
            "import",
            "impaired_waters",
            SOURCES / "attains_assessments_2024.json",
            "--reference",
            "{tmp}/ref.gpkg",
            "--format",
            "attains",
            "--geometry",
            SOURCES / "waters.gpkg",
            "--map",
            SOURCES / "pwl_geometry_mapping.toml",
            "--source-date",
            "2024-06-01",
            "--json",
            "{tmp}/out.json",
            "--quiet",
        ],
        ["reference", "status", "--reference", "{tmp}/ref.gpkg", "--json", "{tmp}/out.json"],
        [
            "reference",
            "diff",
            "impaired_waters",
            "--reference",
            "{tmp}/ref.gpkg",
            "--from",
            "1",
            "--to",
            "2",
            "--json",
            "{tmp}/out.json",
        ],
    ],
}

# Counted from the day the test runs (a golden file must not change at midnight).
VOLATILE_KEYS = {
    "imported_at",
    "reviewed_on",
    "created",
    "modified",
    "age_days",
    "imported_days_ago",
    "source_days_old",
}


def _normalise(value, tmp: str, today: str):
    if isinstance(value, dict):
        return {
            k: ("<volatile>" if k in VOLATILE_KEYS else _normalise(v, tmp, today)) for k, v in value.items()
        }
    if isinstance(value, list):
        return [_normalise(v, tmp, today) for v in value]
    if isinstance(value, str):
        return _normalise_text(value, tmp, today)
    return value


def _normalise_text(text: str, tmp: str, today: str) -> str:
    text = text.replace(tmp, "<tmp>").replace(str(ROOT), "<root>").replace(today, "<today>")
    text = text.replace(f"swppp-review {analysis.__version__}", "swppp-review <version>")
    # Timestamps of the run (import times in a store, the generator's note in a report).
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d)?", "<timestamp>", text)


def _run(case: list[list], tmp_path: Path, capsys) -> list[dict]:
    steps = []
    today = date.today().isoformat()
    for argv in case:
        args = [str(a).replace("{tmp}", str(tmp_path)) for a in argv]
        status = main(args)
        out, err = capsys.readouterr()
        step: dict = {"argv": [_normalise_text(a, str(tmp_path), today) for a in args], "exit": status}
        written = tmp_path / "out.json"
        if written.is_file():
            step["json"] = json.loads(written.read_text(encoding="utf-8"))
            if isinstance(step["json"], dict) and "tool" in step["json"]:
                step["json"]["tool"]["version"] = "<version>"
            written.unlink()
        for name in ("notice.html", "form.html"):
            page = tmp_path / name
            if page.is_file():
                step[name] = page.read_text(encoding="utf-8").splitlines()
                page.unlink()
        if status == 2:  # a refusal: that it is refused, and on what (not the wording)
            step["refused"] = True
        steps.append(step)
    return _normalise(steps, str(tmp_path), today)


def _close(actual, expected, where="") -> list[str]:
    if isinstance(expected, float) or isinstance(actual, float):
        if (
            isinstance(actual, (int, float))
            and isinstance(expected, (int, float))
            and not isinstance(actual, bool)
            and not isinstance(expected, bool)
            and math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)
        ):
            return []
        return [f"{where}: {actual!r} != {expected!r}"]
    if isinstance(expected, dict) and isinstance(actual, dict):
        problems = [f"{where}.{k}: missing" for k in expected if k not in actual]
        problems += [f"{where}.{k}: unexpected {actual[k]!r}"[:300] for k in actual if k not in expected]
        for k in expected.keys() & actual.keys():
            problems += _close(actual[k], expected[k], f"{where}.{k}")
        return problems
    if isinstance(expected, list) and isinstance(actual, list):
        if len(expected) != len(actual):
            return [f"{where}: {len(actual)} items != {len(expected)}"]
        return [p for i, (a, e) in enumerate(zip(actual, expected)) for p in _close(a, e, f"{where}[{i}]")]
    return [] if actual == expected else [f"{where}: {actual!r} != {expected!r}"[:400]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_command_output_is_unchanged(name, tmp_path, capsys):
    actual = _run(CASES[name], tmp_path, capsys)
    stored = GOLDEN / f"{name}.json"
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        stored.write_text(
            json.dumps(actual, indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8"
        )
    expected = json.loads(stored.read_text(encoding="utf-8"))
    problems = _close(actual, expected)
    assert not problems, f"{name} differs from {stored.name}:\n" + "\n".join(problems[:40])


def test_every_plan_in_test_data_has_a_golden_review():
    assert len(PLANS) >= 20
    assert all(f"review_{p.stem}" in CASES for p in PLANS)
