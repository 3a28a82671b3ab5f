#!/usr/bin/env bash
# Installs what the project needs, and nothing twice: Debian's QGIS and geospatial stack,
# the QGIS venv (system site packages + shapely 2) and the plain venv (current PyPI stack).
# Sourced by scripts/demo.sh and scripts/test.sh; safe to run again (quick when all is there).
# Exports ROOT and QGIS_VENV (the venv whose Python is QGIS's, with the project installed).
# Inside a release's root filesystem (scripts/qgis_release.sh: QGIS 3.40, 3.44) the Debian
# packages are there already; only that release's QGIS venv is made, .venv/qgis-<release>.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -f /.swppp-rootfs-stamp ] && [ -n "${SWPPP_QGIS_RELEASE:-}" ]; then
  IN_RELEASE_ROOTFS=1
else
  IN_RELEASE_ROOTFS=0
fi
DEBIAN_PACKAGES=(qgis python3-qgis qgis-providers python3-geopandas python3-pyproj python3-fiona
  python3-rasterio python3-venv python3-pip xvfb xauth poppler-utils gdal-bin sqlite3
  python3-psycopg postgresql postgis postgresql-15-postgis-3
  python3-matplotlib python3-pyqt6)
# The host only (not the QGIS releases' root filesystems): the HTML report's headless-browser
# render test (tests/analysis/test_report_browser.py).
HOST_PACKAGES=(chromium)

missing=()
if ((IN_RELEASE_ROOTFS)); then
  DEBIAN_PACKAGES=()
else
  DEBIAN_PACKAGES+=("${HOST_PACKAGES[@]}")
fi
for p in "${DEBIAN_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  # Another apt (another checkout's setup) may hold the lock: wait for it rather than fail.
  apt-get -o DPkg::Lock::Timeout=1200 install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

# make_venv DIR REQUIREMENTS [venv flags...]: (re)builds DIR when REQUIREMENTS or pyproject change.
make_venv() {
  local dir="$1" req="$2"; shift 2
  # The system's Python and packages count too (a rebuilt root filesystem has other ones).
  local stamp="$dir/.installed-$(cat "$req" "$ROOT/pyproject.toml" /.swppp-rootfs-stamp \
    2>/dev/null | sha256sum | cut -c1-16)"
  [ -f "$stamp" ] && return 0
  echo "setup: preparing $dir"
  rm -rf "$dir"
  /usr/bin/python3 -m venv "$@" "$dir"
  "$dir/bin/pip" install -q --disable-pip-version-check -r "$req"
  # The project itself, editable, without letting pip replace Debian's stack in the QGIS venv.
  "$dir/bin/pip" install -q --disable-pip-version-check --no-deps -e "$ROOT"
  touch "$stamp"
}
# link_proj_data VENV: Debian's pyproj (no PROJ data of its own) looks for it in PROJ_DATA, then
# under sys.prefix, the venv: the venv's share/proj is Debian's, so its Python and `swppp`, run
# directly without PROJ_DATA, find it (no "Valid PROJ data directory not found" warning). The
# environment is left alone, and a wheel's pyproj uses the data it carries before looking here.
link_proj_data() {
  local venv="$1"
  [ -f /usr/share/proj/proj.db ] || return 0
  # Made already, or a folder of PROJ data something else put there: left as it is.
  [ -e "$venv/share/proj" ] || [ -L "$venv/share/proj" ] && return 0
  mkdir -p "$venv/share"
  ln -s /usr/share/proj "$venv/share/proj"
}
if ((IN_RELEASE_ROOTFS)); then
  QGIS_VENV="$ROOT/.venv/qgis-$SWPPP_QGIS_RELEASE"
  make_venv "$QGIS_VENV" "$ROOT/requirements/qgis-debian.txt" --system-site-packages
else
  QGIS_VENV="$ROOT/.venv/qgis"
  make_venv "$QGIS_VENV" "$ROOT/requirements/qgis.txt" --system-site-packages
  make_venv "$ROOT/.venv/plain" "$ROOT/requirements/plain.txt"
fi
# Outside make_venv's stamp: a venv made before this existed gets it too.
link_proj_data "$QGIS_VENV"

# `swppp` on the PATH, as README.md and docs/ write it: /usr/local/bin/swppp -> this checkout's
# QGIS venv (the last checkout set up wins). A `swppp` there that is not such a link (installed
# by other means) is left alone, and said.
link_swppp() {
  local link=/usr/local/bin/swppp target="$QGIS_VENV/bin/swppp"
  ((IN_RELEASE_ROOTFS)) || [ "$(id -u)" -ne 0 ] || [ ! -x "$target" ] && return 0
  if [ -e "$link" ] && [ ! -L "$link" ]; then
    echo "setup: $link exists and is not a link to a checkout's venv: left alone; run $target" >&2
    return 0
  fi
  [ "$(readlink "$link" 2>/dev/null)" = "$target" ] && return 0
  ln -sfn "$target" "$link"
  echo "setup: swppp is on the PATH ($link -> $target)"
}
link_swppp
# Debian's pyproj in a venv looks for PROJ data under the venv prefix otherwise.
export PROJ_DATA=/usr/share/proj
export ROOT QGIS_VENV
