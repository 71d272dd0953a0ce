#!/usr/bin/env bash
# The syslog input against real senders: util-linux `logger` over UDP, TCP (both
# framings), unix datagram and stream sockets; openssl s_client over TLS, with and without
# a client certificate under mutual TLS; raw framing cases (octet counting, LF, CRLF, NUL,
# an oversized frame, a frame cut by the close, bytes that are no syslog); a stop that
# commits what the sockets held; kill -9 and restart losing nothing durable and
# duplicating nothing; and 1,000 idle connections within the memory budget. Every row is
# read back by DuckDB.
source "$(dirname "$0")/lib.sh"

command -v logger >/dev/null || skip "logger (bsdutils) is missing"


count() { rows_sql "$1" "SELECT count(*) FROM t ${2:-}" | tr -d '[]"\n'; }

# start_agent DIR: runs floe on DIR/floe.yaml; sets PID, and PORT (/metrics). A restart
# appends to the same log: it waits for one more start than the log held, whose port is
# the last one logged (the status listener starts before the agent says it started).
start_agent() {
	local starts
	starts=$(grep -c "agent .* started" "$1/err" 2>/dev/null) || true
	"$FLOE_BIN" run -c "$1/floe.yaml" 2>>"$1/err" &
	PID=$!
	PIDS+=($PID)
	LOG_WAIT_S=10 log_has "$1/err" "agent .* started" $((starts + 1)) $PID || { cat "$1/err"; return 1; }
	PORT=$(logged_port "$1/err")
}

# at_least METRIC N: waits (20 s at most) until METRIC on /metrics of the agent started
# last (every series of it summed) is N or more: what the agent has read or accepted, so
# that what follows comes after it.
at_least() {
	local i n
	for i in $(seq 1 200); do
		n=$(curl -sf "http://127.0.0.1:$PORT/metrics" |
			awk -v m="$1" '$1 == m || index($1, m "{") == 1 { s += $2; f = 1 } END { if (f) print s }')
		[ "${n:-0}" -ge "$2" ] && return 0
		sleep 0.1
	done
	echo "  $1 is ${n:-absent}, not $2"
	return 1
}
read_n() { at_least floe_lines_total "$1"; } # read_n N: N messages read

write_syslog_config() { # DIR LISTEN-YAML [EXTRA-INPUT-KEYS]
	cat >"$1/floe.yaml" <<YAML
agent:
  id: sl-test
  state_dir: $1/state
  http: {listen: "127.0.0.1:0"}
inputs:
  - type: syslog
    listen: $2
    socket_mode: "0666"
${3:-}
tables:
  logs:
    commit_interval: ${COMMIT_INTERVAL:-60s}
lake:
  warehouse: $1/wh
YAML
}

# ---- real senders: logger over every plain transport ----------------------------------
d="$T/logger"
mkdir -p "$d"
U=$(free_port)
write_syslog_config "$d" "[\"udp://127.0.0.1:$U\", \"tcp://127.0.0.1:$U\", \"unix://$d/dgram.sock\", \"unix+stream://$d/stream.sock\"]"
check "floe check accepts a syslog input" "$FLOE_BIN" check -c "$d/floe.yaml" --log-level warn >/dev/null
start_agent "$d"
# libmbedtls and libmbedx509 are loaded only for a tls:// listener (platform/tls_lib.h).
check "no tls:// listener: libmbedtls and libmbedx509 are not loaded" \
	bash -c "! grep -q 'libmbed\(tls\|x509\)' /proc/$PID/maps"
logger -n 127.0.0.1 -P $U -d --rfc5424 -t udp5424 -i --msgid M1 "over udp"
logger -n 127.0.0.1 -P $U -d --rfc3164 -t udp3164 "over udp bsd"
logger -n 127.0.0.1 -P $U -T --rfc5424 -t tcplf "tcp non-transparent"
logger -n 127.0.0.1 -P $U -T --octet-count --rfc5424 --sd-id "ex@32473" \
	--sd-param 'k="a \"quoted\" \]"' -t tcpoc "tcp octet counted"
logger -u "$d/dgram.sock" --socket-errors=on -t localdg "unix datagram"
logger -u "$d/stream.sock" --socket-errors=on -t localst "unix stream"
check "logger: the agent reads the six messages" read_n 6
check "SIGTERM after the senders: exit 0" stop_pid $PID
W="$d/wh/default/logs"
check "logger: six messages, six rows" test "$(count "$W")" = 6
check "logger: UDP RFC 5424 with pid and msgid into their columns" \
	test "$(rows_sql "$W" "SELECT source, app, msg_id, message, proc_id IS NOT NULL, facility, severity FROM t WHERE app='udp5424'")" = \
	'["syslog+udp://127.0.0.1","udp5424","M1","over udp",true,1,5]'
check "logger: RFC 3164 over UDP" \
	test "$(rows_sql "$W" "SELECT message FROM t WHERE app='udp3164'")" = '["over udp bsd"]'
check "logger: TCP octet counting with structured data into attrs (escapes undone)" \
	test "$(rows_sql "$W" "SELECT message, element_at(attrs, 'ex@32473.k')[1] FROM t WHERE app='tcpoc'")" = \
	'["tcp octet counted","a \"quoted\" ]"]'
check "logger: TCP non-transparent framing" \
	test "$(rows_sql "$W" "SELECT source FROM t WHERE app='tcplf'")" = '["syslog+tcp://127.0.0.1"]'
check "logger: unix sockets, source names the socket, host is this host's" \
	test "$(rows_sql "$W" "SELECT source, host = '$(hostname)' FROM t WHERE app LIKE 'local%' ORDER BY app")" = \
	"$(printf '["syslog+unix://%s/dgram.sock",true]\n["syslog+unix+stream://%s/stream.sock",true]' "$d" "$d")"
check "the unix socket files are removed at exit" test ! -e "$d/dgram.sock" -a ! -e "$d/stream.sock"
{ "$FLOE_BIN" status -c "$d/floe.yaml" || true; } >"$d/status" 2>&1
check "floe status shows the syslog input's messages" grep -q "^  6 messages, " "$d/status"

# ---- framing and bad input over raw TCP -------------------------------------------------
d="$T/framing"
mkdir -p "$d"
P=$(free_port)
write_syslog_config "$d" "\"tcp://127.0.0.1:$P\"" "    max_message_bytes: 1KiB"
start_agent "$d"
python3 - "$P" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
m = b"<13>1 2026-01-02T03:04:05.123456Z h1 oc - - - counted\nwith LF inside"
s.sendall(str(len(m)).encode() + b" " + m)
s.sendall(b"<14>Jan  2 03:04:05 h2 lf[7]: plain LF\n")
s.sendall(b"<15>Jan  2 03:04:05 h3 crlf: with CRLF\r\n")
s.sendall(b"<16>Jan  2 03:04:05 h4 nul: NUL ended\x00")
s.sendall(b"<17>Jan  2 03:04:05 h5 big: " + b"x" * 3000 + b"\n")
s.sendall(b"\xff\xfe garbage that is no syslog\n")
s.sendall(b"<18>Jan  2 03:04:05 h6 half: cut by the close")
s.close()
PY
check "framing: the agent reads the seven frames" read_n 7
check "framing: SIGTERM exit 0" stop_pid $PID
W="$d/wh/default/logs"
check "framing: seven frames, seven rows" test "$(count "$W")" = 7
check "framing: octet counting keeps an LF inside the message, microseconds kept" \
	test "$(rows_sql "$W" "SELECT message, epoch_us(ts) % 1000000 FROM t WHERE host='h1'")" = \
	'["counted\nwith LF inside","123456"]'
check "framing: LF, CRLF and NUL trailers" \
	test "$(rows_sql "$W" "SELECT string_agg(message, '|' ORDER BY host) FROM t WHERE host IN ('h2','h3','h4')")" = \
	'["plain LF|with CRLF|NUL ended"]'
check "framing: an oversized frame is cut at max_message_bytes, marked, counted" \
	test "$(rows_sql "$W" "SELECT length(message) < 1024, element_at(attrs, 'syslog.truncated')[1] FROM t WHERE host='h5'")" = \
	'[true,"true"]'
check "framing: bytes that are no syslog are kept whole, facility null, syslog.error set" \
	test "$(rows_sql "$W" "SELECT facility IS NULL, element_at(attrs, 'syslog.error')[1] IS NOT NULL FROM t WHERE message LIKE '%garbage%'")" = \
	'[true,true]'
check "framing: a frame cut by the close is kept" \
	test "$(rows_sql "$W" "SELECT message FROM t WHERE host='h6'")" = '["cut by the close"]'
check "framing: metrics count the truncation, the kept half frame and the parse failure" \
	python3 -c "
import json,sys; m=json.load(open('$d/state/metrics.json')); i=m['inputs'][0]
sys.exit(0 if i['truncated']==1 and i['at_close']==1 and m['parse_failures']==1 else 1)"

# ---- TLS, mutual TLS, a bad handshake -------------------------------------------------
if command -v openssl >/dev/null; then
	d="$T/tls"
	mkdir -p "$d"
	P=$(free_port)
	(
		cd "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=testca 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null
		openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 2>/dev/null
		openssl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj /CN=client 2>/dev/null
		openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2 2>/dev/null
	)
	write_syslog_config "$d" "\"tls://127.0.0.1:$P\"" \
		"    tls: {cert: $d/srv.pem, key: $d/srv.key, ca: $d/ca.pem}"
	start_agent "$d"
	# A static floe (FLOE_STATIC) links them and loads nothing.
	if readelf -d "$FLOE_BIN" | grep NEEDED >/dev/null; then
		check "floe does not link libmbedtls or libmbedx509 (readelf -d)" \
			bash -c "! readelf -d '$FLOE_BIN' | grep -q 'NEEDED.*libmbed\(tls\|x509\)'"
		check "nothing floe links brings libmbedtls or libmbedx509 (ldd)" \
			bash -c "! ldd '$FLOE_BIN' | grep -q 'libmbed\(tls\|x509\)'"
		check "a tls:// listener: libmbedtls and libmbedx509 are loaded" \
			bash -c "grep -q '/libmbedtls\.so' /proc/$PID/maps && grep -q '/libmbedx509\.so' /proc/$PID/maps"
	fi
	# A client that connects and never speaks holds its handshake open meanwhile: it
	# must not hold up the others.
	python3 -c "
import socket, time
s = socket.create_connection(('127.0.0.1', $P)); s.send(b'\x16\x03\x01'); time.sleep(20)" &
	STALL=$!
	PIDS+=($STALL)
	check "tls: the stalled client's connection is accepted first" at_least floe_syslog_connections_total 1
	printf '<13>1 2026-01-02T03:04:05Z tlshost app - - - over mutual tls\n' |
		timeout 10 openssl s_client -quiet -connect 127.0.0.1:$P -cert "$d/cli.pem" -key "$d/cli.key" \
			-CAfile "$d/ca.pem" >/dev/null 2>&1 || true
	kill $STALL 2>/dev/null || true
	wait $STALL 2>/dev/null || true
	# A SIGHUP starts the agent again on the configuration read anew, whose input is
	# unchanged: kept whole (its listener and TLS server), with its TLS files read again.
	# The no-cert client comes from another address: the TLS server logs a peer's
	# failed handshakes once a minute, and the stalled client's may have been logged.
	kill -HUP $PID
	check "tls: SIGHUP reloads the certificate" wait_log "$d/err" "TLS certificate and key reloaded"
	check "tls: the agent starts again after the SIGHUP" log_has "$d/err" "agent .* started" 2
	python3 -c "
import socket, ssl
s = socket.socket(); s.bind(('127.0.0.2', 0)); s.settimeout(10); s.connect(('127.0.0.1', $P))
c = ssl.create_default_context(cafile='$d/ca.pem'); c.check_hostname = False
try:
    t = c.wrap_socket(s, server_hostname='127.0.0.1')
    t.sendall(b'<13>1 2026-01-02T03:04:05Z nocert app - - - refused\\n'); t.recv(1)
except (OSError, ssl.SSLError): pass" || true
	# The stop follows the refusal's log line at once: the receiver thread's counters
	# must be in the last metrics.json however little time it had to publish them (the
	# runner joins the receiver and copies its counters before writing it). A wait that
	# ran out fails here, under its own name, not as a missing count below.
	check "tls: the client without a certificate fails its handshake, logged" \
		log_has "$d/err" "tls: handshake with 127.0.0.2 failed"
	check "tls: SIGTERM exit 0" stop_pid $PID
	W="$d/wh/default/logs"
	check "tls: the client with a certificate gets its message in (a stalled handshake beside it)" \
		test "$(rows_sql "$W" "SELECT host, message FROM t")" = '["tlshost","over mutual tls"]'
	check "tls: the client without one fails its handshake, counted" \
		python3 -c "
import json,sys; m=json.load(open('$d/state/metrics.json'))
sys.exit(0 if m['inputs'][0]['handshake_failures']>=1 else 1)"
	# Where libmbedtls cannot be loaded (a file that is no library comes first in the
	# loader's path), the listener's start fails naming it and its package: exit 1.
	if readelf -d "$FLOE_BIN" | grep NEEDED >/dev/null; then
		mkdir -p "$d/nolib"
		echo "not a library" >"$d/nolib/libmbedtls.so.14"
		rc=0
		LD_LIBRARY_PATH="$d/nolib" timeout 20 "$FLOE_BIN" run -c "$d/floe.yaml" --once \
			--log-level warn >"$d/nolib.err" 2>&1 || rc=$?
		check "tls: without libmbedtls the agent exits 1" test "$rc" = 1
		check "tls: without libmbedtls the error names the library and the package" \
			grep -q "tls: cannot load libmbedtls.so.14 (.*): tls:// listeners need it (Debian: libmbedtls14)" \
			"$d/nolib.err"
	fi
fi

# ---- two inputs, IPv6 ---------------------------------------------------------------------
if python3 -c "import socket; s=socket.socket(socket.AF_INET6, socket.SOCK_DGRAM); s.bind(('::1', 0))" 2>/dev/null; then
	d="$T/v6"
	mkdir -p "$d"
	P=$(free_port)
	cat >"$d/floe.yaml" <<YAML
agent: {id: sl-v6, state_dir: $d/state, http: {listen: "127.0.0.1:0"}}
inputs:
  - type: syslog
    listen: ["udp://[::1]:$P", "tcp://[::1]:$P"]
  - type: syslog
    listen: "udp://127.0.0.1:$P"
    host_from: peer
lake: {warehouse: $d/wh}
YAML
	start_agent "$d"
	logger -n ::1 -P $P -d --rfc5424 -t v6udp "over udp6"
	logger -n ::1 -P $P -T --rfc5424 -t v6tcp "over tcp6"
	logger -n 127.0.0.1 -P $P -d --rfc5424 -t v4udp "over udp4, host from the peer"
	check "v6: the agent reads the three messages" read_n 3
	check "v6: SIGTERM exit 0" stop_pid $PID
	W="$d/wh/default/logs"
	check "two inputs, IPv6 and IPv4 listeners on one port: every message, the peer as host where asked" \
		test "$(rows_sql "$W" "SELECT string_agg(app || ' ' || source || ' ' || (host = '127.0.0.1'), '|' ORDER BY app) FROM t")" = \
		'["v4udp syslog+udp://127.0.0.1 true|v6tcp syslog+tcp://::1 false|v6udp syslog+udp://::1 false"]'
fi

# ---- kill -9 and restart: what was durable stays, nothing twice ------------------------
d="$T/kill"
mkdir -p "$d"
P=$(free_port)
COMMIT_INTERVAL=1s write_syslog_config "$d" "\"tcp://127.0.0.1:$P\""
start_agent "$d"
send_n() { # send_n PORT FROM TO: messages seq FROM..TO over one connection
	python3 - "$@" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"".join(b"<13>1 - h app - - - m%d\n" % i for i in range(int(sys.argv[2]), int(sys.argv[3]) + 1)))
s.close()
PY
}
send_n $P 1 500
# kill -9 once all 500 are committed (the README's promise covers what was committed, or
# sealed into the spool; what was only received is lost to a kill -9).
for i in $(seq 1 100); do
	python3 -c "import json,sys; sys.exit(0 if json.load(open('$d/state/metrics.json'))['rows_committed']>=500 else 1)" \
		2>/dev/null && break
	sleep 0.1
done
kill -9 $PID
wait $PID 2>/dev/null || true
start_agent "$d"
send_n $P 501 1000
check "kill: the restarted agent reads the 500 new messages" read_n 500
check "kill: SIGTERM after the restart exits 0" stop_pid $PID
W="$d/wh/default/logs"
check "kill -9 after a commit, then restart: every message once (1000 rows, 1000 distinct)" \
	test "$(rows_sql "$W" "SELECT count(*), count(DISTINCT message) FROM t")" = '["1000","1000"]'

# ---- 1,000 idle connections within the budget --------------------------------------------
d="$T/idle"
mkdir -p "$d"
P=$(free_port)
write_syslog_config "$d" "\"tcp://127.0.0.1:$P\""
start_agent "$d"
rss() { awk '/VmRSS/ {print $2}' /proc/$1/status; }
before=$(rss $PID)
python3 - "$P" <<'PY' &
import socket, sys, time
conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(1000)]
time.sleep(30)
PY
HOLDER=$!
PIDS+=($HOLDER)
check "idle: the agent accepts the 1,000 connections" at_least floe_syslog_connections_open 1000
after=$(rss $PID)
echo "# 1000 idle TCP connections: floe RSS ${before} KiB before, ${after} KiB with them open"
# A sanitizer build's RSS is mostly the sanitizer's own (shadow memory, the quarantine of
# freed blocks): 32 MiB before a single connection. There the connections' growth is
# what is checked, against the part of the budget the listener's footprint takes.
if grep -q '^FLOE_SANITIZE:BOOL=ON' "${FLOE_BUILD:-/nonexistent}/CMakeCache.txt" 2>/dev/null; then
	check "1,000 idle connections: RSS grows less than 8 MiB with them (sanitizer build)" \
		test $((after - before)) -lt 8192
else
	check "1,000 idle connections: RSS within agent.memory_limit (32 MiB)" test "$after" -lt 32768
fi
kill $HOLDER 2>/dev/null || true
wait $HOLDER 2>/dev/null || true
check "idle: SIGTERM exit 0" stop_pid $PID

finish
