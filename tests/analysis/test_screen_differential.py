"""Differential tests: ``swppp screen`` against ``swppp review``, site by site, on adversarial
reference layers; and the GeoPackage screen against the PostGIS screen.

Each case is a named generator (a fixed seed) of small reference layers built to meet one
kind of awkward data (invalid polygons the reader repairs, multipart and holed polygons,
nested TMDL watersheds, odd ``drains_to``, odd categories, odd wetland attributes, sites on
edges, a reference in another CRS), and of random sites over them plus sites placed on the
awkward parts. For every site the screen's row must be the review's answer, read from what
the review's JSON is made of and the checks' typed results, never from their words: Condition
A's status, the listed waters and TMDL watersheds that trigger it and the pollutants of
concern, ``wetland_acres`` and ``adjacent_area_acres`` (to 1e-9), the wetland status and the
wetlands met. The engine's own properties (one site as many, local as PostGIS) are
``test_judge.py``'s.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import geopandas as gpd
import numpy as np
import pandas as pd
import pytest
import shapely
from shapely import affinity, box

from analysis.checks import condition_a, wetlands
from analysis.checks.context import ReviewContext
from analysis.crs import crs_of
from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.progress import SILENT
from analysis.reference.read import open_reference
from analysis.screen.screen import APPLIES, DOES_NOT_APPLY, NOT_DECIDED, screen_sites
from analysis.screen.sites import read_sites
from analysis.siteplan.plan import SitePlan
from tests.analysis.conftest import REFERENCE_FIELDS

X0, Y0 = 600_000.0, 900_000.0  # EPSG:2260 (US survey feet), clear of the demo reference
CELL = 2000.0  # a catchment of the grid: CELL feet square
LAYERS = ("wetlands", "impaired_waters", "tmdl_watersheds", "catchments")


# --- building cases ---------------------------------------------------------------------------


@dataclass
class Case:
    """Reference layers (layer -> [(geometry in EPSG:2260, {field: value})]), the CRS they are
    written in, and the sites (EPSG:2260 polygons)."""

    layers: dict
    sites: list
    crs: str = "EPSG:2260"
    profile_changes: dict = field(default_factory=dict)
    every: int = 1  # every how many sites is reviewed (all, but in the case of many sites)
    area_crs: str = ""  # the profile's area CRS where another is wanted


def cell(i, j, inset=0.0):
    return box(
        X0 + i * CELL + inset, Y0 + j * CELL + inset, X0 + (i + 1) * CELL - inset, Y0 + (j + 1) * CELL - inset
    )


def rect(x, y, w, h, angle=0.0):
    shape = box(X0 + x, Y0 + y, X0 + x + w, Y0 + y + h)
    return affinity.rotate(shape, angle) if angle else shape


def bowtie(x, y, w, h):
    """A figure-eight ring: invalid (the reader repairs it into two triangles)."""
    return shapely.Polygon(
        [(X0 + x, Y0 + y), (X0 + x + w, Y0 + y + h), (X0 + x + w, Y0 + y), (X0 + x, Y0 + y + h)]
    )


def self_touching(x, y, w, h):
    """A ring touching itself at one point (an inverted hole): invalid, repaired."""
    return shapely.Polygon(
        [
            (X0 + x, Y0 + y),
            (X0 + x + w, Y0 + y),
            (X0 + x + w, Y0 + y + h),
            (X0 + x + w / 2, Y0 + y + h),
            (X0 + x + 0.7 * w, Y0 + y + h / 2),
            (X0 + x + 0.3 * w, Y0 + y + h / 2),
            (X0 + x + w / 2, Y0 + y + h),
            (X0 + x, Y0 + y + h),
        ]
    )


def grid_catchments(n=3, drains=None):
    """An n x n grid of catchments C<i><j>, each draining to the water given (default W<i><j>)."""
    drains = drains or {}
    return [
        (
            cell(i, j),
            {
                "catchment_id": f"C{i}{j}",
                "name": f"Catchment {i}{j}",
                "drains_to": drains.get(f"C{i}{j}", f"NY-W{i}{j}"),
            },
        )
        for i in range(n)
        for j in range(n)
    ]


def water(wid, category="5", pollutants="Phosphorus", k=0):
    line = shapely.LineString([(X0 - 3000 - 100 * k, Y0), (X0 - 3000 - 100 * k, Y0 + 500)])
    return (
        line,
        {
            "waterbody_id": wid,
            "name": f"Water {wid}",
            "pollutants": pollutants,
            "listing_cycle": "2022",
            "category": category,
        },
    )


def listed_grid(n=3, rng=None):
    """A water per grid catchment, of mixed categories and pollutants."""
    rows = []
    for k, (i, j) in enumerate((i, j) for i in range(n) for j in range(n)):
        category = (
            ["5", "4a", "5", "4b", None, "5"][k % 6]
            if rng is None
            else rng.choice(["5", "4a", "4b", "5A", None])
        )
        if (i + j) % 4 != 3:  # some waters on no list
            rows.append(water(f"NY-W{i}{j}", category, k=k))
    return rows


def shed(geometry, wid, source=1, pollutants="Phosphorus", tmdl="T1"):
    return (
        geometry,
        {
            "watershed_id": wid,
            "name": f"Watershed {wid}",
            "pollutants": pollutants,
            "tmdl_id": tmdl,
            "stormwater_source": source,
        },
    )


def wetland(geometry, wid, regulated=1, adjacent=None):
    return (
        geometry,
        {
            "wetland_id": wid,
            "source": "test",
            "wetland_class": "PFO",
            "regulated": regulated,
            "adjacent_area_ft": adjacent,
        },
    )


def random_sites(rng, count, extent=3 * CELL, margin=400.0):
    """``count`` rectangles of 0.2 to 10 acres, a third turned, over the extent and beyond."""
    out = []
    for k in range(count):
        area = rng.uniform(0.2, 10.0) * 43560.0
        ratio = rng.uniform(0.3, 3.0)
        w, h = np.sqrt(area * ratio), np.sqrt(area / ratio)
        x, y = rng.uniform(-margin, extent + margin - w), rng.uniform(-margin, extent + margin - h)
        out.append(rect(x, y, w, h, rng.uniform(0, 90) if k % 3 == 0 else 0.0))
    return out


def scattered_wetlands(rng, count, extent=3 * CELL):
    out = []
    for k in range(count):
        x, y = rng.uniform(0, extent - 300, 2)
        w, h = rng.uniform(60, 500, 2)
        out.append(
            wetland(
                rect(x, y, w, h),
                f"WL{k}",
                int(rng.integers(0, 2)),
                float(rng.choice([50.0, 100.0, 150.0])) if k % 2 else None,
            )
        )
    return out


# --- the generators: one per kind of awkward data ---------------------------------------------


def invalid_polygons(seed=101) -> Case:
    """Bow-ties and self-touching rings in every polygon layer (the reader repairs them), and
    sites drawn as bow-ties (read_sites repairs them)."""
    rng = np.random.default_rng(seed)
    catchments = grid_catchments()
    catchments[0] = (bowtie(0, 0, CELL, CELL), catchments[0][1])
    catchments[4] = (self_touching(CELL, CELL, CELL, CELL), catchments[4][1])
    sheds = [
        shed(bowtie(500, 500, 3000, 3000), "TW-B"),
        shed(self_touching(3000, 0, 2500, 2500), "TW-S", source=None),
        shed(self_touching(0, 3500, 2500, 2000), "TW-N", source=0),
    ]
    wetlands = [
        wetland(bowtie(200 + 900 * k, 300 + 500 * (k % 3), 400, 300), f"WB{k}", k % 2) for k in range(6)
    ]
    wetlands += [wetland(self_touching(300 + 1000 * k, 4200, 600, 500), f"WS{k}", 1, 80.0) for k in range(4)]
    # A multipolygon of overlapping parts, a hole outside its shell, a spike, a polygon of
    # no area (repaired to nothing), and a catchment draining into that one.
    overlapping = shapely.MultiPolygon([rect(3200, 3200, 900, 900), rect(3700, 3700, 900, 900)])
    outside = shapely.Polygon(
        rect(4300, 200, 600, 600).exterior.coords, [rect(5000, 300, 200, 200).exterior.coords]
    )
    spike = shapely.Polygon(
        [
            (X0 + 200, Y0 + 5000),
            (X0 + 900, Y0 + 5000),
            (X0 + 900, Y0 + 5300),
            (X0 + 1500, Y0 + 5300),
            (X0 + 900, Y0 + 5300),
            (X0 + 900, Y0 + 5600),
            (X0 + 200, Y0 + 5600),
        ]
    )
    flat = shapely.Polygon([(X0 + 2500, Y0 + 5000), (X0 + 3500, Y0 + 5000), (X0 + 3000, Y0 + 5000)])
    sheds += [
        shed(overlapping, "TW-OV"),
        shed(outside, "TW-OUT"),
        shed(spike, "TW-SPIKE"),
        shed(flat, "TW-FLAT"),
    ]
    wetlands += [
        wetland(overlapping, "WOV", 1, 60.0),
        wetland(outside, "WOUT", 1),
        wetland(spike, "WSPIKE", 0),
        wetland(flat, "WFLAT", 1),
    ]
    catchments += [
        (flat, {"catchment_id": "CFLAT", "name": None, "drains_to": "NY-W00"}),
        (spike, {"catchment_id": "CSPIKE", "name": None, "drains_to": "CFLAT"}),
        (rect(6200, 0, 1500, 1500), {"catchment_id": "CEAST", "name": None, "drains_to": "CSPIKE; CFLAT"}),
    ]
    sites = random_sites(rng, 30)
    sites += [
        rect(3500, 3500, 400, 400),
        rect(4400, 300, 800, 300),
        rect(800, 5100, 900, 400),
        rect(2600, 4900, 600, 200),
        rect(6300, 100, 300, 300),
    ]
    sites += [bowtie(100 + 1100 * k, 200 + 700 * k, 700, 600) for k in range(4)]
    sites += [self_touching(900, 900, 1000, 900)]
    return Case(
        {
            "catchments": catchments,
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": wetlands,
        },
        sites,
    )


def multipart(seed=202) -> Case:
    """Multipolygon catchments, TMDL watersheds, wetlands and sites."""
    rng = np.random.default_rng(seed)
    catchments = grid_catchments()
    catchments[1] = (shapely.MultiPolygon([cell(0, 1), rect(-1800, 2500, 1200, 1200)]), catchments[1][1])
    two = shapely.MultiPolygon([rect(-1500, 0, 1000, 1500), rect(6200, 4000, 900, 1500)])
    catchments.append((two, {"catchment_id": "CM", "name": "Two parts", "drains_to": "NY-W00"}))
    sheds = [
        shed(shapely.MultiPolygon([rect(0, 0, 1500, 1500), rect(3000, 3000, 1500, 1500)]), "TW-M"),
        shed(
            shapely.MultiPolygon([rect(4200, 200, 1000, 800), rect(-1400, 100, 600, 600)]),
            "TW-M2",
            pollutants="Silt/Sediment",
        ),
    ]
    wetlands = [
        wetland(
            shapely.MultiPolygon([rect(300 + 1300 * k, 600, 250, 200), rect(600 + 1300 * k, 2600, 300, 150)]),
            f"WM{k}",
            k % 2,
            [None, 60.0, 120.0][k % 3],
        )
        for k in range(5)
    ]
    wetlands += scattered_wetlands(rng, 6)
    sites = random_sites(rng, 26, margin=1800.0)
    for _ in range(8):
        a, b = random_sites(rng, 2, margin=1800.0)
        sites.append(shapely.MultiPolygon([a, b]) if not a.intersects(b) else a.union(b))
    return Case(
        {
            "catchments": catchments,
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": wetlands,
        },
        sites,
    )


def holes(seed=303) -> Case:
    """Sites with holes (round a wetland, a watershed, a catchment's corner), and a catchment
    and a watershed with holes."""
    rng = np.random.default_rng(seed)
    catchments = grid_catchments()
    catchments[4] = (cell(1, 1).difference(cell(1, 1, inset=700)), catchments[4][1])
    sheds = [
        shed(rect(0, 0, 4000, 4000).difference(rect(1500, 1500, 1000, 1000)), "TW-H"),
        shed(rect(1700, 1700, 600, 600), "TW-LAKE", source=None),
    ]
    wetlands = [
        wetland(
            rect(400 + 1200 * k, 450 + 1000 * (k % 4), 200 + 40 * k, 180),
            f"WH{k}",
            int(k % 3 != 0),
            [None, 100.0, 40.0][k % 3],
        )
        for k in range(5)
    ]
    # A ring of wetland round an upland island, regulated and not, a site on each island.
    for k, regulated in enumerate((1, 0)):
        ring = rect(300 + 3000 * k, 5000, 800, 800)
        wetlands.append(wetland(ring.difference(ring.buffer(-250)), f"WR{k}", regulated))
    sites = []  # a donut round each wetland, some holes holding its zone too
    for k, (g, _) in enumerate(wetlands[:5]):
        inner = g.buffer([0, 30, 120, 5, 300][k], join_style="mitre")
        sites.append(inner.buffer(250, join_style="mitre").difference(inner))
    sites.append(rect(1200, 1200, 1600, 1600).difference(rect(1600, 1600, 800, 800)))
    sites.append(rect(1200, 1200, 1600, 1600).difference(rect(1500, 1500, 1000, 1000)))
    sites.append(rect(3700, 3700, 600, 600).difference(rect(3800, 3800, 400, 400)))
    sites += [rect(600 + 3000 * k, 5300, 200, 200) for k in range(2)]
    for s in random_sites(rng, 24):
        hole = s.centroid.buffer(np.sqrt(s.area) / 4)
        sites.append(s.difference(hole) if hole.within(s) else s)
    return Case(
        {
            "catchments": catchments,
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": wetlands,
        },
        sites,
    )


def nested_tmdl(seed=404) -> Case:
    """TMDL watersheds nested and overlapping: one id with two rows (two TMDLs, stormwater a
    source of one), a lake's inside a basin's, overlapping ones of unknown source, some met
    only through a catchment downstream."""
    rng = np.random.default_rng(seed)
    drains = {"C00": "C01", "C01": "C02", "C10": "C11;NY-W10", "C20": "C21", "C21": "C22"}
    sheds = [
        shed(rect(0, 0, 6000, 6000), "TW-BASIN", source=0, pollutants="Pathogens"),
        shed(rect(0, 0, 6000, 6000), "TW-BASIN", source=1, tmdl="T2"),
        shed(rect(800, 800, 1500, 1500), "TW-LAKE", source=1, pollutants="Mercury"),
        shed(rect(2000, 2000, 2500, 2500), "TW-X", source=None),
        shed(rect(3000, 1000, 2500, 2500), "TW-Y", source=0),
        shed(rect(100, 4100, 1800, 1800), "TW-TOP", source=1),
        shed(rect(100, 4100, 1800, 1800), "TW-TOP", source=None, tmdl="T3"),
        shed(rect(4200, 4200, 1700, 1700), "TW-FAR", source=None),
        shed(rect(4200, 4200, 1700, 1700), "TW-FAR2", source=1),
    ]
    # A second grid beyond the basin, draining into it.
    catchments = grid_catchments(drains=drains)
    catchments += [
        (
            rect(6000 + 2000 * i, 2000 * j, 2000, 2000),
            {"catchment_id": f"D{i}{j}", "name": None, "drains_to": f"C2{j}" if i == 0 else f"D0{j}"},
        )
        for i in range(2)
        for j in range(3)
    ]
    sites = random_sites(rng, 34, extent=5 * CELL)
    return Case(
        {
            "catchments": catchments,
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": scattered_wetlands(rng, 4),
        },
        sites,
    )


def odd_drains_to(seed=505) -> Case:
    """``drains_to`` naming several waters, with spaces and case differences, unknown ids,
    cycles (A -> B -> A), itself, ids padded with spaces, a chain longer than the hops."""
    rng = np.random.default_rng(seed)
    drains = {
        "C00": " ny-w01 ; NY-W02;;",
        "C01": "C00; C02",
        "C02": "C01 ;NY-W22",
        "C10": "C10",
        "C11": " c12 ",
        "C12": "C13",
        "C20": "C21;C21; ny-nope ",
        "C21": "C22",
        "C22": None,
    }
    catchments = grid_catchments(drains=drains)
    # A chain C13 -> C14 -> C15 -> C16 -> C17 beyond the grid (longer than the 3 hops), ending
    # in a water; C13 also drains to a catchment id padded with spaces.
    for k in range(3, 8):
        catchments.append(
            (
                rect(-2000 - 1000 * (k - 3), 2000, 1000, 2000),
                {
                    "catchment_id": f"C1{k}" if k != 5 else " C15 ",
                    "name": None,
                    "drains_to": f"C1{k + 1}" if k < 7 else "NY-W22",
                },
            )
        )
    catchments.append(
        (rect(6000, 0, 2000, 2000), {"catchment_id": "C30", "name": None, "drains_to": "CNOWHERE; ny-w00"})
    )
    # A catchment without a shape (found by id, placed nowhere) and one with an empty shape.
    # (An id given to two catchments is refused, by the review and the screen alike:
    # tests/analysis/test_route_unique_ids.py.)
    catchments.append((None, {"catchment_id": "C31", "name": None, "drains_to": "NY-W22"}))
    catchments.append((shapely.Polygon(), {"catchment_id": "C32", "name": None, "drains_to": "NY-W22"}))
    catchments[2] = (catchments[2][0], {**catchments[2][1], "drains_to": "C31; ny-w02"})
    catchments[5] = (catchments[5][0], {**catchments[5][1], "drains_to": "C32;C12"})
    waters = listed_grid() + [
        water(" ny-w01 ", "5", "Silt/Sediment", k=20),
        water("NY-W22", "5", "Nitrogen", k=21),
    ]
    sheds = [
        shed(rect(-4000, 2000, 1000, 2000), "TW-CHAIN"),
        shed(rect(4000, 4000, 2000, 2000), "TW-C22", source=None),
        shed(cell(2, 1, inset=300), "TW-C21"),
    ]
    sites = random_sites(rng, 30, extent=3 * CELL, margin=1500.0)
    sites += [rect(-2900 + 1000 * k, 2400, 600, 600) for k in range(-2, 3)]
    sites += [rect(6500, 4500, 500, 500), rect(4300, 300, 500, 500)]
    return Case(
        {
            "catchments": catchments,
            "impaired_waters": waters,
            "tmdl_watersheds": sheds,
            "wetlands": scattered_wetlands(rng, 3),
        },
        sites,
    )


def odd_categories(seed=606) -> Case:
    """``impaired_waters`` categories " 5 ", "5A", "4A", "4b", "3", "", null; null and empty
    pollutants; one water given twice (two rows, its id spelt two ways)."""
    rng = np.random.default_rng(seed)
    rows = [
        water("NY-W00", " 5 "),
        water("NY-W01", "5A", None),
        water("NY-W02", "4A"),
        water("NY-W10", None, None),
        water("NY-W11", "", "Phosphorus"),
        water("NY-W12", "3"),
        water("ny-w20 ", "4b"),
        water("NY-W20", "5", " ; "),
        water("NY-W21", "5", ""),
        water("NY-W22", "5-a", "Silt/Sediment; Phosphorus"),
        water(" NY-W22", "4a", "Pathogens"),
    ]
    sites = random_sites(rng, 36)
    return Case(
        {
            "catchments": grid_catchments(),
            "impaired_waters": rows,
            "tmdl_watersheds": [shed(rect(4000, 4000, 900, 900), "TW-C", source=0)],
            "wetlands": [],
        },
        sites,
    )


def odd_wetlands(seed=707) -> Case:
    """Wetlands regulated 0, 1 or null; adjacent_area_ft null, 0, negative, small and huge
    (wider than the search distance); overlapping wetlands and zones."""
    rng = np.random.default_rng(seed)
    wetlands = []
    regulated = [1, 0, None]
    adjacent = [None, 0.0, -50.0, 20.0, 100.0, 275.0, 5000.0, 1e7]
    for k in range(24):
        x, y = rng.uniform(0, 5500, 2)
        w, h = rng.uniform(50, 400, 2)
        wetlands.append(wetland(rect(x, y, w, h), f"WA{k}", regulated[k % 3], adjacent[k % len(adjacent)]))
    wetlands.append(wetland(rect(1000, 1000, 300, 300), "WO1", 1, 100.0))
    wetlands.append(wetland(rect(1150, 1150, 300, 300), "WO2", 1, 150.0))
    sites = random_sites(rng, 34)
    sites.append(rect(1100, 1000, 500, 200))
    return Case(
        {
            "catchments": grid_catchments(),
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": [],
            "wetlands": wetlands,
        },
        sites,
    )


def edges(seed=808) -> Case:
    """Sites exactly on a catchment's (and a watershed's) edge, touching only or sharing a
    sliver; a site that is a whole catchment; sites covering whole wetlands; a site touching
    a wetland's zone only."""
    rng = np.random.default_rng(seed)
    sheds = [shed(cell(1, 1), "TW-MID"), shed(cell(2, 0), "TW-CORNER", source=None)]
    wetlands = [
        wetland(rect(500, 4500, 200, 200), "WE1", 1, 100.0),
        wetland(rect(3000, 4500, 200, 200), "WE2", 0, None),
        wetland(rect(4600, 3000, 150, 150), "WE3", 1, None),
    ]
    sites = [
        rect(CELL - 300, 500, 300, 300),  # touches C10 along its edge
        rect(CELL, 500, 300, 300),  # the other side of it
        rect(CELL - 300, CELL - 300, 300, 300),  # touches three catchments at a corner
        rect(CELL - 0.01, 900, 300, 300),  # shares a 0.01-ft sliver
        rect(CELL - 0.5, 1300, 300, 300),  # shares a 0.5-ft sliver (150 sq ft)
        cell(1, 1),  # exactly a catchment and a watershed
        cell(1, 1, inset=-0.001),  # it, a hair larger
        rect(2 * CELL, -300, 300, 300),  # touches TW-CORNER at its corner
        rect(400, 4400, 400, 400),  # covers WE1
        rect(2900, 4400, 400, 400),  # covers WE2 (not regulated)
        rect(500, 4300, 200, 100),  # its edge on WE1's zone (100 ft)
        rect(500, 4350, 200, 50),  # inside WE1's zone, outside WE1
        rect(4600 + 150 + 100, 3000, 200, 150),  # touches WE3's zone
        rect(CELL - 1 / 300, 1700, 300, 300),  # shares 1 sq ft: the minimum
        rect(CELL - 0.9 / 300, 2300, 300, 300),  # shares 0.9 sq ft
        rect(3200, 4500, 200, 200),  # touches WE2 (not regulated)
        rect(CELL - 100, CELL - 100, CELL + 200, CELL + 200),
    ]  # covers C11 whole
    sites += random_sites(rng, 24)
    return Case(
        {
            "catchments": grid_catchments(),
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": wetlands,
        },
        sites,
    )


def many_sites(seed=1010) -> Case:
    """1600 small sites over 400 wetlands and the grid: enough pairs for the screen's
    element-wise work to be shared among threads (512 elements a share); every 16th site is
    reviewed."""
    rng = np.random.default_rng(seed)
    wetlands = scattered_wetlands(rng, 400)
    sites = []
    for _ in range(1600):
        x, y = rng.uniform(-200, 6000, 2)
        w, h = rng.uniform(30, 250, 2)
        sites.append(rect(x, y, w, h))
    sheds = [shed(rect(0, 0, 3500, 2500), "TW-1"), shed(rect(2500, 2000, 3000, 3000), "TW-2", source=None)]
    return Case(
        {
            "catchments": grid_catchments(drains={"C00": "C01", "C01": "C11"}),
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": sheds,
            "wetlands": wetlands,
        },
        sites,
        every=16,
    )


def other_crs(seed=909, crs="EPSG:4326") -> Case:
    """Every reference layer stored in another CRS than the area CRS (the profile's 2260)."""
    rng = np.random.default_rng(seed)
    case = nested_tmdl(seed)
    case.layers["wetlands"] = scattered_wetlands(rng, 10) + [
        wetland(bowtie(2500, 2500, 300, 300), "WBX", 1, 150.0)
    ]
    case.layers["tmdl_watersheds"].append(shed(bowtie(3000, 500, 1500, 1500), "TW-BOW"))
    case.layers["catchments"][4] = (self_touching(CELL, CELL, CELL, CELL), case.layers["catchments"][4][1])
    case.sites = case.sites[:20] + random_sites(rng, 14)
    case.crs = crs
    return case


CASES = {
    "invalid_polygons": invalid_polygons,
    "multipart": multipart,
    "holes": holes,
    "nested_tmdl": nested_tmdl,
    "odd_drains_to": odd_drains_to,
    "odd_categories": odd_categories,
    "odd_wetlands": odd_wetlands,
    "edges": edges,
    "many_sites": many_sites,
    "odd_drains_to_no_hop": lambda: replace(
        odd_drains_to(), profile_changes={"downstream_catchment_hops": 0}
    ),
    "odd_drains_to_one_hop": lambda: replace(
        odd_drains_to(), profile_changes={"downstream_catchment_hops": 1}
    ),
    "nested_tmdl_needs_review": lambda: replace(
        nested_tmdl(), profile_changes={"routed_tmdl_watershed": "needs_review"}
    ),
    "crs_4326": lambda: other_crs(crs="EPSG:4326"),
    "area_crs_metres": lambda: replace(odd_wetlands(), area_crs="EPSG:32618"),  # metres
    "area_crs_metres_edges": lambda: replace(edges(), area_crs="EPSG:32618", crs="EPSG:4326"),
    "crs_32618": lambda: other_crs(crs="EPSG:32618"),
}


# --- writing, screening, reviewing -------------------------------------------------------------


def write_case(case: Case, folder):
    """The case's reference GeoPackage and sites GeoPackage in ``folder``."""
    frames = {}
    for name, fields in REFERENCE_FIELDS.items():
        rows = case.layers.get(name, [])
        data = {f: pd.Series([attrs.get(f) for _, attrs in rows], dtype=object) for f in fields}
        frame = gpd.GeoDataFrame(data, geometry=gpd.GeoSeries([g for g, _ in rows], crs="EPSG:2260"))
        for numeric in ("regulated", "adjacent_area_ft", "stormwater_source"):
            if numeric in frame:
                frame[numeric] = frame[numeric].astype(float)
        frames[name] = frame.to_crs(case.crs)
    reference = folder / "reference.gpkg"
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "You are attempting to write an empty DataFrame")
        write_geopackage(reference, frames)
    sites = folder / "sites.gpkg"
    gpd.GeoDataFrame(
        {"site_id": [f"S{k:03d}" for k in range(len(case.sites))]}, geometry=list(case.sites), crs="EPSG:2260"
    ).to_file(sites, layer="sites", driver="GPKG")
    return reference, sites


def profile_for(case: Case):
    profile = load_profile()
    if case.area_crs:
        profile = replace(profile, profile=replace(profile.profile, area_crs=case.area_crs))
    if case.profile_changes:
        profile = replace(profile, condition_a=replace(profile.condition_a, **case.profile_changes))
    return profile


def site_plan(geometry, profile) -> SitePlan:
    """A site plan whose boundary and disturbance are the site's polygon (no discharge points:
    the catchments decide), as ``tests.analysis.test_screen.site_review`` builds it."""
    frame = gpd.GeoDataFrame({"disturbance_id": ["D1"]}, geometry=[geometry], crs=crs_of(profile.area_crs))
    return SitePlan(
        path="screen-site",
        area_crs=crs_of(profile.area_crs),
        input_crs="",
        project={"name": "screen"},
        layers={"site_boundary": frame.rename(columns={"disturbance_id": "site_id"}), "disturbance": frame},
    )


def review_row(geometry, profile, reference) -> dict:
    """The review's answers for the site (its own checks, ``condition_a`` and ``wetlands``, on
    one review's context) as a screen row's columns, read from what the review's JSON is made
    of (Condition A, the measurements) and the checks' typed results (the decision, the
    wetland measures): no finding's words are read."""
    context = ReviewContext(site_plan(geometry, profile), profile, reference)
    a = condition_a.CHECKS[0].run(context, SILENT)
    w = wetlands.CHECKS[0].run(context, SILENT)
    condition, decision = a.conditions["A"], a.extra["condition_a"]
    measured = w.extra["wetland_measures"]
    triggers = decision.triggers if condition.applies else []
    return {
        "condition_a": APPLIES
        if condition.applies
        else NOT_DECIDED
        if not condition.decided
        else DOES_NOT_APPLY,
        "pollutants": ";".join(decision.pollutants) if condition.applies else "",
        "listed_waters": ";".join(
            dict.fromkeys(r.record.waterbody_id for r in triggers if r.water is not None)
        ),
        "tmdl_watersheds": ";".join(
            dict.fromkeys(r.watershed.watershed_id for r in triggers if r.watershed is not None)
        ),
        "wetland_acres": w.measurements["wetland_acres"],
        "adjacent_area_acres": w.measurements["wetland_adjacent_area_acres"],
        "wetland_status": measured.status(profile)[0].value,
        "wetlands": ";".join(measured.met(profile)[0]),
    }


def differences(screen_rows: dict, sites, profile, reference, every=1) -> list:
    """(site, column, screen, review) for each answer the screen and the review differ on
    (of every ``every``-th site). The waters, watersheds and pollutants are compared as sets:
    the review tells them in the order the reference gave them, the screen in one order."""
    out = []
    for site_id, geometry in zip(sites.ids[::every], sites.geometries[::every]):
        row, review = screen_rows[site_id], review_row(geometry, profile, reference)
        for column, value in review.items():
            same = (
                abs(row[column] - value) <= 1e-9
                if isinstance(value, float)
                else sorted(row[column].split(";")) == sorted(value.split(";"))
                if column in ("pollutants", "listed_waters", "tmdl_watersheds")
                else row[column] == value
            )
            if not same:
                out.append((site_id, column, row[column], value))
    return out


@pytest.fixture(scope="module", params=sorted(CASES))
def written(request, tmp_path_factory):
    name = request.param
    case = CASES[name]()
    reference, sites = write_case(case, tmp_path_factory.mktemp(name))
    return name, case, reference, sites


def test_each_site_is_screened_as_its_review(written):
    """Every generated site: the screen's row is the review's answer."""
    name, case, reference_path, sites_path = written
    profile = profile_for(case)
    sites = read_sites(sites_path, profile.area_crs)
    rows = screen_sites(sites, open_reference(reference_path), profile).by_site()
    assert len(rows) == len(case.sites)
    found = differences(rows, sites, profile, open_reference(reference_path), case.every)
    assert not found, (name, len(found), found[:5])
    # The comparison is not of empty answers: every case meets some of the reference.
    assert {r["condition_a"] for r in rows.values()} - {DOES_NOT_APPLY}


def test_a_sites_row_does_not_hang_on_the_other_sites_screened(written):
    """The sites screened in two batches (every other site, in turn): each row is the row of
    the whole screen (what a site meets is its own, not what was read for its neighbours)."""
    name, case, reference_path, sites_path = written
    profile = profile_for(case)
    sites = read_sites(sites_path, profile.area_crs)
    whole = screen_sites(sites, open_reference(reference_path), profile).by_site()
    for start in (0, 1):
        part = read_sites(sites_path, profile.area_crs)
        part.ids, part.geometries = part.ids[start::2], part.geometries[start::2]
        rows = screen_sites(part, open_reference(reference_path), profile).by_site()
        changed = [(k, row, whole[k]) for k, row in rows.items() if row != whole[k]]
        assert not changed, (name, len(changed), changed[:3])


ID_FIELDS = {
    "wetlands": "wetland_id",
    "impaired_waters": "waterbody_id",
    "tmdl_watersheds": "watershed_id",
    "catchments": "catchment_id",
}
FILLERS = {
    "wetlands": wetland(rect(-60000, 0, 100, 100), "FILLER", 0),
    "impaired_waters": water("NY-FILLER"),
    "tmdl_watersheds": shed(rect(-60000, 0, 100, 100), "FILLER", 0),
    "catchments": (rect(-60000, 0, 100, 100), {"catchment_id": "FILLER", "name": None, "drains_to": None}),
}


def importable(case: Case) -> Case:
    """The case as an import takes it: an id given twice (as the import compares them) is
    given again with a suffix, and an empty layer holds one feature far from every site (an
    import refuses both)."""
    layers = {}
    for layer in LAYERS:
        rows, seen = [], set()
        for geometry, attrs in case.layers.get(layer, []) or [FILLERS[layer]]:
            key = str(attrs[ID_FIELDS[layer]]).strip().upper()
            if key in seen:
                attrs = {**attrs, ID_FIELDS[layer]: f"{key}-R{len(rows)}"}
            seen.add(key)
            rows.append((geometry, attrs))
        layers[layer] = rows
    return replace(case, layers=layers)


@pytest.mark.parametrize("name", sorted(CASES))
def test_geopackage_and_postgis_screens_agree(name, pg_schema, tmp_path):
    """The case's layers imported into a GeoPackage store and a PostGIS schema: the SQL screen
    gives each site the GeoPackage screen's row."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.postgis import PostgisStore
    from analysis.reference.store import GeoPackageStore
    from analysis.screen.postgis import screen_postgis

    case = importable(CASES[name]())
    reference_path, sites_path = write_case(case, tmp_path)
    conninfo, schema = pg_schema
    store = GeoPackageStore(tmp_path / "store.gpkg")
    for layer in LAYERS:
        candidate = read_candidate(layer, f"{reference_path}|layername={layer}")
        store.import_candidate(candidate)
        PostgisStore(conninfo, schema).import_candidate(candidate)
    profile = profile_for(case)
    sites = read_sites(sites_path, profile.area_crs)
    in_file = screen_sites(sites, open_reference(store.path), profile).by_site()
    in_database = screen_postgis(sites, f"{conninfo} schema={schema}", profile).by_site()
    found = []
    for site_id, row in in_file.items():
        other = in_database[site_id]
        for column in (
            "condition_a",
            "receiving_waters",
            "listed_waters",
            "tmdl_watersheds",
            "pollutants",
            "why",
            "wetland_status",
            "wetlands",
        ):
            if other[column] != row[column]:
                found.append((site_id, column, row[column], other[column]))
        for column in ("site_acres", "tmdl_acres", "wetland_acres", "adjacent_area_acres"):
            if abs(other[column] - row[column]) > 1e-6:
                found.append((site_id, column, row[column], other[column]))
    assert not found, (name, len(found), found[:5])


# --- the divergences found, kept -----------------------------------------------------------------


def wide_wetland_case() -> Case:
    """A regulated wetland whose adjacent area (5000 ft) is wider than the search distance
    (300 ft): site NEAR 100 ft from it (the wetland is read for it), site FAR 1500 ft from it
    (its review does not read the wetland: beyond the search distance of its box)."""
    return Case(
        {
            "catchments": grid_catchments(),
            "impaired_waters": listed_grid(),
            "tmdl_watersheds": [shed(cell(0, 0), "TW-0")],
            "wetlands": [wetland(rect(2000, 2000, 300, 300), "WIDE", 1, 5000.0)],
        },
        [rect(2400, 2000, 300, 300), rect(3800, 2000, 300, 300)],
    )


def _far_rows(screen, reference, sites_path, profile):
    """The FAR site's row screened with NEAR, and alone, and its review."""
    sites = read_sites(sites_path, profile.area_crs)
    alone = read_sites(sites_path, profile.area_crs)
    alone.ids, alone.geometries = alone.ids[1:], alone.geometries[1:]
    return (
        screen(sites, reference).by_site()["S001"],
        screen(alone, reference).by_site()["S001"],
        review_row(sites.geometries[1], profile, open_reference(reference)),
    )


def test_a_wetland_wider_than_the_search_distance_meets_only_sites_whose_box_it_meets(tmp_path):
    """Regression (s20-fuzz): the screen read the wide wetland for NEAR and met it with every
    site within its 5000 ft, so FAR was put in its adjacent area (8 acres of a site in a
    wetland's adjacent area that its review, and FAR screened alone, do not see)."""
    case = wide_wetland_case()
    profile = profile_for(case)
    together, alone, review = _far_rows(
        lambda sites, reference: screen_sites(sites, open_reference(reference), profile),
        *write_case(case, tmp_path),
        profile,
    )
    assert review["wetland_status"] == "none" and review["adjacent_area_acres"] == 0
    for row in (together, alone):
        assert (row["wetland_status"], row["wetlands"], row["adjacent_area_acres"]) == ("none", "", 0.0)


def test_a_wide_wetland_in_postgis_meets_only_sites_whose_box_it_meets(pg_schema, tmp_path):
    """The same in the PostGIS screen (its wetland query met the zone with every site)."""
    from analysis.reference.importer import read_candidate
    from analysis.reference.postgis import PostgisStore
    from analysis.screen.postgis import screen_postgis

    conninfo, schema = pg_schema
    case = wide_wetland_case()
    reference, sites_path = write_case(case, tmp_path)
    for layer in LAYERS:
        PostgisStore(conninfo, schema).import_candidate(
            read_candidate(layer, f"{reference}|layername={layer}")
        )
    profile = profile_for(case)
    together, alone, _ = _far_rows(
        lambda sites, _: screen_postgis(sites, f"{conninfo} schema={schema}", profile),
        reference,
        sites_path,
        profile,
    )
    for row in (together, alone):
        assert (row["wetland_status"], row["wetlands"], row["adjacent_area_acres"]) == ("none", "", 0.0)


@pytest.mark.parametrize("store", ["geopackage", "postgis"])
def test_tmdl_watersheds_are_told_in_one_order_whatever_order_they_are_stored_in(store, tmp_path, request):
    """Regression (s20-fuzz): a site in two TMDL watersheds was told them in the order the
    store gave them (a GeoPackage's feature order; PostgreSQL's, none), so the GeoPackage and
    PostGIS screens wrote different ``tmdl_watersheds`` and ``why`` for one answer."""
    sheds = [
        shed(rect(0, 0, 3000, 3000), "TW-A", pollutants="Phosphorus"),
        shed(rect(500, 500, 3000, 3000), "TW-B", pollutants="Nitrogen"),
        shed(rect(0, 0, 3000, 3000), "TW-A2", source=None),
    ]
    rows = []
    for k, ordered in enumerate((sheds, sheds[::-1])):
        case = Case(
            {
                "catchments": grid_catchments(),
                "impaired_waters": listed_grid(),
                "tmdl_watersheds": ordered,
                "wetlands": [wetland(rect(-9000, 0, 10, 10), "W", 0)],
            },
            [rect(1000, 1000, 400, 400)],
        )
        folder = tmp_path / str(k)
        folder.mkdir()
        reference, sites_path = write_case(case, folder)
        profile = profile_for(case)
        sites = read_sites(sites_path, profile.area_crs)
        if store == "geopackage":
            rows.append(screen_sites(sites, open_reference(reference), profile).rows[0])
            continue
        from analysis.reference.importer import read_candidate
        from analysis.reference.postgis import PostgisStore
        from analysis.screen.postgis import screen_postgis

        conninfo, schema = request.getfixturevalue("pg_schema")
        schema = f"{schema}_{k}"
        for layer in LAYERS:
            PostgisStore(conninfo, schema).import_candidate(
                read_candidate(layer, f"{reference}|layername={layer}")
            )
        rows.append(screen_postgis(sites, f"{conninfo} schema={schema}", profile).rows[0])
    assert rows[0]["tmdl_watersheds"] == "TW-A;TW-B"
    assert rows[0] == rows[1]
