#!/usr/bin/env bash
# A screenshot of QGIS under Xvfb: the demo site plan, the SWPPP Review panel after a run, its
# findings list and the styled result layers: build/screenshots/qgis_review_<release>.png (the
# run's results in build/screenshots/results_<release>/); <release> is 3.22 (this machine's QGIS),
# or 3.40, 3.44 inside their root filesystems (scripts/test.sh --qgis).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
cd "$ROOT"
bash scripts/package.sh >/dev/null
mkdir -p build/screenshots
release="${SWPPP_QGIS_RELEASE:-3.22}"
shot="build/screenshots/qgis_review_$release"
results="build/screenshots/results_$release"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
rm -rf "$results" "$shot.png" "${shot}_inputs.png" "${shot}_checklist.png" "$shot.json" "$shot.log"
# Under Xvfb: a real X display (test.sh exports QT_QPA_PLATFORM=offscreen for the tests).
SWPPP_SITE="$ROOT/test_data/demo_site.gpkg" SWPPP_REFERENCE="$ROOT/test_data/demo_reference.gpkg" \
SWPPP_RESULTS="$ROOT/$results" \
SWPPP_SCREENSHOT="$ROOT/$shot.png" QGIS_PLUGINPATH="$ROOT/build" \
PYTHONPATH="$("$QGIS_VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" \
  env -u QT_QPA_PLATFORM timeout 150 xvfb-run -a -s "-screen 0 1600x1000x24" \
  qgis --nologo --noversioncheck --profiles-path "$profile" --code scripts/qgis_screenshot.py \
  >"$shot.log" 2>&1 || true  # QGIS's own output, for when it goes wrong
ls -l "$shot.png" "${shot}_inputs.png" "${shot}_checklist.png"
# The run from the panel must have finished with its findings listed and its layers loaded.
# Into the results folder chosen in the panel: the panel's settings took effect.
"$QGIS_VENV/bin/python" - "$shot.json" "$ROOT/$results" <<'PY'
import json, sys
shown = json.load(open(sys.argv[1], encoding="utf-8"))
print("panel:", shown.get("status", "no run finished"))
if "seconds" in shown:  # issue 37: what a reviewer waits, from the button to the findings
    print(f"panel: {shown['seconds']:.2f} s from Run review pressed to the findings listed")
ok = shown["ok"] and shown["findings"] > 0 and "findings" in shown["layers"]
ok = ok and f"Results in {sys.argv[2]}" in shown["status"]
sys.exit(0 if ok else 1)
PY
