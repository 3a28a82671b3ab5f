#!/usr/bin/env bash
# The whole test suite, on each QGIS release the plugin is tested on: 3.22 (this machine's Debian
# 12 packages), 3.40 LTR (Debian 13's) and 3.44 (Debian testing's), each on its own Python stack
# (scripts/test_qgis.sh: the analysis tests, the plugin in real QGIS and under qgis_process, the
# panel under Xvfb), and beside them the analysis on current PyPI releases. 3.40 and 3.44 run in Debian root
# filesystems built once into /var/cache/swppp-review (scripts/qgis_release.sh, docs/TESTING.md).
#
#   bash scripts/test.sh                    all three releases
#   bash scripts/test.sh --qgis 3.40 [...]  one release only (--qgis may be repeated); other
#                                           arguments go to pytest, e.g. -x or -k panel
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/.." && pwd)"
source "$HERE/qgis_release.sh"

releases=() pytest_args=()
while (($#)); do
  case "$1" in
    --qgis) [ $# -ge 2 ] || { echo "test.sh: --qgis needs a release (3.22, 3.40 or 3.44)" >&2; exit 2; }
            releases+=("$2"); shift 2 ;;
    --qgis=*) releases+=("${1#--qgis=}"); shift ;;
    *) pytest_args+=("$1"); shift ;;
  esac
done
((${#releases[@]})) || releases=("${QGIS_RELEASES[@]}")
source "$HERE/setup.sh"  # this machine's QGIS 3.22, the venvs, the lint and packaging tools
cd "$ROOT"
for release in "${releases[@]}"; do release_suite "$release" >/dev/null || exit 2; done

# Root filesystems not built yet are built in the background while the first release's tests
# run (run_in_release waits for its build: one builder per release, under a lock).
builders=()
# Ended with this script (a build cut short is never taken for a built one: qgis_release.sh).
trap 'for pid in "${builders[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done; [ -z "${pypi_pid:-}" ] || kill -TERM "$pypi_pid" 2>/dev/null || true' EXIT
for release in "${releases[@]}"; do
  if [ -n "$(release_suite "$release")" ] && ! release_ready "$release"; then
    mkdir -p "$SWPPP_CACHE/rootfs"
    SWPPP_CACHE="$SWPPP_CACHE" setsid bash -c 'source "$1/qgis_release.sh"; release_rootfs "$2"' \
      build "$HERE" "$release" >/dev/null 2>"$SWPPP_CACHE/rootfs/$release.build.txt" &
    builders+=($!)
  fi
done

failed=() started=$SECONDS
echo "== lint and layout (ruff check and ruff format, the policy in pyproject.toml) and types (mypy on analysis/ and qgis_plugin/) =="
"$ROOT/.venv/plain/bin/ruff" check "$ROOT" || failed+=("ruff")
"$ROOT/.venv/plain/bin/ruff" format --check --quiet "$ROOT" || failed+=("ruff format")
"$ROOT/.venv/plain/bin/mypy" || failed+=("mypy")
# One plugin zip for every release: built here with qgis-plugin-ci, loaded by each release's tests.
bash "$HERE/package.sh" >/dev/null
export SWPPP_PACKAGE_READY=1

# The analysis on current PyPI releases runs beside the releases' suites, on one core: their
# plugin tests (most of the run) keep one core busy and leave the other idle. Its output is
# kept and printed last, so that the run closes on pytest's own summary line.
pypi_pid="" pypi_log="$(mktemp)"
if [[ " ${releases[*]} " == *" 3.22 "* ]]; then
  # No PROJ_DATA here: it is for Debian's pyproj; rasterio's wheel (a newer PROJ) refuses Debian's
  # proj.db ("comes from another PROJ installation") and finds its own data when it is unset.
  env -u PROJ_DATA "$ROOT/.venv/plain/bin/python" -m pytest -p no:cacheprovider -n 1 \
    -W ignore::pytest.PytestConfigWarning --doctest-modules "$ROOT/tests/analysis" \
    "$ROOT/analysis" "${pytest_args[@]}" >"$pypi_log" 2>&1 &
  pypi_pid=$!
fi
for release in "${releases[@]}"; do
  begun=$SECONDS
  if [ -z "$(release_suite "$release")" ]; then
    bash "$HERE/test_qgis.sh" "${pytest_args[@]}" || failed+=("$release")
  else
    echo "== QGIS $release: its Debian root filesystem ($SWPPP_CACHE/rootfs/$release) =="
    run_in_release "$release" bash "$HERE/test_qgis.sh" "${pytest_args[@]}" || failed+=("$release")
  fi
  echo "== QGIS $release: $((SECONDS - begun)) s =="
done

if [ -n "$pypi_pid" ]; then
  echo "== analysis tests on current PyPI releases (geopandas 1.x + pyogrio), run beside the releases' =="
  wait "$pypi_pid" || failed+=("PyPI stack")
  pypi_pid=""
  cat "$pypi_log"
fi
rm -f "$pypi_log"
echo "== QGIS ${releases[*]}: $((SECONDS - started)) s; ${#failed[@]} failed${failed[*]:+: ${failed[*]}} =="
((${#failed[@]} == 0))
