"""5M, 5R and 5-alt waters decide Condition A as 303(d)-listed waters in QGIS too (issue 32's
"in the review, the screen, PostGIS and QGIS alike"; issue 33, item 2).

SWPPP C(1), Condition A: "stormwater runoff from land development activities discharging a
pollutant of concern to either an impaired water identified on the Department's 303(d) list of
impaired waters or a total maximum daily load (TMDL) designated watershed ...". The store is
made as the analysis test makes it (tests/analysis/test_reference_categories.py: an ATTAINS
response of the three subcategories' waters); ``swppp:condition_a`` reads it by file and as
project layers (QGIS's own reading of the category field).
"""

import pytest

from tests.analysis.conftest import make_site  # noqa: F401 - the analysis tests' site-plan fixture
from tests.analysis.test_reference_categories import LISTED_WATERS, attains, candidates, site_box, water_lines

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")


@pytest.fixture
def store(tmp_path):
    from analysis.reference.store import GeoPackageStore

    units = [(wid, category, ["PHOSPHORUS"]) for wid, category in LISTED_WATERS.items()]
    units += [("NYC-2", "2", [])]
    assessments = (
        attains(tmp_path / "assessments.json", units),
        water_lines(tmp_path / "waters.gpkg", [u[0] for u in units]),
    )
    built = GeoPackageStore(tmp_path / "store.gpkg")
    for candidate in candidates(tmp_path, assessments):
        built.import_candidate(candidate)
    return str(built.path)


@pytest.mark.parametrize("how", ["file", "project layers"])
def test_listed_subcategories_decide_condition_a_in_qgis(
    make_site,  # noqa: F811 - the fixture imported above
    store,
    tmp_path,
    load_layer,
    how,
):
    import processing

    reference = (
        {"REFERENCE": store}
        if how == "file"
        else {f"{role.upper()}_LAYER": load_layer(store, role) for role in ROLES}
    )
    for k, (water, category) in enumerate(LISTED_WATERS.items()):
        plan = make_site([site_box(k)], filename=f"site{k}.gpkg", boundary=site_box(k).buffer(50))
        results = processing.run("swppp:condition_a", {"SITE": str(plan), **reference})
        assert (results["CONDITION_A_APPLIES"], results["CONDITION_A_DECIDED"]) == (1, 1), (
            water,
            results["CONDITION_A_EVIDENCE"],
        )
        assert (
            f"{water} (no name) is 303(d)-listed (listing cycle 2024, category {category.lower()})"
        ) in results["CONDITION_A_EVIDENCE"]
