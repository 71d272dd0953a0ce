#!/usr/bin/env bash
# Parquet benchmark, floe side by side with DuckDB (single-threaded COPY) on the same
# rows: bytes per row and rows per second per codec, their ratios, floe's writer peak
# memory and RSS, and the raw lines compressed by zstd -3 and gzip -6 for reference.
# Prints figures only; asserts nothing.
# usage: tests/bench/parquet.sh [ROWS...]   (default 1000000; the issue also uses 10000000)
# Needs a build with the benchmarks (build-test/gcc or BUILD=...) and the test readers.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
BENCH="$BUILD/tests/bench_parquet"
[ -x "$BENCH" ] || { echo "build $BENCH first (cmake --build $BUILD --target bench_parquet)"; exit 2; }
command -v zstd >/dev/null || packaging/dev/install-deps.sh bench
W=$(mktemp -d /tmp/floe-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

for rows in "${@:-1000000}"; do
	echo "== $rows rows =="
	"$BENCH" "$rows" uncompressed "$W/plain.parquet" --raw "$W/raw.txt" >/dev/null
	gen=$("$BENCH" "$rows" zstd /dev/null --gen-only | field seconds)
	raw=$(stat -c %s "$W/raw.txt")
	z3=$(zstd -3 -q -c -T1 "$W/raw.txt" | wc -c)
	g6=$(gzip -6 -c "$W/raw.txt" | wc -c)
	printf '%-28s %12s %10s\n' "reference" "bytes" "bytes/row"
	for r in "raw lines:$raw" "zstd -3:$z3" "gzip -6:$g6"; do
		printf '%-28s %12d %10.1f\n' "${r%%:*}" "${r##*:}" "$(echo "${r##*:} / $rows" | bc -l)"
	done
	printf '\n%-14s %12s %10s %12s %12s %10s %10s %12s %10s\n' codec "floe bytes" "floe B/row" \
		"floe rows/s" "duck bytes" "duck B/row" "duck rows/s" "bytes ratio" "speed x"
	for codec in zstd lz4_raw uncompressed; do
		out=$("$BENCH" "$rows" "$codec" "$W/floe.parquet")
		fs=$(echo "$out" | field seconds); fb=$(echo "$out" | field bytes)
		peak=$(echo "$out" | field writer_peak); rss=$(echo "$out" | field rss_kib)
		fsec=$(echo "$fs - $gen" | bc -l)
		d=$(node tests/bench/duck_copy.js "$W/plain.parquet" "$W/duck.parquet" "$codec" 3 1000000)
		ds=$(echo "$d" | field seconds); db=$(echo "$d" | field bytes)
		printf '%-14s %12d %10.1f %12.0f %12d %10.1f %10.0f %12.3f %10.2f\n' "$codec" "$fb" \
			"$(echo "$fb / $rows" | bc -l)" "$(echo "$rows / $fsec" | bc -l)" "$db" \
			"$(echo "$db / $rows" | bc -l)" "$(echo "$rows / $ds" | bc -l)" \
			"$(echo "$fb / $db" | bc -l)" "$(echo "$ds / $fsec" | bc -l)"
		echo "               floe writer peak $((peak / 1024)) KiB, process RSS $rss KiB (generator included)"
	done
	echo "(floe rows/s exclude the row generator, measured separately at ${gen}s)"
done
