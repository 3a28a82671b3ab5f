"""The route from a HUC-12 to the waters in it and below it, built at import (issue 34, item 3).

WBD's HUC-12s name only the HUC-12 downstream (``tohuc``); ATTAINS names no catchment. Before
the links, the README's New York route screened the demo parcel as "Condition A does not
apply" ("020200060103 is not on the 303(d) list": a HUC-12 outside the extract read as a
water). These run the README's own offline commands on the shipped extracts and check the
store they build, then the store without the links (waters without geometry): needs_review,
never "does not apply". The PostGIS store builds the same links (one test, where a server is).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from analysis.cli.app import main
from analysis.profile import load_profile
from analysis.reference.links import LINKS_TABLE
from analysis.reference.read import open_reference
from analysis.screen.screen import screen_sites
from analysis.screen.sites import read_sites
from tests.conftest import TEST_DATA

ROOT = Path(__file__).resolve().parents[2]
M = TEST_DATA / "reference_sources"


def _offline_twin() -> str:
    """The README's GIS offline block: the sh block after the one needing the network."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", text, re.M | re.S)
    kinds = [kind.strip() for kind, _ in blocks]
    k = next(
        i
        for i, (kind, body) in enumerate(blocks)
        if kind.strip() == "sh network" and "reference import catchments" in body
    )
    assert kinds[k + 1] == "sh"
    return blocks[k + 1][1]


@pytest.fixture(scope="module")
def readme_store(tmp_path_factory):
    """The store the README's offline commands build, in a copy of test_data (its commands run
    as written, `swppp` the module's own entry point)."""
    folder = tmp_path_factory.mktemp("readme")
    shutil.copytree(TEST_DATA, folder / "test_data")
    script = _offline_twin().replace("swppp ", f"{sys.executable} -m analysis.cli ")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run(
        ["bash", "-c", "set -e\n" + script.replace("\\\n", " ")],
        cwd=folder,
        env=env,
        text=True,
        capture_output=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 1), done.stdout[-3000:] + done.stderr[-3000:]
    return folder, done.stdout


def test_the_import_links_each_huc12_to_the_listed_waters_in_it(readme_store):
    import sqlite3
    from contextlib import closing

    folder, said = readme_store
    with closing(sqlite3.connect(folder / "ref.gpkg")) as con:
        rows = sorted(con.execute(f"SELECT catchment_id, waterbody_id FROM {LINKS_TABLE}"))
    # 2022's Example Brook (4a) is kept: a delisted water's place is geography, not a listing
    assert rows == [
        ("020200060101", "NY1301-0099"),
        ("020200060101", "NY1301-0200"),
        ("020200060102", "NY1301-0123"),
    ]
    assert "route: 2 link(s) from catchments to the waters in them" in said


def test_the_readme_store_screens_the_demo_parcel_as_condition_a_applies(readme_store):
    folder, _ = readme_store
    profile = load_profile()
    sites = read_sites(str(folder / "test_data" / "permits.gpkg"), profile.area_crs)
    rows = screen_sites(sites, open_reference(folder / "ref.gpkg"), profile).by_site()
    assert rows["P-001"]["condition_a"] == "applies"
    assert rows["P-001"]["listed_waters"] == "NY1301-0099;NY1301-0200"
    # Example Brook's HUC-12: its TMDL watershed, derived from the HUC-12s, with stormwater
    assert rows["P-003"]["condition_a"] == "applies"
    assert rows["P-003"]["tmdl_watersheds"] == "NY1301-0123"


def test_the_readme_store_reviews_the_demo_by_its_catchment(readme_store, tmp_path):
    """Without a discharge point, the review starts from the disturbance's HUC-12 and finds
    the listed water in it, saying how the import placed it there."""
    folder, _ = readme_store
    out = tmp_path / "review.json"
    assert (
        main(
            [
                "review",
                str(TEST_DATA / "variants" / "no_discharge_point.gpkg"),
                "--reference",
                str(folder / "ref.gpkg"),
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 1
    )
    finding = next(f for f in json.loads(out.read_text())["findings"] if f["rule"] == "condition_a")
    assert finding["status"] == "info"
    assert finding["message"].startswith("Condition A applies: NY1301-0099")
    assert (
        "the disturbance lies in catchment 020200060101 (Seven Springs Creek-Forest Road), "
        "which holds NY1301-0099 (the import placed it there by its shape)" in finding["message"]
    )


def _unlinked_store(folder: Path) -> Path:
    """WBD catchments and the 2024 list without --geometry: nothing links them."""
    store = folder / "unlinked.gpkg"
    assert (
        main(
            [
                "reference",
                "import",
                "catchments",
                str(M / "wbd_huc12.gpkg"),
                "--into",
                str(store),
                "--map",
                str(M / "wbd_mapping.toml"),
                "--source-date",
                "2024-01-01",
                "--quiet",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "reference",
                "import",
                "impaired_waters",
                str(M / "attains_assessments_2024.json"),
                "--format",
                "attains",
                "--into",
                str(store),
                "--source-date",
                "2024-06-01",
                "--quiet",
            ]
        )
        == 0
    )
    for layer in ("wetlands", "tmdl_watersheds"):  # TW-1 lies east, around P-003
        assert (
            main(
                [
                    "reference",
                    "import",
                    layer,
                    f"{TEST_DATA / 'demo_reference.gpkg'}|layername={layer}",
                    "--into",
                    str(store),
                    "--quiet",
                ]
            )
            == 0
        )
    return store


def test_without_links_the_screen_says_not_decided_never_does_not_apply(tmp_path):
    store = _unlinked_store(tmp_path)
    profile = load_profile()
    sites = read_sites(str(TEST_DATA / "permits.gpkg"), profile.area_crs)
    rows = screen_sites(sites, open_reference(store), profile).by_site()
    for site in ("P-001", "P-002"):
        row = rows[site]
        assert row["condition_a"] == "not decided", row
        assert "020200060103 is not on the 303(d) list" not in row["why"]
        assert (
            "which drains to catchment 020200060103, not in the reference's catchments "
            "(import the catchments downstream of it)"
        ) in row["why"], row["why"]
        assert "imported with --geometry" in row["why"], row["why"]


def test_without_links_the_review_says_needs_review(tmp_path):
    store = _unlinked_store(tmp_path)
    out = tmp_path / "review.json"
    main(
        [
            "review",
            str(TEST_DATA / "variants" / "no_discharge_point.gpkg"),
            "--reference",
            str(store),
            "--json",
            str(out),
            "--quiet",
        ]
    )
    finding = next(f for f in json.loads(out.read_text())["findings"] if f["rule"] == "condition_a")
    assert finding["status"] == "needs_review", finding["message"]
    assert "impaired_waters is imported with --geometry" in finding["message"]


def test_a_catchments_import_rebuilds_the_links(tmp_path):
    """Catchments imported after the waters link them too; a new catchments version replaces
    the links of the old."""
    import sqlite3
    from contextlib import closing

    store = tmp_path / "ref.gpkg"
    assert (
        main(
            [
                "reference",
                "import",
                "impaired_waters",
                str(M / "attains_assessments_2024.json"),
                "--format",
                "attains",
                "--into",
                str(store),
                "--geometry",
                str(M / "waters.gpkg"),
                "--map",
                str(M / "pwl_geometry_mapping.toml"),
                "--quiet",
            ]
        )
        == 0
    )
    for _ in range(2):
        assert (
            main(
                [
                    "reference",
                    "import",
                    "catchments",
                    str(M / "wbd_huc12.gpkg"),
                    "--into",
                    str(store),
                    "--map",
                    str(M / "wbd_mapping.toml"),
                    "--source-date",
                    "2024-01-01",
                    "--quiet",
                ]
            )
            == 0
        )
        with closing(sqlite3.connect(store)) as con:
            assert sorted(con.execute(f"SELECT catchment_id, waterbody_id FROM {LINKS_TABLE}")) == [
                ("020200060101", "NY1301-0099"),
                ("020200060101", "NY1301-0200"),
            ]
        # the second round: the same source is recognised and not imported again; a changed
        # source would be (the links rebuilt from the current waters)


def test_the_postgis_store_builds_the_same_links(pg_schema, tmp_path):
    """The same links in PostGIS, read by the review's reader and the SQL screen alike."""
    from analysis.reference.postgis import PostgisStore
    from analysis.screen.postgis import screen_postgis

    conninfo, schema = pg_schema
    for args in (
        [
            "catchments",
            str(M / "wbd_huc12.gpkg"),
            "--map",
            str(M / "wbd_mapping.toml"),
            "--source-date",
            "2024-01-01",
        ],
        [
            "impaired_waters",
            str(M / "attains_assessments_2024.json"),
            "--format",
            "attains",
            "--geometry",
            str(M / "waters.gpkg"),
            "--map",
            str(M / "pwl_geometry_mapping.toml"),
            "--source-date",
            "2024-06-01",
        ],
    ):
        assert (
            main(
                [
                    "reference",
                    "import",
                    args[0],
                    args[1],
                    "--into",
                    conninfo,
                    "--schema",
                    schema,
                    *args[2:],
                    "--quiet",
                ]
            )
            == 0
        )
    for layer in ("wetlands", "tmdl_watersheds"):
        assert (
            main(
                [
                    "reference",
                    "import",
                    layer,
                    f"{TEST_DATA / 'demo_reference.gpkg'}|layername={layer}",
                    "--into",
                    conninfo,
                    "--schema",
                    schema,
                    "--quiet",
                ]
            )
            == 0
        )
    links = PostgisStore(conninfo, schema).links({"020200060101", "020200060102"})
    assert links == {"020200060101": ["NY1301-0099", "NY1301-0200"]}
    profile = load_profile()
    sites = read_sites(str(TEST_DATA / "permits.gpkg"), profile.area_crs)
    source = f"{conninfo}?schema={schema}" if "://" in conninfo else f"{conninfo} schema={schema}"
    rows = screen_postgis(sites, source, profile).by_site()
    assert rows["P-001"]["condition_a"] == "applies"
    assert rows["P-001"]["listed_waters"] == "NY1301-0099;NY1301-0200"
    assert rows["P-002"]["condition_a"] == "applies"
    out = tmp_path / "review.json"
    assert (
        main(
            [
                "review",
                str(TEST_DATA / "variants" / "no_discharge_point.gpkg"),
                "--reference",
                source,
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 1
    )
    finding = next(f for f in json.loads(out.read_text())["findings"] if f["rule"] == "condition_a")
    assert finding["message"].startswith("Condition A applies: NY1301-0099"), finding["message"]


def test_the_route_modules_doctests_pass():
    import doctest

    import analysis.reference.catchments
    import analysis.reference.links
    import analysis.reference.route

    for module in (analysis.reference.links, analysis.reference.catchments, analysis.reference.route):
        assert doctest.testmod(module).failed == 0, module.__name__
