#!/usr/bin/env bash
# Builds the plugin with qgis-plugin-ci (PyPI, in .venv/plain): the zip QGIS's "Install from ZIP"
# takes and a plugin repository QGIS's plugin manager reads (Settings > Add repository), in
# build/repository/ (plugins.xml, plugins.xsl, swppp_review.VERSION.zip). build/swppp_review.zip is
# that zip, and build/swppp_review/ is that zip unpacked: the QGIS tests and the qgis_process smoke
# test load it, so what is tested is what ships. Prints the zip's path.
#
# PLUGIN_REPO_URL (default https://example.org/swppp-review/plugins/) is where the folder
# build/repository/ will be served from: plugins.xml's download URL is it plus the zip's name.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build"
RELEASE="$BUILD/release"      # the tool's working repository (throwaway)
REPOSITORY="$BUILD/repository"
STAGE="$BUILD/swppp_review"
ZIP="$BUILD/swppp_review.zip"
# qgis-plugin-ci: $QGIS_PLUGIN_CI, else the plain venv's (scripts/setup.sh), else one on PATH.
TOOL="${QGIS_PLUGIN_CI:-$ROOT/.venv/plain/bin/qgis-plugin-ci}"
[ -x "$TOOL" ] || TOOL="$(command -v qgis-plugin-ci || echo "$TOOL")"
URL="${PLUGIN_REPO_URL:-https://example.org/swppp-review/plugins/}"
case "$URL" in */) ;; *) URL="$URL/" ;; esac

# scripts/test.sh packages once on this machine, then sets SWPPP_PACKAGE_READY for the QGIS
# releases' root filesystems (no qgis-plugin-ci there): they load that same zip.
if [ -n "${SWPPP_PACKAGE_READY:-}" ] && [ -f "$ZIP" ] && [ -d "$STAGE" ]; then
  echo "$ZIP"
  exit 0
fi
if [ ! -x "$TOOL" ]; then
  echo "package: qgis-plugin-ci is missing ($TOOL); run: bash scripts/setup.sh (it installs" \
    "requirements/plain.txt), or set QGIS_PLUGIN_CI to one" >&2
  exit 2
fi
VERSION="$(sed -n 's/^version=//p' "$ROOT/metadata.txt")"
if [ -z "$VERSION" ]; then
  echo "package: $ROOT/metadata.txt has no version= line; add one, e.g. version=0.1.0" >&2
  exit 2
fi

# The plugin folder as qgis-plugin-ci wants it: one folder with metadata.txt, in a git repository.
rm -rf "$RELEASE" "$REPOSITORY" "$STAGE" "$ZIP"
mkdir -p "$RELEASE/swppp_review" "$REPOSITORY"
cp -R "$ROOT/qgis_plugin/." "$RELEASE/swppp_review/"
cp "$ROOT/metadata.txt" "$RELEASE/swppp_review/"
cp -R "$ROOT/analysis" "$RELEASE/swppp_review/analysis"
[ -f "$ROOT/LICENSE" ] && cp "$ROOT/LICENSE" "$RELEASE/swppp_review/"
cp "$ROOT/packaging/.qgis-plugin-ci" "$RELEASE/"
# Byte code and caches are the builder's, not the plugin's.
find "$RELEASE/swppp_review" \( -name __pycache__ -o -name '*.egg-info' -o -name .pytest_cache \) \
  -prune -exec rm -rf {} +
find "$RELEASE/swppp_review" -name '*.py[co]' -delete
(
  cd "$RELEASE"
  git init -q
  git add -A
  git -c user.name=package.sh -c user.email=package.sh@localhost -c commit.gpgsign=false \
    commit -q -m "swppp_review $VERSION"
  "$TOOL" package "$VERSION" --plugin-repo-url "$URL" --disable-submodule-update >tool.log 2>&1 \
    || { cat tool.log >&2; echo "package: qgis-plugin-ci failed (log above)" >&2; exit 1; }
)
mv "$RELEASE/swppp_review.$VERSION.zip" "$RELEASE/plugins.xml" "$REPOSITORY/"
[ -f "$RELEASE/plugins.xsl" ] && mv "$RELEASE/plugins.xsl" "$REPOSITORY/"
cp "$REPOSITORY/swppp_review.$VERSION.zip" "$ZIP"
# What the tests load is the zip itself, unpacked.
/usr/bin/env python3 -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' \
  "$ZIP" "$BUILD"
rm -rf "$RELEASE"
echo "$ZIP"
