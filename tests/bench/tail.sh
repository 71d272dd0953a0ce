#!/usr/bin/env bash
# Tail benchmark: floe reading log files into ZSTD Parquet in a local warehouse, side by
# side with private instances of Debian's rsyslog (imfile -> omfile) and syslog-ng
# (file() -> file()) writing the same lines as plain text. Two cases: one 1 GiB file and
# 100 files of 10 MiB, generated once with unique lines (tests/bench/bench_gen.c). Prints
# lines, wall seconds, lines/s, MB/s, CPU seconds (per GB), lines per CPU second and peak
# RSS for each, then floe's ratios to the better of the other two, and the sizes of the
# data files floe wrote (count, min, p10, median, p90, max, total). Asserts nothing. floe
# runs twice: with its defaults (a page compression thread) and as floe-1t
# (agent.compress_threads: 0).
# usage: tests/bench/tail.sh [BYTES_PER_CASE]   (default 1073741824; the many-files case
#        is 100 files of BYTES/100 rounded down to whole MiB, so 100 x 10 MiB by default)
# Needs a build with the benchmarks (build-test/gcc or BUILD=...); FILES=N changes the
# file count, KEEP=1 keeps the work directory. The daemons run from /opt/floe-bench
# (packaging/dev/install-deps.sh bench) unless the machine has them installed.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE="$BUILD/floe"
GEN="$BUILD/tests/bench_gen"
for b in "$FLOE" "$GEN"; do
	[ -x "$b" ] || { echo "build $b first (cmake --build $BUILD --target floe bench_gen)"; exit 2; }
done
FLOE=$(realpath "$FLOE"); GEN=$(realpath "$GEN")
BYTES=${1:-1073741824}
FILES=${FILES:-100}
PER=$((BYTES / FILES / 1048576 * 1048576))
[ "$PER" -gt 0 ] || PER=$((BYTES / FILES))

. tests/bench/daemons.sh
if [ ! -x "$RSYSLOGD" ] || [ ! -x "$SYSLOGNG" ] || [ ! -x /usr/bin/time ] || ! command -v bc >/dev/null; then
	[ -z "${TAIL_BENCH_INSTALLED:-}" ] || { echo "rsyslog, syslog-ng, time or bc still missing"; exit 2; }
	packaging/dev/install-deps.sh bench
	TAIL_BENCH_INSTALLED=1 exec "$PWD/tests/bench/tail.sh" "$@"
fi

bench_workdir tail
TCK=$(getconf CLK_TCK)
now() { date +%s.%N; }
warm() { cat "$W/in/$1"/*.log >/dev/null; }  # every tool starts with the inputs cached

declare -A LINES WALL CPU RSS INBYTES INLINES GLOB FLOE_NOTE
CASES=(one many)
size() { if [ "$1" -ge 1048576 ]; then echo "$(($1 / 1048576)) MiB"; else echo "$(($1 / 1024)) KiB"; fi; }
declare -A LABEL=([one]="1 x $(size "$BYTES")" [many]="$FILES x $(size "$PER")")

echo "== tail benchmark: $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg) =="
mkdir -p "$W/in/one" "$W/in/many"
g1=$("$GEN" "$W/in/one/big.log" "$BYTES")
g2=$("$GEN" "$W/in/many" "$((PER * FILES))" --files "$FILES")
echo "generated: one: $g1"
echo "           many: $g2"
GLOB[one]="$W/in/one/big.log"
GLOB[many]="$W/in/many/*.log"
INLINES[one]=$(echo "$g1" | sed -n 's/.*lines=\([0-9]*\).*/\1/p')
INLINES[many]=$(echo "$g2" | sed -n 's/.*lines=\([0-9]*\).*/\1/p')
INBYTES[one]=$(echo "$g1" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
INBYTES[many]=$(echo "$g2" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')

# floe once over case $2's inputs, as TOOL $1: floe (the defaults, with a compression
# thread) or floe-1t (compress_threads: 0, everything on one thread), with an optional
# extra input key ($3, e.g. "max_line_bytes: 64KiB"). Returns 1 if floe failed.
run_floe() {
	local tool=$1 c=$2 extra=${3:-} d="$W/floe-$2" glob=${GLOB[$2]} threads=
	[ "$tool" = floe-1t ] && threads="compress_threads: 0"
	rm -rf "$d"
	mkdir -p "$d"
	cat >"$d/floe.yaml" <<-EOF
	agent:
	  id: bench
	  state_dir: $d/state
	  $threads
	inputs:
	  - type: tail
	    paths: ["$glob"]
	    start_at: beginning
	    $extra
	tables:
	  logs:
	    codec: zstd
	lake:
	  warehouse: $d/warehouse
	EOF
	warm "$c"
	if ! /usr/bin/time -v -o "$d/time.txt" "$FLOE" run -c "$d/floe.yaml" --once >"$d/log" 2>&1; then
		echo "floe failed on ${LABEL[$c]}${extra:+ with $extra}:"
		grep -E 'error|stopping' "$d/log" | sed 's/^/    /'
		return 1
	fi
	local t=$d/time.txt
	local user sys el
	user=$(sed -n 's/.*User time (seconds): //p' "$t")
	sys=$(sed -n 's/.*System time (seconds): //p' "$t")
	el=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$t" |
		awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; print s }')
	local k=$tool/$c
	CPU[$k]=$(echo "$user + $sys" | bc -l)
	WALL[$k]=$el
	RSS[$k]=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$t")
	LINES[$k]=$(sed -n 's/.*"lines":\([0-9]*\).*/\1/p' "$d/state/metrics.json")
	local recs insp
	insp=$("$FLOE" inspect "$d/warehouse/default/logs")
	recs=$(echo "$insp" | sed -n 's/.*total-records=//p' | head -1)
	if [ "$recs" = "${LINES[$k]}" ]; then
		echo "    $tool: table total-records $recs = lines read"
	else
		echo "    $tool: metrics lines ${LINES[$k]} but table total-records $recs"
	fi
	# Files should reach target_file_size (64 MiB by default) unless the end of the
	# input closes them: the size distribution of the data files, in MB.
	echo "$insp" | sed -n 's/^live file-sizes //p' | awk -v tool="$tool" '{
		printf "    %s: data files", tool
		for (i = 1; i <= NF; i++) { split($i, kv, "="); printf " %s=%s", kv[1], (kv[1] == "count" ? kv[2] : sprintf("%.1fMB", kv[2] / 1e6)) }
		printf " (target_file_size 64 MiB = 67.1MB)\n" }'
	rm -rf "$d"
}

# Starts a daemon in the foreground (its PID is $!), waits until its output holds as many
# bytes as the input (each line is written back verbatim), then samples its CPU time and
# peak RSS from /proc and stops it. Wall time runs from launch to the last byte out.
run_daemon() {
	local tool=$1 c=$2 out=$3; shift 3
	local want=${INBYTES[$c]} last=0 still=0 size t0 t1
	warm "$c"
	t0=$(now)
	"$@" >"$W/$tool-$c.stderr" 2>&1 &
	DAEMON=$!
	# Bounded: give up when the output has not grown for 60 s.
	while :; do
		size=$(stat -c %s "$out" 2>/dev/null || echo 0)
		[ "$size" -ge "$want" ] && break
		kill -0 "$DAEMON" 2>/dev/null || { echo "$tool exited early:"; tail -5 "$W/$tool-$c.stderr"; break; }
		if [ "$size" -eq "$last" ]; then
			still=$((still + 1))
			[ "$still" -ge 1200 ] && { echo "note: $tool/$c stalled at $size of $want bytes"; break; }
		else
			still=0; last=$size
		fi
		sleep 0.05
	done
	t1=$(now)
	local st
	st=$(cat "/proc/$DAEMON/stat" 2>/dev/null || echo "0 (x) S 0 0 0 0 0 0 0 0 0 0 0 0")
	st=${st##*) }
	# shellcheck disable=SC2086
	set -- $st
	CPU[$tool/$c]=$(echo "(${12} + ${13}) / $TCK" | bc -l)
	RSS[$tool/$c]=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$DAEMON/status" 2>/dev/null || echo 0)
	WALL[$tool/$c]=$(echo "$t1 - $t0" | bc -l)
	kill -TERM "$DAEMON" 2>/dev/null || true
	wait "$DAEMON" 2>/dev/null || true
	DAEMON=
	LINES[$tool/$c]=$(wc -l <"$out" 2>/dev/null || echo 0)
	rm -f "$out"
}

run_rsyslog() {
	local c=$1 d="$W/rsyslog-$1" glob=${GLOB[$1]}
	mkdir -p "$d/work"
	# No imuxsock/imklog: this instance never touches /dev/log or the kernel log. Its own
	# messages go to the default ruleset, which has no action.
	cat >"$d/rsyslog.conf" <<-EOF
	global(workDirectory="$d/work" maxMessageSize="64k")
	module(load="imfile")
	template(name="line" type="string" string="%msg%\n")
	ruleset(name="bench") {
	  action(type="omfile" file="$d/out" template="line")
	}
	input(type="imfile" file="$glob" tag="b" ruleset="bench" readMode="0" freshStartTail="off")
	EOF
	local args=(-n -f "$d/rsyslog.conf" -i "$d/rsyslogd.pid")
	[ -n "$RS_MODDIR" ] && args+=(-M "$RS_MODDIR")
	run_daemon rsyslog "$c" "$d/out" "$RSYSLOGD" "${args[@]}"
	rm -rf "$d"
}

run_syslogng() {
	local c=$1 d="$W/syslog-ng-$1" src
	mkdir -p "$d"
	if [ "$c" = one ]; then
		src="file(\"$W/in/one/big.log\" follow-freq(1) flags(no-parse))"
	else
		src="wildcard-file(base-dir(\"$W/in/many\") filename-pattern(\"*.log\") recursive(no) max-files(1000) follow-freq(1) flags(no-parse))"
	fi
	# flow-control: without it syslog-ng drops lines when the destination queue is full.
	cat >"$d/syslog-ng.conf" <<-EOF
	@version: 3.38
	options { stats-freq(0); log-msg-size(65536); };
	source s { $src; };
	destination d { file("$d/out" template("\${MESSAGE}\n")); };
	log { source(s); destination(d); flags(flow-control); };
	EOF
	local args=(-F --no-caps -f "$d/syslog-ng.conf" -R "$d/persist" -p "$d/pid" -c "$d/ctl")
	[ -n "$SNG_LIB" ] && args+=(--module-path="$SNG_LIB/3.38")
	LD_LIBRARY_PATH=${SNG_LIB:+$SNG_LIB:}${LD_LIBRARY_PATH:-} \
		run_daemon syslog-ng "$c" "$d/out" "$SYSLOGNG" "${args[@]}"
	rm -rf "$d"
}

for c in "${CASES[@]}"; do
	echo "running ${LABEL[$c]}: floe, floe-1t, rsyslog, syslog-ng (load $(cut -d' ' -f1 /proc/loadavg))"
	# A failed run is reported; the figures then come from a run with shorter lines
	# allowed (smaller read buffers), marked in the table.
	if ! run_floe floe "$c"; then
		FLOE_NOTE[$c]="max_line_bytes: 64KiB"
		run_floe floe "$c" "${FLOE_NOTE[$c]}" || FLOE_NOTE[$c]=failed
	fi
	[ "${FLOE_NOTE[$c]:-}" = failed ] || run_floe floe-1t "$c" "${FLOE_NOTE[$c]:-}" || FLOE_NOTE[$c]=failed
	run_rsyslog "$c"
	run_syslogng "$c"
done

echo
printf '%-10s %-14s %10s %8s %10s %8s %7s %9s %12s %9s\n' tool case lines "wall s" "lines/s" \
	"MB/s" "CPU s" "CPU s/GB" "lines/CPU s" "RSS MiB"
for c in "${CASES[@]}"; do
	inl=${INLINES[$c]}
	for tool in floe floe-1t rsyslog syslog-ng; do
		k=$tool/$c
		if [ "${tool%-1t}" = floe ] && [ "${FLOE_NOTE[$c]:-}" = failed ]; then
			printf '%-10s %-14s failed\n' floe "${LABEL[$c]}"
			continue
		fi
		printf '%-10s %-14s %10d %8.2f %10.0f %8.1f %7.2f %9.2f %12.0f %9.1f\n' "$tool" \
			"${LABEL[$c]}" "${LINES[$k]}" "${WALL[$k]}" \
			"$(echo "${LINES[$k]} / ${WALL[$k]}" | bc -l)" \
			"$(echo "${INBYTES[$c]} / ${WALL[$k]} / 1000000" | bc -l)" "${CPU[$k]}" \
			"$(echo "${CPU[$k]} / (${INBYTES[$c]} / 1000000000)" | bc -l)" \
			"$(echo "${LINES[$k]} / ${CPU[$k]}" | bc -l)" "$(echo "${RSS[$k]} / 1024" | bc -l)"
		[ "${LINES[$k]}" = "$inl" ] || echo "           ^ input had $inl lines"
		[ "${tool%-1t}" = floe ] && [ -n "${FLOE_NOTE[$c]:-}" ] &&
			echo "           ^ default settings failed; this row is with ${FLOE_NOTE[$c]}"
	done
done

echo
echo "floe against the better of rsyslog and syslog-ng (targets: >= 4x lines per CPU second,"
echo ">= 2x wall-clock lines/s; floe peak RSS <= 16 MiB). floe-1t (no compression thread)"
echo "spends the least CPU per line, floe (the default, with one) the least wall-clock time:"
for c in "${CASES[@]}"; do
	best_cpu=0; best_wall=0
	for tool in rsyslog syslog-ng; do
		k=$tool/$c
		lc=$(echo "${LINES[$k]} / ${CPU[$k]}" | bc -l)
		lw=$(echo "${LINES[$k]} / ${WALL[$k]}" | bc -l)
		[ "$(echo "$lc > $best_cpu" | bc)" = 1 ] && best_cpu=$lc
		[ "$(echo "$lw > $best_wall" | bc)" = 1 ] && best_wall=$lw
	done
	[ "${FLOE_NOTE[$c]:-}" = failed ] && { printf '%-14s floe failed\n' "${LABEL[$c]}"; continue; }
	for tool in floe floe-1t; do
		k=$tool/$c
		printf '%-14s %-8s lines/CPU s %.2fx   wall lines/s %.2fx   peak RSS %.1f MiB\n' \
			"${LABEL[$c]}" "$tool" "$(echo "${LINES[$k]} / ${CPU[$k]} / $best_cpu" | bc -l)" \
			"$(echo "${LINES[$k]} / ${WALL[$k]} / $best_wall" | bc -l)" \
			"$(echo "${RSS[$k]} / 1024" | bc -l)"
	done
	[ -n "${FLOE_NOTE[$c]:-}" ] && echo "               (floe with ${FLOE_NOTE[$c]}: the default failed)"
done
echo "(load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
