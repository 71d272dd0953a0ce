#!/usr/bin/env bash
# Idle benchmark: what floe costs on a device when nothing is logged. floe tails FILES
# (default 10) idle files into a local warehouse, side by side with a private rsyslog
# (imfile on the same files, omfile) on the same machine; both run as an unprivileged user
# (nobody, when the script runs as root), each with its own configuration, state and pid
# file, and are stopped by PID. After start-up (floe's "started" log line, rsyslog's pid
# file) and SETTLE seconds, each is watched for IDLE_SECONDS (default 20): CPU time from
# /proc/PID/task/*/schedstat (nanoseconds, every thread), wake-ups (context switches),
# resident memory (VmRSS, and PSS, which shares libraries among the processes using them)
# at the end. Prints per minute figures, floe's ratios to rsyslog, and the targets (idle
# RSS <= 4 MiB, CPU <= 2 ms per minute). Asserts nothing; not run by ctest.
# usage: tests/bench/idle.sh [FLOE_BIN...]   (default: $BUILD/floe, BUILD=build-test/gcc;
#        several binaries, e.g. one without S3 and PCRE2 or a static one, are measured in turn)
#        env: IDLE_SECONDS (default 20), SETTLE (default 2), FILES (default 10), KEEP=1,
#        MAPS=1 (also each process's RSS by mapping: each library, floe, the heap, anonymous)
# rsyslog runs from /opt/floe-bench (packaging/dev/install-deps.sh bench) unless the
# machine has it installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
[ $# -gt 0 ] || set -- "$BUILD/floe"
BINS=()
for b in "$@"; do
	[ -x "$b" ] || { echo "no floe binary at $b (cmake --build $BUILD --target floe)"; exit 2; }
	BINS+=("$(realpath "$b")")
done
IDLE_SECONDS=${IDLE_SECONDS:-20}
SETTLE=${SETTLE:-2}
FILES=${FILES:-10}
. tests/bench/daemons.sh
if [ ! -x "$RSYSLOGD" ]; then
	[ -z "${IDLE_BENCH_INSTALLED:-}" ] || { echo "rsyslog still missing"; exit 2; }
	packaging/dev/install-deps.sh bench
	IDLE_BENCH_INSTALLED=1 exec "$PWD/tests/bench/idle.sh" "$@"
fi

bench_workdir idle

# The daemons run as nobody when the script is root (as a service would not run as root).
AS=()
if [ "$(id -u)" = 0 ]; then
	AS=(setpriv --reuid=nobody --regid=nogroup --clear-groups --)
fi
mkdir -p "$W/in"
for i in $(seq 1 "$FILES"); do
	printf '%s idle-bench: line of file %d\n' "$(date '+%b %e %H:%M:%S')" "$i" >"$W/in/f$i.log"
done
chmod 755 "$W"
chmod 644 "$W"/in/*.log

# ns_of PID: CPU nanoseconds of every thread of PID; ctx_of PID: its context switches.
ns_of() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }
ctx_of() {
	cat /proc/"$1"/task/*/status 2>/dev/null |
		awk '/^(non)?voluntary_ctxt_switches:/ { s += $2 } END { printf "%d\n", s }'
}
declare -A RSS PSS CPU WAKE THR MAP
TOOLS=()

# rss_by_mapping PID: "MiB name" lines, largest first: PID's resident memory by the file
# mapped (its base name; its text, data and relro together), [heap], [stack], or anon.
rss_by_mapping() {
	awk '$1 ~ /^[0-9a-f]+-[0-9a-f]+$/ { n = NF >= 6 ? $6 : "anon"; sub(/.*\//, "", n); next }
		$1 == "Rss:" { kb[n] += $2 }
		END { for (n in kb) if (kb[n] > 0) printf "%.2f %s\n", kb[n] / 1024, n }' \
		/proc/"$1"/smaps | sort -rn
}

# measure NAME PID: watches PID for IDLE_SECONDS after SETTLE seconds.
measure() {
	local name=$1 pid=$2 ns0 ns1 c0 c1
	sleep "$SETTLE"
	ns0=$(ns_of "$pid")
	c0=$(ctx_of "$pid")
	sleep "$IDLE_SECONDS"
	ns1=$(ns_of "$pid")
	c1=$(ctx_of "$pid")
	kill -0 "$pid" 2>/dev/null || { echo "$name exited during the measurement"; return 1; }
	CPU[$name]=$(awk -v d=$((ns1 - ns0)) -v s="$IDLE_SECONDS" 'BEGIN { printf "%.2f", d / 1e6 * 60 / s }')
	WAKE[$name]=$(awk -v d=$((c1 - c0)) -v s="$IDLE_SECONDS" 'BEGIN { printf "%.0f", d * 60 / s }')
	RSS[$name]=$(awk '/^VmRSS:/ { printf "%.2f", $2 / 1024 }' /proc/"$pid"/status)
	PSS[$name]=$(awk '/^Pss:/ { printf "%.2f", $2 / 1024 }' /proc/"$pid"/smaps_rollup)
	THR[$name]=$(ls /proc/"$pid"/task | wc -l)
	if [ "${MAPS:-0}" = 1 ]; then MAP[$name]=$(rss_by_mapping "$pid"); fi
	TOOLS+=("$name")
}

# stop PID: TERM, and the wait for it (bounded: KILL after 10 s).
stop() {
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 1 100); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
	DAEMON=
}

# wait_for WHAT COMMAND...: up to 10 s for COMMAND to succeed.
wait_for() {
	local what=$1
	shift
	for _ in $(seq 1 200); do
		"$@" && return 0
		kill -0 "$DAEMON" 2>/dev/null || { echo "$what: the daemon exited"; return 1; }
		sleep 0.05
	done
	echo "$what: not ready after 10 s"
	return 1
}

run_floe() {
	local name=$1 bin=$2 d=$W/$1
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<-EOF
	agent:
	  id: idle-bench
	  state_dir: $d/state
	inputs:
	  - type: tail
	    paths: ["$W/in/*.log"]
	tables:
	  logs:
	    codec: zstd
	EOF
	[ ${#AS[@]} = 0 ] || chown -R nobody:nogroup "$d"
	"${AS[@]}" "$bin" run -c "$d/floe.yaml" >"$d/log" 2>&1 &
	DAEMON=$!
	wait_for "$name" grep -q " started " "$d/log" || { tail -5 "$d/log"; stop "$DAEMON"; return 1; }
	measure "$name" "$DAEMON" || true
	stop "$DAEMON"
}

run_rsyslog() {
	local d=$W/rsyslog
	mkdir -p "$d/work"
	# No imuxsock/imklog: this instance never touches /dev/log or the kernel log. imfile in
	# its default inotify mode, from the files' ends (as floe's start_at: end).
	cat >"$d/rsyslog.conf" <<-EOF
	global(workDirectory="$d/work")
	module(load="imfile")
	template(name="line" type="string" string="%msg%\n")
	ruleset(name="bench") {
	  action(type="omfile" file="$d/out" template="line")
	}
	input(type="imfile" file="$W/in/*.log" tag="b" ruleset="bench")
	EOF
	[ ${#AS[@]} = 0 ] || chown -R nobody:nogroup "$d"
	local args=(-n -f "$d/rsyslog.conf" -i "$d/rsyslogd.pid")
	[ -n "$RS_MODDIR" ] && args+=(-M "$RS_MODDIR")
	"${AS[@]}" "$RSYSLOGD" "${args[@]}" >"$d/stderr" 2>&1 &
	DAEMON=$!
	wait_for rsyslog test -s "$d/rsyslogd.pid" || { tail -5 "$d/stderr"; stop "$DAEMON"; return 1; }
	measure rsyslog "$DAEMON" || true
	stop "$DAEMON"
}

echo "== idle benchmark: $FILES idle files, ${IDLE_SECONDS} s window after ${SETTLE} s, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) =="
n=0
for b in "${BINS[@]}"; do
	n=$((n + 1))
	name=floe
	[ ${#BINS[@]} = 1 ] || name=floe-$n
	[ ${#BINS[@]} = 1 ] || echo "$name: $b"
	run_floe "$name" "$b"
done
run_rsyslog || true

printf '%-10s %9s %9s %12s %13s %8s\n' tool "RSS MiB" "PSS MiB" "CPU ms/min" "wakeups/min" threads
for t in "${TOOLS[@]}"; do
	printf '%-10s %9s %9s %12s %13s %8s\n' "$t" "${RSS[$t]}" "${PSS[$t]}" "${CPU[$t]}" "${WAKE[$t]}" "${THR[$t]}"
done
if [ -n "${RSS[rsyslog]:-}" ]; then
	for t in "${TOOLS[@]}"; do
		[ "$t" = rsyslog ] && continue
		awk -v t="$t" -v r="${RSS[$t]}" -v rr="${RSS[rsyslog]}" -v p="${PSS[$t]}" -v pr="${PSS[rsyslog]}" \
			-v c="${CPU[$t]}" -v cr="${CPU[rsyslog]}" -v w="${WAKE[$t]}" -v wr="${WAKE[rsyslog]}" '
			function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "n/a" }
			BEGIN { printf "%s / rsyslog: RSS %s, PSS %s, CPU %s, wakeups %s\n", t, ratio(r, rr),
				ratio(p, pr), ratio(c, cr), ratio(w, wr) }'
	done
fi
if [ "${MAPS:-0}" = 1 ]; then
	for t in "${TOOLS[@]}"; do
		echo "$t RSS by mapping (MiB):"
		echo "${MAP[$t]}" | awk '{ printf "  %6s %s\n", $1, $2 }'
	done
fi
echo "targets: idle RSS <= 4 MiB, idle CPU <= 2 ms per minute"
