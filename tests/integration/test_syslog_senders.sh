#!/usr/bin/env bash
# The syslog input against the senders of Debian's two system log daemons, each a private
# instance with its own configuration, work directory and PID, reading an input file the
# test writes and forwarding it to floe: rsyslog's omfwd over TCP with octet counting
# (RFC 5424 template), and over TLS with a client certificate when rsyslog-gnutls is there
# (mutual TLS, certificates made here by openssl); syslog-ng's network() destination (BSD
# format, LF trailers) and its syslog() destination (RFC 5424 with octet counting). Every
# row is read back by DuckDB. The daemons are the copies packaging/dev/install-deps.sh
# test unpacks under /opt/floe-bench (or the machine's own); without them: SKIP.
source "$(dirname "$0")/lib.sh"

OPT=/opt/floe-bench
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
RSYSLOGD=$OPT/rsyslog/usr/sbin/rsyslogd
RS_MODS=$OPT/rsyslog/usr/lib/$MULTIARCH/rsyslog
RS_GTLS=$OPT/rsyslog-gnutls/usr/lib/$MULTIARCH/rsyslog/lmnsd_gtls.so
SNG=$OPT/syslog-ng-core/usr
SYSLOGNG=$SNG/sbin/syslog-ng
SNG_MODS=$SNG/lib/syslog-ng/3.38
if [ ! -x "$RSYSLOGD" ] && command -v rsyslogd >/dev/null; then
	RSYSLOGD=$(command -v rsyslogd)
	RS_MODS=/usr/lib/$MULTIARCH/rsyslog
	RS_GTLS=$RS_MODS/lmnsd_gtls.so
fi
if [ ! -x "$SYSLOGNG" ] && command -v syslog-ng >/dev/null; then
	SYSLOGNG=$(command -v syslog-ng)
	SNG=/usr
	SNG_MODS=
fi
if [ ! -x "$RSYSLOGD" ] || [ ! -x "$SYSLOGNG" ]; then
	skip "rsyslog or syslog-ng is missing (packaging/dev/install-deps.sh test)"
fi
command -v openssl >/dev/null || skip "openssl is missing"

N=${N:-1000}
P_RS=$(free_port) P_RSTLS=$(free_port) P_BSD=$(free_port) P_IETF=$(free_port)
while [ "$(printf '%s\n' $P_RS $P_RSTLS $P_BSD $P_IETF | sort -u | wc -l)" != 4 ]; do
	P_RSTLS=$(free_port) P_BSD=$(free_port) P_IETF=$(free_port)
done

metric() { # metric NAME: floe's top-level counter NAME (0 before the first commit)
	python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], 0))" \
		"$d/state/metrics.json" "$1" 2>/dev/null || echo 0
}

d="$T/senders"
mkdir -p "$d/rs-work"
(
	cd "$d" || exit 1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 -subj /CN=testca 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 2>/dev/null
	openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out srv.pem -days 2 2>/dev/null
	openssl req -newkey rsa:2048 -nodes -keyout cli.key -out cli.csr -subj /CN=client 2>/dev/null
	openssl x509 -req -in cli.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cli.pem -days 2 2>/dev/null
)
# One listener per sender, so that each row's sender is known from its app name.
cat >"$d/floe.yaml" <<YAML
agent:
  id: senders
  state_dir: $d/state
inputs:
  - type: syslog
    listen: ["tcp://127.0.0.1:$P_RS", "tcp://127.0.0.1:$P_BSD", "tcp://127.0.0.1:$P_IETF"]
  - type: syslog
    listen: "tls://127.0.0.1:$P_RSTLS"
    tls: {cert: $d/srv.pem, key: $d/srv.key, ca: $d/ca.pem}
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $d/wh
YAML
"$FLOE_BIN" run -c "$d/floe.yaml" 2>>"$d/err" &
FLOE=$!
PIDS+=("$FLOE")
wait_log "$d/err" "agent .* started" || { cat "$d/err"; exit 1; }

# The input: N lines "line 1" .. "line N", written before the senders start, a file per
# sender (neither daemon follows one file twice).
for f in rstcp rstls sngbsd sngietf; do seq 1 "$N" | sed 's/^/line /' >"$d/$f.log"; done

# rsyslog: imfile reads the file into two omfwd actions, plain TCP and TLS. Its module
# directory is one: a private one links rsyslog's modules and the gtls driver together.
rs_tls=0
mkdir -p "$d/rs-mods"
ln -s "$RS_MODS"/*.so "$d/rs-mods/"
if [ -e "$RS_GTLS" ]; then
	ln -sf "$RS_GTLS" "$d/rs-mods/"
	rs_tls=1
fi
{
	echo "global(workDirectory=\"$d/rs-work\" localHostName=\"rshost\""
	[ $rs_tls = 1 ] && echo "  defaultNetstreamDriverCAFile=\"$d/ca.pem\"
  defaultNetstreamDriverCertFile=\"$d/cli.pem\" defaultNetstreamDriverKeyFile=\"$d/cli.key\""
	echo ")"
	cat <<-EOF
	module(load="imfile")
	ruleset(name="fwd") {
	  action(type="omfwd" target="127.0.0.1" port="$P_RS" protocol="tcp"
	         TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format")
	}
	ruleset(name="fwdtls") {
	  action(type="omfwd" target="127.0.0.1" port="$P_RSTLS" protocol="tcp"
	         TCP_Framing="octet-counted" template="RSYSLOG_SyslogProtocol23Format"
	         StreamDriver="gtls" StreamDriverMode="1" StreamDriverAuthMode="x509/name"
	         StreamDriverPermittedPeers="127.0.0.1")
	}
	input(type="imfile" file="$d/rstcp.log" tag="rstcp" facility="local3" severity="warning"
	      ruleset="fwd" freshStartTail="off")
	EOF
	[ $rs_tls = 1 ] && cat <<-EOF
	input(type="imfile" file="$d/rstls.log" tag="rstls" facility="local4" severity="info"
	      ruleset="fwdtls" freshStartTail="off")
	EOF
} >"$d/rsyslog.conf"
"$RSYSLOGD" -n -f "$d/rsyslog.conf" -i "$d/rsyslogd.pid" -M "$d/rs-mods" >"$d/rsyslog.out" 2>&1 &
RS=$!
PIDS+=("$RS")

# syslog-ng: a file() source into network() (BSD, LF) and syslog() (RFC 5424, octet
# counting). The program, host, facility and level come from the source's overrides.
cat >"$d/syslog-ng.conf" <<EOF
@version: 3.38
options { stats-freq(0); use-dns(no); dns-cache(no); };
source s { file("$d/sngbsd.log" follow-freq(0.1) flags(no-parse) program-override("sngbsd")
           host-override("snghost") default-facility(local5) default-priority(err)); };
source s2 { file("$d/sngietf.log" follow-freq(0.1) flags(no-parse) program-override("sngietf")
           host-override("snghost") default-facility(local6) default-priority(debug)); };
destination bsd { network("127.0.0.1" port($P_BSD) transport("tcp")); };
destination ietf { syslog("127.0.0.1" port($P_IETF) transport("tcp")); };
log { source(s); destination(bsd); flags(flow-control); };
log { source(s2); destination(ietf); flags(flow-control); };
EOF
sng_args=(-F --no-caps -f "$d/syslog-ng.conf" -R "$d/sng.persist" -p "$d/sng.pid" -c "$d/sng.ctl")
[ -n "$SNG_MODS" ] && sng_args+=(--module-path="$SNG_MODS")
LD_LIBRARY_PATH=$SNG/lib/syslog-ng${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
	"$SYSLOGNG" "${sng_args[@]}" >"$d/syslog-ng.out" 2>&1 &
SNGPID=$!
PIDS+=("$SNGPID")

# Until every message is committed (bounded: 60 s).
want=$((N * (3 + rs_tls)))
for _ in $(seq 1 600); do
	[ "$(metric rows_committed)" -ge "$want" ] && break
	sleep 0.1
done
check "rsyslog stops on SIGTERM" stop_pid $RS
check "syslog-ng stops on SIGTERM" stop_pid $SNGPID
check "floe: SIGTERM exit 0" stop_pid $FLOE
W="$d/wh/default/logs"
[ "$(metric rows_committed)" -ge "$want" ] || {
	echo "# committed $(metric rows_committed) of $want; the senders said:"
	tail -n 5 "$d/rsyslog.out" "$d/syslog-ng.out" "$d/err"
}

# sender APP HOST FACILITY SEVERITY SCHEME WHAT: the rows of one sender are exactly "line 1"..
# "line N" once each (N rows, N distinct, numbers 1..N summing to N(N+1)/2), with the
# header fields the sender was configured with, from the listener it was pointed at.
sender() {
	local got
	got=$(rows_sql "$W" "SELECT count(*), count(DISTINCT message), min(n), max(n), sum(n),
		count(DISTINCT (host, facility, severity, source)), min(host), min(facility),
		min(severity), min(source)
		FROM (SELECT *, CAST(substr(message, 6) AS INTEGER) AS n FROM t WHERE app = '$1')")
	check "$6: $N rows, each line once, host $2, facility $3, severity $4" test "$got" = \
		"[\"$N\",\"$N\",$([ "$N" = 0 ] || echo 1),$N,\"$((N * (N + 1) / 2))\",\"1\",\"$2\",$3,$4,\"syslog+$5://127.0.0.1\"]"
}
sender rstcp rshost 19 4 tcp "rsyslog omfwd, TCP, octet counting"
if [ $rs_tls = 1 ]; then
	sender rstls rshost 20 6 tls "rsyslog omfwd, TLS with a client certificate"
	check "rsyslog TLS: no handshake failed" python3 -c "
import json,sys; m=json.load(open('$d/state/metrics.json'))
sys.exit(0 if m['inputs'][1]['handshake_failures']==0 and m['inputs'][1]['connections']>=1 else 1)"
else
	echo "# rsyslog-gnutls missing: no TLS sender"
fi
sender sngbsd snghost 21 3 tcp "syslog-ng network(), TCP, BSD format"
sender sngietf snghost 22 7 tcp "syslog-ng syslog(), RFC 5424, octet counting"
check "syslog-ng syslog(): its meta.sequenceId structured data into attrs" \
	test "$(rows_sql "$W" "SELECT count(*) FROM t WHERE app = 'sngietf'
		AND element_at(attrs, 'meta.sequenceId')[1] = substr(message, 6)")" = "[\"$N\"]"
check "nothing else: $want rows in all" test "$(rows_sql "$W" "SELECT count(*) FROM t")" = "[\"$want\"]"
check "no parse failures" test "$(metric parse_failures)" = 0

finish
