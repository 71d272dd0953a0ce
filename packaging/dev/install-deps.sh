#!/usr/bin/env bash
# Installs what building and testing floe needs on Debian 12, and nothing that is already
# there. Usage: install-deps.sh [build|test]. "build" is the compiler and the libraries;
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
set -euo pipefail
mode=${1:-build}
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

native=(build-essential cmake pkg-config libyaml-dev libmbedtls-dev libcurl4-openssl-dev
        liblz4-dev libzstd-dev zlib1g-dev libxxhash-dev libpcre2-dev libsystemd-dev)
testpk=(libcmocka-dev clang python3-avro nodejs npm qemu-user crossbuild-essential-arm64
        libyaml-dev:arm64 libmbedtls-dev:arm64 libcurl4-openssl-dev:arm64 liblz4-dev:arm64
        libzstd-dev:arm64 zlib1g-dev:arm64 libxxhash-dev:arm64 libcmocka-dev:arm64
        libpcre2-dev:arm64
        crossbuild-essential-armhf
        libyaml-dev:armhf libmbedtls-dev:armhf libcurl4-openssl-dev:armhf liblz4-dev:armhf
        libzstd-dev:armhf zlib1g-dev:armhf libxxhash-dev:armhf libcmocka-dev:armhf
        libpcre2-dev:armhf
        dpkg-dev debhelper fakeroot lintian systemd man-db file libmicrohttpd12)

# The Depends of the unpacked daemons (rsyslog, syslog-ng-core, rsyslog-gnutls).
daemonlibs=(libestr0 libfastjson4 liblognorm5 libuuid1 libsystemd0 libzstd1 zlib1g
            libcap2 libglib2.0-0 libivykis0 libjson-c5 libnet1 libpcre3 libssl3 libwrap0
            libgnutls30)
benchpk=(zstd gzip bc time s3cmd)
# Unpacked, not installed (see above): their Depends are in daemonlibs and testpk.
# systemd-journal-remote writes the journal files test_journal.sh reads; unpacked, since
# installing it would set up a journal receiver on the machine.
unpack=(rsyslog rsyslog-gnutls syslog-ng-core prometheus systemd-journal-remote)
UNPACK_DIR=/opt/floe-bench

want=("${native[@]}")
[ "$mode" = bench ] && want+=("${testpk[@]}" "${benchpk[@]}" "${daemonlibs[@]}")
if [ "$mode" = test ]; then
  want+=("${testpk[@]}" "${daemonlibs[@]}")
fi
if [ "$mode" = test ] || [ "$mode" = bench ]; then
  for arch in arm64 armhf; do
    if ! dpkg --print-foreign-architectures | grep -x "$arch" >/dev/null; then
      $SUDO dpkg --add-architecture "$arch"
      need_update=1
    fi
  done
fi

missing=()
for p in "${want[@]}"; do
  # nodejs/npm may come from elsewhere on a developer's machine; a working binary is enough.
  case "$p" in
    nodejs) command -v node >/dev/null 2>&1 && continue ;;
    npm) command -v npm >/dev/null 2>&1 && continue ;;
  esac
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null || missing+=("$p")
done

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

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt_get update -q
  apt_get install -y -q --no-install-recommends "${missing[@]}"
elif [ "${need_update:-0}" = 1 ]; then
  apt_get update -q
fi

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
