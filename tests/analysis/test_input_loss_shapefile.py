"""What a shapefile loses: its text's encoding (no .cpg) and field names cut to 10 characters.
Each is refused naming the file, layer, feature or field and the fix, on both stacks."""

from __future__ import annotations

import geopandas as gpd
import pytest

from analysis.errors import InputError
from analysis.io.vector import read_layer
from analysis.profile import load_profile
from analysis.screen.sites import read_sites
from analysis.siteplan.mapping import read_field_map
from analysis.siteplan.plan import load_site_plan
from tests.analysis.conftest import X0, Y0, square

PROFILE = load_profile()
NAME = "Kiryas Jo\u00ebl"


def _shapefile(path, frame: gpd.GeoDataFrame, encoding: str = "UTF-8") -> None:
    """Write ``frame`` as a shapefile in ``encoding`` (a .cpg naming it beside the .dbf)."""
    frame.to_file(path, driver="ESRI Shapefile", encoding=encoding)


def test_utf8_text_without_cpg_is_refused_and_read_with_one(tmp_path):
    path = tmp_path / "sites.shp"
    _shapefile(
        path, gpd.GeoDataFrame({"site_id": ["S-1"], "owner": [NAME]}, geometry=[square(1.0)], crs="EPSG:2260")
    )
    assert path.with_suffix(".cpg").read_text().strip().upper() in ("UTF-8", "UTF8")
    assert read_layer(path, "sites").frame["owner"].iloc[0] == NAME  # the .cpg read: kept
    path.with_suffix(".cpg").unlink()  # as a tool that writes no .cpg leaves it
    with pytest.raises(
        InputError,
        match=r"file .*sites\.shp, layer 'sites', feature 0, field "
        r"'owner': the text 'Kiryas JoÃ«l' is UTF-8 read as "
        r"Latin-1 \('Kiryas Joël' was meant\).*sites\.cpg "
        r"holding the word UTF-8",
    ):
        read_sites(path, PROFILE.area_crs)
    path.with_suffix(".cpg").write_text("UTF-8")  # the fix the message gives
    assert read_layer(path, "sites").frame["owner"].iloc[0] == NAME


def test_latin1_text_without_cpg_is_read(tmp_path):
    path = tmp_path / "sites.shp"
    _shapefile(
        path,
        gpd.GeoDataFrame({"site_id": ["S-1"], "owner": [NAME]}, geometry=[square(1.0)], crs="EPSG:2260"),
        "ISO-8859-1",
    )
    path.with_suffix(".cpg").unlink(missing_ok=True)
    assert read_layer(path, "sites").frame["owner"].iloc[0] == NAME


def _drainage(tmp_path, make_site, **extra):
    area = gpd.GeoDataFrame(
        {"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [0.5], **extra},
        geometry=[square(2.0, x=X0 + 100, y=Y0 + 100)],
        crs="EPSG:2260",
    )
    return make_site([square(1.0)], layers={"drainage_area": area})


def test_an_optional_field_cut_to_10_characters_is_refused(tmp_path, make_site):
    # A GeoPackage made from a shapefile keeps the cut name: pond_swamp_pct -> pond_swamp.
    path = _drainage(tmp_path, make_site, pond_swamp=[12.0])
    with pytest.raises(
        InputError,
        match=r"layer 'drainage_area', field 'pond_swamp': the "
        r"field\(s\) 'pond_swamp' looks like 'pond_swamp_pct' "
        r"cut to 10 characters.*Fix: rename the field",
    ):
        load_site_plan(path, PROFILE)
    whole = _drainage(tmp_path, make_site, pond_swamp_pct=[12.0])
    assert load_site_plan(whole, PROFILE).layers["drainage_area"]["pond_swamp_pct"].iloc[0] == 12.0


def test_a_shapefile_layer_with_cut_names_is_refused_and_read_once_mapped(tmp_path, make_site):
    site = make_site([square(1.0)])
    _shapefile(
        tmp_path / "drain.shp",
        gpd.GeoDataFrame(
            {"name": ["DA-1"], "discharge_point": ["O-1"], "tc_hours": [0.5], "pond_swamp_pct": [12.0]},
            geometry=[square(2.0)],
            crs="EPSG:2260",
        ),
    )
    assert "pond_swamp" in read_layer(tmp_path / "drain.shp", "drain").frame.columns
    (tmp_path / "map.toml").write_text('[files]\ndrainage_area = "drain.shp"\n')
    with pytest.raises(
        InputError,
        match=r"drain\.shp, layer 'drain', field 'discharge_'.*"
        r"'discharge_' looks like 'discharge_point', "
        r"'pond_swamp' looks like 'pond_swamp_pct'",
    ):
        load_site_plan(site, PROFILE, read_field_map(tmp_path / "map.toml"))
    (tmp_path / "map.toml").write_text(
        '[files]\ndrainage_area = "drain.shp"\n'
        '[fields.drainage_area]\npond_swamp_pct = "pond_swamp"\n'
        'discharge_point = "discharge_"\n'
    )
    plan = load_site_plan(site, PROFILE, read_field_map(tmp_path / "map.toml"))
    assert plan.layers["drainage_area"]["pond_swamp_pct"].iloc[0] == 12.0


def test_utf8_text_without_cpg_is_refused_when_read_in_batches(tmp_path):
    from analysis.io.vector import read_layer_batches

    path = tmp_path / "wetlands.shp"
    _shapefile(
        path,
        gpd.GeoDataFrame(
            {"name": ["Pond", NAME]}, geometry=[square(1.0), square(1.0, x=X0 + 500)], crs="EPSG:2260"
        ),
    )
    assert [n for b in read_layer_batches(path, "wetlands", 1) for n in b.frame["name"]] == ["Pond", NAME]
    path.with_suffix(".cpg").unlink()
    with pytest.raises(
        InputError,
        match=r"layer 'wetlands', feature 1, field 'name': the text "
        r"'Kiryas JoÃ«l' is UTF-8 read as Latin-1",
    ):
        list(read_layer_batches(path, "wetlands", 1))


def test_latin1_text_without_cpg_is_read_in_batches_as_whole(tmp_path):
    from analysis.io.vector import read_layer_batches

    path = tmp_path / "wetlands.shp"
    _shapefile(
        path,
        gpd.GeoDataFrame(
            {"name": ["Pond", NAME]}, geometry=[square(1.0), square(1.0, x=X0 + 500)], crs="EPSG:2260"
        ),
        "ISO-8859-1",
    )
    path.with_suffix(".cpg").unlink(missing_ok=True)
    # GDAL's Arrow stream gave b"Jo\xebl" undecoded: "Jo\ufffdl" on one stack, an error on the other
    assert [n for b in read_layer_batches(path, "wetlands", 1) for n in b.frame["name"]] == ["Pond", NAME]


def test_the_phasing_reader_names_a_field_cut_to_10_characters(tmp_path):
    from analysis.phasing.source import read_phasing_source

    path = tmp_path / "phases.shp"
    _shapefile(
        path,
        gpd.GeoDataFrame(
            {"phase": ["1"], "start_date": ["2027-04-01"], "stabilized_date": ["2027-06-01"]},
            geometry=[square(1.0)],
            crs="EPSG:2260",
        ),
    )
    with pytest.raises(
        InputError,
        match=r"phases\.shp, layer 'phases', field 'stabilized_date': "
        r"no field 'stabilized_date' .*'stabilized' looks like "
        r"it cut to 10 characters.*Fix: name the field holding "
        r"it \('stabilized'\)",
    ):
        read_phasing_source(path)
