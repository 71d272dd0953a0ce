#!/usr/bin/env bash
# The device's wall clock steps back, as on a device whose clock ran ahead and NTP (or
# an operator) corrects it: floe runs with its clock a year ahead (a preloaded shim,
# tests/clock_shim.c, shifts CLOCK_REALTIME by what a file says), tails 40 lines, then the
# clock steps back a year and 40 more lines come. Before, the aggregation took every
# event after the step as late and dropped it (for as long as the step: a year). Now the
# step is said, the open window goes out as a partial row, and the windows start again.
# Then the agent is stopped, the clock set a further year back (a device that boots with
# its clock behind), and `run --once` reads 20 more lines: the restored windows' state
# sees the step too (its counters go on from the image: 100 events). Every line is in the raw table once, the aggregate table's counts
# sum to every line with no late event, and its windows are in the three years.
source "$(dirname "$0")/lib.sh"
d="$T/clock"
mkdir -p "$d/logs"
clock_shim "$d/offset"
year=31536000
echo "$year" >"$d/offset"
cat >"$d/floe.yaml" <<YAML
agent: { id: clock-agent, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/logs/a.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake: { warehouse: $d/wh }
aggregations:
  - { name: per10, from: [0], window: 10s, metrics: [count] }
YAML
: >"$d/logs/a.log"
"${CLOCK_SHIFTED[@]}" "$FLOE_BIN" run -c "$d/floe.yaml" --log-level info >"$d/run.log" 2>&1 &
pid=$!
PIDS+=("$pid")
check "the agent starts with its clock a year ahead" wait_log "$d/run.log" "agent clock-agent started" 30
for i in $(seq 1 40); do echo "ahead $i" >>"$d/logs/a.log"; done
for _ in $(seq 1 200); do
	[ "$(metric "$d/state/metrics.json" lines 2>/dev/null)" = 40 ] && break
	sleep 0.1
done
check "the lines read with the clock ahead are counted" test "$(metric "$d/state/metrics.json" lines)" = 40
echo 0 >"$d/offset" # a year back
sleep 0.3
for i in $(seq 1 40); do echo "corrected $i" >>"$d/logs/a.log"; done
check "the step back is said" wait_log "$d/run.log" "aggregation per10: the clock went back 3153[0-9.]* s" 30
for _ in $(seq 1 200); do
	[ "$(metric "$d/state/metrics.json" lines 2>/dev/null)" = 80 ] && break
	sleep 0.1
done
check "the agent stops cleanly" stop_pid "$pid" 30
check "one step, no late event" grep -q "aggregation per10: 80 events .* 0 late (0 dropped, 0 too far ahead of the clock).* 1 steps back of the clock" "$d/run.log"

echo "-$year" >"$d/offset" # booted with the clock a further year back
for i in $(seq 1 20); do echo "behind $i" >>"$d/logs/a.log"; done
"${CLOCK_SHIFTED[@]}" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level info >"$d/once.log" 2>&1 ||
	fail "run --once failed"
check "the step across the restart is said" grep -q "aggregation per10: the clock went back" "$d/once.log"
check "no late event after the restart" grep -q "aggregation per10: 100 events .* 0 late (0 dropped" "$d/once.log"

check "every line is in the raw table once" test "$(snapshot_records "$d/wh/default/logs")" = 100
rows_sql "$d/wh/default/per10" \
	"select sum(count), sum(late_events), count(distinct year(window_start)) from t" >"$d/sum"
check "the aggregate table counts every line, in three years' windows ($(cat "$d/sum"))" \
	grep -q '^\["100","0","3"\]$' "$d/sum"
finish
