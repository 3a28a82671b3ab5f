"""The screen's rows pinned: every site's row on a fixed set of sites, compared with a stored copy.

The sites are the benchmark's (``scripts/bench_screen.build_sites``: five-acre squares, half on
wetlands' corners) over the demo reference and each shipped reference variant, and the
adversarial cases of ``test_screen_differential`` (``CASES``). The rows change only when an
issue asks for a different answer (regenerate with ``SWPPP_GOLDEN_UPDATE=1`` and review the
diff of ``tests/golden/screen_rows.json``). Numbers are compared to 1e-9 (relative), so that
both Python stacks share one copy.
"""

from __future__ import annotations

import json
import math
import os
import sys
from pathlib import Path

import pytest

from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.screen.screen import screen_sites
from analysis.screen.sites import read_sites
from tests.analysis.test_screen_differential import CASES, profile_for, write_case

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "screen_rows.json"
REFERENCES = [
    ROOT / "test_data" / "demo_reference.gpkg",
    *sorted((ROOT / "test_data" / "variants").glob("reference_*.gpkg")),
]
BENCH_SITES = 36
PINNED_EVERY = (1, 8)


def bench_sites(reference: Path, target: Path) -> Path:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import bench_screen
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    bench_screen.build_sites(ROOT / "test_data" / "demo_reference.gpkg", target, BENCH_SITES)
    return target


def screened(reference: Path, sites_path: Path, profile) -> dict:
    """{site_id: row}, or the error the screen refused the reference with (the checkout's path
    written <root> in either)."""
    sites = read_sites(sites_path, profile.area_crs)
    try:
        return {
            row["site_id"]: {
                k: v.replace(str(ROOT), "<root>") if isinstance(v, str) else v for k, v in row.items()
            }
            for row in screen_sites(sites, open_reference(reference), profile).rows
        }
    except InputError as error:
        return {"error": str(error).replace(str(ROOT), "<root>")}


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> dict:
    out = {}
    sites = bench_sites(
        ROOT / "test_data" / "demo_reference.gpkg", tmp_path_factory.mktemp("bench") / "sites.gpkg"
    )
    for reference in REFERENCES:
        out[f"bench:{reference.stem}"] = screened(reference, sites, load_profile())
    for name, build in sorted(CASES.items()):
        case = build()
        reference, sites_path = write_case(case, tmp_path_factory.mktemp(name))
        found = screened(reference, sites_path, profile_for(case))
        # a case of many sites: every PINNED_EVERY-th row kept (all are screened together)
        out[f"case:{name}"] = {k: found[k] for k in sorted(found)[:: PINNED_EVERY[case.every > 1]]}
    return out


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


def test_the_screens_rows_are_the_pinned_rows(rows):
    if os.environ.get("SWPPP_GOLDEN_UPDATE"):
        GOLDEN.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(GOLDEN.read_text())
    assert sorted(rows) == sorted(pinned)
    for key in pinned:
        changed = [site for site in pinned[key] if not _same(rows[key].get(site), pinned[key][site])]
        assert rows[key].keys() == pinned[key].keys(), key
        assert not changed, (key, changed[:3], [(rows[key][s], pinned[key][s]) for s in changed[:2]])


def test_the_pin_is_not_of_empty_answers(rows):
    """The pinned rows meet the reference: Condition A applies and is not decided somewhere,
    and some site meets a wetland."""
    every = [row for site_rows in rows.values() for row in site_rows.values() if isinstance(row, dict)]
    assert {"applies", "not decided", "does not apply"} <= {r["condition_a"] for r in every}
    assert {"wetland", "adjacent area", "none"} <= {r["wetland_status"] for r in every}
