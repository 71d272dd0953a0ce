#!/usr/bin/env bash
# A committer thread stuck for good: a local warehouse on a hung file system (an NFS
# mount whose server went away), whose fsync never returns. A preloaded shim
# (tests/hang_shim.c) hangs fsync under the warehouse while a file exists, and shifts
# CLOCK_MONOTONIC forward by what another file says, so that the bounds of minutes come
# in a moment. Before, the main loop turned on: /livez answered 200, the service
# manager's watchdog was fed, nothing was logged, and commits stopped for good while the
# spool filled (a device nobody logs in to). Now, after the committer's bound (11 min by
# default) without a step, the log names the thread and its last step, /healthz and /livez
# answer 503, floe_threads_stalled is 1, the watchdog is no longer fed; after twice the
# bound the process exits with code 4 for its supervisor; so does a --once whose last
# commit hangs. The start after them commits every line once.
source "$(dirname "$0")/lib.sh"
cc=${CC:-cc}
command -v "$cc" >/dev/null || skip "no C compiler for the shim"
"$cc" -shared -fPIC -O2 -o "$T/hang_shim.so" "$FLOE_SRC/tests/hang_shim.c" -ldl ||
	skip "the shim does not build"
d=$T/stuck
mkdir -p "$d/logs"
echo 0 >"$d/mono"
cat >"$d/floe.yaml" <<YAML
agent: { id: stuck-agent, state_dir: $d/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$d/logs/a.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake: { warehouse: $d/wh }
YAML
seq 1 20 | sed 's/^/first /' >"$d/logs/a.log"

# The manager's end: each datagram a line of $d/notify.log (lib.sh).
notify_receiver "$d/notify.sock" "$d/notify.log"
wait_for 10 test -S "$d/notify.sock" || { fail "the notify receiver did not start"; finish; exit 1; }
touch "$d/notify.log"
said() { grep -c -- "$1" "$d/notify.log" || true; }

NOTIFY_SOCKET=$d/notify.sock WATCHDOG_USEC=2000000 FLOE_TEST_HANG_DIR=$d/wh \
	FLOE_TEST_HANG_FILE=$d/hang FLOE_TEST_MONO_FILE=$d/mono LD_PRELOAD=$T/hang_shim.so \
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=("$pid")
committed() { [ "$(metric "$d/state/metrics.json" rows_committed 2>/dev/null)" = "$1" ]; }
check "the first lines are committed" wait_for 30 committed 20
port=$(serving_port "$d/err" "$pid")
code() { curl -s -o "$d/body" -w '%{http_code}' "http://127.0.0.1:$port$1"; }

touch "$d/hang"
seq 1 20 | sed 's/^/second /' >>"$d/logs/a.log"
check "the next commit hangs in the warehouse's fsync" wait_for 30 test -e "$d/hang.hung"
# The clock jumps only once the loop has looked at the committer after its last step (a
# look after the jump would take the jump for its last step's time): two publishes of
# /metrics after the hang, whose floe_http_requests_total changes only when the loop
# publishes the page again.
requests() { curl -s "http://127.0.0.1:$port/metrics" >"$d/pub" || true; grep '^floe_http_requests_total' "$d/pub" || true; }
republished() { [ "$(requests)" != "$1" ]; }
next_publish() { local a; a=$(requests); wait_for 20 republished "$a"; }
check "the loop publishes after the hang" next_publish
check "... twice" next_publish
# The shim reads the file at every clock read: replaced whole (a read of it half
# written would be no shift, and a page published then stale at once).
shift_mono() { echo "$1" >"$d/mono.tmp" && mv "$d/mono.tmp" "$d/mono"; }
shift_mono 700 # past the bound: 2 * (10 s + 30 s + 300 s)
check "the log names the stuck committer" \
	wait_log "$d/err" "the committer thread has made no progress for [0-9]* s" 30
check "... and its last step" grep -q "the last step: store: writing" "$d/err"
stuck_healthz() { [ "$(code /healthz)" = 503 ] && grep -q "committer thread is stuck" "$d/body"; }
check "/healthz answers 503, naming the stuck committer" wait_for 20 stuck_healthz
livez_down() { [ "$(code /livez)" = 503 ]; }
check "/livez answers 503" wait_for 20 livez_down
# (Fetched whole first: grep -q leaving the pipe early fails curl, and pipefail the check.)
prom() { curl -s -o "$d/metrics" "http://127.0.0.1:$port/metrics" && grep -qx "$1" "$d/metrics"; }
check "floe_threads_stalled 1" wait_for 20 prom "floe_threads_stalled 1"
check "floe_thread_stalls_total 1" prom "floe_thread_stalls_total 1"
check "the process still runs before the longer bound" kill -0 "$pid"
# The watchdog (every 500 ms while fed) is fed no more: none in 2 s.
n=$(said '^WATCHDOG=1$')
sleep 2
check "the watchdog is no longer fed" test "$(said '^WATCHDOG=1$')" = "$n"
shift_mono 1400 # past twice the bound
gone() { ! kill -0 "$pid" 2>/dev/null; }
if wait_for 30 gone; then
	pass "the agent exits after the longer bound"
	rc=0
	wait "$pid" || rc=$?
	check "with exit code 4 ($rc)" test "$rc" = 4
	check "saying why" grep -q "exiting with code 4 for the supervisor" "$d/err"
else
	fail "the agent exits after the longer bound"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
fi

# A --once from a timer waits for its last commit: the wait watches the committer too
# (the commit runs on the committer's thread, never on the waiting main thread). The
# clock moves on 700 s at a time until the log says so: a look at the committer before
# a jump takes at most one more.
rm -f "$d/hang.hung"
seq 1 10 | sed 's/^/third /' >>"$d/logs/a.log"
FLOE_TEST_HANG_DIR=$d/wh FLOE_TEST_HANG_FILE=$d/hang FLOE_TEST_MONO_FILE=$d/mono \
	LD_PRELOAD=$T/hang_shim.so ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/once1.err" &
opid=$!
PIDS+=("$opid")
check "--once: its commit hangs" wait_for 30 test -e "$d/hang.hung"
step=1400
advance_until() { # advance_until COMMAND...: the clock on by 700 s until COMMAND holds
	local i
	for i in 1 2 3 4 5 6; do
		step=$((step + 700))
		shift_mono "$step"
		wait_for 3 "$@" && return 0
	done
	return 1
}
stuck_said() { grep -q "the committer thread has made no progress" "$d/once1.err"; }
check "--once: the stuck committer is logged" advance_until stuck_said
once_gone() { ! kill -0 "$opid" 2>/dev/null; }
if advance_until once_gone; then
	rc=0
	wait "$opid" || rc=$?
	check "--once: it exits with code 4 ($rc)" test "$rc" = 4
else
	fail "--once: it exits with code 4"
	kill -9 "$opid"
	wait "$opid" 2>/dev/null || true
fi

# The mount comes back and the supervisor starts the agent again.
rm -f "$d/hang"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/once.err" || rc=$?
check "the next start commits ($rc)" test "$rc" = 0
check "every line is in the table once" test "$(snapshot_records "$d/wh/default/logs")" = 50
finish
