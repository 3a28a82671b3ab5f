#!/usr/bin/env bash
# Builds the plugin with qgis-plugin-ci (PyPI, in .venv/plain): the zip QGIS's "Install from ZIP"
# takes and a plugin repository QGIS's plugin manager reads (Settings > Add repository), in
# build/repository/ (plugins.xml, plugins.xsl, swppp_review.VERSION.zip). build/swppp_review.zip is
# that zip, and build/swppp_review/ is that zip unpacked: the QGIS tests and the qgis_process smoke
# test load it, so what is tested is what ships. Prints the zip's path.
#
# PLUGIN_REPO_URL (default: build/repository/ itself, as a file:// address QGIS reads) is where
# the folder build/repository/ will be served from: plugins.xml's download URL is it plus the
# zip's name.
#
# The plugin's public addresses: metadata.txt carries none (the project publishes none). The QGIS
# plugin repository requires a homepage, tracker and repository URL and an email: give all four,
# SWPPP_HOMEPAGE, SWPPP_TRACKER, SWPPP_REPOSITORY (http(s) URLs) and SWPPP_EMAIL, and they are
# written into the zip's metadata.txt. Without them the zip is for Install from ZIP and a
# village's own plugin repository, not for upload: its three addresses say so
# (https://not-published.invalid/, a name that never resolves), and it has no email.
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
URL="${PLUGIN_REPO_URL:-file://$REPOSITORY/}"
case "$URL" in */) ;; *) URL="$URL/" ;; esac
NOT_PUBLISHED="https://not-published.invalid/"

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
# The addresses come from the environment only, never from metadata.txt (one place each).
if grep -qE '^(homepage|tracker|repository|email)[[:space:]]*=' "$ROOT/metadata.txt"; then
  echo "package: $ROOT/metadata.txt has a homepage=, tracker=, repository= or email= line;" \
    "remove it: package.sh writes them from SWPPP_HOMEPAGE, SWPPP_TRACKER, SWPPP_REPOSITORY" \
    "and SWPPP_EMAIL (docs/QGIS.md)" >&2
  exit 2
fi
# A reserved name (RFC 2606, 6761) is a placeholder, not an address.
_placeholder() { [[ "${1,,}" =~ (^|[.@/])(example\.(com|org|net)|[^/:]*\.(example|test|invalid|localhost)|localhost)([:/]|$) ]]; }
given=() missing=() bad=()
for name in SWPPP_HOMEPAGE SWPPP_TRACKER SWPPP_REPOSITORY SWPPP_EMAIL; do
  if [ -n "${!name:-}" ]; then given+=("$name"); else missing+=("$name"); fi
done
if ((${#given[@]} && ${#missing[@]})); then
  echo "package: ${given[*]} given but not ${missing[*]}: the QGIS plugin repository needs all" \
    "four (homepage, tracker and repository URLs, an email); give them all, or none for a zip" \
    "that is not for upload" >&2
  exit 2
fi
if ((${#given[@]})); then
  for name in SWPPP_HOMEPAGE SWPPP_TRACKER SWPPP_REPOSITORY; do
    [[ "${!name}" =~ ^https?://[^/[:space:]]+(/[^[:space:]]*)?$ ]] && ! _placeholder "${!name}" \
      || bad+=("$name=${!name} (an http(s) URL of a real host)")
  done
  [[ "$SWPPP_EMAIL" =~ ^[^@[:space:]]+@[^@[:space:]]+\.[^@[:space:]]+$ ]] \
    && ! _placeholder "@${SWPPP_EMAIL#*@}" || bad+=("SWPPP_EMAIL=$SWPPP_EMAIL (an email address)")
  if ((${#bad[@]})); then
    printf 'package: not an address the QGIS plugin repository takes: %s\n' "${bad[@]}" >&2
    exit 2
  fi
  ADDRESSES="$(printf 'homepage=%s\ntracker=%s\nrepository=%s\nemail=%s' "$SWPPP_HOMEPAGE" \
    "$SWPPP_TRACKER" "$SWPPP_REPOSITORY" "$SWPPP_EMAIL")"
else
  ADDRESSES="$(printf 'homepage=%s\ntracker=%s\nrepository=%s' "$NOT_PUBLISHED" \
    "$NOT_PUBLISHED" "$NOT_PUBLISHED")"
  echo "package: not for upload to the QGIS plugin repository (no SWPPP_HOMEPAGE," \
    "SWPPP_TRACKER, SWPPP_REPOSITORY, SWPPP_EMAIL: its addresses say $NOT_PUBLISHED);" \
    "for Install from ZIP and a village's own plugin repository (docs/QGIS.md)" >&2
fi

# The plugin folder as qgis-plugin-ci wants it: one folder with metadata.txt, in a git repository.
rm -rf "$RELEASE" "$REPOSITORY" "$STAGE" "$ZIP"
mkdir -p "$RELEASE/swppp_review" "$REPOSITORY"
cp -R "$ROOT/qgis_plugin/." "$RELEASE/swppp_review/"
{ cat "$ROOT/metadata.txt"; echo "$ADDRESSES"; } >"$RELEASE/swppp_review/metadata.txt"
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
