"""Benchmark: Condition A + wetlands for one site against a statewide-sized reference GeoPackage.

    .venv/plain/bin/python scripts/bench_reference.py [--polygons N]

Builds (once; reused when present) ``build/bench/reference_1m.gpkg``: the demo reference layers
with ``wetlands`` replaced by an NWI state extract (``NWI`` below: a real one named by
SWPPP_NWI_EXTRACT, else the shipped test_data/reference_sources/NY_shapefile_wetlands.zip)
tiled over a New York-sized grid until it holds at least N polygons
(default 1,000,000), the demo site in the middle. Then prints, for the demo site:

1. the wall time of the one-site Condition A + wetlands check (opening the reference, reading
   it around the site through the R-tree, repairs, the checks), best and median of RUNS in one
   process after an untimed first run (as the panel reviews one site after another: the
   store's R-trees, checked on the first open, are not checked again while the file is
   unchanged; a cold ``swppp review`` pays that check once, bench_startup.py's figure), on
   the reference as built (its CRS EPSG-coded) and on a copy whose CRS has no EPSG code; and
   the wetlands check alone (``rules=["wetlands"]``), the like-for-like part of QGIS's
   pipeline below: Condition A also reads the catchments, the TMDL watersheds and the 303(d)
   table, and the wetlands check also buffers the regulated wetlands by their adjacent areas;
2. the time of reading the whole wetlands layer (what a naive review would do) and the ratio;
3. QGIS's own ``native:dissolve`` of the phases (they overlap) + ``native:extractbylocation`` +
   ``native:intersection`` of the wetlands with the disturbance and the true areas, on layers
   opened once and held open (the wetlands' R-tree present), run through QGIS's Python
   (.venv/qgis/bin/python), its answer beside ours, and the ratio;
(The cold one-site ``swppp review``, imports and all, is scripts/bench_startup.py's.)

``--smoke`` runs it all at a tiny size (a few thousand polygons) in a temporary folder: the
test command runs it so the script cannot rot.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __name__ == "__main__" and (importlib.util.find_spec("pyproj").origin or "").startswith("/usr/"):
    # Run as a script on QGIS's Python: Debian's pyproj looks for PROJ data under the venv
    # otherwise. Never when imported (the tests' smoke run) nor for a wheel's pyproj: a newer
    # PROJ reading Debian's proj.db mislabels units (EPSG:2260's US feet read as metres).
    os.environ.setdefault("PROJ_DATA", "/usr/share/proj")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BENCH = ROOT / "build" / "bench"
# The NWI extract tiled: a real state extract where the machine has one (SWPPP_NWI_EXTRACT, a
# state zip as NWI publishes it, e.g. DC's 1,556 polygons, one invalid), else the shipped
# NWI-format extract (three polygons: fine for --smoke and small sizes; the real one's shapes
# are what a full-size figure should be measured on).
SHIPPED_NWI = ROOT / "test_data" / "reference_sources" / "NY_shapefile_wetlands.zip"
_REAL_NWI = ROOT.parent / "shared" / "data" / "nwi_dc_wetlands.zip"  # this project's CI's copy
NWI = Path(os.environ.get("SWPPP_NWI_EXTRACT") or (_REAL_NWI if _REAL_NWI.is_file() else SHIPPED_NWI))


def nwi_layer(archive: Path) -> str:
    """The shapefile inside an NWI state zip (``XX_shapefile_wetlands/XX_Wetlands.shp``)."""
    import zipfile

    with zipfile.ZipFile(archive) as z:
        return next(n for n in z.namelist() if n.endswith("_Wetlands.shp"))


SITE = ROOT / "test_data" / "demo_site.gpkg"
DEMO_REFERENCE = ROOT / "test_data" / "demo_reference.gpkg"
REGULATED_TYPES = ("Freshwater Forested/Shrub Wetland", "Freshwater Emergent Wetland")
RUNS = 10  # the one-site check and QGIS's, each timed this many times in one process: best, median


def build(target: Path, polygons: int) -> None:
    """Tile the NWI extract over a grid centred on the demo site; write it with the demo layers."""
    import geopandas as gpd
    import numpy as np
    import pandas as pd
    import pyogrio
    import shapely
    from pyproj import Transformer

    nwi = gpd.read_file(f"zip://{NWI}!{nwi_layer(NWI)}")
    site = gpd.read_file(SITE, layer="site_boundary")
    centre = site.geometry.iloc[0].centroid
    cx, cy = Transformer.from_crs(site.crs, nwi.crs, always_xy=True).transform(centre.x, centre.y)
    minx, miny, maxx, maxy = nwi.total_bounds
    width, height = maxx - minx, maxy - miny
    tiles = int(np.ceil(polygons / len(nwi)))
    columns = int(np.ceil(np.sqrt(tiles)))
    rows = int(np.ceil(tiles / columns))
    base = np.asarray(nwi.geometry.values, dtype=object)
    # The middle tile is placed so that the site lies among real small wetlands: on the
    # forested wetland with the most neighbours within 500 m.
    forested = nwi[nwi["WETLAND_TY"] == REGULATED_TYPES[0]]
    points = np.asarray(forested.geometry.centroid.values, dtype=object)
    tree = shapely.STRtree(np.asarray(nwi.geometry.values, dtype=object))
    near = tree.query(points, predicate="dwithin", distance=500.0)
    spot = points[np.bincount(near[0], minlength=len(points)).argmax()]
    x0 = cx - spot.x - (columns // 2) * width
    y0 = cy - spot.y - (rows // 2) * height
    regulated = nwi["WETLAND_TY"].isin(REGULATED_TYPES).to_numpy().astype(int)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".partial.gpkg")
    partial.unlink(missing_ok=True)
    print(
        f"building {target} ({tiles * len(nwi):,} wetland polygons in {columns} x {rows} tiles)", flush=True
    )
    # Written a few tiles at a time (appended): the builder holds one group of tiles, never
    # the whole layer, so a 1M layer builds in bounded memory.
    group = max(1, 50_000 // len(nwi))
    for first in range(0, tiles, group):
        parts, ids = [], []
        for t in range(first, min(tiles, first + group)):
            column, row = t % columns, t // columns
            offset = np.array([x0 + column * width, y0 + row * height])
            parts.append(shapely.transform(base, lambda xy, o=offset: xy + o))
            ids.append([f"NWI-{t:03d}-{i:04d}" for i in range(len(nwi))])
        count = len(parts)
        wetlands = gpd.GeoDataFrame(
            {
                "wetland_id": np.concatenate(ids),
                "source": "NWI",
                "wetland_class": np.tile(nwi["ATTRIBUTE"].to_numpy(), count),
                "regulated": np.tile(regulated, count),
                "adjacent_area_ft": np.tile(np.where(regulated == 1, 100.0, np.nan), count),
            },
            geometry=gpd.GeoSeries(np.concatenate(parts), crs=nwi.crs),
        )
        # GeoPackage 1.2, which QGIS's GDAL 3.6 reads without a warning.
        pyogrio.write_dataframe(
            wetlands,
            partial,
            layer="wetlands",
            driver="GPKG",
            promote_to_multi=True,
            append=first > 0,
            dataset_options=None if first else {"VERSION": "1.2"},
        )
        del wetlands, parts, ids
    for layer in ("impaired_waters", "tmdl_watersheds", "catchments"):
        pyogrio.write_dataframe(
            gpd.read_file(DEMO_REFERENCE, layer=layer), partial, layer=layer, driver="GPKG", append=False
        )
    versions = pd.DataFrame(pyogrio.read_dataframe(DEMO_REFERENCE, layer="layer_versions"))
    # The wetlands' version records the count written, as `swppp reference import` records it.
    versions.loc[versions["layer"] == "wetlands", "feature_count"] = tiles * len(nwi)
    pyogrio.write_dataframe(versions, partial, layer="layer_versions", driver="GPKG")
    partial.rename(target)


def timed_runs(runs, work):
    """(best, median, the last result) of ``runs`` calls of ``work``."""
    import statistics

    times = []
    result = None
    for _ in range(runs):
        start = time.perf_counter()
        result = work()
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), result


def time_through_area_copy(target: Path) -> tuple[dict, dict]:
    """:func:`time_check` (the whole check, and the wetlands alone) on a copy of ``target``
    keeping its layers also in the area CRS (made once beside it, and its making printed)."""
    from analysis.profile import load_profile
    from analysis.reference.store import GeoPackageStore

    copied = target.with_name(target.stem + "_area.gpkg")
    if not copied.is_file():
        partial = copied.with_suffix(".partial.gpkg")
        shutil.copyfile(target, partial)
        start = time.perf_counter()
        made = GeoPackageStore(partial).make_area_copies(load_profile().area_crs)
        print(
            f"area copies made in {time.perf_counter() - start:.1f} s "
            f"({sum(c.features for c in made):,} features)"
        )
        partial.rename(copied)
    return time_check(copied), time_check(copied, LIKE_QGIS)


CHECKED = ("condition_a", "wetlands")  # the one-site check timed
LIKE_QGIS = ("wetlands",)  # its part that QGIS's extract + intersection also does


def time_check(reference_path: Path, rules=CHECKED) -> dict:
    """Best and median of RUNS of opening the reference and reviewing the demo site for
    ``rules`` (in this process, after one untimed run), and what the review found."""
    from analysis.profile import load_profile
    from analysis.reference.read import open_reference
    from analysis.review import review_site
    from analysis.siteplan.plan import load_site_plan

    profile = load_profile()
    site = load_site_plan(SITE, profile)

    def check():
        reference = open_reference(reference_path)
        review = review_site(site, profile, reference=reference, rules=list(rules))
        return reference, review.conditions.get("A"), review.measurements

    check()  # the first review in a process builds its CRS transformers (cached after)
    seconds, median, (reference, a, measurements) = timed_runs(RUNS, check)
    return {
        "seconds": seconds,
        "median": median,
        "condition_a": None if a is None else a.applies,
        **measurements,
        "wetlands_read": reference.features_read.get("wetlands"),
        "repaired": len(reference.repaired),
    }


def without_epsg_code(reference_path: Path, target: Path) -> str:
    """A copy of the reference whose layers' CRS is given by an ESRI WKT with no authority code
    (as a shapefile's .prj gives it): the one-site check must be as fast whatever the CRS."""
    import shutil
    import sqlite3
    from contextlib import closing

    from pyproj import CRS

    shutil.copyfile(reference_path, target)
    with closing(sqlite3.connect(target)) as con, con:
        srs_id, definition = con.execute(
            "SELECT s.srs_id, s.definition FROM gpkg_spatial_ref_sys s JOIN gpkg_geometry_columns g "
            "ON g.srs_id = s.srs_id WHERE g.table_name = 'wetlands'"
        ).fetchone()
        esri = CRS.from_user_input(definition).to_wkt("WKT1_ESRI")
        con.execute(
            "UPDATE gpkg_spatial_ref_sys SET organization = 'NONE', "
            "organization_coordsys_id = srs_id, definition = ? WHERE srs_id = ?",
            (esri, srs_id),
        )
    return CRS.from_wkt(esri).name


def time_whole_layer(reference_path: Path) -> dict:
    from analysis.io.vector import read_layer

    seconds, _median, data = timed_runs(1, lambda: read_layer(reference_path, "wetlands"))
    return {"seconds": seconds, "features": len(data.frame)}


QGIS_SNIPPET = r"""
import json, sys, time
from qgis.core import QgsApplication, QgsDistanceArea, QgsFeatureSource, QgsProject, QgsVectorLayer
app = QgsApplication([], False)
app.initQgis()
sys.path.append("/usr/share/qgis/python/plugins")
import processing
from processing.core.Processing import Processing
Processing.initialize()
reference, site, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
opened = time.perf_counter()
# Held open, as a GIS analyst's project holds them: opened once, outside the timed loop.
wetlands = QgsVectorLayer(f"{reference}|layername=wetlands", "wetlands", "ogr")
disturbance = QgsVectorLayer(f"{site}|layername=disturbance", "disturbance", "ogr")
assert wetlands.isValid() and disturbance.isValid()
opening = time.perf_counter() - opened
indexed = wetlands.hasSpatialIndex() == QgsFeatureSource.SpatialIndexPresent
# True (ellipsoidal) areas, as the review measures them.
measure = QgsDistanceArea()
measure.setSourceCrs(wetlands.crs(), QgsProject.instance().transformContext())
measure.setEllipsoid("EPSG:7019")
times = []
for _ in range(runs + 1):  # the first run warms QGIS's caches, as the review's untimed first run
    start = time.perf_counter()
    # The phases overlap: dissolved first, so that no wetland area is counted twice.
    whole = processing.run("native:dissolve", {"INPUT": disturbance, "OUTPUT": "memory:"})["OUTPUT"]
    near = processing.run("native:extractbylocation", {"INPUT": wetlands, "PREDICATE": [0],
                          "INTERSECT": whole, "OUTPUT": "memory:"})["OUTPUT"]
    inside = processing.run("native:intersection", {"INPUT": near, "OVERLAY": whole,
                            "OUTPUT": "memory:"})["OUTPUT"]
    area = sum(measure.measureArea(f.geometry()) for f in inside.getFeatures())
    times.append(time.perf_counter() - start)
times = sorted(times[1:])
print(json.dumps({"seconds": times[0], "median": times[len(times) // 2], "opening": opening,
                  "indexed": indexed, "acres": area / 4046.8564224,
                  "extracted": near.featureCount(), "pieces": inside.featureCount(),
                  "features": wetlands.featureCount()}), flush=True)
import os
os._exit(0)  # QGIS 3.22 may crash freeing layers at exit; the figures are out
"""


def time_qgis(reference_path: Path) -> dict:
    python = ROOT / ".venv" / "qgis" / "bin" / "python"
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PROJ_DATA": "/usr/share/proj"}
    done = subprocess.run(
        [str(python), "-c", QGIS_SNIPPET, str(reference_path), str(SITE), str(RUNS)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=3600,
    )
    if done.returncode != 0 or not done.stdout.strip():
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polygons", type=int, default=1_000_000)
    parser.add_argument("--skip-whole", action="store_true", help="do not read the whole layer")
    parser.add_argument("--skip-qgis", action="store_true", help="do not time QGIS")
    parser.add_argument("--smoke", action="store_true", help="tiny size, a temporary folder")
    args = parser.parse_args(argv)
    if not NWI.is_file():
        print(f"{NWI} is absent: SWPPP_NWI_EXTRACT names an NWI state zip to tile", file=sys.stderr)
        return 2
    if args.smoke:
        with tempfile.TemporaryDirectory(prefix="swppp-bench-") as folder:
            return run(args, Path(folder) / "reference_smoke.gpkg", 3_000)
    return run(args, BENCH / f"reference_{args.polygons // 1000}k.gpkg", args.polygons)


def run(args, target: Path, polygons: int) -> int:
    print(f"load average at start {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if not target.is_file():
        start = time.perf_counter()
        build(target, polygons)
        print(f"built in {time.perf_counter() - start:.1f} s ({target.stat().st_size / 1e6:,.0f} MB)")
    check = time_check(target)
    print(
        f"one-site Condition A + wetlands check: {check['seconds']:.4f} s best, "
        f"{check['median']:.4f} s median of {RUNS} "
        f"({check['wetlands_read']} wetlands read around the site, {check['repaired']} repaired; "
        f"wetland_acres {check['wetland_acres']:.4f}, adjacent "
        f"{check['wetland_adjacent_area_acres']:.4f}; Condition A {check['condition_a']})"
    )
    alone = time_check(target, LIKE_QGIS)
    with tempfile.TemporaryDirectory(prefix="swppp-bench-crs-") as folder:
        name = without_epsg_code(target, Path(folder) / "reference_no_code.gpkg")
        other = time_check(Path(folder) / "reference_no_code.gpkg")
        other_alone = time_check(Path(folder) / "reference_no_code.gpkg", LIKE_QGIS)
    same = all(
        abs(other[k] - check[k]) < 1e-9
        and abs(other_alone[k] - check[k]) < 1e-9
        and abs(alone[k] - check[k]) < 1e-9
        for k in ("wetland_acres", "wetland_adjacent_area_acres")
    )
    print(
        f"the same check, the reference's CRS an ESRI WKT without a code ({name}): "
        f"{other['seconds']:.4f} s best, {other['median']:.4f} s median; same answers: {same}"
    )
    print(
        f"the wetlands check alone (the part QGIS's pipeline below does too; the whole check "
        f"also reads the catchments, TMDL watersheds and 303(d) table for Condition A, and "
        f"buffers regulated wetlands by their adjacent areas, which QGIS's does not): "
        f"{alone['seconds']:.4f} s best, {alone['median']:.4f} s median; without a code: "
        f"{other_alone['seconds']:.4f} s best, {other_alone['median']:.4f} s median"
    )
    through, through_alone = time_through_area_copy(target)
    print(
        f"the same check through the store's area copies (swppp reference area-copy): "
        f"{through['seconds']:.4f} s best, {through['median']:.4f} s median; the wetlands check "
        f"alone: {through_alone['seconds']:.4f} s best, {through_alone['median']:.4f} s median; "
        "same answers: "
        + str(
            all(
                abs(through[k] - check[k]) < 1e-9
                for k in ("wetland_acres", "wetland_adjacent_area_acres", "repaired")
            )
        )
    )
    if not args.skip_whole:
        whole = time_whole_layer(target)
        print(
            f"reading the whole wetlands layer: {whole['seconds']:.2f} s "
            f"({whole['features']:,} features): {whole['seconds'] / check['seconds']:.0f}x "
            f"the one-site check"
        )
    if not args.skip_qgis:
        qgis = time_qgis(target)
        if "error" in qgis:
            print(f"QGIS: failed: {qgis['error']}")
        else:
            print(
                f"QGIS native:dissolve + native:extractbylocation + native:intersection on "
                f"layers held open (opened once in {qgis['opening']:.4f} s, the wetlands' "
                f"spatial index present: {qgis['indexed']}): {qgis['seconds']:.4f} s best, "
                f"{qgis['median']:.4f} s median ({qgis['extracted']} wetlands extracted of "
                f"{qgis['features']:,}; {qgis['acres']:.4f} wetland acres, ours "
                f"{check['wetland_acres']:.4f})"
            )
            for label, ours in (
                ("the one-site check", check),
                ("without a code", other),
                ("the wetlands check alone", alone),
                ("alone, without a code", other_alone),
                ("the check through the area copies", through),
                ("the wetlands check alone, through the area copies", through_alone),
            ):
                print(
                    f"  QGIS / {label}: {qgis['seconds'] / ours['seconds']:.2f}x best, "
                    f"{qgis['median'] / ours['median']:.2f}x median (above 1: ours is faster)"
                )
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
