#!/usr/bin/env bash
# A package upgrade with an aggregation's windows open: stop, a new build, start. The
# open windows' image is restored only by the build that wrote it, so the test makes the
# image of "another build" by editing the one floe left: a later image version and a
# header 8 bytes longer after the preamble (what a build whose saved structs grew
# writes). The stop wrote the open windows as partial rows, so nothing is lost:
# - with the warehouse away during the stop (a device offline while upgraded), the
#   stop's partial rows wait in the aggregate spool; the new build commits them.
#   Before, an image of another version gave no tag, and the start removed them as
#   "sealed after the state it resumes from" (100 of 200 events lost from the aggregate)
#   and counted 1 window lost, as an error;
# - after a kill -9 (no clean stop), the loss is real: said as an error naming another
#   build, and counted exactly (every open window the image held; before, 1).
source "$(dirname "$0")/lib.sh"

d="$T/upgrade"
mkdir -p "$d/logs"
# Hopping windows: every event is in 4 of them (so every sum is 4 times the input's).
cat >"$d/floe.yaml" <<YAML
agent: { id: upgrade, state_dir: $d/state }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: json
tables:
  logs: { commit_interval: 1s }
lake: { warehouse: $d/wh }
aggregations:
  - { name: per_app, window: 1h, slide: 15m, group_by: [app], metrics: [count, { sum: n }] }
YAML
gen() { # gen FROM TO: lines FROM..TO-1, n = their number, 20 apps
	python3 -c "
import sys
for i in range(int(sys.argv[1]), int(sys.argv[2])):
    print('{\"app\": \"a%d\", \"n\": %d}' % (i % 20, i))" "$1" "$2" >>"$d/logs/x.log"
}
agg="$d/wh/default/per_app"
sums() { rows_sql "$agg" "SELECT sum(count)::BIGINT::VARCHAR || ',' || sum(sum_n)::BIGINT::VARCHAR FROM t"; }
want() { echo "[\"$((4 * $1)),$((4 * $1 * ($1 - 1) / 2))\"]"; }
# another_build: every image in state_dir as a later build would have written it.
another_build() {
	python3 - "$d"/state/agg/per_app.windows.* <<'PY'
import struct, sys
for path in sys.argv[1:]:
    b = bytearray(open(path, "rb").read())
    b[4:8] = struct.pack("<I", struct.unpack("<I", b[4:8])[0] + 1)
    b[24:24] = bytes(8)
    open(path, "wb").write(bytes(b))
PY
}
# open_windows: the open windows the newest image holds (its preamble's count).
open_windows() {
	python3 -c "import struct,sys; print(struct.unpack('<I', open(sys.argv[1],'rb').read()[8:12])[0])" \
		"$(ls "$d"/state/agg/per_app.windows.* | sort | tail -1)"
}

gen 0 100
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err1" || true
check "a first run commits" test "$(snapshot_records "$d/wh/default/logs")" = 100

# Stopped for the upgrade while the warehouse is away: the stop's partial rows stay in
# the aggregate spool.
mv "$d/wh" "$d/wh.away"
gen 100 200
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err2" &
PID=$!
PIDS+=($PID)
check "the warehouse away: the agent reads on" log_has "$d/err2" "is missing" 1 $PID
rc=0
stop_pid $PID || rc=$?
check "and stops cleanly" test $rc = 0
ls "$d/state/agg/per_app" >"$d/spooled"
check "the stop's rows wait in the aggregate spool" test -s "$d/spooled"
another_build
mv "$d/wh.away" "$d/wh"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err3" || rc=$?
check "the new build starts and commits: exit 0" test $rc = 0
check "no 'are lost' error" test "$(grep -c "are lost" "$d/err3")" = 0
check "the start says the image held no open window" grep -q "held no open window (the image was written by another build" "$d/err3"
check "no spool entry removed" test "$(grep -c "removing spool entry" "$d/err3")" = 0
check "agg_windows_lost 0" test "$(metric "$d/state/metrics.json" agg_windows_lost)" = 0
check "the aggregate's counts and sums are the input's" test "$(sums)" = "$(want 200)"

# Killed with windows open, then another build: a real loss, counted exactly.
gen 200 300
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err4" &
PID=$!
PIDS+=($PID)
check "the agent starts again and commits" log_has "$d/err4" "committed snapshot" 1 $PID
kill -9 $PID
wait $PID 2>/dev/null || true
held=$(open_windows)
check "the image holds the 4 open windows (or 5 across a slide)" test "$held" -ge 4
another_build
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err5" || true
check "killed, then another build: the loss is an error naming it" grep -q "are lost: the image was written by another build" "$d/err5"
check "counted exactly in agg_windows_lost" test "$(metric "$d/state/metrics.json" agg_windows_lost)" = "$held"
check "the raw table has every line" test "$(snapshot_records "$d/wh/default/logs")" = 300
finish
