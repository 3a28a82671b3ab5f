"""The rules profile: every threshold and citation comes from TOML, typed and checked at load."""

import ast
import dataclasses
import doctest
import re
from pathlib import Path

import pytest

import analysis
import analysis.profile
from analysis.checklist.guarantees import COVERS
from analysis.cli.records import PENALTY_DESCRIPTION
from analysis.errors import InputError
from analysis.findings import MAP_RULES
from analysis.profile import CATEGORY_KINDS, RulesProfile, available_profiles, help_text, load_profile

PACKAGE = Path(analysis.__file__).resolve().parent
ROOT = PACKAGE.parent
SHIPPED = Path(load_profile().source).read_text(encoding="utf-8")
# Keys no code reads: there for people, and declared (so checked) in the typed profile.
FOR_PEOPLE = {"profile.chapter", "hydrology.rainfall_distribution_source"}
# Keys read through a method of the typed profile rather than as an attribute.
THROUGH = {
    "profile.name": r"\bprofile\.name\b",
    "profile.area_crs": r"\bprofile\.area_crs\b",
    "measurement.threshold_tolerance_acres": r"\.(at_least|exceeds)\(",
    "penalty.criminal_fines": r"\.penalty\.fines\(",
    "penalty.civil_fines": r"\.penalty\.fines\(",
    "penalty.criminal_separate_violation_days": r"\.penalty\.separate_violation_days\(",
    "penalty.civil_separate_violation_days": r"\.penalty\.separate_violation_days\(",
    "penalty.criminal_continuing_violations_escalate": r"\.penalty\.escalates\(",
    "penalty.civil_continuing_violations_escalate": r"\.penalty\.escalates\(",
    # the vocabulary's lists, each read by Categories.kind_of (through CATEGORY_KINDS)
    **{f"categories.{kind}": r"\.categories\.kind_of\(" for kind in CATEGORY_KINDS},
}


def test_default_profile_holds_the_chapter_thresholds():
    profile = load_profile()
    assert profile.name == "kiryas_joel"
    assert profile.area_crs == "EPSG:2260"
    assert profile.applicability.min_disturbed_acres == 1.0
    assert profile.phasing.max_concurrent_acres == 5.0
    assert profile.condition_b.min_disturbed_acres == 5.0
    assert profile.site_map_scale.max_scale_denominator == 1200
    assert profile.site_map_scale.feet_per_inch == 100
    assert profile.wetlands.default_adjacent_area_ft == 100.0
    assert profile.hydrology.storms[1].name == "10-year"
    assert profile.penalty.fines("civil")[1] == (350.0, 700.0)
    assert profile.penalty.separate_violation_days("civil") == 7
    assert profile.rules["applicability"].title == "SWPPP required"


def test_the_module_doctests_pass():
    assert doctest.testmod(analysis.profile).failed == 0


def _code() -> str:
    """The source of the library and the plugin, less the profile module itself."""
    files = [
        p
        for p in list(PACKAGE.rglob("*.py")) + list((ROOT / "qgis_plugin").rglob("*.py"))
        if p != PACKAGE / "profile.py"
    ]
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def _keys(profile: RulesProfile):
    """``table.key`` of every key of every table but [rules] (read by section() and title())."""
    for table in dataclasses.fields(RulesProfile):
        if table.name in ("source", "rules"):
            continue
        for key in dataclasses.fields(getattr(profile, table.name)):
            yield f"{table.name}.{key.name}"


def test_every_key_of_the_shipped_profile_is_used_or_declared_for_people():
    code, unused = _code(), []
    guarantees = {f"guarantees.{cover[1]}" for cover in COVERS.values()}
    for key in _keys(load_profile()):
        table, name = key.split(".")
        pattern = THROUGH.get(key, rf"\.{table}\.{name}\b")
        used = key in guarantees or re.search(pattern, code) is not None
        if used == (key in FOR_PEOPLE):
            unused.append(key)
    assert unused == []  # each key is read by the code, or listed in FOR_PEOPLE (and not read)


def test_every_table_and_key_is_typed():
    """Loading refuses unknown keys, so the shipped file holds nothing the dataclasses lack."""
    profile = load_profile()
    assert {f.name for f in dataclasses.fields(RulesProfile)} - {"source"} == {
        line[1:-1].split(".")[0] for line in SHIPPED.splitlines() if line.startswith("[")
    }
    assert isinstance(profile.inspections.interval_days, int)
    assert isinstance(profile.site_map_scale.max_scale_denominator, float)  # 1200 in the file
    assert profile.hydrology.peak_control_storms["10-year"].startswith("overbank")


@pytest.mark.parametrize("rule", MAP_RULES + ("input_geometry",))
def test_every_rule_cites_a_section(rule):
    assert load_profile().section(rule)


def test_a_rule_missing_from_the_profile_is_an_input_error():
    with pytest.raises(InputError, match=r"no \[rules\.no_such_rule\].*Fix: add \[rules\.no_such_rule\]"):
        load_profile().section("no_such_rule")


def test_unknown_profile_names_the_shipped_ones():
    with pytest.raises(InputError, match="kiryas_joel"):
        load_profile("atlantis")
    assert "kiryas_joel" in available_profiles()


def _changed(tmp_path, *replacements, name="changed.toml") -> Path:
    text = SHIPPED
    for old, new in replacements:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_profile_from_a_path_with_changed_threshold(tmp_path):
    path = _changed(
        tmp_path,
        ("max_concurrent_acres = 5.0", "max_concurrent_acres = 3.0"),
        ('name = "kiryas_joel"', 'name = "neighbour"'),
        name="neighbour.toml",
    )
    profile = load_profile(path)
    assert (profile.name, profile.phasing.max_concurrent_acres) == ("neighbour", 3.0)


def test_broken_toml_is_an_input_error_naming_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[profile\nname=", encoding="utf-8")
    with pytest.raises(InputError, match="broken.toml.*not valid TOML"):
        load_profile(path)


def test_a_missing_profile_file_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="absent.toml.*does not exist"):
        load_profile(tmp_path / "absent.toml")


# Each refusal: (replacement in the shipped file, what the message says). Every message starts
# with the file and ends with a fix.
REFUSED = {
    "wrong type": (
        ("max_concurrent_acres = 5.0", 'max_concurrent_acres = "five"'),
        r"\[phasing\] max_concurrent_acres is 'five', not a number",
    ),
    "true is no number": (
        ("max_concurrent_acres = 5.0", "max_concurrent_acres = true"),
        r"\[phasing\] max_concurrent_acres is True, not a number",
    ),
    "unknown key": (
        ("max_concurrent_acres = 5.0", "max_concurent_acres = 5.0"),
        r"\[phasing\] max_concurent_acres: unknown key.*Fix: remove it or correct "
        r"its name \(\[phasing\] takes max_concurrent_acres\)",
    ),
    "unknown table": (("[phasing]", "[phasingg]\nx = 1\n[phasing]"), r"\[phasingg\]: unknown table"),
    "missing key": (
        ("max_scale_denominator = 1200", ""),
        r"lacks \[site_map_scale\] max_scale_denominator.*Fix: add "
        r"max_scale_denominator = <a number> under \[site_map_scale\]",
    ),
    "missing table": (("[esc_practices]", "[esc_practices_]"), r"\[esc_practices_\]: unknown table"),
    "whole number": (
        ("interval_days = 7", "interval_days = 7.5"),
        r"\[inspections\] interval_days is 7\.5, not a whole number",
    ),
    "one of": (
        ('storm_days = "consecutive"', 'storm_days = "weekly"'),
        r"\[inspections\] storm_days is 'weekly', not one of \"consecutive\", \"each_day\"",
    ),
    "inside a list": (
        ("depth_in = 2.8", 'depth_in = "2.8"'),
        r"\[hydrology\] storms\[1\]\.depth_in is '2\.8', not a number",
    ),
    "unknown key in a list's table": (
        ("depth_in = 2.8", "depth = 2.8"),
        r"\[hydrology\] storms\[1\]\.depth: unknown key",
    ),
    "list item": (
        ('sulfate = ["sulfate",', "sulfate = [3,"),
        r"\[pollutants\.aliases\] sulfate\[1\] is 3, not text",
    ),
    "pair": (
        ("cn_range = [40.0, 98.0]", "cn_range = [40.0]"),
        r"\[hydrology\] cn_range is \[40\.0\], not a list of 2 numbers",
    ),
    "rule key": (
        ('title = "SWPPP required"', 'titel = "SWPPP required"'),
        r"\[rules\.applicability\] titel: unknown key",
    ),
    "rule without a title": (('title = "SWPPP required"\n', ""), r"lacks \[rules\.applicability\] title"),
    "geographic area CRS": (
        ('area_crs = "EPSG:2260"', 'area_crs = "EPSG:4326"'),
        r"\[profile\] area_crs is 'EPSG:4326' \(WGS 84\), not a projected CRS",
    ),
    "unknown area CRS": (
        ('area_crs = "EPSG:2260"', 'area_crs = "EPSG:0"'),
        r"\[profile\] area_crs is 'EPSG:0', not a CRS pyproj knows",
    ),
}


@pytest.mark.parametrize("case", REFUSED, ids=list(REFUSED))
def test_a_profile_that_does_not_fit_is_refused_naming_file_and_key(tmp_path, case):
    replacement, message = REFUSED[case]
    path = _changed(tmp_path, replacement)
    with pytest.raises(InputError, match=message) as refused:
        load_profile(path)
    text = str(refused.value)
    assert text.startswith(f"file {path}: ") and ". Fix: " in text


def test_a_missing_table_is_named_with_how_to_add_it(tmp_path):
    path = tmp_path / "thin.toml"
    path.write_text(SHIPPED.split("[measurement]")[0], encoding="utf-8")
    with pytest.raises(
        InputError,
        match=r"thin\.toml: the profile lacks \[measurement\]\. Fix: "
        r"add the table \[measurement\]",
    ):
        load_profile(path)


def test_optional_design_rainfall_may_be_left_out(tmp_path):
    path = _changed(
        tmp_path,
        ("water_quality_rain_in = 1.2\n", ""),
        ('{name = "1-year", depth_in = 2.8, ', '{name = "1-year", '),
    )
    hydrology = load_profile(path).hydrology
    assert hydrology.water_quality_rain_in is None and hydrology.storms[0].depth_in is None


@pytest.mark.parametrize(
    "acres, threshold, expected",
    [(1.0, 1.0, True), (0.99995, 1.0, True), (0.9998, 1.0, False), (5.0, 5.0, True), (4.99, 5.0, False)],
)
def test_at_least_uses_the_round_off_tolerance(acres, threshold, expected):
    assert load_profile().at_least(acres, threshold) is expected


# Help texts --------------------------------------------------------------------------------
# Numbers of the chapter that help texts used to repeat; they now come from the profile.
REPEATED = re.compile(
    r"\b(five|5) acres?\b|five-acre|\bone acre\b|\b1 acre\b|1 inch = 100|"
    r"\(1200\)|\b7 days\b|\b24 hours\b|\b0\.5 inch|\b48 hours\b|\b50%|100 ft\b|"
    r"\bfive years\b|\bone year\b|Tc 0\.1|CN 40",
    re.IGNORECASE,
)


def _templates() -> dict:
    """Each string constant of the plugin's algorithms and the CLI that holds ``{p.`` fields,
    and each algorithm's HELP, by ``file:name``."""
    out = {}
    files = sorted((ROOT / "qgis_plugin" / "algorithms").glob("*.py")) + sorted(
        (PACKAGE / "cli").glob("*.py")
    )
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and ("{p." in node.value or REPEATED.search(node.value))
            ):
                out[f"{path.parent.name}/{path.name}:{node.lineno}"] = node.value
    return out


def test_help_texts_do_not_repeat_the_chapter_numbers():
    templates = _templates()
    assert len(templates) >= 10
    assert {k: REPEATED.findall(v) for k, v in templates.items() if REPEATED.search(v)} == {}


def test_help_texts_state_the_profile_numbers(tmp_path):
    shipped = [help_text(t) for t in _templates().values()]
    joined = "\n".join(shipped)
    for phrase in (
        "not more than 5 acres disturbed",
        "1 inch = 100 feet",
        "(1:1200)",
        "every 7 days",
        "within 24 hours",
        "0.5 inch or more",
        "at least 48 hours ahead",
        "at 50% of",
        "default, 100 ft",
        "Tc 0.1 to 10 h, CN 40 to 98",
        "previous 5 years",
    ):
        assert phrase in joined, phrase


def test_a_profile_with_other_numbers_changes_the_help_texts(tmp_path):
    other = load_profile(
        _changed(
            tmp_path,
            ("max_concurrent_acres = 5.0", "max_concurrent_acres = 4"),
            ("interval_days = 7", "interval_days = 6"),
            ("storm_precip_in = 0.5", "storm_precip_in = 0.75"),
            ("max_scale_denominator = 1200", "max_scale_denominator = 600"),
            ("lookback_years = 5", "lookback_years = 3"),
        )
    )
    texts = [help_text(t, other) for t in _templates().values()]
    joined = "\n".join(texts)
    for phrase in (
        "not more than 4 acres disturbed",
        "4-acre limit",
        "every 6 days",
        "0.75 inch or more",
        "1 inch = 50 feet",
        "(1:600)",
        "previous 3 years",
    ):
        assert phrase in joined, phrase
    assert "not more than 5 acres" not in joined and "every 7 days" not in joined
    assert help_text(PENALTY_DESCRIPTION, other) != help_text(PENALTY_DESCRIPTION)
