"""What the plugin tells a user whose Python lacks something, or mixes two GEOS libraries."""

import pytest

from analysis.dependencies import SHAPELY_WHEEL_GEOS, geos_conflict, missing, needs, shapely_spec


def test_nothing_missing_here():
    assert missing() == []


@pytest.mark.parametrize(
    "shapely_version, shapely_geos, host_geos, conflict",
    [
        ("2.2.0", (3, 14, 1), (3, 11, 1), True),  # pip's newest shapely in Debian 12's QGIS
        ("2.1.2", (3, 13, 1), (3, 11, 1), True),
        ("2.0.7", (3, 11, 4), (3, 11, 1), False),  # same minor: every call finds QGIS's GEOS
        ("2.0.7", (3, 11, 4), (3, 12, 0), False),
    ],
)
def test_a_shapely_built_for_a_newer_geos_than_qgis_is_refused(
    shapely_version, shapely_geos, host_geos, conflict
):
    message = geos_conflict(shapely_version, shapely_geos, host_geos)
    assert (message is not None) is conflict
    if conflict:
        assert shapely_version in message and "shapely>=2,<2.1" in message


@pytest.mark.parametrize("host_geos", [(3, 9), (3, 10), (3, 11), (3, 12), (3, 13), (3, 14), (3, 15), (4, 0)])
def test_the_shapely_to_install_never_admits_a_wheel_built_for_a_newer_geos(host_geos):
    spec = shapely_spec(host_geos)
    admitted = [
        release for release in SHAPELY_WHEEL_GEOS if spec and release >= (2, 0) and release < _upper(spec)
    ]
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


# One list -------------------------------------------------------------------------------------


def test_pyproject_and_the_check_read_one_list():
    """pyproject.toml takes its dependencies from the file the plugin's check reads, and the
    installed distribution (pip install -e . in every venv of scripts/setup.sh) declares them."""
    from importlib.metadata import requires
    from pathlib import Path

    from analysis.dependencies import REQUIREMENTS_FILE, read_requirements
    from analysis.profile import tomllib

    root = Path(__file__).resolve().parents[2]
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    assert "dependencies" in pyproject["project"]["dynamic"]
    assert "dependencies" not in pyproject["project"]  # no second list
    files = pyproject["tool"]["setuptools"]["dynamic"]["dependencies"]["file"]
    assert [(root / f).resolve() for f in files] == [REQUIREMENTS_FILE.resolve()]
    assert "data/requirements.txt" in pyproject["tool"]["setuptools"]["package-data"]["analysis"]

    declared = [r for r in requires("swppp-review") if "extra ==" not in r]
    normalised = sorted(r.replace(" ", "").replace('"', "'") for r in declared)
    listed = sorted(r.text.replace(" ", "").replace('"', "'") for r in read_requirements())
    assert normalised == listed


def test_tomli_is_declared_where_python_lacks_tomllib():
    from analysis.dependencies import read_requirements

    def tomli(python):
        return [r for r in read_requirements(python=python) if r.name == "tomli" and r.applies]

    assert tomli((3, 9)) and tomli((3, 10))
    assert not tomli((3, 11)) and not tomli((3, 14))


def test_every_requirement_is_checked_or_said_optional():
    from analysis.dependencies import OPTIONAL, REQUIREMENTS, read_requirements

    names = {r.name for r in read_requirements()}
    assert names >= OPTIONAL
    assert {"shapely", "geopandas", "pyproj", "numpy", "pandas"} <= set(REQUIREMENTS)
    assert REQUIREMENTS["shapely"] == ("shapely", "2.0")


# Versions that say nothing ------------------------------------------------------------------


def test_a_shapely_of_unknown_version_that_works_as_shapely_2_is_accepted(monkeypatch):
    """Debian testing's shapely reports "0+unknown": the real shapely here, so reported."""
    import shapely

    from analysis.dependencies import needs, shapely_2_api

    monkeypatch.setattr(shapely, "__version__", "0+unknown")
    assert shapely_2_api() is None
    assert [n for n in needs() if n.name == "shapely"] == []
    host = tuple(shapely.geos_version[:2])  # a QGIS linking the very GEOS this shapely uses
    assert [n for n in needs(host_geos=host) if n.name == "shapely"] == []


def test_a_shapely_of_unknown_version_without_shapely_2_calls_is_refused(tmp_path):
    """A shapely saying "0+unknown" that is not shapely 2 (here one with shapely 1's API only:
    no vectorised functions) is named, with the requirement that fixes it."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    fake = tmp_path / "shapely"
    fake.mkdir()
    (fake / "__init__.py").write_text(
        "__version__ = '0+unknown'\ngeos_version = (3, 11, 1)\n"
        "class STRtree:\n    def __init__(self, geoms):\n        self.geoms = list(geoms)\n",
        encoding="utf-8",
    )
    info = tmp_path / "shapely-0+unknown.dist-info"  # as a distribution's build records it
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: shapely\nVersion: 0+unknown\n", encoding="utf-8"
    )
    root = Path(__file__).resolve().parents[2]
    completed = subprocess.run(
        [
            sys.executable,
            "-c",
            "import dataclasses, json, sys\n"
            f"sys.path[:0] = [{str(tmp_path)!r}, {str(root)!r}]\n"
            "from analysis.dependencies import needs\n"
            "print(json.dumps([dataclasses.asdict(n) for n in needs((3, 11))]))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    found = {n["name"]: n for n in json.loads(completed.stdout)}
    assert found["shapely"]["problem"].startswith("shapely 2 (found shapely 0+unknown: ")
    assert found["shapely"]["spec"] == "shapely>=2,<2.1"
