#!/usr/bin/env bash
# File-size benchmark: 1 GiB of log lines (tests/bench/bench_gen.c) into a local table with
# every default (target_file_size 64 MiB) at memory_limit 8, 32 and 128 MiB, run once
# each with --once. Prints, per memory limit, the seals, the wall time and the size
# distribution of the data files (count, min, p10, median, p90, max, total, from
# `floe inspect`). Files should reach the target unless the end of the input (or a commit
# interval, or a partition boundary) closes them. Asserts nothing.
# usage: tests/bench/file_sizes.sh [BYTES]   (default 1073741824)
# Needs a build with the benchmarks (build-test/gcc or BUILD=...); LIMITS="8MiB 32MiB"
# changes the memory limits, KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE="$BUILD/floe"
GEN="$BUILD/tests/bench_gen"
for b in "$FLOE" "$GEN"; do
	[ -x "$b" ] || { echo "build $b first (cmake --build $BUILD --target floe bench_gen)"; exit 2; }
done
FLOE=$(realpath "$FLOE")
GEN=$(realpath "$GEN")
BYTES=${1:-1073741824}
LIMITS=${LIMITS:-8MiB 32MiB 128MiB}
W=$(mktemp -d /tmp/floe-bench-sizes.XXXXXX)
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $W"; else rm -rf "$W"; fi; }
trap cleanup EXIT

mkdir -p "$W/in"
echo "generated: $("$GEN" "$W/in/big.log" "$BYTES" --samples tests/data/loghub)"
printf '%-14s %6s %8s  %s\n' memory_limit seals "wall s" "data files (MB)"
for m in $LIMITS; do
	d="$W/$m"
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<-EOF
	agent:
	  id: bench
	  state_dir: $d/state
	  memory_limit: $m
	inputs:
	  - type: tail
	    paths: ["$W/in/big.log"]
	    start_at: beginning
	lake:
	  warehouse: $d/wh
	EOF
	cat "$W/in/big.log" >/dev/null
	t0=$(date +%s.%N)
	if ! "$FLOE" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"; then
		printf '%-14s failed: %s\n' "$m" "$(tail -1 "$d/err")"
		continue
	fi
	t1=$(date +%s.%N)
	seals=$(sed -n 's/.*"seals":\([0-9]*\).*/\1/p' "$d/state/metrics.json")
	dist=$("$FLOE" inspect "$d/wh/default/logs" | sed -n 's/^live file-sizes //p' | awk '{
		for (i = 1; i <= NF; i++) {
			split($i, kv, "=")
			printf "%s%s=%s", (i > 1 ? " " : ""), kv[1], (kv[1] == "count" ? kv[2] : sprintf("%.1f", kv[2] / 1e6))
		} }')
	printf '%-14s %6s %8.2f  %s\n' "$m" "$seals" "$(echo "$t1 - $t0" | bc -l)" "$dist"
	rm -rf "$d"
done
echo "(target_file_size 64 MiB = 67.1 MB)"
