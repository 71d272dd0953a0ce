#!/usr/bin/env bash
# Syslog benchmark: syslog-ng's loggen sends RFC 5424 messages over TCP (octet counting),
# TLS and UDP to floe (into ZSTD Parquet in a local warehouse) and, side by side in one
# run, to private instances of Debian's rsyslog (imtcp/imudp, gtls when rsyslog-gnutls is
# unpacked -> omfile) and syslog-ng (syslog() source -> file()), which write each message
# text as a line. Prints, per tool and case: messages received, wall seconds, messages/s,
# CPU seconds, peak RSS, UDP loss (sent minus rows in floe's table or lines in the
# others' files; for floe also its kernel_drops and paused counters); then the peak RSS of each with
# 1,000 idle TCP connections open, and floe's ratios. Asserts nothing.
# usage: tests/bench/syslog.sh [MESSAGES]   (default 1000000, for TCP and TLS)
# SIZE=bytes per message (default 256), ACTIVE=loggen's TCP and TLS connections (default
# 1; --number is per connection, so each sends MESSAGES/ACTIVE), UDP_RATE=messages/s (default 100000) for
# UDP_SECS seconds (default 10), IDLE=idle connections (default 1000), BUILD=the build
# directory with floe (default build-test/gcc), CASES="tcp tls udp" (a subset runs fewer),
# IDLE=0 skips the idle connections, KEEP=1 keeps the work directory. The
# daemons and loggen run from /opt/floe-bench (packaging/dev/install-deps.sh bench).
# Wall time runs from loggen's start to the last message written: for rsyslog and
# syslog-ng the moment their file holds every message (or stopped growing, for UDP), for
# floe its exit after SIGTERM (it reads what the sockets hold, then seals and commits).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE="$BUILD/floe"
[ -x "$FLOE" ] || { echo "build $FLOE first (cmake --build $BUILD --target floe)"; exit 2; }
FLOE=$(realpath "$FLOE")
N=${1:-1000000}
SIZE=${SIZE:-256}
UDP_RATE=${UDP_RATE:-100000}
UDP_SECS=${UDP_SECS:-10}
IDLE=${IDLE:-1000}
ACTIVE=${ACTIVE:-1}
OPT=/opt/floe-bench
MULTIARCH=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
RSYSLOGD=$OPT/rsyslog/usr/sbin/rsyslogd
RS_MODS=$OPT/rsyslog/usr/lib/$MULTIARCH/rsyslog
RS_GTLS=$OPT/rsyslog-gnutls/usr/lib/$MULTIARCH/rsyslog/lmnsd_gtls.so
SNG=$OPT/syslog-ng-core/usr
for b in "$RSYSLOGD" "$SNG/sbin/syslog-ng" "$SNG/bin/loggen" /usr/bin/time; do
	[ -x "$b" ] || { echo "$b missing: packaging/dev/install-deps.sh bench"; exit 2; }
done
if ! command -v bc >/dev/null || ! command -v ss >/dev/null || ! command -v openssl >/dev/null; then
	echo "bc, ss (iproute2) and openssl are needed"
	exit 2
fi
export SYSLOGNG_PREFIX=$SNG # where loggen finds its socket and ssl plugins
SNG_LD=$SNG/lib/syslog-ng${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
ulimit -n 8192 2>/dev/null || true # 1,000 idle connections for every tool

W=$(mktemp -d /tmp/floe-bench-syslog.XXXXXX)
DAEMON=
HOLDER=
cleanup() {
	# Never leave a server or the idle-connection holder behind, whatever happened.
	local p
	for p in $DAEMON $HOLDER; do
		kill -0 "$p" 2>/dev/null || continue
		kill -TERM "$p" 2>/dev/null || true
		sleep 1
		kill -KILL "$p" 2>/dev/null || true
	done
	if [ "${KEEP:-0}" = 1 ]; then echo "work directory kept: $W"; else rm -rf "$W"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TCK=$(getconf CLK_TCK)
now() { date +%s.%N; }
PORT=$((20000 + $$ % 20000))

(
	cd "$W" || exit 1
	openssl req -x509 -newkey rsa:2048 -nodes -keyout srv.key -out srv.pem -days 2 \
		-subj /CN=127.0.0.1 2>/dev/null
)
RS_TLS=0
mkdir -p "$W/rs-mods"
ln -s "$RS_MODS"/*.so "$W/rs-mods/"
[ -e "$RS_GTLS" ] && ln -s "$RS_GTLS" "$W/rs-mods/" && RS_TLS=1

declare -A MSGS SENT WALL CPU RSS DROPS IDLE_RSS
read -r -a CASES <<<"${CASES:-tcp tls udp}"
TOOLS=(floe rsyslog syslog-ng)

# wait_port PROTO: until something listens on $PORT (at most 10 s).
wait_port() {
	local _ opt=-Hltn
	[ "$1" = udp ] && opt=-Hlun
	for _ in $(seq 1 200); do
		[ -n "$(ss $opt "sport = :$PORT" 2>/dev/null)" ] && return 0
		sleep 0.05
	done
	echo "nothing listens on $1 port $PORT"
	return 1
}

# send CASE: loggen's messages for CASE; sets SENT[$tool/$case] from what loggen says.
send() {
	# --interval: loggen stops after 10 s by default, whatever --number says.
	local c=$1 args=(--syslog-proto --size "$SIZE" --interval 600)
	# loggen takes one plugin: the socket one (--inet) or the TLS one (--use-ssl, TCP).
	case $c in
	tcp) args+=(--inet --stream --rate 100000000 --active-connections "$ACTIVE" --number $((N / ACTIVE))) ;;
	tls) args+=(--use-ssl --rate 100000000 --active-connections "$ACTIVE" --number $((N / ACTIVE))) ;;
	udp) args+=(--inet --dgram --rate "$UDP_RATE" --number $((UDP_RATE * UDP_SECS))) ;;
	esac
	LD_LIBRARY_PATH=$SNG_LD "$SNG/bin/loggen" "${args[@]}" 127.0.0.1 "$PORT" \
		>"$W/loggen.out" 2>&1 || { echo "loggen failed:"; tail -n 3 "$W/loggen.out"; }
	SENT[$tool/$c]=$(sed -n 's/.*average rate.*count=\([0-9]*\),.*/\1/p' "$W/loggen.out" | tail -n 1)
	SENT[$tool/$c]=${SENT[$tool/$c]:-0}
}

# proc_figures TOOL/CASE PID: CPU seconds and peak RSS (KiB) of a running process.
proc_figures() {
	local st
	st=$(cat "/proc/$2/stat" 2>/dev/null || echo "0 (x) S 0 0 0 0 0 0 0 0 0 0 0 0")
	st=${st##*) }
	# shellcheck disable=SC2086
	set -- "$1" $st
	CPU[$1]=$(echo "(${13} + ${14}) / $TCK" | bc -l)
	RSS[$1]=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON/status" 2>/dev/null || echo 0)
}

# stop_daemon: SIGTERM to $DAEMON and its exit (at most 10 s, then SIGKILL).
stop_daemon() {
	local _
	kill -TERM "$DAEMON" 2>/dev/null || true
	for _ in $(seq 1 100); do kill -0 "$DAEMON" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$DAEMON" 2>/dev/null || true
	wait "$DAEMON" 2>/dev/null || true
	DAEMON=
}

floe_config() { # floe_config DIR CASE
	local listen=$2://127.0.0.1:$PORT tls=
	[ "$2" = tls ] && tls="    tls: {cert: $W/srv.pem, key: $W/srv.key}"
	cat >"$1/floe.yaml" <<-EOF
	agent:
	  id: bench
	  state_dir: $1/state
	inputs:
	  - type: syslog
	    listen: "$listen"
	$tls
	tables:
	  logs:
	    codec: zstd
	lake:
	  warehouse: $1/warehouse
	EOF
}

# start_floe DIR: floe under /usr/bin/time; DAEMON is floe itself, TIMER the time process.
start_floe() {
	local _
	/usr/bin/time -v -o "$1/time.txt" "$FLOE" run -c "$1/floe.yaml" 2>"$1/log" &
	TIMER=$!
	for _ in $(seq 1 200); do grep -q "agent .* started" "$1/log" && break; sleep 0.05; done
	DAEMON=$(pgrep -P "$TIMER")
}

run_floe() {
	local c=$1 d="$W/floe-$1" tool=floe t0 t1 k=floe/$1
	rm -rf "$d"
	mkdir -p "$d"
	floe_config "$d" "$c"
	start_floe "$d"
	wait_port "$c" || return 0
	t0=$(now)
	send "$c"
	# Reads what its sockets hold, seals and commits, then exits.
	kill -TERM "$DAEMON"
	wait "$TIMER" || { echo "floe failed:"; grep -E 'error|warn' "$d/log" | head -n 5; }
	DAEMON=
	t1=$(now)
	WALL[$k]=$(echo "$t1 - $t0" | bc -l)
	local user sys
	user=$(sed -n 's/.*User time (seconds): //p' "$d/time.txt")
	sys=$(sed -n 's/.*System time (seconds): //p' "$d/time.txt")
	CPU[$k]=$(echo "$user + $sys" | bc -l)
	RSS[$k]=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$d/time.txt")
	MSGS[$k]=$("$FLOE" inspect "$d/warehouse/default/logs" | sed -n 's/.*total-records=//p' | head -n 1)
	MSGS[$k]=${MSGS[$k]:-0}
	# The kernel's drops, and how often floe itself stopped reading (its queue ran low).
	DROPS[$k]=$(python3 -c "import json,sys; i=json.load(open(sys.argv[1]))['inputs'][0]
print('%d/%d' % (i['kernel_drops'], i['paused']))" "$d/state/metrics.json" 2>/dev/null || echo "?")
	rm -rf "$d"
}

# run_daemon TOOL CASE OUT COMMAND...: starts a daemon (its PID is DAEMON), sends, then
# waits until OUT holds every message sent (each is a line of the same length) or, when
# some were lost, has not grown for 2 s; samples its CPU time and peak RSS and stops it.
run_daemon() {
	local tool=$1 c=$2 out=$3 k=$1/$2 t0 tlast size last=-1 want=0 line
	shift 3
	"$@" >"$W/$tool-$c.stderr" 2>&1 &
	DAEMON=$!
	wait_port "$c" || { tail -n 5 "$W/$tool-$c.stderr"; stop_daemon; return 0; }
	t0=$(now)
	send "$c" &
	local sender=$!
	tlast=$t0
	# Bounded: 600 s at most, or 2 s without growth once the sender is done.
	for _ in $(seq 1 12000); do
		size=$(stat -c %s "$out" 2>/dev/null || echo 0)
		if [ "$size" != "$last" ]; then last=$size; tlast=$(now); fi
		if [ "$want" = 0 ] && [ "$size" -gt 0 ]; then
			line=$(head -n 1 "$out" | wc -c)
			[ "$line" -gt 0 ] && want=$((line * N_SENT_MAX))
		fi
		[ "$want" -gt 0 ] && [ "$size" -ge "$want" ] && break
		if ! kill -0 "$sender" 2>/dev/null && [ "$(echo "$(now) - $tlast > 2" | bc)" = 1 ]; then
			break
		fi
		sleep 0.05
	done
	wait "$sender" 2>/dev/null || true
	SENT[$k]=$(sed -n 's/.*average rate.*count=\([0-9]*\),.*/\1/p' "$W/loggen.out" | tail -n 1)
	WALL[$k]=$(echo "$tlast - $t0" | bc -l)
	proc_figures "$k" "$DAEMON"
	stop_daemon
	MSGS[$k]=$(wc -l <"$out" 2>/dev/null || echo 0)
	DROPS[$k]=-
	rm -f "$out"
}

run_rsyslog() {
	local c=$1 d="$W/rsyslog-$1" in
	mkdir -p "$d/work"
	case $c in
	tcp) in='module(load="imtcp" maxSessions="2000")
input(type="imtcp" port="'$PORT'" address="127.0.0.1" ruleset="bench")' ;;
	tls) in='module(load="imtcp" maxSessions="2000" streamDriver.name="gtls" streamDriver.mode="1" streamDriver.authMode="anon")
input(type="imtcp" port="'$PORT'" address="127.0.0.1" ruleset="bench")' ;;
	udp) in='module(load="imudp")
input(type="imudp" port="'$PORT'" address="127.0.0.1" rcvbufSize="4m" ruleset="bench")' ;;
	esac
	# No imuxsock/imklog: this instance never touches /dev/log or the kernel log.
	cat >"$d/rsyslog.conf" <<-EOF
	global(workDirectory="$d/work" maxMessageSize="64k"
	       defaultNetstreamDriverCertFile="$W/srv.pem" defaultNetstreamDriverKeyFile="$W/srv.key"
	       defaultNetstreamDriverCAFile="$W/srv.pem")
	template(name="line" type="string" string="%msg%\n")
	ruleset(name="bench") {
	  action(type="omfile" file="$d/out" template="line")
	}
	$in
	EOF
	run_daemon rsyslog "$c" "$d/out" "$RSYSLOGD" -n -f "$d/rsyslog.conf" -i "$d/pid" -M "$W/rs-mods"
	rm -rf "$d"
}

run_syslogng() {
	local c=$1 d="$W/syslog-ng-$1" src
	mkdir -p "$d"
	case $c in
	tcp) src="syslog(ip(127.0.0.1) port($PORT) transport(\"tcp\") max-connections(2000))" ;;
	tls) src="syslog(ip(127.0.0.1) port($PORT) transport(\"tls\") max-connections(2000)
	          tls(key-file(\"$W/srv.key\") cert-file(\"$W/srv.pem\") peer-verify(optional-untrusted)))" ;;
	udp) src="syslog(ip(127.0.0.1) port($PORT) transport(\"udp\") so-rcvbuf(4194304))" ;;
	esac
	# flow-control: without it syslog-ng drops messages when the destination queue is full.
	cat >"$d/syslog-ng.conf" <<-EOF
	@version: 3.38
	options { stats-freq(0); use-dns(no); dns-cache(no); };
	source s { $src; };
	destination d { file("$d/out" template("\${MESSAGE}\n")); };
	log { source(s); destination(d); flags(flow-control); };
	EOF
	LD_LIBRARY_PATH=$SNG_LD run_daemon syslog-ng "$c" "$d/out" "$SNG/sbin/syslog-ng" -F --no-caps \
		-f "$d/syslog-ng.conf" -R "$d/persist" -p "$d/pid" -c "$d/ctl" \
		--module-path="$SNG/lib/syslog-ng/3.38"
	rm -rf "$d"
}

# idle TOOL: peak RSS of TOOL's TCP listener with IDLE idle connections open.
idle() {
	local tool=$1 _ d="$W/idle-$1"
	rm -f "$W/hold"
	python3 - "$PORT" "$IDLE" "$W/hold" <<-'PY' &
	import socket, sys, time
	conns = [socket.create_connection(("127.0.0.1", int(sys.argv[1]))) for _ in range(int(sys.argv[2]))]
	open(sys.argv[3], "w").close()
	time.sleep(60)
	PY
	HOLDER=$!
	for _ in $(seq 1 300); do [ -e "$W/hold" ] && break; sleep 0.1; done
	sleep 1 # the server accepts the last ones
	IDLE_RSS[$tool]=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON/status" 2>/dev/null || echo 0)
	kill "$HOLDER" 2>/dev/null || true
	wait "$HOLDER" 2>/dev/null || true
	HOLDER=
}

run_idle() {
	local d="$W/idle"
	rm -rf "$d"
	mkdir -p "$d/work"
	floe_config "$d" tcp
	start_floe "$d"
	wait_port tcp && idle floe
	kill -TERM "$DAEMON"; wait "$TIMER" || true; DAEMON=
	cat >"$d/rsyslog.conf" <<-EOF
	global(workDirectory="$d/work")
	module(load="imtcp" maxSessions="2000")
	input(type="imtcp" port="$PORT" address="127.0.0.1")
	action(type="omfile" file="$d/out")
	EOF
	"$RSYSLOGD" -n -f "$d/rsyslog.conf" -i "$d/pid" -M "$W/rs-mods" >"$d/rs.err" 2>&1 &
	DAEMON=$!
	wait_port tcp && idle rsyslog
	stop_daemon
	cat >"$d/syslog-ng.conf" <<-EOF
	@version: 3.38
	options { stats-freq(0); use-dns(no); dns-cache(no); };
	source s { syslog(ip(127.0.0.1) port($PORT) transport("tcp") max-connections(2000)); };
	destination d { file("$d/out"); };
	log { source(s); destination(d); };
	EOF
	LD_LIBRARY_PATH=$SNG_LD "$SNG/sbin/syslog-ng" -F --no-caps -f "$d/syslog-ng.conf" \
		-R "$d/persist" -p "$d/pid" -c "$d/ctl" --module-path="$SNG/lib/syslog-ng/3.38" \
		>"$d/sng.err" 2>&1 &
	DAEMON=$!
	wait_port tcp && idle syslog-ng
	stop_daemon
	rm -rf "$d"
}

echo "== syslog benchmark: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
	"net.core.rmem_max $(cat /proc/sys/net/core/rmem_max) =="
echo "$((N / ACTIVE * ACTIVE)) messages of $SIZE bytes over TCP and TLS ($ACTIVE connections)," \
	"$UDP_RATE/s for $UDP_SECS s over UDP"
[ $RS_TLS = 1 ] || echo "(rsyslog-gnutls not unpacked: no rsyslog TLS figures)"
for c in "${CASES[@]}"; do
	if [ "$c" = udp ]; then N_SENT_MAX=$((UDP_RATE * UDP_SECS)); else N_SENT_MAX=$((N / ACTIVE * ACTIVE)); fi
	echo "running $c: floe, rsyslog, syslog-ng (load $(cut -d' ' -f1 /proc/loadavg))"
	tool=floe; run_floe "$c"
	PORT=$((PORT + 1))
	if [ "$c" != tls ] || [ $RS_TLS = 1 ]; then tool=rsyslog; run_rsyslog "$c"; fi
	PORT=$((PORT + 1))
	tool=syslog-ng; run_syslogng "$c"
	PORT=$((PORT + 1))
done
if [ "$IDLE" -gt 0 ]; then
	echo "running $IDLE idle TCP connections: floe, rsyslog, syslog-ng"
	run_idle
fi

echo
printf '%-10s %-5s %9s %9s %8s %10s %7s %9s %9s %8s %12s\n' tool case sent received "wall s" \
	"msgs/s" "CPU s" "msgs/CPUs" "RSS MiB" lost "drops/pauses"
for c in "${CASES[@]}"; do
	for tool in "${TOOLS[@]}"; do
		k=$tool/$c
		[ -n "${MSGS[$k]:-}" ] || { printf '%-10s %-5s (not run)\n' "$tool" "$c"; continue; }
		printf '%-10s %-5s %9d %9d %8.2f %10.0f %7.2f %9.0f %9.1f %8d %12s\n' "$tool" "$c" \
			"${SENT[$k]:-0}" "${MSGS[$k]}" "${WALL[$k]}" \
			"$(echo "${MSGS[$k]} / ${WALL[$k]}" | bc -l)" "${CPU[$k]}" \
			"$(echo "${MSGS[$k]} / ${CPU[$k]}" | bc -l)" "$(echo "${RSS[$k]} / 1024" | bc -l)" \
			"$((${SENT[$k]:-0} - ${MSGS[$k]}))" "${DROPS[$k]}"
	done
done
for tool in "${TOOLS[@]}"; do
	[ "$IDLE" -gt 0 ] || break
	printf '%-10s peak RSS with %d idle TCP connections: %.1f MiB\n' "$tool" "$IDLE" \
		"$(echo "${IDLE_RSS[$tool]:-0} / 1024" | bc -l)"
done

echo
echo "floe against the faster of rsyslog and syslog-ng (targets: TCP >= 1.5x messages/s;"
echo "UDP 0 lost; peak RSS <= 16 MiB with $IDLE idle connections, <= 24 MiB under TCP):"
for c in "${CASES[@]}"; do
	best=0; bcpu=0
	for tool in rsyslog syslog-ng; do
		k=$tool/$c
		[ -n "${MSGS[$k]:-}" ] || continue
		r=$(echo "${MSGS[$k]} / ${WALL[$k]}" | bc -l)
		p=$(echo "${MSGS[$k]} / ${CPU[$k]}" | bc -l)
		[ "$(echo "$r > $best" | bc)" = 1 ] && best=$r
		[ "$(echo "$p > $bcpu" | bc)" = 1 ] && bcpu=$p
	done
	k=floe/$c
	if [ "$best" = 0 ] || [ -z "${MSGS[$k]:-}" ] || [ "${MSGS[$k]}" = 0 ]; then continue; fi
	# Over UDP loggen sets the pace: messages/s says little there, the loss says it all.
	printf '%-4s floe msgs/s %.2fx   msgs per CPU s %.2fx   lost %d   peak RSS %.1f MiB\n' "$c" \
		"$(echo "${MSGS[$k]} / ${WALL[$k]} / $best" | bc -l)" \
		"$(echo "${MSGS[$k]} / ${CPU[$k]} / $bcpu" | bc -l)" \
		"$((${SENT[$k]:-0} - ${MSGS[$k]}))" "$(echo "${RSS[$k]} / 1024" | bc -l)"
done
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
