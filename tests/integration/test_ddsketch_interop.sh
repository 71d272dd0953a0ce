#!/usr/bin/env bash
# DDSketch interop: floe's protobuf images decoded by Datadog's sketches-js (npm) give
# floe's quantiles; the windows merged by sketches-js give floe's merged quantiles and
# stay within the 1 % accuracy of DuckDB's exact quantile_disc over the union of the raw
# values. The images come from bench_sketch's dds-interop mode.
. "$(dirname "$0")/lib.sh"

BENCH="$FLOE_BUILD/tests/bench_sketch"
mkdir -p "$T/dds"
check "bench_sketch writes the windows" "$BENCH" dds-interop "$T/dds"

# quantile_disc picks the element at rank floor(q (n - 1)), as the sketches do.
qs=$(node -e 'console.log(JSON.stringify(JSON.parse(require("fs").readFileSync(process.argv[1])).qs))' "$T/dds/c.json")
duck "SELECT quantile_disc(v, $qs) FROM read_csv('$T/dds/w*.txt', columns = {'v': 'DOUBLE'}, header = false)" >"$T/exact.json"
check "DuckDB read $(cat "$T"/dds/w*.txt | wc -l) values" test -s "$T/exact.json"

if node "$READER/check_ddsketch.js" "$T/dds" "$T/exact.json" >"$T/check.out" 2>&1; then
	pass "sketches-js: $(grep -c '^ok' "$T/check.out") checks, $(grep '^# worst' "$T/check.out" | sed 's/^# //')"
else
	cat "$T/check.out"
	fail "sketches-js checks"
fi
finish
