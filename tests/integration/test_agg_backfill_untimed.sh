#!/usr/bin/env bash
# A backfill whose lines are not all dated: a month-old access log read from its
# beginning (a first boot, start_at: beginning) where one line in ten is an error-log
# line the apache_combined parser does not match, kept whole with the time it was read.
# Before, the first such line put the aggregation's watermark a month ahead, and every
# dated line after it was late and dropped (99 of the 100 dated lines here, counted in
# agg_late_dropped, and the hourly windows of the month-old traffic nearly empty). Now a
# line without a time of its own is aggregated after the newest dated line: no event is
# late, the aggregate's counts sum to every line, the dated lines are in their hours, and
# each status's bytes sum to what the raw table's dated lines say (DuckDB). The parse
# failures stay counted in metrics.json.
source "$(dirname "$0")/lib.sh"

d="$T/backfill"
mkdir -p "$d/logs"
python3 - "$d/logs/access.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        if i % 10 == 0:
            f.write('10.0.0.%d - - [07/Nov/2026:%02d:%02d:00 +0000] "GET /a HTTP/1.1" %d %d "-" "curl"\n'
                    % (i % 250, 10 + i // 500, (i // 10) % 60, 200 if i % 20 else 404, i))
        else:
            f.write('2026/11/07 10:%02d:00 [error] 12#0: *1 open() "/x" failed (2: No such file)\n'
                    % ((i // 10) % 60))
PY
cat >"$d/floe.yaml" <<YAML
agent: { id: backfill, state_dir: $d/state }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: apache_combined
tables:
  logs: {}
lake: { warehouse: $d/wh }
aggregations:
  - { name: by_status, window: 1h, group_by: [status], metrics: [count, { sum: bytes }] }
YAML
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "run --once: exit 0" test $rc = 0
m="$d/state/metrics.json"
check "the lines the parser did not match are counted (900)" test "$(metric "$m" parse_failures)" = 900
check "no event is late" test "$(metric "$m" agg_late)" = 0
check "none dropped" test "$(metric "$m" agg_late_dropped)" = 0
agg="$d/wh/default/by_status"
check "the aggregate's counts sum to every line" \
	test "$(rows_sql "$agg" "SELECT sum(count) FROM t")" = '["1000"]'
check "the dated lines are in their month-old hours (50 in each of two)" \
	test "$(rows_sql "$agg" "SELECT sum(count) FROM t WHERE status IS NOT NULL AND window_start < TIMESTAMPTZ '2026-11-08 00:00:00+00' GROUP BY window_start ORDER BY window_start" | paste -sd' ')" = '["50"] ["50"]'
want=$(rows_sql "$d/wh/default/logs" "SELECT status, sum(bytes)::BIGINT FROM t WHERE status IS NOT NULL GROUP BY status ORDER BY status" | paste -sd' ')
got=$(rows_sql "$agg" "SELECT status, sum(sum_bytes)::BIGINT FROM t WHERE status IS NOT NULL GROUP BY status ORDER BY status" | paste -sd' ')
check "each status's bytes sum to the raw table's ($want)" test "$got" = "$want"
[ "$got" = "$want" ] || echo "  got $got"
finish
