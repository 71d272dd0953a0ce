#!/usr/bin/env bash
# The aggregate tables' spools under the raw spool's rules. 1: an aggregate
# file damaged between seal and commit fails its XXH64 check before upload: it is never
# committed, goes to quarantine, and its rows are counted lost (they cannot be made again
# without counting other events twice) and logged. 2: aggregate entries count in
# spool.max_bytes: with the aggregate table's commits failing, 24 MiB of aggregate rows
# (a 16 KiB group key, uncompressed) go over a 16 MiB limit with policy block, the input waits
# (said in the log), and once commits work again it reads on and every event is in the
# aggregate table once. 3: with policy drop_oldest, the older aggregate entry is dropped
# and counted instead.
source "$(dirname "$0")/lib.sh"

# events FILE FROM TO: JSON events FROM..TO-1, 10 ms of event time apart, 100 apps, each
# with a 16 KiB pad of its own (a group key that makes every aggregate row 16 KiB, one
# that no dictionary shrinks; a window holds one event of each app, so the groups are
# the apps' as without it).
events() {
	python3 - "$@" <<'PY'
import json, sys, time
t0 = 1764547200000
with open(sys.argv[1], "a") as f:
    for i in range(int(sys.argv[2]), int(sys.argv[3])):
        ms = t0 + 10 * i
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)
        f.write(json.dumps({"ts": ts, "app": "a%d" % (i % 100), "user": "u%d" % (i % 37), "pad": "%06d" % i * 2731}) + "\n")
PY
}
# config DIR RAW EXTRA: a tail input of DIR/logs/*.log (raw: RAW), an aggregation per
# 1 s window and app with count and distinct, and EXTRA at the top level.
config() {
	mkdir -p "$1/logs"
	cat >"$1/floe.yaml" <<YAML
agent:
  id: it-agent
  state_dir: $1/state
  memory_limit: 64MiB
inputs:
  - type: tail
    paths: ["$1/logs/*.log"]
    raw: $2
    start_at: beginning
    parser: json
    timestamp: {field: ts, format: rfc3339}
tables:
  logs:
    commit_interval: 1s
    codec: uncompressed
lake:
  warehouse: $1/wh
aggregations:
  - name: apps
    window: 1s
    allowed_lateness: 0s
    idle_timeout: 1h
    group_by: [app, pad]
    max_key_bytes: 17KiB
    metrics: [count, {distinct: user}]
    max_groups: 100
${3:-}
YAML
}
# wait_log FILE PATTERN: up to 30 s for a line of FILE to match.
wait_log() {
	for _ in $(seq 1 300); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# 1. A damaged aggregate file: the first run dies before its upload.
d="$T/verify"
config "$d" true
events "$d/logs/app.log" 0 3000
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "verify: the first run dies before the upload" test $rc = 99
mapfile -t files < <(ls "$d"/state/agg/apps/*.parquet)
check "verify: the aggregate spool holds files" test "${#files[@]}" -ge 1
bad=${files[0]}
damage "$bad"
check "verify: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
live_files "$d/wh/default/apps" >"$d/files"
check "verify: the damaged file is not in the aggregate table" \
	bash -c "test -s '$d/files' && ! grep -q '$(basename "$bad")' '$d/files'"
check "verify: the damaged file is in quarantine" \
	test -f "$d/state/agg/apps/quarantine/$(basename "$bad")"
m="$d/state/metrics.json"
check "verify: counted as damaged, quarantined and lost" \
	test "$(metric "$m" spool_damaged) $(metric "$m" quarantined) $(metric "$m" spool_lost_entries)" = "1 1 1"
check "verify: logged with the path and what did not match, and the rows lost" \
	bash -c "grep -q 'damaged: $bad has XXH64 [0-9a-f]* over [0-9]* bytes, its entry records' '$d/err' &&
		grep -q 'aggregate table apps: spool entry [0-9]* is damaged and cannot be made again: [0-9]* rows LOST' '$d/err'"
agg="[$(sed "s/.*/'&'/" "$d/files" | paste -sd,)]"
duck "select sum(count) < 3000 from read_parquet($agg)" >"$d/sum"
check "verify: the rows of the other files are committed" grep -qx '\[true\]' "$d/sum"

# blocked_run LABEL POLICY: in $d, an agent with a raw: false input and spool.max_bytes
# 16 MiB under POLICY makes its tables in a first run; then the aggregate table's data
# directory becomes a file, so that its commits fail, and 1500 events are read by an agent
# left running (its PID in pid).
blocked_run() {
	config "$d" false "spool: {max_bytes: 16MiB, policy: $2}"
	touch "$d/logs/app.log"
	check "$1: the first run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	rm -rf "$d/wh/default/apps/data"
	touch "$d/wh/default/apps/data"
	events "$d/logs/app.log" 0 1500
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
	pid=$!
	PIDS+=($pid)
}

# 2. The limit. A first run makes the tables; then the aggregate table's data directory
# is a file, so that its commits fail while the raw: false input is read.
d="$T/limit"
blocked_run limit block
check "limit: 1400 aggregate rows of 16 KiB go over spool.max_bytes: the input waits" \
	wait_log "$d/err" "over its limit of 16777216: inputs wait for commits"
events "$d/logs/app.log" 1500 2000
rm -f "$d/wh/default/apps/data"
check "limit: commits make room, the input resumes" \
	wait_log "$d/err" "spool below its limit again: inputs resume"
for _ in $(seq 1 300); do
	[ "$(metric "$d/state/metrics.json" lines)" = 2000 ] && break
	sleep 0.1
done
check "limit: every line is read" test "$(metric "$d/state/metrics.json" lines)" = 2000
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
check "limit: floe stops cleanly" test $rc = 0
live_files "$d/wh/default/apps" >"$d/files"
agg="[$(sed "s/.*/'&'/" "$d/files" | paste -sd,)]"
duck "select sum(count), sum(late_events) from read_parquet($agg)" >"$d/sum"
check "limit: every event is counted once, none dropped or late" grep -qx '\["2000","0"\]' "$d/sum"

# 3. The same with policy drop_oldest: the aggregate entry sealed first is dropped once a
# second one is sealed over the limit (never the newest), counted and logged.
d="$T/drop"
blocked_run drop drop_oldest
check "drop: the first aggregate entry is sealed" wait_log "$d/err" "commit to aggregate table apps failed"
events "$d/logs/app.log" 1500 3000
check "drop: the next seal drops it, logged" \
	wait_log "$d/err" "spool over its limit: dropped entry [0-9]* of aggregate table apps ([0-9]* rows"
rm -f "$d/wh/default/apps/data"
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
check "drop: floe stops cleanly" test $rc = 0
m="$d/state/metrics.json"
# How many entries the windows were sealed into, and so how many are dropped, depends on
# how fast the lines are read (one of 1,400 rows in a fast build, several smaller ones
# under a sanitizer, which may also stop before the last lines are read): each row is
# one event (one per app and window), so the dropped rows and the table's events make up
# the events read.
dropped=$(metric "$m" dropped_entries)
read=$(metric "$m" lines)
drows=$(metric "$m" dropped_rows)
check "drop: counted in dropped_entries ($dropped) and dropped_rows ($drows)" \
	test "${dropped:-0}" -ge 1 -a "${drows:-0}" -gt 0
live_files "$d/wh/default/apps" >"$d/files"
agg="[$(sed "s/.*/'&'/" "$d/files" | paste -sd,)]"
duck "select sum(count), sum(late_events) from read_parquet($agg)" >"$d/sum"
check "drop: the table holds the events after the dropped windows ($(cat "$d/sum"))" \
	grep -qx "\\[\"$((${read:-0} - ${drows:-0}))\",\"0\"\\]" "$d/sum"
finish
