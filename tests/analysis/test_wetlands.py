"""Wetlands: acres of disturbance in wetlands and regulated adjacent areas, counted once."""

import warnings

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely

from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.reference.read import open_reference
from analysis.review import review_site
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import REFERENCE_FIELDS, local_box
from tests.conftest import shared_path

PROFILE = load_profile()
US_SQ_FT_ACRES = (1200 / 3937) ** 2 / 4046.8564224  # acres per US survey square foot
DISTURBANCE = local_box(0, 0, 1000, 100)  # 1000 ft x 100 ft


def wetland(wid, geometry, regulated=1, adjacent=100.0, source="NYSDEC"):
    return geometry, {
        "wetland_id": wid,
        "source": source,
        "wetland_class": "II",
        "regulated": regulated,
        "adjacent_area_ft": adjacent,
    }


def wetlands_review(make_site, make_reference, wetlands, disturbance=(DISTURBANCE,)):
    site = load_site_plan(make_site(list(disturbance)), PROFILE)
    reference = open_reference(make_reference(wetlands=wetlands))
    review = review_site(site, PROFILE, reference=reference)
    return review, [f for f in review.findings if f.rule == "wetlands"]


# Wetlands spanning x -500..1500, wider than the disturbance, so that only straight edges of
# their adjacent areas cross it: each figure below is a rectangle.
CASES = [
    # (case, wetlands, wetland sq ft, adjacent sq ft)
    ("touching, not regulated", [wetland("W", local_box(-500, 100, 1500, 300), regulated=0)], 0, 0),
    (
        "touching, regulated: its whole 100-ft area",
        [wetland("W", local_box(-500, 100, 1500, 300))],
        0,
        1000 * 100,
    ),
    (
        "adjacent areas of two wetlands overlap: counted once",
        [wetland("N", local_box(-500, 130, 1500, 330)), wetland("S", local_box(-500, -230, 1500, -30))],
        0,
        1000 * 100,
    ),
    (
        "two overlapping wetlands inside: counted once",
        [
            wetland("A", local_box(-500, 20, 1500, 60), regulated=0),
            wetland("B", local_box(-500, 40, 1500, 80), regulated=0),
        ],
        1000 * 60,
        0,
    ),
    (
        "a regulated wetland inside: its ground is not adjacent ground too",
        [wetland("W", local_box(-500, 50, 1500, 300))],
        1000 * 50,
        1000 * 50,
    ),
    (
        "a 30-ft adjacent area given by the layer",
        [wetland("W", local_box(-500, 120, 1500, 300), adjacent=30.0)],
        0,
        1000 * 10,
    ),
    (
        "no adjacent_area_ft: the profile's 100 ft",
        [wetland("W", local_box(-500, 150, 1500, 300), adjacent=None)],
        0,
        1000 * 50,
    ),
    ("far away", [wetland("W", local_box(-500, 250, 1500, 300))], 0, 0),
]


@pytest.mark.parametrize("case, wetlands, wet_sq_ft, adjacent_sq_ft", CASES, ids=[c[0] for c in CASES])
def test_acres_in_wetlands_and_adjacent_areas(
    make_site, make_reference, case, wetlands, wet_sq_ft, adjacent_sq_ft
):
    review, findings = wetlands_review(make_site, make_reference, wetlands)
    m = review.measurements
    assert m["wetland_acres"] == pytest.approx(wet_sq_ft * US_SQ_FT_ACRES, abs=1e-9)
    assert m["wetland_adjacent_area_acres"] == pytest.approx(
        adjacent_sq_ft * US_SQ_FT_ACRES, rel=1e-3, abs=1e-9
    )
    if wet_sq_ft or adjacent_sq_ft:
        assert findings and all(f.status == "warn" and "SWPPP F" in f.message for f in findings)
        drawn = shapely.union_all([f.geometry for f in findings])
        assert drawn.area == pytest.approx(wet_sq_ft + adjacent_sq_ft, rel=1e-3)
    else:
        assert [f.status for f in findings] == ["pass"]


def test_each_wetland_is_named_with_its_acres(make_site, make_reference):
    review, findings = wetlands_review(
        make_site,
        make_reference,
        [
            wetland("GO-1", local_box(-500, 50, 1500, 300)),
            wetland("NWI-9", local_box(200, -50, 300, 20), regulated=0, adjacent=None, source="NWI"),
        ],
    )
    messages = [f.message for f in findings]
    inside_go1 = 1000 * 50 * US_SQ_FT_ACRES
    assert any(
        f"{inside_go1:.2f} acres of disturbance lie inside wetland GO-1 (NYSDEC, class II)" in m
        for m in messages
    )
    assert any("100-ft adjacent area of regulated wetland GO-1" in m for m in messages)
    nwi = [f for f in findings if f.features[0] == "wetlands:NWI-9"]
    assert len(nwi) == 1 and nwi[0].value == pytest.approx(100 * 20 * US_SQ_FT_ACRES)
    assert nwi[0].features == ["wetlands:NWI-9", "disturbance:1"]


# SWPPP F, the chapter's words (stormwater chapter, "Other environmental permits").
SWPPP_F = (
    "The applicant shall assure that all other applicable environmental permits have been "
    "or will be acquired for the land development activity prior to approval of the final "
    "stormwater design plan."
)


def test_wetland_findings_ask_for_swppp_fs_assurance_per_regulation(make_site, make_reference):
    """Issue 33, item 9: a finding words SWPPP F as F does (the assurance that permits "have
    been or will be acquired"), and claims no permit the data cannot tell of: a wetland the
    layer records as regulated "may" need one; one it does not (an NWI wetland) may or may not
    be regulated at all."""
    _, findings = wetlands_review(
        make_site,
        make_reference,
        [
            wetland("GO-1", local_box(-500, 50, 1500, 300)),
            wetland("NWI-9", local_box(200, -50, 300, 20), regulated=0, adjacent=None, source="NWI"),
        ],
    )
    quoted = (
        'SWPPP F: the applicant "shall assure that all other applicable environmental '
        "permits have been or will be acquired for the land development activity prior to "
        'approval of the final stormwater design plan"'
    )
    assert quoted[len('SWPPP F: the applicant "') : -1] in SWPPP_F.lower()
    warned = [f for f in findings if f.status == "warn"]
    assert len(warned) == 3 and all(quoted in f.message for f in warned)
    assert not any("are needed" in f.message or "needs a permit" in f.message for f in warned)
    regulated = [f for f in warned if f.features[0] == "wetlands:GO-1"]
    assert len(regulated) == 2 and all(
        "records the wetland as regulated (not by whom), so a permit for this work may apply" in f.message
        for f in regulated
    )
    nwi = next(f for f in warned if f.features[0] == "wetlands:NWI-9")
    assert (
        "does not record the wetland as regulated; a mapped wetland may or may not be "
        "regulated (as a federal wetland, under Clean Water Act section 404, or by the "
        "State), so whether a permit applies is not known from the data"
    ) in nwi.message


def test_the_quoted_swppp_f_is_the_checklists():
    """The words quoted are the checklist's item F (the chapter's text), verbatim."""
    from analysis.checklist.items import checklist_items
    from analysis.judge.wording import F_ASSURANCE

    item = next(i for i in checklist_items() if i.item == "F")
    assert item.text == f"Other environmental permits. {SWPPP_F}"
    said = F_ASSURANCE.split('"')[1]
    assert f"The applicant {said}." == SWPPP_F


def test_a_wider_adjacent_area_than_the_search_distance_needs_review(make_site, make_reference):
    search = PROFILE.reference.search_distance_ft
    _, findings = wetlands_review(
        make_site, make_reference, [wetland("WIDE", local_box(-500, 150, 1500, 300), adjacent=search + 100)]
    )
    assert "needs_review" in [f.status for f in findings]


def test_without_reference_wetlands_need_review(make_site):
    site = load_site_plan(make_site([DISTURBANCE]), PROFILE)
    review = review_site(site, PROFILE)
    finding = next(f for f in review.findings if f.rule == "wetlands")
    assert finding.status == "needs_review"
    assert review.measurements["wetland_acres"] is None


def test_the_demo_has_its_stated_wetland_acres(data_copy):
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    review = review_site(site, PROFILE, reference=open_reference(data_copy("demo_reference.gpkg")))
    assert review.measurements["wetland_acres"] == pytest.approx(0.10, abs=1e-6)
    # a strip of D-5, 255 ft wide, inside GO-12's 100-ft adjacent area: GO-12 lies 85 US survey
    # feet north of D-5 (test_data/README.md), and 100 international feet are 99.9998 of those
    reach = 100 * 0.3048 / (1200 / 3937)
    assert review.measurements["wetland_adjacent_area_acres"] == pytest.approx(
        (reach - 85) * 255 * US_SQ_FT_ACRES, rel=1e-9
    )


# --- real NWI polygons (../shared/data) ------------------------------------------------------


def nwi_reference(tmp_path):
    """The NWI extract mapped onto the contract, in its own CRS (NAD83 Albers)."""
    archive = shared_path("data/nwi_dc_wetlands.zip")
    nwi = gpd.read_file(f"zip://{archive}!DC_shapefile_wetlands/DC_Wetlands.shp")
    regulated = nwi["WETLAND_TY"].str.startswith("Freshwater ").astype(float)
    wetlands = gpd.GeoDataFrame(
        {
            "wetland_id": [f"NWI-{i}" for i in nwi.index],
            "source": "NWI",
            "wetland_class": nwi["ATTRIBUTE"],
            "regulated": regulated,
            "adjacent_area_ft": np.where(regulated == 1, 100.0, np.nan),
        },
        geometry=nwi.geometry.values,
        crs=nwi.crs,
    )
    path = tmp_path / "nwi_reference.gpkg"
    empty = {
        name: gpd.GeoDataFrame(
            {f: pd.Series(dtype=object) for f in fields}, geometry=gpd.GeoSeries([], crs=nwi.crs)
        )
        for name, fields in REFERENCE_FIELDS.items()
        if name != "wetlands"
    }
    with warnings.catch_warnings():  # geopandas 0.12 warns of the empty layers
        warnings.filterwarnings("ignore", "You are attempting to write an empty DataFrame")
        write_geopackage(path, {"wetlands": wetlands, **empty})
    return nwi, path


def test_real_nwi_wetlands_inside_the_disturbance(tmp_path, make_site):
    """Disturbance drawn as a box around the one invalid NWI polygon and its neighbours: the
    wetland acres are NWI's own ACRES of the polygons wholly inside, and only what was read is
    repaired."""
    nwi, path = nwi_reference(tmp_path)
    # NWI-1554 is invalid as GDAL up to 3.10 reads it, valid as GDAL 3.13 does (Debian testing):
    # test_reference_import.test_real_nwi_polygons_with_the_shipped_mapping.
    invalid_as_read = list(nwi.index[~nwi.geometry.is_valid])
    assert invalid_as_read in ([1554], [])
    invalid = 1554
    area = nwi.geometry[invalid].buffer(400).envelope
    whole = nwi[nwi.geometry.within(area)]
    assert invalid in whole.index and len(whole) >= 2
    cut = nwi[nwi.geometry.intersects(area) & ~nwi.geometry.within(area)]
    disturbance = gpd.GeoSeries([area], crs=nwi.crs).to_crs("EPSG:2260").iloc[0]
    # shave off the polygons only partly inside, so that the figure is NWI's own
    partly = gpd.GeoSeries(shapely.make_valid(cut.geometry.values), crs=nwi.crs).to_crs("EPSG:2260")
    shaved = disturbance.difference(shapely.union_all(np.asarray(partly.values, dtype=object)))
    site = load_site_plan(make_site([shaved], boundary=disturbance.envelope.buffer(50)), PROFILE)
    reference = open_reference(path)
    review = review_site(site, PROFILE, reference=reference)
    assert review.measurements["wetland_acres"] == pytest.approx(whole["ACRES"].sum(), rel=5e-3)
    assert reference.repaired == [f"wetlands:NWI-{i}" for i in invalid_as_read]
    assert reference.features_read["wetlands"] < len(nwi) / 10
    findings = [f for f in review.findings if f.rule == "wetlands" and f.status == "warn"]
    named = {f.features[0] for f in findings}
    assert {f"wetlands:NWI-{i}" for i in whole.index} <= named


def test_the_wetlands_check_alone_needs_only_the_wetlands_layer(make_site, make_reference):
    from analysis.review import review_paths

    site = make_site([DISTURBANCE])
    reference = make_reference(
        omit=("impaired_waters", "tmdl_watersheds", "catchments"),
        wetlands=[wetland("W", local_box(-500, 50, 1500, 300))],
    )
    review = review_paths(site, reference, PROFILE, rules=["wetlands"])
    assert {f.rule for f in review.findings} == {"wetlands"}
    assert review.measurements["wetland_acres"] == pytest.approx(1000 * 50 * US_SQ_FT_ACRES)
    assert set(review.reference["read"]) == {"wetlands"}
