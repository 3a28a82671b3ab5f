"""What the plugin tells a user whose Python lacks something, or mixes two GEOS libraries."""
import pytest

from analysis.dependencies import geos_conflict, missing


def test_nothing_missing_here():
    assert missing() == []


@pytest.mark.parametrize("shapely_version, shapely_geos, host_geos, conflict", [
    ("2.2.0", (3, 14, 1), (3, 11, 1), True),   # pip's newest shapely in Debian 12's QGIS
    ("2.1.2", (3, 13, 1), (3, 11, 1), True),
    ("2.0.7", (3, 11, 4), (3, 11, 1), False),  # same minor: every call finds QGIS's GEOS
    ("2.0.7", (3, 11, 4), (3, 12, 0), False),
])
def test_a_shapely_built_for_a_newer_geos_than_qgis_is_refused(shapely_version, shapely_geos,
                                                                 host_geos, conflict):
    message = geos_conflict(shapely_version, shapely_geos, host_geos)
    assert (message is not None) is conflict
    if conflict:
        assert shapely_version in message and "shapely>=2,<2.1" in message
