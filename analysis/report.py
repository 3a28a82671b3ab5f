"""The HTML report: self-contained, printable, every input text escaped."""
from __future__ import annotations

from html import escape

from .findings import STATUSES
from .review import Review

__all__ = ["render_html"]

_STATUS_COLOURS = {"fail": "#c62828", "warn": "#ef8f00", "needs_review": "#6a1b9a",
                   "pass": "#2e7d32", "info": "#1565c0", "not_applicable": "#757575"}

_CSS = """
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:2em;color:#212121;max-width:60em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;border-bottom:1px solid #bbb;margin-top:1.6em}
table{border-collapse:collapse;width:100%;margin:.5em 0}th,td{border:1px solid #ccc;padding:.3em .5em;
text-align:left;vertical-align:top;font-size:.92em}th{background:#f2f2f2}
.status{color:#fff;border-radius:3px;padding:.1em .4em;font-size:.85em;white-space:nowrap}
.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#666}
@media print{body{margin:0}h2{page-break-after:avoid}tr{page-break-inside:avoid}}
"""


def _e(value) -> str:
    return escape("" if value is None else str(value), quote=True)


def _status(status: str) -> str:
    colour = _STATUS_COLOURS.get(status, "#444")
    return f'<span class="status" style="background:{colour}">{_e(status.replace("_", " "))}</span>'


def _number(value, digits=2) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


def _rows(rows) -> str:
    return "\n".join("<tr>" + "".join(rows_cell for rows_cell in row) + "</tr>" for row in rows)


def render_html(review: Review) -> str:
    """The report as one HTML document."""
    data = review.to_dict()
    project = data["project"]
    m = data["measurements"]
    counts = review.counts()
    summary = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if s in counts)
    project_rows = [(f"<th>{_e(label)}</th>", f"<td>{_e(project.get(key))}</td>") for label, key in (
        ("Project", "name"), ("Address", "address"), ("Applicant", "applicant"),
        ("Land use", "land_use"), ("Receiving waters", "receiving_waters"))]
    reference = data.get("reference")
    project_rows += [
        ("<th>Site plan</th>", f"<td>{_e(data['site']['path'])} ({_e(data['site']['input_crs'])})</td>"),
        ("<th>Reference layers</th>", f"<td>{_e(reference['path'] + ': ' + ', '.join(reference['layers'])) if reference else 'none given'}</td>"),
        ("<th>Reviewed</th>", f"<td>{_e(data['reviewed_on'])} with {_e(data['tool']['name'])} "
                              f"{_e(data['tool']['version'])}, profile {_e(data['profile'])}</td>")]
    measurement_rows = [
        ("<th>Disturbed area (union of all disturbance)</th>",
         f'<td class="num">{_number(m["disturbed_acres"])} acres</td>'),
        ("<th>Disturbance outside the site boundary</th>",
         f'<td class="num">{_number(m["disturbed_outside_site_sq_ft"], 0)} sq ft</td>')]
    phase_rows = [(f"<td>{_e(p['phase'])}</td>", f'<td class="num">{_number(p["acres"])}</td>',
                   f"<td>{_e(p['start_date'])}</td>", f"<td>{_e(p['stabilized_date'] or 'not scheduled')}</td>")
                  for p in m["phases"]]
    conditions = data["conditions"]
    condition_rows = [(f"<th>SWPPP required</th>", f"<td>{'yes' if conditions['swppp_required'] else 'no'}</td>")]
    for key in ("A", "B", "C"):
        c = conditions[key]
        verdict = "not decided" if c.get("decided") is False else ("applies" if c["applies"] else "does not apply")
        condition_rows.append((f"<th>Condition {key}</th>",
                               f"<td>{_e(verdict)}<br><span class='muted'>{_e('; '.join(c['evidence']))}</span></td>"))
    finding_rows = [(f"<td>{_status(f['status'])}</td>", f"<td>{_e(f['rule'])}</td>",
                     f"<td>{_e(f['section'])}</td>", f"<td>{_e(f['message'])}</td>",
                     f"<td>{_e(', '.join(f['features']))}</td>") for f in data["findings"]]
    unchecked = [f for f in data["findings"] if f["status"] == "needs_review"]
    unchecked_items = "".join(f"<li><b>{_e(f['rule'])}</b> ({_e(f['section'])}): {_e(f['message'])}</li>"
                              for f in unchecked) or "<li>Nothing: every check decided.</li>"
    title = f"SWPPP review: {project.get('name') or data['site']['name']}"
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>{_e(title)}</title><style>{_CSS}</style></head>
<body>
<h1>{_e(title)}</h1>
<p class="muted">Findings: {_e(summary)}. Each cites the village stormwater chapter.</p>
<h2>Project</h2><table>{_rows(project_rows)}</table>
<h2>Measurements</h2><table>{_rows(measurement_rows)}</table>
<table><tr><th>Phase</th><th>Acres</th><th>Start</th><th>Stabilized</th></tr>{_rows(phase_rows)}</table>
<p class="muted">Areas are planar in {_e(data['site']['area_crs'])}, in international acres.</p>
<h2>Conditions</h2><table>{_rows(condition_rows)}</table>
<h2>Findings</h2>
<table><tr><th>Status</th><th>Rule</th><th>Section</th><th>Finding</th><th>Features</th></tr>
{_rows(finding_rows)}</table>
<h2>Not checked by this tool</h2><ul>{unchecked_items}</ul>
</body></html>
"""
