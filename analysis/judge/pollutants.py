"""Pollutant and water names as compared: the profile's aliases, qualifiers and sediment family."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..profile import RulesProfile
from ..values import has_text

__all__ = ["PollutantNames", "normalise_name"]


def normalise_name(text: Any, qualifiers: Iterable[str] = ()) -> str:
    """``text`` folded for comparison: lower case, punctuation as spaces, one space, no qualifiers.

    >>> normalise_name("  PHOSPHORUS, Total ", ["total"])
    'phosphorus'
    >>> normalise_name("Seven-Springs  Creek")
    'seven springs creek'
    """
    words = re.sub(r"[^0-9a-z]+", " ", str(text).lower()).split()
    dropped = {q.lower() for q in qualifiers}
    return " ".join(w for w in words if w not in dropped)


@dataclass(frozen=True)
class PollutantNames:
    """The profile's pollutant names: each spelling mapped to one name, and the sediment family."""

    aliases: dict[str, str]  # normalised spelling -> pollutant name
    qualifiers: tuple[str, ...]
    sediment: str

    @classmethod
    def from_profile(cls, profile: RulesProfile) -> PollutantNames:
        qualifiers = tuple(profile.pollutants.qualifiers)
        aliases = {}
        for name, spellings in profile.pollutants.aliases.items():
            for spelling in [name, *spellings]:
                aliases[normalise_name(spelling, qualifiers)] = name
        return cls(aliases, qualifiers, profile.pollutants.sediment_family)

    def canonical(self, spelling: str) -> str:
        """The pollutant ``spelling`` names (itself, folded, where the profile has no alias)."""
        key = normalise_name(spelling, self.qualifiers)
        return self.aliases.get(key, key)

    def split(self, text: Any) -> list[str]:
        """The ``;``-separated pollutants of a reference field, each once, as their names."""
        if not has_text(text):
            return []
        names = [self.canonical(part) for part in str(text).split(";") if part.strip()]
        return list(dict.fromkeys(n for n in names if n))

    def describe(self, text: Any) -> str:
        """``Silt/Sediment (sediment), Phosphorus``: the field's spelling, with the family named."""
        if not has_text(text):
            return ""
        parts = [p.strip() for p in str(text).split(";") if p.strip()]
        return ", ".join(
            f"{p} ({self.sediment})"
            if self.canonical(p) == self.sediment and normalise_name(p) != self.sediment
            else p
            for p in parts
        )
