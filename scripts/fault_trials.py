"""Fault and concurrency trials of the reference store (issue 36, "Faults and concurrency").

Kills: `swppp reference import` is stopped by SIGTERM or SIGINT (alternately) at a random
moment; after each, the store holds the previous version whole (or, where the import had
finished, the new one whole), its integrity check passes, and no temporary file (journal,
staged file) or staged table is left. Races: three imports at once (two of `wetlands`, one of
`catchments`) into a new store and into an existing one: none hangs, none is lost (every
import that said it landed is in the store), every loser is told (exit 2, "swppp: error:",
naming the layer). GeoPackage always; PostGIS with ``--postgis URI``.

    python scripts/fault_trials.py [--smoke] [--postgis URI]

prints the figures (trials, intact, leftovers, exit statuses, losers told); exit 1 where any
trial failed. ``--smoke`` runs a few of each (tests/analysis/test_fuzz_store.py runs it).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

REFERENCE = ROOT / "test_data" / "demo_reference.gpkg"
X0, Y0 = 582_737.0, 913_239.0  # the village, EPSG:2260 (US survey feet)
HANG_S = 180  # a trial not over by then is counted as hung (a deadlock)


def _sources(folder: Path, features: int) -> dict:
    """Import sources: two wetlands layers (``features`` and ten features) and a catchments layer."""
    import geopandas as gpd
    from shapely.geometry import box

    def wetlands(count: int, tag: str):
        return gpd.GeoDataFrame(
            {
                "wetland_id": [f"{tag}-{i}" for i in range(count)],
                "source": ["NWI"] * count,
                "wetland_class": ["PFO1A"] * count,
                "regulated": [0] * count,
                "adjacent_area_ft": [100.0] * count,
            },
            geometry=[
                box(X0 + 7 * (i % 300), Y0 + 7 * (i // 300), X0 + 7 * (i % 300) + 5, Y0 + 7 * (i // 300) + 5)
                for i in range(count)
            ],
            crs="EPSG:2260",
        )

    catchments = gpd.GeoDataFrame(
        {"catchment_id": ["C-1"], "name": ["C"], "drains_to": ["X"]},
        geometry=[box(X0, Y0, X0 + 500, Y0 + 500)],
        crs="EPSG:2260",
    )
    out = {}
    for name, frame, layer in (
        ("seed", wetlands(5, "Z"), "wetlands"),
        ("big", wetlands(features, "B"), "wetlands"),
        ("small", wetlands(10, "S"), "wetlands"),
        ("catchments", catchments, "catchments"),
    ):
        path = folder / f"{name}.gpkg"
        frame.to_file(path, layer=layer, driver="GPKG")
        out[name] = (layer, f"{path}|layername={layer}")
    return out


def _import(layer: str, source: str, target: str, quiet: bool = True) -> subprocess.Popen:
    argv = [sys.executable, "-m", "analysis.cli", "reference", "import", layer, source, "--reference", target]
    return subprocess.Popen(
        argv + (["--quiet"] if quiet else []),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "SWPPP_DEBUG": ""},
    )


def _finish(process: subprocess.Popen) -> tuple:
    """(exit status or "hung", standard error)."""
    try:
        _, err = process.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, err = process.communicate()
        return "hung", err
    return process.returncode, err


def _versions(target: str) -> dict:
    """{layer: [versions]} and {layer: features in its table} of a store."""
    from analysis.reference.connect import open_store

    store = open_store(target, None)
    found: dict = collections.defaultdict(list)
    for row in store.versions():
        found[row.layer].append((row.version, row.feature_count))
    return found


def _gpkg_state(store: Path) -> tuple:
    """(integrity ok, {layer: rows in its table}, leftover files beside it)."""
    from analysis.io.geopackage import gpkg_table, rtree_disagreement

    leftovers = sorted(p.name for p in store.parent.iterdir() if p.name != store.name)
    if not store.exists():
        return True, {}, leftovers
    with closing(sqlite3.connect(f"file:{store}?mode=ro", uri=True)) as con:
        ok = con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        counts = {}
        for (table,) in con.execute("SELECT table_name FROM gpkg_contents WHERE data_type = 'features'"):
            counts[table] = con.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0]
            found = gpkg_table(con, table)
            ok = ok and (found is None or rtree_disagreement(con, table, "geom", found[2]) is None)
    return ok, counts, leftovers


def _pg_state(target: str, schema: str) -> tuple:
    from analysis.reference import postgis

    store = postgis.PostgisStore(target, schema)
    with postgis.connect(store.conninfo) as con:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = %s", (schema,)
            ).fetchall()
        ]
        counts = {
            t: con.execute(store.sql.SQL("SELECT count(*) FROM {}").format(store.ids.table(t))).fetchone()[0]
            for t in tables
            if t in ("wetlands", "catchments")
        }
    return True, counts, sorted(t for t in tables if "__v" in t)


def _whole(versions: dict, counts: dict, layer: str) -> bool:
    """The layer's current version is in its table whole."""
    if layer not in versions:
        return layer not in counts or counts[layer] == 0
    return counts.get(layer) == versions[layer][-1][1]


def kills(kind: str, trials: int, sources: dict, work: Path, postgis: str | None) -> dict:
    layer, big = sources["big"]
    figures: dict = {
        "trials": 0,
        "intact": 0,
        "leftovers": 0,
        "statuses": collections.Counter(),
        "landed": 0,
        "landed_but_said_stopped": 0,
    }
    durations = []
    for trial in range(trials):
        folder = Path(tempfile.mkdtemp(dir=work))
        if kind == "gpkg":
            store = folder / "store.gpkg"
            shutil.copy(REFERENCE, store)
            target = str(store)
        else:
            schema = f"k_{uuid.uuid4().hex[:10]}"
            target = f"{postgis}{'&' if '?' in postgis else '?'}schema={schema}"
            assert _finish(_import(*sources["seed"], target))[0] == 0
        before = _versions(target)[layer]
        if not durations:  # one whole import measures how long the kills may wait
            started = time.monotonic()
            probe = Path(tempfile.mkdtemp(dir=work)) / "probe.gpkg"
            if kind == "gpkg":
                shutil.copy(REFERENCE, probe)
            elif postgis:
                probe = Path(f"{postgis}{'&' if '?' in postgis else '?'}schema=p_{uuid.uuid4().hex[:10]}")
            _finish(_import(layer, big, str(probe)))
            durations.append(time.monotonic() - started)
        process = _import(layer, big, target)
        time.sleep(random.uniform(0.2, durations[0] * 1.1))
        sent = signal.SIGTERM if trial % 2 == 0 else signal.SIGINT
        process.send_signal(sent)
        status, _err = _finish(process)
        after = _versions(target)
        if kind == "gpkg":
            ok, counts, left = _gpkg_state(Path(target))
        else:
            ok, counts, left = _pg_state(postgis or "", schema)
        landed = len(after[layer]) == len(before) + 1
        kept = after[layer] == before or (landed and after[layer][:-1] == before)
        figures["trials"] += 1
        figures["statuses"][f"{sent.name}:{status}"] += 1
        figures["landed"] += landed
        intact = bool(ok and kept and _whole(after, counts, layer) and (landed or status != 0))
        figures["intact"] += intact
        # Stopped (130/143, "nothing was written") though the import had committed: the moment
        # between the commit and the end of the run.
        figures["landed_but_said_stopped"] += landed and status in (130, 143)
        figures["leftovers"] += bool(left)
        if not intact or left:
            print(
                f"  {kind} kill {trial} ({sent.name}, exit {status}): integrity {ok}, versions "
                f"{before} -> {after[layer]}, rows {counts.get(layer)}, left {left}: {_err.strip()[-300:]}",
                flush=True,
            )
        shutil.rmtree(folder, ignore_errors=True)
    figures["import_s"] = round(durations[0], 2) if durations else None
    return figures


def races(kind: str, trials: int, sources: dict, work: Path, postgis: str | None, new: bool) -> dict:
    figures: dict = {
        "trials": 0,
        "lost": 0,
        "hung": 0,
        "losers": 0,
        "losers_told": 0,
        "statuses": collections.Counter(),
    }
    jobs = [sources["big"], sources["small"], sources["catchments"]]
    for _trial in range(trials):
        folder = Path(tempfile.mkdtemp(dir=work))
        if kind == "gpkg":
            store = folder / "store.gpkg"
            if not new:
                shutil.copy(REFERENCE, store)
            target = str(store)
        else:
            schema = f"r_{uuid.uuid4().hex[:10]}"
            target = f"{postgis}{'&' if '?' in postgis else '?'}schema={schema}"
            if not new:
                assert _finish(_import(*sources["seed"], target))[0] == 0
        before = _versions(target) if (kind == "postgis" or Path(target).exists()) else {}
        with ThreadPoolExecutor(3) as pool:
            results = list(pool.map(lambda job, into=target: _finish(_import(job[0], job[1], into)), jobs))
        after = _versions(target)
        figures["trials"] += 1
        for (layer, _), (status, err) in zip(jobs, results):
            figures["statuses"][str(status)] += 1
            figures["hung"] += status == "hung"
            if status != 0 and status != "hung":
                figures["losers"] += 1
                figures["losers_told"] += bool(status == 2 and "swppp: error:" in err and layer in err)
        for layer in ("wetlands", "catchments"):
            landed = sum(1 for (lay, _), (s, _) in zip(jobs, results) if lay == layer and s == 0)
            figures["lost"] += len(after.get(layer, [])) != len(before.get(layer, [])) + landed
        shutil.rmtree(folder, ignore_errors=True)
    return figures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a few trials of each")
    parser.add_argument("--postgis", metavar="URI", help="a PostGIS database to run its trials in too")
    args = parser.parse_args(argv)
    kill_n, race_n, pg_race_n = (2, 2, 1) if args.smoke else (30, 50, 10)
    random.seed(36)
    failed = False
    with tempfile.TemporaryDirectory(prefix="swppp-faults-") as tmp:
        work = Path(tmp)
        sources = _sources(work, 800 if args.smoke else 20000)
        runs = [
            ("kills, GeoPackage", lambda: kills("gpkg", kill_n, sources, work, None)),
            ("3 imports at once, new GeoPackage", lambda: races("gpkg", race_n, sources, work, None, True)),
            (
                "3 imports at once, existing GeoPackage",
                lambda: races("gpkg", race_n, sources, work, None, False),
            ),
        ]
        if args.postgis:
            runs += [
                ("kills, PostGIS", lambda: kills("postgis", kill_n, sources, work, args.postgis)),
                (
                    "3 imports at once, new PostGIS schema",
                    lambda: races("postgis", pg_race_n, sources, work, args.postgis, True),
                ),
                (
                    "3 imports at once, existing PostGIS schema",
                    lambda: races("postgis", pg_race_n, sources, work, args.postgis, False),
                ),
            ]
        for name, run in runs:
            started = time.monotonic()
            figures = run()
            statuses = ", ".join(f"{k}: {v}" for k, v in sorted(figures.pop("statuses").items()))
            print(
                f"{name} ({time.monotonic() - started:.0f} s): "
                + ", ".join(f"{k} {v}" for k, v in figures.items())
                + f"; exit statuses {statuses}",
                flush=True,
            )
            if "intact" in figures:
                failed |= figures["intact"] != figures["trials"] or figures["leftovers"] > 0
            else:
                failed |= (
                    figures["lost"] > 0 or figures["hung"] > 0 or figures["losers_told"] != figures["losers"]
                )
    print("FAILED" if failed else "all trials passed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
