"""The catchment route: ``drains_to`` followed downstream, level by level, for many starts at once.

The one walk of the engine (``judge.route.follow_routes``: one site for the review, whatever
its reference's backend, QGIS project layers included; every site for the screen). What a
``drains_to`` value means is :func:`analysis.reference.catchments.split_drains_to`'s: the
``catchment_id`` of a catchment of the layer is the catchment it drains into, any other value
a water's id. Catchments are looked up by id through the caller's ``lookup`` (a reference
layer, a QGIS layer): once per level for all starts, each id asked once in a walk.

From each start, the route goes on for at most ``hops`` steps (``[condition_a]
downstream_catchment_hops``); the catchments named by the last ones are looked up too, to tell
that the route was cut there (:attr:`Walk.cut`) rather than read them as waters. A catchment
already met by a key's routes (a cycle, or two of its routes joining) is not followed again,
and not told again.

:func:`place` then takes the downstream catchments' shapes (each read next to the catchments
it drains out of) and :func:`overlapping` the TMDL watersheds they lie in: the review's and the
screen's, through their own ``read``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
import pandas as pd
import shapely

from ..errors import InputError
from ..overlay import overlap_pairs
from ..threads import each
from .catchments import catchment_code, drains_to_values, split_drains_to

__all__ = [
    "Lookup",
    "Links",
    "Read",
    "Step",
    "Water",
    "Cut",
    "Walk",
    "walk",
    "place",
    "overlapping",
    "catchment_lookup",
    "unique_catchments",
    "water_id",
]

# lookup(ids) -> {catchment_id: drains_to} of the layer's catchments with those ids (trimmed).
Lookup = Callable[[set], Mapping]
# links(ids) -> {catchment_id: [waterbody_id]}: the waters the import placed in each catchment
# (analysis.reference.links); None where the reference holds no such links.
Links = Callable[[set], Optional[Mapping]]
# read(layer, boxes) -> the layer's features meeting any of boxes ((n, 4), the area CRS): a
# frame with the layer's fields and a "geometry" column of shapely geometries.
Read = Callable[[str, np.ndarray], pd.DataFrame]


def catchment_lookup(reference, needed_for: str) -> Lookup:
    """The walk's :data:`Lookup` over a reference (``analysis.reference.read.Reference``): ids
    compared trimmed; none found without a reference. An id two catchments carry is refused
    (:func:`unique_catchments`)."""

    def lookup(wanted) -> dict:
        if reference is None:
            return {}
        found = reference.lookup(
            "catchments", "catchment_id", wanted, normalise=str.strip, needed_for=needed_for
        )
        return unique_catchments(
            zip(found["catchment_id"], found["drains_to"]),
            reference.label,
            reference.require("catchments", needed_for),
        )

    return lookup


def unique_catchments(rows: Iterable[tuple], path, layer: str = "catchments") -> dict:
    """``{trimmed catchment_id: drains_to}`` of ``rows`` ((catchment_id, drains_to) each),
    refusing an id that two rows carry: the route could follow only one of their
    ``drains_to``, and which one would be the reader's accident (``swppp reference import``
    refuses such a layer; a layer read directly is refused here, when the route reaches it)."""
    out: dict = {}
    repeated: set = set()
    for catchment, drains_to in rows:
        key = str(catchment).strip()
        if key in out:
            repeated.add(key)
        out[key] = drains_to
    if repeated:
        shown = sorted(repeated)[:10]
        raise InputError(
            f"catchment_id is not unique: {len(repeated)} id(s) repeat "
            f"({', '.join(shown)}), so the route downstream cannot tell which "
            "catchment's drains_to to follow",
            path=path,
            layer=layer,
            field="catchment_id",
            fix="give every catchment its own id (or merge the repeated ones "
            "into one feature); `swppp reference import` refuses such a layer",
        )
    return out


def water_id(text) -> str:
    """A waterbody id as compared: trimmed, upper case (``" ny1301-0099"`` is ``NY1301-0099``).

    >>> water_id(" ny1301-0099 ")
    'NY1301-0099'
    """
    return str(text).strip().upper()


@dataclass(frozen=True)
class Step:
    """A catchment on a route: where the runoff from start ``start`` of ``key`` is after
    ``depth`` steps (0: the start itself), and ``route``, how it gets there."""

    key: Hashable
    catchment_id: str
    drains_to: object
    route: str  # "the site lies in catchment A, which drains to catchment B"
    depth: int
    start: int  # position in the starts of the start the route leaves from


@dataclass(frozen=True)
class Water:
    """A water a catchment of a route names: its id (:func:`water_id`) and the route to it."""

    step: Step
    water_id: str
    route: str  # "<step.route>, which drains to NY1301-0099"


@dataclass(frozen=True)
class Cut:
    """A catchment the route would go on into after its last step: not followed."""

    step: Step
    catchment_id: str
    note: str  # "<step.route>, which drains to catchment C: not followed further (...)"


@dataclass
class Walk:
    """What a walk met, in the order met (level by level, each level in the starts' order)."""

    levels: list = field(default_factory=list)  # [[Step]] per depth; levels[0]: the starts
    waters: list = field(default_factory=list)  # [Water]
    cut: list = field(default_factory=list)  # [Cut]
    outside: list = field(default_factory=list)  # [Cut]: a catchment code not in the layer


def walk(starts: Iterable[tuple], lookup: Lookup, hops: int, links: Optional[Links] = None) -> Walk:
    """Follow ``drains_to`` from ``starts`` ((key, catchment_id, drains_to, route) each; the
    route text tells how the runoff is in it) up to ``hops`` steps.

    ``links`` gives the waters the import placed in each catchment met (WBD names none: its
    HUC-12s reach the waters this way); a ``drains_to`` value that is a catchment code
    (:func:`analysis.reference.catchments.catchment_code`, WBD's ``tohuc``) but no catchment
    of the layer is where the route leaves the layer (:attr:`Walk.outside`), not a water.

    >>> layer = {"B": "C", "C": "NY-2; A", "A": "B"}
    >>> asked = []
    >>> def lookup(ids):
    ...     asked.append(sorted(ids))
    ...     return {i: layer[i] for i in ids if i in layer}
    >>> met = walk([("site 1", "A", "ny-1;B", "catchment A")], lookup, 2)
    >>> for water in met.waters:
    ...     print(water.route)
    catchment A, which drains to NY-1
    catchment A, which drains to catchment B, which drains to catchment C, which drains to NY-2
    >>> [[s.catchment_id for s in level] for level in met.levels], met.cut, asked
    ([['A'], ['B'], ['C']], [], [['B', 'ny-1'], ['C'], ['A', 'NY-2']])
    """
    out = Walk()
    level = [
        Step(key, str(catchment).strip(), drains_to, route, 0, k)
        for k, (key, catchment, drains_to, route) in enumerate(starts)
    ]
    seen = {(s.key, s.catchment_id) for s in level}
    catchments: dict = {}  # {catchment_id: drains_to} of the ids found catchments
    asked: set = set()
    held: dict = {}  # {catchment_id: [waterbody_id]} the import linked
    for depth in range(hops + 1):
        if not level:
            break
        out.levels.append(level)
        wanted = {v for s in level for v in drains_to_values(s.drains_to)} - asked
        if wanted:
            catchments.update((str(c).strip(), d) for c, d in lookup(wanted).items())
            asked |= wanted
        unlinked = {s.catchment_id for s in level} - set(held)
        if links is not None and unlinked:
            held.update({c: [] for c in unlinked})
            held.update(links(unlinked) or {})
        following: list[Step] = []
        for here in level:
            onward, waters = split_drains_to(here.drains_to, catchments, here.catchment_id)
            named = [water_id(w) for w in waters if not catchment_code(w)]
            out.waters += [Water(here, w, f"{here.route}, which drains to {w}") for w in named]
            out.waters += [
                Water(
                    here,
                    water_id(w),
                    f"{here.route}, which holds {water_id(w)} (the import placed it there by its shape)",
                )
                for w in held.get(here.catchment_id, ())
                if water_id(w) not in named
            ]
            out.outside += [
                Cut(
                    here,
                    w,
                    f"{here.route}, which drains to catchment {w}, not in "
                    "the reference's catchments (import the catchments "
                    "downstream of it)",
                )
                for w in waters
                if catchment_code(w)
            ]
            for target in onward:
                if (here.key, target) in seen:
                    continue
                route = f"{here.route}, which drains to catchment {target}"
                if depth == hops:
                    out.cut.append(
                        Cut(
                            here,
                            target,
                            f"{route}: not followed further "
                            f"([condition_a] downstream_catchment_hops"
                            f" = {hops})",
                        )
                    )
                    continue
                seen.add((here.key, target))
                following.append(Step(here.key, target, catchments[target], route, depth + 1, here.start))
        level = following
    return out


def place(met: Walk, start_shapes: Sequence, read: Read, pad: float, known: Optional[dict] = None) -> list:
    """The shapes of the catchments of ``met``, level by level (``start_shapes``: those of
    ``met.levels[0]``): each downstream catchment's is taken around the catchments of its key
    it drains out of (the box of their shapes widened by ``pad``: a catchment meets the one it
    drains into); None where not found there.

    ``known`` ({catchment_id: shape}: those read already, e.g. around the starts; filled with
    what each level reads) spares reading again: a level reads, in one read, only the boxes of
    the keys that want a catchment not known yet."""
    known = {} if known is None else known
    shapes = [list(start_shapes)]
    for upstream, level in zip(met.levels, met.levels[1:]):
        shapes.append(_placed(level, _key_boxes(upstream, shapes[-1], pad), read, known))
    return shapes


def _key_boxes(steps: list, shapes: list, pad: float) -> dict:
    """{key: the box around its steps' shapes, widened by ``pad``}, all keys' boxes in one
    grouped reduction (keys in the order first met)."""
    shaped = [(s.key, g) for s, g in zip(steps, shapes) if g is not None]
    if not shaped:
        return {}
    keys: dict = {}
    groups = np.array([keys.setdefault(key, len(keys)) for key, _ in shaped])
    order = np.argsort(groups, kind="stable")
    groups = groups[order]
    bounds = shapely.bounds(np.asarray([g for _, g in shaped], dtype=object))[order]
    firsts = np.flatnonzero(np.r_[True, groups[1:] != groups[:-1]])
    boxes = np.column_stack(
        [
            np.minimum.reduceat(bounds[:, 0], firsts) - pad,
            np.minimum.reduceat(bounds[:, 1], firsts) - pad,
            np.maximum.reduceat(bounds[:, 2], firsts) + pad,
            np.maximum.reduceat(bounds[:, 3], firsts) + pad,
        ]
    )
    return dict(zip(list(keys), boxes))


def _placed(level: list, boxes: dict, read: Read, known: dict) -> list:
    """The shapes of ``level``'s catchments that meet their key's box."""
    out: list = [None] * len(level)
    wanted = [k for k, s in enumerate(level) if s.key in boxes]
    if not wanted:
        return out
    unread = {level[k].key for k in wanted if level[k].catchment_id not in known}
    if unread:
        frame = read("catchments", np.array([box for key, box in boxes.items() if key in unread]))
        known.update({str(c).strip(): g for c, g in zip(frame["catchment_id"], frame["geometry"])})
    shapes = np.asarray([known.get(level[k].catchment_id) for k in wanted], dtype=object)
    there = np.flatnonzero(shapes != None)  # noqa: E711 - element-wise over the object array
    if not len(there):
        return out
    around = shapely.box(*np.array([boxes[level[wanted[k]].key] for k in there]).T)
    meets = each(shapely.intersects, shapes[there], around)
    for k, placed in zip(there.tolist(), np.atleast_1d(meets).tolist()):
        if placed:
            out[wanted[k]] = shapes[k]
    return out


def overlapping(layer: str, shapes: Sequence, read: Read, pad: float, minimum_sq_ft: float, crs) -> tuple:
    """``(frame, pairs)``: the features of ``layer`` read around ``shapes`` (each one's box
    widened by ``pad``; one read), and the (shape, feature, square feet shared) of each pair
    that overlaps by ``minimum_sq_ft`` or more (``[condition_a] min_overlap_sq_ft``), by shape
    then feature: the TMDL watersheds the downstream catchments meet. A shape given more than once (the
    same object: one catchment on several routes) is met with the features once; a shape a
    feature covers is its own overlap (:func:`analysis.overlay.shared_parts`)."""
    given = np.asarray(shapes, dtype=object)
    keys = np.fromiter(map(id, given), dtype=np.int64, count=len(given))
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    distinct = given[first]
    frame = read(layer, shapely.bounds(distinct) + np.array([-pad, -pad, pad, pad]))
    if not len(frame):
        return frame, []
    d, w, _, sq_ft = overlap_pairs(distinct, list(frame["geometry"]), minimum_sq_ft, crs)
    met: list = [[] for _ in distinct]  # per distinct shape, (feature, square feet shared)
    for k, feature, shared in zip(d.tolist(), w.tolist(), sq_ft.tolist()):
        met[k].append((feature, shared))
    return frame, [
        (step, feature, shared)
        for step, k in enumerate(np.ravel(inverse).tolist())
        for feature, shared in met[k]
    ]
