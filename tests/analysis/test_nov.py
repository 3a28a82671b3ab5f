"""Notice of violation (Enforcement C(1)-(5)): refused without any of the five, escaped HTML."""

import re

import pytest

from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.records.nov import read_violation, render_notice_html
from tests.conftest import TEST_DATA

PROFILE = load_profile()

COMPLETE = {
    "recipient": {"name": "Forest <b>Road</b> & Co", "address": "1 Forest Road"},
    "property": {"address": "Forest Road, parcel 1-1-23.4"},
    "violation": {
        "nature": "No report <script>alert(1)</script>",
        "sections": ["Maintenance and repair A(2)"],
    },
    "remedy": {"measures": "Inspect and report", "complete_by": "2027-06-16"},
    "penalties": {"kinds": ["criminal", "civil"], "offence_number": 2},
}


def toml_text(record):
    def value(v):
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, int):
            return str(v)
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    return "".join(
        f"[{table}]\n" + "".join(f"{k} = {value(v)}\n" for k, v in keys.items())
        for table, keys in record.items()
    )


def write(tmp_path, record):
    path = tmp_path / "violation.toml"
    path.write_text(toml_text(record), encoding="utf-8")
    return path


def without(table, key=None):
    record = {t: dict(k) for t, k in COMPLETE.items()}
    if key is None:
        del record[table]
    else:
        del record[table][key]
    return record


@pytest.mark.parametrize(
    "record, item, names",
    [
        (without("recipient"), "C(1)", "recipient.name and recipient.address"),
        (without("recipient", "address"), "C(1)", "recipient.address"),
        (without("property"), "C(2)", "property.address or property.description"),
        (without("violation", "nature"), "C(3)", "violation.nature"),
        (without("violation", "sections"), "C(3)", "violation.sections"),
        (without("remedy", "complete_by"), "C(4)", "remedy.complete_by or schedule"),
        (without("remedy", "measures"), "C(4)", "remedy.measures"),
        (without("penalties"), "C(5)", "penalties.kinds or penalties.statement"),
        ({**COMPLETE, "recipient": {"name": "  ", "address": "1 Forest Road"}}, "C(1)", "recipient.name"),
    ],
)
def test_record_missing_a_content_is_refused_naming_it(tmp_path, record, item, names):
    with pytest.raises(InputError, match=re.escape(f"lacks Enforcement {item}")) as err:
        read_violation(write(tmp_path, record))
    assert f"field '{names}'" in str(err.value)


@pytest.mark.parametrize(
    "record, match",
    [
        ({**COMPLETE, "penalties": {"kinds": ["parking"]}}, "penalties.kinds"),
        ({**COMPLETE, "penalties": {"kinds": ["civil"], "offence_number": 0}}, "offence_number"),
    ],
)
def test_bad_penalties_refused(tmp_path, record, match):
    with pytest.raises(InputError, match=match):
        read_violation(write(tmp_path, record))


def test_notice_escapes_record_text_and_states_penalties(tmp_path):
    html = render_notice_html(read_violation(write(tmp_path, COMPLETE)), PROFILE)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "Forest &lt;b&gt;Road&lt;/b&gt; &amp; Co" in html
    assert "Maintenance and repair A(2)" in html
    # Second offence: the profile's second ranges, criminal with imprisonment.
    assert "not less than $350 nor more than $700 or imprisonment for a period not to exceed 14 days" in html
    assert "Civil (Enforcement F), second violation" in html
    assert html.count("<h2>") == 5 and all(f"(C({n}))" in html for n in range(1, 6))


def test_shipped_violation_record():
    html = render_notice_html(read_violation(TEST_DATA / "records" / "violation.toml"), PROFILE)
    assert "NOV-2027-014" in html and "&lt;Attn: J. Example &amp; Partners&gt;" in html
    assert "third or subsequent violation: a civil penalty of not less than $700 nor more than $1,000" in html


def test_a_violation_found_at_an_inspection_stops_all_but_stabilization(tmp_path):
    """Inspections A(1)(b): "If any violations are found, the applicant and developer shall be
    notified in writing of the nature of the violation and the required corrective actions. No
    further work shall be conducted except for site stabilization until all violations are
    corrected and all work previously completed has received approval by the Stormwater
    Management Administrator." The notice says so (round 3, point 12), unless the record says
    the violation was not found at an inspection."""
    words = (
        "No further work shall be conducted except for site stabilization until all violations are corrected"
    )
    html = render_notice_html(read_violation(write(tmp_path, COMPLETE)), PROFILE)
    assert words in html and "Inspections A(1)(b)" in html
    elsewhere = {**COMPLETE, "violation": {**COMPLETE["violation"], "found_at_inspection": False}}
    assert words not in render_notice_html(read_violation(write(tmp_path, elsewhere)), PROFILE)
    bad = {**COMPLETE, "violation": {**COMPLETE["violation"], "found_at_inspection": "yes"}}
    with pytest.raises(InputError, match="found_at_inspection"):
        read_violation(write(tmp_path, bad))
