#!/usr/bin/env bash
# A reload that removes a table whose spool still holds entries (its store was away, so
# the reload's last commit could not take them): the entries stay in its spool
# directory and are committed when the table comes back, and until then the agent says
# so at every start (the directory, its entries and bytes), shows them in
# spool_left_entries and spool_left_bytes (metrics.json and /metrics), and floe check
# names them; no line is lost or committed twice across the removal and the return.
source "$(dirname "$0")/lib.sh"

d="$T/left"
mkdir -p "$d/logs" "$d/state"

# conf WITH_ACCESS: the configuration, with the access table and its route or without.
conf() {
	{
		echo "agent: { id: left, state_dir: $d/state, http: { listen: \"127.0.0.1:0\" } }"
		echo "inputs:"
		echo "  - type: tail"
		echo "    paths: [\"$d/logs/*.log\"]"
		echo "    start_at: beginning"
		echo "    parser: logfmt"
		[ "$1" = 1 ] && echo "    route: [{ field: kind, equals: access, table: access }]"
		echo "tables:"
		echo "  logs: { commit_interval: 1s }"
		[ "$1" = 1 ] && echo "  access: { commit_interval: 1s }"
		echo "lake: { warehouse: $d/wh }"
	} >"$d/floe.yaml"
}

# lines FROM TO: one access and one other line for each n.
lines() {
	local i
	for i in $(seq "$1" "$2"); do
		echo "kind=access n=$i"
		echo "kind=other n=$i"
	done >>"$d/logs/a.log"
}

rows() {
	"$FLOE_BIN" inspect "$d/wh/default/$1" 2>/dev/null | sed -n 's#^live files=[0-9]* records=\([0-9]*\).*#\1#p'
}

# wait_rows TABLE N: until TABLE holds N rows, at most 20 s.
wait_rows() {
	local i
	for i in $(seq 1 200); do
		[ "$(rows "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

# entries_in DIR: whole spool entries in DIR.
entries_in() {
	find "$1" -maxdepth 1 -name '*.entry' | wc -l
}

conf 1
lines 1 50
run_serving "$d/floe.yaml" "$d/err"
check "the agent serves" test -n "$port"
check "access gets its 50 lines" wait_rows access 50
check "logs gets the other 50" wait_rows logs 50

# The warehouse goes away (as a mount that went down): both tables' rows wait.
mv "$d/wh" "$d/wh.away"
lines 51 100
check "access's new lines are sealed into its spool" \
	bash -c "for i in \$(seq 1 200); do [ \$(find '$d/state/tables/access' -name '*.entry' | wc -l) -ge 1 ] && exit 0; sleep 0.1; done; exit 1"

# Reload without access: its entries cannot be committed at the takeover.
conf 0
kill -HUP $pid
check "the configuration without access takes over" \
	log_has "$d/err" "SIGHUP: starting again with the new configuration" 1 $pid
check "access's entries stay in its spool" test "$(entries_in "$d/state/tables/access")" -ge 1
check "said at the start, naming the table and its spool" \
	log_has "$d/err" "is the spool of the table access, which this configuration does not name"
check "/metrics shows them (floe_spool_left_entries)" \
	bash -c "curl -s 'http://127.0.0.1:$port/metrics' | grep -q '^floe_spool_left_entries [1-9]'"
check "/metrics shows their bytes" \
	bash -c "curl -s 'http://127.0.0.1:$port/metrics' | grep -q '^floe_spool_left_bytes [1-9]'"
check "metrics.json shows them" test "$(metric "$d/state/metrics.json" spool_left_entries)" -ge 1
check "floe check names them" \
	bash -c "'$FLOE_BIN' check -c '$d/floe.yaml' 2>/dev/null | grep -q '^# table access: not in this configuration, but its spool .* holds [1-9]'"

# The warehouse comes back: logs commits; access's entries wait for their table.
mv "$d/wh.away" "$d/wh"
lines 101 110
check "logs commits its lines and the routed-no-more access lines" wait_rows logs 120
check "access holds what it had" test "$(rows access)" = 50

# access configured again: its spool is committed, once.
conf 1
kill -HUP $pid
check "the configuration with access takes over" \
	log_has "$d/err" "SIGHUP: starting again with the new configuration" 2 $pid
check "access gets the lines its spool kept" wait_rows access 100
check "/metrics shows none left" prom_is "floe_spool_left_entries 0"
check "the agent stops cleanly" stop_pid "$pid"
check "metrics.json shows none left" test "$(metric "$d/state/metrics.json" spool_left_entries)" = 0
check "floe check names none" \
	bash -c "! '$FLOE_BIN' check -c '$d/floe.yaml' 2>/dev/null | grep -q 'not in this configuration'"
# Every line once: 110 access lines were written, 60 other ones went to logs with the
# 10 access lines read while access was not configured.
files=$(for t in access logs; do live_files "$d/wh/default/$t"; done | sed "s/.*/'&'/" | paste -sd,)
check "every line once over the two tables" test "$(duck "SELECT count(*) = 220 AND count(DISTINCT message) = 220 FROM read_parquet([$files])")" = '[true]'
finish
