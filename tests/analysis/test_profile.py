"""The rules profile: every threshold and citation comes from TOML."""
from pathlib import Path

import pytest

from analysis.errors import InputError
from analysis.findings import MAP_RULES
from analysis.profile import available_profiles, load_profile


def test_default_profile_holds_the_chapter_thresholds():
    profile = load_profile()
    assert profile.name == "kiryas_joel"
    assert profile.area_crs == "EPSG:2260"
    assert profile.value("applicability", "min_disturbed_acres") == 1.0
    assert profile.value("phasing", "max_concurrent_acres") == 5.0
    assert profile.value("condition_b", "min_disturbed_acres") == 5.0
    assert profile.value("site_map_scale", "max_scale_denominator") == 1200
    assert profile.value("wetlands", "default_adjacent_area_ft") == 100.0


@pytest.mark.parametrize("rule", MAP_RULES + ("input_geometry",))
def test_every_rule_cites_a_section(rule):
    assert load_profile().section(rule)


def test_unknown_profile_names_the_shipped_ones():
    with pytest.raises(InputError, match="kiryas_joel"):
        load_profile("atlantis")
    assert "kiryas_joel" in available_profiles()


def test_profile_from_a_path_with_changed_threshold(tmp_path):
    text = load_profile().source
    changed = Path(text).read_text(encoding="utf-8").replace(
        "max_concurrent_acres = 5.0", "max_concurrent_acres = 3.0").replace(
        'name = "kiryas_joel"', 'name = "neighbour"')
    path = tmp_path / "neighbour.toml"
    path.write_text(changed, encoding="utf-8")
    profile = load_profile(path)
    assert (profile.name, profile.value("phasing", "max_concurrent_acres")) == ("neighbour", 3.0)


def test_broken_toml_is_an_input_error_naming_the_file(tmp_path):
    path = tmp_path / "broken.toml"
    path.write_text("[profile\nname=", encoding="utf-8")
    with pytest.raises(InputError, match="broken.toml.*not valid TOML"):
        load_profile(path)


def test_missing_value_names_section_and_key(tmp_path):
    path = tmp_path / "thin.toml"
    path.write_text(Path(load_profile().source).read_text(encoding="utf-8").replace(
        "max_scale_denominator = 1200", ""), encoding="utf-8")
    with pytest.raises(InputError, match=r"max_scale_denominator.*\[site_map_scale\]"):
        load_profile(path).value("site_map_scale", "max_scale_denominator")


@pytest.mark.parametrize("acres, threshold, expected", [
    (1.0, 1.0, True), (0.99995, 1.0, True), (0.9998, 1.0, False), (5.0, 5.0, True), (4.99, 5.0, False)])
def test_at_least_uses_the_round_off_tolerance(acres, threshold, expected):
    assert load_profile().at_least(acres, threshold) is expected
