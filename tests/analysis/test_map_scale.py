"""Site map scale: plan sheets (rasterio), stated scales and print-layout maps."""

import json
import math
import os
import shutil
import subprocess
import sys
import warnings

import pandas as pd
import pytest
import shapely

from analysis.checks.map_scale import LayoutMap, check_site_map_scale, read_sheet, read_sheets, sheet_scale
from analysis.cli import main
from analysis.errors import InputError
from analysis.profile import load_profile
from analysis.review import review_paths
from tests.conftest import TEST_DATA

rasterio = pytest.importorskip("rasterio")
from rasterio.transform import Affine  # noqa: E402

US_FT = 1200 / 3937  # metres
FT = 0.3048
X0, Y0 = 582_777.0, 913_839.0  # near the demo parcel, EPSG:2260
UTM = (560_000.0, 4_577_000.0)  # the same neighbourhood in UTM 18N
PROFILE = load_profile()
LIMIT = PROFILE.site_map_scale.max_scale_denominator
# A site map smaller than the limit: "warn" by the default profile (SWPPP B(2) "should"; the
# switch is tested in test_chapter_readings.py).
SMALLER = "warn"


def write_sheet(path, crs="EPSG:2260", transform=None, tags=None, driver="GTiff", size=(20, 16)):
    """A tiny sheet with the given georeferencing and resolution tags."""
    import numpy as np

    width, height = size
    options = {"crs": crs} if crs else {}
    if transform is not False:  # False: no georeferencing at all
        options["transform"] = transform or Affine(1, 0, X0, 0, -1, Y0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(
            path, "w", driver=driver, width=width, height=height, count=1, dtype="uint8", **options
        ) as dst:
            dst.write(np.zeros((1, height, width), dtype="uint8"))
            if tags:
                dst.update_tags(**tags)
    return path


def ppi_tags(x, y=None, unit="2"):
    return {"TIFFTAG_XRESOLUTION": str(x), "TIFFTAG_YRESOLUTION": str(y or x), "TIFFTAG_RESOLUTIONUNIT": unit}


def only(findings):
    assert len(findings) == 1, findings
    return findings[0]


def check_sheets(*sheets, stated=None, layout_maps=None):
    findings, _ = check_site_map_scale(list(sheets), stated, layout_maps, PROFILE)
    return findings


def geographic_pixel_degrees(lat, ground_m):
    """Degrees of longitude and latitude spanning ``ground_m`` at ``lat`` on GRS80/WGS84 (the
    ellipsoid's radii of curvature, not a geodesic solver)."""
    a, f = 6378137.0, 1 / 298.257223563
    e2 = f * (2 - f)
    s2 = math.sin(math.radians(lat)) ** 2
    meridian = a * (1 - e2) / (1 - e2 * s2) ** 1.5
    prime_vertical = a / math.sqrt(1 - e2 * s2)
    return (
        math.degrees(ground_m / (prime_vertical * math.cos(math.radians(lat)))),
        math.degrees(ground_m / meridian),
    )


def rotated(angle_deg, scale_x, scale_y, x, y):
    """Pixels of scale_x by scale_y, the sheet turned angle_deg anticlockwise, corner at (x, y)."""
    c, s = math.cos(math.radians(angle_deg)), math.sin(math.radians(angle_deg))
    return Affine(c * scale_x, s * scale_y, x, s * scale_x, -c * scale_y, y)


def gdal_reads_pdf():
    """Debian's GDAL reads PDF (Poppler); rasterio's PyPI wheels write it but cannot read it."""
    try:
        read_sheet(TEST_DATA / "sheets" / "sheet_2260_100ft.pdf")
    except InputError as err:
        assert "lack a PDF reader" in str(err)
        return False
    return True


PDF_READABLE = gdal_reads_pdf()


SITE_GRID = (
    'LOCAL_CS["Site grid",UNIT["US survey foot",0.304800609601219],'
    'AXIS["Easting",EAST],AXIS["Northing",NORTH]]'
)
LON, LAT = -74.17, 41.34
DLON, DLAT = geographic_pixel_degrees(LAT, 100 * FT / 100)  # 1" = 100' at 100 ppi

# (case, crs, transform, tags, expected denominator across, down)
SHEET_CASES = [
    (
        "US survey feet at exactly 1in=100ft",
        "EPSG:2260",
        Affine(1, 0, X0, 0, -1, Y0),
        ppi_tags(100),
        100 * US_FT / FT * 12,
        100 * US_FT / FT * 12,
    ),
    (
        "US survey feet at 1in=101ft",
        "EPSG:2260",
        Affine(1.01, 0, X0, 0, -1.01, Y0),
        ppi_tags(100),
        101 * US_FT / FT * 12,
        101 * US_FT / FT * 12,
    ),
    (
        "metres (UTM 18N)",
        "EPSG:26918",
        Affine(0.3048, 0, *UTM[:1], 0, -0.3048, UTM[1]),
        ppi_tags(100),
        1200.0,
        1200.0,
    ),
    (
        "international feet (Arizona East ft)",
        "EPSG:2222",
        Affine(0.5, 0, 700_000, 0, -0.5, 1_000_000),
        ppi_tags(200),
        1200.0,
        1200.0,
    ),
    (
        "pixels per centimetre",
        "EPSG:26918",
        Affine(0.15, 0, UTM[0], 0, -0.15, UTM[1]),
        ppi_tags(40, unit="3"),
        0.15 / FT * 40 * 2.54 * 12,
        0.15 / FT * 40 * 2.54 * 12,
    ),
    (
        "rotated 30 degrees",
        "EPSG:2260",
        rotated(30, 1, 1, X0, Y0),
        ppi_tags(100),
        100 * US_FT / FT * 12,
        100 * US_FT / FT * 12,
    ),
    (
        "skewed",
        "EPSG:2260",
        Affine(1, 0.5, X0, 0.2, -1, Y0),
        ppi_tags(100),
        math.hypot(1, 0.2) * US_FT / FT * 1200,
        math.hypot(0.5, 1) * US_FT / FT * 1200,
    ),
    (
        "non-square pixels",
        "EPSG:2260",
        Affine(1, 0, X0, 0, -1.1, Y0),
        ppi_tags(100),
        1200 * US_FT / FT,
        1320 * US_FT / FT,
    ),
    (
        "engineering CRS (a CAD site grid in US survey feet)",
        SITE_GRID,
        Affine(1, 0, 0, 0, -1, 800),
        ppi_tags(100),
        100 * US_FT / FT * 12,
        100 * US_FT / FT * 12,
    ),
    (
        "geographic (EPSG:4326) at the sheet's centre",
        "EPSG:4326",
        Affine(DLON, 0, LON - 10 * DLON, 0, -DLAT, LAT + 8 * DLAT),
        ppi_tags(100),
        1200.0,
        1200.0,
    ),
]


@pytest.mark.parametrize(
    "case, crs, transform, tags, across, down", SHEET_CASES, ids=[c[0] for c in SHEET_CASES]
)
def test_sheet_scale_from_transform_crs_unit_and_resolution(
    tmp_path, case, crs, transform, tags, across, down
):
    sheet = read_sheet(write_sheet(tmp_path / "s.tif", crs, transform, tags))
    measured = sheet_scale(sheet)
    assert measured.denominators == pytest.approx((across, down), rel=1e-7)
    finding = only(check_sheets(sheet))
    worst = max(across, down)
    assert finding.value == pytest.approx(worst, rel=1e-7)
    assert finding.status == ("pass" if worst <= LIMIT * 1.0001 else SMALLER)
    assert finding.features == ["sheet:s.tif"] and finding.limit == LIMIT
    assert finding.units == "scale denominator"


def test_exactly_100_us_feet_passes_and_101_fails(tmp_path):
    statuses = {}
    for feet in (50, 100, 101, 200):
        path = write_sheet(
            tmp_path / f"s{feet}.tif",
            "EPSG:2260",
            Affine(feet / 100, 0, X0, 0, -feet / 100, Y0),
            ppi_tags(100),
        )
        statuses[feet] = only(check_sheets(read_sheet(path))).status
    assert statuses == {50: "pass", 100: "pass", 101: SMALLER, 200: SMALLER}


@pytest.mark.parametrize(
    "tags, said",
    [
        (None, "no resolution tags"),
        (ppi_tags(100, unit="1"), "no unit"),
        (
            {"TIFFTAG_XRESOLUTION": "0", "TIFFTAG_YRESOLUTION": "0", "TIFFTAG_RESOLUTIONUNIT": "2"},
            "no resolution tags",
        ),
    ],
)
def test_unknown_resolution_is_needs_review_naming_what_is_missing(tmp_path, tags, said):
    finding = only(check_sheets(read_sheet(write_sheet(tmp_path / "s.tif", tags=tags))))
    assert finding.status == "needs_review" and finding.value is None
    assert said in finding.message and "resolution" in finding.message
    assert finding.features == ["sheet:s.tif"]


def test_resolution_unit_absent_is_tiffs_default_inch(tmp_path):
    tags = {"TIFFTAG_XRESOLUTION": "100", "TIFFTAG_YRESOLUTION": "100"}
    sheet = read_sheet(write_sheet(tmp_path / "s.tif", tags=tags))
    assert sheet.pixels_per_inch == (100.0, 100.0)


def test_a_sheet_without_georeferencing_is_needs_review(tmp_path):
    path = write_sheet(tmp_path / "plain.tif", crs=None, transform=False, tags=ppi_tags(100))
    finding = only(check_sheets(read_sheet(path)))
    assert finding.status == "needs_review" and "not georeferenced" in finding.message


def test_a_sheet_georeferenced_by_control_points(tmp_path):
    from rasterio.control import GroundControlPoint

    path = write_sheet(tmp_path / "gcp.tif", crs=None, transform=False, tags=ppi_tags(100))
    gcps = [
        GroundControlPoint(row, col, X0 + col * 0.5, Y0 - row * 0.5)
        for row, col in ((0, 0), (0, 20), (16, 0), (16, 20))
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rasterio.errors.NotGeoreferencedWarning)
        with rasterio.open(path, "r+") as dst:
            dst.gcps = (gcps, "EPSG:2260")
    finding = only(check_sheets(read_sheet(path)))
    assert finding.value == pytest.approx(600 * US_FT / FT, rel=1e-7) and finding.status == "pass"


def test_geopdf_dpi(tmp_path):
    source = write_sheet(tmp_path / "s.tif", tags=None)
    from rasterio.shutil import copy

    copy(source, tmp_path / "s.pdf", driver="PDF", DPI=100)
    if not PDF_READABLE:
        with pytest.raises(InputError, match=r"s\.pdf.*lack a PDF reader.*GeoTIFF"):
            read_sheet(tmp_path / "s.pdf")
        pytest.skip("this GDAL cannot read PDF (the refusal is tested above)")
    sheet = read_sheet(tmp_path / "s.pdf")
    assert sheet.pixels_per_inch == (100.0, 100.0)
    assert only(check_sheets(sheet)).value == pytest.approx(1200 * US_FT / FT, rel=1e-7)


PAGE = """<Page><DPI>72</DPI><Width>720</Width><Height>576</Height>
<Georeferencing id="g{n}"><SRS>EPSG:2260</SRS><BoundingBox x1="0" y1="0" x2="720" y2="576"/>
<ControlPoint x="0" y="0" GeoX="{x0}" GeoY="{y0}"/><ControlPoint x="720" y="0" GeoX="{x1}" GeoY="{y0}"/>
<ControlPoint x="0" y="576" GeoX="{x0}" GeoY="{y1}"/>
<ControlPoint x="720" y="576" GeoX="{x1}" GeoY="{y1}"/></Georeferencing>
<Content><Vector dataset="{site}" layer="site_boundary" georeferencingId="g{n}"/></Content>
</Page>"""


def vector_geopdf(path, feet_per_inch):
    """A GeoPDF of vector pages only, as CAD exports them: each page 10 x 8 in, drawn at one
    of ``feet_per_inch`` (US survey feet), the parcel's boundary on it."""
    pages = [
        PAGE.format(n=n, x0=X0, y0=Y0, x1=X0 + 10 * ft, y1=Y0 + 8 * ft, site=TEST_DATA / "demo_site.gpkg")
        for n, ft in enumerate(feet_per_inch)
    ]
    composition = path.with_suffix(".xml")
    composition.write_text("<PDFComposition>" + "".join(pages) + "</PDFComposition>")
    subprocess.run(
        ["gdal_create", "-q", "-co", f"COMPOSITION_FILE={composition}", str(path)],
        check=True,
        env={**os.environ, "GDAL_PAM_ENABLED": "NO"},
    )
    return path


needs_pdf_tools = pytest.mark.skipif(
    not (PDF_READABLE and shutil.which("gdal_create")),
    reason="needs GDAL's gdal_create and a GDAL that reads PDF",
)


@needs_pdf_tools
def test_vector_geopdf_as_cad_exports_them(tmp_path):
    finding = only(check_sheets(read_sheet(vector_geopdf(tmp_path / "vector.pdf", [100]))))
    assert finding.value == pytest.approx(1200 * US_FT / FT, rel=1e-9) and finding.status == "pass"
    assert finding.features == ["sheet:vector.pdf"]


@needs_pdf_tools
def test_multi_page_geopdf_gives_a_finding_per_page(tmp_path):
    sheets = read_sheets([vector_geopdf(tmp_path / "set.pdf", [50, 100, 200])])
    findings = check_sheets(*sheets)
    assert [(f.features, f.status) for f in findings] == [
        (["sheet:set.pdf#1"], "pass"),
        (["sheet:set.pdf#2"], "pass"),
        (["sheet:set.pdf#3"], SMALLER),
    ]
    assert [f.value for f in findings] == pytest.approx(
        [ft * 12 * US_FT / FT for ft in (50, 100, 200)], rel=1e-9
    )


def test_sheet_footprint_is_the_sheet_on_the_ground(tmp_path):
    path = write_sheet(tmp_path / "s.tif", transform=rotated(30, 2, 2, X0, Y0), tags=ppi_tags(100))
    finding = only(check_sheets(read_sheet(path)))
    assert finding.geometry.area == pytest.approx(20 * 16 * 4, rel=1e-9)  # sq US ft
    assert shapely.get_coordinates(finding.geometry)[0] == pytest.approx([X0, Y0])


@pytest.mark.parametrize("content", [b"", b"not a raster at all", b"II*\x00garbage"])
def test_unreadable_sheet_exits_2_naming_the_file(data_copy, tmp_path, capsys, content):
    bad = tmp_path / "broken_sheet.tif"
    bad.write_bytes(content)
    out_json = tmp_path / "out" / "r.json"
    status = main(["review", str(data_copy("demo_site.gpkg")), "--sheet", str(bad), "--json", str(out_json)])
    err = capsys.readouterr().err
    assert status == 2
    assert "broken_sheet.tif" in err and "cannot be read" in err and "Traceback" not in err
    assert not out_json.exists()
    with pytest.raises(InputError, match="broken_sheet.tif"):
        read_sheet(bad)


def test_missing_sheet_exits_2(data_copy, tmp_path, capsys):
    status = main(
        ["review", str(data_copy("demo_site.gpkg")), "--sheet", str(tmp_path / "nowhere.tif"), "--quiet"]
    )
    assert status == 2 and "nowhere.tif" in capsys.readouterr().err


# --- the committed sheets of test_data/sheets (see test_data/README.md) --------------------

COMMITTED = [  # name, status, denominator computed from the generator's stated ground and ppi
    ("sheet_2260_50ft.tif", "pass", 600 * US_FT / FT),
    ("sheet_2260_100ft.tif", "pass", 1200 * US_FT / FT),
    ("sheet_2260_200ft.tif", SMALLER, 2400 * US_FT / FT),
    ("sheet_2260_no_resolution.tif", "needs_review", None),
    ("sheet_utm18n_50ft_cm.tif", "pass", 600.0),
    ("sheet_utm18n_100ft.tif", "pass", 1200.0),
    ("sheet_utm18n_200ft.tif", SMALLER, 2400.0),
    ("sheet_utm18n_no_resolution.tif", "needs_review", None),
    ("sheet_2260_100ft.pdf", "pass", 1200 * US_FT / FT),
]


def test_committed_sheets_through_the_command_line(data_copy, tmp_path, capsys):
    committed = [c for c in COMMITTED if PDF_READABLE or not c[0].endswith(".pdf")]
    sheets = [data_copy(f"sheets/{name}") for name, _, _ in committed]
    out_json = tmp_path / "r.json"
    args = ["review", str(data_copy("demo_site.gpkg")), "--json", str(out_json), "--quiet"]
    for sheet in sheets:
        args += ["--sheet", str(sheet)]
    assert main(args) == 1
    result = json.loads(out_json.read_text(encoding="utf-8"))
    by_feature = {f["features"][0]: f for f in result["findings"] if f["rule"] == "site_map_scale"}
    for name, status, denominator in committed:
        finding = by_feature[f"sheet:{name}"]
        assert finding["status"] == status, name
        assert finding["value"] == (pytest.approx(denominator, rel=1e-9) if denominator else None)
    # the demo's stated scales are checked beside the sheets
    assert by_feature["layout_scale:C-001 Location map"]["status"] == "info"  # a location map (issue 18)
    scales = {m["feature"]: m for m in result["measurements"]["site_map_scales"]}
    assert scales["sheet:sheet_utm18n_100ft.tif"]["scale_denominator"] == pytest.approx(1200.0)
    assert len(scales) == len(committed) + 3


def test_review_paths_gives_findings_with_sheet_footprints(data_copy):
    review = review_paths(data_copy("demo_site.gpkg"), sheets=[data_copy("sheets/sheet_utm18n_100ft.tif")])
    finding = next(f for f in review.findings if f.features == ["sheet:sheet_utm18n_100ft.tif"])
    # 100 x 80 pixels of 0.3048 m = 100 x 80 international ft, seen in US survey feet (planar
    # UTM to State Plane: the two grids' scale factors differ by well under 0.1 %)
    assert finding.geometry.area == pytest.approx(8000 * (FT / US_FT) ** 2, rel=1e-3)


# --- stated scales and layout maps -------------------------------------------------------


def test_stated_scales_table():
    stated = pd.DataFrame(
        {"sheet": ["A", "B", "C", "D", "E"], "scale_denominator": [600, 1200, 1200.1, 1212, None]}
    )
    findings = check_sheets(stated=stated)
    assert [(f.features, f.status, f.value) for f in findings] == [
        (["layout_scale:A"], "pass", 600.0),
        (["layout_scale:B"], "pass", 1200.0),
        (["layout_scale:C"], "pass", 1200.1),
        (["layout_scale:D"], SMALLER, 1212.0),
        (["layout_scale:E"], "needs_review", None),
    ]


def test_layout_maps_one_finding_per_map_and_a_layout_without_one():
    maps = [
        LayoutMap("Site plan", "Main map", 1000.0),
        LayoutMap("Site plan", "Inset", 2500.0),
        LayoutMap("Cover", None, None),
    ]
    findings = check_sheets(layout_maps=maps)
    assert [(f.features, f.status, f.value) for f in findings] == [
        (["layout:Site plan/Main map"], "pass", 1000.0),
        (["layout:Site plan/Inset"], SMALLER, 2500.0),
        (["layout:Cover"], "needs_review", None),
    ]
    assert "no map item" in findings[2].message


def test_layout_footprint_in_the_area_crs():
    from pyproj import CRS

    footprint = shapely.box(560_000, 4_577_000, 560_030.48, 4_577_030.48).wkt
    item = LayoutMap("L", "Map 1", 1200.0, footprint, CRS("EPSG:26918").to_wkt())
    finding = only(check_sheets(layout_maps=[item]))
    assert finding.geometry.area == pytest.approx(100 * 100 * (FT / US_FT) ** 2, rel=1e-3)


@pytest.mark.parametrize(
    "layout_maps, said",
    [
        (None, "print layouts are read only when the review runs in QGIS"),
        ([], "the QGIS project has no print layouts"),
    ],
)
def test_nothing_to_check_is_needs_review_saying_what_to_provide(layout_maps, said):
    finding = only(check_sheets(layout_maps=layout_maps))
    assert finding.status == "needs_review" and said in finding.message
    assert "--sheet" in finding.message and "layout_scale" in finding.message


def test_no_project_layouts_is_said_once_beside_other_sources():
    stated = pd.DataFrame({"sheet": ["A"], "scale_denominator": [600]})
    findings = check_sheets(stated=stated, layout_maps=[])
    assert [f.status for f in findings] == ["pass", "info"]
    assert "no print layouts" in findings[1].message
    assert [f.status for f in check_sheets(stated=stated)] == ["pass"]


def test_without_rasterio_a_sheet_is_refused_naming_what_to_install(tmp_path, monkeypatch):
    path = write_sheet(tmp_path / "s.tif", tags=ppi_tags(100))
    monkeypatch.setitem(sys.modules, "rasterio", None)  # import rasterio now raises ImportError
    with pytest.raises(InputError, match=r"s\.tif.*needs rasterio.*pip install rasterio"):
        read_sheet(path)


def test_layout_and_sheet_names_are_escaped_in_the_report(data_copy):
    from analysis.report.html import render_html

    review = review_paths(
        data_copy("demo_site.gpkg"), layout_maps=[LayoutMap("<script>alert(1)</script>", "<b>map</b>", 500.0)]
    )
    html = render_html(review, maps=False)
    assert "<script>alert(1)</script>" not in html and "&lt;script&gt;" in html
    assert "<b>map</b>" not in html


def test_map_scale_check_alone_has_the_review_shape():
    from analysis.checks.map_scale import MapScaleCheck

    findings, scales = check_site_map_scale(
        [], None, [LayoutMap("Plan", "Map 1", 600.0), LayoutMap("Plan", "Map 2", 2400.0)], PROFILE
    )
    result = MapScaleCheck(PROFILE, findings, scales)
    data = result.to_dict()
    assert {"tool", "profile", "measurements", "findings"} <= set(data)
    assert [m["scale_denominator"] for m in data["measurements"]["site_map_scales"]] == [600, 2400]
    assert result.exit_status == 0 and result.counts() == {"pass": 1, SMALLER: 1}
