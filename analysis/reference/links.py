"""The route from a catchment to the waters in it, built at import (issue 34, item 3).

WBD's HUC-12s route catchment to catchment (``tohuc``) and name no water; ATTAINS and the PWL
layer name waters and no catchment. Each import of ``catchments`` or ``impaired_waters`` into
a store that holds both links them here: a water whose shape meets a catchment's (more than its
edge) is a water of that catchment, stored as a row of :data:`LINKS_TABLE` (``catchment_id``,
``waterbody_id``, ``basis``). The review and the screen read the rows where the route passes
(:func:`analysis.reference.route.walk`): a site in a HUC-12 reaches the listed waters inside it
and, by ``tohuc``, those of every HUC-12 below it.

A catchments import rebuilds the rows from the current waters; an impaired_waters import adds
those of the new version and keeps the earlier versions' (a delisted water's link is geography,
not a listing, so ``screen --since`` still finds it in the older version). A water without a
shape (ATTAINS imported without ``--geometry``) cannot be placed: the import says how many.

Nothing here opens a store: the stores call :func:`links` with the features they read.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import shapely

__all__ = ["LINKS_TABLE", "BASIS", "links", "link_note"]

LINKS_TABLE = "catchment_waters"
BASIS = "shape"  # the water's shape meets the catchment's interior


def links(
    catchment_ids: Iterable, catchment_shapes: Iterable, water_ids: Iterable, water_shapes: Iterable
) -> list[tuple[str, str]]:
    """``(catchment_id, waterbody_id)`` of each water whose shape meets a catchment's interior
    (a line only touching its edge is the next catchment's), both in one CRS, ids trimmed; a
    water meeting two catchments is in both.

    >>> from shapely.geometry import LineString, box
    >>> links(["A", "B"], [box(0, 0, 10, 10), box(10, 0, 20, 10)],
    ...       ["NY-1", "NY-2", "NY-3"],
    ...       [LineString([(2, 2), (8, 8)]), LineString([(5, 5), (15, 5)]), None])
    [('A', 'NY-1'), ('A', 'NY-2'), ('B', 'NY-2')]
    >>> links(["A"], [box(0, 0, 10, 10)], ["NY-4"], [LineString([(10, 0), (10, 10)])])
    []
    """
    shapes = np.asarray(list(catchment_shapes), dtype=object)
    waters = np.asarray(list(water_shapes), dtype=object)
    if not len(shapes) or not len(waters):
        return []
    placed = np.flatnonzero(~shapely.is_missing(waters) & ~shapely.is_empty(waters))
    if not len(placed):
        return []
    tree = shapely.STRtree(shapes)
    w, c = tree.query(waters[placed], predicate="intersects")
    inside = ~shapely.touches(waters[placed][w], shapes[c])
    cids = [str(x).strip() for x in catchment_ids]
    wids = [str(x).strip() for x in water_ids]
    return sorted({(cids[int(k)], wids[int(placed[j])]) for j, k in zip(w[inside], c[inside])})


def link_note(count: int, waters: int, unplaced: int) -> str:
    """The import's note on the links it built."""
    text = (
        f"route: {count} link(s) from catchments to the waters in them "
        f"({waters} water(s) placed in a catchment)"
    )
    if unplaced:
        text += (
            f"; {unplaced} water(s) have no shape (imported without --geometry, or not "
            "in its file) and are linked to no catchment: a review finds them only by "
            "a discharge point's waterbody_id or name"
        )
    return text
