# Shared helpers for floe's integration tests (sourced). Each test gets a private
# directory under /tmp, removed on exit, and stops every process it started by PID.
set -euo pipefail
# Times a log writes without an offset are in the system's zone for a tail input's
# syslog_file parser (zone: local): the tests' expectations are in UTC, whatever the
# machine's zone (a test that wants another sets TZ itself).
export TZ=UTC0

: "${FLOE_BIN:?FLOE_BIN must point to the floe binary}"
: "${FLOE_SRC:?FLOE_SRC must point to the source tree}"
READER="$FLOE_SRC/tests/integration/reader"
T=$(mktemp -d /tmp/floe-it.XXXXXX)
# The machine's hardware, which an installation's home is made of (platform/machine.h):
# none, so that every test runs alike on a machine with network devices and in a
# container without; a test that wants one makes a tree (machine_root) and points this
# at it.
mkdir -p "$T/no-machine"
export FLOE_TEST_MACHINE_ROOT=$T/no-machine
# The service manager's state directory (systemd's StateDirectory=), where floe run also
# keeps the last good configuration: none, so that no test writes into the host's
# /var/lib/floe (a test that wants one sets it).
export STATE_DIRECTORY=$T/no-state-directory
PIDS=()
PASSED=0
FAILED=0

# Only the PIDs that are still this shell's running jobs: a process the shell has reaped
# gave its PID back, and the suite's other tests (hundreds of processes a minute, with
# pid_max at 32768) get it again. A blanket kill -9 of every PID once started killed
# another test's S3 stub that way.
running_job() { # running_job PID: PID is still one of this shell's running jobs
	local running
	running=" $(jobs -pr | tr '\n' ' ')"
	[ -n "$1" ] && [[ $running == *" $1 "* ]]
}
cleanup() {
	local p
	for p in "${PIDS[@]:-}"; do
		# waited for, so that the shell does not report each as "Killed"
		running_job "$p" && { kill -9 "$p" 2>/dev/null; wait "$p" 2>/dev/null; } || true
	done
	if [ "${KEEP_TMP:-0}" != 1 ]; then rm -rf "$T"; else echo "kept $T"; fi
}
trap cleanup EXIT

pass() { PASSED=$((PASSED + 1)); echo "ok - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { # check "description" command...
	local what=$1
	shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
# skip WHY: the test's precondition is missing; ctest counts exit 77 as skipped.
skip() {
	echo "skipped: $*"
	exit 77
}
# skip_part WHY: a part of the test could not run here; if nothing fails, finish exits 77
# saying why, so that the run is counted skipped rather than passed.
SKIPPED_PARTS=()
skip_part() { SKIPPED_PARTS+=("$*"); }
finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] || return 1
	[ ${#SKIPPED_PARTS[@]} -eq 0 ] || skip "${SKIPPED_PARTS[@]}"
}

# A test that reads tables back through the DuckDB reader (duck, rows_sql or a script in
# reader/, as its own text shows) needs node and the reader's npm packages (npm ci in
# tests/integration/reader): without them it is skipped, not failed on a missing module.
if grep -qE '(^|[^[:alnum:]_])(duck|rows_sql)([^[:alnum:]_]|$)|[$]READER/' "$0"; then
	command -v node >/dev/null || skip "node is missing (the DuckDB reader runs on it)"
	[ -d "$READER/node_modules/@duckdb/node-api" ] ||
		skip "the DuckDB reader is not installed: npm ci in $READER"
fi

# free_port: a port nothing on 127.0.0.1 listens on now, TCP and UDP (the kernel picks
# it), so that tests running side by side do not collide on ports derived from PIDs.
free_port() {
	python3 -c '
import socket
while True:
    t = socket.socket(); t.bind(("127.0.0.1", 0)); p = t.getsockname()[1]
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        u.bind(("127.0.0.1", p)); break
    except OSError:
        t.close(); u.close()
print(p)'
}

# machine_root DIR MAC: a machine tree for FLOE_TEST_MACHINE_ROOT whose one physical
# network device has the permanent address MAC.
machine_root() {
	mkdir -p "$1/sys/class/net/eth0/device"
	echo 0 >"$1/sys/class/net/eth0/addr_assign_type"
	echo "$2" >"$1/sys/class/net/eth0/address"
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or time is up.
wait_for() {
	local deadline=$(($(date +%s%N) + $1 * 1000000000))
	shift
	while ! "$@"; do
		[ "$(date +%s%N)" -lt "$deadline" ] || return 1
		sleep 0.1
	done
}

# prom_is LINE: until the agent serving its status pages on $port has LINE in /metrics
# (published once a second), at most 10 s.
prom_is() {
	local i
	for i in $(seq 1 100); do
		curl -s "http://127.0.0.1:$port/metrics" | grep -qx "$1" && return 0
		sleep 0.1
	done
	return 1
}

# wait_log FILE PATTERN [SECONDS]: until FILE (an agent's log) says PATTERN; at most
# SECONDS (10), then fails. log_has below, with a time.
wait_log() { LOG_WAIT_S=${3:-10} log_has "$1" "$2"; }

# stop_pid PID [SECONDS]: SIGTERM, and PID's exit status within SECONDS (10); after that
# SIGKILL and 124.
stop_pid() {
	local _
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 1 $((${2:-10} * 10))); do kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }; sleep 0.1; done
	kill -9 "$1"; wait "$1" 2>/dev/null || true
	return 124
}

# kill_at_random TENTHS CMD...: runs CMD in the background (output discarded) and kills
# it -9 at a random moment of its first TENTHS tenths of a second, then reaps it: a test of
# what any point of a run leaves behind.
kill_at_random() {
	local within=$1 p
	shift
	"$@" >/dev/null 2>&1 &
	p=$!
	PIDS+=("$p")
	sleep "0.$((RANDOM % within))$((RANDOM % 10))"
	kill -9 "$p" 2>/dev/null || true
	wait "$p" 2>/dev/null || true
}

# duck "SQL"...: runs SQL in DuckDB, prints rows as JSON arrays.
duck() { node "$READER/duck.js" "$@"; }

# write_config FILE STATE WAREHOUSE PATHS-YAML [extra tables.logs keys]; INPUT_KEYS: more
# keys of the input (indented by four spaces, e.g. "    parser: json").
write_config() {
	local file=$1 state=$2 wh=$3 paths=$4 extra=${5:-}
	cat >"$file" <<YAML
agent:
  id: ${AGENT_ID:-it-agent}
  state_dir: $state
inputs:
  - type: tail
    paths: $paths
    start_at: beginning
${INPUT_KEYS:-}
tables:
  logs:
    commit_interval: ${COMMIT_INTERVAL:-60s}
$extra
lake:
  warehouse: $wh
YAML
}

# logged_port LOG: the port an agent started with agent.http.listen 127.0.0.1:0 serves
# /metrics on, as its log (the last start in it) says; empty if it has not said yet.
logged_port() {
	sed -n 's#.*status: serving /metrics, /healthz and /livez on tcp://127.0.0.1:\([0-9]*\).*#\1#p' "$1" | tail -1
}

# serving_port LOG PID: logged_port, once the log says so; empty if the agent PID exits
# first or 10 s pass.
serving_port() {
	local port="" i
	for i in $(seq 1 100); do
		port=$(logged_port "$1")
		[ -n "$port" ] && break
		kill -0 "$2" 2>/dev/null || break
		sleep 0.1
	done
	echo "$port"
}

# run_serving CONFIG LOG: starts floe run -c CONFIG in the background (stderr to LOG,
# its PID in $pid, killed at exit) and sets $port once it serves /metrics (empty if not).
run_serving() {
	"$FLOE_BIN" run -c "$1" 2>"$2" &
	pid=$!
	PIDS+=($pid)
	port=$(serving_port "$2" $pid)
}

# newest_metadata TABLE_DIR: the path of the table's newest metadata version (the commit
# point: version-hint.text may lag it).
newest_metadata() {
	ls "$1"/metadata/v*.metadata.json | sort -V | tail -1
}

# live_files TABLE_DIR: the live data files of the current snapshot, as local paths.
live_files() {
	"$FLOE_BIN" inspect "$1" | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p'
}

# snapshot_records TABLE_DIR [BIN]: total-records of the table's current snapshot, as
# BIN's `inspect` prints it (default $FLOE_BIN); empty when the table has none.
snapshot_records() {
	"${2:-$FLOE_BIN}" inspect "$1" 2>/dev/null |
		awk '/\(current\)/ { c = 1 } c && /total-records=/ { sub(/.*total-records=/, ""); print; exit }'
}

# live_list TABLE_DIR: live_files as the items of a DuckDB list ('a','b').
live_list() {
	live_files "$1" | sed "s/.*/'&'/" | paste -sd,
}

# rows_sql TABLE-DIR SQL-ON-t: runs SQL over the live rows of the current snapshot as t.
rows_sql() {
	local files
	files=$(live_list "$1")
	[ -n "$files" ] || { echo "[]"; return; }
	duck "WITH t AS (SELECT * FROM read_parquet([$files])) $2"
}

# log_has FILE PATTERN [COUNT] [PID]: waits until FILE holds PATTERN on COUNT lines
# (LOG_WAIT_S seconds, 20, at most; at once false when PID, if given, has ended first).
log_has() {
	local i
	for i in $(seq 1 $((${LOG_WAIT_S:-20} * 10))); do
		[ "$(grep -c -e "$2" "$1" 2>/dev/null)" -ge "${3:-1}" ] && return 0
		[ -n "${4:-}" ] && ! kill -0 "$4" 2>/dev/null && break
		sleep 0.1
	done
	[ "$(grep -c -e "$2" "$1" 2>/dev/null)" -ge "${3:-1}" ]
}

# start_rest_catalog DIR [server.js options...]: the test REST catalog
# (tests/integration/rest/server.js) on a free port with its state in DIR; sets REST_URL
# and REST_PID (also stopped on exit). Skips the test (77) when its packages are missing.
start_rest_catalog() {
	local dir=$1 port
	shift
	[ -d "$FLOE_SRC/tests/integration/rest/node_modules" ] ||
		skip "the test catalog's packages are not installed (npm ci in tests/integration/rest)"
	port=$(free_port)
	mkdir -p "$dir"
	node "$FLOE_SRC/tests/integration/rest/server.js" --port "$port" --root "$dir" "$@" >"$dir/server.out" 2>&1 &
	REST_PID=$!
	PIDS+=("$REST_PID")
	REST_URL="http://127.0.0.1:$port"
	wait_log "$dir/server.out" "^listening " 30
}

# damage FILE: overwrites 4 bytes in the middle of FILE (the damaged-state tests).
damage() {
	local size
	size=$(stat -c %s "$1")
	printf 'XXXX' | dd of="$1" bs=1 seek=$((size / 2)) conv=notrunc status=none
}

# clock_shim OFFSET_FILE: builds tests/clock_shim.c (skips the test without a C compiler)
# and sets CLOCK_SHIFTED, the env command that runs a program with its wall clock shifted
# by the seconds OFFSET_FILE holds whenever it reads it: "${CLOCK_SHIFTED[@]}" CMD...
# (env execs CMD, so a background one's PID is CMD's). An ASan build is told that the
# shim comes before its runtime.
clock_shim() {
	local cc=${CC:-cc}
	command -v "$cc" >/dev/null || skip "no C compiler for the clock shim"
	[ -f "$T/clock_shim.so" ] || "$cc" -shared -fPIC -O2 -o "$T/clock_shim.so" \
		"$FLOE_SRC/tests/clock_shim.c" -ldl || skip "the clock shim does not build"
	CLOCK_SHIFTED=(env FLOE_TEST_CLOCK_FILE="$1" LD_PRELOAD="$T/clock_shim.so"
		ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0")
}

# metric FILE NAME: one counter of a metrics.json.
metric() {
	sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"
}

# A service manager's notification socket at SOCK (AF_UNIX datagrams, as systemd's
# NOTIFY_SOCKET): each datagram a line of LOG, its newlines as '|', for at most 300 s. Its
# PID is in NOTIFY_PID and stopped with the others at the end.
notify_receiver() {
	python3 - "$1" "$2" <<'PY' &
import socket, sys, time
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.5)
end = time.time() + 300
with open(log, "a") as f:
    while time.time() < end:
        try:
            m = s.recv(4096)
        except socket.timeout:
            continue
        f.write(m.decode().replace("\n", "|") + "\n")
        f.flush()
PY
	NOTIFY_PID=$!
	PIDS+=("$NOTIFY_PID") # a job of this shell: cleanup stops only those
}
