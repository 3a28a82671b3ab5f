#!/usr/bin/env bash
# The QGIS releases the plugin is tested on, and a Debian root filesystem for each one that
# this machine (Debian 12, QGIS 3.22) does not have: Debian 13 "trixie" (QGIS 3.40 LTR) and
# Debian testing "forky" (QGIS 3.44). Sourced by scripts/test.sh; details in docs/TESTING.md.
#
#   release_rootfs 3.40       the root filesystem of QGIS 3.40, built from Debian's packages when
#                             missing or when its package list changed (prints its folder)
#   run_in_release 3.40 CMD   runs CMD in that root filesystem, the checkout at the same path
#
# Root filesystems live in $SWPPP_CACHE (default /var/cache/swppp-review), outside the
# checkout: rootfs/<release>/, stamped with a hash of its suite, archive and package list. A
# build goes to a temporary folder renamed into place when complete, so an interrupted build is
# never taken for a cached one. Mounts are made in a private mount namespace (unshare): they end
# with the command, whatever happens, and are never visible to anything that removes a folder.
set -euo pipefail

SWPPP_CACHE="${SWPPP_CACHE:-/var/cache/swppp-review}"
# The Debian archive the root filesystems come from: DEBIAN_MIRROR where set, else the one this
# machine's apt reads (debian_archive below); no archive's address is written here.

# Everything the plugin's and the analysis's tests use, from the release's own archive.
ROOTFS_PACKAGES=(qgis python3-qgis qgis-providers python3-geopandas python3-shapely python3-pyproj
  python3-fiona python3-rasterio python3-matplotlib python3-psycopg python3-venv python3-pip
  ca-certificates xvfb xauth poppler-utils gdal-bin sqlite3 postgresql postgresql-postgis
  python3-pyqt6)  # python3-pyqt6: tests/qgis_plugin/test_qt6_names.py checks names against it

# debian_archive [SOURCES_LIST [SOURCES_PARTS]]: the Debian archive this machine's apt reads,
# as mmdebstrap takes it (no trailing "/"): the first enabled "deb" source of a release suite
# (a suite without "-" or "/": not -security, -updates or -backports) with an http, https or file
# address, in SOURCES_LIST (one-line format) then SOURCES_PARTS/*.list (one-line) and *.sources
# (deb822), in apt's order. The paths default to apt's own (apt-config: Dir::Etc::sourcelist,
# Dir::Etc::sourceparts). Prints nothing and returns 2, saying what to do, when there is none.
debian_archive() {
  local list="${1:-}" parts="${2:-}" found="" file files=()
  if [ $# -eq 0 ]; then
    list=/etc/apt/sources.list parts=/etc/apt/sources.list.d
    if command -v apt-config >/dev/null; then
      eval "$(apt-config shell list Dir::Etc::sourcelist/f parts Dir::Etc::sourceparts/d)"
    fi
  fi
  parts="${parts%/}"
  [ -f "$list" ] && files+=("$list")
  for file in "$parts"/*; do
    case "$file" in *.list | *.sources) [ -f "$file" ] && files+=("$file") ;; esac
  done
  for file in "${files[@]}"; do
    case "$file" in
      *.sources) found="$(_archive_in_deb822 "$file")" ;;
      *) found="$(_archive_in_one_line "$file")" ;;
    esac
    [ -n "$found" ] && break
  done
  if [ -z "$found" ]; then
    echo "qgis_release: this machine's apt names no Debian archive (no enabled 'deb' source of" \
      "a release suite in $list or $parts/*.list, *.sources); add the Debian archive to" \
      "apt's sources, or set DEBIAN_MIRROR to one" >&2
    return 2
  fi
  echo "${found%/}"
}

# DEBIAN_MIRROR where set, else debian_archive.
_debian_mirror() {
  if [ -n "${DEBIAN_MIRROR:-}" ]; then
    echo "$DEBIAN_MIRROR"
  else
    debian_archive
  fi
}

# The first address of an enabled "deb" line of a release suite in a one-line sources file.
_archive_in_one_line() {
  sed -e 's/#.*//' -e 's/\[[^]]*\]//' "$1" | awk '
    $1 == "deb" && $3 !~ /[-\/]/ && $2 ~ /^(https?|file):/ { print $2; exit }'
}

# The first address of an enabled "deb" stanza of a release suite in a deb822 .sources file.
_archive_in_deb822() {
  awk '
    function flush() {
      if (!done && types ~ /(^| )deb( |$)/ && enabled !~ /^(no|false|0)$/) {
        n = split(suites, s, " "); release = 0
        for (i = 1; i <= n; i++) if (s[i] !~ /[-\/]/) release = 1
        m = split(uris, u, " ")
        for (i = 1; release && i <= m; i++) if (u[i] ~ /^(https?|file):/) { print u[i]; done = 1; exit }
      }
      types = ""; uris = ""; suites = ""; enabled = ""; field = ""
    }
    /^#/ { next }
    /^[ \t]*$/ { flush(); next }
    /^[ \t]/ { value = $0; sub(/^[ \t]+/, "", value)
               if (field == "uris") uris = uris " " value
               else if (field == "suites") suites = suites " " value
               next }
    { line = $0; key = tolower(line); sub(/:.*/, "", key)
      value = line; sub(/^[^:]*:[ \t]*/, "", value); sub(/[ \t]+$/, "", value); field = key
      if (key == "types") types = value
      else if (key == "uris") uris = value
      else if (key == "suites") suites = value
      else if (key == "enabled") enabled = tolower(value) }
    END { flush() }' "$1"
}

# release -> Debian suite ("" for this machine's own QGIS).
release_suite() {
  case "$1" in
    3.22) echo "" ;;
    3.40) echo trixie ;;
    3.44) echo forky ;;
    *) echo "unknown QGIS release '$1' (3.22, 3.40 or 3.44)" >&2; return 2 ;;
  esac
}
QGIS_RELEASES=(3.22 3.40 3.44)

# Extra apt options for a suite: the archive's testing Release file may be past its Valid-Until.
_suite_aptopts() {
  [ "$1" = forky ] && echo 'Acquire::Check-Valid-Until "false"'
  return 0
}

# _rootfs_stamp SUITE ARCHIVE
_rootfs_stamp() {
  local suite="$1" mirror="$2"
  { echo "$suite $mirror"; _suite_aptopts "$suite"; printf '%s\n' "${ROOTFS_PACKAGES[@]}"; } \
    | sha256sum | cut -c1-16
}

# Nothing may be mounted below a folder that is about to be removed.
_nothing_mounted_in() {
  local dir
  dir="$(realpath -m "$1")"
  ! awk '{print $2}' /proc/self/mounts | grep -q "^${dir}\(/\|$\)"
}

_need_mmdebstrap() {
  command -v mmdebstrap >/dev/null && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "qgis_release: building a root filesystem needs root and mmdebstrap" >&2
    return 2
  fi
  echo "qgis_release: installing mmdebstrap"
  # Another apt may hold the lock (e.g. setup.sh of another checkout): wait for it.
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=1200 install -y -q \
    --no-install-recommends mmdebstrap >/dev/null
}

# Whether RELEASE's root filesystem is built, with the current package list.
release_ready() {
  local dir="$SWPPP_CACHE/rootfs/$1" mirror
  mirror="$(_debian_mirror 2>/dev/null)" || return 1
  [ -f "$dir/.swppp-rootfs-stamp" ] \
    && [ "$(cat "$dir/.swppp-rootfs-stamp")" = "$(_rootfs_stamp "$(release_suite "$1")" "$mirror")" ]
}

release_rootfs() {
  local release="$1" suite stamp dir tmp mirror opts=()
  suite="$(release_suite "$release")"
  dir="$SWPPP_CACHE/rootfs/$release"
  mirror="$(_debian_mirror)" || return 2
  stamp="$(_rootfs_stamp "$suite" "$mirror")"
  mkdir -p "$SWPPP_CACHE/rootfs"
  # One builder per release at a time.
  exec {lock}>"$SWPPP_CACHE/rootfs/$release.lock"
  flock "$lock"
  if [ -f "$dir/.swppp-rootfs-stamp" ] && [ "$(cat "$dir/.swppp-rootfs-stamp")" = "$stamp" ]; then
    flock -u "$lock"
    echo "$dir"
    return 0
  fi
  _need_mmdebstrap
  local aptopt
  aptopt="$(_suite_aptopts "$suite")"
  [ -n "$aptopt" ] && opts+=("--aptopt=$aptopt")
  tmp="$SWPPP_CACHE/rootfs/.$release.building"
  _nothing_mounted_in "$tmp" && rm -rf --one-file-system "$tmp"
  echo "qgis_release: building the QGIS $release root filesystem (Debian $suite) in $dir;" \
       "(about 5 minutes)" >&2
  local started=$SECONDS
  if ! mmdebstrap --variant=apt --quiet "${opts[@]}" \
      --include="$(IFS=,; echo "${ROOTFS_PACKAGES[*]}")" \
      "$suite" "$tmp" "$mirror" >"$SWPPP_CACHE/rootfs/$release.log" 2>&1; then
    tail -n 30 "$SWPPP_CACHE/rootfs/$release.log" >&2
    echo "qgis_release: building the QGIS $release root filesystem failed" \
         "(log: $SWPPP_CACHE/rootfs/$release.log)" >&2
    flock -u "$lock"
    return 1
  fi
  echo "$stamp" >"$tmp/.swppp-rootfs-stamp"
  if [ -e "$dir" ]; then
    if ! _nothing_mounted_in "$dir"; then
      echo "qgis_release: $dir is in use (something is mounted in it); not replaced" >&2
      flock -u "$lock"
      return 1
    fi
    rm -rf --one-file-system "$dir"
  fi
  mv "$tmp" "$dir"
  echo "qgis_release: QGIS $release root filesystem built in $((SECONDS - started)) s" >&2
  flock -u "$lock"
  echo "$dir"
}

# run_in_release RELEASE COMMAND...: COMMAND in RELEASE's root filesystem, as root, with the
# checkout ($ROOT) and ../shared (where present) at the same paths, a clean environment plus
# what QGIS and the tests need, and the root filesystem's own /tmp.
run_in_release() {
  local release="$1" rootfs
  shift
  rootfs="$(release_rootfs "$release")"
  local shared=""
  [ -e "$ROOT/../shared" ] && shared="$(realpath "$ROOT/../shared")"
  # shellcheck disable=SC2016 # expanded by the inner shell
  unshare --mount --propagation private -- bash -euo pipefail -c '
    rootfs="$1" root="$2" shared="$3" release="$4"; shift 4
    mkdir -p -m 700 "$rootfs/tmp/runtime-root"
    mount -t proc proc "$rootfs/proc"
    mount --rbind /sys "$rootfs/sys"
    mount --rbind /dev "$rootfs/dev"
    mount -t tmpfs tmpfs "$rootfs/dev/shm"
    cp --remove-destination /etc/resolv.conf "$rootfs/etc/resolv.conf"
    # The certificate authorities this machine trusts (pip and the tests reach PyPI through
    # whatever this machine does; a local CA in /usr/local/share/ca-certificates included).
    mount --bind -o ro /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
    mkdir -p "$rootfs$root"
    mount --bind "$root" "$rootfs$root"
    if [ -n "$shared" ]; then
      mkdir -p "$rootfs$(dirname "$root")/shared"
      mount --bind "$shared" "$rootfs$(dirname "$root")/shared"
    fi
    exec chroot "$rootfs" /usr/bin/env -i HOME=/root LANG=C.UTF-8 \
      PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
      PROJ_DATA=/usr/share/proj QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=/tmp/runtime-root \
      SWPPP_QGIS_RELEASE="$release" SWPPP_PACKAGE_READY="${SWPPP_PACKAGE_READY:-}" "$@"
  ' run_in_release "$rootfs" "$ROOT" "$shared" "$release" "$@"
}
