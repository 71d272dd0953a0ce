#!/usr/bin/env bash
# Parquet benchmark, floe side by side with DuckDB (single-threaded COPY) on the same
# rows: bytes per row and rows per second per codec, their ratios, floe's writer peak
# memory and RSS, and the raw lines compressed by zstd -3 and gzip -6 for reference.
# Prints figures only; asserts nothing. Each side's time is the best of REPEAT runs
# (default 3), wall clock and CPU time. floe is timed single-threaded and with THREADS
# (default 1) page compression threads beside its own (agent.compress_threads); DuckDB's
# COPY runs with threads=1. floe writes with a 1 MiB memory budget (BUDGET= bytes to
# change it, 0 for none) and bloom filters on host and app; the rows marked /compact use
# the compact profile (delta encodings, DATA_PAGE_V2, its own ZSTD level).
# usage: tests/bench/parquet.sh [ROWS...]   (default 1000000; the issue also uses 10000000)
# RUNS="zstd zstd/compact" limits the codec/profile rows. Then, unless VERBATIM=0, the
# sizes for the loghub samples as they are, and unless FRAGMENTS=0, the peak memory of
# writing a 16 MiB and a 512 MiB fragment.
# Needs a build with the benchmarks (build-test/gcc or BUILD=...) and the test readers.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
BENCH="$BUILD/tests/bench_parquet"
[ -x "$BENCH" ] || { echo "build $BENCH first (cmake --build $BUILD --target bench_parquet)"; exit 2; }
command -v zstd >/dev/null || packaging/dev/install-deps.sh bench
W=$(mktemp -d /tmp/floe-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
# field KEY: the value of KEY=... in a key=value line (KEY whole: cpu is not main_cpu).
field() { sed -n "s/^\(.* \)\{0,1\}$1=\([^ ]*\).*/\2/p"; }
REPEAT=${REPEAT:-3}
THREADS=${THREADS:-1}
# best N COMMAND...: runs COMMAND N times and prints its key=value line with the least
# seconds, cpu and main_cpu of the runs (the other fields are the same every run).
best() {
	local n=$1 line s c m bs="" bc="" bm=""
	shift
	for _ in $(seq "$n"); do
		line=$("$@")
		s=$(echo "$line" | field seconds); c=$(echo "$line" | field cpu)
		m=$(echo "$line" | field main_cpu)
		if [ -z "$bs" ] || [ "$(echo "$s < $bs" | bc -l)" = 1 ]; then bs=$s; fi
		if [ -z "$bc" ] || [ "$(echo "$c < $bc" | bc -l)" = 1 ]; then bc=$c; fi
		if [ -n "$m" ] && { [ -z "$bm" ] || [ "$(echo "$m < $bm" | bc -l)" = 1 ]; }; then bm=$m; fi
	done
	echo "$line" | sed "s/seconds=[^ ]*/seconds=$bs/; s/ cpu=[^ ]*/ cpu=$bc/; s/main_cpu=[^ ]*/main_cpu=$bm/"
}

for rows in "${@:-1000000}"; do
	echo "== $rows rows =="
	"$BENCH" "$rows" uncompressed "$W/plain.parquet" --raw "$W/raw.txt" >/dev/null
	raw=$(stat -c %s "$W/raw.txt")
	z3=$(zstd -3 -q -c -T1 "$W/raw.txt" | wc -c)
	g6=$(gzip -6 -c "$W/raw.txt" | wc -c)
	printf '%-28s %12s %10s\n' "reference" "bytes" "bytes/row"
	for r in "raw lines:$raw" "zstd -3:$z3" "gzip -6:$g6"; do
		printf '%-28s %12d %10.1f\n' "${r%%:*}" "${r##*:}" "$(echo "${r##*:} / $rows" | bc -l)"
	done
	printf '\n%-16s %11s %6s %11s %11s %11s %6s %11s %7s %7s %7s\n' codec "floe bytes" "B/row" \
		"floe rows/s" "+${THREADS} thread" "duck bytes" "B/row" "duck rows/s" "bytes x" "speed x" "+thr x"
	# The files just written (GBs at 10M rows) reach the disk before any clock starts:
	# the kernel's writeback would otherwise share the CPUs with the first runs timed.
	sync
	for run in ${RUNS:-zstd lz4_raw uncompressed zstd/compact lz4_raw/compact}; do
		codec=${run%/*}
		profile=default
		[ "$run" != "$codec" ] && profile=compact
		args=("$rows" "$codec" "$W/floe.parquet" --profile "$profile" --budget "${BUDGET:-1048576}" --bloom host,app)
		# Timed on rows generated in memory beforehand (--pregen), as DuckDB's COPY is timed
		# on a table already loaded; best of REPEAT runs each, single-threaded and with
		# THREADS compression threads.
		one=$(best "$REPEAT" "$BENCH" "${args[@]}" --pregen --threads 0)
		par=$(best "$REPEAT" "$BENCH" "${args[@]}" --pregen --threads "$THREADS")
		# Memory from a streaming run (rows generated as they are written).
		mem=$("$BENCH" "${args[@]}" --threads "$THREADS")
		fb=$(echo "$one" | field bytes)
		f1=$(echo "$one" | field seconds); fp=$(echo "$par" | field seconds)
		d=$(best "$REPEAT" node tests/bench/duck_copy.js "$W/plain.parquet" "$W/duck.parquet" "$codec" 3 1000000)
		ds=$(echo "$d" | field seconds); db=$(echo "$d" | field bytes)
		printf '%-16s %11d %6.1f %11.0f %11.0f %11d %6.1f %11.0f %7.3f %7.2f %7.2f\n' "$run" "$fb" \
			"$(echo "$fb / $rows" | bc -l)" "$(echo "$rows / $f1" | bc -l)" "$(echo "$rows / $fp" | bc -l)" \
			"$db" "$(echo "$db / $rows" | bc -l)" "$(echo "$rows / $ds" | bc -l)" \
			"$(echo "$fb / $db" | bc -l)" "$(echo "$ds / $f1" | bc -l)" "$(echo "$ds / $fp" | bc -l)"
		fc=$(echo "$one" | field cpu); fpc=$(echo "$par" | field cpu); dc=$(echo "$d" | field cpu)
		fpm=$(echo "$par" | field main_cpu)
		printf '                 CPU s: floe %.2f, with threads %.2f (%.2f of it on the calling thread), duck %.2f (duck/floe %.2f)\n' \
			"$fc" "$fpc" "$fpm" "$dc" "$(echo "$dc / $fc" | bc -l)"
		echo "                 writer peak $(($(echo "$mem" | field writer_peak) / 1024)) KiB with" \
			"$THREADS thread(s), process RSS $(echo "$mem" | field rss_kib) KiB (generator included)"
	done
done

# The loghub samples as they are: each line once, digits unchanged, no request id. Too
# few rows to time; their sizes show what the profiles do to real log text.
if [ "${VERBATIM:-1}" = 1 ]; then
	echo "== the loghub samples as they are (each line once; sizes only) =="
	"$BENCH" 1000000 uncompressed "$W/vplain.parquet" --verbatim --raw "$W/vraw.txt" >/dev/null
	vrows=$(wc -l <"$W/vraw.txt")
	printf '%-28s %12s %10s %10s\n' "$vrows rows" bytes bytes/row "vs duck"
	node tests/bench/duck_copy.js "$W/vplain.parquet" "$W/vduck.parquet" zstd 3 1000000 >/dev/null
	vd=$(stat -c %s "$W/vduck.parquet")
	for r in "DuckDB zstd:$vd" \
		"floe zstd:$("$BENCH" 1000000 zstd "$W/v.parquet" --verbatim --bloom host,app | field bytes)" \
		"floe zstd/compact:$("$BENCH" 1000000 zstd "$W/v.parquet" --verbatim --profile compact --bloom host,app | field bytes)" \
		"raw lines, zstd -3:$(zstd -3 -q -c -T1 "$W/vraw.txt" | wc -c)" \
		"raw lines, gzip -6:$(gzip -6 -c "$W/vraw.txt" | wc -c)"; do
		printf '%-28s %12d %10.1f %10.3f\n' "${r%%:*}" "${r##*:}" "$(echo "${r##*:} / $vrows" | bc -l)" \
			"$(echo "${r##*:} / $vd" | bc -l)"
	done
fi

# Fixed memory: a 16 MiB and a 512 MiB fragment (ZSTD, default profile, rows generated as
# they are written), the writer's peak and the process's peak RSS for each.
if [ "${FRAGMENTS:-1}" = 1 ]; then
	echo "== fixed memory: a 16 MiB and a 512 MiB fragment (zstd, default profile) =="
	probe=$("$BENCH" 200000 zstd "$W/floe.parquet" --budget "${BUDGET:-1048576}" --bloom host,app)
	per=$(echo "$probe" | field bytes)
	printf '%-10s %10s %12s %16s %14s\n' fragment rows "file bytes" "writer peak KiB" "peak RSS KiB"
	for mib in 16 512; do
		n=$(echo "$mib * 1048576 * 200000 / $per" | bc)
		m=$("$BENCH" "$n" zstd "$W/floe.parquet" --budget "${BUDGET:-1048576}" --bloom host,app --threads "$THREADS")
		printf '%-10s %10d %12d %16d %14d\n' "$mib MiB" "$n" "$(echo "$m" | field bytes)" \
			"$(($(echo "$m" | field writer_peak) / 1024))" "$(echo "$m" | field rss_kib)"
		rm -f "$W/floe.parquet"
	done
fi
