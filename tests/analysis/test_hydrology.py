"""TR-55 curve numbers, runoff, peak discharge, WQv, composite CN (polygons and raster), review."""

from __future__ import annotations

import math

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
from shapely import box

from analysis.checks.hydrology import (
    COVER_KEYS,
    MethodLimits,
    analyse_hydrology,
    composite,
    curve_number,
    initial_abstraction,
    land_cover_from_raster,
    peak_discharge,
    runoff_depth,
    unit_peak_discharge,
    water_quality_volume,
)
from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.profile import DesignStorm, load_profile
from analysis.review import review_paths
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import PROJECT, X0, Y0, square

CRS = "EPSG:2260"
PROFILE = load_profile()
LIMITS = MethodLimits.from_profile(PROFILE)

# TR-55 (1986) Tables 2-2a and 2-2c, typed here from the published tables (A, B, C, D).
PUBLISHED_CN = {
    "open_space_poor": (68, 79, 86, 89),
    "open_space_fair": (49, 69, 79, 84),
    "open_space_good": (39, 61, 74, 80),
    "impervious": (98, 98, 98, 98),
    "paved_road_ditches": (83, 89, 92, 93),
    "gravel_road": (76, 85, 89, 91),
    "dirt_road": (72, 82, 87, 89),
    "commercial": (89, 92, 94, 95),
    "industrial": (81, 88, 91, 93),
    "residential_1_8_acre": (77, 85, 90, 92),
    "residential_1_4_acre": (61, 75, 83, 87),
    "residential_1_2_acre": (54, 70, 80, 85),
    "residential_2_acre": (46, 65, 77, 82),
    "newly_graded": (77, 86, 91, 94),
    "meadow": (30, 58, 71, 78),
    "brush_good": (30, 48, 65, 73),
    "woods_grass_fair": (43, 65, 76, 82),
    "woods_poor": (45, 66, 77, 83),
    "woods_good": (30, 55, 70, 77),
    "farmstead": (59, 74, 82, 86),
    "pasture_good": (39, 61, 74, 80),
    "paved_road_curbs": (98, 98, 98, 98),
    "residential_1_3_acre": (57, 72, 81, 86),
    "residential_1_acre": (51, 68, 79, 84),
    "pasture_poor": (68, 79, 86, 89),
    "pasture_fair": (49, 69, 79, 84),
    "brush_poor": (48, 67, 77, 83),
    "brush_fair": (35, 56, 70, 77),
    "woods_grass_poor": (57, 73, 82, 86),
    "woods_grass_good": (32, 58, 72, 79),
    "woods_fair": (36, 60, 73, 79),
}

# TR-55 Table 2-1, runoff depth (in) for rainfall 1 to 12 in and CN 40 to 98 (a transcription of
# the published table; the cell 7.0 in / CN 50 is left out: it could not be verified).
TABLE_2_1_CN = (40, 45, 50, 55, 60, 65, 70, 75, 80, 85, 90, 95, 98)
TABLE_2_1 = {
    1.0: (0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.03, 0.08, 0.17, 0.32, 0.56, 0.79),
    1.4: (0.00, 0.00, 0.00, 0.00, 0.00, 0.02, 0.06, 0.13, 0.24, 0.39, 0.61, 0.92, 1.18),
    2.0: (0.00, 0.00, 0.00, 0.02, 0.06, 0.14, 0.24, 0.38, 0.56, 0.80, 1.09, 1.48, 1.77),
    3.0: (0.00, 0.02, 0.09, 0.19, 0.33, 0.51, 0.71, 0.96, 1.25, 1.59, 1.98, 2.45, 2.77),
    4.0: (0.06, 0.18, 0.33, 0.53, 0.76, 1.03, 1.33, 1.67, 2.04, 2.46, 2.92, 3.43, 3.77),
    5.0: (0.24, 0.44, 0.69, 0.98, 1.30, 1.65, 2.04, 2.45, 2.89, 3.37, 3.88, 4.42, 4.76),
    6.0: (0.50, 0.80, 1.14, 1.52, 1.92, 2.35, 2.81, 3.28, 3.78, 4.30, 4.85, 5.41, 5.76),
    7.0: (0.84, 1.24, None, 2.12, 2.60, 3.10, 3.62, 4.15, 4.69, 5.25, 5.82, 6.41, 6.76),
    8.0: (1.25, 1.74, 2.25, 2.78, 3.33, 3.89, 4.46, 5.04, 5.63, 6.21, 6.81, 7.40, 7.76),
    10.0: (2.23, 2.89, 3.56, 4.23, 4.90, 5.56, 6.22, 6.88, 7.52, 8.16, 8.78, 9.40, 9.76),
    12.0: (3.38, 4.19, 5.00, 5.79, 6.56, 7.32, 8.05, 8.76, 9.45, 10.11, 10.76, 11.39, 11.76),
}
TABLE_2_1_CASES = [
    (p, cn, q) for p, row in TABLE_2_1.items() for cn, q in zip(TABLE_2_1_CN, row) if q is not None
]


@pytest.mark.parametrize("cover", sorted(PUBLISHED_CN))
@pytest.mark.parametrize("group", range(4))
def test_curve_number_is_the_published_one(cover, group):
    assert curve_number(cover, "ABCD"[group]) == PUBLISHED_CN[cover][group]


def test_every_cover_key_with_a_curve_number_is_checked_against_the_published_tables():
    assert set(PUBLISHED_CN) == set(COVER_KEYS) - {"water"}


@pytest.mark.parametrize("dual, expected", [("undrained", 94), ("drained", 91)])
def test_dual_soil_group_follows_the_profile_choice(dual, expected):
    assert curve_number("newly_graded", "C/D", dual) == expected
    assert curve_number("newly_graded", "c/d", dual) == expected


def test_unknown_cover_and_water_have_no_curve_number():
    with pytest.raises(KeyError, match="parking_lot"):
        curve_number("parking_lot", "B")
    with pytest.raises(ValueError, match="no curve number"):
        curve_number("water", "B")
    with pytest.raises(ValueError, match="E"):
        curve_number("meadow", "E")


@pytest.mark.parametrize("rain, cn, published", TABLE_2_1_CASES)
def test_runoff_depth_matches_tr55_table_2_1(rain, cn, published):
    assert abs(runoff_depth(rain, cn) - published) <= 0.01


@pytest.mark.parametrize("cn", [40, 55, 61, 80, 98])
def test_rain_exactly_at_initial_abstraction_gives_no_runoff(cn):
    ia = 0.2 * (1000 / cn - 10)
    assert runoff_depth(ia, cn) == 0.0
    assert runoff_depth(ia * 0.5, cn) == 0.0
    assert runoff_depth(ia + 0.5, cn) > 0.0


@pytest.mark.parametrize(
    "cn, table_4_1",
    [(40, 3.000), (50, 2.000), (60, 1.333), (70, 0.857), (75, 0.667), (80, 0.500), (90, 0.222), (98, 0.041)],
)
def test_initial_abstraction_matches_tr55_table_4_1(cn, table_4_1):
    assert round(float(initial_abstraction(cn)), 3) == table_4_1


# TR-55 Table F-1 rows typed here (rainfall type, Ia/P, C0, C1, C2).
@pytest.mark.parametrize(
    "kind, ratio, c0, c1, c2",
    [
        ("II", 0.10, 2.55323, -0.61512, -0.16403),
        ("II", 0.50, 2.20282, -0.51599, -0.01259),
        ("III", 0.10, 2.47317, -0.51848, -0.17083),
        ("III", 0.40, 2.30726, -0.46541, -0.11094),
        ("I", 0.25, 2.18219, -0.48488, -0.06589),
        ("IA", 0.30, 1.72657, -0.19826, 0.02633),
    ],
)
@pytest.mark.parametrize("tc", [0.1, 0.75, 2.0, 10.0])
def test_unit_peak_discharge_uses_table_f_1(kind, ratio, c0, c1, c2, tc):
    log_tc = math.log10(tc)
    expected = 10 ** (c0 + c1 * log_tc + c2 * log_tc**2)
    assert unit_peak_discharge(tc, ratio, kind) == pytest.approx(expected, rel=1e-12)


def test_unit_peak_between_tabulated_ratios_is_interpolated_on_qu():
    low, high = unit_peak_discharge(1.0, 0.30, "III"), unit_peak_discharge(1.0, 0.35, "III")
    assert unit_peak_discharge(1.0, 0.325, "III") == pytest.approx((low + high) / 2)


def test_peak_discharge_is_qu_am_q_fp():
    cn, rain, acres, tc = 80.0, 4.0, 64.0, 0.5
    peak = peak_discharge(acres, cn, rain, tc, "III", LIMITS)
    ia_p = 0.5 / 4.0  # S = 2.5, Ia = 0.5
    assert peak.ia_p == pytest.approx(ia_p)
    expected = unit_peak_discharge(tc, ia_p, "III") * 0.1 * runoff_depth(rain, cn)
    assert peak.cfs == pytest.approx(expected) and peak.note == ""


@pytest.mark.parametrize("tc", [0.05, 10.5, None])
def test_tc_outside_the_method_gives_no_peak(tc):
    peak = peak_discharge(10.0, 80.0, 4.0, tc, "III", LIMITS)
    assert peak.cfs is None and peak.note


def test_cn_outside_the_method_gives_no_peak_and_low_ia_p_uses_the_limit():
    assert peak_discharge(10.0, 99.0, 4.0, 1.0, "III", LIMITS).cfs is None
    low = peak_discharge(10.0, 95.0, 8.0, 1.0, "III", LIMITS)  # Ia/P = 0.013
    assert low.cfs == pytest.approx(unit_peak_discharge(1.0, 0.1, "III") * 10 / 640 * runoff_depth(8.0, 95.0))
    assert "limiting value" in low.note


@pytest.mark.parametrize(
    "rain, impervious, acres, min_rv, expected",
    [
        (1.0, 0.5, 12.0, None, 1.0 * (0.05 + 0.45) * 12.0 / 12),
        (1.2, 0.0, 6.0, 0.2, 1.2 * 0.2 * 6.0 / 12),  # the Design Manual's minimum Rv applies
        (1.2, 1.0, 6.0, 0.2, 1.2 * 0.95 * 6.0 / 12),
    ],
)
def test_water_quality_volume(rain, impervious, acres, min_rv, expected):
    assert water_quality_volume(rain, impervious, acres, min_rv) == pytest.approx(expected)


# --- composite CN ---------------------------------------------------------------------------


def frame(rows, geometries):
    return gpd.GeoDataFrame(rows, geometry=list(geometries), crs=CRS)


DA = box(X0, Y0, X0 + 400, Y0 + 200)


def test_composite_of_a_drainage_area_split_50_50_between_two_covers():
    drainage = frame({"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [0.5]}, [DA])
    soils = frame({"hsg": ["B"]}, [DA.buffer(50)])
    cover = frame(
        {"cover": ["woods_good", "impervious"]},
        [box(X0 - 10, Y0 - 10, X0 + 200, Y0 + 210), box(X0 + 200, Y0 - 10, X0 + 410, Y0 + 210)],
    )
    (result,), pieces = composite(drainage, soils, cover, "post", "undrained", 0.01)
    assert result.cn == pytest.approx((55 + 98) / 2)
    assert result.impervious_fraction == pytest.approx(0.5)
    assert sorted((a["cover"], round(a["sq_ft"])) for a in result.areas) == [
        ("impervious", round(40_000 * (0.3048 / (1200 / 3937)) ** -2)),
        ("woods_good", round(40_000 * (0.3048 / (1200 / 3937)) ** -2)),
    ]
    assert len(pieces) == 2 and set(pieces["cn"]) == {55, 98}


def test_composite_with_a_dual_group_and_an_unmapped_part():
    drainage = frame({"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [0.5]}, [DA])
    soils = frame({"hsg": ["C/D"]}, [box(X0, Y0, X0 + 380, Y0 + 200)])  # 5% has no soil
    cover = frame({"cover": ["meadow"]}, [DA])
    (result,), _ = composite(drainage, soils, cover, "pre", "undrained", 0.01)
    assert result.cn is None and "5.0%" in result.problems[0]
    (result,), _ = composite(drainage, soils, cover, "pre", "undrained", 0.10)
    assert result.cn == 78  # meadow, D (undrained)
    (result,), _ = composite(drainage, soils, cover, "pre", "drained", 0.10)
    assert result.cn == 71  # meadow, C


def test_raster_drainage_area_whose_edge_cuts_pixels(tmp_path):
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    # 10 x 10 ft pixels in the area CRS; the left half of the grid is NLCD 41 (woods), the
    # right half 24 (high intensity); a drainage area from x = 5 to 35, y = 3 to 18 cuts pixels.
    data = np.full((4, 4), 41, dtype="uint8")
    data[:, 2:] = 24
    path = tmp_path / "nlcd.tif"
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=4,
        height=4,
        count=1,
        dtype="uint8",
        crs=CRS,
        transform=from_origin(X0, Y0 + 40, 10, 10),
        nodata=0,
    ) as dst:
        dst.write(data, 1)
    area = box(X0 + 5, Y0 + 3, X0 + 35, Y0 + 18)
    drainage = frame({"name": ["DA-1"], "discharge_point": ["O"], "tc_hours": [0.2]}, [area])
    cover = land_cover_from_raster(path, drainage)
    by_cover = cover.assign(a=cover.geometry.area).groupby("cover")["a"].sum()
    assert by_cover["woods_good"] == pytest.approx(15 * 15)  # x 5..20
    assert by_cover["commercial"] == pytest.approx(15 * 15)  # x 20..35
    assert cover.geometry.area.sum() == pytest.approx(area.area)
    soils = frame({"hsg": ["C"]}, [area.buffer(5)])
    (result,), _ = composite(drainage, soils, cover, "pre", "undrained", 0.01)
    assert result.cn == pytest.approx((70 + 94) / 2)


def test_raster_nodata_and_water_make_the_area_unmapped(tmp_path):
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    data = np.array([[11, 41], [0, 41]], dtype="uint8")  # water, woods; nodata, woods
    path = tmp_path / "nlcd.tif"
    with rasterio.open(
        path,
        "w",
        driver="GTiff",
        width=2,
        height=2,
        count=1,
        dtype="uint8",
        crs=CRS,
        transform=from_origin(X0, Y0 + 20, 10, 10),
        nodata=0,
    ) as dst:
        dst.write(data, 1)
    area = box(X0, Y0, X0 + 20, Y0 + 20)
    drainage = frame({"name": ["DA-1"], "discharge_point": ["O"], "tc_hours": [0.2]}, [area])
    cover = land_cover_from_raster(path, drainage)
    assert sorted(cover["cover"]) == ["water", "woods_good", "woods_good"]
    (result,), _ = composite(drainage, frame({"hsg": ["B"]}, [area]), cover, "pre", "undrained", 0.01)
    assert result.cn is None
    assert any("25.0%" in p for p in result.problems)
    assert any("water" in p for p in result.problems)


# --- the site plan and the review -----------------------------------------------------------


def hydrology_site(
    tmp_path, *, post_cover="commercial", tc=0.3, claims=None, acres=2.0, hydrology=True, bad_cover=None
):
    """A commercial site of ``acres`` disturbed (Condition C) with one drainage area DA-1.

    DA-1 is a 400 x 200 ft rectangle on group B soil (west half) and C/D soil (east half),
    woods in good condition before and ``post_cover`` after.
    """
    layers = {
        "project": pd.DataFrame([PROJECT]).astype({"common_plan_acres": float}),
        "site_boundary": frame({"parcel_id": ["1-1-1"]}, [box(X0 - 2000, Y0 - 2000, X0 + 2000, Y0 + 2000)]),
        "disturbance": frame(
            {"phase": ["1"], "start_date": ["2027-04-01"], "stabilized_date": ["2027-06-01"]}, [square(acres)]
        ),
    }
    if hydrology:
        layers.update(
            {
                "drainage_area": frame(
                    {"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [tc]}, [DA]
                ),
                "soils": frame(
                    {"hsg": ["B", "C/D"]},
                    [box(X0 - 50, Y0 - 50, X0 + 200, Y0 + 250), box(X0 + 200, Y0 - 50, X0 + 450, Y0 + 250)],
                ),
                "land_cover_pre": frame({"cover": ["woods_good"]}, [DA.buffer(20)]),
                "land_cover_post": frame({"cover": [bad_cover or post_cover]}, [DA.buffer(20)]),
            }
        )
    if claims is not None:
        layers["hydrology_claims"] = pd.DataFrame(claims)
    path = tmp_path / "site.gpkg"
    write_geopackage(path, layers)
    return path


def findings_of(review, rule):
    return [f for f in review.findings if f.rule == rule]


def test_review_warns_where_the_post_peak_exceeds_the_pre_peak(tmp_path):
    review = review_paths(hydrology_site(tmp_path))
    rows = review.measurements["hydrology"]
    assert [r["storm"] for r in rows] == ["1-year", "10-year", "100-year"]
    ten = rows[1]
    # Hand figures: pre CN (55 + 77) / 2 = 66, post (92 + 95) / 2 = 93.5, 4.9 in of rain.
    assert ten["pre"]["cn"] == pytest.approx(66.0) and ten["post"]["cn"] == pytest.approx(93.5)
    assert ten["post"]["runoff_in"] == pytest.approx(runoff_depth(4.9, 93.5))
    sq_ft = DA.area * (1200 / 3937 / 0.3048) ** 2
    assert ten["post"]["volume_cf"] == pytest.approx(runoff_depth(4.9, 93.5) / 12 * sq_ft)
    warns = [f for f in findings_of(review, "hydrology_pre_post") if f.status == "warn"]
    assert len(warns) == 2 and {f.units for f in warns} == {"cfs"}
    assert all(f.value > f.limit for f in warns)
    assert "overbank" in warns[0].message and "extreme" in warns[1].message
    assert any(
        f.status == "needs_review" and "illustrative" in f.message
        for f in findings_of(review, "hydrology_pre_post")
    )
    wqv = review.measurements["water_quality_volume"][0]
    assert wqv["wqv_cf"] == pytest.approx(1.2 * (0.05 + 0.009 * 85) * sq_ft / 12)
    assert {n for n in review.charts if n.startswith("hydrology_")} == {
        "hydrology_1-year",
        "hydrology_10-year",
        "hydrology_100-year",
    }
    assert review.charts["hydrology_10-year"].png.startswith(b"\x89PNG")


def test_review_passes_where_the_post_peak_does_not_exceed(tmp_path):
    review = review_paths(hydrology_site(tmp_path, post_cover="woods_good"))
    statuses = {f.status for f in findings_of(review, "hydrology_pre_post")}
    assert "warn" not in statuses and "pass" in statuses


def test_claims_differing_beyond_the_tolerance_are_needs_review_with_both_numbers(tmp_path):
    first = review_paths(hydrology_site(tmp_path))
    ours = first.measurements["hydrology"][1]["post"]["peak_cfs"]
    claims = [
        {
            "drainage_area": "DA-1",
            "storm": "10-year",
            "pre_peak_cfs": None,
            "post_peak_cfs": round(ours * 1.5, 2),
            "pre_volume_cf": None,
            "post_volume_cf": None,
            "wqv_cf": None,
        },
        {
            "drainage_area": "DA-1",
            "storm": "100-year",
            "pre_peak_cfs": None,
            "post_peak_cfs": None,
            "pre_volume_cf": None,
            "post_volume_cf": first.measurements["hydrology"][2]["post"]["volume_cf"] * 1.02,
            "wqv_cf": None,
        },
    ]
    review = review_paths(hydrology_site(tmp_path, claims=claims))
    messages = [
        f
        for f in findings_of(review, "hydrology_pre_post")
        if "SWPPP states" in f.message and f.status == "needs_review"
    ]
    assert len(messages) == 1
    assert f"{ours * 1.5:,.2f}" in messages[0].message and f"{ours:,.2f}" in messages[0].message
    assert any(f.status == "pass" and "agree" in f.message for f in findings_of(review, "hydrology_pre_post"))


def test_claims_naming_an_unknown_storm_is_an_input_error(tmp_path):
    claims = [
        {
            "drainage_area": "DA-1",
            "storm": "25-year",
            "pre_peak_cfs": 1.0,
            "post_peak_cfs": None,
            "pre_volume_cf": None,
            "post_volume_cf": None,
            "wqv_cf": None,
        }
    ]
    with pytest.raises(InputError, match="25-year.*hydrology_claims|hydrology_claims.*25-year"):
        review_paths(hydrology_site(tmp_path, claims=claims))


def test_tc_outside_the_method_is_needs_review_in_the_review(tmp_path):
    review = review_paths(hydrology_site(tmp_path, tc=12.0))
    found = findings_of(review, "hydrology_pre_post")
    assert not [f for f in found if f.status == "warn"]
    assert sum("Tc 12 h is outside" in f.message for f in found) == 3


def test_unknown_cover_key_names_the_value_and_the_layer(tmp_path):
    with pytest.raises(InputError) as err:
        load_site_plan(hydrology_site(tmp_path, bad_cover="parking_lot"), PROFILE)
    assert "'parking_lot'" in str(err.value) and "land_cover_post" in str(err.value)
    assert "feature" in str(err.value)


def test_without_hydrology_layers_it_is_needs_review(tmp_path):
    review = review_paths(hydrology_site(tmp_path, hydrology=False))
    (finding,) = findings_of(review, "hydrology_pre_post")
    assert finding.status == "needs_review" and "drainage_area" in finding.message
    assert review.measurements["hydrology"] == []


def test_where_no_condition_applies_it_is_not_applicable():
    from analysis.checks.conditions import Condition
    from analysis.checks.hydrology import check_hydrology_pre_post

    none = {k: Condition(False, []) for k in "ABC"}
    (finding,) = check_hydrology_pre_post({}, none, PROFILE).findings
    assert finding.status == "not_applicable"


def test_analysis_without_rainfall_depths_says_needs_review(tmp_path):
    import dataclasses

    profile = dataclasses.replace(
        PROFILE,
        hydrology=dataclasses.replace(
            PROFILE.hydrology, storms=(DesignStorm("10-year", source="none yet"),), water_quality_rain_in=None
        ),
    )
    site = load_site_plan(hydrology_site(tmp_path), profile)
    result = analyse_hydrology(site.layers, profile)
    assert result.rows[0]["post"]["peak_cfs"] is None
    assert {f.status for f in result.findings} == {"needs_review"}


def test_demo_drainage_areas_by_hand(data_copy):
    """DA-1 (west of x = 370) is woods before: CN 55 on B soil (x < 300), 77 on C/D soil."""
    site = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    review = review_paths(data_copy("demo_site.gpkg"))
    parcel = site.layers["site_boundary"].geometry.iloc[0]
    west_b = parcel.intersection(box(X0 - 100, Y0 - 100, X0 + 300, Y0 + 700)).area
    west_d = parcel.intersection(box(X0 + 300, Y0 - 100, X0 + 370, Y0 + 700)).area
    rows = {(r["drainage_area"], r["storm"]): r for r in review.measurements["hydrology"]}
    assert rows["DA-1", "10-year"]["pre"]["cn"] == pytest.approx(
        (55 * west_b + 77 * west_d) / (west_b + west_d)
    )
    statuses = [f.status for f in findings_of(review, "hydrology_pre_post")]
    assert statuses.count("warn") == 4 and statuses.count("pass") == 1
    stated = [
        f
        for f in findings_of(review, "hydrology_pre_post")
        if "SWPPP states" in f.message and f.status == "needs_review"
    ]
    assert [f.features for f in stated] == [["hydrology_claims:2"], ["hydrology_claims:2"]]


def test_cli_takes_a_land_cover_raster_for_the_pre_condition(tmp_path, data_copy):
    rasterio = pytest.importorskip("rasterio")
    import json

    from rasterio.transform import from_origin

    from analysis.cli import main

    raster = tmp_path / "nlcd.tif"  # the parcel all pasture/hay (NLCD 81: pasture, good)
    with rasterio.open(
        raster,
        "w",
        driver="GTiff",
        width=90,
        height=80,
        count=1,
        dtype="uint8",
        crs=CRS,
        transform=from_origin(X0 - 50, Y0 + 700, 10, 10),
        nodata=0,
    ) as dst:
        dst.write(np.full((80, 90), 81, dtype="uint8"), 1)
    out = tmp_path / "r.json"
    assert main(
        [
            "review",
            str(data_copy("demo_site.gpkg")),
            "--land-cover-pre",
            str(raster),
            "--json",
            str(out),
            "--quiet",
        ]
    ) in (0, 1)
    rows = json.loads(out.read_text(encoding="utf-8"))["measurements"]["hydrology_cover_areas"]
    assert {r["cover"] for r in rows if r["condition"] == "pre"} == {"pasture_good"}


def test_report_shows_the_hydrology_table_and_embeds_the_charts(tmp_path):
    from analysis.report.html import render_html

    site = hydrology_site(tmp_path)
    review = review_paths(site)
    html = render_html(review, maps=False)
    assert "<h2>Hydrology (TR-55)</h2>" in html and "DA-1" in html
    hydrology = [c for name, c in review.charts.items() if name.startswith("hydrology_")]
    assert len(hydrology) == 3
    assert all(html.count(c.data_uri("png")) == 1 for c in hydrology)
    assert "img-src data:" in html and "illustrative" in html


def test_real_nlcd_raster_pieces_tile_the_drainage_area():
    """The real Coweeta NLCD extract (Albers, 30 m): a drainage area drawn in EPSG:2260 terms
    (reprojected, so its edges cut pixels at odd angles) is tiled exactly by its cover pieces."""
    pytest.importorskip("rasterio")
    from shapely import Polygon

    from tests.conftest import shared_path

    path = shared_path("data/nlcd_coweeta_land_cover.tif")
    albers = gpd.GeoSeries(
        [Polygon([(1130000, 1405000), (1134500, 1405300), (1135200, 1409100), (1131000, 1410200)])],
        crs=_raster_crs(path),
    )
    area = albers.to_crs(CRS).iloc[0]
    drainage = frame({"name": ["W-1"], "discharge_point": ["O"], "tc_hours": [1.0]}, [area])
    cover = land_cover_from_raster(path, drainage)
    assert cover.crs == drainage.crs
    # Within reprojection round-off: the pieces are cut in the raster CRS, measured in EPSG:2260.
    assert cover.geometry.area.sum() == pytest.approx(area.area, rel=1e-4)
    assert {"woods_good", "open_space_good"} <= set(cover["cover"])


def _raster_crs(path):
    import rasterio

    with rasterio.open(path) as src:
        return src.crs.to_wkt()


def test_overlapping_land_cover_is_named_not_counted_twice():
    drainage = frame({"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [0.5]}, [DA])
    soils = frame({"hsg": ["B"]}, [DA])
    cover = frame({"cover": ["meadow", "impervious"]}, [DA, box(X0, Y0, X0 + 100, Y0 + 200)])
    (result,), _ = composite(drainage, soils, cover, "post", "undrained", 0.01)
    assert result.cn is None and "overlap" in result.problems[0] and "25.0%" in result.problems[0]
