"""Benchmark easement_coverage: 10,000 SMPs against 10,000 easements, vectorised vs a loop.

Usage: PROJ_DATA=/usr/share/proj .venv/qgis/bin/python scripts/bench_easements.py [N]

A 100 x 100 grid of parcels in EPSG:2260 (N = 10,000 by default): each parcel has an easement
(every third row's chained east to the next parcel; every other row's fronting a road) and an
SMP inside it, every 7th SMP poking 3 ft out of its easement, every 11th easement unrecorded.
Prints the time of the whole check (coverage, recording, access, findings) and of its parts,
and the ratio against the per-SMP Python loop (STRtree candidates, union, difference for one
SMP at a time), and against a loop differencing each SMP from the union of all easements
(timed on a sample and scaled up).
"""

import sys
import time
from pathlib import Path

import geopandas as gpd
import numpy as np
import pandas as pd
import shapely
from pyproj import CRS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from analysis.checks.easements import check_easement_coverage, easement_access, recorded_flags, smp_coverage
from analysis.profile import load_profile
from analysis.siteplan.plan import SitePlan

X0, Y0 = 582_737.0, 913_239.0
CELL = 150.0


def make_site(count: int) -> SitePlan:
    side = int(np.rint(np.sqrt(count)))
    col, row = np.meshgrid(np.arange(side), np.arange(side))
    col, row = col.ravel(), row.ravel()
    x, y = X0 + col * CELL, Y0 + 100 + row * CELL
    chained = row % 3 == 0  # every third row's easements reach east to touch the next one
    easements = shapely.box(x, y, x + np.where(chained, CELL, 120.0), y + 80)
    poke = np.where(np.arange(len(x)) % 7 == 0, 3.0, 0.0)  # 3 ft x 40 ft outside the easement
    smps = shapely.box(x + 20, y + 20, x + 100 + poke + np.where(chained, 0, 20), y + 60)
    recorded = (np.arange(len(x)) % 11 != 0).astype(int)
    # a road along the south edge of every other row of parcels: half the easements front one
    rows = np.array(
        [
            shapely.box(X0 - 100, Y0 + 80 + r * CELL, X0 + side * CELL, Y0 + 100 + r * CELL)
            for r in range(0, side, 2)
        ],
        dtype=object,
    )
    index = pd.RangeIndex(1, len(x) + 1, name="fid")
    crs = "EPSG:2260"
    layers = {
        "smp": gpd.GeoDataFrame(
            {"smp_id": [f"S-{k}" for k in index], "practice": "bioretention"},
            geometry=smps,
            crs=crs,
            index=index,
        ),
        "easement": gpd.GeoDataFrame(
            {"easement_id": [f"E-{k}" for k in index], "recorded": recorded, "instrument": "Liber 1 Page 1"},
            geometry=easements,
            crs=crs,
            index=index,
        ),
        "public_row": gpd.GeoDataFrame(
            {"name": [f"Road {k}" for k in range(len(rows))]},
            geometry=rows,
            crs=crs,
            index=pd.RangeIndex(1, len(rows) + 1, name="fid"),
        ),
    }
    return SitePlan(
        path="bench.gpkg", area_crs=CRS(crs), input_crs=crs, project={"name": "bench"}, layers=layers
    )


def best_of(repeats, run):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return min(times), result


def loop_with_tree(smps, easements):
    tree = shapely.STRtree(easements)
    out = np.empty(len(smps))
    for k, smp in enumerate(smps):
        candidates = easements[tree.query(smp, predicate="intersects")]
        out[k] = smp.difference(shapely.union_all(candidates)).area
    return out


def main(count: int) -> None:
    profile = load_profile()
    site = make_site(count)
    smps = np.asarray(site.layer("smp").geometry.values, dtype=object)
    easements = np.asarray(site.layer("easement").geometry.values, dtype=object)
    rows = np.asarray(site.layer("public_row").geometry.values, dtype=object)
    recorded = recorded_flags(site)
    print(f"{len(smps):,} SMPs, {len(easements):,} easements, {len(rows)} rights-of-way")

    whole, (findings, _) = best_of(3, lambda: check_easement_coverage(site, profile))
    cover, coverage = best_of(3, lambda: smp_coverage(smps, easements, recorded, site.area_crs, profile))
    access_time, access = best_of(
        3,
        lambda: easement_access(
            easements, rows, coverage.holder_smp, coverage.holder_easement, len(smps), site.area_crs, profile
        ),
    )
    statuses = pd.Series([f.status for f in findings]).value_counts().to_dict()
    print(f"check_easement_coverage (everything): {whole:.3f} s  findings {statuses}")
    print(
        f"  coverage (grouped unions + differences): {cover:.3f} s; {int(coverage.failing.sum())} SMPs fail"
    )
    print(
        f"  access (graph, components, gaps): {access_time:.3f} s; "
        f"{int((access.held & ~access.reachable).sum())} SMPs unreachable"
    )

    loop, areas = best_of(1, lambda: loop_with_tree(smps, easements))
    assert np.allclose(areas, shapely.area(coverage.uncovered))
    print(
        f"per-SMP loop (STRtree candidates, union, difference): {loop:.3f} s "
        f"-> vectorised coverage is {loop / cover:.1f}x faster"
    )

    sample = min(200, len(smps))
    union_time, union = best_of(1, lambda: shapely.union_all(easements))
    sample_time, _ = best_of(1, lambda: [s.difference(union).area for s in smps[:sample]])
    naive = union_time + sample_time * len(smps) / sample
    print(
        f"per-SMP loop against one union of all easements: {naive:.1f} s (union {union_time:.2f} s,"
        f" {sample} SMPs timed and scaled) -> {naive / cover:.0f}x slower than vectorised"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
