#!/usr/bin/env bash
# The journal input over journal files the test writes itself (systemd-journal-remote
# turns the journal export format into a journal file; no journald needs to run): fields
# into columns, the include list into attrs, matches, the cursor kept across runs so that
# nothing is read twice, entries written while the agent runs, and kill -9 after a commit.
source "$(dirname "$0")/lib.sh"

# Unpacked by packaging/dev/install-deps.sh test (or installed).
REMOTE=/opt/floe-bench/systemd-journal-remote/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || REMOTE=/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || { echo "SKIP: systemd-journal-remote missing"; exit 0; }

# journal FILE UNIT FROM TO: entries FROM..TO of UNIT into a new journal file FILE.
journal() {
	local file=$1 unit=$2 from=$3 to=$4 i now
	now=$(date +%s%6N)
	for i in $(seq "$from" "$to"); do
		printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=%s\n' $((now + i)) $((1000 + i))
		printf '_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=jhost\n'
		printf 'SYSLOG_IDENTIFIER=%s\n_PID=%d\nPRIORITY=%d\nSYSLOG_FACILITY=4\n' "${unit%.*}" $((100 + i)) $((i % 8))
		printf '_SYSTEMD_UNIT=%s\nCODE_FILE=main.c\nMESSAGE=%s entry %d\n\n' "$unit" "$unit" "$i"
	done | "$REMOTE" --output="$file" --split-mode=none - 2>/dev/null
}

rows_sql() {
	local files
	files=$(live_files "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo "[]"; return; }
	duck "WITH t AS (SELECT * FROM read_parquet([$files])) $2"
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
		echo "SKIP: this floe was built without libsystemd"
		exit 0
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

finish
