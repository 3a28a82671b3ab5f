"""The rules profile: thresholds and citations of one municipality's chapter, typed, from TOML.

Every table and key of the TOML file is a field of a frozen dataclass below; loading checks
each (missing, wrong type, unknown key) and refuses the file naming the key's path, so a typo
in a profile stops the run at once instead of a check reading a default or failing later.
"""

from __future__ import annotations

import dataclasses
import math
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Dict, Literal, Optional, Tuple

try:
    import tomllib
except ImportError:  # Python < 3.11 (QGIS on Windows ships 3.9)
    import tomli as tomllib


from .errors import InputError
from .limits import TOML_MAX_DEPTH

__all__ = [
    "RulesProfile",
    "load_profile",
    "profile_from",
    "DEFAULT_PROFILE",
    "available_profiles",
    "read_toml",
    "help_text",
    "ProfileInfo",
    "Measurement",
    "Applicability",
    "Phasing",
    "ConditionB",
    "ConditionC",
    "SiteMapScale",
    "Wetlands",
    "ConditionA",
    "Categories",
    "CATEGORY_KINDS",
    "fold_category",
    "Pollutants",
    "EasementCoverage",
    "Inspections",
    "Penalty",
    "DesignStorm",
    "Hydrology",
    "Reference",
    "Guarantees",
    "EscPractices",
    "Rounds",
    "Letter",
    "Inputs",
    "Rule",
]

DEFAULT_PROFILE = "kiryas_joel"
_PROFILE_DIR = Path(__file__).resolve().parent / "profiles"

Pair = Tuple[float, float]


# The tables ------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProfileInfo:
    """[profile]: which chapter, and the CRS every area is measured in (projected, linear units)."""

    name: str
    authority: str  # who issues the decision: the village
    chapter_title: str  # the chapter the village reviews under
    chapter: str  # for people: the code does not read it
    area_crs: str

    @property
    def title(self) -> str:
        """The authority and its chapter in one line (the NOV's, the certification's)."""
        return f"{self.authority}, {self.chapter_title}"


@dataclass(frozen=True)
class Measurement:
    threshold_tolerance_acres: float
    outside_site_tolerance_sq_ft: float


@dataclass(frozen=True)
class Applicability:
    min_disturbed_acres: float
    min_common_plan_acres: float
    common_plan_acres_means: str  # "disturbed" or "total": what project.common_plan_acres holds


@dataclass(frozen=True)
class Phasing:
    max_concurrent_acres: float


@dataclass(frozen=True)
class ConditionB:
    min_disturbed_acres: float


@dataclass(frozen=True)
class ConditionC:
    min_disturbed_acres: float
    max_disturbed_acres: float
    exempt_land_uses: Tuple[str, ...]


@dataclass(frozen=True)
class SiteMapScale:
    max_scale_denominator: float
    scale_tolerance_ratio: float
    location_map_titles: Tuple[str, ...]  # words of a sheet's title that make it a location map
    # A site map drawn smaller than the limit: "warn" (B(2) says it "should be" at that scale)
    # or "fail" (the village holds plans to it as a requirement).
    smaller_scale_status: Literal["warn", "fail"]

    @property
    def feet_per_inch(self) -> float:
        """The limit as people say it: 1 inch = this many feet (1200 -> 100)."""
        return self.max_scale_denominator / 12.0


@dataclass(frozen=True)
class Wetlands:
    default_adjacent_area_ft: float
    min_overlap_sq_ft: float


@dataclass(frozen=True)
class ConditionA:
    min_overlap_sq_ft: float
    downstream_catchment_hops: int  # drains_to steps followed from the site's catchments
    routed_tmdl_watershed: Literal["applies", "needs_review"]  # one met only through them
    # a downstream catchment lies in a TMDL watershed by a real share of its area: this
    # percent of it, or this many acres (below both, only where it drains to is decided)
    routed_watershed_min_share_percent: float
    routed_watershed_min_share_acres: float


def fold_category(text: object) -> str:
    """An Integrated Report category with case, spaces and punctuation folded, as
    [categories] compares it: ``"5-ALT"``, ``"5 alt"`` -> ``"5alt"``; ``"4A"`` -> ``"4a"``."""
    return re.sub(r"[^0-9a-z]", "", str(text).lower())


@dataclass(frozen=True)
class Categories:
    """[categories]: the one vocabulary of a water's Integrated Report category, each kind's
    spellings (read by the importer, the review and the screen: ``reference.categories``)."""

    listed: Tuple[str, ...]  # on the 303(d) list: C(1)'s first branch
    tmdl: Tuple[str, ...]  # impaired with an approved TMDL: C(1)'s TMDL branch
    other_controls: Tuple[str, ...]  # 4b: on neither the list nor a TMDL
    not_a_pollutant: Tuple[str, ...]  # 4c: on neither
    not_impaired: Tuple[str, ...]  # 1, 2, 3: skipped at import

    def __post_init__(self) -> None:
        _category_kinds(self)  # each spelling of one kind, each with a letter or digit

    @cached_property
    def _kinds(self) -> Dict[str, str]:
        """Folded spelling -> its list, made once."""
        return _category_kinds(self)

    @cached_property
    def _seen(self) -> Dict[object, Optional[str]]:
        """Each value asked before -> its list (a layer's few values, asked row by row)."""
        return {}

    def kind_of(self, category: object) -> Optional[str]:
        """The [categories] list (``listed``, ``tmdl``, ...) ``category`` is spelled in, case,
        spaces and punctuation folded; None where no list has it.

        >>> load_profile().categories.kind_of("5-ALT"), load_profile().categories.kind_of("6")
        ('listed', None)
        """
        seen = self._seen
        try:
            return seen[category]
        except KeyError:
            kind = self._kinds.get(fold_category(category))
            if len(seen) < _SEEN_MAX:
                seen[category] = kind
            return kind
        except TypeError:  # a value that is not hashable
            return self._kinds.get(fold_category(category))

    def spellings(self) -> str:
        """Every kind's spellings, for messages: ``listed: 5, 5m, ...; tmdl: 4a; ...``."""
        return "; ".join(f"{kind}: {', '.join(getattr(self, kind))}" for kind in CATEGORY_KINDS)


_SEEN_MAX = 1_000  # values remembered by Categories.kind_of
# The [categories] lists.
CATEGORY_KINDS = ("listed", "tmdl", "other_controls", "not_a_pollutant", "not_impaired")


def _category_kinds(categories: Categories) -> Dict[str, str]:
    """Folded spelling -> its [categories] list; a spelling of two kinds, or of no letter or
    digit, is refused (ValueError: the profile's reader names the table)."""
    seen: Dict[str, str] = {}
    for kind in CATEGORY_KINDS:
        for spelling in getattr(categories, kind):
            folded = fold_category(spelling)
            if not folded:
                raise ValueError(f"{kind} has {spelling!r}, which has no letter or digit")
            if seen.get(folded, kind) != kind:
                raise ValueError(
                    f"{spelling!r} is in both {seen[folded]} and {kind}: a category is of one kind"
                )
            seen[folded] = kind
    return seen


@dataclass(frozen=True)
class Pollutants:
    sediment_family: str
    qualifiers: Tuple[str, ...]
    aliases: Dict[str, Tuple[str, ...]]  # [pollutants.aliases]: name -> its other spellings


@dataclass(frozen=True)
class EasementCoverage:
    uncovered_tolerance_sq_ft: float
    uncovered_tolerance_fraction: float
    snap_tolerance_ft: float
    # Whose SMPs need easements and declarations (D(8); Maintenance and repair B, D): "required"
    # (only where a condition of SWPPP C applies) or "shown" (every SMP the plan shows).
    smps_held: Literal["required", "shown"]


@dataclass(frozen=True)
class Inspections:
    interval_days: int
    storm_precip_in: float
    storm_report_within_hours: int
    notice_hours_before_milestone: float
    sediment_cleanout_fraction: float
    wet_day_min_in: float
    storm_days: Literal["consecutive", "each_day"]
    wet_hour_min_in: float
    storm_dry_hours: int
    milestones: Tuple[Tuple[str, str], ...]  # (NOTICES.csv key, title)


@dataclass(frozen=True)
class Penalty:
    lookback_years: int
    criminal_fines: Tuple[Pair, ...]  # (min, max) of the first, second, third and later offence
    criminal_imprisonment_max_days: int
    criminal_separate_violation_days: int
    civil_fines: Tuple[Pair, ...]
    civil_separate_violation_days: int
    criminal_continuing_violations_escalate: bool
    civil_continuing_violations_escalate: bool

    def escalates(self, kind: str) -> bool:
        """Whether a continuing ``kind`` violation's separate violations take higher ranges."""
        return (
            self.criminal_continuing_violations_escalate
            if kind == "criminal"
            else self.civil_continuing_violations_escalate
        )

    def fines(self, kind: str) -> Tuple[Pair, ...]:
        """The fine schedule of ``kind`` (criminal or civil)."""
        return self.criminal_fines if kind == "criminal" else self.civil_fines

    def separate_violation_days(self, kind: str) -> int:
        """Days of a continuing ``kind`` violation that make one separate violation."""
        return (
            self.criminal_separate_violation_days
            if kind == "criminal"
            else self.civil_separate_violation_days
        )


@dataclass(frozen=True)
class DesignStorm:
    """One design storm; without ``depth_in`` the review says needs_review for it."""

    name: str
    depth_in: Optional[float] = None
    source: Optional[str] = None


@dataclass(frozen=True)
class Hydrology:
    rainfall_distribution: Literal["I", "IA", "II", "III"]
    storms: Tuple[DesignStorm, ...]
    peak_control_storms: Dict[str, str]  # storm name -> the control the SWPPP then needs
    min_rv: float
    dual_soil_groups: Literal["undrained", "drained"]
    unmapped_tolerance_fraction: float
    claim_tolerance_fraction: float
    tc_hours_range: Pair
    cn_range: Pair
    ia_p_range: Pair
    max_pond_swamp_pct: float
    illustrative_rainfall: bool = False
    rainfall_distribution_source: Optional[str] = None  # for people: why that distribution
    water_quality_rain_in: Optional[float] = None  # absent: WQv needs_review
    water_quality_rain_source: Optional[str] = None


@dataclass(frozen=True)
class Reference:
    current_listing_cycle: str
    geometry_change_tolerance_ft: float
    search_distance_ft: float
    pollutant_synonyms: Dict[str, str]
    tmdl_point_source_is_stormwater: bool = True
    tmdl_nonpoint_source_is_stormwater: bool = False
    max_rejected_with_tmdl: int = 0
    max_rejected_percent: float = 100.0


@dataclass(frozen=True)
class Guarantees:
    construction_years_after_acceptance: int
    maintenance_years_after_completion: int
    # The kinds of security each guarantee may be (E(1): "a cash escrow, or irrevocable letter
    # of credit"; E(2): "a performance and maintenance bond").
    construction_kinds: Tuple[str, ...]
    maintenance_kinds: Tuple[str, ...]
    # Whether the last stabilisation date stands for final acceptance and substantial
    # completion (the dates E(1) and E(2) run from), so that a fixed end date can pass.
    stabilization_stands_for_acceptance: bool


@dataclass(frozen=True)
class EscPractices:
    length_tolerance_fraction: float


@dataclass(frozen=True)
class Rounds:
    """[rounds]: how a finding of one review round is matched to one of the round before
    (``swppp review --round``, issue 35): by place where its feature ids changed, and when its
    figure changed enough to be flagged."""

    place_tolerance_ft: float  # centroids within this distance (area CRS feet): the same place
    figure_change_fraction: float  # |after - before| beyond this share of |before|: flagged

    def __post_init__(self) -> None:
        if not self.place_tolerance_ft >= 0:
            raise ValueError("[rounds] place_tolerance_ft must be 0 or more")
        if not self.figure_change_fraction >= 0:
            raise ValueError("[rounds] figure_change_fraction must be 0 or more")


@dataclass(frozen=True)
class Letter:
    """[letter]: the letterhead of the comment letter (``swppp letter``, issue 35): the
    village's name and address, the office that writes, and the title under the signature."""

    village: str
    address: Tuple[str, ...]
    office: str
    signature_title: str
    # rule -> what would satisfy a comment of that rule ("default": any other rule's)
    requests: Dict[str, str]
    illustrative: bool = False  # the shipped values are examples: the letter says so

    def __post_init__(self) -> None:
        if not self.village.strip():
            raise ValueError("[letter] village must name the village")


@dataclass(frozen=True)
class Inputs:
    """[inputs]: what the input boundary accepts before any work (issue 22): the range of
    dates, and how far a layer may reach beyond its CRS's area of use."""

    earliest_date: date
    latest_date: date
    crs_area_margin_degrees: float

    def __post_init__(self) -> None:
        if not self.earliest_date < self.latest_date:
            raise ValueError("[inputs] earliest_date must come before latest_date")
        if not 0 <= self.crs_area_margin_degrees <= 180:
            raise ValueError("[inputs] crs_area_margin_degrees must be 0 to 180")


@dataclass(frozen=True)
class Rule:
    """[rules.<rule>]: the chapter section the rule cites and its name for people."""

    section: str
    title: str


@dataclass(frozen=True)
class RulesProfile:
    """Every threshold and citation a review uses, read from one TOML file (one field per table)."""

    source: str = dataclasses.field(metadata={"toml": False})
    profile: ProfileInfo
    measurement: Measurement
    applicability: Applicability
    phasing: Phasing
    condition_b: ConditionB
    condition_c: ConditionC
    site_map_scale: SiteMapScale
    wetlands: Wetlands
    condition_a: ConditionA
    categories: Categories
    pollutants: Pollutants
    easement_coverage: EasementCoverage
    inspections: Inspections
    penalty: Penalty
    hydrology: Hydrology
    reference: Reference
    guarantees: Guarantees
    esc_practices: EscPractices
    inputs: Inputs
    rounds: Rounds
    letter: Letter
    rules: Dict[str, Rule]

    @property
    def name(self) -> str:
        """[profile] name: the profile's name in results."""
        return self.profile.name

    @property
    def area_crs(self) -> str:
        """[profile] area_crs: the CRS every area and length is measured in."""
        return self.profile.area_crs

    def at_least(self, acres: float, threshold: float) -> bool:
        """``acres >= threshold``, within the profile's round-off tolerance."""
        return acres >= threshold - self.measurement.threshold_tolerance_acres

    def near(self, acres: float, threshold: float) -> bool:
        """``acres`` within the measurement's uncertainty (the round-off tolerance) of
        ``threshold``: a decision on it is ``needs_review``."""
        return abs(acres - threshold) <= self.measurement.threshold_tolerance_acres

    def exceeds(self, acres: float, threshold: float) -> bool:
        """``acres > threshold``, beyond the profile's round-off tolerance."""
        return acres > threshold + self.measurement.threshold_tolerance_acres

    def section(self, rule: str) -> str:
        """The chapter section ``rule`` cites."""
        return self._rule(rule).section

    def title(self, rule: str) -> str:
        """The rule's name for people (report headings)."""
        return self._rule(rule).title

    def _rule(self, rule: str) -> Rule:
        try:
            return self.rules[rule]
        except KeyError:
            raise InputError(
                f"the profile has no [rules.{rule}]",
                path=self.source,
                fix=f'add [rules.{rule}] with section = "..." and title = "..."',
            ) from None


# Reading ---------------------------------------------------------------------------------
def read_toml(path: str | Path, what: str, fix: str = "correct the TOML syntax") -> dict:
    """A TOML file's tables; a missing or malformed file is an InputError naming ``what`` it is."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"the {what} does not exist", path=path, fix="check the path")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError(f"the {what} is not valid TOML ({err})", path=path, fix=fix) from None
    too_deep = InputError(
        f"the {what} is nested deeper than {TOML_MAX_DEPTH} tables or arrays",
        path=path,
        fix="flatten it: no profile, mapping or record nests more than a few levels",
    )
    if _bracket_depth(text) > TOML_MAX_DEPTH:
        raise too_deep  # before the parser, which recurses once per level
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise InputError(f"the {what} is not valid TOML ({err})", path=path, fix=fix) from None
    except RecursionError:
        raise too_deep from None
    if _value_depth(data) > TOML_MAX_DEPTH:  # dotted keys nest without brackets
        raise too_deep
    return data


# a TOML token that can hold a bracket not meaning nesting (strings, comments), or a bracket
_TOML_TOKEN = re.compile(
    r'#[^\n]*|"""(?:\\.|[^\\])*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:\\.|[^"\\\n])*"|\'[^\'\n]*\'|[\[\]{}]'
)


def _bracket_depth(text: str) -> int:
    """How deep ``[`` and ``{`` nest in TOML ``text``, outside strings and comments.

    >>> _bracket_depth('a = [[1], {b = "[[["}]  # ]]]')
    2
    """
    depth = deepest = 0
    for token in _TOML_TOKEN.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif mark in "]}":
            depth -= 1
    return deepest


def _value_depth(data: object) -> int:
    """How deep tables and arrays nest in parsed TOML ``data`` (iteratively: no recursion)."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
        for child in children:
            if isinstance(child, (dict, list)):
                deepest = max(deepest, depth + 1)
                if deepest > TOML_MAX_DEPTH:
                    return deepest
                stack.append((child, depth + 1))
    return max(deepest, 1)


def available_profiles() -> list[str]:
    """Names of the profiles shipped in the package."""
    return sorted(p.stem for p in _PROFILE_DIR.glob("*.toml"))


def load_profile(name_or_path: str | Path | None = None) -> RulesProfile:
    """Load a shipped profile by name, or a TOML file by path; every table and key is checked.

    >>> load_profile().phasing.max_concurrent_acres
    5.0
    """
    name_or_path = name_or_path or DEFAULT_PROFILE
    path = Path(name_or_path)
    if path.suffix.lower() != ".toml":
        path = _PROFILE_DIR / f"{name_or_path}.toml"
        if not path.is_file():
            raise InputError(
                f"no rules profile named '{name_or_path}'",
                fix="use one of " + ", ".join(available_profiles()) + " or the path of a .toml profile",
            )
    data = read_toml(path, "rules profile")
    return profile_from(data, str(path))


def profile_from(data: Mapping[str, Any], source: str) -> RulesProfile:
    """The typed profile of ``data`` (a TOML file's tables); ``source`` names the file in errors."""
    profile = _Reader(source).table(RulesProfile, data, ((), ()), extra={"source": source})
    _check_area_crs(profile)
    _check_choices(profile)
    return profile


def help_text(template: str, profile: RulesProfile | None = None) -> str:
    """``template`` with its ``{p.<table>.<key>}`` fields filled from ``profile`` (by default the
    shipped one): help texts state the chapter's numbers without repeating them.

    >>> help_text("not more than {p.phasing.max_concurrent_acres:g} acres")
    'not more than 5 acres'
    """
    return template.format(p=profile or _shipped_default())


@lru_cache(maxsize=1)
def _shipped_default() -> RulesProfile:
    """The default profile, read once (QGIS asks for display names and help often)."""
    return load_profile(DEFAULT_PROFILE)


def _check_choices(profile: RulesProfile) -> None:
    """Switches that take one of a few words."""
    value = profile.applicability.common_plan_acres_means
    if value not in ("disturbed", "total"):
        raise InputError(
            f"the profile's [applicability] common_plan_acres_means is {value!r}, "
            'not "disturbed" or "total"',
            path=profile.source,
            fix='give common_plan_acres_means = "disturbed" or "total"',
        )


def _check_area_crs(profile: RulesProfile) -> None:
    """[profile] area_crs must be a projected CRS with a linear unit (areas are planar in it)."""
    from pyproj import CRS  # here, not at the top: ``swppp --help`` reads no CRS database
    from pyproj.exceptions import CRSError

    value = profile.area_crs
    fix = 'give a projected CRS in feet or metres, e.g. area_crs = "EPSG:2260"'
    try:
        crs = CRS.from_user_input(value)
    except CRSError:
        raise InputError(
            f"the profile's [profile] area_crs is '{value}', not a CRS pyproj knows",
            path=profile.source,
            fix=fix,
        ) from None
    axis = crs.axis_info[0] if crs.axis_info else None
    if (
        not crs.is_projected
        or axis is None
        or axis.unit_conversion_factor <= 0
        or axis.unit_name in ("degree", "radian", "unknown")
    ):
        raise InputError(
            f"the profile's [profile] area_crs is '{value}' ({crs.name}), not a "
            "projected CRS with a linear unit",
            path=profile.source,
            fix=fix,
        )


class _Reader:
    """Builds the dataclasses from TOML values, refusing what does not fit with its key path.

    A key path is ``(tables, keys)``: the TOML table headers walked into, then the keys and
    list positions (from 1) inside the last one.
    """

    def __init__(self, source: str):
        self.source = source

    def table(self, cls, data, where: tuple, extra: Optional[dict] = None):
        if not isinstance(data, Mapping):
            self._wrong(where, data, "a table")
        hints = typing.get_type_hints(cls)
        fields = [f for f in dataclasses.fields(cls) if f.metadata.get("toml", True)]
        names = {f.name for f in fields}
        for key in data:
            if key not in names:
                inner = _down(where, key, data[key])
                what = "unknown table" if inner[0] != where[0] else "unknown key"
                raise InputError(
                    f"{_show(inner)}: {what}",
                    path=self.source,
                    fix=f"remove it or correct its name ({_show(where)} takes "
                    + ", ".join(sorted(names))
                    + ")",
                )
        values = dict(extra or {})
        for f in fields:
            if f.name in data:
                values[f.name] = self.value(hints[f.name], data[f.name], _down(where, f.name, data[f.name]))
            elif f.default is dataclasses.MISSING:
                missing = _down(where, f.name, {} if _is_table(hints[f.name]) else None)
                raise InputError(
                    f"the profile lacks {_show(missing)}",
                    path=self.source,
                    fix=_add(where, f.name, hints[f.name]),
                )
        try:
            return cls(**values)
        except ValueError as err:  # a table's own consistency (__post_init__)
            raise InputError(
                f"the profile's {_show(where)}: {err}", path=self.source, fix="correct the values"
            ) from None

    def value(self, kind, value, where: tuple):
        origin, args = typing.get_origin(kind), typing.get_args(kind)
        if dataclasses.is_dataclass(kind):
            return self.table(kind, value, where)
        if origin is typing.Union:  # Optional[X]
            inner = next(a for a in args if a is not type(None))
            return None if value is None else self.value(inner, value, where)
        if origin is Literal:
            if value not in args:
                self._wrong(where, value, _expected(kind))
            return value
        if origin is tuple:
            if not isinstance(value, (list, tuple)) or (args[-1] is not Ellipsis and len(value) != len(args)):
                self._wrong(where, value, _expected(kind))
            kinds = [args[0]] * len(value) if args[-1] is Ellipsis else list(args)
            return tuple(
                self.value(k, v, _down(where, i + 1, v)) for i, (k, v) in enumerate(zip(kinds, value))
            )
        if origin in (dict, Mapping):
            if not isinstance(value, Mapping):
                self._wrong(where, value, _expected(kind))
            return {k: self.value(args[1], v, _down(where, k, v)) for k, v in value.items()}
        if kind is bool:
            ok = isinstance(value, bool)
        elif kind is int:
            ok = isinstance(value, int) and not isinstance(value, bool)
        elif kind is float:  # TOML's inf and nan are no threshold
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            value = float(value) if ok else value
        elif kind is date:  # a TOML date, not a date-time
            ok = isinstance(value, date) and not isinstance(value, datetime)
        else:
            ok = isinstance(value, kind)
        if not ok:
            self._wrong(where, value, _expected(kind))
        return value

    def _wrong(self, where, value, expected):
        shown = f"'{value}'" if isinstance(value, str) else repr(value)
        raise InputError(
            f"the profile's {_show(where)} is {shown}, not {expected}",
            path=self.source,
            fix=f"write {expected} there",
        )


def _down(where: tuple, key, value) -> tuple:
    """The key path one step into ``key`` (a table header while only tables were walked)."""
    tables, keys = where
    if not keys and isinstance(key, str) and isinstance(value, Mapping):
        return tables + (key,), ()
    return tables, keys + (key,)


def _show(where: tuple) -> str:
    """A key path as the TOML file shows it: ``[hydrology] storms[2].depth_in``."""
    tables, keys = where
    text = ""
    for part in keys:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    head = f"[{'.'.join(tables)}]" if tables else ""
    return " ".join(p for p in (head, text) if p) or "the file"


def _is_table(kind) -> bool:
    return dataclasses.is_dataclass(kind) or typing.get_origin(kind) in (dict, Mapping)


def _add(where: tuple, key: str, kind) -> str:
    if _is_table(kind) and not where[1]:
        return (
            f"add the table [{'.'.join(where[0] + (key,))}] (start from a shipped profile "
            "and change its values)"
        )
    return f"add {key} = <{_expected(kind)}> under {_show(where)}"


def _expected(kind) -> str:
    """What a value of ``kind`` is, in words."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if _is_table(kind):
        return "a table"
    if origin is typing.Union:
        return _expected(next(a for a in args if a is not type(None)))
    if origin is Literal:
        return "one of " + ", ".join(f'"{a}"' for a in args)
    if origin is tuple:
        if args[-1] is Ellipsis:
            return f"a list, each {_expected(args[0])}"
        return f"a list of {len(args)} " + ("numbers" if set(args) == {float} else "values")
    return {
        bool: "true or false",
        int: "a whole number",
        float: "a number",
        str: "text",
        date: "a date (YYYY-MM-DD, unquoted)",
    }.get(kind, getattr(kind, "__name__", str(kind)))
