#!/usr/bin/env bash
# Data file size by row count, floe against DuckDB: N loghub-like lines (bench_gen over
# tests/data/loghub) go through `floe run --once` with every default (bloom filters on
# host and app, zstd), and DuckDB rewrites the same rows and columns (read from floe's
# file) with zstd at the same level. Prints, per row count, floe's and DuckDB's bytes,
# their ratio, and the bytes of the bloom filters in each (parquet_metadata). Asserts
# nothing.
# usage: tests/bench/bloom_sizes.sh [ROWS...]   (default 1 10 100 1000 100000)
# Needs floe and bench_gen built (BUILD=build by default) and the DuckDB reader's
# node_modules (tests/integration/reader); KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
FLOE="$BUILD/floe"
GEN="$BUILD/tests/bench_gen"
for b in "$FLOE" "$GEN"; do
	[ -x "$b" ] || { echo "build $b first (cmake --build $BUILD --target floe bench_gen)"; exit 2; }
done
FLOE=$(realpath "$FLOE")
GEN=$(realpath "$GEN")
DUCK="$(realpath tests/integration/reader/duck.js)"
[ -d tests/integration/reader/node_modules/@duckdb/node-api ] || {
	echo "npm ci in tests/integration/reader first (DuckDB)"
	exit 2
}
ROWS=("$@")
[ ${#ROWS[@]} -gt 0 ] || ROWS=(1 10 100 1000 100000)
W=$(mktemp -d /tmp/floe-bench-bloom.XXXXXX)
cleanup() { if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $W"; else rm -rf "$W"; fi; }
trap cleanup EXIT

max=0
for n in "${ROWS[@]}"; do [ "$n" -gt "$max" ] && max=$n; done
# About 140 bytes a line: ask for enough, then cut whole lines.
"$GEN" "$W/all.log" $((max * 200 + 4096)) --samples tests/data/loghub >/dev/null
duck() { (cd tests/integration/reader && node "$DUCK" "$@"); }

printf '%8s %12s %12s %7s %12s %12s\n' rows "floe bytes" "duckdb bytes" ratio \
	"floe bloom" "duckdb bloom"
for n in "${ROWS[@]}"; do
	d="$W/$n"
	mkdir -p "$d/in"
	head -n "$n" "$W/all.log" >"$d/in/x.log"
	cat >"$d/floe.yaml" <<-EOF
	agent:
	  id: bench
	  state_dir: $d/state
	inputs:
	  - type: tail
	    paths: ["$d/in/x.log"]
	    start_at: beginning
	lake:
	  warehouse: $d/wh
	EOF
	if ! "$FLOE" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"; then
		printf '%8s failed: %s\n' "$n" "$(tail -1 "$d/err")"
		continue
	fi
	mapfile -t files < <(find "$d/wh" -path '*/data/*' -name '*.parquet' | sort)
	[ ${#files[@]} -gt 0 ] || { printf '%8s no data file\n' "$n"; continue; }
	list=$(printf "'%s'," "${files[@]}")
	list="[${list%,}]"
	fb=$(cat "${files[@]}" | wc -c)
	duck "copy (select * from read_parquet($list)) to '$d/duck.parquet'
		(format parquet, compression zstd, compression_level 3)" >/dev/null
	db=$(wc -c <"$d/duck.parquet")
	bloom() {
		duck "select coalesce(sum(bloom_filter_length), 0) from parquet_metadata($1)" |
			tr -d '[]"'
	}
	printf '%8s %12s %12s %7s %12s %12s\n' "$n" "$fb" "$db" \
		"$(awk -v a="$fb" -v b="$db" 'BEGIN { printf "%.2f", a / b }')" \
		"$(bloom "$list")" "$(bloom "'$d/duck.parquet'")"
done
