#!/usr/bin/env bash
# A table found behind the agent's record of its commits lost commits (its newest
# metadata deleted, or the table restored from an older copy): every table is checked,
# not the logs table only. For a routed table (access) and an aggregation's table (apps),
# each in turn set back one commit: the agent refuses to start, names the table, and
# commits nothing to any table; with the metadata restored it goes on and every line is
# in its table once. A table made anew (all its metadata gone: another table-uuid, with
# lake.recreate_tables allowing it) is no loss: the agent goes on.
source "$(dirname "$0")/lib.sh"

source "$(dirname "$0")/routes_lib.sh"
gen() { three_lines "$@"; }
conf() { three_yaml "$1" "{warehouse: $1/wh}"; }

# versions DIR: every table's newest metadata version, one line.
versions() {
	local t
	for t in logs access apps; do basename "$(newest_metadata "$1/wh/default/$t")"; done | paste -sd' '
}

# setup DIR: two runs, each committing to every table.
setup() {
	mkdir -p "$1/logs"
	conf "$1"
	gen "$1/logs/a.log" 0 30
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level error || return 1
	gen "$1/logs/a.log" 30 30
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level error
}

# every_line_once DIR: logs and access hold every line once, and the apps table counted
# every line once (its windows' counts add up to the lines).
every_line_once() {
	local d=$1 t
	for t in logs access; do live_files "$d/wh/default/$t"; done >"$d/files"
	node "$READER/check_rows.js" "$d/files" "$d/logs/a.log" >/dev/null || return 1
	test "$(rows_sql "$d/wh/default/apps" "SELECT sum(count) FROM t")" = "[\"$(wc -l <"$d/logs/a.log")\"]"
}

for table in access apps; do
	d="$T/$table"
	check "$table: two runs commit to every table" setup "$d"
	meta="$d/wh/default/$table/metadata"
	newest=$(newest_metadata "$d/wh/default/$table")
	n=$(basename "$newest" | sed 's/^v\([0-9]*\)\..*/\1/')
	# Restored from a copy made before the last commit: the newest version gone, the
	# hint naming the one before.
	mv "$newest" "$d/newest.saved"
	echo $((n - 1)) >"$meta/version-hint.text"
	gen "$d/logs/a.log" 60 30
	before=$(versions "$d")
	rc=0
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
	check "$table: the agent refuses to start (exit $rc)" test "$rc" != 0
	check "$table: saying the table is behind it" \
		grep -q "$table.* is behind this agent: installation .* committed up to commit-seq 2 .* holds its commits up to commit-seq 1" "$d/err"
	check "$table: and commits nothing to any table" test "$(versions "$d")" = "$before"
	mv "$d/newest.saved" "$newest"
	echo "$n" >"$meta/version-hint.text"
	check "$table: restored, the agent goes on" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	check "$table: every line in its table once" every_line_once "$d"
done

# A table made anew: all of access's metadata gone, the agent makes it again (as the
# operator allows: a missing table is otherwise waited for) and goes on.
d="$T/anew"
check "anew: two runs commit to every table" setup "$d"
rm -rf "$d/wh/default/access"
sed -i "s#^lake: {warehouse: \([^}]*\)}#lake: {warehouse: \1, recreate_tables: true}#" "$d/floe.yaml"
check "anew: the configuration allows a new table" grep -q "recreate_tables: true" "$d/floe.yaml"
gen "$d/logs/a.log" 60 30
check "anew: a table made anew is no loss: the agent goes on" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "anew: the new access table holds the lines read since" \
	test "$(rows_sql "$d/wh/default/access" "SELECT count(*) FROM t")" = '["10"]'
finish
