"""The screen's sites: a file of several layers with geometry is not read by guessing one."""

from __future__ import annotations

import geopandas as gpd
import pytest
from shapely import box

from analysis.errors import InputError
from analysis.io.vector import write_geopackage
from analysis.screen.sites import read_sites
from tests.analysis.conftest import X0, Y0

SQUARE = box(X0, Y0, X0 + 300, Y0 + 300)


def test_two_layers_with_geometry_are_refused_unless_one_is_named(tmp_path):
    path = tmp_path / "parcels.gpkg"
    write_geopackage(
        path,
        {
            "buildings": gpd.GeoDataFrame({"id": ["B-1"]}, geometry=[SQUARE], crs="EPSG:2260"),
            "parcels": gpd.GeoDataFrame(
                {"parcel_id": ["P-1", "P-2"]}, geometry=[SQUARE, SQUARE.buffer(10)], crs="EPSG:2260"
            ),
            "owners": gpd.pd.DataFrame({"parcel_id": ["P-1"], "owner": ["A"]}),
        },
    )
    with pytest.raises(
        InputError,
        match=r"parcels\.gpkg: the file has 2 layers with geometry "
        r"\(buildings, parcels\).*Fix: name the layer",
    ):
        read_sites(path, "EPSG:2260")
    assert list(read_sites(path, "EPSG:2260", layer="parcels").ids) == ["P-1", "P-2"]


def test_one_layer_with_geometry_beside_tables_is_read(tmp_path):
    path = tmp_path / "parcels.gpkg"
    write_geopackage(
        path,
        {
            "owners": gpd.pd.DataFrame({"parcel_id": ["P-1"], "owner": ["A"]}),
            "parcels": gpd.GeoDataFrame({"parcel_id": ["P-1"]}, geometry=[SQUARE], crs="EPSG:2260"),
        },
    )
    sites = read_sites(path, "EPSG:2260")
    assert (sites.layer, list(sites.ids)) == ("parcels", ["P-1"])
