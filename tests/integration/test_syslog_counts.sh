#!/usr/bin/env bash
# Every syslog message is a row or a counted loss, in metrics.json and in /metrics alike:
# a message without a syslog header is a parse failure and a bad timestamp alone a ts
# failure (both on /metrics, per input, while the agent runs); a frame half sent on a
# connection still open at SIGTERM is kept, as at the peer's close; the inputs' wait for
# a full spool shows in floe_spool_blocked_seconds_total while it lasts; and datagrams
# received while the spool is full and the store refuses, then a SIGTERM, are each
# either taken or counted (kernel drops, queue drops, lost at the stop).
source "$(dirname "$0")/lib.sh"

# scrape DIR: /metrics of the agent whose log is DIR/err into DIR/m.txt
scrape() {
	local port
	port=$(logged_port "$1/err")
	curl -sf "http://127.0.0.1:$port/metrics" >"$1/m.txt" 2>/dev/null || true
}
value() { awk -v n="$2" '$1 == n { print $2 }' "$1/m.txt"; }
json() { python3 -c "import json,sys; m=json.load(open('$1/state/metrics.json')); print($2)"; }

config() { # DIR LISTEN-YAML [EXTRA-TOP-LEVEL-YAML]
	cat >"$1/floe.yaml" <<YAML
agent:
  state_dir: $1/state
  http:
    listen: 127.0.0.1:0
inputs:
  - type: syslog
    listen: $2
tables:
  logs:
    commit_interval: ${COMMIT_INTERVAL:-60s}
lake:
  warehouse: $1/wh
${3:-}
YAML
}
start_agent() { # DIR: sets PID
	"$FLOE_BIN" run -c "$1/floe.yaml" 2>>"$1/err" &
	PID=$!
	PIDS+=($PID)
	wait_log "$1/err" "status: serving" 20 || { cat "$1/err"; return 1; }
}

# ---- parse and timestamp failures on /metrics; a half frame at SIGTERM --------------
d="$T/parse"
mkdir -p "$d"
P=$(free_port)
config "$d" "[\"udp://127.0.0.1:$P\", \"tcp://127.0.0.1:$P\"]"
start_agent "$d"
python3 - "$P" <<'PY'
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"\xff\xfe garbage that is no syslog", ("127.0.0.1", int(sys.argv[1])))
u.sendto(b"<13>1 2026-02-30T03:04:05Z h1 app - - - a day that does not exist", ("127.0.0.1", int(sys.argv[1])))
PY
# A sender whose last frame is half sent when the agent stops; it reads until the agent
# closes the connection.
python3 - "$P" >"$d/holder.out" 2>&1 <<'PY' &
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"<13>1 2026-01-02T03:04:05Z h2 app - - - whole\n<13>1 2026-01-02T03:04:05Z h3 app - - - half sent")
print("sent", flush=True)
s.recv(1)
PY
HOLDER=$!
PIDS+=($HOLDER)
for i in $(seq 1 200); do
	scrape "$d"
	[ "$(value "$d" 'floe_input_lines_total{input="1"}')" = 3 ] && break
	sleep 0.1
done
check "/metrics: three whole messages taken" test "$(value "$d" 'floe_input_lines_total{input="1"}')" = 3
check "/metrics: the message without a header is a parse failure" \
	test "$(value "$d" 'floe_input_parse_failures_total{input="1"}')" = 1
check "/metrics: the bad timestamp is a ts failure" \
	test "$(value "$d" 'floe_input_ts_failures_total{input="1"}')" = 1
check "/metrics: the totals say the same" \
	test "$(value "$d" floe_parse_failures_total) $(value "$d" floe_ts_failures_total)" = "1 1"
check "SIGTERM with a frame half sent: exit 0" stop_pid $PID 20
wait $HOLDER 2>/dev/null || true
W="$d/wh/default/logs"
check "the half-sent frame is kept, as at the peer's close" \
	test "$("$FLOE_BIN" inspect "$W" | sed -n 's/^  total-records=//p')" = 4
check "metrics.json: one parse failure, one ts failure, one frame kept at the close" \
	test "$(json "$d" "m['parse_failures'], m['ts_failures'], m['inputs'][0]['at_close'], m['inputs'][0].get('lost_at_stop', 0)")" = "1 1 1 0"

# ---- a full spool: the wait is counted as it goes; datagrams at SIGTERM ----------------
d="$T/full"
mkdir -p "$d"
P=$(free_port)
COMMIT_INTERVAL=1s config "$d" "[\"udp://127.0.0.1:$P\"]" "spool:
  max_bytes: 16MiB"
start_agent "$d"
# Every commit fails from now on: the table's metadata directory replaced by a file.
META=$d/wh/default/logs/metadata
for i in $(seq 1 200); do [ -d "$META" ] && break; sleep 0.1; done
mv "$META" "$META.away"
echo x >"$META"
# send N: N datagrams of about 1 KB that hardly compress, paced a little.
send() {
	python3 - "$P" "$1" <<'PY'
import base64, os, socket, sys, time
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(int(sys.argv[2])):
    body = base64.b64encode(os.urandom(750))
    u.sendto(b"<13>1 2026-01-02T03:04:05Z h app - - - " + body, ("127.0.0.1", int(sys.argv[1])))
    if i % 500 == 499:
        time.sleep(0.01)
PY
}
sent=0
for round in $(seq 1 20); do
	send 5000
	sent=$((sent + 5000))
	grep -q "inputs wait for commits" "$d/err" && break
done
check "the spool fills and the inputs wait" wait_log "$d/err" "inputs wait for commits" 20
for i in $(seq 1 200); do
	scrape "$d"
	b=$(value "$d" floe_spool_blocked_seconds_total)
	awk -v b="${b:-0}" 'BEGIN { exit !(b > 0) }' && break
	sleep 0.1
done
check "/metrics: floe_spool_blocked_seconds_total grows while the inputs wait ($b)" \
	awk -v b="${b:-0}" 'BEGIN { exit !(b > 0) }'
send 30000
sent=$((sent + 30000))
stop_pid $PID 20 || true
sum=$(json "$d" "m['inputs'][0]['lines'] + m['inputs'][0]['kernel_drops'] + m['inputs'][0]['dropped'] + m['inputs'][0].get('lost_at_stop', 0)")
check "$sent datagrams, each taken or counted as lost ($(json "$d" "m['inputs'][0]"))" test "$sum" = "$sent"
finish
