"""An impaired water's Integrated Report category read for SWPPP C(1), as the profile reads it.

One rule for the review (``checks.condition_a``) and the many-site screen (``screen``): a water
is ``listed`` (on the 303(d) list: the profile's ``[condition_a] listed_categories``, category 5
and its subcategories), ``tmdl`` (impaired with an approved TMDL: ``tmdl_categories``, 4a),
``unknown`` (no category recorded), ``4b``, ``4c`` or ``other``. Only a listed water takes the
first branch of C(1); ``UNDECIDED`` kinds leave Condition A not decided, the rest are notes.
"""
from __future__ import annotations

import re

from ..profile import RulesProfile
from ..values import has_text

__all__ = ["LISTED", "UNDECIDED", "CATEGORY_WORDS", "category_kind"]

LISTED = "listed"
# The kinds that cannot decide Condition A alone: a person confirms the category or the TMDL.
UNDECIDED = ("unknown", "tmdl")

# What each kind of impaired_waters category means for SWPPP C(1) (the profile's reading).
CATEGORY_WORDS = {
    "unknown": ("its category is not recorded: taken as 303(d)-listed, but it alone cannot "
                "decide Condition A; confirm the category (5: on the 303(d) list; 4a: TMDL "
                "approved)"),
    "tmdl": ("impaired with an approved TMDL (category 4a), not on the 303(d) list: C(1)'s TMDL "
             "branch asks whether \"pollutants in stormwater have been identified as a source "
             "of the impairment\", which the reference does not say for this water; check the "
             "TMDL"),
    "4b": ("category 4b (other pollution controls are expected to attain the standard): on "
           "neither the 303(d) list nor a TMDL, so C(1) does not take it"),
    "4c": ("category 4c (impaired by pollution that is not a pollutant, such as flow "
           "alteration): on neither the 303(d) list nor a TMDL, so C(1) does not take it"),
    "other": "its category is not 303(d)-listed (5) nor a TMDL (4a), so C(1) does not take it",
}


def category_kind(category, profile: RulesProfile) -> str:
    """``listed``, ``tmdl``, ``unknown``, ``4b``, ``4c`` or ``other``: what ``category`` (an
    ``impaired_waters.category`` value, case and punctuation folded) is for C(1).

    >>> from analysis.profile import load_profile
    >>> [category_kind(c, load_profile()) for c in ("5", "4A", None, " ", "4b", "4-c", "3")]
    ['listed', 'tmdl', 'unknown', 'unknown', '4b', '4c', 'other']
    """
    if not has_text(category):
        return "unknown"
    folded = re.sub(r"[^0-9a-z]", "", str(category).lower())
    if folded in profile.condition_a.listed_categories:
        return LISTED
    if folded in profile.condition_a.tmdl_categories:
        return "tmdl"
    return folded if folded in ("4b", "4c") else "other"
