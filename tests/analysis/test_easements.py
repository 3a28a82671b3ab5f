"""easement_coverage: SMPs inside maintenance easements, recorded, reaching a right-of-way."""

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from pyproj import CRS
from shapely import MultiPolygon, Point, box

from analysis.checks.easements import (
    check_easement_coverage,
    connected_components,
    recorded_flags,
    smp_coverage,
)
from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.review import review_site
from analysis.siteplan.plan import SitePlan, load_site_plan
from tests.analysis.conftest import X0, Y0, square

PROFILE = load_profile()
AREA_CRS = "EPSG:2260"
# US survey feet (EPSG:2260) to international feet, and square feet
FT = (1200 / 3937) / 0.3048
SQ_FT = FT**2


def rect(x1, y1, x2, y2):
    """A rectangle in feet east/north of the village origin, in EPSG:2260."""
    return box(X0 + x1, Y0 + y1, X0 + x2, Y0 + y2)


def pt(x, y):
    return Point(X0 + x, Y0 + y)


def frame(fields, geometries, crs=AREA_CRS):
    return gpd.GeoDataFrame(
        fields, geometry=list(geometries), crs=crs, index=pd.RangeIndex(1, len(geometries) + 1, name="fid")
    )


def smp_frame(geometries, ids=None, crs=AREA_CRS):
    ids = ids or [f"S-{k + 1}" for k in range(len(geometries))]
    return frame({"smp_id": ids, "practice": ["bioretention"] * len(geometries)}, geometries, crs)


def easement_frame(geometries, recorded=None, crs=AREA_CRS):
    recorded = [1] * len(geometries) if recorded is None else recorded
    return frame(
        {
            "easement_id": [f"E-{k + 1}" for k in range(len(geometries))],
            "recorded": recorded,
            "instrument": ["Liber 1 Page 1"] * len(geometries),
        },
        geometries,
        crs,
    )


def row_frame(geometries, crs=AREA_CRS):
    return frame({"name": [f"Road {k + 1}" for k in range(len(geometries))]}, geometries, crs)


ROAD = rect(-500, -60, 1500, 0)  # a right-of-way along y = 0


def site(smps=None, easements=None, rows=(ROAD,), recorded=None, smp_ids=None):
    """A SitePlan (already in the area CRS) with the given SMPs, easements and right-of-way."""
    layers = {}
    if smps is not None:
        layers["smp"] = smp_frame(smps, smp_ids)
    if easements is not None:
        layers["easement"] = easement_frame(easements, recorded)
    if rows is not None:
        layers["public_row"] = row_frame(rows)
    return SitePlan(
        path="test.gpkg", area_crs=CRS(AREA_CRS), input_crs=AREA_CRS, project={"name": "Test"}, layers=layers
    )


def check(plan):
    findings, uncovered = check_easement_coverage(plan, PROFILE)
    return findings, uncovered


def of(findings, status):
    return [f for f in findings if f.status == status]


# --- coverage -----------------------------------------------------------------------------

# (case, SMPs, easements, uncovered US sq ft per SMP, failing SMP labels)
COVERAGE_CASES = [
    ("edges on the easement's edges", [rect(0, 0, 50, 20)], [rect(0, 0, 50, 40)], [0.0], []),
    ("SMP equal to its easement", [rect(10, 0, 60, 40)], [rect(10, 0, 60, 40)], [0.0], []),
    (
        "split across two adjoining easements",
        [rect(40, 0, 60, 20)],
        [rect(0, 0, 50, 40), rect(50, 0, 100, 40)],
        [0.0],
        [],
    ),
    (
        "split across two overlapping easements",
        [rect(40, 0, 60, 20)],
        [rect(0, 0, 55, 40), rect(45, 0, 100, 40)],
        [0.0],
        [],
    ),
    # 100 x 100 ft: the tolerance is 0.1% of the SMP, 10 sq ft
    ("sliver just under 0.1%", [rect(0, 0, 100, 100)], [rect(0, 0, 99.91, 100)], [9.0], []),
    ("sliver just over 0.1%", [rect(0, 0, 100, 100)], [rect(0, 0, 99.89, 100)], [11.0], ["smp:S-1"]),
    # 20 x 20 ft: 0.1% is 0.4 sq ft, so the 1 sq ft floor governs
    ("sliver just under 1 sq ft", [rect(0, 0, 20, 20)], [rect(0, 0, 19.96, 20)], [0.8], []),
    ("sliver just over 1 sq ft", [rect(0, 0, 20, 20)], [rect(0, 0, 19.94, 20)], [1.2], ["smp:S-1"]),
    (
        "multipolygon with a part outside",
        [MultiPolygon([rect(0, 0, 20, 20), rect(300, 0, 320, 10)])],
        [rect(0, 0, 100, 40)],
        [200.0],
        ["smp:S-1"],
    ),
    (
        "two SMPs, one outside",
        [rect(0, 0, 20, 20), rect(200, 0, 230, 10)],
        [rect(0, 0, 100, 40)],
        [0.0, 300.0],
        ["smp:S-2"],
    ),
]


@pytest.mark.parametrize(
    "case, smps, easements, uncovered_us, failing", COVERAGE_CASES, ids=[c[0] for c in COVERAGE_CASES]
)
def test_coverage(case, smps, easements, uncovered_us, failing):
    findings, uncovered = check(site(smps, easements))
    expected = [a * SQ_FT for a in uncovered_us]
    assert list(uncovered.values()) == pytest.approx(expected, abs=1e-6)
    fails = of(findings, "fail")
    assert [f.features for f in fails] == [[label] for label in failing]
    for f in fails:
        assert f.value == pytest.approx(uncovered[f.features[0][4:]], abs=1e-9)
        assert f.units == "sq ft" and f.value > f.limit
        assert f.message.startswith(f"SMP {f.features[0][4:]} has ")
        assert shapely.area(f.geometry) * SQ_FT == pytest.approx(f.value, abs=1e-6)
    coverage_pass = [f for f in of(findings, "pass") if f.units == "sq ft"]
    assert bool(coverage_pass) == (not failing)


def test_multipolygon_failure_shows_only_the_part_outside():
    outside = rect(300, 0, 320, 10)
    findings, _ = check(site([MultiPolygon([rect(0, 0, 20, 20), outside])], [rect(0, 0, 100, 40)]))
    [fail] = of(findings, "fail")
    assert shapely.equals(shapely.normalize(fail.geometry), shapely.normalize(outside))


@pytest.mark.parametrize(
    "point, status, distance_ft",
    [
        ((200, 10), "fail", 100.0),  # outside, 100 ft east of the easement
        ((50, 10), "pass", None),  # inside
        ((100, 10), "pass", None),  # on the edge
        ((100.3, 10), "pass", None),  # 0.3 ft out: within the 0.5 ft snapping tolerance
        ((101, 10), "fail", 1.0),
    ],
)
def test_point_smp(point, status, distance_ft):
    findings, uncovered = check(site([pt(*point)], [rect(0, 0, 100, 40)]))
    assert uncovered == {"S-1": 0.0}
    coverage = [f for f in findings if f.status in ("pass", "fail") and f.units == "sq ft"]
    assert [f.status for f in coverage] == [status]
    if status == "fail":
        [fail] = coverage
        assert fail.value == 0.0 and fail.features == ["smp:S-1"]
        assert f"{distance_ft * FT:,.1f} ft from the nearest (E-1)" in fail.message
        assert "no area" in fail.message
        assert shapely.equals(fail.geometry, pt(*point))


def test_smp_without_id_is_named_by_its_row():
    findings, uncovered = check(
        site([rect(0, 0, 20, 20), rect(200, 0, 230, 10)], [rect(0, 0, 100, 40)], smp_ids=["S-1", None])
    )
    assert uncovered == pytest.approx({"S-1": 0.0, "#2": 300.0 * SQ_FT})
    [fail] = of(findings, "fail")
    assert fail.features == ["smp:#2"] and fail.message.startswith("SMP #2 has 300 sq ft")


def test_repeated_smp_ids_keep_every_smp_in_the_measurement():
    _, uncovered = check(
        site([rect(0, 0, 20, 20), rect(200, 0, 230, 10)], [rect(0, 0, 100, 40)], smp_ids=["S-1", "S-1"])
    )
    assert uncovered == pytest.approx({"S-1#1": 0.0, "S-1#2": 300.0 * SQ_FT})


def test_no_easements_fails_every_smp_with_its_whole_area():
    findings, uncovered = check(site([rect(0, 0, 20, 20), pt(50, 50)], easements=None))
    assert uncovered == pytest.approx({"S-1": 400 * SQ_FT, "S-2": 0.0})
    assert [f.features for f in of(findings, "fail")] == [["smp:S-1"], ["smp:S-2"]]
    assert all("no easements" in f.message for f in of(findings, "fail"))
    assert not [f for f in findings if f.units == "ft"]  # no access part without easements


def test_no_smp_is_not_applicable():
    findings, uncovered = check(site(None, [rect(0, 0, 100, 40)]))
    assert [f.status for f in findings] == ["not_applicable"] and uncovered == {}


def test_coverage_matches_a_plain_per_smp_difference():
    """Random rectangles: the vectorised measure equals SMP minus the union of all easements."""
    rng = np.random.default_rng(5)

    def rectangles(count, size):
        corner = rng.uniform(0, 1000, (count, 2))
        extent = rng.uniform(5, size, (count, 2))
        return [rect(x, y, x + w, y + h) for (x, y), (w, h) in zip(corner, extent)]

    smps, easements = rectangles(60, 60), rectangles(80, 150)
    coverage = smp_coverage(
        np.array(smps, dtype=object),
        np.array(easements, dtype=object),
        np.ones(80, dtype=bool),
        AREA_CRS,
        PROFILE,
    )
    union = shapely.union_all(easements)
    expected = [shapely.area(shapely.difference(s, union)) * SQ_FT for s in smps]
    assert coverage.uncovered_sq_ft == pytest.approx(expected, abs=1e-6)
    assert 0 < coverage.failing.sum() < 60  # the sample has both kinds


# --- recorded -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "recorded, warned_sq_ft_us, named",
    [
        ([1, 1], None, None),
        ([0, 0], 400.0, ["easement:E-1", "easement:E-2"]),  # held only by unrecorded ones
        ([1, 0], 200.0, ["easement:E-2"]),  # the half in E-2 relies on an unrecorded easement
        ([None, 1], 200.0, ["easement:E-1"]),  # empty means not yet recorded
    ],
)
def test_unrecorded_easements_are_a_warning_naming_them(recorded, warned_sq_ft_us, named):
    plan = site([rect(40, 0, 60, 20)], [rect(0, 0, 50, 40), rect(50, 0, 100, 40)], recorded=recorded)
    findings, _ = check(plan)
    # recorded with the County Clerk after approval (Maintenance B): info, due after approval
    warns = [f for f in of(findings, "info") if "not yet recorded" in f.message]
    assert all(f.due == "after_approval" for f in warns)
    if warned_sq_ft_us is None:
        assert warns == []
        return
    [warn] = warns
    assert warn.features == ["smp:S-1", *named]
    assert warn.value == pytest.approx(warned_sq_ft_us * SQ_FT)
    assert all(name[len("easement:") :] in warn.message for name in named)
    assert not of(findings, "fail")


def test_a_recorded_easement_over_an_unrecorded_one_needs_no_warning():
    findings, _ = check(
        site([rect(40, 0, 60, 20)], [rect(0, 0, 100, 40), rect(30, 0, 70, 40)], recorded=[1, 0])
    )
    assert not [f for f in findings if "not yet recorded" in f.message]


@pytest.mark.parametrize("value", ["yes", 2])
def test_recorded_must_be_0_or_1(value):
    plan = site([rect(0, 0, 10, 10)], [rect(0, 0, 50, 40), rect(60, 0, 80, 40)], recorded=[1, value])
    with pytest.raises(InputError, match="feature 2, field 'recorded'"):
        recorded_flags(plan)


# --- access -------------------------------------------------------------------------------

# (case, easements, right-of-way polygons or None, status of the access part, gap in US ft)
E_SMP = rect(0, 100, 100, 200)  # holds the SMP, 100 ft north of the road
ACCESS_CASES = [
    ("easement touching the right-of-way", [rect(0, 0, 100, 200)], [ROAD], "pass", 0.0),
    (
        "chain through a third easement",
        [E_SMP, rect(40, 60, 60, 100), rect(30, 0, 70, 60)],
        [ROAD],
        "pass",
        0.0,
    ),
    (
        "chain of overlapping easements",
        [E_SMP, rect(40, 50, 60, 110), rect(30, 0, 70, 55)],
        [ROAD],
        "pass",
        0.0,
    ),
    ("2 ft short of the right-of-way", [rect(0, 2, 100, 200)], [ROAD], "warn", 2.0),
    ("chain 2 ft short", [E_SMP, rect(40, 60, 60, 100), rect(30, 2, 70, 60)], [ROAD], "warn", 2.0),
    # the gap is the SMP's own connected group's distance to the road, not the broken link's
    (
        "a link 3 ft apart breaks the chain",
        [E_SMP, rect(40, 60, 60, 97), rect(30, 0, 70, 60)],
        [ROAD],
        "warn",
        100.0,
    ),
    ("within the snapping tolerance", [rect(0, 0.3, 100, 200)], [ROAD], "pass", 0.0),
    ("nearest of two roads", [rect(0, 5, 100, 200)], [ROAD, rect(-500, 210, 1500, 260)], "warn", 5.0),
    ("no public_row layer", [rect(0, 0, 100, 200)], None, "needs_review", None),
]


@pytest.mark.parametrize(
    "case, easements, rows, status, gap_us_ft", ACCESS_CASES, ids=[c[0] for c in ACCESS_CASES]
)
def test_access(case, easements, rows, status, gap_us_ft):
    findings, _ = check(site([rect(20, 120, 80, 180)], easements, rows=rows))
    access = [f for f in findings if f.units == "ft" or f.status == "needs_review"]
    assert [f.status for f in access] == [status]
    [finding] = access
    if status == "warn":
        assert finding.value == pytest.approx(gap_us_ft * FT, abs=1e-6)
        assert f"stop {gap_us_ft * FT:,.1f} ft short" in finding.message
        assert finding.features[:2] == ["smp:S-1", "easement:E-1"]
        assert shapely.equals(finding.geometry, rect(20, 120, 80, 180))
    if status == "needs_review":
        assert "public_row" in finding.message


def test_only_the_unreachable_smp_is_warned():
    findings, _ = check(
        site([rect(10, 10, 20, 20), rect(510, 10, 520, 20)], [rect(0, 0, 100, 100), rect(500, 4, 600, 100)])
    )
    [warn] = [f for f in findings if f.units == "ft"]
    assert warn.status == "warn" and warn.features == ["smp:S-2", "easement:E-2"]
    assert warn.value == pytest.approx(4.0 * FT)


@pytest.mark.parametrize("seed", range(6))
def test_connected_components_match_a_breadth_first_search(seed):
    rng = np.random.default_rng(seed)
    count = 40
    first, second = rng.integers(0, count, (2, int(rng.integers(0, 60))))
    labels = connected_components(count, first, second)
    neighbours = {k: set() for k in range(count)}
    for a, b in zip(first, second):
        neighbours[a].add(b)
        neighbours[b].add(a)
    for start in range(count):
        seen, todo = {start}, [start]
        while todo:
            for nxt in neighbours[todo.pop()] - seen:
                seen.add(nxt)
                todo.append(nxt)
        assert labels[start] == min(seen)


# --- through the loader and the review ----------------------------------------------------


def test_easements_and_smps_in_different_crss(make_site):
    smps = smp_frame([rect(0, 100, 100, 140), rect(300, 100, 330, 140)]).to_crs("EPSG:26918")
    easements = easement_frame([rect(0, 90, 96, 150), rect(296, 0, 340, 150)], recorded=[1, 0]).to_crs(
        "EPSG:4326"
    )
    rows = row_frame([ROAD])  # stays in EPSG:2260
    path = make_site([square(1.0)], layers={"smp": smps, "easement": easements, "public_row": rows})
    findings, uncovered = check(load_site_plan(path, PROFILE))
    # S-1: a 4 x 40 ft strip east of E-1; S-2 inside E-2 (unrecorded), which touches the road
    assert uncovered["S-1"] == pytest.approx(160.0 * SQ_FT, rel=1e-6)
    assert uncovered["S-2"] == pytest.approx(0.0, abs=1e-3)
    assert [f.features for f in of(findings, "fail")] == [["smp:S-1"]]
    warns = of(findings, "warn")
    assert [f.features for f in of(findings, "info") if "not yet recorded" in f.message] == [
        ["smp:S-2", "easement:E-2"]
    ]
    [unreachable] = [f for f in warns if f.units == "ft"]
    assert unreachable.features == ["smp:S-1", "easement:E-1"]
    assert unreachable.value == pytest.approx(90.0 * FT, rel=1e-6)


def test_demo_review_fails_br2_and_warns_e2_and_sp1(data_copy):
    plan = load_site_plan(data_copy("demo_site.gpkg"), PROFILE)
    review = review_site(plan, PROFILE)
    easement = [f for f in review.findings if f.rule == "easement_coverage"]
    smp = plan.layer("smp").set_index("smp_id").geometry
    union = shapely.union_all(np.asarray(plan.layer("easement").geometry.values))
    br2 = shapely.area(shapely.difference(smp["BR-2"], union)) * SQ_FT
    assert review.measurements["uncovered_smp_sq_ft"] == pytest.approx(
        {"BR-1": 0.0, "BR-2": br2, "SP-1": 0.0}
    )
    assert br2 == pytest.approx(312.0 * SQ_FT, rel=1e-9)
    [fail] = of(easement, "fail")
    assert fail.features == ["smp:BR-2"] and fail.message.startswith(
        "SMP BR-2 has 312 sq ft outside any maintenance easement"
    )
    warned = sorted(tuple(f.features) for f in of(easement, "warn"))
    assert warned == [("smp:SP-1", "easement:E-3")]
    [pending] = of(easement, "info")  # E-2 is recorded with the County Clerk after approval
    assert pending.features == ["smp:BR-2", "easement:E-2"] and pending.due == "after_approval"
    [sp1] = [f for f in easement if f.features[0] == "smp:SP-1"]
    assert sp1.value == pytest.approx(2.0 * FT, rel=1e-6)
    assert review.exit_status == 1


def test_report_lists_each_smp_s_uncovered_area_escaped(make_site):
    from analysis.report.html import render_html

    smps = smp_frame([rect(0, 100, 100, 140), rect(300, 100, 330, 140)], ids=["<b>S-1</b>", "S-2"])
    path = make_site(
        [square(1.0)],
        layers={"smp": smps, "easement": easement_frame([rect(0, 90, 96, 150), rect(296, 0, 340, 150)])},
    )
    html = render_html(review_site(load_site_plan(path, PROFILE), PROFILE), maps=False)
    section = html.split("SMP area outside maintenance easements", 1)[1]
    assert "&lt;b&gt;S-1&lt;/b&gt;" in section and "<b>S-1</b>" not in html
    assert f"{160 * SQ_FT:,.1f} sq ft" in section


@pytest.mark.parametrize(
    "variant, br2_us_sq_ft, statuses",
    [
        ("variants/crs_4326.gpkg", 312.0, ["fail", "info", "warn"]),
        ("variants/crs_utm18n.gpkg", 312.0, ["fail", "info", "warn"]),
        ("variants/mixed_case_names.gpkg", 312.0, ["fail", "info", "warn"]),
        ("variants/smp_points.gpkg", 0.0, ["info", "pass", "warn"]),  # every point in an easement
    ],
)
def test_shipped_variants(variant, br2_us_sq_ft, statuses, data_copy):
    findings, uncovered = check(load_site_plan(data_copy(variant), PROFILE))
    # reprojected there and back: within a thousandth of a square foot
    assert uncovered == pytest.approx({"BR-1": 0.0, "BR-2": br2_us_sq_ft * SQ_FT, "SP-1": 0.0}, abs=1e-3)
    assert sorted(f.status for f in findings) == statuses
    [sp1] = [f for f in findings if f.units == "ft"]
    assert sp1.features == ["smp:SP-1", "easement:E-3"]
    assert sp1.value == pytest.approx(2.0 * FT, abs=1e-6)
