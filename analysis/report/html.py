"""The HTML report: self-contained, printable, every input text escaped.

:func:`render_html` joins the sections of :data:`SECTIONS` in order; each is a function
``(review, data) -> str`` (``data`` is ``review.to_dict()``), so a new part of the report is a
new section function and its line in that list.
"""
from __future__ import annotations


from ..checklist.contents import STATUS_AS_FINDING
from ..findings import NEEDS_REVIEW, STATUS_COLOURS, STATUSES
from ..markup import escape as _e
from ..review import Review
from .site_map import HTML_FRAME_IN, site_map_charts

__all__ = ["render_html", "SECTIONS"]

_CSS = """
body{font-family:"DejaVu Sans",Arial,sans-serif;margin:2em;color:#212121;max-width:60em}
h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.15em;border-bottom:1px solid #bbb;margin-top:1.6em}
table{border-collapse:collapse;width:100%;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.3em .5em;text-align:left;vertical-align:top;font-size:.92em;
overflow-wrap:anywhere}
th{background:#f2f2f2}
.status{color:#fff;border-radius:3px;padding:.1em .4em;font-size:.85em;white-space:nowrap}
figure{margin:1em 0}figure img{max-width:100%;height:auto}
figure.map img{max-width:none}
.num{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#666}
.cover h1{font-size:2em;margin-top:1.5em}.cover table th{width:12em}
@page{size:letter landscape;margin:.4in}
@media print{body{margin:0;max-width:none}h2{page-break-after:avoid}tr{page-break-inside:avoid}
.cover{page-break-after:always}
section.maps{page-break-before:always}figure.map{page-break-inside:avoid;margin:0}
figure.map+figure.map{page-break-before:always}
.maps h2{margin-top:0}figure.map figcaption{margin:0}}
"""


# Nothing loads from outside the file: inline styles, and charts as data: images.
_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _status(status: str) -> str:
    colour = STATUS_COLOURS.get(status, "#444")
    label = _e(status.replace("_", " "))
    return f'<span class="status" style="background:{colour}">{label}</span>'


def _number(value, digits=2) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


class _Raw(str):
    """Markup made here (not taken from input), put into a cell as it is."""

    css_class = ""


def _num(text: str) -> _Raw:
    raw = _Raw(_e(text))
    raw.css_class = "num"
    return raw


def _cell(value, tag: str) -> str:
    content = value if isinstance(value, _Raw) else _e(value)
    css = getattr(value, "css_class", "")
    return f'<{tag} class="{css}">{content}</{tag}>' if css else f"<{tag}>{content}</{tag}>"


def _table(rows, header=()) -> str:
    """A table; without a header each row's first cell is its heading. Text cells are escaped."""
    head = "<tr>" + "".join(_cell(h, "th") for h in header) + "</tr>" if header else ""
    first = "td" if header else "th"
    body = "".join("<tr>" + _cell(row[0], first) + "".join(_cell(v, "td") for v in row[1:])
                   + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def _project_table(data) -> str:
    project, site, tool = data["project"], data["site"], data["tool"]
    reference = data.get("reference")
    rows = [[label, project.get(key)] for label, key in (
        ("Project", "name"), ("Address", "address"), ("Applicant", "applicant"),
        ("Land use", "land_use"), ("Receiving waters", "receiving_waters"))]
    rows += [
        ["Date of review", data["reviewed_on"]],
        ["Rules profile", data["profile"]],
        ["Tool", f"{tool['name']} {tool['version']}"],
        ["Site plan", f"{site['path']} ({site['input_crs']})"],
        ["Reference layers", f"{reference['path']}: {', '.join(reference['layers'])}"
         if reference else "none given"],
        *_reference_versions_rows(reference),
    ]
    return _table(rows)


def _reference_versions_rows(reference) -> list:
    """One row naming the version of each reference layer the review read (layer_versions)."""
    versions = (reference or {}).get("versions") or {}
    if not versions:
        return []
    return [["Reference versions", "; ".join(
        f"{layer} v{v['version']} (source {v.get('source_date') or 'undated'}, sha256 "
        f"{str(v.get('sha256') or '')[:12]})" for layer, v in versions.items())]]


def _measurement_tables(m) -> str:
    totals = _table([
        ["Disturbed area (union of all disturbance)",
         _num(f"{_number(m['disturbed_acres'])} acres")],
        ["Disturbance outside the site boundary",
         _num(f"{_number(m['disturbed_outside_site_sq_ft'], 0)} sq ft")],
        ["Most disturbed and not yet stabilised at one time",
         _num(f"{_number(m.get('max_concurrent_disturbed_acres'))} acres on "
              f"{m.get('max_concurrent_at')}") if m.get("max_concurrent_at") else "not known"]])
    phases = _table([[p["phase"], _num(_number(p["acres"])), _num(_number(p.get("new_acres"))),
                      p["start_date"], p["stabilized_date"] or "not scheduled"]
                     for p in m["phases"]],
                    header=("Phase", "Acres", "New acres", "Start", "Stabilized"))
    return totals + phases


def _easement_section(m) -> str:
    """Each SMP's area outside every maintenance easement (SWPPP D(8))."""
    uncovered = m.get("uncovered_smp_sq_ft") or {}
    if not uncovered:
        return ""
    rows = [[smp, _num(f"{_number(sq_ft, 1)} sq ft")] for smp, sq_ft in uncovered.items()]
    return "<h3>SMP area outside maintenance easements</h3>" + _table(rows, header=("SMP", "Outside"))


def _conditions_table(conditions) -> str:
    rows = [["SWPPP required", "yes" if conditions["swppp_required"] else "no"]]
    for key in ("A", "B", "C"):
        c = conditions[key]
        if c.get("decided") is False:
            verdict = "not decided"
        else:
            verdict = "applies" if c["applies"] else "does not apply"
        evidence = _e("; ".join(c["evidence"]))
        rows.append([f"Condition {key}",
                     _Raw(f"{_e(verdict)}<br><span class='muted'>{evidence}</span>")])
    return _table(rows)


def _findings_table(findings, profile) -> str:
    def rule(name):
        return _Raw(f"{_e(profile.title(name))}<br><span class='muted'>{_e(name)}</span>")

    return _table([[_Raw(_status(f["status"])), rule(f["rule"]), f["section"], f["message"],
                    ", ".join(f["features"])] for f in findings],
                  header=("Status", "Rule", "Section", "Finding", "Features"))


def _reference_section(data) -> str:
    """Wetland acres and the reference layers read around the site, with their versions."""
    m, reference = data["measurements"], data.get("reference")
    if reference is None:
        return ("<h2>Reference layers</h2><p class='muted'>None given: Condition A and wetlands "
                "are not decided.</p>")
    rows = [["Disturbance inside wetlands",
             _num(f"{_number(m.get('wetland_acres'), 4)} acres")],
            ["Disturbance inside regulated adjacent areas (not in a wetland)",
             _num(f"{_number(m.get('wetland_adjacent_area_acres'), 4)} acres")]]
    read = _table([[layer, _num(str(info["features"])), info.get("version", "not recorded"),
                    info.get("source_date", "")] for layer, info in reference["read"].items()],
                  header=("Layer", "Features read", "Version", "Source date"))
    repaired = (f"<p class='muted'>Invalid reference geometries repaired: "
                f"{_e(', '.join(reference['repaired']))}</p>" if reference.get("repaired") else "")
    return f"<h2>Wetlands and reference layers</h2>{_table(rows)}{read}{repaired}"


def _hydrology_section(review: Review) -> str:
    """TR-55 figures per drainage area and storm, pre and post, WQv, and the peak charts."""
    m = review.to_dict()["measurements"]
    if not m.get("hydrology"):
        return ""

    def figure(value, digits):
        return _num(_number(value, digits) if value is not None else "n/a")

    rows = []
    for r in m["hydrology"]:
        pre, post = r["pre"], r["post"]
        rows.append([r["drainage_area"], r["storm"], figure(r["rain_in"], 2),
                     figure(pre["cn"], 1), figure(pre["runoff_in"], 2), figure(pre["volume_cf"], 0),
                     figure(pre["peak_cfs"], 2), figure(post["cn"], 1),
                     figure(post["runoff_in"], 2), figure(post["volume_cf"], 0),
                     figure(post["peak_cfs"], 2),
                     "; ".join(n for n in (pre["note"], post["note"]) if n)])
    table = _table(rows, header=("Drainage area", "Storm", "P (in)", "Pre CN", "Pre Q (in)",
                                 "Pre volume (cu ft)", "Pre peak (cfs)", "Post CN", "Post Q (in)",
                                 "Post volume (cu ft)", "Post peak (cfs)", "Notes"))
    wqv = _table([[w["drainage_area"], figure(w["rain_in"], 2),
                   _num(f"{w['impervious_fraction']:.0%}"), figure(w["area_acres"], 2),
                   figure(w["wqv_cf"], 0)] for w in m["water_quality_volume"]],
                 header=("Drainage area", "90% rainfall P (in)", "Impervious", "Acres",
                         "WQv (cu ft)"))
    sources = sorted({r["rainfall_source"] for r in m["hydrology"] if r.get("rainfall_source")})
    images = _charts(review, lambda name: name.startswith("hydrology_"))
    distribution = m["hydrology"][0].get("rainfall_distribution")
    return (f"<h2>Hydrology (TR-55)</h2>{table}"
            f"<p class='muted'>NRCS TR-55 (1986): curve numbers from Tables 2-2a and 2-2c, "
            f"runoff by eq. 2-3, peaks by the graphical method (Chapter 4) for a Type "
            f"{_e(distribution)} distribution. Design rainfall: {_e('; '.join(sources))}.</p>"
            f"{wqv}{images}")


def _charts(review: Review, chosen=lambda name: True) -> str:
    """The charts of ``review.charts`` whose names are ``chosen``, as PNG data: URI images."""
    return "".join(f'<figure><img src="{chart.data_uri("png")}" alt="{_e(chart.title)}">'
                   f'<figcaption class="muted">{_e(chart.title)}</figcaption></figure>'
                   for name, chart in review.charts.items() if chosen(name))


def _records_section(data) -> str:
    """Construction-phase records (when a review was given them): files, period, storms."""
    records = data.get("records")
    if not records:
        return ""
    rain, period, m = records["rain"], records["period"], records["measurements"]
    rows = [["Inspection log", f"{records['log']} ({m['inspection_reports']} reports in the period)"],
            ["Rainfall", f"{rain['path']} ({rain['format']}"
                         + (f", station {rain['station']}" if rain["station"] else "") + ")"],
            ["Period", f"{period['from']} to {period['to']} (end: {period['to_from']})"],
            ["Notices", records.get("notices", "not given")],
            ["Sediment traps", records.get("traps", "not given")]]
    storms = _table([[s["first_day"] if s["first_day"] == s["last_day"]
                      else f"{s['first_day']} to {s['last_day']}",
                      _num(_number(s["precip_in"])), s["due"], s["reported_on"] or "none"]
                     for s in m["storms"]],
                    header=("Storm", "Inches", "Report due by end of", "Reported on"))
    return f"<h2>Construction-phase records</h2>{_table(rows)}{storms if m['storms'] else ''}"



def _contents_sections(data) -> str:
    """The SWPPP contents checklist and the ESC practices (issue 11's sections)."""
    return _checklist_section(data) + _esc_practices_section(data)


def _checklist_section(data) -> str:
    """Each checklist item: status, the chapter's text, the evidence, a reviewer's confirmation."""
    checklist = data.get("checklist")
    if not checklist:
        return ""

    def shown(entry):
        label = _e(entry["status"].replace("_", " "))
        colour = STATUS_COLOURS.get(STATUS_AS_FINDING.get(entry["status"], ""), "#444")
        return _Raw(f'<span class="status" style="background:{colour}">{label}</span>')

    def requirement(entry):
        # One wide cell (the chapter's words, then the evidence) prints far shorter than two.
        text = f"{_e(entry['text'])}<br><span class='muted'>{_e(entry['evidence'])}</span>"
        c = entry.get("confirmation")
        if c:
            text += (f"<br><b>Confirmed</b> by {_e(c['reviewer'])} on {_e(c['date'])}"
                     + (f": {_e(c['note'])}" if c.get("note") else ""))
        return _Raw(text)

    rows = [[entry["item"], shown(entry), requirement(entry)] for entry in checklist]
    return ("<h2>SWPPP contents checklist</h2><p class='muted'>Provided: the site plan shows it "
            "or the applicant's submission names a document; confirmed: a reviewer checked it. "
            "Items due after final construction are not counted before approval.</p>"
            + _table(rows, header=("Item", "Status", "The chapter requires; evidence")))


def _esc_practices_section(data) -> str:
    """The esc_practice layer per stage (SWPPP B(7)-(11)): sizes, lengths, schedule."""
    esc = data["measurements"].get("esc_practices")
    if not esc:
        return ""

    def figure(value, digits=0):
        return _num(_number(value, digits) if value is not None else "")

    stages = _table([[stage, _num(str(n["practices"])), figure(n["measured_length_ft"]),
                      figure(n["area_sq_ft"])] for stage, n in esc["by_stage"].items()],
                    header=("Stage", "Practices", "Measured length (ft)", "Area (sq ft)"))
    practices = _table([[p["practice"] or "", p["feature"], p["stage"] or "not stated",
                         p["size"] or "", figure(p["length_ft"]), figure(p["measured_length_ft"]),
                         figure(p["area_sq_ft"]), figure(p["drainage_area_acres"], 2),
                         p["install_by"] or "", p["remove_after"] or ""]
                        for p in esc["practices"]],
                       header=("Practice", "Feature", "Stage", "Size", "Length stated (ft)",
                               "Length measured (ft)", "Area (sq ft)", "Drainage area (ac)",
                               "Install by", "Remove after"))
    return f"<h2>Erosion and sediment control practices</h2>{stages}{practices}"
def _cover(review: Review, data) -> str:
    """The cover: project, address, applicant, date, profile, tool version; the verdicts."""
    counts = review.counts()
    summary = ", ".join(f"{counts[s]} {s.replace('_', ' ')}" for s in STATUSES if s in counts)
    return (f'<section class="cover"><h1>{_e(_title(data))}</h1>{_project_table(data)}'
            f'<p>Findings: {_e(summary)}. Each cites the village stormwater chapter.</p>'
            f"</section>")


def _site_map_section(review: Review, data) -> str:
    """The site map at the chapter's scale, one landscape page per tile; each image is printed
    at its size in inches, which is what makes it 1 inch = 100 feet."""
    tiles = site_map_charts(review)
    if not tiles:
        return ""
    width = HTML_FRAME_IN[0]
    figures = "".join(
        f'<figure class="map"><img src="{chart.data_uri("png")}" alt="{_e(tile.title)}" '
        f'style="width:{width:g}in"><figcaption class="muted">{_e(tile.title)} when printed '
        f"at 100% (not fitted to the page).</figcaption></figure>" for tile, chart in tiles)
    return f'<section class="maps"><h2>Site map</h2>{figures}</section>'


def _phasing_section(review: Review, data) -> str:
    """The phasing chart (and any other non-hydrology chart)."""
    charts = _charts(review, lambda name: not name.startswith("hydrology_"))
    return f"<h2>Phasing</h2>{charts}" if charts else ""


def _findings_section(review: Review, data) -> str:
    return f"<h2>Findings</h2>{_findings_table(data['findings'], review.profile)}"


def _measurements_section(review: Review, data) -> str:
    m = data["measurements"]
    return (f"<h2>Measurements</h2>{_measurement_tables(m)}{_easement_section(m)}"
            f"<p class='muted'>Areas are planar in {_e(data['site']['area_crs'])}, in "
            f"international acres.</p>")


def _conditions_section(review: Review, data) -> str:
    return f"<h2>Conditions</h2>{_conditions_table(data['conditions'])}"


def _not_checked_section(review: Review, data) -> str:
    """What could not be checked, and why: the ``needs_review`` findings and their reasons."""
    rows = [[_Raw(f"{_e(review.profile.title(f['rule']))}<br>"
                  f"<span class='muted'>{_e(f['rule'])}</span>"), f["section"], f["message"],
             ", ".join(f["features"])]
            for f in data["findings"] if f["status"] == NEEDS_REVIEW]
    body = (_table(rows, header=("Rule", "Section", "Why it could not be checked", "Features"))
            if rows else "<p>Nothing: every check decided.</p>")
    return f"<h2>Not checked by this tool</h2>{body}"


def _title(data) -> str:
    return f"SWPPP review: {data['project'].get('name') or data['site']['name']}"


# The report's parts in order: each (review, data) -> HTML.
SECTIONS = [
    _cover,
    _site_map_section,
    _phasing_section,
    _findings_section,
    _measurements_section,
    _conditions_section,
    lambda review, data: _reference_section(data),
    lambda review, data: _records_section(data),
    lambda review, data: _hydrology_section(review),
    lambda review, data: _contents_sections(data),
    _not_checked_section,
]


def render_html(review: Review, *, maps: bool = True) -> str:
    """The report as one HTML document; ``maps=False`` leaves out the site map pages (drawing
    them is most of the time), for checks of the report's text alone."""
    data = review.to_dict()
    sections = SECTIONS if maps else [s for s in SECTIONS if s is not _site_map_section]
    body = "\n".join(section(review, data) for section in sections)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="{_CSP}">
<title>{_e(_title(data))}</title><style>{_CSS}</style></head>
<body>
{body}
</body></html>
"""
