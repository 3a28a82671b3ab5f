#!/usr/bin/env bash
# Stages the QGIS plugin folder build/swppp_review/ (qgis_plugin/* + metadata.txt + analysis/ +
# LICENSE) and zips it to build/swppp_review.zip, the file "Install from ZIP" takes. The QGIS
# tests and the qgis_process smoke test load this staged folder, so what is tested is what ships.
# Prints the zip's path.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
STAGE="$BUILD/swppp_review"
ZIP="$BUILD/swppp_review.zip"

rm -rf "$STAGE" "$ZIP"
mkdir -p "$STAGE"
cp -R "$ROOT/qgis_plugin/." "$STAGE/"
cp "$ROOT/metadata.txt" "$STAGE/"
cp -R "$ROOT/analysis" "$STAGE/analysis"
[ -f "$ROOT/LICENSE" ] && cp "$ROOT/LICENSE" "$STAGE/"
# Byte code and caches are the builder's, not the plugin's.
find "$STAGE" \( -name __pycache__ -o -name '*.egg-info' -o -name .pytest_cache \) -prune \
  -exec rm -rf {} +
find "$STAGE" -name '*.py[co]' -delete

# The folder swppp_review/ at the zip's root; the standard library's zipfile, so no extra tool.
/usr/bin/env python3 - "$STAGE" "$ZIP" <<'PY'
import os
import sys
import zipfile

stage, target = sys.argv[1], sys.argv[2]
root = os.path.dirname(stage)
with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
    for folder, dirs, files in os.walk(stage):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(folder, name)
            archive.write(path, os.path.relpath(path, root))
PY
echo "$ZIP"
