#!/usr/bin/env bash
# Aggregation benchmark, floe side by side with DuckDB on the same events:
# events per CPU second through three group keys (one-minute windows, count, sum,
# quantiles 0.5/0.9/0.99, distinct) for 1,000 and 10,000,000 distinct key combinations,
# DuckDB computing the same GROUP BY with threads=1, approx_quantile and
# approx_count_distinct over the events bench_aggregate generated (loaded untimed), the
# ratio, and floe's peak RSS for both. DuckDB's approx_count_distinct keeps 64 registers
# (HyperLogLog precision 6, about 13 % standard error) where floe's default keeps 16,384
# (precision 14, 0.8 %): the 1,000-key run is also made at floe's precision 6, for the
# ratio at equal sketch sizes. floe keeps max_groups 1000 per window and puts
# the rest in __overflow__, where DuckDB keeps every group: the figures say so. Then the
# bytes one hour of input puts in the raw table and in aggregate tables, on the OpenSSH
# loghub sample (4.15 hours of event time). Then small groups (below, EVENTS_G): the
# aggregate table's bytes against the raw table's when most groups see an event or two.
# Then typed events (first, and alone with ONLY=typed): EVENTS_T (default 2,000,000) typed
# rows, keys a and b ints and c a string, v and u longs, 1,000 groups, the same metrics:
# floe's aggregator against DuckDB's single-threaded GROUP BY over the same typed table,
# with approx_quantile and approx_count_distinct and exact (quantile_disc,
# count(DISTINCT)), events per CPU second and the ratios, at floe's precision 14 and at 6
# (DuckDB's HLL size); then the class around it, floe alone: few groups (10), skewed keys,
# and many keys (100,000 of them over max_groups 1,000: the rest in __overflow__).
# Before the speeds, the sketches' errors on those rows against DuckDB's exact answer
# (quantile_disc, count(DISTINCT)), per group: DuckDB's approx_count_distinct (HyperLogLog
# of 64 registers, DuckDB 1.x) and approx_quantile (a t-digest of compression 100) beside
# floe's HLL at precision 14 (the default), 12 and 6 and its DDSketch (1 %); and the groups
# whose count or sum differ from the exact ones (none should).
# Prints figures only; asserts nothing. ONLY=groups runs the small groups alone.
# usage: tests/bench/aggregate.sh [EVENTS]   (default 1,000,000: DuckDB holds a quantile
# sketch for each of the ~1 M groups of the 10 M-key run: 7 GiB of RSS)
# Needs a build with the benchmarks (build-test/gcc or BUILD=...) and the test readers.
# To compare two trees, run it with BUILD= each tree's build in turn (alternated: the
# machine's load moves the figures more than most changes do), and check that the rows
# did not change with FLOE_BENCH_DIGEST=1 bench_aggregate (its header); the figures of
# each change are in agent/agg/README.md.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
BENCH="$BUILD/tests/bench_aggregate"
FLOE="$BUILD/floe"
[ -x "$BENCH" ] && [ -x "$FLOE" ] ||
	{ echo "build $BENCH and $FLOE first (cmake --build $BUILD --target bench_aggregate floe)"; exit 2; }
EVENTS=${1:-1000000}
W=$(mktemp -d /tmp/floe-bench.XXXXXX)
trap 'rm -rf "$W"' EXIT
field() { sed -n "s/^\(.* \)\{0,1\}$1=\([^ ]*\).*/\2/p"; }

# Typed events: floe against DuckDB on the same typed rows.
typed() {
	local n=$EVENTS_T f f6 d dcpu ecpu cpu cpu6
	echo "# $n typed events (a, b int; c string; v, u long), 1,000 groups: count, sum, quantiles, distinct"
	f=$("$BENCH" 1000 "$n" "$W/typed.csv" 14 typed "$W/p14.csv" | head -1)
	f6=$("$BENCH" 1000 "$n" - 6 typed "$W/p6.csv" | head -1)
	"$BENCH" 1000 "$n" - 12 typed "$W/p12.csv" >/dev/null
	d=$(node tests/bench/duck_aggregate.js "$W/typed.csv" typed \
		"floe-p14=$W/p14.csv,floe-p12=$W/p12.csv,floe-p6=$W/p6.csv")
	rm -f "$W/typed.csv" "$W"/p*.csv
	echo "$d" | sed -n 's/^error /error  /p'
	d=$(echo "$d" | head -1)
	cpu=$(echo "$f" | sed -n 's/.* events in \([0-9.]*\) CPU s.*/\1/p')
	cpu6=$(echo "$f6" | sed -n 's/.* events in \([0-9.]*\) CPU s.*/\1/p')
	dcpu=$(echo "$d" | field cpu)
	ecpu=$(echo "$d" | field exact_cpu)
	echo "floe   $f"
	echo "floe   $f6 (distinct at precision 6, DuckDB's 64 registers)"
	echo "duckdb typed: $d"
	printf 'duckdb typed: approx %.2f M events/s, exact %.2f M events/s\n' \
		"$(echo "$n / $dcpu / 1000000" | bc -l)" "$(echo "$n / $ecpu / 1000000" | bc -l)"
	printf 'ratio  typed: floe / DuckDB approx = %.2f (p 14), %.2f (p 6); floe / DuckDB exact = %.2f (p 14), %.2f (p 6); target >= 3\n' \
		"$(echo "$dcpu / $cpu" | bc -l)" "$(echo "$dcpu / $cpu6" | bc -l)" \
		"$(echo "$ecpu / $cpu" | bc -l)" "$(echo "$ecpu / $cpu6" | bc -l)"
	for c in "10 typed" "1000 typed-skew" "100000 typed"; do
		set -- $c
		echo "floe   $("$BENCH" "$1" "$n" - 14 "$2" | head -1)"
	done
}
EVENTS_T=${EVENTS_T:-2000000}
case "${ONLY:-}" in
typed) typed; exit 0 ;;
groups) ;;
*) typed ;;
esac

[ "${ONLY:-}" = groups ] || {
echo "# $EVENTS events, 3 group keys, count + sum + quantiles + distinct, 1-minute windows"
for keys in 1000 10000000; do
	f=$("$BENCH" "$keys" "$EVENTS" "$W/events.csv")
	echo "$f" | sed 's/^/floe   /'
	cpu=$(echo "$f" | sed -n 's/.* events in \([0-9.]*\) CPU s.*/\1/p')
	d=$(node tests/bench/duck_aggregate.js "$W/events.csv")
	dcpu=$(echo "$d" | field cpu)
	echo "duckdb keys $keys: $d: $(echo "scale=2; $EVENTS / $dcpu / 1000000" | bc -l) M events/s"
	echo "ratio  keys $keys: floe / DuckDB events per CPU second = $(echo "scale=2; $dcpu / $cpu" | bc -l)"
	if [ "$keys" = 1000 ]; then
		f6=$("$BENCH" "$keys" "$EVENTS" - 6 | head -1)
		echo "floe   $f6 (distinct at precision 6, DuckDB's 64 registers)"
		cpu6=$(echo "$f6" | sed -n 's/.* events in \([0-9.]*\) CPU s.*/\1/p')
		echo "ratio  keys $keys, equal HyperLogLog size: floe / DuckDB = $(echo "scale=2; $dcpu / $cpu6" | bc -l)"
	fi
	rm -f "$W/events.csv"
done

# Bytes per hour of input: the OpenSSH sample into the raw table and two aggregate tables,
# then aggregate-only (raw: false): the whole warehouse, which is what is uploaded.
metrics='[count, {distinct: pid}, {quantiles: pid}]'
hours=4.15
# bytes RAW: a run --once over the sample with the input's raw: RAW, in $W/bytes-RAW.
bytes() {
	d="$W/bytes-$1"
	mkdir -p "$d/logs"
	cp tests/data/loghub/OpenSSH_2k.log "$d/logs/"
	cat >"$d/floe.yaml" <<YAML
agent: { id: bench, state_dir: $d/state, memory_limit: 256MiB }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    raw: $1
    start_at: beginning
    parser: regex
    pattern: '^(?<ts>[A-Z][a-z]{2} +[0-9]+ [0-9:]{8}) (?<node>[^ ]+) (?<app>[^:[]+)(\[(?<pid>[0-9]+)\])?: (?<msg>.*)$'
    timestamp: {field: ts, format: syslog, zone: UTC}
lake: { warehouse: $d/wh }
aggregations:
  - { name: counts, window: 1m, group_by: [app], metrics: [count], max_groups: 100 }
  - { name: sketches, window: 1m, group_by: [app], metrics: $metrics, max_groups: 100 }
YAML
	"$FLOE" run -c "$d/floe.yaml" --once --log-level warn
}
bytes true
echo "# bytes per hour of input (OpenSSH_2k: 2000 lines, $hours h of event time; one commit)"
for t in logs counts sketches; do
	data=$(du -sb "$d/wh/default/$t/data" | cut -f1)
	all=$(du -sb "$d/wh/default/$t" | cut -f1)
	rows=$("$FLOE" inspect "$d/wh/default/$t" | sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p')
	printf '%-9s %5s rows: data %8d bytes (%7.0f per hour), with metadata %8d bytes\n' \
		"$t" "$rows" "$data" "$(echo "$data / $hours" | bc -l)" "$all"
done
bytes false
all=$(du -sb "$d/wh" | cut -f1)
raw=$(find "$d/wh/default/logs" -name '*.parquet' | wc -l)
printf 'raw: false: the warehouse holds %d bytes (%.0f per hour), %d raw data files\n' \
	"$all" "$(echo "$all / $hours" | bc -l)" "$raw"
}

# Small groups: EVENTS_G events (default 2,000,000) at 100 a second of event time, from
# 5 hosts x ROUTES routes (1,000: about 1.7 events per group and one-minute window; 10:
# the second shape, 50 groups of ~120 events), JSON lines made deterministically, through
# one run --once with the raw table and one aggregation (count, distinct client,
# quantiles of latency_ms) of max_groups 5000. Prints the raw and the aggregate table's
# data bytes and their ratio, events per CPU second and peak RSS of the run, the
# per-group reservation `floe check` reports, and the aggregate table's bytes per column
# (compressed and not, from DuckDB's parquet_metadata).
small_groups() {
	local routes=$1 d="$W/groups-$1"
	mkdir -p "$d/logs"
	python3 - "$EVENTS_G" "$routes" "$d/logs/a.log" <<'PY'
import datetime, random, sys
n, routes, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
r = random.Random(17)
t0 = datetime.datetime(2026, 3, 1, tzinfo=datetime.timezone.utc)
with open(out, "w") as f:
    for i in range(n):
        ts = (t0 + datetime.timedelta(milliseconds=10 * i)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        f.write('{"ts":"%s","host":"h%d","route":"/api/r%04d","latency_ms":%.1f,"client":"10.0.%d.%d","msg":"request served"}\n'
                % (ts, r.randrange(5), r.randrange(routes), r.lognormvariate(3, 1), r.randrange(256), r.randrange(256)))
PY
	cat >"$d/floe.yaml" <<YAML
agent: { id: bench, state_dir: $d/state, memory_limit: 1GiB }
inputs:
  - { type: tail, paths: ["$d/logs/*.log"], start_at: beginning, parser: json }
lake: { warehouse: $d/wh }
aggregations:
  - name: requests
    window: 1m
    group_by: [host, route]
    metrics: [count, {distinct: client}, {quantiles: latency_ms}]
    max_groups: 5000
YAML
	local res
	res=$("$FLOE" check -c "$d/floe.yaml" 2>&1 | sed -n "s/.*'requests' reserves \(.*\)/\1/p")
	local t
	t=$( { /usr/bin/time -f '%U %S %M' "$FLOE" run -c "$d/floe.yaml" --once --log-level warn; } 2>&1 | tail -1)
	read -r u s rss <<<"$t"
	local raw agg rows
	raw=$(find "$d/wh/default/logs/data" -name '*.parquet' -exec cat {} + | wc -c)
	agg=$(find "$d/wh/default/requests/data" -name '*.parquet' -exec cat {} + | wc -c)
	rows=$("$FLOE" inspect "$d/wh/default/requests" | sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p')
	echo "-- 5 hosts x $routes routes, $EVENTS_G events: $rows aggregate rows"
	printf '   raw %d bytes, aggregate %d bytes: %.1f %%; %.0f events per CPU second (raw table and aggregation); peak RSS %d KiB\n' \
		"$raw" "$agg" "$(echo "100 * $agg / $raw" | bc -l)" "$(echo "$EVENTS_G / ($u + $s)" | bc -l)" "$rss"
	echo "   floe check: reserves $res"
	node tests/integration/reader/duck.js "SELECT path_in_schema, sum(total_compressed_size)::BIGINT,
		sum(total_uncompressed_size)::BIGINT FROM parquet_metadata('$d/wh/default/requests/data/**/*.parquet')
		GROUP BY 1 ORDER BY 2 DESC" | tr -d '[]"' |
		awk -F, -v rows="$rows" '{printf "   %-22s %9d bytes (%d before compression): %.2f per row\n", $1, $2, $3, $2 / rows}'
	rm -rf "$d"
}
EVENTS_G=${EVENTS_G:-2000000}
echo "# small groups: the aggregate table against the raw one"
small_groups 1000
small_groups 10
