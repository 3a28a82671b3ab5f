"""What the phasing check's timeline and the proposal both measure: the faces of overlapping
polygons (each piece of ground counted once, however many polygons cover it), unions of date
intervals, and phases in their natural order."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import shapely

from ..geometry import polygons
from ..units import CrsLike, acres

__all__ = ["faces", "dissolve_faces", "merge_intervals", "natural_key", "TILE_POLYGONS"]

# Overlapping polygons per tile of the arrangement (see _arrangement): a speed setting only.
TILE_POLYGONS = 256


def natural_key(text: str) -> list[tuple[int, int, str]]:
    """Phase "2" before "10"; numbers before words."""
    return [
        (0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part
    ]


def merge_intervals(
    group: np.ndarray, start: np.ndarray, end: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Union of half-open intervals per group: ``(group, start, end)`` arrays, disjoint per group.

    Intervals that meet (one ends the day the next starts) merge: no gap lies between them.
    ``start``/``end`` are non-negative integers, ``end`` >= ``start``.
    """
    if len(group) == 0:
        return group, start, end
    order = np.lexsort((start, group))
    group, start, end = group[order], start[order], end[order]
    span = int(end.max()) + 1
    # Running maximum of ``end`` within each group: groups are sorted, so an offset keeps them apart.
    running = np.maximum.accumulate(group * span + end) - group * span
    begins = np.ones(len(group), dtype=bool)
    begins[1:] = (group[1:] != group[:-1]) | (start[1:] > running[:-1])
    first = np.flatnonzero(begins)
    return group[first], start[first], np.maximum.reduceat(end, first)


def faces(
    geometries: np.ndarray, crs: CrsLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The faces covering ``geometries``: face acres, (face, polygon) pairs, the faces and their tiles.

    Returns arrays ``(acres, pair_face, pair_polygon, face_geometry, face_tile)``; a polygon that
    overlaps no other is a face of its own, in tile -1. The faces of one tile share their edges
    exactly (a coverage), so a set of them dissolves without a full overlay.
    """
    n = len(geometries)
    tree = shapely.STRtree(geometries)
    left, right = tree.query(geometries, predicate="intersects")
    keep = left < right
    left, right = left[keep], right[keep]
    # Polygons that only touch share no area: their union's area is the sum of theirs.
    inner = ~shapely.touches(geometries[left], geometries[right])
    overlapping = np.zeros(n, dtype=bool)
    overlapping[left[inner]] = True
    overlapping[right[inner]] = True
    alone = np.flatnonzero(~overlapping)
    faces, pair_face, pair_polygon = [geometries[alone]], [np.arange(len(alone))], [alone]
    tiles = [np.full(len(alone), -1, dtype=np.int64)]
    together = np.flatnonzero(overlapping)
    offset = len(alone)
    for number, (tile_faces, face, polygon) in enumerate(_arrangement(geometries[together])):
        faces.append(tile_faces)
        tiles.append(np.full(len(tile_faces), number, dtype=np.int64))
        pair_face.append(face + offset)
        pair_polygon.append(together[polygon])
        offset += len(tile_faces)
    every = np.concatenate(faces)
    face_acres = np.atleast_1d(acres(every, crs))
    return (face_acres, np.concatenate(pair_face), np.concatenate(pair_polygon), every, np.concatenate(tiles))


def dissolve_faces(face_geometry: np.ndarray, face_tile: np.ndarray, chosen: np.ndarray) -> shapely.Geometry:
    """The union of the ``chosen`` faces: each tile's dissolved as a coverage, then the tiles
    and the lone polygons together (far fewer, larger pieces than the polygons themselves)."""
    tile = face_tile[chosen]
    order = np.argsort(tile, kind="stable")
    chosen, tile = chosen[order], tile[order]
    pieces: list[shapely.Geometry] = []
    for group in np.split(np.arange(len(chosen)), np.flatnonzero(np.diff(tile)) + 1):
        if len(group) == 0:
            continue
        members = face_geometry[chosen[group]]
        pieces.extend(members if tile[group[0]] < 0 else [shapely.coverage_union_all(members)])
    return shapely.union_all(np.asarray(pieces, dtype=object))


def _arrangement(geometries: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Faces of the overlapping ``geometries``, tile by tile: ``(faces, face, polygon)`` per tile.

    Noding and polygonising grow faster than linearly with the size of one network, so the
    polygons are cut by a grid into tiles of about ``TILE_POLYGONS`` each (tiles partition the
    plane, so the faces of all tiles partition the union). ``face``/``polygon`` pair each face
    with every polygon covering it.
    """
    if len(geometries) == 0:
        return
    per_side = max(1, int(np.ceil(np.sqrt(len(geometries) / TILE_POLYGONS))))
    xmin, ymin, xmax, ymax = shapely.total_bounds(geometries)
    xs, ys = np.linspace(xmin, xmax, per_side + 1), np.linspace(ymin, ymax, per_side + 1)
    tiles = shapely.box(xs[:-1, None], ys[None, :-1], xs[1:, None], ys[None, 1:]).ravel()
    if per_side == 1:
        owner, tile = np.arange(len(geometries)), np.zeros(len(geometries), dtype=np.int64)
        pieces = geometries
    else:
        owner, tile = shapely.STRtree(tiles).query(geometries, predicate="intersects")
        pieces = shapely.intersection(geometries[owner], tiles[tile])
    # Single polygons only: a cut may leave lines or points where a polygon touches a tile edge.
    parts, part_of = polygons(pieces, return_index=True)
    owner, tile = owner[part_of], tile[part_of]
    order = np.argsort(tile, kind="stable")
    parts, owner, tile = parts[order], owner[order], tile[order]
    bounds = np.flatnonzero(np.diff(tile)) + 1
    for mine in np.split(np.arange(len(parts)), bounds):
        noded = shapely.union_all(shapely.boundary(parts[mine]))
        faces = shapely.get_parts(shapely.polygonize(shapely.get_parts(noded)))
        face, part = shapely.STRtree(parts[mine]).query(shapely.point_on_surface(faces), predicate="within")
        yield faces, face, owner[mine][part]
