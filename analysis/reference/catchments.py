"""What a catchment's ``drains_to`` names: each value a downstream catchment or a water's id."""

from __future__ import annotations

import re
from collections.abc import Collection

__all__ = ["drains_to_values", "split_drains_to", "catchment_code"]

# A hydrologic unit code (WBD: HUC-8 to HUC-16, digits only, as ``tohuc`` gives them): no
# water's id has that form (ATTAINS ids carry the state's letters, PWL ids a dash).
_HUC = re.compile(r"\d{8,16}")


def catchment_code(value) -> bool:
    """Whether a ``drains_to`` value is a catchment's code (a HUC), not a water's id.

    >>> catchment_code("020200060103"), catchment_code("NY1301-0099"), catchment_code("1301-0099")
    (True, False, False)
    """
    return bool(_HUC.fullmatch(str(value).strip()))


def drains_to_values(value) -> list[str]:
    """The ``;``-separated values of one ``drains_to``, trimmed, each once (none where empty).

    >>> drains_to_values(" 020200060102 ; NY1301-0099;")
    ['020200060102', 'NY1301-0099']
    >>> drains_to_values(None), drains_to_values(float("nan"))
    ([], [])
    """
    if value is None or value != value:  # None, or NaN as a GeoPackage null is read
        return []
    return list(dict.fromkeys(v.strip() for v in str(value).split(";") if v.strip()))


def split_drains_to(value, catchment_ids: Collection[str], own_id=None) -> tuple[list[str], list[str]]:
    """``(downstream catchments, waters)`` named by one ``drains_to``: the one meaning of it.

    A value that is the ``catchment_id`` of another catchment of the layer is the catchment
    this one drains into (WBD HUC-12 ``tohuc``; what ``derive`` follows upstream); any other
    value is the id of the water it drains to (a ``waterbody_id``, what Condition A looks up).

    >>> split_drains_to("B;NY-1", {"A", "B"}, own_id="A")
    (['B'], ['NY-1'])
    >>> split_drains_to("A", {"A", "B"}, own_id="A")  # itself: no route, and not a water
    ([], [])
    """
    own = None if own_id is None else str(own_id).strip()
    downstream: list[str] = []
    waters: list[str] = []
    for item in drains_to_values(value):
        if item == own:
            continue
        (downstream if item in catchment_ids else waters).append(item)
    return downstream, waters
