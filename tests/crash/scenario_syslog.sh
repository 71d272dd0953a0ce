# The syslog scenario of the power-cut tests (sourced after crashlib.sh): syslog_record
# DIR records three runs of `floe run` with a TCP syslog listener into DIR/rec.log, each
# receiving 250 messages over one connection and then stopped (SIGTERM: it reads what
# its socket holds, seals, commits, cleans its spool; snapshot expiry from the third
# commit on), and sets CRASH_ROOT, CRASH_INIT and crash_check for explore. Nothing can
# send again what a cut lost, so the check is the promise itself: every message the
# crash state held durably (in the table or in a spool entry) is in the table after the
# restart, once, and nothing is there twice.

# syslog_record DIR: returns non-zero if a recorded run fails.
syslog_record() {
	crash_dirs "$1"
	PORT=$(free_port)
	cat >"$d/floe.yaml" <<YAML
agent:
  id: crash-syslog
  state_dir: $CRASH_ROOT/state
inputs:
  - type: syslog
    listen: "tcp://127.0.0.1:$PORT"
tables:
  logs:
    commit_interval: 60s
$CRASH_PROPS
lake:
  warehouse: $CRASH_ROOT/wh
YAML
	cp -a "$CRASH_ROOT" "$CRASH_INIT"
	local round pid
	for round in 1 2 3; do
		FLOE_FS_RECORD="$rec" "$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/rec$round.err" &
		pid=$!
		PIDS+=($pid)
		wait_log "$d/rec$round.err" "agent .* started" || { echo "run $round did not start"; return 1; }
		python3 - "$PORT" $next $((next + 250)) <<'PY' || return 1
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"".join(b"<13>1 - h app - - - line-%06d\n" % i for i in range(int(sys.argv[2]), int(sys.argv[3]))))
s.close()
PY
		next=$((next + 250))
		stop_pid $pid || { echo "run $round: the stop exited $?"; return 1; }
		grep -q "committed snapshot" "$d/rec$round.err" || { echo "run $round committed nothing"; return 1; }
	done
}

# crash_check: what the state holds durably (the table's live files and the files of
# the spool's entries), copied aside, then floe recovers, then one DuckDB query: no
# message twice, and every durable one in the table.
crash_check() {
	local held=() f e got
	rm -rf "$d/held"
	mkdir -p "$d/held"
	mapfile -t held < <(live_files "$CRASH_ROOT/wh/default/logs" 2>/dev/null || true)
	for e in "$CRASH_ROOT"/state/spool/*.entry; do
		[ -e "$e" ] || continue
		for f in "${e%.entry}"-*.parquet; do [ -e "$f" ] && held+=("$f"); done
	done
	for f in "${held[@]}"; do cp "$f" "$d/held/"; done
	floe_recovers "$d/floe.yaml" "$d/run.log" || return 1
	local t tsql="SELECT NULL::VARCHAR AS message WHERE false" expect="SELECT 0 AS missing, 0 AS held"
	t=$(live_files "$CRASH_ROOT/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
	[ -z "$t" ] || tsql="SELECT message FROM read_parquet([$t])"
	if [ ${#held[@]} -gt 0 ]; then
		expect="SELECT count(*) FILTER (WHERE message NOT IN (SELECT message FROM t)) AS missing,
			count(*) AS held FROM (SELECT DISTINCT message FROM read_parquet('$d/held/*.parquet'))"
	fi
	got=$(duck "WITH t AS ($tsql)
		SELECT (SELECT count(*) FROM t), (SELECT count(DISTINCT message) FROM t),
			(SELECT count(*) FROM t WHERE message LIKE 'line-%'), e.missing, e.held FROM ($expect) e")
	got=${got//\"/}
	local a b c m h
	IFS=, read -r a b c m h <<<"${got//[\[\]]/}"
	[ "$a" = "$b" ] && [ "$a" = "$c" ] && [ "$m" = 0 ] ||
		{ echo "rows [count, distinct, ours, durable ones missing, durable ones] = $got"; return 1; }
	[ "$h" -le "$a" ] && [ "$a" -le "$next" ] || { echo "rows $a, durable $h, sent $next"; return 1; }
	/usr/bin/python3 "$FLOE_SRC/tests/crash/check_table.py" "$CRASH_ROOT/wh/default/logs"
}
