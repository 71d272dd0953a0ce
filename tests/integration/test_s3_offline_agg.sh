#!/usr/bin/env bash
# A device with aggregations that boots offline starts anyway, as one without does
# (test_s3_offline.sh): with the S3 endpoint unreachable, `floe run` reads and spools the
# raw rows and the aggregate rows, and when the store comes up on that port (s3_stub.py,
# in memory) it creates both tables and commits every row once. The aggregate tables'
# sequence numbers come from state_dir (the spool, the output's record of its last commit,
# the open-window image), not from the table, which cannot be asked. Twice: a first boot,
# and a restart with existing state, the store down again (the in-memory stub forgot its
# tables: the new ones hold only this phase's rows, and nothing is read or counted twice).
# Each line is an event of its own second and app "a", so each is one aggregate row of
# count 1: a row committed twice would show as a second row.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true

d=$T/off
mkdir -p "$d/in"
SPORT=$(free_port)
cat >"$d/floe.yaml" <<YAML
agent: { id: offline-agg, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning, parser: json,
      timestamp: { field: ts, format: rfc3339 } }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/off
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$SPORT", region: us-east-1, path_style: true, request_timeout: 2s }
aggregations:
  - { name: apps, window: 1s, allowed_lateness: 0s, group_by: [app], metrics: [count] }
YAML

m() { metric "$d/state/metrics.json" "$1"; }
spooled() { [ -f "$d/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ] && [ "$(m seals)" -ge "$1" ]; }
committed() { [ -f "$d/state/metrics.json" ] && [ "$(m rows_committed)" = "$1" ] && [ "$(m spool_bytes)" = 0 ]; }
# rows TABLE: the records of the table's live files, as floe inspect reads them.
rows() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$SPORT" "s3://bkt/off/default/$1" 2>/dev/null |
		sed -n 's#^  s3://bkt/.*  records=\([0-9]*\).*#\1#p' | awk '{ s += $1 } END { print s + 0 }'
}
# lines FROM: 50 JSON lines, one a second of event time from second FROM.
lines() {
	local i
	for i in $(seq "$1" $(($1 + 49))); do
		printf '{"ts":"2026-12-01T00:%02d:%02dZ","app":"a","msg":"line %d"}\n' $((i / 60)) $((i % 60)) "$i"
	done >>"$d/in/app.log"
}

# phase NAME FROM: 50 lines with the store down, the agent up; the store up; every row once.
phase() {
	local name=$1 err=$d/err.$1
	"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$err" &
	pid=$!
	PIDS+=("$pid")
	check "($name) the agent starts" wait_for 30 grep -q 'started' "$err"
	check "($name) the agent runs with the store unreachable" kill -0 "$pid"
	check "($name) it says it starts without the store" grep -q "starting without it" "$err"
	lines "$2"
	check "($name) the lines go to the spool" wait_for 30 spooled 1
	local want=$(($(m rows_committed) + 50))
	stub_start "$d/stub.$name" "$SPORT"
	check "($name) every line is committed once the store answers" wait_for 120 committed "$want"
	# The stop closes the open windows: their rows are committed before it ends.
	kill -TERM "$pid" 2>/dev/null || true
	local rc=0
	wait "$pid" 2>/dev/null || rc=$?
	check "($name) the agent stops cleanly (exit $rc)" test "$rc" = 0
	check "($name) the logs table holds the 50 lines of this phase exactly once ($(rows logs))" \
		test "$(rows logs)" = 50
	check "($name) the aggregate table holds the 50 events of this phase exactly once ($(rows apps))" \
		test "$(rows apps)" = 50
	# Numbered on from the last phase's commits, not again from 1 (the table was asked
	# nothing at the start): its commit-seqs are all above the last phase's.
	seqs=$("$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$SPORT" s3://bkt/off/default/apps 2>/dev/null |
		sed -n 's/^  floe.commit-seq=//p' | sort -n | paste -sd' ')
	check "($name) the aggregate commits go on from the last ones ($seqs after ${last_seq:-0})" \
		test "${seqs%% *}" -gt "${last_seq:-0}"
	last_seq=${seqs##* }
	check "($name) nothing lost or dropped" \
		test "$(m spool_lost_entries) $(m dropped_entries) $(m agg_late)" = "0 0 0"
	stub_stop
}

phase first 0
phase restart 100
finish
