#!/usr/bin/env bash
# A screenshot of QGIS under Xvfb: the demo site plan, the review dialog after Run, and the
# findings layer it loaded: build/screenshots/qgis_review.png (findings in build/screenshots/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
bash scripts/package.sh >/dev/null
mkdir -p build/screenshots
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
SWPPP_SITE="$ROOT/test_data/demo_site.gpkg" SWPPP_FINDINGS="$ROOT/build/screenshots/findings.gpkg" \
SWPPP_SCREENSHOT="$ROOT/build/screenshots/qgis_review.png" QGIS_PLUGINPATH="$ROOT/build" \
PYTHONPATH="$(.venv/qgis/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  timeout 120 xvfb-run -a -s "-screen 0 1600x1000x24" \
  qgis --nologo --noversioncheck --profiles-path "$profile" --code scripts/qgis_screenshot.py \
  >/dev/null 2>&1 || true
ls -l build/screenshots/qgis_review.png
