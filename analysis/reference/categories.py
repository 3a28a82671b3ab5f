"""An impaired water's Integrated Report category read for SWPPP C(1), as the profile reads it.

SWPPP C(1), Condition A: "stormwater runoff from land development activities discharging a
pollutant of concern to either an impaired water identified on the Department's 303(d) list of
impaired waters or a total maximum daily load (TMDL) designated watershed for which pollutants
in stormwater have been identified as a source of the impairment".

One rule for the importer (``reference.importer``), the review (``checks.condition_a``) and the
many-site screen (``screen``), from the profile's one vocabulary, ``[categories]``: a water is
``listed`` (on the 303(d) list: category 5 and its subcategories, 5M, 5R, 5-alt, in any
spelling the profile names), ``tmdl`` (impaired with an approved TMDL, 4a), ``unknown`` (no
category recorded), ``4b``, ``4c``, ``other`` (not impaired: 1, 2, 3) or ``unrecognised`` (a
category the profile does not name: an import refuses it; a layer made by hand may hold one).
Only a listed water takes the first branch of C(1); ``UNDECIDED`` kinds leave Condition A not
decided, the rest are notes.
"""

from __future__ import annotations

from ..profile import RulesProfile
from ..values import has_text

__all__ = ["LISTED", "UNDECIDED", "CATEGORY_WORDS", "category_kind", "KINDS"]

LISTED = "listed"
# The kinds that cannot decide Condition A alone: a person confirms the category or the TMDL.
UNDECIDED = ("unknown", "tmdl", "unrecognised")

# The profile's [categories] list each kind is read from (``unknown`` and ``unrecognised``: in
# none, the category being empty or not named there).
KINDS = {
    "listed": LISTED,
    "tmdl": "tmdl",
    "other_controls": "4b",
    "not_a_pollutant": "4c",
    "not_impaired": "other",
}

# What each kind of impaired_waters category means for SWPPP C(1) (the profile's reading).
CATEGORY_WORDS = {
    "unknown": (
        "its category is not recorded: taken as 303(d)-listed, but it alone cannot "
        "decide Condition A; confirm the category (5: on the 303(d) list; 4a: TMDL "
        "approved)"
    ),
    "tmdl": (
        "impaired with an approved TMDL (category 4a), not on the 303(d) list: C(1)'s TMDL "
        'branch asks whether "pollutants in stormwater have been identified as a source '
        'of the impairment", which the reference does not say for this water; check the '
        "TMDL"
    ),
    "4b": (
        "category 4b (other pollution controls are expected to attain the standard): on "
        "neither the 303(d) list nor a TMDL, so C(1) does not take it"
    ),
    "4c": (
        "category 4c (impaired by pollution that is not a pollutant, such as flow "
        "alteration): on neither the 303(d) list nor a TMDL, so C(1) does not take it"
    ),
    "other": "its category is not 303(d)-listed (5) nor a TMDL (4a), so C(1) does not take it",
    "unrecognised": (
        "its category is not one the rules profile's [categories] names, so "
        "whether it is on the 303(d) list is not known: confirm the category, and "
        "add its spelling to the list of its kind in [categories]"
    ),
}


def category_kind(category: object, profile: RulesProfile) -> str:
    """``listed``, ``tmdl``, ``unknown``, ``4b``, ``4c``, ``other`` or ``unrecognised``: what
    ``category`` (an ``impaired_waters.category`` value, in any spelling the profile's
    ``[categories]`` names: case, spaces and punctuation folded) is for C(1).

    >>> from analysis.profile import load_profile
    >>> [category_kind(c, load_profile()) for c in ("5", "5M", "5-alt", "5 ALT", "5R")]
    ['listed', 'listed', 'listed', 'listed', 'listed']
    >>> [category_kind(c, load_profile()) for c in ("4A", None, " ", "4b", "4-c", "3", "6")]
    ['tmdl', 'unknown', 'unknown', '4b', '4c', 'other', 'unrecognised']
    """
    if not has_text(category):
        return "unknown"
    kind = profile.categories.kind_of(category)
    return KINDS[kind] if kind is not None else "unrecognised"
