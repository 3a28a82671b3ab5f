"""Generate the SWPPP Review test GeoPackages (deterministic; see README.md beside this file).

Usage: python test_data/make_test_data.py [OUTDIR]   (OUTDIR defaults to this script's folder)

Writes ``demo_site.gpkg`` (every site-plan layer of design/CONTRACT.md), ``demo_reference.gpkg``
(the reference layers), ``variants/*.gpkg`` (site plans derived from the demo by one change
each: acreage thresholds, land use, CRS, layer-name case, invalid geometry, missing pieces) and
``sheets/*`` (tiny georeferenced plan sheets at known scales: GeoTIFFs and one GeoPDF).

All geometry is built in NAD83 / New York East (EPSG:2260, US survey feet) around a fictional
commercial parcel on Forest Road, Village of Kiryas Joel, NY (about 41.34 N, 74.17 W). Local
coordinates below are feet east/north of the parcel's south-west corner. Areas are checked
against international acres (4046.8564224 m^2). Output is byte-identical between runs: no
randomness, no clock (OGR_CURRENT_DATE pins the GeoPackage timestamps).
"""

import hashlib
import json
import math
import os
import sqlite3
import sys
from pathlib import Path

os.environ["OGR_CURRENT_DATE"] = "2026-01-01T00:00:00Z"
os.environ.setdefault("PROJ_DATA", "/usr/share/proj")
os.environ["GDAL_PAM_ENABLED"] = "NO"  # no .aux.xml beside the plan sheets

import numpy as np  # noqa: E402
import rasterio  # noqa: E402
import rasterio.shutil  # noqa: E402
from pyproj import Transformer  # noqa: E402
from rasterio.transform import Affine  # noqa: E402

import fiona  # noqa: E402
import geopandas as gpd  # noqa: E402
import pandas as pd  # noqa: E402
import shapely.wkt  # noqa: E402
from shapely import make_valid  # noqa: E402
from shapely.geometry import LineString, MultiPolygon, Point, Polygon, box, mapping  # noqa: E402
from shapely.ops import unary_union  # noqa: E402

AREA_CRS = "EPSG:2260"
US_SURVEY_FOOT_M = 1200 / 3937
ACRE_SQFT = 4046.8564224 / US_SURVEY_FOOT_M**2  # international acre in US survey sq ft
X0, Y0 = 582737.0, 913239.0  # parcel's south-west corner in EPSG:2260

PHASE_DATES = {
    "1": ("2027-04-01", "2027-06-15"),
    "2": ("2027-06-01", "2027-09-01"),
    "3": ("2027-09-01", "2027-11-15"),
}
# Demo targets (international acres): phase 1 union, phases 1+2 union, all disturbance.
PHASE1_ACRES, PHASE12_ACRES, TOTAL_ACRES = 2.05, 3.10, 4.21
NWI_OVERLAP_ACRES = 0.10  # disturbance inside NWI-0001
BR2_UNCOVERED_SQFT = 312.0  # part of SMP BR-2 outside every easement

FIELD_TYPES = {  # fiona types of the non-text fields; every other field is 'str'
    "common_plan_acres": "float",
    "five_acre_waiver": "int",
    "recorded": "int",
    "scale_denominator": "int",
    "regulated": "int",
    "adjacent_area_ft": "float",
    "stormwater_source": "int",
    "version": "int",
    "feature_count": "int",
    "tc_hours": "float",
    "pre_peak_cfs": "float",
    "post_peak_cfs": "float",
    "pre_volume_cf": "float",
    "post_volume_cf": "float",
    "wqv_cf": "float",
}
DEFAULT_GEOMETRY = {  # geometry type of a layer written with no features
    "site_boundary": "Polygon",
    "disturbance": "Polygon",
    "smp": "Polygon",
    "easement": "Polygon",
    "discharge_point": "Point",
    "public_row": "Polygon",
    "soils": "Polygon",
    "land_cover_pre": "Polygon",
    "land_cover_post": "Polygon",
    "drainage_area": "Polygon",
}


# --- geometry helpers (local feet -> EPSG:2260) -------------------------------------------

def pt(x, y):
    return Point(X0 + x, Y0 + y)


def poly(*xy):
    return Polygon([(X0 + x, Y0 + y) for x, y in xy])


def rect(x1, y1, x2, y2):
    return box(X0 + x1, Y0 + y1, X0 + x2, Y0 + y2)


def rect_of_acres(acres, x, y, width):
    """Axis-aligned rectangle of exactly `acres`, `width` ft wide, south-west corner at (x, y)."""
    return rect(x, y, x + width, y + acres * ACRE_SQFT / width)


def square_of_acres(acres, x, y):
    return rect_of_acres(acres, x, y, math.sqrt(acres * ACRE_SQFT))


def line(*xy):
    return LineString([(X0 + x, Y0 + y) for x, y in xy])


def to_acres(sqft):
    return sqft / ACRE_SQFT


def union_acres(geoms):
    """Area of the union of (made-valid) geometries, in international acres."""
    return to_acres(unary_union([make_valid(g) for g in geoms]).area)


def frame(rows, crs=AREA_CRS):
    """GeoDataFrame from a list of dicts, each with a 'geometry' key."""
    return gpd.GeoDataFrame(rows, geometry="geometry", crs=crs)


# --- the demo site plan -----------------------------------------------------------------

def site_boundary_geom():
    return poly((0, 0), (720, 0), (745, 560), (390, 600), (-10, 540))


def demo_disturbance_geoms():
    """[(disturbance_id, phase, geometry)]; heights solved so the unions hit the targets."""
    d2 = rect(280, 60, 520, 210)  # 240 x 150 ft, of which 60 x 150 ft lies under D-1
    d2_alone = 240 * 150 - 60 * 150
    d1 = rect(40, 40, 340, 40 + (PHASE1_ACRES * ACRE_SQFT - d2_alone) / 300)
    d3 = rect(460, 100, 620, 260)  # phase 2, overlaps D-2's ground (60 x 110 ft)
    base = unary_union([d1, d2, d3]).area
    d4 = rect(40, 330, 300, 330 + (PHASE12_ACRES * ACRE_SQFT - base) / 260)
    d5_height = (TOTAL_ACRES - PHASE12_ACRES) * ACRE_SQFT / 255
    d5 = rect(500, 320, 755, 320 + d5_height)  # phase 3, crosses the parcel's east line
    return [("D-1", "1", d1), ("D-2", "1", d2), ("D-3", "2", d3), ("D-4", "2", d4),
            ("D-5", "3", d5)]


def disturbance_frame(items, crs=AREA_CRS):
    rows = []
    for dist_id, phase, geom in items:
        start, stabilized = PHASE_DATES[phase]
        rows.append({"disturbance_id": dist_id, "phase": phase, "start_date": start,
                     "stabilized_date": stabilized, "geometry": geom})
    return frame(rows, crs)


def project_frame(**changes):
    row = {
        "name": "Forest Road Commons",
        "address": "51 Forest Road, Kiryas Joel, NY 10950",
        "applicant": "Forest Road Commons LLC",
        "land_use": "commercial",
        "common_plan_acres": None,
        "five_acre_waiver": 0,
        "receiving_waters": "Forest Road tributary to Seven Springs Creek",
    }
    row.update(changes)
    return pd.DataFrame([row])


def demo_site_layers():
    """Every site-plan layer of the contract, as (Geo)DataFrames keyed by layer name."""
    layers = demo_plan_layers()
    layers.update(demo_hydrology_layers(layers))
    return layers


def demo_plan_layers():
    """The site-plan layers without the hydrology ones."""
    br2_east = 330 + BR2_UNCOVERED_SQFT / 40  # BR-2 is 40 ft tall; E-2 ends at x = 330
    return {
        "project": project_frame(),
        "site_boundary": frame([{"parcel_id": "1-1-23.4", "geometry": site_boundary_geom()}]),
        "disturbance": disturbance_frame(demo_disturbance_geoms()),
        "smp": frame([
            {"smp_id": "BR-1", "practice": "bioretention", "geometry": rect(100, 15, 180, 55)},
            {"smp_id": "BR-2", "practice": "bioretention",
             "geometry": rect(230, 35, br2_east, 75)},
            {"smp_id": "SP-1", "practice": "wet pond", "geometry": rect(555, 12, 625, 50)},
        ]),
        "easement": frame([
            {"easement_id": "E-1", "recorded": 1, "instrument": "Liber 1234 Page 56",
             "geometry": rect(80, 0, 200, 70)},
            {"easement_id": "E-2", "recorded": 0, "instrument": None,
             "geometry": rect(200, 20, 330, 90)},
            {"easement_id": "E-3", "recorded": 1, "instrument": "Doc 2026-000123",
             "geometry": rect(540, 2, 640, 60)},
        ]),
        "discharge_point": frame([{"receiving_water": "Seven Springs Creek tributary",
                                   "waterbody_id": "NY1301-0099", "geometry": pt(190, 570)}]),
        "public_row": frame([{"name": "Forest Road", "geometry": rect(-300, -60, 1100, 0)}]),
        "layout_scale": pd.DataFrame([
            {"sheet": "C-101 Site plan", "scale_denominator": 600},
            {"sheet": "C-102 Grading", "scale_denominator": 1200},
            {"sheet": "C-001 Location map", "scale_denominator": 2400},
        ]),
    }


def demo_round2_layers():
    """The same project resubmitted (issue 35's second round): E-2 now reaches 7.2 ft past
    BR-2's east side (x = 345), so BR-2's easement fail is fixed; but BR-1 was moved 40 ft west
    (x 60 to 140) and now sticks 20 ft out of E-1 (x >= 80): 800 sq ft uncovered, a new fail.
    The hydrology layers are the demo's, drawn again from this plan."""
    layers = demo_plan_layers()
    smp, easement = layers["smp"].copy(), layers["easement"].copy()
    smp.loc[smp["smp_id"] == "BR-1", "geometry"] = rect(60, 15, 140, 55)
    easement.loc[easement["easement_id"] == "E-2", "geometry"] = rect(200, 20, 345, 90)
    layers["smp"], layers["easement"] = smp, easement
    layers.update(demo_hydrology_layers(layers))
    return layers


# --- the demo's hydrology layers (CONTRACT.md "Hydrology inputs") -------------------------

DIVIDE_X = 370  # drainage divide between DA-1 (west) and DA-2 (east), local feet
SOIL_LINE_X = 300  # group B soil west of it, C/D east of it
# The engineer's stated figures (hydrology_claims): DA-1's 10-year agree with TR-55 from the map
# within the profile's tolerance; DA-2's 100-year post-development peak is stated far too low.
DEMO_CLAIMS = [
    {"drainage_area": "DA-1", "storm": "10-year", "pre_peak_cfs": 4.10, "post_peak_cfs": 8.42,
     "pre_volume_cf": None, "post_volume_cf": None, "wqv_cf": None},
    {"drainage_area": "DA-2", "storm": "100-year", "pre_peak_cfs": None, "post_peak_cfs": 9.0,
     "pre_volume_cf": None, "post_volume_cf": None, "wqv_cf": 4200.0},
]


def mapped(geom):
    """The polygonal part of a boolean overlay result, as one (Multi)Polygon."""
    geom = make_valid(geom)
    if geom.geom_type in ("Polygon", "MultiPolygon"):
        return geom
    return unary_union([g for g in getattr(geom, "geoms", [geom])
                        if g.geom_type in ("Polygon", "MultiPolygon")])


def multi(geom):
    return geom if geom.geom_type == "MultiPolygon" else MultiPolygon([geom])


def demo_hydrology_layers(site):
    """Drainage areas, soils, land cover before/after, and the SWPPP's stated figures."""
    parcel = site["site_boundary"].geometry.iloc[0]
    west, east = rect(-100, -100, DIVIDE_X, 700), rect(DIVIDE_X, -100, 900, 700)
    disturbed = unary_union(list(site["disturbance"].geometry)).intersection(parcel)
    return {
        "drainage_area": frame([
            {"name": "DA-1", "discharge_point": "DP-1", "tc_hours": 0.25,
             "geometry": mapped(parcel.intersection(west))},
            {"name": "DA-2", "discharge_point": "DP-1", "tc_hours": 0.20,
             "geometry": mapped(parcel.intersection(east))}]),
        "soils": frame([
            {"hsg": "B", "geometry": rect(-100, -100, SOIL_LINE_X, 700)},
            {"hsg": "C/D", "geometry": rect(SOIL_LINE_X, -100, 900, 700)}]),
        "land_cover_pre": frame([
            {"cover": "woods_good", "geometry": rect(-100, -100, 450, 700)},
            {"cover": "meadow", "geometry": rect(450, -100, 900, 700)}]),
        "land_cover_post": frame([  # one geometry type for the layer: MultiPolygon
            {"cover": "commercial", "geometry": multi(mapped(disturbed))},
            {"cover": "woods_good",
             "geometry": multi(mapped(rect(-100, -100, 900, 700).difference(disturbed)))}]),
        "hydrology_claims": pd.DataFrame(DEMO_CLAIMS),
    }


# --- the demo reference layers ----------------------------------------------------------

def demo_reference_layers(site):
    """Reference layers placed relative to the demo disturbance `site['disturbance']`."""
    d4, d5 = site["disturbance"].geometry.iloc[3], site["disturbance"].geometry.iloc[4]
    nwi_bottom = d4.bounds[3] - Y0 - NWI_OVERLAP_ACRES * ACRE_SQFT / 120  # 120 ft inside D-4
    t = d4.bounds[3] - Y0
    b = d5.bounds[3] - Y0 + 85  # GO-12 is 85 ft north of D-5: its 100-ft area takes 15 ft
    layers = {
        "wetlands": frame([
            {"wetland_id": "GO-12", "source": "NYSDEC", "wetland_class": "II", "regulated": 1,
             "adjacent_area_ft": 100.0,
             "geometry": poly((450, b), (900, b), (940, b + 120), (820, b + 230),
                              (600, b + 210), (430, b + 90))},
            {"wetland_id": "NWI-0001", "source": "NWI", "wetland_class": "PFO1A",
             "regulated": 0, "adjacent_area_ft": None,
             "geometry": poly((100, nwi_bottom), (220, nwi_bottom), (220, t + 10),
                              (250, t + 45), (190, t + 90), (110, t + 70), (100, t + 10))},
            {"wetland_id": "GO-20", "source": "NYSDEC", "wetland_class": "I", "regulated": 1,
             "adjacent_area_ft": 100.0,
             "geometry": poly((-2600, 2400), (-2200, 2350), (-2100, 2700), (-2450, 2850))},
        ]),
        "impaired_waters": frame([
            {"waterbody_id": "NY1301-0099", "name": "Seven Springs Creek tributary",
             "pollutants": "Silt/Sediment;Phosphorus", "listing_cycle": "2022", "category": "5",
             "geometry": line((1400, 1500), (1000, 1000), (800, 800), (300, 760),
                              (-400, 900), (-1500, 1300))},
            {"waterbody_id": "NY1301-0123", "name": "Example Brook", "pollutants": "Phosphorus",
             "listing_cycle": "2022", "category": "4a",
             "geometry": line((2600, -2500), (3000, -500), (3500, 1500), (4200, 3500))},
        ]),
        "tmdl_watersheds": frame([
            {"watershed_id": "TW-1", "name": "Example Reservoir watershed",
             "pollutants": "Phosphorus", "tmdl_id": "NY-TMDL-0001", "stormwater_source": 1,
             "geometry": poly((2000, -2000), (5800, -2200), (6000, 3000), (2300, 3200))},
        ]),
        "catchments": frame([
            {"catchment_id": "020200060101", "name": "Seven Springs Creek-Forest Road",
             "drains_to": "NY1301-0099",
             "geometry": poly((-4000, -3000), (1800, -3000), (1650, -500), (1900, 1500),
                              (1700, 4000), (-4000, 4000))},
            {"catchment_id": "020200060102", "name": "Example Brook", "drains_to": "NY1301-0123",
             "geometry": poly((1800, -3000), (7000, -3000), (7000, 4000), (1700, 4000),
                              (1900, 1500), (1650, -500))},
        ]),
    }
    layers["layer_versions"] = layer_versions(layers)
    return layers


def layer_versions(layers):
    """One layer_versions row per layer; sha256 of a stable text describing its features."""
    rows = []
    for name, gdf in layers.items():
        text = f"{name}|demo (synthetic)|" + "|".join(
            shapely.wkt.dumps(g, rounding_precision=3) for g in gdf.geometry)
        rows.append({"layer": name, "version": 1, "source": "demo (synthetic)",
                     "source_date": "2026-01-01", "imported_at": "2026-01-01T00:00:00Z",
                     "feature_count": len(gdf),
                     "sha256": hashlib.sha256(text.encode()).hexdigest()})
    return pd.DataFrame(rows)


# --- variants: each is the demo with one change -----------------------------------------

def with_disturbance(demo, items, **project_changes):
    layers = dict(demo)
    layers["disturbance"] = disturbance_frame(items)
    layers["project"] = demo["project"].assign(**project_changes)
    return layers


def single_area(acres):
    """One phase-1 disturbance polygon of exactly `acres`, 300 ft wide, inside the parcel."""
    return [("D-1", "1", rect_of_acres(acres, 60, 40, 300))]


def six_acres_at_once():
    """Phases 1 and 2, 3.0 ac each, side by side: both open 2027-06-01 to 06-15, 6.0 ac at once."""
    items = [("D-1", "1", rect_of_acres(3.0, 20, 40, 300)),
             ("D-2", "2", rect_of_acres(3.0, 360, 40, 300))]
    assert all(site_boundary_geom().contains(geom) for _, _, geom in items)
    assert items[0][2].disjoint(items[1][2])
    return items


def five_acres_two_rectangles():
    """Two 3-acre rectangles (400 ft tall) overlapping by exactly 1 acre: union 5 acres."""
    height = 400.0
    width = 3 * ACRE_SQFT / height
    overlap_width = ACRE_SQFT / (height - 50)  # the second one is 50 ft higher
    first = rect(60, 40, 60 + width, 40 + height)
    second = rect(60 + width - overlap_width, 90, 60 + 2 * width - overlap_width, 90 + height)
    return [("D-1", "1", first), ("D-2", "1", second)]


def bow_tie():
    """Self-intersecting D-5 replacement: two triangles of 220 x 200 / 4 sq ft each when valid."""
    return poly((500, 320), (720, 520), (720, 320), (500, 520))


BOW_TIE_VALID_SQFT = 220 * 200 / 2


def replace_geometry(gdf, index, geom):
    gdf = gdf.copy()
    gdf.loc[gdf.index[index], "geometry"] = geom
    return gdf


def reproject(demo, crs):
    return {name: df.to_crs(crs) if isinstance(df, gpd.GeoDataFrame) else df
            for name, df in demo.items()}


def mixed_case(demo):
    names = {"project": "Project", "site_boundary": "SITE_BOUNDARY", "disturbance": "Disturbance",
             "smp": "SMP", "easement": "Easement", "discharge_point": "Discharge_Point",
             "public_row": "PUBLIC_ROW", "layout_scale": "Layout_Scale"}
    return {names.get(name, name): df for name, df in demo.items()}


def with_layer(demo, name, df):
    layers = dict(demo)
    layers[name] = df
    return layers


def without_layer(demo, name):
    return {key: df for key, df in demo.items() if key != name}


def without_crs(gdf):
    gdf = gdf.copy()
    gdf.crs = None
    return gdf


def smp_as_points(smp):
    return smp.assign(geometry=smp.geometry.centroid)


# (file name, builder(demo) -> layers, expected disturbed acres or None)
VARIANTS = [
    ("under_one_acre.gpkg", lambda d: with_disturbance(d, single_area(0.80)), 0.80),
    ("exactly_one_acre.gpkg",
     lambda d: with_disturbance(d, [("D-1", "1", square_of_acres(1.0, 60, 40))]), 1.0),
    ("exactly_five_acres.gpkg", lambda d: with_disturbance(d, five_acres_two_rectangles()), 5.0),
    ("common_plan.gpkg",
     lambda d: with_disturbance(d, single_area(0.60), common_plan_acres=3.5), 0.60),
    ("single_family.gpkg",
     lambda d: with_disturbance(d, single_area(2.0), land_use="single_family_residential"), 2.0),
    ("agricultural.gpkg",
     lambda d: with_disturbance(d, single_area(2.0), land_use="agricultural"), 2.0),
    ("crs_4326.gpkg", lambda d: reproject(d, "EPSG:4326"), TOTAL_ACRES),
    ("crs_utm18n.gpkg", lambda d: reproject(d, "EPSG:26918"), TOTAL_ACRES),
    ("mixed_case_names.gpkg", mixed_case, TOTAL_ACRES),
    ("self_intersecting.gpkg",
     lambda d: with_layer(d, "disturbance", replace_geometry(d["disturbance"], 4, bow_tie())),
     PHASE12_ACRES + to_acres(BOW_TIE_VALID_SQFT)),
    ("no_crs.gpkg", lambda d: with_layer(d, "disturbance", without_crs(d["disturbance"])), None),
    ("missing_layer.gpkg", lambda d: without_layer(d, "disturbance"), None),
    ("missing_field.gpkg",
     lambda d: with_layer(d, "project", d["project"].drop(columns=["land_use"])), TOTAL_ACRES),
    ("empty_disturbance.gpkg",
     lambda d: with_layer(d, "disturbance", d["disturbance"].iloc[0:0]), 0.0),
    ("smp_points.gpkg", lambda d: with_layer(d, "smp", smp_as_points(d["smp"])), TOTAL_ACRES),
    ("phasing_over_five.gpkg", lambda d: with_disturbance(d, six_acres_at_once()), 6.0),
    ("phasing_waiver.gpkg",
     lambda d: with_disturbance(d, six_acres_at_once(), five_acre_waiver=1), 6.0),
    ("no_discharge_point.gpkg", lambda d: without_layer(d, "discharge_point"), TOTAL_ACRES),
]


def with_tmdl_watershed(reference):
    """The demo reference plus TW-2: a sediment TMDL watershed, stormwater a source, holding
    the whole parcel (the Seven Springs Creek catchment's upper part)."""
    layers = dict(reference)
    sheds = reference["tmdl_watersheds"]
    tw2 = frame([{"watershed_id": "TW-2", "name": "Seven Springs Creek upper watershed",
                  "pollutants": "Silt/Sediment;Phosphorus, Total", "tmdl_id": "NY-TMDL-0002",
                  "stormwater_source": 1,
                  "geometry": poly((-900, -400), (1500, -450), (1600, 1400), (-800, 1500))}])
    assert tw2.geometry.iloc[0].contains(site_boundary_geom())
    layers["tmdl_watersheds"] = pd.concat([sheds, tw2], ignore_index=True)
    layers["layer_versions"] = layer_versions(without_layer(layers, "layer_versions"))
    return layers


# (file name, builder(demo reference) -> layers): reference layers with one change each
REFERENCE_VARIANTS = [
    ("reference_crs_4326.gpkg", lambda r: reproject(r, "EPSG:4326")),
    ("reference_missing_layer.gpkg", lambda r: without_layer(r, "tmdl_watersheds")),
    ("reference_tmdl.gpkg", with_tmdl_watershed),
]


# --- plan sheets: tiny georeferenced GeoTIFFs (and a GeoPDF) at known scales ---------------

SHEET_WIDTH, SHEET_HEIGHT = 100, 80  # pixels
UTM18N = "EPSG:26918"
FOOT_M = 0.3048  # international foot: "feet" on a sheet's scale


def utm_origin():
    """The parcel's north-west sheet corner (local (40, 600) ft) in UTM 18N, whole metres."""
    x, y = Transformer.from_crs(AREA_CRS, UTM18N, always_xy=True).transform(X0 + 40, Y0 + 600)
    return float(round(x)), float(round(y))


# (file name, CRS, CRS units per pixel, resolution tags (x, y, unit) or None, feet per inch)
# US-foot sheets: 100 pixels per inch, so 1 US ft per pixel is 1" = 100 US ft (1:1200.0024).
# UTM sheets in metres: 0.3048 m per pixel at 100 ppi is exactly 1" = 100 ft (1:1200);
# 0.15 m per pixel at 40 pixels per centimetre (101.6 ppi) is 1" = 50 ft (1:600).
SHEETS = [
    ("sheet_2260_50ft.tif", AREA_CRS, 0.5, (100, 100, 2), 50 * US_SURVEY_FOOT_M / FOOT_M),
    ("sheet_2260_100ft.tif", AREA_CRS, 1.0, (100, 100, 2), 100 * US_SURVEY_FOOT_M / FOOT_M),
    ("sheet_2260_200ft.tif", AREA_CRS, 2.0, (100, 100, 2), 200 * US_SURVEY_FOOT_M / FOOT_M),
    ("sheet_2260_no_resolution.tif", AREA_CRS, 1.0, None, None),
    ("sheet_utm18n_50ft_cm.tif", UTM18N, 0.15, (40, 40, 3), 50.0),
    ("sheet_utm18n_100ft.tif", UTM18N, 0.3048, (100, 100, 2), 100.0),
    ("sheet_utm18n_200ft.tif", UTM18N, 0.6096, (100, 100, 2), 200.0),
    ("sheet_utm18n_no_resolution.tif", UTM18N, 0.3048, None, None),
]
# (GeoPDF, the GeoTIFF it is made from, its DPI): GDAL's PDF driver writes the DPI it drew at.
GEOPDFS = [("sheet_2260_100ft.pdf", "sheet_2260_100ft.tif", 100)]


def sheet_pixels():
    """A frame and a diagonal: something to look at, the same bytes every time."""
    pixels = np.full((SHEET_HEIGHT, SHEET_WIDTH), 255, dtype="uint8")
    pixels[[0, -1], :] = 0
    pixels[:, [0, -1]] = 0
    cols = np.arange(SHEET_WIDTH)
    pixels[(cols * (SHEET_HEIGHT - 1)) // (SHEET_WIDTH - 1), cols] = 0
    return pixels[np.newaxis]


def write_sheets(folder):
    folder.mkdir(parents=True, exist_ok=True)
    for name, crs, size, tags, _ in SHEETS:
        x, y = (X0 + 40, Y0 + 600) if crs == AREA_CRS else utm_origin()
        path = folder / name
        path.unlink(missing_ok=True)
        with rasterio.open(path, "w", driver="GTiff", width=SHEET_WIDTH, height=SHEET_HEIGHT,
                           count=1, dtype="uint8", crs=crs, compress="deflate",
                           transform=Affine(size, 0, x, 0, -size, y)) as dst:
            dst.write(sheet_pixels())
            if tags:
                dst.update_tags(TIFFTAG_XRESOLUTION=str(tags[0]), TIFFTAG_YRESOLUTION=str(tags[1]),
                                TIFFTAG_RESOLUTIONUNIT=str(tags[2]))
    for name, source, dpi in GEOPDFS:
        (folder / name).unlink(missing_ok=True)
        rasterio.shutil.copy(folder / source, folder / name, driver="PDF", DPI=dpi)


def check_sheets(folder):
    """Re-open every sheet: its feet per inch is what SHEETS says (independent of analysis/)."""
    metres = {AREA_CRS: US_SURVEY_FOOT_M, UTM18N: 1.0}
    expected = {name: (crs, ft_per_in) for name, crs, _, _, ft_per_in in SHEETS}
    expected.update({name: expected[source] for name, source, _ in GEOPDFS})
    for name, (crs, ft_per_in) in expected.items():
        with rasterio.open(folder / name) as src:
            tags = src.tags()
            assert src.crs.to_epsg() == int(crs.split(":")[1]), (name, src.crs)
            assert (src.width, src.height) == (SHEET_WIDTH, SHEET_HEIGHT), name
            if "DPI" in tags:
                ppi = float(tags["DPI"])
            elif "TIFFTAG_XRESOLUTION" in tags:
                per_cm = tags["TIFFTAG_RESOLUTIONUNIT"].startswith("3")
                ppi = float(tags["TIFFTAG_XRESOLUTION"]) * (2.54 if per_cm else 1.0)
            else:
                ppi = None
            measured = None if ppi is None else src.transform.a * metres[crs] / FOOT_M * ppi
        assert (measured is None) == (ft_per_in is None), name
        if measured is not None:
            assert math.isclose(measured, ft_per_in, rel_tol=1e-12), (name, measured, ft_per_in)
        size = (folder / name).stat().st_size
        print(f"sheets/{name}: {crs}, " + (f"1 in = {measured:.6f} ft" if measured else
                                            "no resolution") + f", {size} bytes")


# --- writing ----------------------------------------------------------------------------

def geometry_type(name, gdf):
    types = set(gdf.geom_type)
    if not types:
        return DEFAULT_GEOMETRY[name.lower()]
    if len(types) != 1:
        raise ValueError(f"layer {name} mixes geometry types {sorted(types)}")
    return types.pop()


def plain(value):
    """A fiona-writable scalar: NaN/None -> None, numpy numbers -> Python numbers."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def fiona_crs(crs):
    if crs is None:
        return None
    epsg = crs.to_epsg()
    return f"EPSG:{epsg}" if epsg else crs.to_wkt()


def write_gpkg(path, layers):
    """Write {layer name: (Geo)DataFrame} to a new GeoPackage at `path` (replacing it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    for name, df in layers.items():
        spatial = isinstance(df, gpd.GeoDataFrame)
        columns = [c for c in df.columns if not (spatial and c == df.geometry.name)]
        schema = {"geometry": geometry_type(name, df) if spatial else "None",
                  "properties": {c: FIELD_TYPES.get(c, "str") for c in columns}}
        records = [{"geometry": mapping(row[df.geometry.name]) if spatial else None,
                    "properties": {c: plain(row[c]) for c in columns}}
                   for _, row in df.iterrows()]
        with fiona.open(path, "w", driver="GPKG", layer=name, schema=schema,
                        crs=fiona_crs(df.crs) if spatial else None) as dst:
            dst.writerecords(records)


# --- checks -----------------------------------------------------------------------------

def in_area_crs(gdf):
    return gdf if gdf.crs is None or gdf.crs.to_epsg() == 2260 else gdf.to_crs(AREA_CRS)


def max_concurrent(dist):
    """(acres, date, phases) of the worst moment: union of polygons with start <= t < end."""
    best = (0.0, None, [])
    for moment in sorted(set(dist.start_date)):
        active = dist[(dist.start_date <= moment) & (dist.stabilized_date > moment)]
        acres = union_acres(active.geometry)
        if acres > best[0]:
            best = (acres, moment, sorted(set(active.phase)))
    return best


def check_demo(site, ref):
    """Assert the demo's designed measurements and print them."""
    dist = site["disturbance"]
    by_phase = {p: union_acres(dist[dist.phase <= p].geometry) for p in ("1", "2", "3")}
    total = by_phase["3"]
    union = unary_union(list(dist.geometry))
    outside = to_acres(union.difference(site["site_boundary"].geometry.iloc[0]).area)
    worst = max_concurrent(dist)
    wet = ref["wetlands"].set_index("wetland_id").geometry
    in_wetland = to_acres(union.intersection(unary_union(list(wet))).area)
    adjacent = union.intersection(wet["GO-12"].buffer(100)).difference(unary_union(list(wet)))
    easements = unary_union(list(site["easement"].geometry))
    uncovered = site["smp"].geometry.iloc[1].difference(easements)
    naive = to_acres(dist.geometry.area.sum())
    assert math.isclose(by_phase["1"], PHASE1_ACRES, abs_tol=1e-9)
    assert math.isclose(by_phase["2"], PHASE12_ACRES, abs_tol=1e-9)
    assert math.isclose(total, TOTAL_ACRES, abs_tol=1e-9)
    assert 0.05 <= outside <= 0.10 and worst[0] < 5
    assert math.isclose(in_wetland, NWI_OVERLAP_ACRES, abs_tol=1e-9)
    assert math.isclose(uncovered.area, BR2_UNCOVERED_SQFT, abs_tol=1e-6)
    assert 9 <= to_acres(site["site_boundary"].geometry.iloc[0].area) <= 10
    assert not wet["GO-12"].intersects(union) and not wet["GO-20"].buffer(100).intersects(union)
    assert not ref["tmdl_watersheds"].geometry.iloc[0].intersects(union)
    assert ref["catchments"].geometry.iloc[0].contains(site["site_boundary"].geometry.iloc[0])
    e1, e2, e3 = site["easement"].geometry
    road = site["public_row"].geometry.iloc[0]
    assert e1.touches(road) and e2.touches(e1) and math.isclose(e3.distance(road), 2.0)
    assert e3.distance(unary_union([e1, e2])) > 0
    assert dist.geometry.iloc[4].disjoint(unary_union(list(dist.geometry.iloc[:4])))
    print(f"demo: disturbed {total:.6f} ac (naive sum {naive:.6f}); phase 1 {by_phase['1']:.6f};"
          f" phases 1+2 {by_phase['2']:.6f}; outside site {outside:.6f} ac"
          f" ({outside * ACRE_SQFT:.1f} sq ft); max concurrent {worst[0]:.6f} ac at {worst[1]}"
          f" (phases {','.join(worst[2])}); in wetland {in_wetland:.6f} ac; in GO-12 adjacent"
          f" area {to_acres(adjacent.area):.6f} ac; BR-2 uncovered {uncovered.area:.3f} sq ft;"
          f" parcel {to_acres(site['site_boundary'].geometry.iloc[0].area):.6f} ac")


def srs_ids(path):
    with sqlite3.connect(path) as con:
        return dict(con.execute("SELECT table_name, srs_id FROM gpkg_geometry_columns"))


def check_file(path, layers, expected_acres=None):
    """Re-open `path`: same layers, feature counts and CRS; disturbed acres as expected."""
    assert sorted(fiona.listlayers(path)) == sorted(layers), fiona.listlayers(path)
    srs = srs_ids(path)
    disturbed = None
    for name, df in layers.items():
        if not isinstance(df, gpd.GeoDataFrame):
            with fiona.open(path, layer=name) as src:
                assert len(src) == len(df) and list(src.schema["properties"]) == list(df.columns)
            continue
        back = gpd.read_file(path, layer=name)
        assert len(back) == len(df), (path, name)
        if df.crs is None:  # GDAL writes srs_id 0 and reads it back as "Undefined geographic SRS"
            assert srs[name] in (0, -1) and (back.crs is None or "Undefined" in back.crs.name)
            continue
        assert back.crs == df.crs, (path, name, back.crs)
        if name.lower() == "disturbance":
            disturbed = union_acres(in_area_crs(back).geometry)
    if expected_acres is not None:
        assert math.isclose(disturbed, expected_acres, abs_tol=1e-6), (path, disturbed)
    crs = {fiona_crs(df.crs) for df in layers.values() if isinstance(df, gpd.GeoDataFrame)}
    acres = "-" if disturbed is None else f"{disturbed!r}"
    print(f"{path.name}: {len(layers)} layers, crs {sorted(map(str, crs))},"
          f" disturbed acres {acres}, srs_id {srs}")


# --- sources for `swppp reference import` (reference_sources/) --------------------------------
# Two releases of a small 303(d) list in each source format, and the geometries they join to:
# from the 2022 list to the 2024 one, NY1301-0123 is delisted, NY1301-0200 newly listed, and
# NY1301-0099 gains phosphorus and loses nothing; its line is unchanged.

def reference_source_waters():
    """Geometry file keyed by PWL id (no NY prefix), as NYSDEC publishes it: lines of the waters."""
    return frame([
        {"PWL_ID": "1301-0099", "NAME": "Seven Springs Creek tributary",
         "geometry": line((1400, 1500), (1000, 1000), (800, 800), (300, 760), (-400, 900))},
        {"PWL_ID": "1301-0123", "NAME": "Example Brook",
         "geometry": line((2600, -2500), (3000, -500), (3500, 1500))},
        {"PWL_ID": "1301-0200", "NAME": "Forest Road Pond outlet",
         "geometry": line((-900, -700), (-300, -200), (100, 300))},
    ])


PWL_LISTS = {  # release -> rows (PWL_ID, NAME, CAUSES, CATEGORY)
    "2022": [("1301-0099", "Seven Springs Creek tributary", "Silt/Sediment", "5"),
             ("1301-0123", "Example Brook", "PHOSPHORUS, TOTAL", "4a"),
             ("1301-0300", "Unmapped Creek", "Pathogens", "5")],
    "2024": [("1301-0099", "Seven Springs Creek tributary", "Silt/Sediment; Phosphorus", "5"),
             ("1301-0123", "Example Brook", "", "2"),
             ("1301-0200", "Forest Road Pond outlet", "Silt/Sediment", "5")],
}


def pwl_csv(cycle):
    rows = ["PWL_ID,WIN,NAME,CAUSES,LISTING_CYCLE,CATEGORY"]
    for pwl_id, name, causes, category in PWL_LISTS[cycle]:
        rows.append(f'{pwl_id},(MW1.1) H-{pwl_id[-3:]},{name},"{causes}",{cycle},{category}')
    return "\n".join(rows) + "\n"


def attains_assessments(cycle):
    """An ATTAINS `assessments` response for the same list (ids NY + PWL id)."""
    units = []
    for pwl_id, _name, causes, category in PWL_LISTS[cycle]:
        parameters = [{"parameterStatusName": "Cause", "parameterName": c.strip().upper(),
                       "associatedActions": []} for c in causes.split(";") if c.strip()]
        parameters.append({"parameterStatusName": "Meeting Criteria",
                           "parameterName": "DISSOLVED OXYGEN", "associatedActions": []})
        units.append({"assessmentUnitIdentifier": "NY" + pwl_id, "epaIRCategory": category,
                      "parameters": parameters, "overallStatus": "Not Supporting"})
    return {"items": [{"organizationIdentifier": "21NYDECA", "reportingCycleText": cycle,
                       "assessments": units}], "count": len(units)}


def reference_source_watersheds():
    """TMDL watershed polygons keyed by three assessment units of the real NY TMDL actions."""
    return frame([
        {"watershed_id": "NY1301-0035", "name": "Lower Hudson tributary watershed",
         "geometry": poly((2000, -2000), (5800, -2200), (6000, 3000), (2300, 3200))},
        {"watershed_id": "NY1201-0003", "name": "Adirondack lake watershed",
         "geometry": poly((-6000, -6000), (-4000, -6000), (-4000, -4000), (-6000, -4000))},
        {"watershed_id": "NY0905-0022", "name": "St. Lawrence tributary watershed",
         "geometry": poly((-6000, 5000), (-4000, 5000), (-4000, 7000), (-6000, 7000))},
    ])


def reference_source_huc12():
    """A WBD-shaped HUC-12 layer (fields huc12, name, tohuc), to import with wbd_mapping.toml."""
    return frame([
        {"huc12": "020200060101", "name": "Seven Springs Creek-Forest Road", "tohuc": "020200060103",
         "geometry": poly((-4000, -3000), (1800, -3000), (1650, -500), (1900, 1500), (1700, 4000),
                          (-4000, 4000))},
        {"huc12": "020200060102", "name": "Example Brook", "tohuc": "020200060103",
         "geometry": poly((1800, -3000), (7000, -3000), (7000, 4000), (1700, 4000), (1900, 1500),
                          (1650, -500))},
    ])


NWI_MAPPING = """# NWI (National Wetlands Inventory) -> the contract's wetlands layer.
# swppp reference import wetlands NWI.shp --into REF --map nwi_mapping.toml
[fields]               # contract field = source field (case-insensitive)
wetland_class = "ATTRIBUTE"   # the Cowardin code, e.g. PFO1A (WETLAND_TYPE is its description)
[constants]            # contract field = the same value for every feature
source = "NWI"
regulated = 0          # NWI wetlands are not NYS-regulated by themselves
[templates]            # contract field = text made from source fields; {fid} is the feature id
wetland_id = "NWI-{fid}"
"""
WBD_MAPPING = """# WBD HUC-12 watersheds -> the contract's catchments layer.
# swppp reference import catchments WBDHU12.shp --into REF --map wbd_mapping.toml
[fields]
catchment_id = "huc12"
name = "name"
drains_to = "tohuc"    # the downstream HUC-12; replace with waterbody ids where known
"""
PWL_UNITS_MAPPING = """# Assessment units keyed by PWL id (NYSDEC PWL GIS layer) -> TMDL units joined by id, for
# `swppp reference import tmdl_watersheds ... --format attains --derive-watersheds`.
[fields]
watershed_id = "PWL_ID"
name = "NAME"
"""
PWL_GEOMETRY_MAPPING = """# Geometry file keyed by PWL id -> joined to a PWL or ATTAINS table by id.
[fields]
waterbody_id = "PWL_ID"
name = "NAME"
"""


# NWI's state download (FWS Wetlands Mapper, "Download by State", shapefile) as published: a
# zip holding NY_shapefile_wetlands/NY_Wetlands.shp in NWI's Albers CRS with NWI's fields.
# Synthetic wetlands in that shape (the project ships no third-party data): the demo's NWI
# wetland and two more nearby; the member dates are the release's (the import's source date).
NWI_STATE, NWI_DATE = "NY", (2025, 5, 1, 0, 0, 0)
NWI_CRS = "EPSG:5070"  # NAD83 / Conus Albers, NWI's projection
NWI_TYPES = {"PFO1A": "Freshwater Forested/Shrub Wetland", "PEM1E": "Freshwater Emergent Wetland",
             "PUBHh": "Freshwater Pond"}


def nwi_wetlands(reference):
    """The NWI wetlands around the demo site, as NWI's shapefile carries them."""
    nwi = reference["wetlands"]
    shapes = [nwi.geometry[nwi["wetland_id"] == "NWI-0001"].iloc[0],
              poly((-1500, 1000), (-1100, 980), (-1050, 1250), (-1450, 1300)),
              poly((1200, -1400), (1500, -1420), (1520, -1150), (1180, -1160))]
    albers = gpd.GeoSeries(shapes, crs=AREA_CRS).to_crs(NWI_CRS)
    codes = ["PFO1A", "PEM1E", "PUBHh"]
    return gpd.GeoDataFrame({
        "ATTRIBUTE": codes, "WETLAND_TY": [NWI_TYPES[c] for c in codes],
        "ACRES": [round(g.area / 4046.8564224, 2) for g in albers],
        "Shape_Leng": [round(g.length, 3) for g in albers],
        "Shape_Area": [round(g.area, 3) for g in albers]}, geometry=list(albers), crs=NWI_CRS)


def write_nwi_zip(folder, reference):
    """``NY_shapefile_wetlands.zip`` as NWI publishes a state (the import reads it zipped)."""
    import tempfile
    import zipfile

    member = f"{NWI_STATE}_shapefile_wetlands"
    with tempfile.TemporaryDirectory() as tmp:
        shp = Path(tmp) / f"{NWI_STATE}_Wetlands.shp"
        nwi_wetlands(reference).to_file(shp, driver="ESRI Shapefile", encoding="UTF-8",
                                        DBF_DATE_LAST_UPDATE="2025-05-01")
        with zipfile.ZipFile(folder / f"{member}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
            archive.writestr(zipfile.ZipInfo(f"{member}/", NWI_DATE), b"")
            for path in sorted(Path(tmp).iterdir()):
                archive.writestr(zipfile.ZipInfo(f"{member}/{path.name}", NWI_DATE),
                                 path.read_bytes(), zipfile.ZIP_DEFLATED)


# An ATTAINS `actions` response (actionTypeCode TMDL) for the demo's waters, in the service's
# shape: Example Brook's phosphorus TMDL (the 4a water of the 2022 list), its load from point
# and nonpoint sources ("Both": a wasteload allocation covers permitted stormwater).
TMDL_ACTIONS = [("NY-TMDL-0001", "Example_Brook_Phosphorus_2021", "2021-03-15", "NY1301-0123",
                 "PHOSPHORUS, TOTAL", "Both")]


def attains_tmdl_actions():
    actions = []
    for action_id, name, completed, unit, pollutant, source in TMDL_ACTIONS:
        actions.append({
            "actionIdentifier": action_id, "actionName": name, "agencyCode": "S",
            "actionTypeCode": "TMDL", "actionStatusCode": "EPA Final Action",
            "completionDate": completed, "organizationId": "21NYDECA", "documents": [],
            "associatedWaters": {"specificWaters": [{
                "assessmentUnitIdentifier": unit,
                "associatedPollutants": [{
                    "pollutantName": pollutant, "pollutantSourceTypeCode": source,
                    "explicitMarginofSafetyText": None, "implicitMarginofSafetyText": None,
                    "loadAllocationDetails": [], "permits": [], "TMDLEndPointText": None}],
                "parameters": [{"parameterName": pollutant,
                                "associatedPollutants": [{"pollutantName": pollutant}]}],
                "sources": []}]},
            "TMDLReportDetails": {"TMDLOtherIdentifier": None, "TMDLDate": completed,
                                  "indianCountryIndicator": "N"},
            "pollutants": [], "associatedActions": [], "histories": []})
    return {"items": [{"organizationIdentifier": "21NYDECA", "organizationName": "New York",
                       "organizationTypeText": "State", "actions": actions}], "count": 1}


def permits_layer(reference):
    """``permits.gpkg``: the sites on file for ``swppp screen`` (one polygon per permit): the
    demo parcel, a parcel up the same HUC-12, and one in Example Brook's HUC-12 (in its derived
    TMDL watershed)."""
    return frame([
        {"permit_id": "P-001", "name": "Forest Road Commons", "geometry": site_boundary_geom()},
        {"permit_id": "P-002", "name": "Seven Springs Lane lots",
         "geometry": poly((-2200, -1600), (-1800, -1600), (-1800, -1250), (-2200, -1250))},
        {"permit_id": "P-003", "name": "Example Brook Road warehouse",
         "geometry": poly((3600, -900), (4100, -900), (4100, -500), (3600, -500))},
    ])


def write_reference_sources(outdir, reference):
    folder = outdir / "reference_sources"
    folder.mkdir(parents=True, exist_ok=True)
    write_nwi_zip(folder, reference)
    (folder / "attains_tmdl_actions.json").write_text(
        json.dumps(attains_tmdl_actions(), indent=1) + "\n", encoding="utf-8")
    write_gpkg(folder / "waters.gpkg", {"waters": reference_source_waters()})
    write_gpkg(folder / "tmdl_watersheds.gpkg", {"watersheds": reference_source_watersheds()})
    write_gpkg(folder / "wbd_huc12.gpkg", {"wbdhu12": reference_source_huc12()})
    for cycle in PWL_LISTS:
        (folder / f"pwl_{cycle}.csv").write_text(pwl_csv(cycle), encoding="utf-8")
        (folder / f"attains_assessments_{cycle}.json").write_text(
            json.dumps(attains_assessments(cycle), indent=1) + "\n", encoding="utf-8")
    for name, text in (("nwi_mapping.toml", NWI_MAPPING), ("wbd_mapping.toml", WBD_MAPPING),
                       ("pwl_geometry_mapping.toml", PWL_GEOMETRY_MAPPING),
                       ("pwl_units_mapping.toml", PWL_UNITS_MAPPING)):
        (folder / name).write_text(text, encoding="utf-8")


# --- construction-phase records (CSV and TOML, beside the demo) ------------------------

RECORDS_START, RECORDS_END = "2027-04-01", "2027-11-15"  # the demo's first start, last stabilisation
# Weekly reports from the start; the one due 2027-05-06 came on 2027-05-08 (2 days late).
RECORDS_LATE_WEEKLY = ("2027-05-06", "2027-05-08")
# Storms (inches): answered next day; a two-day storm never answered; under the threshold.
RECORDS_RAIN = {"2027-04-20": 0.62, "2027-06-08": 0.30, "2027-06-09": 0.35, "2027-07-15": 0.49,
                "2027-08-02": 0.12, "2027-09-14": 0.25}
RECORDS_EXTRA_REPORTS = {"2027-04-21": "storm"}
GHCN_STATIONS = (("USC00309991", "FOREST ROAD DEMO, NY US"), ("USC00309992", "SEVEN SPRINGS DEMO, NY US"))


def _days(first, last):
    from datetime import date, timedelta
    d0, d1 = date.fromisoformat(first), date.fromisoformat(last)
    return [(d0 + timedelta(n)).isoformat() for n in range((d1 - d0).days + 1)]


def _csv(header, rows, quote_all=False):
    import csv
    import io
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n",
                        quoting=csv.QUOTE_ALL if quote_all else csv.QUOTE_MINIMAL)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def inspection_log_rows():
    from datetime import date, timedelta
    start, end = date.fromisoformat(RECORDS_START), date.fromisoformat(RECORDS_END)
    rows, day = [], start
    while day <= end:
        if day.isoformat() == RECORDS_LATE_WEEKLY[0]:
            day = date.fromisoformat(RECORDS_LATE_WEEKLY[1])
        rows.append((f"{day.isoformat()} 09:00", "M. Weiss", "routine"))
        day += timedelta(days=7)
    rows += [(f"{d} 08:30", "M. Weiss", kind) for d, kind in RECORDS_EXTRA_REPORTS.items()]
    return sorted(rows)


def ghcn_rows():
    """GHCN-Daily as NOAA's CDO exports it (standard units: inches), two stations, quoted.

    Station 1 is the demo's rain, with 2027-08-02 blank (missing), 2027-09-14 quality-flagged
    ("I", failed the internal consistency check) and 2027-05-03 a trace (flag T, value 0.00).
    Station 2 has twice the rain (a second gauge the user must choose against).
    """
    rows = []
    for (station, name), factor in zip(GHCN_STATIONS, (1, 2)):
        for day in _days(RECORDS_START, RECORDS_END):
            value, attributes = RECORDS_RAIN.get(day, 0.0) * factor, ",,7,0700"
            if station == GHCN_STATIONS[0][0] and day == "2027-08-02":
                rows.append((station, name, day, "", ""))
                continue
            if station == GHCN_STATIONS[0][0] and day == "2027-09-14":
                attributes = ",I,7,0700"
            if day == "2027-05-03":
                attributes = "T,,7,0700"
            rows.append((station, name, day, f"{value:.2f}", attributes))
    return rows


def records_files():
    """{relative path: text} of the demo's construction-phase records."""
    rain = [(d, f"{RECORDS_RAIN.get(d, 0.0):.2f}") for d in _days(RECORDS_START, RECORDS_END)]
    notices = [
        ("start_of_construction", "2027-04-01 07:00", "2027-03-29 10:00"),
        ("erosion_controls_installed", "2027-04-02 07:00", "2027-03-31 08:00"),  # 47 hours
        ("site_clearing_complete", "2027-04-20 16:00", "2027-04-16 09:00"),
        ("rough_grading_complete", "2027-06-30 16:00", ""),  # never notified
        ("final_grading_complete", "2027-10-15 16:00", "2027-10-12 09:00"),
        ("construction_season_closed", "2027-11-15 16:00", "2027-11-10 09:00"),
        ("final_landscaping_complete", "", ""),
        ("public_landscaping_established", "", ""),
    ]
    traps = [
        ("ST-1", "2027-05-13", "1200", "480", ""),            # 40%
        ("ST-1", "2027-06-17", "1200", "660", "2027-06-18"),  # 55%, cleaned before 06-19
        ("ST-2", "2027-07-08", "800", "400", ""),             # exactly 50%, never cleaned: fail
        ("ST-2", "2027-07-15", "800", "392", ""),             # 49%
    ]
    history = [
        ("Forest Road Commons LLC", "2023-05-01", "civil"),
        ("Forest Road Commons LLC", "2025-09-10", "civil"),
        ("Forest Road Commons LLC", "2021-03-01", "criminal"),
        ("J. Example", "2022-01-15", "criminal"),
    ]
    violation = """# A notice of violation for the demo site (Enforcement C(1)-(5)); `swppp nov` writes it.
notice_id = "NOV-2027-014"
issued_on = 2027-06-14
issued_by = "Stormwater Management Administrator, Village of Kiryas Joel"

[recipient]  # C(1)
name = "Forest Road Commons LLC <Attn: J. Example & Partners>"
address = "1 Forest Road, Kiryas Joel, NY 10950"

[property]  # C(2)
address = "Forest Road, parcel 1-1-23.4"
description = "Phase 2 disturbance (D-3, D-4) east of the detention basin"

[violation]  # C(3)
nature = "No inspection report within 24 hours of the storm of 8-9 June 2027 (0.65 inch)."
sections = ["Maintenance and repair A(2)"]

[remedy]  # C(4)
measures = "Inspect every erosion and sediment control practice, repair the silt fence along the east line, and deliver the report to the Stormwater Management Administrator."
complete_by = 2027-06-16

[penalties]  # C(5)
kinds = ["civil"]
offence_number = 3
"""
    return {
        "records/inspection_log.csv": _csv(("date", "inspector", "kind"), inspection_log_rows()),
        "records/rain.csv": _csv(("date", "precip_in"), rain),
        "records/rain_ghcn.csv": _csv(("STATION", "NAME", "DATE", "PRCP", "PRCP_ATTRIBUTES"),
                                      ghcn_rows(), quote_all=True),
        "records/notices.csv": _csv(("milestone", "milestone_at", "notified_at"), notices),
        "records/traps.csv": _csv(("trap_id", "date", "design_capacity_cf", "sediment_cf",
                                   "cleaned_on"), traps),
        "records/history.csv": _csv(("person", "date", "kind"), history),
        "records/violation.toml": violation,
    }


def write_records(outdir):
    for relative, text in records_files().items():
        path = Path(outdir) / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")



# --- the SWPPP contents checklist (issue 11): ESC practices, submissions, certifications,
# guarantees; variants of a plan that provides every item -----------------------------------

FIELD_TYPES.update({"length_ft": "float", "drainage_area_acres": "float", "amount": "float"})
CONTENTS_SUBMITTED = {  # checklist items no map can show -> the applicant's document for each
    "B(5)": "SWPPP report, section 4.1", "B(6)": "SWPPP report, section 4.2",
    "B(9)": "Sheet C-501 ESC details", "B(12)": "SWPPP report, section 5 (ESC maintenance)",
    "B(14)": "SWPPP report, section 2 (responsibilities)", "B(15)": "Sheet C-102 Grading",
    "B(16)": "SWPPP report, appendix B (existing runoff data)",
    "D(6)": "Sheet C-502 SMP details", "D(7)": "SWPPP report, section 6 (SMP maintenance)",
    "E": "SWPPP cover sheet, PE certification (NY PE 012345)",
    "F": "SWPPP report, section 7 (NYSDEC permits)", "H": "SWPPP report, section 8",
    "Maintenance D": "Maintenance declaration, Orange County Clerk Liber 1250 Page 77",
    "Inspections A(2)": "As-built plans (due after final construction)",
}
CONTRACTORS = [
    {"name": "A. Builder", "title": "Project manager", "firm_address": "10 Main St, Monroe, NY",
     "phone": "845-555-0101", "site_address": "51 Forest Road, Kiryas Joel, NY 10950",
     "signed_on": "2027-03-25"},
    {"name": "B. Digger", "title": "Owner", "firm_address": "3 Quarry Rd, Chester, NY",
     "phone": "845-555-0177", "site_address": "Forest Road Commons, parcel 1-1-23.4",
     "signed_on": "2027-04-01"},  # the day work starts: in time
]
COMPLETION = "2027-11-15"  # the demo's last stabilisation: final acceptance, substantial completion


def esc_practice_frame():
    """Temporary, converted and permanent ESC practices as lines; length_ft is each line's."""
    items = [("silt fence", "36 in high, wire-backed", "temporary", 2.1, "2027-04-01",
              "2027-11-15", line((20, 30), (700, 30))),
             ("stabilized construction entrance", "20 ft x 50 ft, 2 in stone", "temporary", None,
              "2027-04-01", "2027-11-15", line((40, 0), (40, 50))),
             ("diversion swale", "2 ft deep, 6 ft bottom", "converted", 1.4, "2027-04-05",
              "2027-09-01", line((380, 560), (380, 260))),
             ("riprap outlet protection", "d50 6 in, 10 ft wide", "permanent", None, "2027-10-15",
              None, line((190, 570), (190, 590)))]
    return frame([{"practice": p, "size": size, "length_ft": g.length, "drainage_area_acres": da,
                   "stage": stage, "install_by": install, "remove_after": remove, "geometry": g}
                  for p, size, stage, da, install, remove, g in items])


def contents_complete(demo):
    """The demo providing every checklist item: every easement recorded, ESC practices,
    submissions, two contractor certifications and both guarantees."""
    layers = dict(demo)
    layers["easement"] = demo["easement"].assign(recorded=1, instrument=[
        "Liber 1234 Page 56", "Liber 1234 Page 57", "Doc 2026-000123"])
    layers["esc_practice"] = esc_practice_frame()
    layers["submission"] = pd.DataFrame(
        [{"item": item, "document": doc, "note": None} for item, doc in CONTENTS_SUBMITTED.items()])
    layers["contractor_certification"] = pd.DataFrame(CONTRACTORS)
    layers["guarantee"] = pd.DataFrame([
        {"kind": "letter_of_credit", "amount": 250000.0, "starts_on": "2027-03-15",
         "ends_on": "2028-11-15", "covers": "construction", "estimated_cost": None},
        # E(2): the bond covers the estimated cost of maintaining the system for five years
        {"kind": "bond", "amount": 120000.0, "starts_on": "2027-03-15",
         "ends_on": "2032-11-15", "covers": "maintenance", "estimated_cost": 100000.0}])
    return layers


def contents_variants():
    """(file name, builder(demo) -> layers, expected disturbed acres) of the checklist's tests."""
    def changed(layer, **fields):
        def build(demo):
            layers = contents_complete(demo)
            frame_ = layers[layer].copy()
            for name, (row, value) in fields.items():
                frame_.loc[frame_.index[row], name] = value
            layers[layer] = frame_
            return layers
        return build

    def no_soils_or_receiving_waters(demo):
        layers = without_layer(without_layer(contents_complete(demo), "soils"), "discharge_point")
        layers["project"] = layers["project"].assign(receiving_waters=None)
        return layers

    return [
        ("contents_complete.gpkg", contents_complete, TOTAL_ACRES),
        ("contents_no_soils_receiving_waters.gpkg", no_soils_or_receiving_waters, TOTAL_ACRES),
        ("contents_no_phone.gpkg", changed("contractor_certification", phone=(1, None)),
         TOTAL_ACRES),
        ("contents_bond_four_years.gpkg", changed("guarantee", ends_on=(1, "2031-11-15")),
         TOTAL_ACRES),
    ]


def checklist_files():
    """{relative path: text}: reviewer confirmations, one note carrying markup."""
    confirmations = {"format": "swppp-checklist-confirmations", "version": 1, "confirmations": [
        {"item": "B(5)", "reviewer": "R. Levi", "date": "2027-03-02",
         "note": "Litter & chemicals: report 4.1 <script>alert('x')</script> <b>ok</b>"},
        {"item": "H", "reviewer": "R. Levi", "date": "2027-03-02",
         "note": "Copy kept in the site trailer"}]}
    return {"checklist/confirmations.json": json.dumps(confirmations, indent=2) + "\n"}

# --- the engineer's CAD path: a DXF of phase boundaries and its schedule (README, docs/CLI.md) --

CAD_PHASES = (("1", 3.1, 0.0, "2027-04-01", "2027-07-01"), ("2", 3.1, 2000.0, "2027-05-01", "2027-08-01"))


def write_cad(folder):
    """``cad/plan.dxf`` (each phase's boundary a closed polyline on CAD layer C-PHAS-n, beside a
    C-ANNO-TEXT point, as a CAD export has; no CRS: a drawing has none), and its schedule as
    ``cad/schedule.csv`` and ``cad/schedule.xlsx`` (true date cells). Two 3.1-acre phases open
    together in May and June: 6.2 acres at once, over the five-acre limit, so the proposal
    delays phase 2 until phase 1 is stabilised."""
    import zipfile
    from datetime import date, datetime

    from openpyxl import Workbook

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    side = math.sqrt(ACRE_SQFT)
    boundaries = [box(X0 + dx, Y0, X0 + dx + side * math.sqrt(acres), Y0 + side * math.sqrt(acres))
                  for _, acres, dx, _, _ in CAD_PHASES]
    frame = gpd.GeoDataFrame({"Layer": [f"C-PHAS-{p[0]}" for p in CAD_PHASES] + ["C-ANNO-TEXT"]},
                             geometry=[b.exterior for b in boundaries] + [Point(X0, Y0)])
    frame.to_file(folder / "plan.dxf", driver="DXF")
    rows = [("phase", "start", "stabilized")] + [(p[0], p[3], p[4]) for p in CAD_PHASES]
    (folder / "schedule.csv").write_text("".join(",".join(r) + "\r\n" for r in rows), encoding="utf-8")
    book = Workbook()
    sheet = book.active
    sheet.title = "Schedule"
    for r, row in enumerate(rows, start=1):
        for c, value in enumerate(row, start=1):
            cell = sheet.cell(r, c, value if r == 1 or c == 1 else date.fromisoformat(value))
            if r > 1 and c > 1:
                cell.number_format = "yyyy-mm-dd"
    book.properties.created = book.properties.modified = datetime(2026, 1, 1)
    written = folder / "schedule.xlsx"
    book.save(written)
    # The same bytes every run: the zip's entries dated as the GeoPackages are.
    with zipfile.ZipFile(written) as archive:
        entries = [(i.filename, archive.read(i)) for i in archive.infolist()]
    with zipfile.ZipFile(written, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(zipfile.ZipInfo(name, (2026, 1, 1, 0, 0, 0)), data,
                             zipfile.ZIP_DEFLATED)


def main(outdir):
    outdir = Path(outdir)
    demo = demo_site_layers()
    reference = demo_reference_layers(demo)
    check_demo(demo, reference)
    files = [(outdir / "demo_site.gpkg", demo, TOTAL_ACRES),
             (outdir / "demo_site_round2.gpkg", demo_round2_layers(), TOTAL_ACRES),
             (outdir / "demo_reference.gpkg", reference, None)]
    files += [(outdir / "variants" / name, build(demo), acres) for name, build, acres in VARIANTS]
    files += [(outdir / "variants" / name, build(reference), None)
              for name, build in REFERENCE_VARIANTS]
    files += [(outdir / "variants" / name, build(demo), acres)
              for name, build, acres in contents_variants()]
    for path, layers, _ in files:
        write_gpkg(path, layers)
    for path, layers, acres in files:
        check_file(path, layers, acres)
    write_reference_sources(outdir, reference)
    write_gpkg(outdir / "permits.gpkg", {"permits": permits_layer(reference)})
    write_records(outdir)
    for relative, text in checklist_files().items():
        (outdir / relative).parent.mkdir(parents=True, exist_ok=True)
        (outdir / relative).write_text(text, encoding="utf-8")
    write_sheets(outdir / "sheets")
    check_sheets(outdir / "sheets")
    write_cad(outdir / "cad")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent)
