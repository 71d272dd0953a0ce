#!/usr/bin/env bash
# A window where every group is busy (200 keys x 1,000 distinct values over 5 decades,
# each group wanting about 36 KiB of sketches against a 5 KiB reservation): its pool
# grows at run time within the aggregation's share of agent.memory_limit. With 256 MiB,
# floe check prints the growth ceiling, /metrics shows the pool grown while the window is
# open and nothing coarse, and once the stop closed the window metrics.json says the
# pool's bytes are back to 0. With 16 MiB the share (2.9 MiB of growth) is too small:
# the sketches that find it taken go coarse, counted in metrics.json and in the stop
# log, and every event is still in a row.
source "$(dirname "$0")/lib.sh"

d="$T/aggpool"
mkdir -p "$d/logs"
awk 'BEGIN { for (i = 0; i < 1000; i++) for (k = 0; k < 200; k++)
	printf "{\"k\":\"g%d\",\"v\":%.6g}\n", k, 10 ^ (-2 + 5 * i / 999) * (1 + k / 256) }' \
	>"$d/logs/app.log"
config() { # config MEMORY_LIMIT WINDOW
	rm -rf "$d/state" "$d/wh"
	cat >"$d/floe.yaml" <<YAML
agent: { id: aggpool, state_dir: $d/state, memory_limit: $1, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$d/logs/app.log"], start_at: beginning, parser: json, raw: false }
lake: { warehouse: $d/wh }
aggregations:
  - { name: busy, window: $2, group_by: [k], max_groups: 200,
      metrics: [count, {distinct: v}, {quantiles: v, q: [0.01, 0.5, 0.99]}] }
YAML
}
m="$d/state/metrics.json"

config 256MiB 1h
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check" 2>&1 || cat "$d/check"
check "floe check prints the reservation and the growth ceiling" \
	grep -q "^# memory: aggregations\[0\] 'busy' reserves 1.7MiB: .*; its sketches' pools grow by up to [0-9.]*MiB more at run time" "$d/check"
run_serving "$d/floe.yaml" "$d/run.err"
check "the agent serves /metrics" test -n "$port"
# Until the document counts every line (the window of an hour stays open).
for _ in $(seq 1 300); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/m.txt" &&
		grep -qx 'floe_lines_total 200000' "$d/m.txt" && break
	sleep 0.1
done
grown=$(sed -n 's/^floe_agg_pool_grown_bytes \([0-9]*\)$/\1/p' "$d/m.txt")
inuse=$(sed -n 's/^floe_agg_pool_bytes \([0-9]*\)$/\1/p' "$d/m.txt")
echo "# open window: $inuse bytes in the pool, $grown of them grown"
check "/metrics: every line read" grep -qx 'floe_lines_total 200000' "$d/m.txt"
check "/metrics: the open window's pool grew (${grown:-none} bytes)" test "${grown:-0}" -gt 1048576
check "/metrics: its sketches hold the pool's bytes (${inuse:-none})" test "${inuse:-0}" -gt "${grown:-0}"
check "/metrics: no sketch coarse" grep -qx 'floe_agg_coarse_sketches_total 0' "$d/m.txt"
check "/metrics: coarse is a counter, the pool's bytes gauges" \
	bash -c "grep -qx '# TYPE floe_agg_coarse_sketches_total counter' '$d/m.txt' &&
		grep -qx '# TYPE floe_agg_pool_bytes gauge' '$d/m.txt' &&
		grep -qx '# TYPE floe_agg_pool_grown_bytes gauge' '$d/m.txt'"
check "the agent stops cleanly" stop_pid "$pid"
check "metrics.json after the stop: nothing coarse, the pool back to 0 bytes" \
	test "$(metric "$m" agg_coarse) $(metric "$m" agg_pool_bytes) $(metric "$m" agg_pool_grown_bytes)" = "0 0 0"
check "the stop log says no sketch went coarse" grep -q ' 0 sketches coarse' "$d/run.err"

config 16MiB 1m
check "16 MiB: the run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/small.err"
coarse=$(metric "$m" agg_coarse)
echo "# 16 MiB: $coarse of 400 sketches coarse"
check "16 MiB: sketches coarse, counted in metrics.json (${coarse:-none})" \
	test "${coarse:-0}" -gt 0 -a "${coarse:-0}" -le 400
check "16 MiB: the stop log says so" grep -q " $coarse sketches coarse (their window's pool could not grow" "$d/small.err"
check "16 MiB: the pool is back to 0 bytes" \
	test "$(metric "$m" agg_pool_bytes) $(metric "$m" agg_pool_grown_bytes)" = "0 0"
check "16 MiB: every event is in a row" \
	test "$(rows_sql "$d/wh/default/busy" "SELECT sum(count)::INT FROM t")" = "[200000]"
finish
