#!/usr/bin/env bash
# Reading never waits on the store: uploads and commits run on the committer
# thread, so a slow S3 server holds a commit, never the reading. Against s3_stub.py (a
# small in-memory S3 on loopback) made slow on request:
# (a) While the server holds a data file upload of a commit (12 s), new lines are read
#     and sealed: metrics.json counts them, the spool holds the held entry and a new one,
#     and the held request is still unanswered. Then every line is committed, exactly once.
# (b) Every PUT held 2 s (a commit takes several) while a writer appends lines for a few
#     seconds: the entries sealed while a commit is in flight go in together, so there are
#     more seals than snapshots; SIGTERM then ends the agent and every line is in the table
#     exactly once.
# (c) With an aggregation: while the server holds the aggregate table's upload (12 s), new
#     lines are read, then committed; the aggregate commits run on the committer thread
#     too (they used to run on the reading thread, which then read nothing).
# Functional assertions only: the figures (the longest read stall) are tests/bench/uplink.sh's.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
S="$T/stub"
stub_start "$S" || exit 1

# ctl LINES...: the stub's control file (read again when it changes).
ctl() { printf '%s\n' "$@" >"$S/ctl"; }

# config FILE DIR PREFIX: s3://bkt/PREFIX on the stub, reading DIR/in/*.log, a commit a second.
config() {
	cat >"$1" <<YAML
agent: { id: slow-store, state_dir: $2/state }
inputs:
  - { type: tail, paths: ["$2/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/$3
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true }
YAML
}

# records PREFIX: the live records of the table at s3://bkt/PREFIX on the stub.
records() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/$1/default/logs" 2>/dev/null |
		sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'
}

# metric_is FILE NAME VALUE: the counter NAME of metrics.json FILE equals VALUE.
metric_is() { [ -f "$1" ] && [ "$(metric "$1" "$2")" = "$3" ]; }
# entries_at_least DIR N: the spool under DIR holds at least N sealed entries.
entries_at_least() { [ "$(find "$1/state/spool" -maxdepth 1 -name '*.entry' | wc -l)" -ge "$2" ]; }
# stop PID: SIGTERM, at most 5 s; returns its exit code (124: it did not end in time).
stop() {
	local i
	kill -TERM "$1" 2>/dev/null || true
	for i in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.05
	done
	kill -9 "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	return 124
}

# --- (a) lines are read and sealed while a commit is held -------------------------------------
d="$T/a"
mkdir -p "$d/in"
printf 'first %s\n' 1 2 3 >"$d/in/a.log"
config "$d/floe.yaml" "$d" a
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "(a) the first commit lands" wait_for 20 metric_is "$d/state/metrics.json" rows_committed 3
ctl "delay=^PUT .*/a/default/logs/data/" "delay_ms=12000"
seq 1 50 | sed 's/^/held /' >>"$d/in/a.log"
check "(a) the next commit's upload is held by the server" \
	wait_for 20 grep -q "FAULT delay PUT .*/a/default/logs/data/" "$S/stub.log"
seq 1 50 | sed 's/^/meanwhile /' >>"$d/in/a.log"
check "(a) lines written during the held commit are read (metrics.json lines = 103)" \
	wait_for 8 metric_is "$d/state/metrics.json" lines 103
check "(a) and sealed: the spool holds the held entry and a newer one" wait_for 8 entries_at_least "$d" 2
check "(a) while the upload is still unanswered" test "$(grep -c DELAYED "$S/stub.log")" = 0
ctl
check "(a) then every line is committed" wait_for 40 metric_is "$d/state/metrics.json" rows_committed 103
rc=0
stop "$pid" || rc=$?
check "(a) SIGTERM ends the agent (exit $rc)" test "$rc" = 0
check "(a) the table holds every line once ($(records a))" test "$(records a)" = 103

# --- (b) every PUT takes 2 s while lines keep coming ------------------------------------------
d="$T/b"
mkdir -p "$d/in"
: >"$d/in/b.log"
config "$d/floe.yaml" "$d" b
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
# The table is created at full speed; from then on every PUT waits 2 s.
check "(b) the agent starts" wait_for 20 grep -q "agent slow-store started" "$d/err"
ctl "delay=^PUT .*/b/default/logs/" "delay_ms=2000"
# A writer: 40 rounds of 25 lines, one round every 0.15 s (about 6 s of input).
(for i in $(seq 1 40); do
	seq 1 25 | sed "s/^/round $i line /" >>"$d/in/b.log"
	sleep 0.15
done) &
writer=$!
PIDS+=("$writer")
wait "$writer"
check "(b) every line is read" wait_for 20 metric_is "$d/state/metrics.json" lines 1000
check "(b) and committed" wait_for 60 metric_is "$d/state/metrics.json" rows_committed 1000
m="$d/state/metrics.json"
seals=$(metric "$m" seals)
commits=$(metric "$m" commits)
check "(b) entries sealed during slow commits go in together ($seals seals, $commits snapshots)" \
	test "$seals" -gt "$commits"
rc=0
stop "$pid" || rc=$?
check "(b) SIGTERM ends the agent (exit $rc)" test "$rc" = 0
check "(b) the table holds every line once ($(records b))" test "$(records b)" = 1000
check "(b) no commit failed" metric_is "$m" commit_failures 0

# --- (c) an aggregate table's commit is held: reading goes on too -----------------------------
# Event times in the lines close windows by content: a line of second 2 closes second 0's.
d="$T/c"
mkdir -p "$d/in"
ctl
line() { printf '{"ts":"2025-12-01T00:00:%02dZ","m":"%s"}\n' "$1" "$2"; }
{ for i in 1 2 3; do line 0 "first $i"; done; line 2 closes; } >"$d/in/c.log"
config "$d/floe.yaml" "$d" c
sed -i 's/start_at: beginning }/start_at: beginning, parser: json,\n      timestamp: { field: ts, format: rfc3339 } }/' "$d/floe.yaml"
cat >>"$d/floe.yaml" <<YAML
aggregations:
  - { name: apps, window: 1s, idle_timeout: 1h, metrics: [count] }
YAML
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "(c) the aggregate table is made" \
	wait_for 20 grep -q "PUT .*/c/default/apps/metadata/v1.metadata.json" "$S/stub.log"
ctl "delay=^PUT .*/c/default/apps/data/" "delay_ms=12000"
for i in $(seq 1 50); do line 4 "held $i"; done >>"$d/in/c.log"
check "(c) the next aggregate commit's upload is held by the server" \
	wait_for 20 grep -q "FAULT delay PUT .*/c/default/apps/data/" "$S/stub.log"
for i in $(seq 1 50); do line 6 "meanwhile $i"; done >>"$d/in/c.log"
check "(c) lines written during the held aggregate commit are read (lines = 104)" \
	wait_for 8 metric_is "$d/state/metrics.json" lines 104
check "(c) while its upload is still unanswered" \
	test "$(grep -c "DELAYED PUT .*/c/default/apps/" "$S/stub.log")" = 0
ctl
check "(c) then every line is committed" wait_for 40 metric_is "$d/state/metrics.json" rows_committed 104
rc=0
stop "$pid" || rc=$?
check "(c) SIGTERM ends the agent (exit $rc)" test "$rc" = 0
check "(c) the table holds every line once ($(records c))" test "$(records c)" = 104
check "(c) no commit failed" metric_is "$d/state/metrics.json" commit_failures 0
ctl
kill -TERM "$STUB_PID" 2>/dev/null || true
wait "$STUB_PID" 2>/dev/null || true
finish
