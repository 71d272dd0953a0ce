#!/usr/bin/env bash
# The README's "Cross-compiling" section, run as written in a copy of the source tree:
# its first blocks' sudo, dpkg and apt-get replaced by checks that the architectures and
# packages are there, then every build command. Checks the arm64 and armhf Debian packages
# packaging/deb/build.sh cross-builds there (lintian clean): their control data and
# contents, and the packaged binary under qemu-user (floe version, floe check on the
# shipped configuration, run --once over a sample log into a table); that the FLOE_STATIC
# builds (and the amd64 one) are statically linked and load nothing; floe version, and
# run --once over the sample with the static amd64 binary (and the static ARM ones under
# qemu-user where it runs a thread). Prints every binary's stripped size. The build
# without the optional libraries is the suite's minimal step (test_minimal_build).
source "$(dirname "$0")/lib.sh"

# The section's ```sh blocks, in order, as one script, continuation lines joined; the -j2
# the README gives becomes the suite's job count. Checked for syntax on every machine, so
# a broken command shows even where the cross packages are missing.
JOBS=${FLOE_JOBS:-2}
awk '/^## / { in_s = ($0 == "## Cross-compiling") } in_s && /^```/ { in_b = !in_b; next }
	in_s && in_b { if (sub(/\\$/, "")) { held = held $0; next } print held $0; held = "" }' \
	"$FLOE_SRC/README.md" | sed "s/ -j2\$/ -j$JOBS/" >"$T/readme.sh"
check "the README has a Cross-compiling section with commands" test -s "$T/readme.sh"
check "the README's cross-compiling commands are valid shell" bash -n "$T/readme.sh"

for tool in aarch64-linux-gnu-gcc qemu-aarch64 file readelf dpkg-buildpackage dh; do
	command -v $tool >/dev/null || { skip_part "$tool is missing"; finish; exit; }
done
# An architecture whose packages are missing (its archive index failed, say) is skipped
# loudly, with its lines of the README; the others still run.
arches="arm64 armhf"
for arch in arm64 armhf; do
	tool=aarch64-linux-gnu-gcc
	[ $arch = armhf ] && tool=arm-linux-gnueabihf-gcc
	why=$("$FLOE_SRC/packaging/dev/install-deps.sh" cross-ready $arch 2>&1) && command -v $tool >/dev/null ||
		{
			[ $arch = arm64 ] && { skip_part "${why:-$tool is missing}"; finish; exit; }
			printf '\n*** SKIPPED: the %s cross build: %s ***\n' "$arch" "${why:-$tool is missing}"
			skip_part "the $arch cross build: ${why:-$tool is missing}"
			arches=arm64
		}
done
if [ "$arches" = arm64 ]; then
	grep -v 'build-armhf\|gnueabihf\|^qemu-arm \|build\.sh armhf\|armhf\.deb' "$T/readme.sh" >"$T/readme.arm64" || true
	mv "$T/readme.arm64" "$T/readme.sh"
fi

SAMPLE=$FLOE_SRC/tests/data/loghub/Linux_2k.log
# Its last line has no newline: run --once takes it too (awk counts it, wc -l does not).
want_rows=$(awk 'END { print NR }' "$SAMPLE")

# The tree as a newcomer has it: tracked and new files (no build directories).
SRC=$T/src
mkdir -p "$SRC"
if git -C "$FLOE_SRC" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$FLOE_SRC" ls-files -z --cached --others --exclude-standard |
		(cd "$FLOE_SRC" && xargs -0 cp --parents -t "$SRC" 2>/dev/null || true)
else
	tar -C "$FLOE_SRC" --exclude='./build*' --exclude=node_modules -cf - . | tar -C "$SRC" -xf -
fi

cat >"$T/run.sh" <<'STUBS'
set -euo pipefail
sudo() { "$@"; }
dpkg() {
	if [ "$1" = --add-architecture ]; then
		[ "$2" = armhf ] && [ -n "${SKIP_ARMHF:-}" ] && return 0
		command dpkg --print-foreign-architectures | grep -x "$2" >/dev/null ||
			{ echo "README: architecture $2 is not added" >&2; return 1; }
	else
		command dpkg "$@"
	fi
}
apt-get() {
	[ "$1" = install ] || return 0
	shift
	local p
	for p in "$@"; do
		case $p in -*) continue ;; *armhf) [ -n "${SKIP_ARMHF:-}" ] && continue ;; esac
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep "install ok installed" >/dev/null ||
			{ echo "README: package $p is not installed" >&2; return 1; }
	done
}
set -x
STUBS
cat "$T/readme.sh" >>"$T/run.sh"
start_s=$(date +%s)
rc=0
skip_armhf=""
[ "$arches" = arm64 ] && skip_armhf=1
(cd "$SRC" && SKIP_ARMHF=$skip_armhf bash "$T/run.sh") >"$T/readme.out" 2>&1 || rc=$?
check "the README's cross-compiling commands run ($(($(date +%s) - start_s)) s)" test $rc = 0
[ $rc = 0 ] || tail -40 "$T/readme.out"

# stripped_size FILE STRIP: FILE's size once stripped (a copy when FILE is not stripped).
stripped_size() {
	local f=$1
	if file "$f" | grep 'not stripped' >/dev/null; then
		"$2" -o "$T/stripped" "$f"
		f=$T/stripped
	fi
	stat -c %s "$f"
}
report() { # what bytes
	echo "binary size, stripped, $1: $2 bytes ($(awk -v s="$2" 'BEGIN { printf "%.2f", s / 1048576 }') MiB)"
}
# table_rows STATE_DIR: total-records of the current snapshot of the default table.
table_rows() { snapshot_records "$1/warehouse/default/logs"; }
# run_once NAME EMULATOR... BIN: run --once over the sample into a fresh state directory.
run_once() {
	local name=$1 d
	d=$T/run-$(echo "$1" | tr -c 'a-z0-9\n' -)
	shift
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<YAML
agent: { state_dir: $d/state }
inputs: [ { type: tail, paths: ["$SAMPLE"], start_at: beginning } ]
YAML
	local rc=0
	timeout -k 5 120 "$@" run -c "$d/floe.yaml" --once >"$d/run.out" 2>&1 || rc=$?
	check "$name: run --once over a sample log" test $rc = 0
	[ $rc = 0 ] || tail -20 "$d/run.out"
	local rows
	rows=$(table_rows "$d/state" || true)
	check "$name: the table holds the sample's $want_rows lines ($rows)" test "$rows" = "$want_rows"
}
# qemu_threads QEMU TRIPLET [-static]: whether the emulator runs a program that starts and
# joins a thread, within 10 s (Debian 12's qemu-user 7.2 hangs, arm64, or crashes, armhf,
# in pthread_create on some machines; more often with dynamically linked programs).
qemu_threads() {
	local exe=$T/probe-$2${3:-}
	printf '%s\n' '#include <pthread.h>' 'static void *f(void *a) { return a; }' \
		'int main(void) { pthread_t t; return pthread_create(&t, 0, f, 0) || pthread_join(t, 0); }' >"$T/probe.c"
	"$2-gcc" ${3:-} -pthread -o "$exe" "$T/probe.c" && timeout -k 1 10 "$1" -L "/usr/$2" "$exe" >/dev/null 2>&1
}

# check_package ARCH QEMU TRIPLET: the package the README's build.sh made for ARCH.
check_package() {
	local arch=$1 qemu=$2 triplet=$3 deb f rc
	deb=$(ls "$SRC"/build-deb/floe_*_"$arch".deb 2>/dev/null)
	check "$arch: build.sh built the package ($deb)" test -f "$deb"
	[ -f "$deb" ] || return 0
	# build.sh fails on lintian's errors and warnings, where lintian is installed.
	! command -v lintian >/dev/null ||
		check "$arch: build.sh ran lintian (errors and warnings fail it)" test -f "$SRC/build-deb/lintian-$arch.txt"
	check "$arch: dpkg-deb --info: Architecture $arch" test "$(dpkg-deb -f "$deb" Architecture)" = "$arch"
	check "$arch: dpkg-deb --info: depends on libcurl4 and libmbedcrypto7" \
		sh -c "dpkg-deb -f '$deb' Depends | grep -q libcurl4 && dpkg-deb -f '$deb' Depends | grep -q libmbedcrypto7"
	check "$arch: dpkg-deb --info: conffile /etc/floe/floe.yaml" \
		sh -c "dpkg-deb -I '$deb' conffiles | grep -qx /etc/floe/floe.yaml"
	dpkg-deb --contents "$deb" | awk '{ print $NF }' | sed 's#^\./#/#' >"$T/contents-$arch"
	for f in /usr/bin/floe /etc/floe/floe.yaml /lib/systemd/system/floe.service \
		/usr/lib/sysusers.d/floe.conf /usr/share/man/man1/floe.1.gz \
		/usr/share/man/man5/floe.yaml.5.gz /usr/share/doc/floe/copyright; do
		check "$arch: dpkg-deb --contents: $f" grep -qx "$f" "$T/contents-$arch"
	done
	local x=$T/x-$arch
	dpkg-deb -x "$deb" "$x"
	local bin=$x/usr/bin/floe
	check "$arch: the packaged binary is a dynamically linked ELF for $triplet, stripped" \
		sh -c "readelf -d '$bin' | grep -q NEEDED && ! file '$bin' | grep -q 'not stripped'"
	report "$arch, package" "$(stat -c %s "$bin")"
	rc=0
	$qemu -L "/usr/$triplet" "$bin" check -c "$x/etc/floe/floe.yaml" >"$T/check-$arch.out" 2>&1 || rc=$?
	check "$arch: floe check on the shipped configuration" test $rc = 0
	[ $rc = 0 ] || cat "$T/check-$arch.out"
	# floe run starts threads (the committer, and compression threads when set): where the
	# emulator cannot run one, that step is skipped with the reason, and the arm64/armhf
	# unit tests (test.sh's cross steps) are the check of the code itself.
	if qemu_threads "$qemu" "$triplet"; then
		run_once "$arch, package, under $qemu" "$qemu" -L "/usr/$triplet" "$bin"
	else
		echo "skipped: $arch, package: run --once under $qemu (it cannot run a thread here)"
	fi
}

for arch in $arches amd64; do
	case $arch in
	arm64) machine=AArch64 strip=aarch64-linux-gnu-strip qemu=qemu-aarch64 triplet=aarch64-linux-gnu ;;
	armhf) machine=ARM strip=arm-linux-gnueabihf-strip qemu=qemu-arm triplet=arm-linux-gnueabihf ;;
	amd64) machine=X86-64 strip=strip qemu="" triplet=x86_64-linux-gnu ;;
	esac
	[ $arch = amd64 ] || check_package $arch $qemu $triplet
	bin=$SRC/build-$arch-static/floe
	check "$arch, static: an ELF for $machine, statically linked" \
		sh -c "readelf -h '$bin' | grep -q 'Machine:.*$machine' && file '$bin' | grep -q 'statically linked'"
	check "$arch, static: no dynamic section, no interpreter" \
		sh -c "! readelf -d '$bin' | grep -q NEEDED && ! readelf -l '$bin' | grep -q INTERP"
	report "$arch, static" "$(stripped_size "$bin" $strip)"
	if [ $arch = amd64 ]; then
		check "$arch, static: floe version" sh -c "'$bin' version | grep -q '^floe '"
		run_once "$arch, static" "$bin"
		# No S3 client in a static floe: an s3:// warehouse is a configuration error.
		printf 'agent: { state_dir: %s }\ninputs: [ { type: tail, paths: [x] } ]\n' "$T/s3state" >"$T/s3.yaml"
		echo 'lake: { warehouse: "s3://bucket/prefix", catalog: { type: s3 } }' >>"$T/s3.yaml"
		rc=0
		"$bin" run --once -c "$T/s3.yaml" >"$T/s3.out" 2>&1 || rc=$?
		check "$arch, static: an s3:// warehouse is refused with exit code 2 ($rc)" test $rc = 2
		check "$arch, static: ... saying the build has no S3" grep -q "no S3 support" "$T/s3.out"
	elif qemu_threads $qemu $triplet -static; then
		run_once "$arch, static, under $qemu" $qemu "$bin"
	else
		echo "skipped: $arch, static: run --once under $qemu (it cannot run a thread here)"
	fi
done
# The README runs floe version under qemu twice per architecture: packaged and static.
want_versions=$((2 * $(echo $arches | wc -w)))
check "floe version under qemu, packaged and static, $arches" \
	test "$(grep -c '^floe [0-9]' "$T/readme.out")" = $want_versions

finish
