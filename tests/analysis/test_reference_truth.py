"""Reference imports from real public files as published: nothing guessed, no loss hidden."""

from __future__ import annotations

import csv
import hashlib
import json
import zipfile

import geopandas as gpd
import pytest
from shapely import LineString, box

from analysis.cli.app import main
from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.profile import load_profile
from analysis.reference.importer import read_candidate
from analysis.reference.read import GeoPackageReference
from tests.conftest import TEST_DATA, shared_path

SOURCES = TEST_DATA / "reference_sources"
SYNONYMS = dict(load_profile().reference.pollutant_synonyms)
NWI_MEMBER = "DC_shapefile_wetlands/DC_Wetlands.shp"


def _ny_units(actions):
    """Per assessment unit named by a TMDL action: the pollutant source types, read directly."""
    data = json.loads(actions.read_text(encoding="utf-8"))
    units: dict = {}
    for action in data["items"][0]["actions"]:
        if action["actionTypeCode"] != "TMDL":
            continue
        for water in action["associatedWaters"]["specificWaters"]:
            kinds = units.setdefault(water["assessmentUnitIdentifier"], set())
            kinds.update(p.get("pollutantSourceTypeCode") for p in water["associatedPollutants"])
    return units


def _squares(path, ids, field, layer):
    frame = gpd.GeoDataFrame(
        {field: ids}, geometry=[box(i * 10, 0, i * 10 + 5, 5) for i in range(len(ids))], crs="EPSG:2260"
    )
    write_geopackage(path, {layer: frame})
    return path


def test_ny_tmdl_actions_mark_no_unit_not_a_source_that_the_source_does_not_say(tmp_path):
    actions = shared_path("data/attains/ny_21NYDECA_tmdl_actions.json")
    units = _ny_units(actions)
    shapes = _squares(tmp_path / "sheds.gpkg", sorted(units), "watershed_id", "tmdl_watersheds")
    candidate = read_candidate("tmdl_watersheds", actions, "attains", geometry=shapes, synonyms=SYNONYMS)
    frame = candidate.frame.set_index("watershed_id")
    assert len(frame) == len(units) == 324 and not candidate.report.rejected
    assert not (frame.stormwater_source == 0).any()  # ATTAINS never says "not a source"
    unknown = {u for u, kinds in units.items() if kinds == {"Nonpoint source"}}
    assert len(unknown) == 228
    assert set(frame.index[frame.stormwater_source.isna()]) == unknown
    assert set(frame.index[frame.stormwater_source == 1]) == set(units) - unknown
    # The 11 phosphorus lakes among them (Conesus, Honeoye, Silver, ...) stay unknown, with
    # the words that decided it kept.
    lakes = frame[frame.index.isin(unknown) & frame.pollutants.str.contains("PHOSPHORUS")]
    assert len(lakes) >= 11
    assert any("Conesus" in n for n in lakes.name)
    for evidence in lakes.stormwater_source_evidence:
        assert "Nonpoint source" in evidence and "not decided" in evidence
    both = frame.loc[sorted(set(units) - unknown)[0], "stormwater_source_evidence"]
    assert "Both" in both and "tmdl_point_source_is_stormwater" in both
    assert candidate.source_date == "2023-09-29" or candidate.source_date is not None
    assert candidate.source_date_from == "the latest action's completionDate"


def test_sd_units_keep_their_category_and_tmdl_links_without_a_geometry_file(tmp_path):
    real = shared_path("data/attains/sd_SDDENR_assessments.json")
    candidate = read_candidate("impaired_waters", real, "attains", synonyms=SYNONYMS)
    frame = candidate.frame.set_index("waterbody_id")
    assert frame.category.to_dict() == {
        "SD-BS-R-BIG_SIOUX_15": "4a",
        "SD-GR-R-GRAND_S_FORK_02": "5",
        "SD-NI-R-KEYA_PAHA_01": "4a",
        "SD-VM-R-VERMILLION_03": "5",
    }
    assert frame.at["SD-NI-R-KEYA_PAHA_01", "tmdl_id"].split(";") == ["38214", "41085", "37332"]
    assert frame.at["SD-GR-R-GRAND_S_FORK_02", "tmdl_id"] is None
    assert candidate.source_date == "2020"
    # Stored without geometry; a review finds the water by id wherever it lies.
    target = tmp_path / "ref.gpkg"
    assert (
        main(
            [
                "reference",
                "import",
                "impaired_waters",
                str(real),
                "--format",
                "attains",
                "--reference",
                str(target),
                "--quiet",
            ]
        )
        == 0
    )
    found = GeoPackageReference(target).lookup("impaired_waters", "waterbody_id", ["SD-BS-R-BIG_SIOUX_15"])
    assert found.category.tolist() == ["4a"] and "ESCHERICHIA COLI (E. COLI)" in found.pollutants.iloc[0]


def test_an_import_rejecting_tmdl_units_is_refused_then_accepted_and_status_counts(tmp_path, capsys):
    actions = shared_path("data/attains/ny_21NYDECA_tmdl_actions.json")
    target = tmp_path / "ref.gpkg"
    argv = [
        "reference",
        "import",
        "tmdl_watersheds",
        str(actions),
        "--format",
        "attains",
        "--geometry",
        str(SOURCES / "tmdl_watersheds.gpkg"),
        "--reference",
        str(target),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "321 of 324 feature(s) rejected (321 with a TMDL)" in err and "--accept-rejections" in err
    assert not target.exists()  # nothing written
    listed = tmp_path / "ref.tmdl_watersheds_rejected.csv"
    with open(listed, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 321 and {r["has_tmdl"] for r in rows} == {"1"}
    assert main(argv + ["--accept-rejections", "--quiet"]) == 0
    assert main(["reference", "status", "--reference", str(target), "--json", str(tmp_path / "s.json")]) == 0
    out = capsys.readouterr().out
    assert "321 rejected (321 with a TMDL), accepted" in out
    status = json.loads((tmp_path / "s.json").read_text(encoding="utf-8"))
    shed = next(e for e in status["layers"] if e["layer"] == "tmdl_watersheds")
    row = shed["versions"][-1]
    assert (row["rejected_count"], row["rejected_with_tmdl"], row["rejections_accepted"]) == (321, 321, 1)
    assert any("rejected 321" in w for w in status["warnings"])


def test_the_geometry_files_mapping_applies_to_every_field_it_maps(tmp_path):
    source = tmp_path / "assessments.json"
    source.write_text(
        json.dumps(
            {
                "items": [
                    {
                        "reportingCycleText": "2024",
                        "assessments": [
                            {
                                "assessmentUnitIdentifier": "NY1301-0006",
                                "epaIRCategory": "5",
                                "parameters": [
                                    {"parameterName": "PHOSPHORUS", "parameterStatusName": "Cause"}
                                ],
                            }
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    shapes = gpd.GeoDataFrame(
        {"PWL_ID": ["1301-0006"], "WATER_NAME": ["Forest Lake"]}, geometry=[box(0, 0, 5, 5)], crs="EPSG:2260"
    )
    write_geopackage(tmp_path / "shapes.gpkg", {"waters": shapes})
    mapping = tmp_path / "map.toml"
    mapping.write_text('[fields]\nwaterbody_id = "PWL_ID"\nname = "WATER_NAME"\n', encoding="utf-8")
    candidate = read_candidate(
        "impaired_waters", source, "attains", geometry=tmp_path / "shapes.gpkg", mapping=mapping
    )
    assert candidate.frame[["waterbody_id", "name", "category"]].values.tolist() == [
        ["NY1301-0006", "Forest Lake", "5"]
    ]


def test_the_real_pwl_table_without_causes_is_listed_without_causes_or_joined_to_attains(tmp_path):
    table = shared_path("data/nysdec_pwl_estuaries_2023.csv")
    plain = read_candidate("impaired_waters", table, "pwl")
    assert len(plain.frame) == 234 and plain.frame.pollutants.isna().all()
    assert any("listed without causes" in n for n in plain.report.notes)
    assert plain.source_date is None  # a CSV states no date: the import asks for one
    with pytest.raises(InputError, match="does not state its date"):
        from analysis.reference.operations import import_reference

        import_reference("impaired_waters", table, tmp_path / "ref.gpkg", fmt="pwl")
    first = plain.frame.waterbody_id.iloc[0]
    causes = tmp_path / "causes.json"
    causes.write_text(
        json.dumps(
            {
                "items": [
                    {
                        "reportingCycleText": "2022",
                        "assessments": [
                            {
                                "assessmentUnitIdentifier": first,
                                "epaIRCategory": "4A",
                                "parameters": [
                                    {
                                        "parameterName": "PATHOGENS",
                                        "parameterStatusName": "Cause",
                                        "associatedActions": [{"associatedActionIdentifier": "99"}],
                                    }
                                ],
                            }
                        ],
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    joined = read_candidate("impaired_waters", table, "pwl", causes=causes).frame.set_index("waterbody_id")
    assert joined.loc[first, ["pollutants", "category", "tmdl_id"]].tolist() == ["PATHOGENS", "4a", "99"]
    assert joined.drop(index=first).pollutants.isna().all()


@pytest.mark.parametrize("form", ["{zip}", "zip://{zip}!" + NWI_MEMBER, "/vsizip/{zip}/" + NWI_MEMBER])
def test_the_nwi_zip_is_imported_as_published(form):
    archive = shared_path("data/nwi_dc_wetlands.zip")
    candidate = read_candidate("wetlands", form.format(zip=archive), mapping=SOURCES / "nwi_mapping.toml")
    assert len(candidate.frame) == 1556
    mapping = (SOURCES / "nwi_mapping.toml").read_bytes()
    digest = hashlib.sha256(
        archive.name.encode() + b"\0" + archive.read_bytes() + b"nwi_mapping.toml\0" + mapping
    ).hexdigest()
    assert candidate.sha256 == digest  # the file as given, not what was extracted
    with zipfile.ZipFile(archive) as opened:
        stamp = opened.getinfo(NWI_MEMBER).date_time
    assert candidate.source_date is not None and candidate.source_date_from in (
        "the DBF header's date of last update",
        f"the date of {NWI_MEMBER} in the zip",
    )
    assert stamp[0] >= 1990 and not candidate.stable_ids


def test_the_nwi_zip_streamed_gives_what_the_whole_read_gives():
    """The streamed import (issue 23) reads the zip as published too: same features, sha256,
    date and unstable ids; its extraction is removed once the candidate is closed."""
    import tempfile
    from pathlib import Path

    from analysis.reference.importer import stream_candidate

    archive = shared_path("data/nwi_dc_wetlands.zip")
    source = f"zip://{archive}!" + NWI_MEMBER
    whole = read_candidate("wetlands", source, mapping=SOURCES / "nwi_mapping.toml")
    before = set(Path(tempfile.gettempdir()).glob("swppp-zip-*"))
    streamed = stream_candidate("wetlands", source, mapping=SOURCES / "nwi_mapping.toml", batch=500)
    extracted = set(Path(tempfile.gettempdir()).glob("swppp-zip-*")) - before
    assert streamed.frame is None and streamed.expected == 1556 and len(extracted) == 1
    ids = [i for batch in streamed.chunks() for i in batch.wetland_id]
    assert ids == list(whole.frame.wetland_id)
    assert (streamed.sha256, streamed.source_date, streamed.source_date_from, streamed.stable_ids) == (
        whole.sha256,
        whole.source_date,
        whole.source_date_from,
        whole.stable_ids,
    )
    assert streamed.report.to_dict() == whole.report.to_dict()
    streamed.close()
    assert not any(path.exists() for path in extracted)


def test_an_nwi_diff_after_deleting_3_and_reclassifying_1_reports_exactly_that(tmp_path, capsys):
    archive = shared_path("data/nwi_dc_wetlands.zip")
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(tmp_path / "nwi")
    frame = gpd.read_file(tmp_path / "nwi" / NWI_MEMBER)
    edited = frame.drop(index=[10, 500, 1200]).reset_index(drop=True)
    edited.loc[700, "ATTRIBUTE"] = "PEM1C" if edited.loc[700, "ATTRIBUTE"] != "PEM1C" else "PFO1A"
    write_geopackage(tmp_path / "nwi2.gpkg", {"wetlands": edited})
    target = tmp_path / "ref.gpkg"
    mapping = str(SOURCES / "nwi_mapping.toml")
    assert (
        main(
            [
                "reference",
                "import",
                "wetlands",
                str(archive),
                "--reference",
                str(target),
                "--map",
                mapping,
                "--quiet",
            ]
        )
        == 0
    )
    assert (
        main(
            [
                "reference",
                "import",
                "wetlands",
                str(tmp_path / "nwi2.gpkg"),
                "--reference",
                str(target),
                "--map",
                mapping,
                "--source-date",
                "2026-01-01",
                "--quiet",
            ]
        )
        == 0
    )
    assert main(["reference", "diff", "wetlands", "--reference", str(target), "--json", "-"]) == 0
    diff = json.loads(capsys.readouterr().out)
    kinds = [c["change"] for c in diff["changes"]]
    assert sorted(kinds) == ["reclassified", "removed", "removed", "removed"]
    changed = next(c for c in diff["changes"] if c["change"] == "reclassified")
    assert list(changed["fields_changed"]) == ["wetland_class"]


def test_tmdl_watersheds_derived_from_catchments_upstream_of_the_unit(tmp_path, capsys):
    actions = shared_path("data/attains/ny_21NYDECA_tmdl_actions.json")
    target = tmp_path / "ref.gpkg"
    # Catchments a and b drain into c; the unit (a lake, as a line) lies in c.
    catchments = gpd.GeoDataFrame(
        {"catchment_id": ["a", "b", "c"], "name": ["A", "B", "C"], "drains_to": ["c", "c", None]},
        geometry=[box(0, 0, 100, 100), box(100, 0, 200, 100), box(200, 0, 300, 100)],
        crs="EPSG:2260",
    )
    write_geopackage(tmp_path / "c.gpkg", {"catchments": catchments})
    assert (
        main(
            [
                "reference",
                "import",
                "catchments",
                str(tmp_path / "c.gpkg"),
                "--reference",
                str(target),
                "--quiet",
            ]
        )
        == 0
    )
    units = gpd.GeoDataFrame(
        {"watershed_id": ["NY1201-0003", "NY0905-0022"]},
        geometry=[LineString([(250, 40), (260, 50)]), LineString([(900, 0), (910, 10)])],
        crs="EPSG:2260",
    )
    write_geopackage(tmp_path / "units.gpkg", {"units": units})
    assert (
        main(
            [
                "reference",
                "import",
                "tmdl_watersheds",
                str(actions),
                "--format",
                "attains",
                "--geometry",
                str(tmp_path / "units.gpkg"),
                "--derive-watersheds",
                "--reference",
                str(target),
                "--accept-rejections",
                "--json",
                str(tmp_path / "d.json"),
                "--quiet",
            ]
        )
        == 0
    )
    done = json.loads((tmp_path / "d.json").read_text(encoding="utf-8"))
    assert done["version"]["feature_count"] == 1 and done["version"]["rejected_count"] == 323
    assert done["version"]["method"].startswith("derived: union of the catchments")
    reasons = {r["feature"]: r["reason"] for r in done["validation"]["rejected"]}
    assert reasons["NY0905-0022"] == "the unit meets no catchment: no watershed can be derived"
    shed = GeoPackageReference(target).read("tmdl_watersheds", (0, 0, 300, 100), "EPSG:2260")
    assert shed.geometry.iloc[0].area == pytest.approx(300 * 100)  # c and both upstream of it
