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
# loghub sample (4.15 hours of event time). Prints figures only; asserts nothing.
# usage: tests/bench/aggregate.sh [EVENTS]   (default 1,000,000: DuckDB holds a quantile
# sketch for each of the ~1 M groups of the 10 M-key run: 7 GiB of RSS)
# Needs a build with the benchmarks (build-test/gcc or BUILD=...) and the test readers.
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
