#!/usr/bin/env bash
# Parquet read benchmark: floe's streaming reader on the Parquet benchmark's files
# (bench_parquet's generated log rows, written as parquet.sh writes them: 1 MiB budget,
# bloom filters on host and app) per codec and profile: MB/s of the file and rows/s
# read, the reader's peak memory and the process's peak RSS. Then the round trip that
# compaction makes, read + write with floe's writer (same codec and profile, the agent's
# 1 MiB budget), in rows/s, side by side with DuckDB rewriting the same file with one
# thread (COPY (SELECT * FROM read_parquet(...)) TO ... (FORMAT parquet), same codec,
# ZSTD level 3), and their ratio (above 1: floe is faster). floe writes at its profile's
# ZSTD level (default 3, compact 6) unless the run says :LEVEL (zstd/compact:3 is the
# compact profile at DuckDB's level). The rewrite is timed with the writer's page
# compression inline and on THREADS (default 1) worker threads beside it
# (agent.compress_threads). Each time is the best of REPEAT runs (default 3).
# Prints figures only; asserts nothing.
# usage: tests/bench/pq_read.sh [ROWS]   (default 1000000)
# RUNS="zstd zstd/compact:3" limits the codec/profile rows. Needs a build with the
# benchmarks (BUILD=..., default build-test/gcc) and the test readers (node, DuckDB).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
GEN="$BUILD/tests/bench_parquet"
READ="$BUILD/tests/bench_pq_read"
for b in "$GEN" "$READ"; do
	[ -x "$b" ] || { echo "build $b first (cmake --build $BUILD --target $(basename "$b"))"; exit 2; }
done
W=$(mktemp -d /tmp/floe-bench-read.XXXXXX)
trap 'rm -rf "$W"' EXIT
field() { sed -n "s/^\(.* \)\{0,1\}$1=\([^ ]*\).*/\2/p"; }
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1}
# best N COMMAND...: the key=value line of the fastest of N runs.
best() {
	local n=$1 line bl="" bs=""
	shift
	for _ in $(seq "$n"); do
		line=$("$@")
		s=$(echo "$line" | field seconds)
		if [ -z "$bs" ] || [ "$(echo "$s < $bs" | bc -l)" = 1 ]; then bs=$s; bl=$line; fi
	done
	echo "$bl"
}
rows=${1:-1000000}
echo "== $rows rows: read =="
printf '%-16s %9s %8s %8s %11s %12s %9s\n' run "file MB" "read s" "MB/s" "rows/s" \
	"reader KiB" "RSS KiB"
RUNS=${RUNS:-zstd lz4_raw uncompressed zstd/compact zstd/compact:3 lz4_raw/compact}
# parse RUN: sets codec, profile, level ("" = the profile's) and the file f.
parse() {
	local spec=${1%%:*}
	level=""
	[ "$1" != "$spec" ] && level=${1##*:}
	codec=${spec%/*}
	profile=default
	[ "$spec" != "$codec" ] && profile=compact
	f="$W/$codec-$profile.parquet"
}
for run in $RUNS; do
	parse "$run"
	[ -e "$f" ] && continue
	"$GEN" "$rows" "$codec" "$f" --profile "$profile" --budget 1048576 --bloom host,app >/dev/null
	sync
	r=$(best "$REPEAT" "$READ" "$f")
	printf '%-16s %9.1f %8.3f %8.1f %11.0f %12d %9d\n' "${run%%:*}" \
		"$(echo "$(echo "$r" | field file_bytes) / 1000000" | bc -l)" "$(echo "$r" | field seconds)" \
		"$(echo "$r" | field mb_s)" "$(echo "$r" | field rows_s)" \
		"$(($(echo "$r" | field reader_peak) / 1024))" "$(echo "$r" | field rss_kib)"
done

echo
echo "== $rows rows: rewrite (read + write), floe against DuckDB with one thread =="
printf '%-16s %11s %11s %11s %9s %9s %8s %8s %8s\n' run "floe rows/s" "+$THREADS thread" \
	"duck rows/s" "floe RSS" "duck RSS" "speed x" "+thr x" "floe MB"
for run in $RUNS; do
	parse "$run"
	args=("$f" --rewrite "$W/out.parquet" --codec "$codec" --profile "$profile")
	[ -n "$level" ] && args+=(--level "$level")
	fr=$(best "$REPEAT" "$READ" "${args[@]}")
	fp=$(best "$REPEAT" "$READ" "${args[@]}" --threads "$THREADS")
	d=$(best "$REPEAT" node tests/bench/duck_rewrite.js "$f" "$W/duck.parquet" "$codec" 3 122880)
	fs=$(echo "$fr" | field seconds)
	fps=$(echo "$fp" | field seconds)
	ds=$(echo "$d" | field seconds)
	printf '%-16s %11.0f %11.0f %11.0f %9d %9d %8.2f %8.2f %8.1f\n' "$run" "$(echo "$rows / $fs" | bc -l)" \
		"$(echo "$rows / $fps" | bc -l)" "$(echo "$rows / $ds" | bc -l)" "$(echo "$fp" | field rss_kib)" \
		"$(echo "$d" | field rss_kib)" "$(echo "$ds / $fs" | bc -l)" "$(echo "$ds / $fps" | bc -l)" \
		"$(echo "$(echo "$fr" | field out_bytes) / 1000000" | bc -l)"
	echo "                 CPU s: floe $(echo "$fr" | field cpu), with threads $(echo "$fp" | field cpu)," \
		"duck $(echo "$d" | field cpu); reader peak $(($(echo "$fr" | field reader_peak) / 1024)) KiB," \
		"writer peak $(($(echo "$fp" | field writer_peak) / 1024)) KiB; duck MB" \
		"$(printf '%.1f' "$(echo "$(echo "$d" | field bytes) / 1000000" | bc -l)")"
done
