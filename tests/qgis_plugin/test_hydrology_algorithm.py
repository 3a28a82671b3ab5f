"""``swppp:hydrology`` run through Processing: layers or an NLCD raster in, CN layer and table out."""

import csv

import numpy as np
import pytest
from qgis.core import QgsProcessingException

pytestmark = [pytest.mark.qgis, pytest.mark.usefixtures("swppp_plugin")]

ROLES = ("drainage_area", "soils", "land_cover_pre", "land_cover_post", "hydrology_claims")


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def run(parameters):
    import processing

    return processing.run("swppp:hydrology", parameters)


def test_hydrology_from_the_demo_site_writes_the_cn_layer_and_the_table(data_copy, tmp_path, load_layer):
    outputs = {"OUTPUT_CN": str(tmp_path / "cn.gpkg"), "OUTPUT_TABLE": str(tmp_path / "t.csv")}
    results = run({"SITE": str(data_copy("demo_site.gpkg")), **outputs})
    assert results["OUTPUT_CN"] == outputs["OUTPUT_CN"]
    assert results["WARN_COUNT"] == 4 and results["NEEDS_REVIEW_COUNT"] >= 3
    rows = read_csv(outputs["OUTPUT_TABLE"])
    assert [(r["drainage_area"], r["storm"]) for r in rows][:3] == [
        ("DA-1", "1-year"),
        ("DA-1", "10-year"),
        ("DA-1", "100-year"),
    ]
    assert len(rows) == 6 and all(float(r["post_peak_cfs"]) > 0 for r in rows)
    layer = load_layer(outputs["OUTPUT_CN"], "curve_numbers")
    assert layer.featureCount() > 0
    values = {f["cn"] for f in layer.getFeatures()}
    assert {55.0, 92.0} <= values  # woods good / commercial on B soil


def test_hydrology_from_project_layers_and_an_nlcd_raster(data_copy, tmp_path, load_layer):
    rasterio = pytest.importorskip("rasterio")
    from rasterio.transform import from_origin

    site = data_copy("demo_site.gpkg")
    raster = tmp_path / "nlcd_pre.tif"  # the whole parcel deciduous forest (NLCD 41)
    with rasterio.open(
        raster,
        "w",
        driver="GTiff",
        width=90,
        height=80,
        count=1,
        dtype="uint8",
        crs="EPSG:2260",
        transform=from_origin(582737.0 - 50, 913239.0 + 700, 10, 10),
        nodata=0,
    ) as dst:
        dst.write(np.full((80, 90), 41, dtype="uint8"), 1)
    layers = {
        f"{role.upper()}_LAYER": load_layer(site, role)
        for role in ("drainage_area", "soils", "land_cover_post")
    }
    table = tmp_path / "t.csv"
    run(
        {
            **layers,
            "LAND_COVER_PRE_RASTER": str(raster),
            "OUTPUT_TABLE": str(table),
            "OUTPUT_CN": str(tmp_path / "cn.gpkg"),
        }
    )
    rows = read_csv(table)
    assert len(rows) == 6
    # NLCD 41 maps to woods in good condition, the cover the demo's pre layer gives all of DA-1.
    run({"SITE": str(site), "OUTPUT_TABLE": str(tmp_path / "layers.csv")})
    ours = {r["storm"]: float(r["pre_cn"]) for r in rows if r["drainage_area"] == "DA-1"}
    theirs = {
        r["storm"]: float(r["pre_cn"])
        for r in read_csv(tmp_path / "layers.csv")
        if r["drainage_area"] == "DA-1"
    }
    assert ours == pytest.approx(theirs, abs=1e-6)


def test_hydrology_refuses_an_unknown_cover_key_naming_it(data_copy, tmp_path):
    from osgeo import ogr

    site = data_copy("demo_site.gpkg")
    source = ogr.Open(str(site), 1)
    layer = source.GetLayerByName("land_cover_post")
    feature = layer.GetFeature(1)
    feature.SetField("cover", "parking_lot")
    layer.SetFeature(feature)
    source = layer = feature = None  # closes the GeoPackage
    with pytest.raises(
        QgsProcessingException, match="parking_lot.*land_cover_post|land_cover_post.*parking_lot"
    ):
        run({"SITE": str(site), "OUTPUT_TABLE": str(tmp_path / "t.csv")})
    assert not (tmp_path / "t.csv").exists()
