"""``swppp:checklist`` (and CONFIRMATIONS of ``swppp:review``) run through Processing and qgis_process."""

import json
import sqlite3
from contextlib import closing

import pytest

from tests.qgis_plugin.test_qgis_process import qgis_process  # noqa: F401 - the fixture

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

CHECKLIST_ROLES = (
    "project",
    "site_boundary",
    "disturbance",
    "smp",
    "easement",
    "layout_scale",
    "discharge_point",
    "soils",
    "hydrology_claims",
    "esc_practice",
    "submission",
    "contractor_certification",
    "guarantee",
)


def run(algorithm, parameters):
    import processing

    return processing.run(algorithm, parameters)


def confirmed_rows(findings):
    with closing(sqlite3.connect(findings)) as con:
        return con.execute(
            "SELECT item, reviewer, confirmed_on, note FROM checklist "
            "WHERE status = 'confirmed' ORDER BY item"
        ).fetchall()


def test_checklist_algorithm_fills_in_the_checklist(data_copy, tmp_path):
    site = data_copy("variants/contents_no_soils_receiving_waters.gpkg")
    confirmations = data_copy("checklist/confirmations.json")
    out, findings = tmp_path / "checklist.json", tmp_path / "findings.gpkg"
    results = run(
        "swppp:checklist",
        {
            "SITE": str(site),
            "CONFIRMATIONS": str(confirmations),
            "OUTPUT_JSON": str(out),
            "OUTPUT_FINDINGS": str(findings),
        },
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    statuses = {e["item"]: e["status"] for e in data["checklist"]}
    assert [i for i, s in statuses.items() if s == "missing"] == ["B(3)", "B(13)"]
    assert (statuses["B(5)"], statuses["H"]) == ("confirmed", "confirmed")
    assert (results["MISSING_ITEMS"], results["CONFIRMED_ITEMS"]) == (2, 2)
    assert results["PROVIDED_ITEMS"] == sum(s == "provided" for s in statuses.values())
    [contents] = [f for f in data["findings"] if f["rule"] == "swppp_contents"]
    assert contents["status"] == "fail" and contents["features"] == ["checklist:B(3)", "checklist:B(13)"]
    assert results["EXIT_STATUS"] == 1
    assert [r[:3] for r in confirmed_rows(findings)] == [
        ("B(5)", "R. Levi", "2027-03-02"),
        ("H", "R. Levi", "2027-03-02"),
    ]
    # The findings GeoPackage reloads the confirmations into the next run.
    again = run(
        "swppp:checklist",
        {"SITE": str(site), "CONFIRMATIONS": str(findings), "OUTPUT_JSON": str(tmp_path / "again.json")},
    )
    assert again["CONFIRMED_ITEMS"] == 2
    assert json.loads((tmp_path / "again.json").read_text())["checklist"] == data["checklist"]


def test_checklist_from_project_layers(data_copy, tmp_path, load_layer):
    site = data_copy("variants/contents_complete.gpkg")
    layers = {f"{role.upper()}_LAYER": load_layer(site, role) for role in CHECKLIST_ROLES}
    out = tmp_path / "c.json"
    results = run("swppp:checklist", {**layers, "OUTPUT_JSON": str(out)})
    assert results["MISSING_ITEMS"] == 0 and results["EXIT_STATUS"] == 0
    data = json.loads(out.read_text(encoding="utf-8"))
    assert {f["rule"]: f["status"] for f in data["findings"]} == {
        "swppp_contents": "pass",
        "contractor_certification": "pass",
        "construction_guarantee": "needs_review",
        "maintenance_bond": "needs_review",
        "esc_practices": "pass",
    }  # the guarantees: final acceptance is not recorded (33, 8)


def test_review_takes_confirmations_and_bad_ones_stop_it(data_copy, tmp_path):
    from qgis.core import QgsProcessingException

    site = data_copy("variants/contents_complete.gpkg")
    out = tmp_path / "r.json"
    run(
        "swppp:review",
        {
            "SITE": str(site),
            "OUTPUT_JSON": str(out),
            "CONFIRMATIONS": str(data_copy("checklist/confirmations.json")),
        },
    )
    data = json.loads(out.read_text(encoding="utf-8"))
    assert [e["item"] for e in data["checklist"] if e["status"] == "confirmed"] == ["B(5)", "H"]
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"format": "swppp-checklist-confirmations", "confirmations": '
        '[{"item": "Q(9)", "reviewer": "R", "date": "2027-01-01"}]}'
    )
    with pytest.raises(QgsProcessingException, match=r"'Q\(9\)' is not an item"):
        run(
            "swppp:review",
            {"SITE": str(site), "CONFIRMATIONS": str(bad), "OUTPUT_JSON": str(tmp_path / "x.json")},
        )
    assert not (tmp_path / "x.json").exists()


def test_checklist_runs_under_qgis_process(qgis_process, data_copy, tmp_path):  # noqa: F811
    site = data_copy("variants/contents_bond_four_years.gpkg")
    out = tmp_path / "c.json"
    completed = qgis_process("run", "swppp:checklist", "--", f"SITE={site}", f"OUTPUT_JSON={out}")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "MISSING_ITEMS:\t0" in completed.stdout  # the bond is due before construction
    data = json.loads(out.read_text(encoding="utf-8"))
    [bond] = [f for f in data["findings"] if f["rule"] == "maintenance_bond"]
    assert bond["status"] == "warn" and bond["limit"] == 5.0 and 3.99 < bond["value"] < 4.01
    assert bond["due"] == "before_construction"
