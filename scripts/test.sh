#!/usr/bin/env bash
# The whole test suite: the analysis on both stacks (QGIS's Debian stack and current PyPI),
# the plugin inside real QGIS (pytest-qgis, headless) and under qgis_process.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
export QT_QPA_PLATFORM=offscreen
bash scripts/package.sh >/dev/null
echo "== tests on QGIS's Python (Debian geopandas 0.12 + fiona, QGIS 3.22) =="
.venv/qgis/bin/python -m pytest -p no:cacheprovider "$@"
echo "== analysis tests on current PyPI releases (geopandas 1.x + pyogrio) =="
.venv/plain/bin/python -m pytest -p no:cacheprovider -p no:qgis tests/analysis "$@"
