"""What the plugin tells a user whose Python lacks something, or mixes two GEOS libraries."""
import pytest

from analysis.dependencies import SHAPELY_WHEEL_GEOS, geos_conflict, missing, needs, shapely_spec


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


@pytest.mark.parametrize("host_geos", [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14),
                                       (3, 15), (4, 0)])
def test_the_shapely_to_install_never_admits_a_wheel_built_for_a_newer_geos(host_geos):
    spec = shapely_spec(host_geos)
    admitted = [release for release in SHAPELY_WHEEL_GEOS
                if spec and release >= (2, 0) and release < _upper(spec)]
    assert all(SHAPELY_WHEEL_GEOS[release] <= host_geos for release in admitted)
    fitting = [r for r, geos in SHAPELY_WHEEL_GEOS.items() if geos <= host_geos]
    assert sorted(admitted) == sorted(fitting)  # and no fitting release is left out
    assert (spec is None) is (not fitting)


def test_what_is_missing_comes_with_the_pip_requirement_that_fixes_it():
    assert needs() == [] and needs(host_geos=None) == []
    conflict = geos_conflict("2.1.2", (3, 13, 1), (3, 10, 0))
    assert "no PyPI wheel fits" in conflict


def _upper(spec):
    """The exclusive upper bound of ``shapely>=2,<2.N`` as (2, N)."""
    bound = spec.split("<")[1] if "<" in spec else "99.0"
    major, minor = bound.split(".")
    return (int(major), int(minor))
