#!/usr/bin/env bash
# Parquet benchmark, floe side by side with DuckDB (single-threaded COPY) on the same
# rows: bytes per row and rows per second per codec, their ratios, floe's writer peak
# memory and RSS, and the raw lines compressed by zstd -3 and gzip -6 for reference.
# Prints figures only; asserts nothing. Each side's time is the best of REPEAT runs
# (default 3), wall clock and CPU time (both single-threaded). floe writes with a 1 MiB memory budget (BUDGET=
# bytes to change it, 0 for none) and bloom filters on host and app; the rows marked
# /compact use the compact profile (delta encodings, DATA_PAGE_V2, its own ZSTD level).
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
REPEAT=${REPEAT:-3}
# best N COMMAND...: runs COMMAND N times and prints its key=value line with the least
# seconds and the least cpu of the runs (the other fields are the same every run).
best() {
	local n=$1 line s c bs="" bc=""
	shift
	for _ in $(seq "$n"); do
		line=$("$@")
		s=$(echo "$line" | field seconds); c=$(echo "$line" | field cpu)
		if [ -z "$bs" ] || [ "$(echo "$s < $bs" | bc -l)" = 1 ]; then bs=$s; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc -l)" = 1 ]; then bc=$c; fi
	done
	echo "$line" | sed "s/seconds=[^ ]*/seconds=$bs/; s/cpu=[^ ]*/cpu=$bc/"
}

for rows in "${@:-1000000}"; do
	echo "== $rows rows =="
	"$BENCH" "$rows" uncompressed "$W/plain.parquet" --raw "$W/raw.txt" >/dev/null
	genout=$(best "$REPEAT" "$BENCH" "$rows" zstd /dev/null --gen-only)
	gen=$(echo "$genout" | field seconds)
	gencpu=$(echo "$genout" | field cpu)
	raw=$(stat -c %s "$W/raw.txt")
	z3=$(zstd -3 -q -c -T1 "$W/raw.txt" | wc -c)
	g6=$(gzip -6 -c "$W/raw.txt" | wc -c)
	printf '%-28s %12s %10s\n' "reference" "bytes" "bytes/row"
	for r in "raw lines:$raw" "zstd -3:$z3" "gzip -6:$g6"; do
		printf '%-28s %12d %10.1f\n' "${r%%:*}" "${r##*:}" "$(echo "${r##*:} / $rows" | bc -l)"
	done
	printf '\n%-14s %12s %10s %12s %12s %10s %10s %12s %10s\n' codec "floe bytes" "floe B/row" \
		"floe rows/s" "duck bytes" "duck B/row" "duck rows/s" "bytes ratio" "speed x"
	for run in zstd lz4_raw uncompressed zstd/compact lz4_raw/compact; do
		codec=${run%/*}
		profile=default
		[ "$run" != "$codec" ] && profile=compact
		# Best of REPEAT runs, each side: on a shared machine the other runs only add noise.
		out=$(best "$REPEAT" "$BENCH" "$rows" "$codec" "$W/floe.parquet" --profile "$profile" \
			--budget "${BUDGET:-1048576}" --bloom host,app)
		fs=$(echo "$out" | field seconds); fb=$(echo "$out" | field bytes)
		peak=$(echo "$out" | field writer_peak); rss=$(echo "$out" | field rss_kib)
		fsec=$(echo "$fs - $gen" | bc -l)
		d=$(best "$REPEAT" node tests/bench/duck_copy.js "$W/plain.parquet" "$W/duck.parquet" "$codec" 3 1000000)
		ds=$(echo "$d" | field seconds); db=$(echo "$d" | field bytes)
		printf '%-14s %12d %10.1f %12.0f %12d %10.1f %10.0f %12.3f %10.2f\n' "$run" "$fb" \
			"$(echo "$fb / $rows" | bc -l)" "$(echo "$rows / $fsec" | bc -l)" "$db" \
			"$(echo "$db / $rows" | bc -l)" "$(echo "$rows / $ds" | bc -l)" \
			"$(echo "$fb / $db" | bc -l)" "$(echo "$ds / $fsec" | bc -l)"
		echo "               floe writer peak $((peak / 1024)) KiB, process RSS $rss KiB (generator included)"
		fc=$(echo "$(echo "$out" | field cpu) - $gencpu" | bc -l); dc=$(echo "$d" | field cpu)
		printf '               by CPU time: floe %.0f rows/s, duck %.0f rows/s, speed x %.2f\n' \
			"$(echo "$rows / $fc" | bc -l)" "$(echo "$rows / $dc" | bc -l)" "$(echo "$dc / $fc" | bc -l)"
	done
	echo "(floe rows/s exclude the row generator, measured separately at ${gen}s)"
done
