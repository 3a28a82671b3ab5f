#!/usr/bin/env bash
# The whole test suite: the analysis on both stacks (QGIS's Debian stack and current PyPI),
# the plugin inside real QGIS (pytest-qgis, headless) and under qgis_process.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
export QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"  # Qt wants one; a headless root shell has none
bash scripts/package.sh >/dev/null
echo "== analysis tests on QGIS's Python (Debian geopandas 0.12 + fiona) =="
.venv/qgis/bin/python -m pytest -p no:cacheprovider --doctest-modules tests/analysis analysis "$@"
echo "== plugin tests in real QGIS 3.22 (pytest-qgis, headless; qgis_process) =="
.venv/qgis/bin/python -m pytest -p no:cacheprovider tests/qgis_plugin "$@"
echo "== QGIS under Xvfb with the SWPPP Review panel after a run: build/screenshots/qgis_review.png =="
bash scripts/qgis_screenshot.sh
# Last, so that the run closes on pytest's own summary line.
echo "== analysis tests on current PyPI releases (geopandas 1.x + pyogrio) =="
# No PROJ_DATA here: it is for Debian's pyproj; rasterio's wheel (a newer PROJ) refuses Debian's
# proj.db ("comes from another PROJ installation") and finds its own data when it is unset.
env -u PROJ_DATA .venv/plain/bin/python -m pytest -p no:cacheprovider -W ignore::pytest.PytestConfigWarning \
  --doctest-modules tests/analysis analysis "$@"
