#!/usr/bin/env bash
# A screenshot of QGIS under Xvfb: the demo site plan, the SWPPP Review panel after a run, its
# findings list and the styled result layers: build/screenshots/qgis_review.png (the run's
# results in build/screenshots/results/).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
bash scripts/package.sh >/dev/null
mkdir -p build/screenshots
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -rf build/screenshots/results build/screenshots/qgis_review*.png build/screenshots/qgis_review.json
# Under Xvfb: a real X display (test.sh exports QT_QPA_PLATFORM=offscreen for the tests).
SWPPP_SITE="$ROOT/test_data/demo_site.gpkg" SWPPP_REFERENCE="$ROOT/test_data/demo_reference.gpkg" \
SWPPP_RESULTS="$ROOT/build/screenshots/results" \
SWPPP_SCREENSHOT="$ROOT/build/screenshots/qgis_review.png" QGIS_PLUGINPATH="$ROOT/build" \
PYTHONPATH="$(.venv/qgis/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  env -u QT_QPA_PLATFORM timeout 150 xvfb-run -a -s "-screen 0 1600x1000x24" \
  qgis --nologo --noversioncheck --profiles-path "$profile" --code scripts/qgis_screenshot.py \
  >/dev/null 2>&1 || true
ls -l build/screenshots/qgis_review.png build/screenshots/qgis_review_inputs.png
# The run from the panel must have finished with its findings listed and its layers loaded.
.venv/qgis/bin/python - build/screenshots/qgis_review.json <<'PY'
import json, sys
shown = json.load(open(sys.argv[1], encoding="utf-8"))
print("panel:", shown.get("status", "no run finished"))
ok = shown["ok"] and shown["findings"] > 0 and "findings" in shown["layers"]
sys.exit(0 if ok else 1)
PY
