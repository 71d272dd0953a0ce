#!/usr/bin/env bash
# Installs what building and testing floe needs on Debian 12, and nothing that is already
# there. Usage: install-deps.sh [build|test|bench|rgw], or install-deps.sh cross-ready ARCH
# (below). "build" is the compiler and the libraries;
# "test" adds cmocka, the arm64 and armhf cross toolchains with their multiarch libraries,
# qemu-user, python3-avro and Node.js for the DuckDB reader used by the integration tests,
# and what the package tests use (dpkg-dev, debhelper, lintian, systemd-analyze, man-db,
# file, and promtool: the prometheus package is unpacked under /opt/floe-bench/prometheus,
# not installed, as installing it would start a Prometheus server on the machine);
# "bench" adds the reference tools the benchmarks compare against. rsyslog and
# syslog-ng-core conflict with each other (each is "the" system log daemon), so "bench"
# does not install them: it unpacks both under /opt/floe-bench/<package> (private copies
# the benchmark runs by path; the machine's own logger is left alone) and installs their
# libraries. "test" unpacks them too (and rsyslog-gnutls), for the syslog senders test.
# "test" and "bench" install Ceph's RADOS Gateway for the S3 tests too; "rgw" installs
# only that (packaging/dev/rgw/start.sh).
set -euo pipefail
mode=${1:-build}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

native=(build-essential cmake pkg-config libyaml-dev libmbedtls-dev libcurl4-openssl-dev
        liblz4-dev libzstd-dev zlib1g-dev libxxhash-dev libpcre2-dev libsystemd-dev)
testpk=(libcmocka-dev clang python3-avro nodejs npm qemu-user
        dpkg-dev debhelper fakeroot lintian systemd man-db file libmicrohttpd12)
# The cross builds' toolchain and multiarch libraries, one group per architecture. A group
# that cannot be installed (its index failed to download, or its versions lag the native
# ones while a mirror syncs) is reported and skipped: test.sh then skips that cross build
# loudly and runs everything else.
cross_libs=(libyaml-dev libmbedtls-dev libcurl4-openssl-dev liblz4-dev libzstd-dev zlib1g-dev
            libxxhash-dev libcmocka-dev libpcre2-dev)
cross_pkgs() { # ARCH: the packages of that architecture's group
  local l
  echo "crossbuild-essential-$1"
  for l in "${cross_libs[@]}"; do echo "$l:$1"; done
}
cross_arches=(arm64 armhf)

# The Depends of the unpacked daemons (rsyslog, syslog-ng-core, rsyslog-gnutls).
daemonlibs=(libestr0 libfastjson4 liblognorm5 libuuid1 libsystemd0 libzstd1 zlib1g
            libcap2 libglib2.0-0 libivykis0 libjson-c5 libnet1 libpcre3 libssl3 libwrap0
            libgnutls30)
benchpk=(zstd gzip bc time s3cmd)
# The throw-away Ceph RADOS Gateway the S3 tests run (packaging/dev/rgw/start.sh, whose
# PKGS these are): installed up front by "test", or alone by "rgw" when start.sh finds
# them missing.
rgwpk=(ceph-mon ceph-osd radosgw ceph-common curl s3cmd)
# Unpacked, not installed (see above): their Depends are in daemonlibs and testpk.
# systemd-journal-remote writes the journal files test_journal.sh reads; unpacked, since
# installing it would set up a journal receiver on the machine.
unpack=(rsyslog rsyslog-gnutls syslog-ng-core prometheus systemd-journal-remote)
UNPACK_DIR=/opt/floe-bench

if [ "$mode" = test ] || [ "$mode" = bench ]; then
  for arch in "${cross_arches[@]}"; do
    if ! dpkg --print-foreign-architectures | grep -x "$arch" >/dev/null; then
      $SUDO dpkg --add-architecture "$arch"
      need_update=1
    fi
  done
fi

# installed PKG: whether dpkg has PKG installed.
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep "install ok installed" >/dev/null; }
# missing_of PKG...: those of PKG not installed (a working node or npm binary counts, as
# they may come from elsewhere on a developer's machine).
missing_of() {
  local p
  for p in "$@"; do
    case "$p" in
      nodejs) command -v node >/dev/null 2>&1 && continue ;;
      npm) command -v npm >/dev/null 2>&1 && continue ;;
    esac
    installed "$p" || echo "$p"
  done
}

# "install-deps.sh cross-ready ARCH": exit 0 when that cross build's packages are all
# installed, else name the missing ones on stderr and exit 1. test.sh and the cross tests
# ask it before building for ARCH.
if [ "$mode" = cross-ready ]; then
  arch=${2:?usage: install-deps.sh cross-ready ARCH}
  mapfile -t m < <(missing_of $(cross_pkgs "$arch"))
  [ ${#m[@]} -eq 0 ] && exit 0
  echo "the $arch cross build needs packages that are not installed: ${m[*]}" >&2
  exit 1
fi

# apt_get ARGS...: apt-get that waits (up to 10 minutes) for another apt or dpkg holding
# its locks, as unattended-upgrades does on a freshly booted machine, instead of failing.
apt_get() {
  local try out
  for try in $(seq 1 60); do
    out=$(mktemp)
    if $SUDO apt-get -o DPkg::Lock::Timeout=10 "$@" 2> >(tee "$out" >&2); then
      rm -f "$out"
      return 0
    fi
    if ! grep -q "Could not get lock\|Unable to lock\|is another process using it" "$out"; then
      rm -f "$out"
      return 1
    fi
    rm -f "$out"
    echo "install-deps: another apt holds the lock; waiting ($try/60)" >&2
    sleep 10
  done
  return 1
}

# apt_update: an index that fails to download (a mirror mid-sync fails its size check)
# is retried twice. When a foreign architecture's index still fails, the lists are
# updated once more without that architecture: apt drops a failed suite's indexes for
# every architecture (the security suite's armhf index failing left arm64 without its
# security updates, whose versions then mismatched amd64's), so the other architectures
# still install. What is then left uninstallable is reported by install_group.
apt_update() {
  local try log a keep
  log=$(mktemp)
  for try in 1 2 3; do
    apt_get update -q 2> >(tee "$log" >&2) && { rm -f "$log"; return 0; }
    [ $try = 3 ] || { echo "install-deps: apt-get update failed (try $try of 3); retrying in 10 s" >&2; sleep 10; }
  done
  mapfile -t bad_index < <(grep -o 'binary-[a-z0-9]*/' "$log" | sed 's/binary-//; s|/||' | sort -u)
  rm -f "$log"
  keep=(-o "APT::Architectures::=$(dpkg --print-architecture)")
  for a in "${cross_arches[@]}"; do
    printf '%s\n' "${bad_index[@]}" | grep -x "$a" >/dev/null || keep+=(-o "APT::Architectures::=$a")
  done
  if [ ${#bad_index[@]} -gt 0 ] && apt_get update -q "${keep[@]}"; then
    echo "install-deps: WARNING: the package index of ${bad_index[*]} failed to download 3 times; the lists were updated without it" >&2
    return 0
  fi
  echo "install-deps: WARNING: apt-get update failed 3 times; going on with the package lists apt has" >&2
}

# install_group NAME PKG...: installs those of PKG that are missing, all at once; when that
# fails, one by one, so that each package that cannot be installed is named with apt's
# reason. Returns 1 when any is left missing.
failed=()
bad_index=()
install_group() {
  local name=$1 p why m
  shift
  mapfile -t m < <(missing_of "$@")
  [ ${#m[@]} -eq 0 ] && return 0
  echo "install-deps: installing ($name) ${m[*]}"
  apt_get install -y -q --no-install-recommends "${m[@]}" && return 0
  echo "install-deps: installing ($name) as a whole failed; trying each package" >&2
  local rc=0
  for p in "${m[@]}"; do
    installed "$p" && continue
    if ! why=$(apt_get install -y -q --no-install-recommends "$p" 2>&1 >/dev/null); then
      why=$(printf '%s\n' "$why" | grep -E 'Depends:|^E:' | tr -s ' ' | head -n 2 | paste -sd ';')
      failed+=("$p: ${why:-apt-get install failed}")
      rc=1
    fi
  done
  return $rc
}

export DEBIAN_FRONTEND=noninteractive
want=("${native[@]}")
case "$mode" in
  rgw) want=("${rgwpk[@]}") ;;
  test) want+=("${testpk[@]}" "${daemonlibs[@]}" "${rgwpk[@]}") ;;
  bench) want+=("${testpk[@]}" "${benchpk[@]}" "${daemonlibs[@]}" "${rgwpk[@]}") ;;
esac
groups=()
if [ "$mode" = test ] || [ "$mode" = bench ]; then groups=("${cross_arches[@]}"); fi
all=("${want[@]}")
for arch in "${groups[@]}"; do mapfile -t -O ${#all[@]} all < <(cross_pkgs "$arch"); done
if [ -n "$(missing_of "${all[@]}")" ] || [ "${need_update:-0}" = 1 ]; then apt_update; fi

install_group "$mode" "${want[@]}" || {
  echo "install-deps: FAILED: these packages could not be installed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
}
for arch in "${groups[@]}"; do
  failed=()
  mapfile -t cp < <(cross_pkgs "$arch")
  install_group "$arch cross build" "${cp[@]}" && continue
  {
    echo
    echo "install-deps: WARNING ************************************************************"
    echo "install-deps: the $arch cross build's packages could not be installed:"
    printf '%s\n' "${bad_index[@]}" | grep -x "$arch" >/dev/null &&
      echo "install-deps:   (the $arch package index failed to download: see apt-get update above)"
    printf 'install-deps:   %s\n' "${failed[@]}"
    echo "install-deps: the $arch cross build and its tests will be SKIPPED; everything else runs."
    echo "install-deps: ********************************************************************"
    echo
  } >&2
done

if [ "$mode" = test ] || [ "$mode" = bench ]; then
  for p in "${unpack[@]}"; do
    [ -e "$UNPACK_DIR/$p/.complete" ] && continue
    echo "install-deps: unpacking $p into $UNPACK_DIR/$p"
    tmp=$(mktemp -d)
    chmod 777 "$tmp"  # apt downloads as the _apt user
    (cd "$tmp" && apt-get download -q "$p")
    $SUDO mkdir -p "$UNPACK_DIR/$p"
    $SUDO dpkg -x "$tmp"/*.deb "$UNPACK_DIR/$p"
    $SUDO touch "$UNPACK_DIR/$p/.complete"
    rm -rf "$tmp"
  done
fi
