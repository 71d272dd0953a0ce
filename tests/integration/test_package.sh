#!/usr/bin/env bash
# The amd64 Debian package as an operator gets it: built by packaging/deb/build.sh
# (lintian clean), installed with apt-get, its default configuration checked, the unit's
# exact ExecStart line (and floe check of the shipped file) run as the unit's user against a new file in
# /var/log until its lines are rows in the table, an upgrade to a higher version (the
# package repacked under it) that keeps the state, then remove and purge. Also what ships
# besides: the manual pages' SYNOPSIS and OPTIONS (and no build instructions), the
# version floe reports (the package's), the daily floe-maintain.timer and its service,
# the Prometheus rules and the Grafana dashboard. The unit is checked by systemd-analyze
# (verify, and the security exposure, which must stay at most 2.5). Runs as root on a
# Debian 12 machine where no floe package is installed; skipped elsewhere (exit 77).
source "$(dirname "$0")/lib.sh"

if [ "$(id -u)" != 0 ] || ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
	echo "skipped: needs root and dpkg-dev/debhelper (packaging/dev/install-deps.sh test)"
	exit 77
fi
# One package test at a time on the machine (other worktrees, other suite runs): dpkg
# and the paths it installs are the machine's.
exec 9>/run/lock/floe-package-test.lock
if ! flock -w 600 9; then
	echo "FAIL - another package test held /run/lock/floe-package-test.lock for 10 minutes"
	exit 1
fi
if dpkg-query -W -f='${Status}' floe 2>/dev/null | grep ' installed$' >/dev/null; then
	echo "skipped: a floe package is installed on this machine; the test would replace it"
	exit 77
fi
had_user=0
id floe >/dev/null 2>&1 && had_user=1

UNIT=/lib/systemd/system/floe.service
INPUT=/var/log/floe-pkgtest-$$.log
WH=/var/lib/floe/warehouse/default/logs
OUT=$T/deb
mkdir -p "$OUT"

# Whatever happens, the machine is left without the package and the test's log file.
# The system user the package made goes too (packages leave them, by policy), unless
# it was there before.
pkg_cleanup() {
	cleanup
	dpkg --purge floe >/dev/null 2>&1 || true
	[ $had_user = 1 ] || userdel floe >/dev/null 2>&1 || true
	rm -f "$INPUT"
}
trap pkg_cleanup EXIT

# unit_line KEY: the unit's KEY= value (the first one).
unit_line() { sed -n "s/^$1=//p" "$UNIT" | head -1; }

# as_unit_user CMD...: runs CMD as systemd would for the unit: its user and group with
# the user's supplementary groups (adm), umask 0027, in /.
as_unit_user() {
	(cd / && umask 0027 && exec setpriv --reuid=floe --regid=floe --init-groups -- "$@")
}

# input_rows: "ROWS/DISTINCT-OFFSETS" of the test's input file in the table's live data
# files (other files under /var/log that grow meanwhile are in the table too).
input_rows() {
	local files
	files=$(live_files "$WH" 2>/dev/null | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo 0/0; return; }
	duck "SELECT count(*) || '/' || count(DISTINCT \"offset\") FROM read_parquet([$files])
		WHERE source = '$INPUT'" | tr -d '[]"\n'
}

# rchar PID: the bytes PID has read so far (every read and pread).
rchar() { awk '$1 == "rchar:" { print $2 }' /proc/$1/io 2>/dev/null || echo 0; }

# run_service LINES...: appends LINES to the input while the ExecStart line runs, then
# stops it with SIGTERM (a stop seals and commits what was read). The file exists before
# the start, so the agent follows it from its end; the lines are appended once the agent
# holds the file open, i.e. once it has scanned it, and the stop comes once it has read
# at least as many bytes as were appended (what is not read by a stop would only wait
# for the next start).
run_service() {
	local start pid i
	start=$(unit_line ExecStart)
	# One process, exec'd down to floe, so that $! is floe's PID (a function run in the
	# background would be a shell waiting for it).
	(cd / && umask 0027 && exec setpriv --reuid=floe --regid=floe --init-groups -- $start) \
		2>"$T/service.err" &
	pid=$!
	PIDS+=($pid)
	for i in $(seq 1 100); do
		ls -l /proc/$pid/fd 2>/dev/null | grep -- "-> $INPUT\$" >/dev/null && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	local before want
	before=$(rchar $pid)
	want=$(printf '%s\n' "$@" | wc -c)
	printf '%s\n' "$@" >>"$INPUT"
	for i in $(seq 1 100); do
		[ $(($(rchar $pid) - before)) -ge "$want" ] && break
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	kill -TERM $pid 2>/dev/null || true
	local rc=0
	for i in $(seq 1 200); do
		kill -0 $pid 2>/dev/null || break
		sleep 0.1
	done
	wait $pid || rc=$?
	return $rc
}

# --- build ---
start_s=$(date +%s)
rc=0
FLOE_DEB_OUT=$OUT "$FLOE_SRC/packaging/deb/build.sh" amd64 >"$T/build.out" 2>&1 || rc=$?
check "build.sh amd64 builds a lintian-clean package ($(($(date +%s) - start_s)) s)" test $rc = 0
[ $rc = 0 ] || { cat "$T/build.out"; finish; exit 1; }
deb=$(ls "$OUT"/floe_*_amd64.deb)
echo "lintian: $(cat "$OUT/lintian-amd64.txt" | grep -v 'root privileges' | wc -l) tags (errors and warnings fail the build)"
dpkg-deb -x "$deb" "$T/x"
size=$(stat -c %s "$T/x/usr/bin/floe")
echo "binary size, stripped, amd64: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }') MiB)"
check "the packaged binary is stripped" sh -c "! file '$T/x/usr/bin/floe' | grep -q 'not stripped'"
check "conffiles: /etc/floe/floe.yaml" sh -c "dpkg-deb -I '$deb' conffiles | grep -qx /etc/floe/floe.yaml"
check "postinst restarts the service after an upgrade" sh -c "dpkg-deb -I '$deb' postinst | grep -q '_dh_action=restart'"
# libcurl, libmbedtls and libsystemd are loaded with dlopen (platform/s3/curl_dl.c,
# platform/tls_lib_dl.c, platform/journal_sd.c), which dpkg-shlibdeps does not see: the
# package names them itself.
check "Depends names libcurl4, libmbedtls14 and libsystemd0" sh -c "dpkg-deb -f '$deb' Depends | tr ',' '\\n' |
	grep -Ec '^ *(libcurl4 \\(>= 7\\.66\\.0\\)|libmbedtls14 \\(>= 2\\.28\\.0\\)|libsystemd0)\$' | grep -qx 3"

# --- the unit, before installing: systemd-analyze reads it from the package tree ---
score=$(systemd-analyze security --offline=true --root="$T/x" floe.service 2>/dev/null |
	sed -n 's/.*Overall exposure level for floe.service: \([0-9.]*\).*/\1/p')
echo "systemd-analyze security: exposure $score (7.1 before the unit was hardened)"
check "systemd-analyze security: exposure $score <= 2.5" awk -v s="$score" 'BEGIN { exit !(s != "" && s <= 2.5) }'

# --- install ---
export DEBIAN_FRONTEND=noninteractive
: >"$INPUT"
chown root:adm "$INPUT"
chmod 0640 "$INPUT"
rc=0
apt-get -o DPkg::Lock::Timeout=120 install -y -q "$deb" >"$T/install.out" 2>&1 || rc=$?
check "apt-get install ./$(basename "$deb")" test $rc = 0
[ $rc = 0 ] || { cat "$T/install.out"; finish; exit 1; }
check "/usr/bin/floe version" sh -c '/usr/bin/floe version | grep -q floe'
check "user floe, in group adm" sh -c 'id -nG floe | tr " " "\n" | grep -qx adm'
check "/var/lib/floe belongs to floe" test "$(stat -c %U:%a /var/lib/floe)" = floe:750
check "man floe and man floe.yaml" sh -c 'man -w floe >/dev/null && man -w 5 floe.yaml >/dev/null'
zcat /usr/share/man/man1/floe.1.gz >"$T/floe.1"
man_has() { grep -qF -- "$1" "$T/floe.1"; }
check "floe(1) has a SYNOPSIS section" man_has '.SH "SYNOPSIS"'
check "floe(1) has an OPTIONS section" man_has '.SH "OPTIONS"'
for o in once json log\\-level; do
	check "floe(1) describes --${o/\\/}" man_has "\\fB\\-\\-$o"
done
check "floe(1) has no build instructions (cmake, build.sh, apt-get)" \
	sh -c "! grep -Eq 'cmake|build\\.sh|apt(\\\\)?-get' '$T/floe.1'"
check "floe.yaml(5) names /etc/floe/floe.yaml" sh -c 'zcat /usr/share/man/man5/floe.yaml.5.gz | grep -q /etc/floe/floe.yaml'
check "floe version names the package's version ($(dpkg-deb -f "$deb" Version))" \
	sh -c "/usr/bin/floe version | grep -qF 'floe $(dpkg-deb -f "$deb" Version) ('"
for f in /lib/systemd/system/floe-maintain.service /lib/systemd/system/floe-maintain.timer \
	/usr/share/floe/prometheus/floe-rules.yml /usr/share/floe/grafana/floe.json; do
	check "installed: $f" test -s "$f"
done
check "floe-maintain.service runs floe maintain on the shipped configuration" \
	grep -qx 'ExecStart=/usr/bin/floe maintain -c /etc/floe/floe.yaml' /lib/systemd/system/floe-maintain.service
check "postinst enables floe-maintain.timer" sh -c "dpkg-deb -I '$deb' postinst | grep -q 'floe-maintain.timer'"
check "postinst does not start floe-maintain.service itself (the timer does)" \
	sh -c "! dpkg-deb -I '$deb' postinst | grep 'deb-systemd-invoke' | grep -q 'floe-maintain.service'"
maint_score=$(systemd-analyze security --offline=true --root="$T/x" floe-maintain.service 2>/dev/null |
	sed -n 's/.*Overall exposure level for floe-maintain.service: \([0-9.]*\).*/\1/p')
check "systemd-analyze security floe-maintain.service: exposure $maint_score <= 2.5" \
	awk -v s="$maint_score" 'BEGIN { exit !(s != "" && s <= 2.5) }'
keys=$(sed -n '/^### Configuration/,/^### /p' "$FLOE_SRC/README.md" | grep -c '^| `')
check "floe.yaml(5) has an entry for each of the README's $keys configuration keys" \
	test "$(zcat /usr/share/man/man5/floe.yaml.5.gz | grep -c '^\.TP')" = "$keys"
rc=0
systemd-analyze verify "$UNIT" /lib/systemd/system/floe-maintain.service \
	/lib/systemd/system/floe-maintain.timer >"$T/verify.out" 2>&1 || rc=$?
check "systemd-analyze verify floe.service, floe-maintain.service and .timer" test $rc = 0
[ $rc = 0 ] || cat "$T/verify.out"

# --- the service, where systemd runs (a CI machine; not in a container) ---
# The package started it, sandbox and all: it must be running. It is stopped for the
# rest of the test, which runs the unit's command lines itself on the same state.
if [ -d /run/systemd/system ]; then
	for i in $(seq 1 50); do
		systemctl is-active --quiet floe && break
		sleep 0.2
	done
	check "systemd: the package started floe.service, and it runs" systemctl is-active --quiet floe
	systemctl is-active --quiet floe || journalctl -u floe --no-pager -n 30 || true
	systemctl stop floe
else
	echo "systemd is not running here: the service's start is not checked, only its command lines"
fi

# --- the service's own command lines, as its user ---
pre="/usr/bin/floe check -c /etc/floe/floe.yaml"
check "the unit has no ExecStartPre (a file with errors must not keep floe run from its last good configuration)" \
	test -z "$(unit_line ExecStartPre)"
rc=0
as_unit_user $pre >"$T/check.out" 2>&1 || rc=$?
check "$pre passes on the shipped configuration, as user floe" test $rc = 0
[ $rc = 0 ] || cat "$T/check.out"
rc=0
run_service "pkgtest line 1" "pkgtest line 2" "pkgtest line 3" || rc=$?
check "ExecStart as user floe: SIGTERM ends it with exit 0 (exit $rc)" test $rc = 0
got=$(input_rows)
check "ExecStart as user floe: the 3 lines are rows in /var/lib/floe's table ($got)" test "$got" = 3/3
[ "$got" = 3/3 ] || cat "$T/service.err"
inst=$(cat /var/lib/floe/installation 2>/dev/null | od -An -tx1 | tr -d ' \n')
check "the run made its installation and metrics files" test -n "$inst" -a -s /var/lib/floe/metrics.json

# --- upgrade: the same package under a higher version, as a fleet's next release comes ---
# What an upgrade exercises is the maintainer scripts (the restart, the conffile, the
# state left as it was), not a new binary: the package is unpacked and packed again with
# only its Version changed, instead of a second build of the same tree (a minute of the
# suite). That the binary reports the version its package build gave is checked above.
newver=$(dpkg-deb -f "$deb" Version)+pkgtest1
rc=0
{
	rm -rf "$T/repack" &&
		dpkg-deb -R "$deb" "$T/repack" &&
		sed -i "s/^Version: .*/Version: $newver/" "$T/repack/DEBIAN/control" &&
		dpkg-deb --root-owner-group -Zxz -b "$T/repack" "$OUT/floe_${newver}_amd64.deb"
} >"$T/repack.out" 2>&1 || rc=$?
check "the package repacked as $newver" test $rc = 0
[ $rc = 0 ] || cat "$T/repack.out"
rc=0
apt-get -o DPkg::Lock::Timeout=120 install -y -q "$OUT/floe_${newver}_amd64.deb" >"$T/upgrade.out" 2>&1 || rc=$?
check "upgrade to $newver" test $rc = 0
if [ -d /run/systemd/system ]; then
	check "systemd: the upgrade restarted floe.service" systemctl is-active --quiet floe
	systemctl stop floe
fi
check "upgrade: the installed version is $newver" test "$(dpkg-query -W -f='${Version}' floe)" = "$newver"
check "upgrade: /usr/bin/floe is the new package's" \
	sh -c "cmp -s /usr/bin/floe '$T/repack/usr/bin/floe'"
check "upgrade keeps the installation id" \
	test "$(cat /var/lib/floe/installation | od -An -tx1 | tr -d ' \n')" = "$inst"
check "upgrade keeps the table" test "$(input_rows)" = 3/3
printf '%s\n' "while stopped 1" "while stopped 2" >>"$INPUT"
rc=0
run_service "after upgrade" || rc=$?
got=$(input_rows)
check "after the upgrade the agent goes on from its positions: 6 rows, none twice ($got)" \
	test "$got" = 6/6
[ "$got" = 6/6 ] || cat "$T/service.err"

# --- remove, then purge ---
rc=0
apt-get -o DPkg::Lock::Timeout=120 remove -y -q floe >"$T/remove.out" 2>&1 || rc=$?
check "apt-get remove" test $rc = 0
check "remove takes the binary" test ! -e /usr/bin/floe
check "remove keeps the configuration and the state" test -f /etc/floe/floe.yaml -a -d /var/lib/floe/warehouse
rc=0
dpkg --purge floe >"$T/purge.out" 2>&1 || rc=$?
check "dpkg --purge" test $rc = 0
check "purge says it removes /var/lib/floe" grep -q "removing /var/lib/floe" "$T/purge.out"
check "purge removes the state and the configuration" test ! -e /var/lib/floe -a ! -e /etc/floe
echo "package test: $(($(date +%s) - start_s)) s"
finish
