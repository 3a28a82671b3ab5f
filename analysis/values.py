"""What a field's value says: whether it is there, whether it says anything, and the label that
names a feature by its id (the one way each; every layer reads values through these)."""

from __future__ import annotations

from typing import Optional

import pandas as pd

__all__ = ["present", "has_text", "feature_labels"]


def present(value: object) -> bool:
    """Whether a value is there: not None, not NaN or NaT (a list or other value is there).

    >>> [present(v) for v in (None, float("nan"), pd.NaT, "", 0)]
    [False, False, False, True, True]
    """
    if value is None:
        return False
    try:
        return not bool(pd.isna(value))
    except (TypeError, ValueError):  # pd.isna of a list is a list: the list is there
        return True


def has_text(value: object) -> bool:
    """Whether a field's value says something: not null, not NaN, not blank.

    >>> [has_text(v) for v in (None, float("nan"), "  ", "E-2", 0)]
    [False, False, False, True, True]
    """
    return present(value) and bool(str(value).strip())


def feature_labels(layer: str, frame: pd.DataFrame, id_field: Optional[str]) -> list[str]:
    """``layer:id`` for every feature of ``frame``, ``layer:#fid`` where the id is missing
    (findings name features by them: ``smp:BR-2``, ``smp:#4``)."""
    if id_field is None or id_field not in frame.columns:
        return [f"{layer}:{fid}" for fid in frame.index]
    return [
        f"{layer}:{value}" if present(value) else f"{layer}:#{fid}"
        for fid, value in zip(frame.index, frame[id_field])
    ]
