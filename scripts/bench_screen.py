"""Benchmark: many sites screened at once, and a statewide layer imported, against the anchors.

    .venv/plain/bin/python scripts/bench_screen.py [--polygons N] [--sites N] [--smoke] [--explain DIR]

Builds (once; reused) the statewide-sized reference of ``bench_reference.py`` (an NWI
extract tiled until the wetlands hold at least N polygons), with statewide catchments, 303(d)
waters and TMDL watersheds over it (``add_condition_a_layers``: HUC12-sized, 4,000 vertices
each, so that the screen's Condition A is decided at scale), and N five-acre sites spread
over it, then prints side by side, each step in its own process with its peak memory (maximum
resident set size):

1. ``swppp screen`` against the GeoPackage (in-process call, reading and deciding included);
2. the floor through the project's own read path: for each polygon layer (catchments, TMDL
   watersheds, wetlands), the features meeting the sites' boxes read through the R-tree, every
   one reprojected into the area CRS, one shapely STRtree query, the intersection areas (no
   validation, no route, no adjacent areas, no decision); and the true floor, independent of
   that path (issue 37): the sites moved into each layer's CRS, the features read as WKB
   through the R-tree (no frame), one STRtree query, only the shared pieces moved back for
   their areas: the same pairs and areas, and the screen's ratio to it; then the screen
   against a copy of the reference that keeps its layers also in the area CRS (``swppp
   reference area-copy``, made once beside it, its making timed), its ratio to the true floor
   and to the screen without, and whether its rows are that screen's;
3. ``swppp screen`` against PostGIS (a PostgreSQL started for the run in a temporary folder,
   the layers imported by ``swppp reference import``), where PostgreSQL and PostGIS exist, and
   its anchor (issue 37, goal 4): a plain SQL join on the same data, the sites uploaded with
   COPY into a GiST-indexed table in each layer's SRID, ``&&`` and ``ST_Intersects`` against
   the layer's GiST index, the shared pieces' areas in the area CRS (the floor's pairs and
   areas, checked), with 2 parallel workers and with none; then the schema's area copies made
   by the server (timed) and the PostGIS screen through them; ``--explain DIR`` writes
   ``EXPLAIN (ANALYZE, BUFFERS)`` of the join's queries and, through ``auto_explain``, of the
   PostGIS screen's (untimed runs after the timed ones);
4. QGIS's ``native:joinattributesbylocation`` of the sites with each polygon layer through
   ``qgis_process`` (its start-ups measured apart and shown);
5. ``swppp reference import wetlands`` of the layer into a new GeoPackage against
   ``ogr2ogr`` copying the same layer.

``--smoke`` runs every step at a tiny size (a few thousand polygons, 50 sites) in a temporary
folder, skipping nothing that is installed: the test command runs it so the script cannot rot.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import resource
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
sys.path.insert(0, str(ROOT / "scripts"))
BENCH = ROOT / "build" / "bench"
SITE_ACRES = 5.0

import bench_reference  # noqa: E402 - after the path is set

NWI = bench_reference.NWI


def build_sites(reference: Path, target: Path, count: int, seed: int = 23) -> None:
    """``count`` squares of five acres (area CRS), half on wetlands' edges, half anywhere."""
    import geopandas as gpd
    import numpy as np
    import shapely

    from analysis.crs import crs_of, to_crs
    from analysis.io.vector import layer_crs
    from analysis.profile import load_profile
    from analysis.units import ACRE_M2, unit_metres

    profile = load_profile()
    area = crs_of(profile.area_crs)
    rng = np.random.default_rng(seed)
    con = __import__("sqlite3").connect(str(reference))
    minx, maxx, miny, maxy = con.execute(
        "SELECT min(minx), max(maxx), min(miny), max(maxy) FROM rtree_wetlands_geom"
    ).fetchone()
    picks = rng.integers(
        1, con.execute("SELECT max(id) FROM rtree_wetlands_geom").fetchone()[0] + 1, count // 2
    )
    corners = con.execute(
        f"SELECT minx, miny FROM rtree_wetlands_geom WHERE id IN ({','.join(map(str, picks.tolist()))})"
    ).fetchall()
    con.close()
    points = np.concatenate(
        [
            np.array(corners, dtype=float).reshape(-1, 2),
            np.column_stack(
                [rng.uniform(minx, maxx, count - len(corners)), rng.uniform(miny, maxy, count - len(corners))]
            ),
        ]
    )
    centres = to_crs(gpd.GeoSeries(shapely.points(points), crs=layer_crs(reference, "wetlands")), area)
    side = np.sqrt(SITE_ACRES * ACRE_M2) / unit_metres(area)
    xy = shapely.get_coordinates(np.asarray(centres.values, dtype=object))
    squares = shapely.box(xy[:, 0] - side / 2, xy[:, 1] - side / 2, xy[:, 0] + side / 2, xy[:, 1] + side / 2)
    gpd.GeoDataFrame(
        {"site_id": [f"S{k:05d}" for k in range(len(squares))]}, geometry=squares, crs=area
    ).to_file(target, layer="sites", driver="GPKG")


# Statewide Condition A layers for the screen (the demo's two catchments meet few sites): a
# grid of HUC12-sized catchments over the wetlands, each boundary as dense as a real one, in
# rows of basins: a catchment drains into the next one east, the last of a basin into its
# water. Every third basin's water is 303(d)-listed (category 5, phosphorus), every seventh's is
# category 4a; every fifth basin lies in a TMDL watershed (stormwater a source in every other).
CELL_M = 10_000.0  # a catchment's side (a HUC12 is about 100 km2)
EDGE_VERTICES = 1_000  # vertices along each side (a real HUC12 boundary has thousands)
BASIN = 4  # catchments in a row drained one into the next


def add_condition_a_layers(reference: Path) -> None:
    """Replace ``reference``'s catchments, impaired_waters and tmdl_watersheds (the demo's)
    with statewide ones over its wetlands (EPSG of the wetlands), in place."""
    import sqlite3
    from contextlib import closing

    import geopandas as gpd
    import numpy as np
    import pyogrio
    import shapely

    with closing(sqlite3.connect(str(reference))) as con:
        minx, maxx, miny, maxy = con.execute(
            "SELECT min(minx), max(maxx), min(miny), max(maxy) FROM rtree_wetlands_geom"
        ).fetchone()
    crs = pyogrio.read_info(str(reference), layer="wetlands")["crs"]
    columns = int(np.ceil((maxx - minx) / CELL_M))
    rows = int(np.ceil((maxy - miny) / CELL_M))
    cells, ids, drains, waters, sheds = [], [], [], {}, {}
    for row in range(rows):
        for column in range(columns):
            x, y = minx + column * CELL_M, miny + row * CELL_M
            box = shapely.box(x, y, x + CELL_M, y + CELL_M)
            cells.append(shapely.segmentize(box, CELL_M / EDGE_VERTICES))
            ids.append(f"C{row:03d}{column:03d}")
            basin = column // BASIN
            last = (column + 1) % BASIN == 0 or column + 1 == columns
            water = f"NY-{row:03d}-{basin:03d}"
            drains.append(water if last else f"C{row:03d}{column + 1:03d}")
            if last:
                waters[water] = shapely.LineString([(x + 100, y + 100), (x + CELL_M - 100, y + CELL_M - 100)])
            if basin % 5 == 0:
                first = minx + basin * BASIN * CELL_M
                sheds.setdefault(
                    (row, basin),
                    shapely.box(first, y, min(first + BASIN * CELL_M, minx + columns * CELL_M), y + CELL_M),
                )
    catchments = gpd.GeoDataFrame(
        {"catchment_id": ids, "name": ids, "drains_to": drains}, geometry=cells, crs=crs
    )
    number = {w: k for k, w in enumerate(waters)}
    listed = [w for w in waters if number[w] % 3 == 0 or number[w] % 7 == 0]
    impaired = gpd.GeoDataFrame(
        {
            "waterbody_id": listed,
            "name": listed,
            "pollutants": "Phosphorus",
            "listing_cycle": "2022",
            "category": ["5" if number[w] % 3 == 0 else "4a" for w in listed],
        },
        geometry=[waters[w] for w in listed],
        crs=crs,
    )
    keys = sorted(sheds)
    watersheds = gpd.GeoDataFrame(
        {
            "watershed_id": [f"TW-{r:03d}-{b:03d}" for r, b in keys],
            "name": [f"TW-{r:03d}-{b:03d}" for r, b in keys],
            "pollutants": "Phosphorus",
            "tmdl_id": [f"NY-TMDL-{k:04d}" for k in range(len(keys))],
            "stormwater_source": [k % 2 for k in range(len(keys))],
        },
        geometry=[shapely.segmentize(sheds[k], CELL_M / EDGE_VERTICES) for k in keys],
        crs=crs,
    )
    for layer, frame in (
        ("catchments", catchments),
        ("impaired_waters", impaired),
        ("tmdl_watersheds", watersheds),
    ):
        pyogrio.write_dataframe(frame, reference, layer=layer, driver="GPKG", append=False)
    print(
        f"  {len(catchments):,} catchments ({EDGE_VERTICES * 4:,} vertices each), "
        f"{len(impaired):,} 303(d) waters, {len(watersheds):,} TMDL watersheds",
        flush=True,
    )


# --- the steps, each run in its own process (python bench_screen.py --step NAME ARGS) -----------


def step_screen(sites: str, reference: str, rows_path: str | None = None) -> dict:
    from analysis.screen.operations import run_screen

    done = run_screen(sites, reference)
    rows = done.screen.rows
    if rows_path:  # for step_agree (after the timing: this process's clock has stopped)
        Path(rows_path).write_text(json.dumps({r["site_id"]: r for r in rows}))
    return {
        "sites": len(rows),
        "applies": sum(r["condition_a"] == "applies" for r in rows),
        "not_decided": sum(r["condition_a"] == "not decided" for r in rows),
        "wet": sum(r["wetland_status"] != "none" for r in rows),
        "wetland_acres": round(sum(r["wetland_acres"] for r in rows), 6),
        "wetlands_read": done.screen.reference.get("read", {}).get("wetlands"),
    }


def step_area_copy(reference: str) -> dict:
    """``swppp reference area-copy`` of the store: each layer kept also in the area CRS."""
    from analysis.profile import load_profile
    from analysis.reference.store import GeoPackageStore

    made = GeoPackageStore(reference).make_area_copies(load_profile().area_crs)
    return {"features": sum(c.features for c in made), "repaired": sum(c.repaired for c in made)}


AGREE_SITES = 20  # sites reviewed one by one (``swppp review``) against the screen's rows


def step_agree(sites: str, reference: str, rows_path: str) -> dict:
    """The screen's rows (``step_screen``'s file) against ``swppp review`` of AGREE_SITES
    random sites: Condition A's status, wetland and adjacent-area acres (to 1e-9 acres)."""
    import random

    from analysis.profile import load_profile
    from analysis.reference.read import open_reference
    from analysis.screen.screen import APPLIES, DOES_NOT_APPLY, NOT_DECIDED
    from analysis.screen.sites import read_sites
    from tests.analysis.test_screen import review_of

    profile = load_profile()
    rows = json.loads(Path(rows_path).read_text())
    found = read_sites(sites, profile.area_crs)
    opened = open_reference(reference)
    picked = random.Random(23).sample(range(len(found.ids)), min(AGREE_SITES, len(found.ids)))
    differ, statuses = [], set()
    for k in picked:
        a, measured = review_of(found.geometries[k], profile, opened)
        status = APPLIES if a.applies else NOT_DECIDED if not a.decided else DOES_NOT_APPLY
        row = rows[str(found.ids[k])]
        statuses.add(status)
        if (
            row["condition_a"] != status
            or abs(row["wetland_acres"] - measured["wetland_acres"]) > 1e-9
            or abs(row["adjacent_area_acres"] - measured["wetland_adjacent_area_acres"]) > 1e-9
        ):
            differ.append(str(found.ids[k]))
    return {"checked": len(picked), "differ": differ, "statuses": sorted(statuses)}


# The reference's polygon layers, each met with every site by the screen and by the floor.
POLYGON_LAYERS = ("catchments", "tmdl_watersheds", "wetlands")


def step_floor(sites: str, reference: str) -> dict:
    import numpy as np
    import shapely

    from analysis.crs import crs_of, to_crs
    from analysis.io.geopackage import read_geopackage_boxes
    from analysis.io.vector import layer_crs, read_layer
    from analysis.overlay import shared_parts
    from analysis.profile import load_profile
    from analysis.reference.read import boxes_in_crs

    area = crs_of(load_profile().area_crs)
    geoms = np.asarray(read_layer(sites, "sites").frame.geometry.values, dtype=object)
    tree = shapely.STRtree(geoms)
    out = {"pairs": 0}
    for layer in POLYGON_LAYERS:  # the same overlays as the screen's, nothing decided
        crs = layer_crs(reference, layer)
        boxes = boxes_in_crs(shapely.bounds(geoms), area, crs)
        shapes = read_geopackage_boxes(reference, layer, boxes)
        shapes = np.asarray(to_crs(shapes.set_crs(crs), area).geometry.values, dtype=object)
        s, f = tree.query(shapes, predicate="intersects")[::-1]
        out[f"{layer}_read"] = len(shapes)
        out["pairs"] += len(s)
        # a site inside a polygon is itself (the screen's shortcut, so as not to flatter it)
        out[f"{layer}_acres"] = float(shapely.area(shared_parts(shapes[f], geoms[s])).sum())
    return out


def step_true_floor(sites: str, reference: str) -> dict:
    """The floor independent of the project's read path (issue 37, goal 3): for each polygon
    layer, the sites moved into the layer's CRS (a few thousand polygons, not the layer's
    millions of vertices into the area CRS), the features meeting their boxes read through the
    R-tree as WKB (no frame), one shapely STRtree query, and only the shared pieces moved back
    into the area CRS for their areas. The same pairs and areas as the screen's, nothing else."""
    import numpy as np
    import pyogrio
    import shapely
    from pyproj import CRS, Transformer

    from analysis.io.geopackage import geopackage_box_rows
    from analysis.io.vector import layer_crs
    from analysis.profile import load_profile

    area = CRS.from_user_input(load_profile().area_crs)
    frame = pyogrio.read_dataframe(sites, layer="sites")
    site_crs = CRS.from_user_input(frame.crs)
    geoms = np.asarray(frame.geometry.values, dtype=object)
    if not site_crs.equals(area):
        to_area = Transformer.from_crs(site_crs, area, always_xy=True)
        geoms = shapely.transform(geoms, lambda xy: np.column_stack(to_area.transform(xy[:, 0], xy[:, 1])))
    out = {"pairs": 0}
    for layer in POLYGON_LAYERS:
        crs = CRS.from_user_input(layer_crs(reference, layer))
        there, back = (
            Transformer.from_crs(area, crs, always_xy=True),
            Transformer.from_crs(crs, area, always_xy=True),
        )
        moved = shapely.transform(
            shapely.segmentize(geoms, 50.0),
            lambda xy, t=there: np.column_stack(t.transform(xy[:, 0], xy[:, 1])),
        )
        found = geopackage_box_rows(reference, layer, shapely.bounds(moved))
        shapes = found[3] if found else np.array([], dtype=object)
        tree = shapely.STRtree(moved)
        s, f = tree.query(shapes, predicate="intersects")[::-1]
        pieces = shapely.intersection(shapes[f], moved[s])
        pieces = shapely.transform(
            pieces, lambda xy, t=back: np.column_stack(t.transform(xy[:, 0], xy[:, 1]))
        )
        out[f"{layer}_read"] = len(shapes)
        out["pairs"] += len(s)
        out[f"{layer}_acres"] = float(shapely.area(pieces).sum())
    return out


def same_areas(one: dict, other: dict) -> bool:
    """Whether two steps found the same shared areas in each polygon layer (``LAYER_acres``: in
    the area CRS's units, to one part in a million)."""
    pairs = [(one.get(f"{k}_acres", -1), other.get(f"{k}_acres", 0)) for k in POLYGON_LAYERS]
    return all(abs(a - b) <= 1e-6 * max(1.0, b) for a, b in pairs)


def step_import(source: str, target: str) -> dict:
    from analysis.reference.operations import import_reference

    done = import_reference("wetlands", f"{source}|layername=wetlands", target, source_date="2026-01-01")
    return {"features": done["version"]["feature_count"]}


def step_pg_screen(sites: str, conninfo: str) -> dict:
    return step_screen(sites, conninfo)


def step_pg_area_copy(conninfo: str, drop: str = "") -> dict:
    """``swppp reference area-copy`` of the PostGIS schema (``drop``: ``--drop``)."""
    from analysis.profile import load_profile
    from analysis.reference.postgis import PostgisStore

    store = PostgisStore(conninfo)
    if drop:
        return {"dropped": store.drop_area_copies()}
    made = store.make_area_copies(load_profile().area_crs)
    return {"features": sum(c.features for c in made), "repaired": sum(c.repaired for c in made)}


def step_pg_screen_explained(sites: str, conninfo: str, plans: str) -> dict:
    """The PostGIS screen with each of its spatial queries (a SELECT or WITH naming a PostGIS
    function) explained first, ``EXPLAIN (ANALYZE, BUFFERS)`` with the same parameters, the
    plans of those that ran 100 ms or more written to ``plans`` (not timed: each such query
    runs twice)."""
    import psycopg

    run = psycopg.Connection.execute
    found: list[str] = []

    def execute(con, query, params=None, **kwargs):
        text = query if isinstance(query, str) else query.as_string(con)
        if text.lstrip().upper().startswith(("SELECT", "WITH")) and "ST_" in text:
            rows = run(con, "EXPLAIN (ANALYZE, BUFFERS) " + text, params).fetchall()
            plan = "\n".join(r[0] for r in rows)
            seconds = float(plan.rsplit("Execution Time: ", 1)[-1].split()[0]) / 1000
            if seconds >= 0.1:
                found.append(f"-- {seconds:.2f} s: {' '.join(text.split())[:300]}\n{plan}\n")
        return run(con, query, params, **kwargs)

    psycopg.Connection.execute = execute
    try:
        out = step_screen(sites, conninfo)
    finally:
        psycopg.Connection.execute = run
    Path(plans).write_text("\n".join(found), encoding="utf-8")
    return out


def step_pg_import(source: str, conninfo: str) -> dict:
    from analysis.reference.operations import import_reference

    for layer in ("catchments", "tmdl_watersheds", "impaired_waters"):
        import_reference(layer, f"{source}|layername={layer}", conninfo, source_date="2026-01-01")
    return step_import(source, conninfo)


def _sql_join_setup(con, sites: str, parallel: int) -> int:
    """The sites as a plain SQL user would have them: a table in each polygon layer's SRID
    with a GiST index (loaded with COPY, analysed); returns the area CRS's SRID."""
    import pyogrio
    import shapely

    from analysis.crs import epsg_code
    from analysis.profile import load_profile

    area = epsg_code(load_profile().area_crs)
    frame = pyogrio.read_dataframe(sites, layer="sites").to_crs(epsg=area)
    con.execute(f"SET max_parallel_workers_per_gather = {int(parallel)}")
    con.execute("SET jit = off")
    con.execute("CREATE TEMP TABLE sites (k integer, geom geometry)")
    with con.cursor() as cur, cur.copy("COPY sites (k, geom) FROM STDIN") as copy:
        ewkb = shapely.to_wkb(shapely.set_srid(frame.geometry.values, area), hex=True, include_srid=True)
        for k, text in enumerate(ewkb):
            copy.write_row((k, text))
    for layer in POLYGON_LAYERS:
        srid = con.execute(
            "SELECT srid FROM geometry_columns WHERE f_table_name = %s AND f_geometry_column = 'geom'",
            (layer,),
        ).fetchone()[0]
        con.execute(
            f"CREATE TEMP TABLE sites_{layer} AS "
            f"SELECT k, ST_Transform(ST_Segmentize(geom, 50), {int(srid)}) AS g FROM sites"
        )
        con.execute(f"CREATE INDEX ON sites_{layer} USING gist (g)")
        con.execute(f"ANALYZE sites_{layer}")
    return int(area)


def _sql_join_query(layer: str, schema: str, area: int) -> str:
    """The plain join: the layer's GiST index met with the sites' (``&&``, then
    ``ST_Intersects``), each shared piece moved into the area CRS for its area."""
    return (
        f"SELECT count(*), sum(ST_Area(ST_Transform(ST_Intersection(f.geom, s.g), {area}))) "
        f'FROM sites_{layer} s JOIN "{schema}"."{layer}" f ON f.geom && s.g AND ST_Intersects(f.geom, s.g)'
    )


def step_pg_join(sites: str, conninfo: str, parallel: str = "2", explain: str = "") -> dict:
    """The anchor of the PostGIS screen (issue 37, goal 4): a plain SQL join with GiST indexes
    on the same data, the sites uploaded and indexed first (counted in the time), parallel
    workers allowed (``parallel``); with ``explain`` (a file), each query's
    ``EXPLAIN (ANALYZE, BUFFERS)`` written there (after the timed queries, in this process)."""
    import psycopg

    out: dict = {"pairs": 0}
    with psycopg.connect(conninfo, autocommit=True) as con:
        area = _sql_join_setup(con, sites, int(parallel))
        schema = con.execute("SELECT current_schema()").fetchone()[0]
        for layer in POLYGON_LAYERS:
            pairs, acres = con.execute(_sql_join_query(layer, schema, area)).fetchone()
            out["pairs"] += pairs
            out[f"{layer}_acres"] = float(acres or 0)
        if explain:
            with open(explain, "w", encoding="utf-8") as plans:
                for layer in POLYGON_LAYERS:
                    rows = con.execute(
                        "EXPLAIN (ANALYZE, BUFFERS) " + _sql_join_query(layer, schema, area)
                    ).fetchall()
                    plans.write(f"-- {layer}\n" + "\n".join(r[0] for r in rows) + "\n\n")
    return out


STEPS = {
    "screen": step_screen,
    "area_copy": step_area_copy,
    "agree": step_agree,
    "floor": step_floor,
    "true_floor": step_true_floor,
    "import": step_import,
    "pg_screen": step_pg_screen,
    "pg_area_copy": step_pg_area_copy,
    "pg_import": step_pg_import,
    "pg_join": step_pg_join,
    "pg_screen_explained": step_pg_screen_explained,
}


def measured(command: list[str], env: dict | None = None) -> dict:
    """Run ``command``; its wall time, peak memory (MB) and, for a step, its JSON answer."""
    # GNU time measures the command itself (a child forked from here would count this
    # process's memory too, up to its exec).
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss:
        timer = ["/usr/bin/time", "-f", "%M %U %S", "-o", rss.name] if os.path.exists("/usr/bin/time") else []
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(
            timer + command, capture_output=True, text=True, env={**os.environ, **(env or {})}, check=False
        )
        seconds = time.perf_counter() - start
        kilobytes = Path(rss.name).read_text().strip().splitlines()[-1:] if timer else []
    out, err = done.stdout, done.stderr
    fields = kilobytes[0].split() if kilobytes else []
    measured_ok = len(fields) == 3 and fields[0].isdigit()
    peak = float(fields[0]) / 1024 if measured_ok else float("nan")
    # CPU seconds (user + system) as well: on a shared machine the wall time follows the load.
    cpu = float(fields[1]) + float(fields[2]) if measured_ok else float("nan")
    if not timer:  # no GNU time (a bare root filesystem): the kernel's account of the children
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        peak = after.ru_maxrss / 1024  # the largest child's so far: an upper bound for this one
    result = {"seconds": seconds, "cpu": cpu, "peak_mb": peak, "ok": done.returncode == 0}
    if not result["ok"]:
        result["error"] = (err.strip().splitlines() or ["failed"])[-1]
    elif out.strip().startswith("{"):
        result.update(json.loads(out.strip().splitlines()[-1]))
    return result


def area_copy_screen(reference: Path, sites: Path, work: Path) -> dict:
    """The screen against a copy of ``reference`` that keeps its layers also in the area CRS
    (made once beside it, its making timed and shown), and whether its rows are those of the
    screen without (``work / "rows.json"``)."""
    copied = reference.with_name(reference.stem + "_area.gpkg")
    if not copied.is_file():
        partial = copied.with_suffix(".partial.gpkg")
        shutil.copyfile(reference, partial)
        made = run_step("area_copy", str(partial))
        show(
            "area copies made (swppp reference area-copy)",
            made,
            note=f"{made.get('features')} features moved and indexed, {made.get('repaired')} repaired",
        )
        partial.rename(copied)
    through = run_step("screen", str(sites), str(copied), str(work / "rows_area.json"))
    if through.get("ok"):
        through["same_rows"] = (work / "rows_area.json").read_text() == (work / "rows.json").read_text()
    return through


def run_step(name: str, *args: str) -> dict:
    return measured([sys.executable, __file__, "--step", name, *args])


@contextlib.contextmanager
def postgis(keep: str | None = None):
    """A PostgreSQL + PostGIS for this run only (unix socket in a temporary folder), or None.

    With ``keep`` (a folder) the server's data stays in that folder after the run and is
    started again from it next time (the reference imported once, see ``--pg-keep``).
    """
    from tests.postgis import _as_server_user, _binaries

    bin_dir = _binaries()
    try:
        import psycopg
    except ImportError:
        psycopg = None
    if bin_dir is None or psycopg is None:
        yield None
        return
    folder = os.path.abspath(keep) if keep else tempfile.mkdtemp(prefix="swppp-bench-pg-")
    os.makedirs(folder, exist_ok=True)
    if os.geteuid() == 0:
        import pwd

        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
    data, port = os.path.join(folder, "data"), 54331
    fresh = not os.path.isdir(data)
    try:
        if fresh:
            subprocess.run(
                _as_server_user(
                    [
                        str(bin_dir / "initdb"),
                        "-D",
                        data,
                        "-U",
                        "postgres",
                        "--auth=trust",
                        "-E",
                        "UTF8",
                        "--no-sync",
                        "--locale=C",
                    ]
                ),
                check=True,
                capture_output=True,
                timeout=120,
            )
        options = f"-c listen_addresses='' -k {folder} -p {port} -c fsync=off"
        subprocess.run(
            _as_server_user(
                [
                    str(bin_dir / "pg_ctl"),
                    "-D",
                    data,
                    "-l",
                    os.path.join(folder, "log"),
                    "-o",
                    options,
                    "-w",
                    "start",
                ]
            ),
            check=True,
            capture_output=True,
            timeout=120,
        )
        conninfo = f"host={folder} port={port} user=postgres"
        if fresh:
            with psycopg.connect(f"{conninfo} dbname=postgres", autocommit=True) as con:
                con.execute("CREATE DATABASE bench")
            with psycopg.connect(f"{conninfo} dbname=bench", autocommit=True) as con:
                con.execute("CREATE EXTENSION postgis")
        yield f"{conninfo} dbname=bench"
    finally:
        # A kept server is stopped cleanly (its data is reused), a temporary one at once.
        subprocess.run(
            _as_server_user(
                [str(bin_dir / "pg_ctl"), "-D", data, "-m", "fast" if keep else "immediate", "-w", "stop"]
            ),
            check=False,
            capture_output=True,
            timeout=120,
        )
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)


def pg_imported(conninfo: str) -> bool:
    """Whether the bench database already holds the four layers (a kept server's earlier run)."""
    import psycopg

    with psycopg.connect(conninfo) as con:
        found = con.execute(
            "SELECT count(*) FROM geometry_columns WHERE f_table_name = ANY(%s)",
            (["catchments", "tmdl_watersheds", "impaired_waters", "wetlands"],),
        ).fetchone()
    return bool(found and found[0] == 4)


def server_cpu(conninfo: str) -> float:
    """CPU seconds (user + system) the PostgreSQL of ``conninfo`` (a bench server: its socket
    folder holds ``data``) has used so far: the postmaster, its live backends and those ended."""
    folder = conninfo.split("host=", 1)[1].split()[0]
    pid = Path(folder, "data", "postmaster.pid").read_text().split()[0]
    tick = os.sysconf("SC_CLK_TCK")

    def fields(stat: str) -> list[str]:
        return stat.rsplit(")", 1)[1].split()

    own = fields(Path(f"/proc/{pid}/stat").read_text())
    total = sum(int(x) for x in own[11:15])  # utime, stime, cutime, cstime
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, IndexError):
            child = fields(stat.read_text())
            if child[1] == pid:
                total += int(child[11]) + int(child[12])
    return total / tick


def explain_postgis(sites: Path, conninfo: str, folder: Path) -> None:
    """``EXPLAIN (ANALYZE, BUFFERS)`` of the plain SQL join's queries and of each of the PostGIS
    screen's spatial queries that ran 100 ms or more, written to ``folder`` (untimed runs, after
    the timed ones)."""
    folder.mkdir(parents=True, exist_ok=True)
    run_step("pg_join", str(sites), conninfo, "2", str(folder / "pg_join_plans.txt"))
    run_step("pg_screen_explained", str(sites), conninfo, str(folder / "pg_screen_plans.txt"))
    print(f"plans: {folder / 'pg_join_plans.txt'}, {folder / 'pg_screen_plans.txt'}")


def qgis_join(sites: Path, reference: Path, work: Path) -> dict:
    # Debian's qgis_process wrapper passes --noversioncheck, which qgis_process 3.22 refuses.
    program = shutil.which("qgis_process.bin") or shutil.which("qgis_process")
    if program is None:
        return {"ok": False, "error": "qgis_process is absent"}
    env = {"QT_QPA_PLATFORM": "offscreen", "PROJ_DATA": "/usr/share/proj"}
    start_up = measured([program, "help", "native:joinattributesbylocation"], env)
    # One join per polygon layer the screen meets the sites with (as a user would run them).
    joins = [
        measured(
            [
                program,
                "run",
                "native:joinattributesbylocation",
                "--",
                f"INPUT={sites}|layername=sites",
                f"JOIN={reference}|layername={layer}",
                "PREDICATE=0",
                "METHOD=0",
                f"OUTPUT={work / f'qgis_join_{layer}.gpkg'}",
            ],
            env,
        )
        for layer in POLYGON_LAYERS
    ]
    failed = [j for j in joins if not j["ok"]]
    if failed:
        return failed[0]
    return {
        "ok": True,
        "seconds": sum(j["seconds"] for j in joins),
        "cpu": sum(j["cpu"] for j in joins),
        "peak_mb": max(j["peak_mb"] for j in joins),
        "start_up": start_up["seconds"] * len(joins),
    }


def ogr2ogr(reference: Path, work: Path) -> dict:
    if shutil.which("ogr2ogr") is None:
        return {"ok": False, "error": "ogr2ogr is absent"}
    return measured(["ogr2ogr", "-f", "GPKG", str(work / "ogr2ogr.gpkg"), str(reference), "wetlands"])


def show(label: str, result: dict, base: dict | None = None, note: str = "") -> None:
    if not result.get("ok"):
        print(f"{label:<44} skipped: {result.get('error')}")
        return
    ratio = (
        f"  {result['seconds'] / base['seconds']:5.1f}x (CPU {result['cpu'] / base['cpu']:.1f}x)"
        if base and base.get("ok")
        else ""
    )
    print(
        f"{label:<44} {result['seconds']:8.2f} s  CPU {result['cpu']:7.2f} s  "
        f"{result['peak_mb']:6.0f} MB{ratio}  {note}",
        flush=True,
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--polygons", type=int, default=200_000)
    parser.add_argument("--sites", type=int, default=10_000)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, a temporary folder")
    parser.add_argument("--skip-qgis", action="store_true")
    parser.add_argument("--skip-postgis", action="store_true")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument(
        "--import-only", action="store_true", help="only the import against ogr2ogr (on this Python's stack)"
    )
    parser.add_argument(
        "--pg-keep",
        metavar="DIR",
        help="keep the PostgreSQL of the PostGIS steps in DIR and reuse it (and "
        "the reference imported there) on the next run",
    )
    parser.add_argument(
        "--pg-only",
        action="store_true",
        help="only the PostGIS screen (with the GeoPackage screen to compare)",
    )
    parser.add_argument(
        "--explain",
        metavar="DIR",
        help="write EXPLAIN (ANALYZE, BUFFERS) of the PostGIS screen's queries and of the plain SQL "
        "join's into DIR (untimed runs after the timed ones)",
    )
    parser.add_argument("--step", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.step:
        print(json.dumps(STEPS[args.step[0]](*args.step[1:])))
        return 0
    if not bench_reference.NWI.is_file():
        print(
            f"{bench_reference.NWI} is absent: SWPPP_NWI_EXTRACT names an NWI state zip to tile",
            file=sys.stderr,
        )
        return 2
    with contextlib.ExitStack() as stack:
        if args.smoke:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="swppp-bench-")))
            args.polygons, args.sites = 3_000, 50
        else:
            folder = BENCH
        folder.mkdir(parents=True, exist_ok=True)
        reference = folder / f"reference_{args.polygons // 1000}k_statewide.gpkg"
        if not reference.is_file():
            built = folder / f"reference_{args.polygons // 1000}k.gpkg"
            if not built.is_file():
                bench_reference.build(built, args.polygons)
            partial = reference.with_suffix(".partial.gpkg")
            shutil.copyfile(built, partial)
            add_condition_a_layers(partial)
            partial.rename(reference)
        # the sites are spread over this reference's extent: one file per reference size
        sites = folder / f"sites_{args.sites}_{reference.stem.split('_')[1]}.gpkg"
        if args.pg_only:
            args.skip_qgis = args.skip_import = True
        if args.import_only:
            args.skip_postgis = args.skip_qgis = True
        elif not sites.is_file():
            build_sites(reference, sites, args.sites)
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="swppp-bench-work-")))
        print(
            f"{args.sites:,} five-acre sites against {args.polygons:,}+ wetland polygons "
            f"({reference.name}); Python {sys.version.split()[0]} ({sys.executable}); "
            f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        screen: dict = {"ok": False, "error": "--import-only"}
        through: dict = {"ok": False}
        if not args.import_only:
            screen = run_step("screen", str(sites), str(reference), str(work / "rows.json"))
            floor = (
                run_step("floor", str(sites), str(reference))
                if not args.pg_only
                else {"ok": False, "error": "--pg-only"}
            )
            show(
                "screen (GeoPackage)",
                screen,
                floor,
                f"x the floor; Condition A {screen.get('applies')} applies, "
                f"{screen.get('not_decided')} not decided; {screen.get('wet')} wetland, "
                f"{screen.get('wetlands_read')} wetlands read",
            )
            if screen.get("ok") and not args.pg_only:
                agree = run_step("agree", str(sites), str(reference), str(work / "rows.json"))
                show(
                    "screen = swppp review, site by site",
                    agree,
                    note=f"{agree.get('checked')} random sites reviewed one by one "
                    f"({', '.join(agree.get('statuses', []))}): agrees with the review: "
                    f"{agree.get('ok') and not agree.get('differ')} {agree.get('differ') or ''}",
                )
            show(
                "floor via the project's read path",
                floor,
                note=", ".join(f"{floor.get(layer + '_read')} {layer}" for layer in POLYGON_LAYERS)
                + f" read, {floor.get('pairs')} pairs",
            )
            if not args.pg_only:
                true_floor = run_step("true_floor", str(sites), str(reference))
                same = same_areas(true_floor, floor)
                show(
                    "true floor: sites to each layer's CRS",
                    true_floor,
                    note=f"{true_floor.get('pairs')} pairs; the same areas as the floor above: {same}",
                )
                show("screen (GeoPackage) / true floor", screen, true_floor, "x the true floor")
                through = area_copy_screen(reference, sites, work)
                show(
                    "screen through the area copies",
                    through,
                    true_floor,
                    f"x the true floor; the rows of the screen without: {through.get('same_rows')}",
                )
                show("screen through the area copies / the screen", through, screen, "x the screen")
        if not args.skip_postgis:
            with postgis(args.pg_keep) as conninfo:
                if conninfo is None:
                    show("screen (PostGIS)", {"ok": False, "error": "no PostgreSQL/PostGIS/psycopg"})
                else:
                    if not (args.pg_keep and pg_imported(conninfo)):
                        imported = run_step("pg_import", str(reference), conninfo)
                        show("reference import into PostGIS", imported)
                    run_step("pg_area_copy", conninfo, "drop")  # kept from an earlier run: not now
                    before = server_cpu(conninfo)
                    pg = run_step("pg_screen", str(sites), conninfo)
                    # The SQL runs in the server: its CPU counts with the client's.
                    pg["cpu"] += server_cpu(conninfo) - before
                    agrees = (
                        all(pg.get(k) == screen.get(k) for k in ("applies", "not_decided", "wet"))
                        and abs(pg.get("wetland_acres", -1) - screen.get("wetland_acres", 0)) < 1e-3
                    )
                    show(
                        "screen (PostGIS, SQL in the database)",
                        pg,
                        screen,
                        f"x the GeoPackage screen; agrees: {agrees}; CPU = client + server",
                    )
                    for workers in (2, 0):
                        before = server_cpu(conninfo)
                        join = run_step("pg_join", str(sites), conninfo, str(workers))
                        join["cpu"] += server_cpu(conninfo) - before
                        show(
                            f"plain SQL join, GiST, {workers} parallel workers",
                            join,
                            note=f"{join.get('pairs')} pairs (the floor's {floor.get('pairs')}); the same "
                            "areas as the floor: "
                            + (str(same_areas(join, floor)) if floor.get("ok") else "no floor run")
                            + "; CPU = client + server",
                        )
                        show(f"screen (PostGIS) / SQL join ({workers} workers)", pg, join, "x the SQL join")
                    before = server_cpu(conninfo)
                    made = run_step("pg_area_copy", conninfo)
                    made["cpu"] += server_cpu(conninfo) - before
                    show(
                        "area copies made in PostGIS (by the server)",
                        made,
                        note=f"{made.get('features')} features moved and indexed; CPU = client + server",
                    )
                    before = server_cpu(conninfo)
                    pg_through = run_step("pg_screen", str(sites), conninfo)
                    pg_through["cpu"] += server_cpu(conninfo) - before
                    same = all(
                        pg_through.get(k) == pg.get(k)
                        for k in ("applies", "not_decided", "wet", "wetland_acres")
                    )
                    show(
                        "screen (PostGIS) through the area copies",
                        pg_through,
                        join,
                        f"x the SQL join (0 workers); agrees with the screen without: {same}",
                    )
                    if args.explain:
                        explain_postgis(sites, conninfo, Path(args.explain))
                    run_step("pg_area_copy", conninfo, "drop")
        if not args.skip_qgis:
            join = qgis_join(sites, reference, work)
            show(
                "QGIS native:joinattributesbylocation",
                join,
                screen,
                f"x the screen ({len(POLYGON_LAYERS)} joins, one a layer; qgis_process "
                f"start-ups {join.get('start_up', 0):.2f} s included)",
            )
            if through.get("ok"):
                show("QGIS joins / the screen through the area copies", join, through, "x")
        if not args.skip_import:
            copy = ogr2ogr(reference, work)
            show("ogr2ogr copy of the wetlands layer", copy)
            imported = run_step("import", str(reference), str(work / "imported.gpkg"))
            show("swppp reference import wetlands", imported, copy, "x ogr2ogr")
        print(f"load average at the end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
