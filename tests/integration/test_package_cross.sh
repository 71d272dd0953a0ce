#!/usr/bin/env bash
# The arm64 and armhf Debian packages, cross-built by packaging/deb/build.sh (lintian
# clean): their control data and contents, and the packaged binary under qemu-user:
# floe version, floe check on the shipped configuration, and run --once over a sample
# log into a table. Prints each architecture's stripped binary size. Needs dpkg-dev,
# debhelper, the cross toolchains, multiarch libraries and qemu-user
# (packaging/dev/install-deps.sh test); skipped without them (exit 77).
source "$(dirname "$0")/lib.sh"

for tool in dpkg-buildpackage dh qemu-aarch64 qemu-arm aarch64-linux-gnu-gcc arm-linux-gnueabihf-gcc; do
	command -v $tool >/dev/null || { echo "skipped: $tool is missing"; exit 77; }
done
for arch in arm64 armhf; do
	why=$("$FLOE_SRC/packaging/dev/install-deps.sh" cross-ready $arch 2>&1) ||
		{ echo "skipped: $why"; exit 77; }
done

OUT=$T/deb
mkdir -p "$OUT"
SAMPLE=$FLOE_SRC/tests/data/loghub/Linux_2k.log
# Its last line has no newline: run --once takes it too (awk counts it, wc -l does not).
want_rows=$(awk 'END { print NR }' "$SAMPLE")

# qemu_threads TRIPLET QEMU: whether the emulator runs a program that starts and joins one
# thread (within 10 s).
qemu_threads() {
	local src=$T/probe.c exe=$T/probe-$1
	printf '%s\n' '#include <pthread.h>' 'static void *f(void *a) { return a; }' \
		'int main(void) { pthread_t t; return pthread_create(&t, 0, f, 0) || pthread_join(t, 0); }' >"$src"
	"$1-gcc" -pthread -o "$exe" "$src" && timeout -k 1 10 "$2" -L "/usr/$1" "$exe" >/dev/null 2>&1
}

for arch in arm64 armhf; do
	case $arch in
	arm64) triplet=aarch64-linux-gnu qemu=qemu-aarch64 ;;
	armhf) triplet=arm-linux-gnueabihf qemu=qemu-arm ;;
	esac
	start_s=$(date +%s)
	rc=0
	FLOE_DEB_OUT=$OUT "$FLOE_SRC/packaging/deb/build.sh" $arch >"$T/build-$arch.out" 2>&1 || rc=$?
	check "$arch: build.sh builds a lintian-clean package ($(($(date +%s) - start_s)) s)" test $rc = 0
	[ $rc = 0 ] || { cat "$T/build-$arch.out"; continue; }
	deb=$(ls "$OUT"/floe_*_$arch.deb)
	check "$arch: dpkg-deb --info: Architecture $arch" test "$(dpkg-deb -f "$deb" Architecture)" = $arch
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
	x=$T/x-$arch
	dpkg-deb -x "$deb" "$x"
	bin=$x/usr/bin/floe
	size=$(stat -c %s "$bin")
	echo "binary size, stripped, $arch: $size bytes ($(awk -v s="$size" 'BEGIN { printf "%.2f", s / 1048576 }') MiB)"
	check "$arch: the packaged binary is an ELF for $triplet, stripped" \
		sh -c "file '$bin' | grep -q 'ELF' && ! file '$bin' | grep -q 'not stripped'"
	emu() { $qemu -L /usr/$triplet "$@"; }
	check "$arch: floe version under $qemu" sh -c "$qemu -L /usr/$triplet '$bin' version | grep -q floe"
	rc=0
	emu "$bin" check -c "$x/etc/floe/floe.yaml" >"$T/check-$arch.out" 2>&1 || rc=$?
	check "$arch: floe check on the shipped configuration" test $rc = 0
	[ $rc = 0 ] || cat "$T/check-$arch.out"
	# floe run starts threads (the committer, and compression threads when set), and
	# Debian 12's qemu-user 7.2 hangs (arm64) or crashes (armhf) in pthread_create on this
	# kind of machine. A two-line probe decides: where the emulator can run a thread, the
	# packaged binary runs --once over the sample; where it cannot, that step is skipped
	# with the reason, and the arm64/armhf unit tests are the check of the code itself.
	if ! qemu_threads "$triplet" "$qemu"; then
		echo "skipped: $arch: run --once under $qemu (this qemu-user cannot run a thread: a pthread_create probe did not return)"
		continue
	fi
	d=$T/run-$arch
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<YAML
agent: { state_dir: $d/state }
inputs: [ { type: tail, paths: ["$SAMPLE"], start_at: beginning } ]
YAML
	rc=0
	timeout -k 5 120 $qemu -L /usr/$triplet "$bin" run -c "$d/floe.yaml" --once \
		>"$d/run.out" 2>&1 || rc=$?
	check "$arch: run --once over a sample log" test $rc = 0
	[ $rc = 0 ] || tail -20 "$d/run.out"
	rows=$("$FLOE_BIN" inspect "$d/state/warehouse/default/logs" 2>/dev/null |
		awk '/\(current\)/ { c = 1 } c && /total-records=/ { sub(/.*total-records=/, ""); print; exit }')
	check "$arch: the table holds the sample's $want_rows lines ($rows)" test "$rows" = "$want_rows"
done
finish
