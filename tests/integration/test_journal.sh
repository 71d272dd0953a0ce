#!/usr/bin/env bash
# The journal input over journal files the test writes itself (systemd-journal-remote
# turns the journal export format into a journal file; no journald needs to run): fields
# into columns, the include list into attrs, matches, the cursor kept across runs so that
# nothing is read twice, entries written while the agent runs, and kill -9 after a commit.
source "$(dirname "$0")/lib.sh"

# Unpacked by packaging/dev/install-deps.sh test (or installed).
REMOTE=/opt/floe-bench/systemd-journal-remote/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || REMOTE=/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || skip "systemd-journal-remote is missing (packaging/dev/install-deps.sh test)"

# journal FILE UNIT FROM TO [PID [BOOT MONO]]: entries FROM..TO of UNIT into a new journal
# file FILE (by PID, else by 100 + their number; in boot BOOT at monotonic time MONO µs
# and on, else in a boot of the test's at 1000 + their number).
journal() {
	local file=$1 unit=$2 from=$3 to=$4 pid=${5:-} boot=${6:-0123456789abcdef0123456789abcdef}
	local mono=${7:-1000} i now
	now=$(date +%s%6N)
	for i in $(seq "$from" "$to"); do
		printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=%s\n' $((now + i)) $((mono + i))
		printf '_BOOT_ID=%s\n_HOSTNAME=jhost\n' "$boot"
		printf 'SYSLOG_IDENTIFIER=%s\n_PID=%d\nPRIORITY=%d\nSYSLOG_FACILITY=4\n' "${unit%.*}" "${pid:-$((100 + i))}" $((i % 8))
		printf '_SYSTEMD_UNIT=%s\nCODE_FILE=main.c\nMESSAGE=%s entry %d\n\n' "$unit" "$unit" "$i"
	done | "$REMOTE" --output="$file" --split-mode=none - 2>/dev/null
}

d="$T/j"
mkdir -p "$d/journal"
journal "$d/journal/a.journal" ssh.service 1 5
journal "$d/journal/b.journal" cron.service 1 3
cat >"$d/floe.yaml" <<YAML
agent: {id: jtest, state_dir: $d/state}
inputs:
  - type: journal
    directory: $d/journal
    start_at: beginning
    matches: ["_SYSTEMD_UNIT=ssh.service"]
    fields: [_SYSTEMD_UNIT, CODE_FILE]
tables:
  logs:
    commit_interval: 1s
lake: {warehouse: $d/wh}
YAML
if ! "$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check.err"; then
	if grep -q "built without the systemd journal" "$d/check.err"; then
		skip "this floe was built without libsystemd"
	fi
	cat "$d/check.err"
fi
check "floe check accepts a journal input" "$FLOE_BIN" check -c "$d/floe.yaml"
W="$d/wh/default/logs"
check "run --once reads the journal" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "journal: the match keeps ssh.service's five entries, cron's are left" \
	test "$(rows_sql "$W" "SELECT count(*) FROM t")" = '["5"]'
check "journal: fields into their columns, the include list into attrs" \
	test "$(rows_sql "$W" "SELECT host, source, app, proc_id, severity, facility, message, element_at(attrs, 'CODE_FILE')[1] FROM t WHERE message = 'ssh.service entry 3'")" = \
	'["jhost","journal:ssh.service","ssh","103",3,4,"ssh.service entry 3","main.c"]'

journal "$d/journal/c.journal" ssh.service 6 8
check "a second run --once goes on after the cursor" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "journal: eight entries, each once" \
	test "$(rows_sql "$W" "SELECT count(*), count(DISTINCT message) FROM t")" = '["8","8"]'

# Entries written while the agent runs come in; kill -9 after their commit, a restart and
# more entries: still each once.
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
PID=$!
PIDS+=($PID)
sleep 1
journal "$d/journal/d.journal" ssh.service 9 12
for i in $(seq 1 100); do
	python3 -c "import json,sys; sys.exit(0 if json.load(open('$d/state/metrics.json'))['rows_committed']>=4 else 1)" \
		2>/dev/null && break
	sleep 0.1
done
# libsystemd is loaded when a journal input opens (platform/journal_sd.c), not linked.
check "a journal input: libsystemd is loaded" grep -q libsystemd /proc/$PID/maps
kill -9 $PID
wait $PID 2>/dev/null || true
journal "$d/journal/e.journal" ssh.service 13 14
check "after kill -9, run --once takes what is new" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "journal: fourteen entries, each once" \
	test "$(rows_sql "$W" "SELECT count(*), count(DISTINCT message) FROM t")" = '["14","14"]'

# Where libsystemd cannot be loaded (here a file that is no library comes first in the
# loader's path), the journal input fails to open with the loader's reason: exit 1.
mkdir -p "$d/nolib"
echo "not a library" >"$d/nolib/libsystemd.so.0"
rc=0
LD_LIBRARY_PATH="$d/nolib" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/nolib.err" || rc=$?
check "without libsystemd: exit 1" test "$rc" = 1
check "without libsystemd: the error names the library and the package" \
	grep -q "cannot load libsystemd.so.0 (.*): the journal input needs libsystemd (Debian: the libsystemd0 package)" "$d/nolib.err"

# An agent that only tails files does not load libsystemd (nor the libraries it needs).
mkdir -p "$d/t"
echo "a line" >"$d/t/a.log"
cat >"$d/t/floe.yaml" <<YAML
agent: {id: ttest, state_dir: $d/t/state}
inputs:
  - {type: tail, paths: ["$d/t/*.log"]}
tables:
  logs: {}
lake: {warehouse: $d/t/wh}
YAML
"$FLOE_BIN" run -c "$d/t/floe.yaml" >"$d/t/log" 2>&1 &
PID=$!
PIDS+=($PID)
for i in $(seq 1 100); do
	grep -q " started " "$d/t/log" && break
	sleep 0.1
done
check "a tail-only agent has started" grep -q " started " "$d/t/log"
check "a tail-only agent: libsystemd is not loaded" bash -c "! grep -q libsystemd /proc/$PID/maps"
kill $PID
wait $PID 2>/dev/null || true

# this_boot: this boot's id as the journal writes it; mono_us: the monotonic clock now.
this_boot() { tr -d - </proc/sys/kernel/random/boot_id; }
mono_us() { python3 -c 'import time; print(time.monotonic_ns() // 1000)'; }
# jmetric STATE KEY: the journal input's counter KEY in STATE/metrics.json.
jmetric() {
	python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['inputs'][0][sys.argv[2]])" \
		"$1/metrics.json" "$2" 2>/dev/null
}
# jconfig FILE STATE WH DIR [EXTRA]: a journal input over DIR, from the beginning.
jconfig() {
	cat >"$1" <<YAML
agent:
  id: jmore
  state_dir: $2
  http: {listen: "127.0.0.1:0"}
inputs:
  - type: journal
    directory: $4
    start_at: beginning
${5:+    $5}
tables:
  logs: {commit_interval: 1s}
lake: {warehouse: $3}
YAML
}

# floe's own entries (a program of its name, its PID) are left out by default and
# counted: read, each commit's log lines would make the next commit, for ever.
# include_own: true reads them.
o="$T/own"
mkdir -p "$o/journal"
journal "$o/journal/a.journal" app.service 1 3
journal "$o/journal/b.journal" floe.service 1 4
jconfig "$o/false.yaml" "$o/state-false" "$o/wh-false" "$o/journal"
jconfig "$o/true.yaml" "$o/state-true" "$o/wh-true" "$o/journal" "include_own: true"
check "own: run --once succeeds" "$FLOE_BIN" run -c "$o/false.yaml" --once --log-level warn
check "own: floe's entries are left out, the others read" \
	test "$(rows_sql "$o/wh-false/default/logs" "SELECT count(*), count(*) FILTER (WHERE app = 'floe') FROM t")" = '["3","0"]'
check "own: counted in metrics.json" test "$(jmetric "$o/state-false" own_skipped)" = 4
check "own: include_own: true reads them" "$FLOE_BIN" run -c "$o/true.yaml" --once --log-level warn
check "own: include_own: true: every entry" \
	test "$(rows_sql "$o/wh-true/default/logs" "SELECT count(*), count(*) FILTER (WHERE app = 'floe') FROM t")" = '["7","4"]'
# By PID: entries of the running agent's own process, in a file written while it runs,
# are left out; /metrics counts them too.
"$FLOE_BIN" run -c "$o/false.yaml" 2>"$o/run.err" &
pid=$!
PIDS+=($pid)
port=$(serving_port "$o/run.err" $pid)
# (Numbered after the entries read so far: sd-journal orders one boot's entries by their
# monotonic time, which journal() derives from the number.)
journal "$o/journal/c.journal" other.service 6 7 "$pid" "$(this_boot)" "$(mono_us)"
journal "$o/journal/d.journal" app.service 8 9
for i in $(seq 1 200); do
	[ "$(jmetric "$o/state-false" own_skipped)" = 2 ] && [ "$(jmetric "$o/state-false" lines)" = 2 ] && break
	sleep 0.1
done
curl -sf "http://127.0.0.1:$port/metrics" >"$o/metrics" || true
kill -TERM $pid
wait $pid || true
check "own: the agent's own PID is left out, the app's new entries read" \
	test "$(rows_sql "$o/wh-false/default/logs" "SELECT count(*), count(*) FILTER (WHERE app = 'app') FROM t")" = '["5","5"]'
check "own: /metrics counts them" grep -qx 'floe_journal_own_entries_skipped_total{input="1"} 2' "$o/metrics"

# A PID is reused: entries under the agent's PID from another boot, or from this boot
# before the agent started (a process that held the PID before it), are not its own and
# are read. The subshell's PID is the agent's after exec.
p="$T/pid"
mkdir -p "$p/journal"
jconfig "$p/floe.yaml" "$p/state" "$p/wh" "$p/journal"
(
	journal "$p/journal/a.journal" other.service 1 2 "$BASHPID"
	journal "$p/journal/b.journal" other.service 3 4 "$BASHPID" "$(this_boot)" $(($(mono_us) - 60000000))
	exec "$FLOE_BIN" run -c "$p/floe.yaml" --once --log-level warn
) && r=0 || r=$?
check "pid: run --once succeeds" test "$r" = 0
check "pid: another boot's and an earlier process's entries under the agent's PID are read" \
	test "$(rows_sql "$p/wh/default/logs" "SELECT count(*) FROM t")" = '["4"]'
check "pid: none counted as the agent's own" test "$(jmetric "$p/state" own_skipped)" = 0

# Truncated and damaged journal files: sd-journal leaves a file it cannot open out
# without a word. floe names each one with the error, counts them (metrics.json and
# /metrics), and reads what can be read: the other files.
c="$T/corrupt"
mkdir -p "$c/journal"
journal "$c/journal/good.journal" ok.service 1 3
journal "$c/whole.journal" bad.service 1 50
used=$(python3 -c "import sys; print(len(open(sys.argv[1], 'rb').read().rstrip(b'\0')))" "$c/whole.journal")
head -c $((used / 2)) "$c/whole.journal" >"$c/journal/cut.journal"
head -c 100 "$c/whole.journal" >"$c/journal/stub.journal"
cp "$c/whole.journal" "$c/journal/header.journal"
printf 'XXXXXXXX' | dd of="$c/journal/header.journal" bs=1 seek=0 conv=notrunc status=none
jconfig "$c/floe.yaml" "$c/state" "$c/wh" "$c/journal"
check "corrupt: run --once succeeds" "$FLOE_BIN" run -c "$c/floe.yaml" --once --log-level warn 2>"$c/err"
for f in cut stub header; do
	check "corrupt: $f.journal is named with its error" \
		grep -q "the journal file $c/journal/$f.journal cannot be read: [A-Za-z]" "$c/err"
done
check "corrupt: counted in metrics.json" test "$(jmetric "$c/state" files_unreadable)" = 3
check "corrupt: the readable file is read" \
	test "$(rows_sql "$c/wh/default/logs" "SELECT count(*) FROM t")" = '["3"]'
"$FLOE_BIN" run -c "$c/floe.yaml" 2>"$c/run.err" &
pid=$!
PIDS+=($pid)
port=$(serving_port "$c/run.err" $pid)
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$c/metrics" &&
		grep -q 'floe_input_files_unreadable{input="1"} 3' "$c/metrics" && break
	sleep 0.1
done
kill -TERM $pid
wait $pid || true
check "corrupt: counted in /metrics" grep -qx 'floe_input_files_unreadable{input="1"} 3' "$c/metrics"

# A configured directory that does not exist yet (a volatile journal made persistent at
# boot, a mount not up): the agent starts and waits for it, says so once and on
# /healthz, and reads it once it is there. (It exited 1 before, a restart loop under
# the unit.)
m="$T/missing"
mkdir -p "$m"
jconfig "$m/floe.yaml" "$m/state" "$m/wh" "$m/journal"
check "missing: floe check accepts it" "$FLOE_BIN" check -c "$m/floe.yaml"
"$FLOE_BIN" run -c "$m/floe.yaml" 2>"$m/run.err" &
pid=$!
PIDS+=($pid)
port=$(serving_port "$m/run.err" $pid)
check "missing: the agent runs" kill -0 $pid
check "missing: it says it waits for the directory" \
	grep -q "the journal directory $m/journal does not exist (yet): the input waits for it" "$m/run.err"
waits() { curl -s "http://127.0.0.1:$port/healthz" | grep -q "the journal directory $m/journal does not exist"; }
check "missing: /healthz says so" wait_for 20 waits
mkdir -p "$m/tmp"
journal "$m/tmp/a.journal" app.service 1 4
mv "$m/tmp" "$m/journal"
read4() { [ "$(jmetric "$m/state" lines)" = 4 ] && [ "$(metric "$m/state/metrics.json" rows_committed)" = 4 ]; }
check "missing: once it is there, its entries are read and committed" wait_for 60 read4
healthy() { curl -s "http://127.0.0.1:$port/healthz" | grep -qx ok; }
check "missing: /healthz is ok again" wait_for 20 healthy
kill -TERM $pid
wait $pid || true
check "missing: every entry once" \
	test "$(rows_sql "$m/wh/default/logs" "SELECT count(*), count(DISTINCT message) FROM t")" = '["4","4"]'

finish
