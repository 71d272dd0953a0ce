#!/usr/bin/env bash
# Damaged state, every kind for every table: a run with an aggregation dies before its
# first upload (FLOE_CRASH_AT=commit-before-upload), leaving entries in the logs table's
# spool and in the aggregate table's; then one state file has 4 bytes overwritten in its
# middle, and the next run must start, set the file aside (quarantine/), say so in the
# log, count it in metrics.json and /metrics alike, and keep going: a third run commits
# lines appended after the damage. The kinds: a spool entry file and a spool Parquet file
# of the logs table and of the aggregate table, the aggregation's open-window image and
# the checkpoint. What each one costs differs and is checked: a logs table's Parquet
# file is read again from its input (nothing lost); an aggregate table's cannot be
# (counted lost); an entry file whose own checksum fails is set aside with its files.
source "$(dirname "$0")/lib.sh"

# lines FILE FROM TO: JSON lines FROM..TO-1, 10 ms of event time apart, over 7 apps.
lines() {
	python3 - "$@" <<'PY'
import json, sys, time
t0 = 1764547200000
with open(sys.argv[1], "a") as f:
    for i in range(int(sys.argv[2]), int(sys.argv[3])):
        ms = t0 + 10 * i
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)
        f.write(json.dumps({"ts": ts, "app": "a%d" % (i % 7), "msg": "line %d" % i}) + "\n")
PY
}
# setup DIR: the configuration, 2,000 lines, and a first run that dies before its upload
# (WINDOW: the aggregation's; ONCE= a running agent rather than --once).
setup() {
	mkdir -p "$1/logs"
	cat >"$1/floe.yaml" <<YAML
agent: { id: it-agent, state_dir: $1/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$1/logs/*.log"], start_at: beginning, parser: json,
      timestamp: { field: ts, format: rfc3339 } }
tables:
  logs: { commit_interval: 1s }
lake: { warehouse: $1/wh }
aggregations:
  - { name: apps, window: ${WINDOW:-1s}, allowed_lateness: 0s, group_by: [app], metrics: [count] }
YAML
	lines "$1/logs/app.log" 0 2000
	local rc=0
	# shellcheck disable=SC2086
	FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$1/floe.yaml" ${ONCE---once} \
		--log-level error 2>/dev/null || rc=$?
	test $rc = 99
}
raw_rows() {
	"$FLOE_BIN" inspect "$1/wh/default/logs" 2>/dev/null |
		sed -n 's#^live files=[0-9]* records=\([0-9]*\).*#\1#p'
}
agg_events() {
	local files
	files=$(live_files "$1/wh/default/apps" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo 0; return; }
	duck "select coalesce(sum(count), 0) from read_parquet([$files])" | tr -dc '0-9'
}

# case NAME FILE-GLOB EXPECTED-QUARANTINE-GLOB COUNTER LOG-PATTERN [COUNTER]
case_() {
	local name=$1 glob=$2 qglob=$3 counter=$4 pattern=$5 d="$T/$1" rc=0
	check "$name: the first run dies before the upload" setup "$d"
	# shellcheck disable=SC2086
	local target
	target=$(ls $glob 2>/dev/null | head -1)
	check "$name: the state file is there to damage" test -n "$target"
	[ -n "$target" ] && damage "$target"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
	check "$name: the restart goes on (exit 0)" test $rc = 0
	# shellcheck disable=SC2086
	check "$name: set aside in quarantine" bash -c "ls $qglob >/dev/null 2>&1"
	check "$name: counted ($counter)" test "$(metric "$d/state/metrics.json" "$counter")" -ge 1
	[ -z "${6:-}" ] || check "$name: counted ($6)" test "$(metric "$d/state/metrics.json" "$6")" -ge 1
	check "$name: logged" grep -q "$pattern" "$d/err"
	lines "$d/logs/app.log" 2000 2500
	rc=0
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err2" || rc=$?
	check "$name: a later run commits what came since (exit 0)" test $rc = 0
	check "$name: its spools are empty" \
		test "$(metric "$d/state/metrics.json" spool_bytes)" = 0
}

S='state/spool'
A='state/agg/apps'
case_ raw-entry "$T/raw-entry/$S/*.entry" "$T/raw-entry/$S/quarantine/*.entry" \
	quarantined 'the logs table: spool entry [0-9]* .* is corrupt'
# The entry's own positions are gone with it: its rows are not read again (the
# checkpoint is past them), the later lines are in.
check "raw-entry: the later lines are in the logs table" test "$(raw_rows "$T/raw-entry")" = 500

case_ raw-parquet "$T/raw-parquet/$S/*.parquet" "$T/raw-parquet/$S/quarantine/*.parquet" \
	spool_reread_entries 'rebuilt from its input'
check "raw-parquet: every line once in the logs table" test "$(raw_rows "$T/raw-parquet")" = 2500

case_ agg-entry "$T/agg-entry/$A/*.entry" "$T/agg-entry/$A/quarantine/*.entry" \
	quarantined 'aggregate table apps: spool entry [0-9]* .* is corrupt'
check "agg-entry: every line once in the logs table" test "$(raw_rows "$T/agg-entry")" = 2500

case_ agg-parquet "$T/agg-parquet/$A/*.parquet" "$T/agg-parquet/$A/quarantine/*.parquet" \
	spool_lost_entries 'aggregate table apps: spool entry [0-9]* is damaged .* rows LOST'
check "agg-parquet: every line once in the logs table" test "$(raw_rows "$T/agg-parquet")" = 2500

case_ image "$T/image/state/agg/apps.windows.*" "$T/image/state/agg/quarantine/apps.windows.*" \
	state_damaged 'the open windows in .* are lost'
check "image: every line once in the logs table" test "$(raw_rows "$T/image")" = 2500

# An aggregation whose configuration changed across a restart (max_groups, which leaves
# its table as it was): its saved open windows are of another layout and cannot be
# restored. Not damage (nothing set aside), but a
# loss all the same: logged and counted.
d="$T/reconfigured"
# Not --once (which closes every window at the end of its input): a running agent's first
# commit dies, its hour's window open in the image.
WINDOW=1h ONCE= check "reconfigured: the first run dies before the upload, its hour's window open" setup "$d"
sed -i 's/metrics: \[count\]/metrics: [count], max_groups: 500/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "reconfigured: the restart goes on (exit 0)" test $rc = 0
check "reconfigured: logged" grep -q 'the open windows in .* are lost: the image is of another configuration' "$d/err"
check "reconfigured: counted (agg_windows_lost)" test "$(metric "$d/state/metrics.json" agg_windows_lost)" = 1
check "reconfigured: not counted as damage" test "$(metric "$d/state/metrics.json" state_damaged)" = 0

case_ checkpoint "$T/checkpoint/state/checkpoint" "$T/checkpoint/state/quarantine/checkpoint" \
	state_damaged 'checkpoint .* is corrupt'
# The spool's newest entry held the positions: nothing is read twice.
check "checkpoint: every line once in the logs table" test "$(raw_rows "$T/checkpoint")" = 2500
check "checkpoint: every event once in the aggregate table" \
	test "$(agg_events "$T/checkpoint")" = 2500

# The counter of damaged state files is in /metrics too, by the same name.
d="$T/checkpoint"
run_serving "$d/floe.yaml" "$d/serve.err"
check "/metrics has floe_state_damaged_total" \
	bash -c "curl -s http://127.0.0.1:$port/metrics | grep -q '^floe_state_damaged_total '"
stop_pid "$pid"

finish
