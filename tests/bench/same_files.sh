#!/usr/bin/env bash
# Whether two builds of floe write the same Parquet bytes from the same input: the check
# a change meant to make floe faster without changing what it writes must pass. Runs
# `floe run --once` of each build with a fixed wall clock (tests/clock_shim.c, preloaded, so
# that received_at is the same) over:
# - LINES generated Apache combined lines in every case of typed.sh (cases.sh);
# - each loghub sample in tests/data/loghub (or SAMPLES=dir) with parser none, logfmt and json,
#   syslog_file for Linux and OpenSSH, and a regex for the Apache error log;
# - bench_parquet's writer (when both builds have it) in six ways: the samples verbatim,
#   generated rows in the compact profile, with bloom filters, LZ4 on a worker thread,
#   uncompressed without the page index, and the access lines as messages.
# Prints a line per run, `same` or `DIFFERENT`, and exits 1 if any differ or fail.
# Every file is compared by its digest, in the order of the digests (file names hold
# random ids).
# usage: tests/bench/same_files.sh OLD_BUILD NEW_BUILD [LINES]   (default 100000)
#        (build directories, each with floe; a Release build of each tree, say)
set -uo pipefail
# The syslog_file parser reads times in the system's zone (zone: local): UTC, for both
# builds alike.
export TZ=UTC0
cd "$(dirname "$0")/../.."
[ $# -ge 2 ] || { echo "usage: $0 OLD_BUILD NEW_BUILD [LINES]" >&2; exit 2; }
OLD=$(realpath "$1") NEW=$(realpath "$2") N=${3:-100000}
for b in "$OLD" "$NEW"; do
	[ -x "$b/floe" ] || { echo "no floe in $b" >&2; exit 2; }
done
SAMPLES=${SAMPLES:-tests/data/loghub}
W=$(mktemp -d /tmp/floe-same-files.XXXXXX)
trap 'rm -rf "$W"' EXIT
cc -O2 -shared -fPIC -o "$W/fixed_clock.so" tests/clock_shim.c -ldl ||
	{ echo "cannot build the fixed clock" >&2; exit 2; }
# The wall clock of every run: 2026-11-30T00:53:20.123456Z.
export FLOE_TEST_CLOCK_AT=1796000000.123456
source tests/bench/cases.sh
gen_access "$W/access.log" "$N"

bad=0
# digest DIR: one digest of the digests of DIR's Parquet files, in their order.
digest() { find "$1" -name '*.parquet' -exec sha256sum {} + | cut -d' ' -f1 | sort | sha256sum | cut -c1-16; }
# same NAME CASE LOG: the case's table from both builds.
same() {
	local name=$1 c=$2 log=$3 b d sums=() files
	for b in old new; do
		d=$W/$b/$name
		case_config "$c" "$log" "$d" "compress_threads: 0"
		local floe=$OLD/floe
		[ $b = new ] && floe=$NEW/floe
		if ! LD_PRELOAD="$W/fixed_clock.so" "$floe" run -c "$d/floe.yaml" --once >"$d/log" 2>&1; then
			echo "FAILED     $name ($b build):"; tail -3 "$d/log" | sed 's/^/    /'
			bad=1
			return
		fi
		sums+=("$(digest "$d/warehouse")")
	done
	files=$(find "$W/new/$name/warehouse" -name '*.parquet' | wc -l)
	if [ "${sums[0]}" = "${sums[1]}" ]; then
		echo "same       $name ($files files)"
	else
		echo "DIFFERENT  $name"
		bad=1
	fi
	rm -rf "$W/old/$name" "$W/new/$name"
}

for c in none combined_typed combined_attrs regex_typed combined_unparsed; do
	same "access-$c" "$c" "$W/access.log"
done
for f in "$SAMPLES"/*.log; do
	t=$(basename "$f" .log)
	for c in none logfmt json; do same "$t-$c" "$c" "$f"; done
	case $t in
	Linux* | OpenSSH*) same "$t-syslog" syslog "$f" ;;
	Apache*) same "$t-regex" apache_err "$f" ;;
	esac
done

# bp NAME ROWS CODEC [OPTIONS...]: bench_parquet of both builds.
bp() {
	local name=$1 rows=$2 codec=$3 s1 s2
	shift 3
	if ! LD_PRELOAD="$W/fixed_clock.so" "$OLD/tests/bench_parquet" "$rows" "$codec" "$W/old.parquet" "$@" >/dev/null 2>&1 ||
		! LD_PRELOAD="$W/fixed_clock.so" "$NEW/tests/bench_parquet" "$rows" "$codec" "$W/new.parquet" "$@" >/dev/null 2>&1; then
		echo "FAILED     bench_parquet $name"
		bad=1
		return
	fi
	s1=$(sha256sum <"$W/old.parquet") s2=$(sha256sum <"$W/new.parquet")
	if [ "$s1" = "$s2" ]; then
		echo "same       bench_parquet $name"
	else
		echo "DIFFERENT  bench_parquet $name"
		bad=1
	fi
}
if [ -x "$OLD/tests/bench_parquet" ] && [ -x "$NEW/tests/bench_parquet" ]; then
	bp verbatim 50000 zstd --samples "$SAMPLES" --verbatim
	bp compact 50000 zstd --samples "$SAMPLES" --profile compact
	bp bloom 50000 zstd --samples "$SAMPLES" --bloom host,app
	bp lz4-worker 50000 lz4_raw --samples "$SAMPLES" --threads 1
	bp access-lines 0 zstd --lines "$W/access.log"
	bp uncompressed 50000 uncompressed --samples "$SAMPLES" --no-page-index
else
	echo "skipped    bench_parquet (a build lacks tests/bench_parquet)"
fi
exit $bad
