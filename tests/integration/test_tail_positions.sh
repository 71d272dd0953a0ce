#!/usr/bin/env bash
# Where a file input starts and what it takes, run after run: a file's first position
# (start_at: end) is durable from the moment it is chosen, so that `run --once` from a
# timer ships every line appended between runs and a restart loses nothing appended
# while the agent was down; a last line without its LF is taken only once its file is
# idle (partial_line_timeout), so that a line still being written is never cut in two,
# by --once or by the daemon; and the agent never reads its own stderr.
source "$(dirname "$0")/lib.sh"

messages() { # messages TABLE-DIR: the rows' messages, sorted, one per line
	local files
	files=$(live_files "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || return 0
	duck "SELECT message FROM read_parquet([$files]) ORDER BY 1" | sed 's/^\["\(.*\)"\]$/\1/'
}

config() { # config DIR START_AT [EXTRA-INPUT-KEY]
	mkdir -p "$1/logs"
	cat >"$1/floe.yaml" <<YAML
agent: { id: positions, state_dir: $1/state }
inputs:
  - type: tail
    paths: ["$1/logs/*.log"]
    start_at: $2
${3:+    $3}
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $1/wh
YAML
}

once() { "$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn 2>>"$1/err"; }

# start_at: end, four --once runs with lines appended between them (a timer): every
# appended line lands once; the lines there before the first run are not read.
d="$T/timer"
config "$d" end
printf 'before 1\nbefore 2\n' >"$d/logs/app.log"
check "timer: first run succeeds" once "$d"
printf 'one\ntwo\n' >>"$d/logs/app.log"
check "timer: second run succeeds" once "$d"
printf 'three\n' >>"$d/logs/app.log"
check "timer: third run succeeds" once "$d"
printf 'four\nfive\n' >>"$d/logs/app.log"
check "timer: fourth run succeeds" once "$d"
messages "$d/wh/default/logs" >"$d/got"
printf '%s\n' five four one three two >"$d/want"
check "timer: every line appended between runs lands exactly once" cmp "$d/got" "$d/want"

# A daemon stopped before it read anything, lines appended while it was down, then a
# restart: those lines land.
d="$T/down"
config "$d" end
printf 'before\n' >"$d/logs/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level warn 2>>"$d/err" &
pid=$!
PIDS+=($pid)
check "down: the daemon comes up (metrics.json written)" wait_for 60 test -s "$d/state/metrics.json"
kill -TERM $pid
rc=0
wait $pid || rc=$?
check "down: the daemon stops cleanly" test $rc = 0
printf 'while down 1\nwhile down 2\n' >>"$d/logs/app.log"
check "down: the restarted run succeeds" once "$d"
messages "$d/wh/default/logs" >"$d/got"
printf '%s\n' 'while down 1' 'while down 2' >"$d/want"
check "down: the lines appended while the agent was down land" cmp "$d/got" "$d/want"

# A writer whose buffer flushed half a line before a --once run: the half is held until
# the line ends, and lands as one row. A finished file's last line without LF (the file
# untouched for longer than partial_line_timeout) lands.
d="$T/partial"
# 10 minutes, not the default 5 s: a loaded machine must not make the halves look finished.
config "$d" beginning "partial_line_timeout: 10m"
printf 'whole\nhal' >"$d/logs/app.log"
check "partial: first run succeeds" once "$d"
printf 'f a line\nqua' >>"$d/logs/app.log"
check "partial: second run succeeds" once "$d"
printf 'rter\n' >>"$d/logs/app.log"
check "partial: third run succeeds" once "$d"
printf 'the end, no LF' >>"$d/logs/app.log"
touch -d '-1 hour' "$d/logs/app.log"
check "partial: fourth run succeeds" once "$d"
messages "$d/wh/default/logs" >"$d/got"
printf '%s\n' 'half a line' quarter 'the end, no LF' whole >"$d/want"
check "partial: a line written in pieces between runs is one row; an idle file's last line lands" \
	cmp "$d/got" "$d/want"

# The daemon: the same rule. A half line in a file being written is held (however long:
# partial_line_timeout is 10 minutes here) and lands whole when it ends; the last line of
# a file idle for longer lands without its LF.
d="$T/daemon"
config "$d" beginning "partial_line_timeout: 10m"
printf 'first\nsec' >"$d/logs/a.log"
printf 'old, no LF' >"$d/logs/b.log"
touch -d '-1 hour' "$d/logs/b.log"
# has_lines N: the input's line count in metrics.json (rewritten every second) is N.
has_lines() {
	[ "$(grep -o '"lines":[0-9]*' "$d/state/metrics.json" 2>/dev/null | tail -1 | cut -d: -f2)" = "$1" ]
}
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level warn 2>>"$d/err" &
pid=$!
PIDS+=($pid)
check "daemon: the whole line and the idle file's last line are read" \
	wait_for 60 has_lines 2
printf 'ond\n' >>"$d/logs/a.log"
check "daemon: the held line is read once it ends" wait_for 60 has_lines 3
kill -TERM $pid
rc=0
wait $pid || rc=$?
check "daemon: stops cleanly" test $rc = 0
messages "$d/wh/default/logs" >"$d/got"
printf '%s\n' first 'old, no LF' second >"$d/want"
check "daemon: three rows, the held line whole" cmp "$d/got" "$d/want"

# The agent's stderr redirected into the directory it tails (a shell redirect, systemd's
# StandardError=file:): that file is refused, logged once and counted; the other files
# are read. Before, every run committed the log lines of the run before.
d="$T/own"
config "$d" beginning
printf 'app line\n' >"$d/logs/app.log"
for i in 1 2 3; do
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level info 2>>"$d/logs/floe.log"
done
messages "$d/wh/default/logs" >"$d/got"
check "own: three runs commit the app's line only, none of the agent's own log" \
	test "$(cat "$d/got")" = "app line"
check "own: the refusal names the file" \
	grep -q "not reading $d/logs/floe.log: it is the agent's own stderr" "$d/logs/floe.log"
check "own: counted in metrics.json (files_skipped)" \
	grep -q '"files_skipped":1' "$d/state/metrics.json"

finish
