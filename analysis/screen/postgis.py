"""The screen run as SQL inside PostGIS: the sites uploaded once, one query per reference layer.

Each site's box, widened by ``[reference] search_distance_ft``, is moved into each layer's SRID
as the reader moves it (``reference.read.boxes_in_crs``) and kept in a GiST-indexed temporary
table; the boxes drive the read, each one probing the layer's GiST index with ``&&``; each
feature found is fetched by id, transformed to the area CRS and repaired once, and met with the
sites through a GiST index on their polygons. Overlaps, wetland buffers and their unions are
computed by PostGIS in the area CRS, invalid reference polygons repaired as the reader repairs
them. The rows are decided by the same ``screen.decide`` as the GeoPackage screen.
The session runs without JIT and with a larger ``work_mem`` (``_session``: measured).
Identifiers are quoted by psycopg's ``sql`` module; values are parameters.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd
import shapely

from ..crs import crs_of, epsg_code
from ..errors import InputError
from ..judge.measure import WetlandMeasures
from ..judge.route import follow_routes, site_starts
from ..overlay import meets_minimum
from ..profile import RulesProfile
from ..progress import SILENT, Progress
from ..reference.area_copy import copy_table
from ..reference.contract import LAYER_NAMES
from ..reference.postgis import FIXED_POLYGON, PostgisStore, connect
from ..reference.read import boxes_in_crs, meeting_boxes
from ..reference.route import unique_catchments, water_id
from ..reference.window import search_windows
from ..units import ACRE_M2, FOOT_M, crs_units, unit_metres
from .screen import Overlaps, Screen, decide
from .sites import Sites

__all__ = ["screen_postgis"]


def screen_postgis(sites: Sites, source: str, profile: RulesProfile, progress: Progress = SILENT) -> Screen:
    """Screen ``sites`` against the reference layers of the PostGIS schema ``source`` names."""
    store = PostgisStore(source)
    sql = store.sql
    area = epsg_code(sites.crs)
    if area is None:
        raise InputError(
            "the area CRS has no EPSG code, which PostGIS needs to transform to",
            fix="use an EPSG area CRS in the profile",
        )
    to_ft2 = (unit_metres(sites.crs) / FOOT_M) ** 2
    to_acres = unit_metres(sites.crs) ** 2 / ACRE_M2
    overlaps = Overlaps()
    n = len(sites)
    with connect(store.conninfo) as con:
        _session(con)
        srids, sizes = {}, {}
        for layer in LAYER_NAMES:
            found = con.execute(
                "SELECT srid FROM geometry_columns WHERE f_table_schema = %s AND "
                "f_table_name = %s AND f_geometry_column = 'geom'",
                (store.schema, layer),
            ).fetchone()
            if found is None:
                raise InputError(
                    f"the reference layer '{layer}' is missing, and the screen needs it",
                    path=store.label,
                    layer=layer,
                    fix=f"import '{layer}' into the schema first",
                )
            srids[layer] = int(found[0])
            sizes[layer] = con.execute(  # the planner's count (-1: never analysed)
                "SELECT reltuples FROM pg_class WHERE oid = to_regclass(%s)",
                (store.ids.table(layer).as_string(con),),
            ).fetchone()[0]
        # A layer whose area copy serves (made from the current version, in the area CRS, not
        # edited since) is read through it: its boxes are in the area CRS, nothing is moved.
        current = {r.layer: r.version for r in store.versions()}  # the last of each: current
        copied = {
            layer
            for layer, copy in store.area_copies().items()
            if layer in srids and copy.serves(current.get(layer), sites.crs)
        }
        for layer in copied:
            srids[layer] = area
        progress.step(0.05, "sending the sites")
        _upload(con, sites, area)
        widened = search_windows(sites.boxes, sites.crs, profile)
        boxes = {
            srid: _box_table(con, sql, f"swppp_boxes_{srid}", widened, sites.crs, srid)
            for srid in sorted(set(srids.values()))
        }

        def few(layer, count):
            """Whether ``layer`` holds fewer features than ``count`` boxes (``_features``)."""
            return 0 <= sizes[layer] < count

        def pairs(layer, fields, union=False, features=None):
            """(k, fields..., area shared[, the site's area in all the polygons it overlaps,
            each part counted once]) per site and polygon it overlaps (``features``: the
            layer's around the sites, if read already). The SQL measures every pair that
            meets; which overlap is ``overlay.meets_minimum``'s (the union's filter is its
            test, as the database runs it)."""
            query = sql.SQL(
                "WITH f AS MATERIALIZED ({features}), "
                "x AS MATERIALIZED (SELECT s.k, {ffields}, CASE WHEN ST_Covers(f.g, s.geom) "
                # a site inside a polygon is its own overlap (analysis.overlay.shared_parts)
                "THEN s.geom ELSE ST_Intersection(f.g, s.geom) END AS part "
                "FROM f JOIN pg_temp.swppp_sites s ON f.g && s.geom AND ST_Intersects(f.g, s.geom)), "
                "y AS MATERIALIZED (SELECT *, ST_Area(part) AS a FROM x) "
                "SELECT k, {fields}, a{union} FROM y ORDER BY k"
            ).format(
                features=features
                or _features(
                    sql, store, layer, fields, boxes[srids[layer]], few=few(layer, n), copied=layer in copied
                ),
                ffields=sql.SQL(", ").join(sql.Identifier("f", f) for f in fields),
                fields=sql.SQL(", ").join(map(sql.Identifier, fields)),
                union=sql.SQL(
                    ", ST_Area(ST_Union(part) FILTER (WHERE a * %(ft2)s >= %(minimum)s) "
                    "OVER (PARTITION BY k))"
                    if union
                    else ""
                ),
            )
            minimum = profile.condition_a.min_overlap_sq_ft
            rows = con.execute(query, {"area": area, "ft2": to_ft2, "minimum": minimum}).fetchall()
            shared = np.array([row[len(fields) + 1] for row in rows], dtype=float)
            return [row for row, keep in zip(rows, meets_minimum(shared * to_ft2, minimum)) if keep]

        progress.step(0.2, "catchments")
        # The catchments around the sites, transformed once: met with the sites here, and
        # sent as the route's first shapes if a route leaves them (a statewide layer's
        # catchments, thousands of vertices each, transformed twice cost 9.7 s of 41 s at 1M
        # wetlands / 10,000 sites). Read through their area copy, nothing is transformed: they
        # are read again where needed rather than written into a temporary table (344 MB of
        # shapes at 1M, past the temporary buffers).
        near = sql.SQL("SELECT catchment_id::text, drains_to::text, g FROM ({}) f").format(
            _features(
                sql,
                store,
                "catchments",
                ["catchment_id", "drains_to"],
                boxes[srids["catchments"]],
                few=few("catchments", n),
                copied="catchments" in copied,
            )
        )
        if "catchments" in copied:
            transformed = near
        else:
            con.execute(
                "CREATE TEMP TABLE swppp_catchments (catchment_id text, drains_to text, "
                "g geometry) ON COMMIT PRESERVE ROWS"
            )
            con.execute(sql.SQL("INSERT INTO pg_temp.swppp_catchments {}").format(near), {"area": area})
            transformed = sql.SQL("SELECT * FROM pg_temp.swppp_catchments")
        overlaps.catchments = [
            (k, c, d)
            for k, c, d, _ in pairs("catchments", ["catchment_id", "drains_to"], features=transformed)
        ]
        progress.step(0.3, "following the catchments downstream")
        holding: set = set()  # the catchments' trimmed ids the route holds: not read again

        def read(layer, around):
            frame = _read_boxes(
                con,
                sql,
                store,
                layer,
                _ROUTE_FIELDS[layer],
                around,
                sites.crs,
                srids,
                holding if layer == "catchments" else None,
                few=few(layer, len(np.asarray(around, dtype=float).reshape(-1, 4))),
                copied=layer in copied,
            )
            if layer == "catchments":
                holding.update(str(c).strip() for c in frame["catchment_id"])
            return frame

        starts = site_starts(overlaps.catchments)

        def start_shapes() -> tuple[list, dict]:
            rows = con.execute(
                sql.SQL("SELECT catchment_id, ST_AsBinary(g) FROM ({}) t").format(transformed),
                {"area": area},
                binary=True,
            ).fetchall()
            frame = _shapes_meeting(rows, ["catchment_id"], widened)
            holding.update(str(c).strip() for c in frame["catchment_id"])
            known = {str(c).strip(): g for c, g in zip(frame["catchment_id"], frame["geometry"])}
            return [known.get(s.catchment_id) for s in starts], known

        overlaps.routes = follow_routes(
            starts,
            start_shapes,
            lambda wanted: _catchment_rows(con, sql, store, wanted),
            read,
            profile,
            sites.crs,
            store.links,
        )
        progress.step(0.4, "TMDL watersheds")
        found = pairs("tmdl_watersheds", ["watershed_id", "stormwater_source", "pollutants"], union=True)
        overlaps.watersheds = [
            (k, w, float("nan") if s is None else float(s), p, a * to_acres) for k, w, s, p, a, _ in found
        ]
        overlaps.tmdl_acres = np.zeros(n)
        for k, *_, held in found:
            overlaps.tmdl_acres[k] = held * to_acres
        progress.step(0.5, "303(d)-listed waters")
        for wid, pollutants, category in con.execute(
            sql.SQL("SELECT waterbody_id, pollutants, category FROM {}").format(
                store.ids.table("impaired_waters")
            )
        ).fetchall():
            if wid is not None:
                overlaps.listed.setdefault(water_id(wid), []).append((str(wid), pollutants, category))
        progress.step(0.6, "wetlands")
        rows = con.execute(
            _wetland_query(sql, store, boxes[srids["wetlands"]], few("wetlands", n), "wetlands" in copied),
            {
                "area": area,
                "ft": crs_units(1.0, sites.crs),
                "default": profile.wetlands.default_adjacent_area_ft,
                "search": profile.reference.search_distance_ft * crs_units(1.0, sites.crs),
            },
        ).fetchall()
    overlaps.wetlands = _wetland_measures(rows, n, to_ft2, to_acres)
    progress.step(0.95, "deciding")
    overlaps.listed = {k: overlaps.listed[k] for k in sorted(overlaps.listed)}
    return Screen(
        rows=decide(sites.ids, sites.geometries, overlaps, profile, sites.crs),
        geometries=sites.geometries,
        crs=sites.crs,
        reference={
            "path": store.label,
            "kind": "postgis",
            "versions": {
                r.layer: {
                    "version": r.version,
                    "source_date": r.source_date,
                    "imported_at": r.imported_at,
                    "sha256": r.sha256,
                }
                for r in store.versions()
            },
        },
    )


def _session(con) -> None:
    """This connection's settings (the session only; measured at 200k wetlands / 10k sites):
    no JIT (it compiled the wetland query for 0.7-1.5 s and the time is in PostGIS's functions,
    which it cannot speed up), and sorts and hashes of the wetland steps in memory (at the
    default 4 MB they went to disk: 11-20 MB external merges, a hash join in 16 batches)."""
    con.execute("SET jit = off")
    con.execute("SET work_mem = '64MB'")


_WHITESPACE = "".join(c for c in map(chr, range(0x3001)) if c.isspace())

_ROUTE_FIELDS = {
    "catchments": ["catchment_id"],
    "tmdl_watersheds": ["watershed_id", "stormwater_source", "pollutants"],
}


def _catchment_rows(con, sql, store, wanted) -> dict:
    """{catchment_id: drains_to} of the catchments whose trimmed id is one of ``wanted`` (one
    parameterised query: the route's look-up by id for all sites at a level)."""
    # Trimmed of what Python's str.strip trims (the GeoPackage screen's and the review's
    # look-up), not only of spaces as btrim does by default.
    rows = con.execute(
        sql.SQL(
            "SELECT catchment_id, drains_to FROM {} WHERE btrim(catchment_id::text, %s) = ANY(%s)"
        ).format(store.ids.table("catchments")),
        (_WHITESPACE, sorted(wanted)),
    ).fetchall()
    return unique_catchments(rows, store.label)


def _read_boxes(
    con,
    sql,
    store,
    layer: str,
    fields,
    boxes,
    area_crs,
    srids,
    known: Optional[set] = None,
    few=False,
    copied=False,
) -> pd.DataFrame:
    """``fields`` and shapes (area CRS, repaired) of the features of ``layer`` meeting any of
    ``boxes`` (area CRS): the boxes go up once into a temporary table, the layer's GiST index
    answers them (as the sites' boxes are read). ``known``: catchments' trimmed ids the caller
    holds already, left unread (neither transformed nor sent)."""
    boxes = np.asarray(boxes, dtype=float).reshape(-1, 4)
    area = epsg_code(area_crs)
    con.execute("DROP TABLE IF EXISTS pg_temp.swppp_route_boxes")
    table = _box_table(con, sql, "swppp_route_boxes", boxes, area_crs, srids[layer])
    unread = (
        "AND (c.catchment_id IS NULL OR NOT btrim(c.catchment_id::text, %(space)s) = ANY(%(known)s))"
        if known
        else ""
    )
    rows = con.execute(
        sql.SQL("SELECT {fields}, ST_AsBinary(f.g) FROM ({features}) f").format(
            fields=sql.SQL(", ").join(sql.Identifier("f", f) for f in fields),
            features=_features(sql, store, layer, fields, table, unread, few, copied),
        ),
        {"area": area, "space": _WHITESPACE, "known": sorted(known or ())},
        binary=True,  # the shapes as bytes: as hex text, 5,382 catchments took 2.2-4.5 s, not 0.45 s
    ).fetchall()
    return _shapes_meeting(rows, fields, boxes)


def _shapes_meeting(rows, fields, boxes) -> pd.DataFrame:
    """The ``rows`` ((fields..., WKB) each) whose shape meets one of ``boxes`` (area CRS), as a
    frame of ``fields`` and a column of shapes."""
    frame = pd.DataFrame([r[:-1] for r in rows], columns=list(fields))
    shapes = shapely.from_wkb([bytes(r[-1]) for r in rows]) if rows else np.array([], dtype=object)
    if "stormwater_source" in frame:
        frame["stormwater_source"] = pd.to_numeric(frame["stormwater_source"], errors="coerce")
    frame["geometry"] = np.asarray(shapes, dtype=object)
    return frame.iloc[meeting_boxes(np.asarray(shapes, dtype=object), boxes)].reset_index(drop=True)


def _upload(con, sites: Sites, area: int) -> None:
    """The sites as a temporary table: index and polygon, GiST-indexed (the features met are
    joined with the sites through it) and analysed."""
    con.execute(
        "CREATE TEMP TABLE swppp_sites (k integer PRIMARY KEY, geom geometry) ON COMMIT PRESERVE ROWS"
    )
    with con.cursor() as cur, cur.copy("COPY pg_temp.swppp_sites (k, geom) FROM STDIN") as copy:
        for k, geom in enumerate(_ewkb(sites.geometries, area)):
            copy.write_row((k, geom))
    con.execute("CREATE INDEX swppp_sites_geom ON pg_temp.swppp_sites USING gist (geom)")
    con.execute("ANALYZE pg_temp.swppp_sites")


def _box_table(con, sql, name: str, boxes, area_crs, srid: int):
    """A temporary table ``name`` of ``boxes`` (area CRS) as the reader moves them into the
    layer's CRS ``srid`` (``reference.read.boxes_in_crs``: each densified box transformed once,
    here, and padded), GiST-indexed and analysed: the layers are read box by box through their
    index. Computed here rather than sent densified for PostGIS to transform (1.9 s of the 200k
    / 10k screen went to 26 MB of densified outlines as hex text)."""
    own = boxes_in_crs(boxes, area_crs, crs_of(srid))
    table = sql.Identifier(name)
    con.execute(
        sql.SQL("CREATE TEMP TABLE {} (k integer, box geometry) ON COMMIT PRESERVE ROWS").format(table)
    )
    with con.cursor() as cur, cur.copy(sql.SQL("COPY pg_temp.{} (k, box) FROM STDIN").format(table)) as copy:
        for k, box in enumerate(_ewkb(shapely.box(*own.T), srid)):
            copy.write_row((k, box))
    con.execute(sql.SQL("CREATE INDEX ON pg_temp.{} USING gist (box)").format(table))
    con.execute(sql.SQL("ANALYZE pg_temp.{}").format(table))
    return sql.SQL("pg_temp.{}").format(table)


def _features(
    sql, store, layer: str, fields, boxes, extra: str = "", few: bool = False, copied: bool = False
):
    """The features of ``layer`` whose envelope meets a site's box (found box by box through
    the layer's GiST index, then fetched by id: no other feature's geometry is read), each
    transformed to the area CRS once and repaired as the reader repairs them. ``few``: the
    layer holds fewer features than there are boxes; each feature then asks the boxes' GiST
    index once (on a 70-feature layer the planner scanned the layer for each of 10,000 boxes,
    reading 700,000 toasted outlines' boxes: 1.3 s at 200k / 10k)."""
    # OFFSET 0 on the transformed features: pulled up into the CASE, ST_Transform ran once
    # for ST_IsValid and again for the value (2.5-3.4 s of CPU at 200k wetlands / 10k sites).
    # The boxes drive the read, each one probing the layer's GiST index (OFFSET 0 keeps the
    # planner from turning it round: it misjudged the join and scanned the whole layer,
    # detoasting each feature to test it against the boxes' index, 3.6 s of a 200k layer).
    found = (
        "SELECT m.fid FROM {table} m WHERE EXISTS (SELECT 1 FROM {boxes} b WHERE b.box && m.geom)"
        if few
        else "SELECT DISTINCT near.fid FROM {boxes} b CROSS JOIN LATERAL "
        "(SELECT m.fid FROM {table} m WHERE m.geom && b.box OFFSET 0) near"
    )
    cfields = sql.SQL(", ").join(sql.Identifier("c", f) for f in fields)
    if copied:  # the layer's area copy: found by its own index, already moved and repaired
        return sql.SQL(
            "SELECT {cfields}, a.geom AS g FROM (" + found.replace("{table}", "{copy}") + ") found "
            "JOIN {table} c USING (fid) JOIN {copy} a USING (fid) WHERE c.geom IS NOT NULL {extra}"
        ).format(
            cfields=cfields,
            table=store.ids.table(layer),
            copy=store.ids.table(copy_table(layer)),
            boxes=boxes,
            extra=sql.SQL(extra),
        )
    return sql.SQL(
        "SELECT {cfields}, {fixed} AS g FROM (SELECT {cfields}, ST_Transform(c.geom, %(area)s) "
        "AS t FROM (" + found + ") found "
        "JOIN {table} c USING (fid) WHERE c.geom IS NOT NULL {extra} OFFSET 0) c"
    ).format(
        cfields=cfields,
        fixed=sql.SQL(FIXED_POLYGON.format(g="c.t")),
        table=store.ids.table(layer),
        boxes=boxes,
        extra=sql.SQL(extra),
    )


def _ewkb(geometries, srid: int) -> list[str]:
    """Hex EWKB with ``srid``, as PostGIS reads a geometry's text."""
    return list(
        shapely.to_wkb(
            shapely.set_srid(np.asarray(geometries, dtype=object), srid), hex=True, include_srid=True
        )
    )


def _wetland_query(sql, store, boxes, few=False, copied=False):
    """Per site and wetland met: inside and adjacent areas, and the site's totals, as the
    GeoPackage screen computes them (``screen._wetlands``). Each wetland is transformed,
    repaired and, if regulated, buffered once; the pairs within reach are found through the
    sites' GiST index by box alone (the zone, or the wetland itself where it has none, must
    meet the site, which implies being within reach: ST_DWithin first cost 2-3 s of exact
    distances at 200k / 10k, and the meeting test alone decides the pairs); a wetland that is not
    regulated has no adjacent area (no buffer, no zone), and a zone is cut by the site's
    wetlands only where both hold something. The steps
    are MATERIALIZED, and each site's unions are window aggregates over its rows, not joins: the
    planner, misjudging the steps' sizes (one row), joined them in nested loops."""
    features = _features(
        sql,
        store,
        "wetlands",
        ["fid", "wetland_id", "regulated", "adjacent_area_ft"],
        boxes,
        "AND NOT ST_IsEmpty(c.geom)",
        few,
        copied,
    )
    return sql.SQL(
        "WITH w AS MATERIALIZED (SELECT fid, wetland_id, g, CASE WHEN regulated = 1 THEN "
        "CASE WHEN adjacent_area_ft IS NULL OR adjacent_area_ft <= 0 THEN %(default)s "
        "ELSE adjacent_area_ft END ELSE 0 END * %(ft)s AS reach FROM ({features}) f), "
        "p AS MATERIALIZED (SELECT s.k, w.fid FROM w JOIN pg_temp.swppp_sites s "
        "ON s.geom && ST_Expand(w.g, w.reach)), "
        "z AS MATERIALIZED (SELECT w.fid, w.wetland_id, w.g, w.reach, CASE WHEN w.reach > 0 THEN "
        "ST_Buffer(w.g, w.reach) END AS zone FROM w WHERE w.fid IN (SELECT fid FROM p)), "
        "hit AS MATERIALIZED (SELECT p.k, z.wetland_id, ST_Intersection(z.g, s.geom) AS inside, "
        "CASE WHEN z.zone IS NOT NULL THEN ST_Intersection(z.zone, s.geom) END AS near "
        "FROM p JOIN z USING (fid) JOIN pg_temp.swppp_sites s USING (k) "
        "WHERE ST_Intersects(coalesce(z.zone, z.g), s.geom) "
        # a site meets the wetlands its review reads, those meeting its own box (a wetland
        # within its reach of the site does, unless its reach is wider than the search distance)
        "AND (z.reach <= %(search)s OR ST_Intersects(z.g, ST_Expand(s.geom, %(search)s)))), "
        "wet AS MATERIALIZED (SELECT k, wetland_id, inside, near, "
        "ST_Union(inside) OVER (PARTITION BY k) AS wet FROM hit), "
        "piece AS MATERIALIZED (SELECT k, wetland_id, inside, wet, CASE WHEN ST_IsEmpty(wet) "
        "OR ST_IsEmpty(near) THEN near ELSE ST_Difference(near, wet) END AS adjacent FROM wet) "
        "SELECT k, wetland_id, ST_Area(inside), coalesce(ST_Area(adjacent), 0), ST_Area(wet), "
        "coalesce(ST_Area(ST_Union(adjacent) OVER (PARTITION BY k)), 0) FROM piece "
        "ORDER BY k, wetland_id"
    ).format(features=features)


def _wetland_measures(rows, n: int, to_ft2: float, to_acres: float) -> WetlandMeasures:
    """The wetland query's rows (per site and wetland met: inside and adjacent areas, and the
    site's totals, in the area CRS's units) as the engine's measures: the same decision runs
    on them as on the GeoPackage screen's."""
    wetland_acres, adjacent_acres = np.zeros(n), np.zeros(n)
    for k, _, _, _, wet_total, adjacent_total in rows:
        wetland_acres[k] = wet_total * to_acres
        adjacent_acres[k] = adjacent_total * to_acres
    return WetlandMeasures(
        np.array([r[0] for r in rows], dtype=np.int64),
        np.arange(len(rows), dtype=np.int64),
        np.array([r[1] for r in rows], dtype=object),
        np.array([r[2] * to_ft2 for r in rows], dtype=float),
        np.array([r[3] * to_ft2 for r in rows], dtype=float),
        wetland_acres,
        adjacent_acres,
    )
