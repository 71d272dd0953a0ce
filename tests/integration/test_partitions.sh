#!/usr/bin/env bash
# Many partitions in one batch: 2,000 lines over 8 apps with partition_by [app], 3,000
# syslog messages from 500 hosts with bucket(16, host), and a backfill of 6 interleaved
# hours with hour(ts). Each seal writes one file per partition (the batch once sealed
# every few rows and wrote a file per row, 509 MB for the first), bounded bytes, and
# every line exactly once.
source "$(dirname "$0")/lib.sh"

# run NAME PARSER-LINES PARTITION: floe run --once over $T/NAME/*.log into $T/wh-NAME.
run() {
	cat >"$T/$1.yaml" <<YAML
agent: { id: parts-$1, state_dir: $T/state-$1 }
inputs:
  - type: tail
    paths: ["$T/$1/*.log"]
    start_at: beginning
$2
tables:
  logs:
    partition_by: [$3]
lake: { warehouse: $T/wh-$1 }
YAML
	local rc=0
	"$FLOE_BIN" run -c "$T/$1.yaml" --once --log-level warn 2>"$T/$1.err" || rc=$?
	check "$1: run --once succeeds" test $rc = 0
	live_files "$T/wh-$1/default/logs" >"$T/$1.files"
}

# verify NAME LINES MAX-FILES MAX-BYTES: rows, distinct messages, files and bytes.
verify() {
	local files bytes list out
	files=$(wc -l <"$T/$1.files")
	bytes=$(xargs -r stat -c %s <"$T/$1.files" | awk '{s += $1} END {print s + 0}')
	list=$(sed "s/.*/'&'/" "$T/$1.files" | paste -sd,)
	out=$(duck "select count(*), count(distinct message) from read_parquet([$list])")
	check "$1: every line exactly once ($out)" test "$out" = "[\"$2\",\"$2\"]"
	check "$1: $files files, at most $3" test "$files" -le "$3"
	check "$1: $bytes bytes, at most $4" test "$bytes" -le "$4"
}

mkdir -p "$T/apps" "$T/hosts" "$T/hours"
python3 - "$T" <<'PY'
import json, sys
t = sys.argv[1]
with open(f"{t}/apps/app.log", "w") as f:
    for i in range(2000):
        f.write(json.dumps({"time": "2026-03-01T10:00:%02dZ" % (i % 60), "service": "app%d" % (i % 8),
                            "msg": "request %d done in %d ms" % (i, i * 7 % 300)}) + "\n")
with open(f"{t}/hours/app.log", "w") as f:
    for i in range(3000):  # six hours interleaved, as a backfill of six files read at once
        f.write(json.dumps({"time": "2026-03-01T%02d:%02d:%02dZ" % (i % 6, i // 60 % 60, i % 60),
                            "msg": "event %d" % i}) + "\n")
PY

JSON='    parser: json
    timestamp: { field: time, format: rfc3339 }'
run apps "$JSON" app
verify apps 2000 8 $((8 * 64 * 1024))

# bucket(16, host): a syslog receiver (the only input whose rows carry the sender's host),
# 3,000 messages from 500 hosts over TCP, stopped by PID once all are committed.
P=$(free_port)
cat >"$T/hosts.yaml" <<YAML
agent: { id: parts-hosts, state_dir: $T/state-hosts }
inputs: [ { type: syslog, listen: "tcp://127.0.0.1:$P" } ]
tables:
  logs:
    partition_by: ["bucket(16, host)"]
    commit_interval: 1s
lake: { warehouse: $T/wh-hosts }
YAML
"$FLOE_BIN" run -c "$T/hosts.yaml" 2>"$T/hosts.err" &
PID=$!
PIDS+=($PID)
for i in $(seq 1 100); do grep -q "agent .* started" "$T/hosts.err" && break; sleep 0.1; done
python3 - "$P" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"".join(b"<13>1 2026-03-01T10:00:00Z host%d sshd 7 - - session %d opened\n" % (i % 500, i)
                   for i in range(3000)))
s.close()
PY
committed() {
	python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/state-hosts/metrics.json'))['rows_committed']>=3000 else 1)" 2>/dev/null
}
for i in $(seq 1 300); do committed && break; sleep 0.1; done
kill -TERM $PID
wait $PID || true
check "hosts: all 3000 committed" committed
live_files "$T/wh-hosts/default/logs" >"$T/hosts.files"
seals=$(grep -c "sealed spool entry" "$T/hosts.err" || true)
verify hosts 3000 $((16 * seals)) $((16 * seals * 64 * 1024))
check "hosts: $seals seal(s) for 3000 messages" test "$seals" -le 5
out=$(duck "select count(distinct host) from read_parquet([$(sed "s/.*/'&'/" "$T/hosts.files" | paste -sd,)])")
check "hosts: 500 hosts ($out)" test "$out" = '["500"]'
run hours "$JSON" '"hour(ts)"'
verify hours 3000 6 $((6 * 64 * 1024))

check "floe check states how many partitions the budget holds" \
	sh -c "'$FLOE_BIN' check -c '$T/apps.yaml' 2>/dev/null | grep -q '^# partitions: the budget holds [0-9]* open writers'"
finish
