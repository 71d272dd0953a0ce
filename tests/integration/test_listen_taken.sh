#!/usr/bin/env bash
# Listen addresses another process holds (another exporter or rsyslog on the port, a
# stale process, an address not on an interface yet at boot): agent.http.listen, and a
# syslog input's UDP and TCP listeners. floe used to exit 1 at the start, which a service
# manager restarts every 5 s for as long as the port is held, so nothing was read at all,
# the tail inputs' lines included. Now the agent starts without them, reads and commits
# what the others read, says so (/healthz names the syslog input), and takes each address
# once it is free (tried every 5 s). Likewise a tls:// listener whose certificate and key
# are not there yet at the start (an ACME client at boot, a mount), whose start exited 2
# (never restarted) though floe check said OK: it waits for the files.
source "$(dirname "$0")/lib.sh"

d="$T/taken"
mkdir -p "$d/logs"
PORT=$(free_port)
mkfifo "$d/hold"
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("bound", flush=True)
sys.stdin.read()' "$PORT" <"$d/hold" >"$d/bound" &
HOLDER=$!
PIDS+=($HOLDER)
exec 4>"$d/hold"
check "another process holds the port" wait_for 10 grep -q bound "$d/bound"

COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s#^  state_dir: .*#&\n  http: { listen: \"127.0.0.1:$PORT\" }#" "$d/floe.yaml"
seq 1 20 | sed 's/^/a /' >"$d/logs/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" 4>&- &
pid=$!
PIDS+=($pid)
check "the start says the address is taken and that it runs on" \
	log_has "$d/err" "agent.http.listen 127.0.0.1:$PORT: bind: Address already in use: the agent runs without" 1 "$pid"
check "the lines are committed meanwhile" log_has "$d/err" "committed snapshot" 1 "$pid"
check "the agent still runs" kill -0 "$pid"

# The port is given up: the pages come within a try or two.
exec 4>&-
wait $HOLDER || true
check "once the port is free, the agent takes it" log_has "$d/err" "status: serving /metrics, /healthz and /livez on tcp://127.0.0.1:$PORT (the address taken at try" 1 "$pid"
check "and serves /livez" wait_for 10 sh -c "curl -sf http://127.0.0.1:$PORT/livez | grep -q ok"
check "and /metrics" wait_for 10 sh -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q '^floe_rows_committed_total 20$'"
seq 1 10 | sed 's/^/b /' >>"$d/logs/x.log"
check "and commits on" log_has "$d/err" "committed snapshot" 2 "$pid"
check "the agent stops cleanly" stop_pid "$pid"
TABLE="$d/wh/default/logs"
check "every line once" \
	test "$(rows_sql "$TABLE" "SELECT count(*) = 30 AND count(DISTINCT message) = 30 FROM t")" = '[true]'

# 2. A syslog input's UDP and TCP addresses held; a tail input beside it.
e="$T/syslog"
mkdir -p "$e/logs"
UDP=$(free_port)
TCP=$(free_port)
HTTP=$(free_port)
mkfifo "$e/hold"
python3 -c '
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.bind(("127.0.0.1", int(sys.argv[1])))
t = socket.socket()
t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(("127.0.0.1", int(sys.argv[2])))
t.listen()
print("bound", flush=True)
sys.stdin.read()' "$UDP" "$TCP" <"$e/hold" >"$e/bound" &
HOLDER=$!
PIDS+=($HOLDER)
exec 4>"$e/hold"
check "syslog: another process holds the UDP and TCP ports" wait_for 10 grep -q bound "$e/bound"
cat >"$e/floe.yaml" <<YAML
agent:
  id: taken
  state_dir: $e/state
  http: { listen: "127.0.0.1:$HTTP" }
inputs:
  - { type: tail, paths: ["$e/logs/*.log"], start_at: beginning }
  - { type: syslog, name: net, listen: "udp://127.0.0.1:$UDP" }
  - { type: syslog, name: net2, listen: "tcp://127.0.0.1:$TCP" }
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $e/wh
YAML
seq 1 20 | sed 's/^/tail /' >"$e/logs/x.log"
"$FLOE_BIN" run -c "$e/floe.yaml" 2>"$e/err" 4>&- &
pid=$!
PIDS+=($pid)
port=$HTTP
check "syslog: the start says the UDP address is taken and that the others read" \
	log_has "$e/err" "input net: listen udp://127.0.0.1:$UDP: bind: Address already in use: nothing is received there until it can be taken" 1 "$pid"
check "syslog: and the TCP address" log_has "$e/err" "input net2: listen tcp://127.0.0.1:$TCP: bind: Address already in use" 1 "$pid"
check "syslog: the tail input's lines are committed meanwhile" log_has "$e/err" "committed snapshot" 1 "$pid"
check "syslog: /healthz names the input and the address (503)" \
	wait_for 10 sh -c "curl -s http://127.0.0.1:$HTTP/healthz | grep -q 'input net: listen udp://127.0.0.1:$UDP: Address already in use'"
check "syslog: and, on a line of its own, the other input" \
	sh -c "curl -s http://127.0.0.1:$HTTP/healthz | grep -q '^input net2: listen tcp://127.0.0.1:$TCP: Address already in use'"
exec 4>&-
wait $HOLDER || true
check "syslog: once free, both addresses are taken" log_has "$e/err" "input net2: listening on tcp://127.0.0.1:$TCP" 1 "$pid"
check "syslog: the UDP one too" log_has "$e/err" "input net: listening on udp://127.0.0.1:$UDP" 1 "$pid"
check "syslog: /healthz is ok" wait_for 10 sh -c "curl -s http://127.0.0.1:$HTTP/healthz | grep -q '^ok'"
python3 -c '
import socket, sys
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for i in range(5):
    u.sendto(b"<13>Dec  7 10:00:00 dev app: udp %d" % i, ("127.0.0.1", int(sys.argv[1])))
t = socket.create_connection(("127.0.0.1", int(sys.argv[2])))
for i in range(5):
    t.sendall(b"<13>Dec  7 10:00:00 dev app: tcp %d\n" % i)
t.close()' "$UDP" "$TCP"
TABLE2="$e/wh/default/logs"
rows_ok() { [ "$(rows_sql "$TABLE2" "SELECT count(*) = 30 AND count(DISTINCT message) = 30 FROM t")" = '[true]' ]; }
check "syslog: the messages over both are committed, the tail lines once" wait_for 20 rows_ok
check "syslog: the agent stops cleanly" stop_pid "$pid"

# 3. A tls:// listener whose certificate and key are not there yet.
command -v openssl >/dev/null || { finish; exit; }
f="$T/tls"
mkdir -p "$f/logs" "$f/made"
TLSP=$(free_port)
HTTP=$(free_port)
(cd "$f/made" && openssl req -x509 -newkey rsa:2048 -nodes -keyout key.pem -out cert.pem \
	-days 2 -subj /CN=127.0.0.1 2>/dev/null)
cat >"$f/floe.yaml" <<YAML
agent:
  id: tls-late
  state_dir: $f/state
  http: { listen: "127.0.0.1:$HTTP" }
inputs:
  - { type: tail, paths: ["$f/logs/*.log"], start_at: beginning }
  - type: syslog
    name: sec
    listen: "tls://127.0.0.1:$TLSP"
    tls: { cert: "$f/tls/cert.pem", key: "$f/tls/key.pem" }
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $f/wh
YAML
seq 1 10 | sed 's/^/tail /' >"$f/logs/x.log"
"$FLOE_BIN" run -c "$f/floe.yaml" 2>"$f/err" &
pid=$!
PIDS+=($pid)
check "tls: the start says the files are missing and that the listener waits" \
	log_has "$f/err" "input sec: tls: .*cert.pem: No such file or directory: its tls:// listeners wait for the files" 1 "$pid"
check "tls: the tail input's lines are committed meanwhile" log_has "$f/err" "committed snapshot" 1 "$pid"
check "tls: /healthz names the listener and the file (503)" \
	wait_for 10 sh -c "curl -s http://127.0.0.1:$HTTP/healthz | grep -q 'input sec: listen tls://127.0.0.1:$TLSP: tls: .*No such file'"
mkdir -p "$f/tls" && cp "$f/made/key.pem" "$f/made/cert.pem" "$f/tls/"
check "tls: the files are read once there" log_has "$f/err" "input sec: tls: the certificate and key are read now" 1 "$pid"
check "tls: and the listener opened" log_has "$f/err" "input sec: listening on tls://127.0.0.1:$TLSP" 1 "$pid"
python3 -c '
import socket, ssl, sys
c = ssl.create_default_context(cafile=sys.argv[2]); c.check_hostname = False
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
t = c.wrap_socket(s, server_hostname="127.0.0.1")
for i in range(5):
    t.sendall(b"<13>Dec  7 10:00:00 dev app: tls %d\n" % i)
t.close()' "$TLSP" "$f/tls/cert.pem"
TABLE3="$f/wh/default/logs"
rows_ok3() { [ "$(rows_sql "$TABLE3" "SELECT count(*) = 15 AND count(DISTINCT message) = 15 FROM t")" = '[true]' ]; }
check "tls: its messages and the tail lines are committed, once each" wait_for 20 rows_ok3
check "tls: /healthz is ok" wait_for 10 sh -c "curl -s http://127.0.0.1:$HTTP/healthz | grep -q '^ok'"
check "tls: the agent stops cleanly" stop_pid "$pid"
finish
