"""The rules profile: thresholds and citations of one municipality's chapter, from TOML."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

try:
    import tomllib
except ImportError:  # Python < 3.11 (QGIS on Windows ships 3.9)
    import tomli as tomllib

from .errors import InputError

__all__ = ["RulesProfile", "load_profile", "DEFAULT_PROFILE", "available_profiles", "read_toml"]

DEFAULT_PROFILE = "kiryas_joel"
_PROFILE_DIR = Path(__file__).resolve().parent / "profiles"
_REQUIRED_SECTIONS = ("profile", "measurement", "applicability", "phasing", "condition_b",
                      "condition_c", "site_map_scale", "wetlands", "rules")


@dataclass(frozen=True)
class RulesProfile:
    """Every threshold and citation a review uses, read from one TOML file."""

    name: str
    area_crs: str
    source: str
    data: Mapping[str, Any] = field(repr=False)

    def value(self, section: str, key: str):
        """The value ``key`` of ``[section]``; a missing one is an error naming both."""
        try:
            return self.data[section][key]
        except KeyError:
            raise InputError(f"the profile has no value '{key}' in section [{section}]",
                             path=self.source, fix=f"add '{key} = ...' under [{section}]") from None

    def at_least(self, acres: float, threshold: float) -> bool:
        """``acres >= threshold``, within the profile's round-off tolerance."""
        return acres >= threshold - self.value("measurement", "threshold_tolerance_acres")

    def exceeds(self, acres: float, threshold: float) -> bool:
        """``acres > threshold``, beyond the profile's round-off tolerance."""
        return acres > threshold + self.value("measurement", "threshold_tolerance_acres")

    def section(self, rule: str) -> str:
        """The chapter section ``rule`` cites."""
        return self.value_of_rule(rule, "section")

    def title(self, rule: str) -> str:
        """The rule's name for people (report headings)."""
        return self.value_of_rule(rule, "title")

    def value_of_rule(self, rule: str, key: str) -> str:
        try:
            return self.data["rules"][rule][key]
        except KeyError:
            raise InputError(f"the profile has no '{key}' for rule '{rule}'", path=self.source,
                             fix=f"add [rules.{rule}] with {key} = \"...\"") from None


def read_toml(path: str | Path, what: str, fix: str = "correct the TOML syntax") -> dict:
    """A TOML file's tables; a missing or malformed file is an InputError naming ``what`` it is."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"the {what} does not exist", path=path, fix="check the path")
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"the {what} is not valid TOML ({err})", path=path, fix=fix) from None


def available_profiles() -> list[str]:
    """Names of the profiles shipped in the package."""
    return sorted(p.stem for p in _PROFILE_DIR.glob("*.toml"))


def load_profile(name_or_path: str | Path | None = None) -> RulesProfile:
    """Load a shipped profile by name, or a TOML file by path.

    >>> load_profile().value("phasing", "max_concurrent_acres")
    5.0
    """
    name_or_path = name_or_path or DEFAULT_PROFILE
    path = Path(name_or_path)
    if path.suffix.lower() != ".toml":
        path = _PROFILE_DIR / f"{name_or_path}.toml"
        if not path.is_file():
            raise InputError(f"no rules profile named '{name_or_path}'",
                             fix="use one of " + ", ".join(available_profiles())
                             + " or the path of a .toml profile")
    if not path.is_file():
        raise InputError("the rules profile does not exist", path=path,
                         fix="give the path of an existing .toml profile")
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise InputError(f"the rules profile is not valid TOML ({err})", path=path,
                         fix="correct the TOML syntax") from None
    missing = [s for s in _REQUIRED_SECTIONS if s not in data]
    if missing:
        raise InputError("the rules profile lacks section(s) " + ", ".join(f"[{s}]" for s in missing),
                         path=path, fix="start from a shipped profile and change its values")
    meta = data["profile"]
    for key in ("name", "area_crs"):
        if key not in meta:
            raise InputError(f"the rules profile lacks '{key}' in [profile]", path=path,
                             fix=f"add {key} = \"...\" under [profile]")
    return RulesProfile(name=meta["name"], area_crs=meta["area_crs"], source=str(path), data=data)
