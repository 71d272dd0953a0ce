#!/usr/bin/env bash
# A device's life in one run, with the configuration an operator writes rather than the
# defaults: an access log (apache_combined, typed columns, its own table, rotated), an
# application log routed by app (sshd to a security table kept a year, the rest to logs),
# syslog over TCP from 20 senders into logs partitioned by day and host, an aggregation of
# the access log by status, all in an S3 store (s3_stub.py keeping its objects as files).
# The device boots with the store unreachable (its typed columns written under provisional
# field ids, replaced at the first contact); then, FIELD_ROUNDS times (default 2): lines
# arrive while the store is down and comes back; a reload changes the shape (a column and
# the partition spec); the agent is killed (-9) while a writer appends, and restarted; the
# access log rotates. At the end, with a graceful stop, every tail line is in its table
# exactly once, every syslog message once, the aggregation counted every access line, no
# state file was set aside, and the agent never stopped on its own.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true
ROUNDS=${FIELD_ROUNDS:-2}

d=$T/field
mkdir -p "$d/in/app" "$d/store"
SPORT=$(free_port)
TPORT=$(free_port)

# conf PARTITION COLUMNS: the configuration; PARTITION is the logs table's partition_by
# and COLUMNS the access table's columns (flow sequences), changed by the reloads.
conf() {
	cat >"$d/floe.yaml.new" <<YAML
agent: { id: field-test, state_dir: $d/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { name: access, type: tail, paths: ["$d/in/access.log"], start_at: beginning,
      parser: apache_combined, table: access }
  - name: apps
    type: tail
    paths: ["$d/in/app/*.log"]
    start_at: beginning
    parser: logfmt
    route:
      - { field: app, equals: sshd, table: security }
  - { name: net, type: syslog, listen: "tcp://127.0.0.1:$TPORT" }
tables:
  logs: { commit_interval: 1s, partition_by: $1 }
  access:
    commit_interval: 1s
    columns: $2
  security: { commit_interval: 1s, properties: { history.expire.max-snapshot-age-ms: 365d } }
aggregations:
  - { name: statuses, window: 1m, group_by: [status], metrics: [count], from: [0] }
lake:
  warehouse: s3://bkt/field
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$SPORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML
	mv "$d/floe.yaml.new" "$d/floe.yaml"
}
STATUS='{ name: status, type: int }'
CLIENT='{ name: client, type: string }'
BYTES='{ name: bytes, type: long }'
conf '["day(ts)", host]' "[$STATUS, $BYTES]"

na=0 np=0 ns=0 am=0
# access N: N access lines, numbered, their times in a minute of their own after the
# last call's (so that each call's lines close the windows of the call before); app N: N application lines, a third from sshd.
access() {
	python3 - "$d/in/access.log" "$na" "$1" "$am" <<'PY'
import sys
f, a, n, m = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
with open(f, "a") as out:
    for i in range(a, a + n):
        t = m * 60 + (i - a) * 60 // n  # seconds after 00:00, in order
        out.write(f'10.0.{i % 7}.{i % 250} - - [06/Dec/2026:{t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d} +0000] '
                  f'"GET /p?i={i} HTTP/1.1" {200 + i % 4 * 100} {i * 7} "-" "field/1.0"\n')
PY
	na=$((na + $1))
	am=$((am + 2))
}
app() {
	python3 - "$d/in/app/app.log" "$np" "$1" <<'PY'
import sys
f, a, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, "a") as out:
    for i in range(a, a + n):
        out.write(f"app={'sshd' if i % 3 == 0 else 'cron'} n={i} msg=app-line-{i}\n")
PY
	np=$((np + $1))
}
# senders N: 20 TCP senders (hosts h00..h19) send N messages each, newline framed, and
# close; the messages are numbered from ns.
senders() {
	python3 - "$TPORT" "$ns" "$1" <<'PY' || return 1
import socket, sys
port, first, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
conns = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(20)]
for j in range(n):
    for h, c in enumerate(conns):
        k = first + j * 20 + h
        c.sendall(f"<13>1 2026-12-06T10:00:00Z h{h:02d} web - - - syslog-msg-{k}\n".encode())
for c in conns:
    c.close()
PY
	ns=$((ns + 20 * $1))
}
# settled: everything written so far was read and is committed: metrics.json, rewritten
# after every commit cycle, was written more than a commit interval after the last write
# (marked by touching $d/wrote) and shows no file behind and nothing spooled.
settled() {
	python3 - "$d/state/metrics.json" "$d/wrote" <<'PY'
import json, os, sys
try:
    m = json.load(open(sys.argv[1]))
    fresh = os.stat(sys.argv[1]).st_mtime > os.stat(sys.argv[2]).st_mtime + 1.5
except (OSError, ValueError):
    sys.exit(1)
lag = sum(i.get("lag_bytes", 0) + i.get("files_draining", 0) for i in m["inputs"])
sys.exit(0 if fresh and m["spool_bytes"] == 0 and lag == 0 else 1)
PY
}
start() {
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>>"$d/err" &
	pid=$!
	PIDS+=("$pid")
	wait_for 30 grep -q 'status: serving' "$d/err"
}

# The store is down at boot: the agent starts, reads and spools.
access 300
app 300
: >"$d/err"
check "the agent starts with the store unreachable" start
check "it reads the syslog senders while the store is down" senders 10
touch "$d/wrote"
check "what it read waits in the spool" wait_for 30 bash -c "[ -f '$d/state/metrics.json' ] && grep -q '\"spool_bytes\":[1-9]' '$d/state/metrics.json'"

stub_dir_start() {
	mkdir -p "$d/s3"
	: >"$d/s3/ctl"
	/usr/bin/python3 "$STUB_PY" --control "$d/s3/ctl" --log "$d/s3/stub.log" --port "$SPORT" \
		--dir "$d/store" >>"$d/s3/stub.out" 2>&1 &
	STUB_PID=$!
	PIDS+=("$STUB_PID")
	wait_for 10 bash -c "grep -c 'stub listening' '$d/s3/stub.out' | grep -qx '$1'"
}
up=0
for r in $(seq 1 "$ROUNDS"); do
	up=$((up + 1))
	check "($r) the store comes up" stub_dir_start "$up"
	check "($r) everything read is committed" wait_for 60 settled
	check "($r) the agent runs" kill -0 "$pid"

	# A reload that changes the shape: the access table gains a column, the logs
	# table's partition spec changes (and changes back in the next round).
	if [ $((r % 2)) = 1 ]; then
		conf '["day(ts)", app]' "[$STATUS, $BYTES, $CLIENT]"
	else
		conf '["day(ts)", host]' "[$STATUS, $BYTES]"
	fi
	reloads=$(grep -c 'agent field-test started' "$d/err" || true)
	kill -HUP "$pid"
	check "($r) the reload that changes the shape is taken" \
		wait_for 30 bash -c "[ \$(grep -c 'agent field-test started' '$d/err') -gt $reloads ]"
	access 200
	app 200
	check "($r) the senders reach the reloaded agent" senders 5
	touch "$d/wrote"
	check "($r) the reloaded agent commits" wait_for 60 settled

	# kill -9 while a writer appends, and a restart.
	access 500 &
	wpid=$!
	am=$((am + 2))
	sleep 0.$((RANDOM % 9 + 1))
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	wait "$wpid"
	na=$((na + 500))
	touch "$d/wrote"
	check "($r) the restart after kill -9 starts" start
	check "($r) the restarted agent catches up" wait_for 60 settled

	# The access log rotates; the store goes away while lines arrive, and comes back.
	mv "$d/in/access.log" "$d/in/access.log.1"
	access 100
	stub_stop
	access 100
	app 100
	check "($r) the senders reach it while the store is down" senders 5
	touch "$d/wrote"
	check "($r) the agent spools while the store is down" \
		wait_for 30 bash -c "grep -q '\"spool_bytes\":[1-9]' '$d/state/metrics.json'"
done
# A line a minute later, whose window the stop closes.
access 1
touch "$d/wrote"
up=$((up + 1))
check "the store comes up at the end" stub_dir_start "$up"
check "everything read is committed at the end" wait_for 60 settled
check "the graceful stop exits 0" stop_pid "$pid" 30

# The checks: every line of each kind in its table once.
live() { # TABLE: the table's live files, as paths in the store directory
	"$FLOE_BIN" inspect -c "$d/floe.yaml" "$1" 2>/dev/null | sed -n "s#^  s3://\([^ ]*\)  records=.*#$d/store/\1#p"
}
q() { # TABLE SQL: SQL over the table's live files as t
	local f
	f=$(live "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$f" ] || { echo "[]"; return; }
	duck "WITH t AS (SELECT * FROM read_parquet([$f], union_by_name = true)) $2"
}
once() { # TABLE WHERE N: N rows match WHERE in TABLE, every message once
	local got
	got=$(q "$1" "SELECT count(*), count(DISTINCT message) FROM t WHERE $2")
	echo "  $1 where $2: $got, want $3"
	[ "$got" = "[\"$3\",\"$3\"]" ]
}
sshd=$(python3 -c "print(sum(1 for i in range($np) if i % 3 == 0))")
check "every access line is in access once" once access "true" "$na"
check "every sshd line is in security once" once security "true" "$sshd"
check "every other application line is in logs once" once logs "message LIKE 'app-line-%'" "$((np - sshd))"
check "every syslog message is in logs once" once logs "message LIKE 'syslog-msg-%'" "$ns"
check "the syslog senders' hosts are the logs table's host" \
	test "$(q logs "SELECT count(DISTINCT host) FROM t WHERE message LIKE 'syslog-msg-%'")" = '["20"]'
# Lines read before the agent first reached the table have status typed too: their files
# were written under provisional field ids, which the commit replaced with the table's.
check "the access table's typed status holds every line's status, those read before the first contact too" \
	test "$(q access "SELECT count(*) FROM t WHERE status IN (200, 300, 400, 500)")" = "[\"$na\"]"
check "no line keeps its status in attrs" \
	test "$(q access "SELECT count(*) FROM t WHERE attrs['status'] IS NOT NULL")" = '["0"]'
check "the provisional ids were replaced before the first commit" grep -q 'now has the table.s field ids' "$d/err"
aggregated() {
	local f
	f=$("$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$SPORT" s3://bkt/field/default/statuses 2>/dev/null |
		sed -n "s#^  s3://\([^ ]*\)  records=.*#'$d/store/\1'#p" | paste -sd,)
	[ "$(duck "SELECT sum(count), sum(late_events) FROM read_parquet([$f])")" = "[\"$na\",\"0\"]" ]
}
check "the aggregation counted every access line once" aggregated
check "no state file was set aside" test -z "$(find "$d/state" -path '*quarantine*' -type f | head -1)"
check "nothing was dropped or counted damaged" \
	python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
bad = {k: m.get(k) for k in ("dropped_entries", "spool_damaged", "state_damaged", "quarantined", "spool_lost_entries") if m.get(k)}
print("  ", bad or "clean")
sys.exit(1 if bad else 0)' "$d/state/metrics.json"
check "the agent logged no error" bash -c "! grep -E '\\b(error|fatal)\\b' '$d/err' | grep -v 'cannot reach\\|unreachable\\|Couldn.t connect\\|connect' | head -5 | grep ."
stub_stop
finish
