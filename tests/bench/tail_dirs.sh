#!/usr/bin/env bash
# Directory-watch benchmark: what floe's tail costs in CPU with a Kubernetes-like log tree,
# pods/POD/CONTAINER/0.log globbed as pods/*/*/*.log, so that every pod's and container's
# directory is watched (tail_watch.c), while a writer appends a line to every file once a
# second. For each count of watched directories in DIRS (half pods, half containers, one
# log file per container), floe runs as a daemon into a local warehouse; after SETTLE
# seconds its CPU time (every thread, /proc/PID/task/*/schedstat) is taken over SECONDS.
# Prints one line per count: directories, files, CPU seconds, and lines read. Asserts
# nothing; not run by ctest.
# usage: tests/bench/tail_dirs.sh [FLOE_BIN]   (default $BUILD/floe, BUILD=build-test/gcc)
#        env: DIRS (default "200 2000"), SECONDS_RUN (default 22), SETTLE (default 3),
#        OPEN (the input's max_open_files; default floe's 256, below the 1,000 files of
#        DIRS=2000: appends to parked files then cost an open each), KEEP=1 keeps the work
#        directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE=${1:-$BUILD/floe}
[ -x "$FLOE" ] || { echo "no floe binary at $FLOE (cmake --build $BUILD --target floe)"; exit 2; }
FLOE=$(realpath "$FLOE")
DIRS=${DIRS:-"200 2000"}
SECONDS_RUN=${SECONDS_RUN:-22}
SETTLE=${SETTLE:-3}
OPEN=${OPEN:-}
. tests/bench/daemons.sh
bench_workdir tail-dirs
WRITER=

ns_of() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }

stop() {
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# The writer: appends a line to every file under $1 once a second, for at most $2 seconds
# (bounded even if this script is killed), keeping the files open as a container runtime
# does. Run in the background, it is the python process itself ($!), stopped by its PID.
write_all() {
	exec python3 - "$1" "$2" <<-'EOF'
	import glob, sys, time
	files = [open(p, "a") for p in sorted(glob.glob(sys.argv[1] + "/*/*/0.log"))]
	end = time.monotonic() + float(sys.argv[2])
	n = 0
	while time.monotonic() < end:
	    t0 = time.monotonic()
	    for f in files:
	        f.write("2026-12-07T10:00:00Z stdout F line %d of a container\n" % n)
	        f.flush()
	    n += 1
	    time.sleep(max(0.0, 1.0 - (time.monotonic() - t0)))
	EOF
}

printf '%8s %7s %12s %12s\n' dirs files "CPU s" lines
for n in $DIRS; do
	d=$W/run-$n
	pods=$((n / 2))
	mkdir -p "$d/pods"
	for i in $(seq 1 "$pods"); do
		mkdir -p "$d/pods/ns_pod-$i/app"
		echo "2026-12-07T10:00:00Z stdout F first line" >"$d/pods/ns_pod-$i/app/0.log"
	done
	cat >"$d/floe.yaml" <<-EOF
	agent:
	  id: bench
	  state_dir: $d/state
	inputs:
	  - type: tail
	    paths: ["$d/pods/*/*/*.log"]
	    start_at: beginning
	    ${OPEN:+max_open_files: $OPEN}
	tables:
	  logs:
	    codec: zstd
	lake:
	  warehouse: $d/warehouse
	EOF
	write_all "$d/pods" $((SETTLE + SECONDS_RUN + 10)) &
	WRITER=$!
	"$FLOE" run -c "$d/floe.yaml" >"$d/log" 2>&1 &
	DAEMON=$!
	for _ in $(seq 1 200); do
		grep -q " started " "$d/log" && break
		sleep 0.05
	done
	sleep "$SETTLE"
	ns0=$(ns_of "$DAEMON")
	sleep "$SECONDS_RUN"
	if ! kill -0 "$DAEMON" 2>/dev/null; then
		echo "floe exited during the measurement of $n directories:"
		tail -5 "$d/log"
		exit 1
	fi
	ns1=$(ns_of "$DAEMON")
	stop "$DAEMON"
	DAEMON=
	kill "$WRITER" 2>/dev/null || true
	wait "$WRITER" 2>/dev/null || true
	WRITER=
	lines=$(sed -n 's/.*"lines":\([0-9]*\).*/\1/p' "$d/state/metrics.json" 2>/dev/null | head -1)
	printf '%8d %7d %12s %12s\n' "$n" "$pods" \
		"$(awk -v d=$((ns1 - ns0)) 'BEGIN { printf "%.3f", d / 1e9 }')" "${lines:-?}"
	rm -rf "$d"
done
