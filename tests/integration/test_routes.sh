#!/usr/bin/env bash
# Several raw tables and routing: an input's records go to the table of the first route
# rule that matches, else to the input's table; each table holds exactly its rows, and
# the tables together hold every line once, also across a crash between two tables'
# commits or within a seal, and a damaged spool file of a further table is rebuilt; an
# unknown table, or a budget too small for the tables, is refused by floe check; reloads
# that add and remove a table keep every line once.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/routes_lib.sh"
# lines FILE N: N more routed lines (routes_lib.sh), numbered on from the file's.
lines() { routed_lines "$1" "$(cat "$1" 2>/dev/null | wc -l)" "$2"; }
# conf DIR EXTRA: three tables and the README's rules.
conf() {
	{
		routed_yaml "$1"
		echo "${2:-}"
		echo "lake: {warehouse: $1/wh}"
	} >"$1/floe.yaml.new"
	mv "$1/floe.yaml.new" "$1/floe.yaml"
}
# daemon DIR SED: the configuration edited by SED, 300 lines, and the agent running on
# them (stderr to DIR/err, its PID in $pid).
daemon() {
	mkdir -p "$1/logs"
	conf "$1"
	sed -i "$2" "$1/floe.yaml"
	lines "$1/logs/app.log" 300
	"$FLOE_BIN" run -c "$1/floe.yaml" 2>"$1/err" &
	pid=$!
	PIDS+=($pid)
}
count() { rows_sql "$1/wh/default/$2" "SELECT count(*) FROM t ${3:-}"; }
# wait_rows DIR TABLE N: until TABLE holds N rows (20 s at most; the commits come on their
# interval).
wait_rows() {
	local i
	for i in $(seq 1 200); do
		[ -d "$1/wh/default/$2/metadata" ] && [ "$(count "$1" "$2")" = "[\"$3\"]" ] && return 0
		sleep 0.1
	done
	return 1
}
# every_line_once DIR: the three tables' files together hold every line exactly once.
every_line_once() {
	for t in logs access security; do live_files "$1/wh/default/$t"; done >"$1/files"
	node "$READER/check_rows.js" "$1/files" "$1"/logs/*.log
}

d="$T/route"
mkdir -p "$d/logs"
lines "$d/logs/app.log" 3000
conf "$d"
check "floe check accepts three tables and route rules" "$FLOE_BIN" check -c "$d/floe.yaml"
check "run --once" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "access holds the 1000 access lines" test "$(count "$d" access)" = '["1000"]'
check "access holds nothing else" \
	test "$(count "$d" access "WHERE attrs['kind'] IS DISTINCT FROM 'access'")" = '["0"]'
check "security holds the 1000 sshd, sudo and login lines" test "$(count "$d" security)" = '["1000"]'
check "security holds nothing else" \
	test "$(count "$d" security "WHERE app NOT IN ('sshd', 'sudo', 'login')")" = '["0"]'
check "logs holds the 1000 others" test "$(count "$d" logs)" = '["1000"]'
check "logs holds cron's alone" test "$(count "$d" logs "WHERE app IS DISTINCT FROM 'cron'")" = '["0"]'
check "the tables together hold every line exactly once" every_line_once "$d"
tabmetric() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tables"][sys.argv[2]][sys.argv[3]])' "$d/state/metrics.json" "$1" "$2"; }
check "metrics.json counts each table's committed rows" \
	test "$(tabmetric logs rows_committed) $(tabmetric access rows_committed) $(tabmetric security rows_committed)" = "1000 1000 1000"
check "metrics.json counts each table's files and commits" \
	test "$(tabmetric access files_committed) $(tabmetric access commits)" = "1 1"
check "security keeps its snapshots a year" \
	grep -q '"history.expire.max-snapshot-age-ms" *: *"31536000000"' \
	"$(ls "$d"/wh/default/security/metadata/v*.metadata.json | sort -V | tail -1)"

# An unknown table: refused, with its name.
sed 's/table: security }/table: secure }/' "$d/floe.yaml" >"$d/bad.yaml"
rc=0
"$FLOE_BIN" check -c "$d/bad.yaml" >"$d/bad.out" 2>&1 || rc=$?
check "floe check refuses an unknown table (exit 2)" test $rc = 2
check "and names it, with the line" grep -q "bad.yaml:.*unknown table 'secure'" "$d/bad.out"

# A budget that cannot give each table a writer: refused, with what would do.
sed 's/^agent: {id: routes-test, /agent: {id: routes-test, memory_limit: 14MiB, /' "$d/floe.yaml" >"$d/small.yaml"
rc=0
"$FLOE_BIN" check -c "$d/small.yaml" >"$d/small.out" 2>&1 || rc=$?
check "floe check refuses a budget too small for three tables (exit 2)" test $rc = 2
check "and says what it holds and what would do" \
	grep -q "memory_limit': 14.0MiB holds 1 open Parquet writer.*3 raw tables need one each; raise agent.memory_limit to [0-9]*MiB" "$d/small.out"
check "floe check prints each table's writers" \
	test "$("$FLOE_BIN" check -c "$d/floe.yaml" 2>/dev/null | grep -c '^# table .*open writer')" = 3

# A crash between two tables' commits, and within a seal between two tables' entries:
# the restart commits what is left, and every line is in its table once.
for point in commit-between-tables seal-between-tables; do
	c="$T/$point"
	mkdir -p "$c/logs"
	lines "$c/logs/app.log" 3000
	conf "$c"
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" run -c "$c/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "$point: the first run dies at the crash point" test $rc = 99
	lines "$c/logs/app.log" 300 # more lines while the agent is down
	check "$point: the restart succeeds" "$FLOE_BIN" run -c "$c/floe.yaml" --once --log-level warn
	check "$point: access holds its 1100 lines" test "$(count "$c" access)" = '["1100"]'
	check "$point: security holds its 1100 lines" test "$(count "$c" security)" = '["1100"]'
	check "$point: logs holds its 1100 lines" test "$(count "$c" logs)" = '["1100"]'
	check "$point: every line exactly once" every_line_once "$c"
done

# A further table's spooled file damaged between its seal and its commit: rebuilt from
# the input, its own lines alone (the others are in their tables already).
c="$T/damaged"
mkdir -p "$c/logs"
lines "$c/logs/app.log" 3000
conf "$c"
rc=0
FLOE_CRASH_AT=seal-before-checkpoint "$FLOE_BIN" run -c "$c/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "damaged: the first run dies after the seal" test $rc = 99
damage "$(ls "$c"/state/tables/access/*.parquet)"
check "damaged: the restart succeeds" "$FLOE_BIN" run -c "$c/floe.yaml" --once --log-level warn
check "damaged: access holds its 1000 lines" test "$(count "$c" access)" = '["1000"]'
check "damaged: every line exactly once" every_line_once "$c"
check "damaged: counted as damaged and rebuilt, nothing lost" test \
	"$(metric "$c/state/metrics.json" spool_damaged) $(metric "$c/state/metrics.json" spool_reread_entries) $(metric "$c/state/metrics.json" spool_lost_rows)" = "1 1 0"

# Each table commits on its own commit_interval: access, at 1h, waits for the stop
# while logs commits every second.
c="$T/interval"
daemon "$c" 's/^  access: { partition_by: \[\], commit_interval: 1s }/  access: { partition_by: [], commit_interval: 1h }/'
check "interval: logs commits its 100 lines on its 1s interval" wait_rows "$c" logs 100
check "interval: security too" wait_rows "$c" security 100
check "interval: access, at 1h, has committed nothing yet" test "$(count "$c" access)" = '[]'
check "interval: SIGTERM ends the agent cleanly" stop_pid $pid
check "interval: the stop committed access's 100 lines" test "$(count "$c" access)" = '["100"]'

# A reload (SIGHUP) that adds a table: lines before it stay where they went, lines after
# it go to the new table, none is read twice or lost.
r="$T/reload"
daemon "$r" '/^  security:/d; s/, table: security }/, table: logs }/'
check "before the reload: access gets its 100 lines" wait_rows "$r" access 100
check "before the reload: logs gets the other 200" wait_rows "$r" logs 200
conf "$r"
kill -HUP $pid
check "SIGHUP: the configuration with a third table takes over" \
	log_has "$r/err" "SIGHUP: starting again with the new configuration" 1 $pid
lines "$r/logs/app.log" 300
check "after the reload: the new table gets its 100 lines" wait_rows "$r" security 100
check "after the reload: access gets 100 more" wait_rows "$r" access 200
check "after the reload: logs gets 100 more" wait_rows "$r" logs 300
# And one that removes a table: its rule goes, its lines go to logs.
conf "$r"
sed -i '/^  access:/d; /table: access }/d' "$r/floe.yaml"
kill -HUP $pid
check "SIGHUP: the configuration without access takes over" \
	log_has "$r/err" "SIGHUP: starting again with the new configuration" 2 $pid
lines "$r/logs/app.log" 300
check "after the second reload: security gets 100 more" wait_rows "$r" security 200
check "after the second reload: logs gets the access lines too" wait_rows "$r" logs 500
check "after the second reload: access has what it had" test "$(count "$r" access)" = '["200"]'
check "SIGTERM: the agent ends cleanly" stop_pid $pid
check "reload: every line exactly once" every_line_once "$r"
finish
