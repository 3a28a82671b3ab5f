"""Layer and field mapping, a contract operation: a plan named otherwise reviews as the demo does."""

import json

import pytest

from analysis.errors import InputError
from analysis.io.vector import list_layers, read_layer, write_geopackage
from analysis.profile import load_profile
from analysis.siteplan.mapping import FieldMap, field_map, parse_field_map, read_field_map
from analysis.siteplan.plan import load_site_plan
from tests.analysis.test_golden import GOLDEN, REFERENCE, ROOT, _run
from tests.conftest import TEST_DATA

PROFILE = load_profile()
DEMO = TEST_DATA / "demo_site.gpkg"
# contract layer -> (source layer, {contract field: source field}), as a CAD export might be.
RENAMED = {
    "project": ("PROJECT_INFO", {"land_use": "LANDUSE", "five_acre_waiver": "WAIVER_5AC"}),
    "disturbance": ("C-PHAS", {"phase": "PHASE_NO", "start_date": "START", "stabilized_date": "STAB_DATE"}),
    "smp": ("C-STRM-SMP", {"smp_id": "Name"}),
    "easement": ("EASEMENTS", {"recorded": "REC"}),
    "drainage_area": ("DA", {"tc_hours": "TC_HR"}),
}
MAP_TOML = """# the demo's layers as a CAD export names them
[layers]
project = "PROJECT_INFO"
disturbance = "C-PHAS"
smp = "C-STRM-SMP"
easement = "EASEMENTS"
drainage_area = "DA"

[fields.project]
land_use = "LANDUSE"
five_acre_waiver = "WAIVER_5AC"

[fields.disturbance]
phase = "PHASE_NO"
start_date = "START"
stabilized_date = "STAB_DATE"

[fields.smp]
smp_id = "Name"

[fields.easement]
recorded = "REC"

[fields.drainage_area]
tc_hours = "TC_HR"
"""


def renamed_demo(path):
    """The demo with the layers and fields of RENAMED under their source names."""
    layers = {}
    for name in list_layers(DEMO):
        data = read_layer(DEMO, name)
        frame = data.frame
        if data.crs is not None:
            frame = frame.set_crs(data.crs, allow_override=True)
        source, fields = RENAMED.get(name, (name, {}))
        layers[source] = frame.rename(columns=fields)
    write_geopackage(path, layers)
    return path


@pytest.fixture(scope="module")
def mapped(tmp_path_factory):
    """The renamed demo and its map file (written once; the tests only read them)."""
    folder = tmp_path_factory.mktemp("mapped")
    site = renamed_demo(folder / "cad_export.gpkg")
    mapping = folder / "cad.toml"
    mapping.write_text(MAP_TOML, encoding="utf-8")
    return site, mapping


def test_review_with_map_gives_the_demo_review(mapped, tmp_path, capsys):
    site, mapping = mapped
    (step,) = _run(
        [["review", site, "--map", mapping, "--reference", REFERENCE, "--json", "{tmp}/out.json", "--quiet"]],
        tmp_path,
        capsys,
    )
    (expected,) = json.loads((GOLDEN / "review_demo_site.json").read_text(encoding="utf-8"))
    actual = step["json"]
    assert actual["site"]["path"] == "cad_export.gpkg"
    actual["site"]["path"] = "demo_site.gpkg"
    assert step["exit"] == expected["exit"] == 1
    assert actual == expected["json"]


def test_the_renamed_plan_is_refused_without_its_map(mapped, capsys):
    from analysis.cli import main

    site, _mapping = mapped
    assert main(["review", str(site), "--quiet"]) == 2
    assert "the required layer 'project' is missing" in capsys.readouterr().err


@pytest.mark.parametrize("golden", ["certification_form", "inspections_check"])
def test_certification_form_and_inspections_read_a_mapped_plan(mapped, tmp_path, capsys, golden):
    site, mapping = mapped
    (expected,) = json.loads((GOLDEN / f"{golden}.json").read_text(encoding="utf-8"))
    argv = [
        a.replace("<root>", str(ROOT)).replace("<tmp>", "{tmp}").replace("<today>", "-")
        for a in expected["argv"]
    ]
    argv = [str(site) if a.endswith("demo_site.gpkg") else a for a in argv] + ["--map", mapping]
    (step,) = _run([argv], tmp_path, capsys)
    assert step["exit"] == expected["exit"]
    for output in ("json", "form.html"):
        assert step.get(output) == expected.get(output)


def test_a_mapped_plan_loads_as_the_demo(mapped):
    site, mapping = mapped
    by_map = load_site_plan(site, PROFILE, mapping=read_field_map(mapping))
    demo = load_site_plan(DEMO, PROFILE)
    assert set(by_map.layers) == set(demo.layers) and by_map.project == demo.project
    for name, frame in demo.layers.items():
        assert list(by_map.layers[name].columns) == list(frame.columns), name


@pytest.mark.parametrize(
    "text, key, said",
    [
        ('[layers]\nculvert = "C-CULV"\n', "key layers.culvert", "'culvert' is not a site-plan layer"),
        (
            '[fields.disturbance]\ncolour = "CLR"\n',
            "key fields.disturbance.colour",
            "'colour' is not a field of the layer 'disturbance'",
        ),
        ('[fields.sewer]\nsize = "X"\n', "key fields.sewer", "'sewer' is not a site-plan layer"),
        ("[layers]\nproject = 3\n", "key layers.project", "must name a source layer, not 3"),
        ('[fields]\ndisturbance = "PHASE_NO"\n', "key fields.disturbance", "must be a table"),
        (
            '[fields.disturbance]\nstart_date = "D"\nstabilized_date = "D"\n',
            "key fields.disturbance.stabilized_date",
            "'D' is mapped to both",
        ),
        ('[rename]\nphase = "P"\n', "key rename", "unknown table"),
        ('layers = "x"\n', "key layers", "must be a table"),
        ("[layers\n", "", "not valid TOML"),
    ],
)
def test_a_bad_map_file_exits_2_naming_the_file_and_key(mapped, tmp_path, capsys, text, key, said):
    from analysis.cli import main

    site, _ = mapped
    bad = tmp_path / "bad_map.toml"
    bad.write_text(text, encoding="utf-8")
    assert main(["review", str(site), "--map", str(bad), "--json", str(tmp_path / "r.json"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"file {bad}" in err and key in err and said in err and "Fix:" in err
    assert not (tmp_path / "r.json").exists()


def test_a_map_naming_what_the_plan_lacks_names_the_map_key(mapped, tmp_path):
    site, mapping = mapped
    bad = tmp_path / "typo.toml"
    bad.write_text(MAP_TOML.replace('"C-PHAS"', '"C-PHASE"').replace('"TC_HR"', '"TC"'), encoding="utf-8")
    with pytest.raises(
        InputError,
        match=r"the layer 'C-PHASE', which .*typo.toml \[layers\] "
        r"disturbance names for 'disturbance', is missing",
    ):
        load_site_plan(site, PROFILE, mapping=read_field_map(bad))
    bad.write_text(MAP_TOML.replace('"TC_HR"', '"TC"'), encoding="utf-8")
    with pytest.raises(
        InputError,
        match=r"layer 'DA', field 'TC': the field 'TC', which .*typo"
        r".toml \[fields.drainage_area\] tc_hours names for "
        r"'tc_hours', is missing",
    ):
        load_site_plan(site, PROFILE, mapping=read_field_map(bad))


def test_map_without_a_site_is_refused(tmp_path, capsys):
    from analysis.cli import main

    mapping = tmp_path / "m.toml"
    mapping.write_text(MAP_TOML, encoding="utf-8")
    assert main(["certification-form", "--map", str(mapping), "--output", str(tmp_path / "f.html")]) == 2
    assert "no site plan is given" in capsys.readouterr().err


def test_the_plugins_field_map_json_is_the_same_operation():
    mapping = parse_field_map('{"disturbance.phase": "PHASE_NO", "smp.SMP_ID": "Name"}')
    assert mapping == field_map(
        fields={"disturbance": {"phase": "PHASE_NO"}, "smp": {"smp_id": "Name"}}, source="FIELD_MAP"
    )
    assert not parse_field_map("  ") and isinstance(parse_field_map(""), FieldMap)
    for text, said in (
        ('{"culvert.size": "X"}', "not 'role.field' with a role of"),
        (
            '{"disturbance.colour": "X"}',
            "key 'disturbance.colour': 'colour' is not a field of the layer 'disturbance'",
        ),
        ('{"disturbance.phase": ""}', "must name a source field"),
        ("[1, 2]", "not a JSON object"),
        ("{", "not valid JSON"),
    ):
        with pytest.raises(InputError, match=said):
            parse_field_map(text)
    with pytest.raises(InputError, match="'soils.hsg' is not 'role.field' with a role of project"):
        parse_field_map('{"soils.hsg": "HSG"}', roles=["project", "disturbance"])
