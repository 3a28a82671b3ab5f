"""Benchmark: ``swppp reference import`` of a wetlands layer against ``ogr2ogr``, side by side.

    .venv/plain/bin/python scripts/bench_import.py [--size N] [--postgis] [--smoke]

Makes (once; reused from build/bench/) a synthetic wetlands-like layer of N polygons (default
1,000,000; a GeoPackage, EPSG:2260, the contract's wetlands fields), rings of 6 to 48
vertices (22.5 on average), one in a thousand a bow-tie that the import repairs, or reads
``--source FILE``; then runs, each in its own process and in this order:

1. ``ogr2ogr -f GPKG`` of the layer into a new GeoPackage (the anchor: GDAL writes the
   features, then builds the R-tree);
2. ``swppp reference import wetlands SOURCE --reference NEW.gpkg``;
3. with ``--postgis`` (a PostgreSQL + PostGIS started for the run in a temporary folder, as
   ``scripts/bench_screen.py`` starts it): ``ogr2ogr -f PostgreSQL`` (its default, COPY) and
   ``swppp reference import`` into PostGIS; CPU there is the client's and the server's.

For each: wall seconds, CPU seconds (user + system), peak memory (the child's maximum resident
set size, measured by GNU time around it), the ratio to its anchor and the load average at its
end (the machine is shared: the figures follow the load). ``--smoke`` runs it all at a tiny
size in a temporary folder (the test command runs it, so the script cannot rot); no timing is
asserted anywhere.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))
BENCH = ROOT / "build" / "bench"
X0, Y0 = 600_000.0, 900_000.0  # EPSG:2260 (NY East, US feet): the Hudson Valley
SPACING = 60.0  # feet between the polygons' centres
VERTICES = (6, 12, 24, 48)  # ring sizes, a quarter of the polygons each
BOWTIE_EVERY = 1000  # one polygon in this many crosses itself (the import repairs it)

import bench_screen  # noqa: E402 - after the path is set: its PostgreSQL helper and its timer


def build_source(path: Path, size: int, seed: int = 37) -> None:
    """``size`` wetlands-like polygons in ``path`` (layer ``wetlands``), made vectorised in
    blocks of 100,000 and written through a partial file, moved in whole."""
    import geopandas as gpd
    import numpy as np
    import pyogrio
    import shapely

    rng = np.random.default_rng(seed)
    partial = path.with_suffix(".partial.gpkg")
    partial.unlink(missing_ok=True)
    per_row = 1000
    classes = np.array(["PFO1A", "PEM1C", "PSS1E", "PUBHh", "L2UBH"], dtype=object)
    for start in range(0, size, 100_000):
        count = min(100_000, size - start)
        index = np.arange(start, start + count)
        geoms = np.empty(count, dtype=object)
        for part, k in enumerate(VERTICES):
            rows = index[part :: len(VERTICES)] - start
            cx = X0 + SPACING * ((start + rows) % per_row)
            cy = Y0 + SPACING * ((start + rows) // per_row)
            angles = np.linspace(0.0, 2 * np.pi, k, endpoint=False)
            radii = rng.uniform(8.0, 25.0, (len(rows), k))
            xy = np.stack([cx[:, None] + radii * np.cos(angles), cy[:, None] + radii * np.sin(angles)], -1)
            crossed = (start + rows) % BOWTIE_EVERY == 1
            xy[crossed, 1], xy[crossed, k // 2] = xy[crossed, k // 2].copy(), xy[crossed, 1].copy()
            geoms[rows] = shapely.polygons(np.concatenate([xy, xy[:, :1]], axis=1))
        frame = gpd.GeoDataFrame(
            {
                "wetland_id": [f"W-{i}" for i in index],
                "source": "NWI",
                "wetland_class": classes[index % len(classes)],
                "regulated": (index % 3 == 0).astype("int32"),
                "adjacent_area_ft": np.where(index % 7 == 0, np.nan, 100.0),
            },
            geometry=geoms,
            crs="EPSG:2260",
        )
        pyogrio.write_dataframe(frame, partial, layer="wetlands", driver="GPKG", append=start > 0)
    partial.rename(path)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def show(label: str, result: dict, base: dict | None = None) -> dict:
    if not result.get("ok"):
        print(f"{label:<36} skipped: {result.get('error')}", flush=True)
        return result
    ratio = (
        f"{result['seconds'] / base['seconds']:5.2f}x (CPU {result['cpu'] / base['cpu']:.2f}x)"
        if base and base.get("ok")
        else "anchor" + " " * 15
    )
    print(
        f"{label:<36} {result['seconds']:8.2f} s  CPU {result['cpu']:7.2f} s  "
        f"peak {result['peak_mb']:6.0f} MB  {ratio}  load {load()}",
        flush=True,
    )
    return result


def swppp_import(source: Path, target: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "analysis.cli",
        "reference",
        "import",
        "wetlands",
        f"{source}|layername=wetlands",
        "--reference",
        target,
        "--source-date",
        "2026-01-01",
        "--quiet",
    ]


def with_server(conninfo: str, command: list[str]) -> dict:
    """``command`` measured, the PostgreSQL server's CPU over its run counted with the client's."""
    before = bench_screen.server_cpu(conninfo)
    result = bench_screen.measured(command)
    time.sleep(2.0)  # the client's backend ends after it: its CPU is counted once reaped
    result["cpu"] += bench_screen.server_cpu(conninfo) - before
    return result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000, help="polygons (default 1,000,000)")
    parser.add_argument("--source", type=Path, help="a GeoPackage with a wetlands layer, instead")
    parser.add_argument("--postgis", action="store_true", help="also into PostGIS, against ogr2ogr's")
    parser.add_argument("--smoke", action="store_true", help="tiny size, a temporary folder")
    args = parser.parse_args(argv)
    have_ogr2ogr = shutil.which("ogr2ogr") is not None
    with contextlib.ExitStack() as stack:
        if args.smoke:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="swppp-bench-import-")))
            args.size = 2_000
        else:
            folder = BENCH
        folder.mkdir(parents=True, exist_ok=True)
        source = args.source or folder / f"wetlands_synthetic_{args.size}.gpkg"
        if not source.is_file():
            build_source(source, args.size)
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="swppp-bench-work-", dir=folder)))
        print(
            f"import of {source.name} ({args.size:,} polygons unless --source); Python "
            f"{sys.version.split()[0]} ({sys.executable}); {os.cpu_count()} CPUs; load average {load()}",
            flush=True,
        )
        no_gdal = {"ok": False, "error": "ogr2ogr is absent"}
        anchor = (
            bench_screen.measured(
                ["ogr2ogr", "-f", "GPKG", str(work / "ogr2ogr.gpkg"), str(source), "wetlands"]
            )
            if have_ogr2ogr
            else no_gdal
        )
        show("ogr2ogr -f GPKG", anchor)
        show(
            "swppp reference import (GeoPackage)",
            bench_screen.measured(swppp_import(source, str(work / "store.gpkg"))),
            anchor,
        )
        if args.postgis:
            with bench_screen.postgis() as conninfo:
                if conninfo is None:
                    show(
                        "swppp reference import (PostGIS)",
                        {"ok": False, "error": "no PostgreSQL/PostGIS/psycopg"},
                    )
                else:
                    pg_anchor = (
                        with_server(
                            conninfo,
                            [
                                "ogr2ogr",
                                "-f",
                                "PostgreSQL",
                                f"PG:{conninfo}",
                                str(source),
                                "wetlands",
                                "-nln",
                                "ogr2ogr_wetlands",
                            ],
                        )
                        if have_ogr2ogr
                        else no_gdal
                    )
                    show("ogr2ogr -f PostgreSQL (COPY)", pg_anchor)
                    show(
                        "swppp reference import (PostGIS)",
                        with_server(conninfo, swppp_import(source, conninfo)),
                        pg_anchor,
                    )
        print(f"load average at the end {load()}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
