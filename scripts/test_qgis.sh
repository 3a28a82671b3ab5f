#!/usr/bin/env bash
# The test suite of one QGIS release, on the system it runs in: this machine's QGIS 3.22, or
# (started by scripts/test.sh through scripts/qgis_release.sh) QGIS 3.40 or 3.44 in their Debian
# root filesystems. Each on that release's own Python stack: the analysis tests, the plugin in
# real QGIS (pytest-qgis, headless; qgis_process on the packaged plugin), the review panel under
# Xvfb (build/screenshots/qgis_review_<release>.png). Arguments go to pytest.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
release="${SWPPP_QGIS_RELEASE:-3.22}"
export QT_QPA_PLATFORM=offscreen
export XDG_RUNTIME_DIR="${XDG_RUNTIME_DIR:-$(mktemp -d)}"  # Qt wants one; a headless root shell has none
mkdir -p -m 700 "$XDG_RUNTIME_DIR"
bash scripts/package.sh >/dev/null
python="$QGIS_VENV/bin/python"
stack="$("$python" -c 'import sys, geopandas, shapely
from qgis.core import Qgis
print(f"QGIS {Qgis.QGIS_VERSION.split(chr(45))[0]}, Python {sys.version.split()[0]}, "
      f"geopandas {geopandas.__version__}, shapely {shapely.__version__} "
      f"(GEOS {shapely.geos_version_string}; QGIS: GEOS {Qgis.geosVersion()})")' 2>/dev/null)"
echo "== QGIS $release: $stack =="
failed=()  # each part runs whatever the one before gave; the status says if any failed
echo "== QGIS $release: analysis tests on QGIS's Python =="
# No QGIS needed here (-p no:pytest_qgis), so on both cores (-n auto: pytest-xdist).
"$python" -m pytest -p no:cacheprovider -p no:pytest_qgis -n auto -rs --doctest-modules \
  tests/analysis analysis "$@" \
  || failed+=("analysis tests")
echo "== QGIS $release: plugin tests in real QGIS (pytest-qgis, headless; qgis_process) =="
"$python" -m pytest -p no:cacheprovider -rs tests/qgis_plugin "$@" || failed+=("plugin tests")
echo "== QGIS $release: QGIS under Xvfb with the SWPPP Review panel after a run =="
bash scripts/qgis_screenshot.sh || failed+=("panel screenshot")
if ((${#failed[@]})); then
  echo "== QGIS $release: failed: ${failed[*]} =="
  exit 1
fi
