#!/usr/bin/env bash
# A table found behind the agent's record of its commits lost commits (its newest
# metadata deleted, or the table restored from an older copy): every table is checked,
# not the logs table only. For the logs table, a routed table (access) and an
# aggregation's table (apps), each in turn set back one commit while the agent is
# stopped: the agent starts all the same, reads on and commits the other tables; the
# behind one waits in its spool, is named once in the log and counted in the table_behind
# gauge, and commits again by itself once its metadata is restored: every line is then in
# its table once. A table another engine expired the snapshots of (without floe's
# floe.committed-seq property) moved on, and is not behind: the agent commits on. A
# table made anew (all its metadata gone: another table-uuid, with lake.recreate_tables
# allowing it) is no loss: the agent goes on. A history that went backwards (a stray
# metadata file) holds back only its table the same way.
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

# every_line_once_now DIR: every_line_once, quietly (polled while the agent runs).
every_line_once_now() { every_line_once "$1" 2>/dev/null; }

# until_true SECONDS CMD...: polls CMD (each 0.2 s) until it succeeds, at most SECONDS.
until_true() {
	local n=$(($1 * 5)) i
	shift
	for i in $(seq 1 "$n"); do "$@" && return 0; sleep 0.2; done
	"$@"
}

# holds DIR TABLE N: TABLE holds N rows (apps: its counts add up to N).
holds() {
	local sql="SELECT count(*) FROM t"
	[ "$2" != apps ] || sql="SELECT sum(count) FROM t"
	test "$(rows_sql "$1/wh/default/$2" "$sql" 2>/dev/null)" = "[\"$3\"]"
}

# every_second DIR: every table of DIR/floe.yaml commits each second (a running agent).
every_second() {
	sed -i 's/^  logs: {}/  logs: { commit_interval: 1s }/; s/^  access: { partition_by: \[\] }/  access: { partition_by: [], commit_interval: 1s }/' "$1/floe.yaml"
}

# start_agent DIR: floe run on DIR/floe.yaml in the background (log in DIR/err, PID in
# $pid, stopped at exit), once the lines 60 to 89 are appended.
start_agent() {
	gen "$1/logs/a.log" 60 30
	"$FLOE_BIN" run -c "$1/floe.yaml" --log-level info 2>"$1/err" &
	pid=$!
	PIDS+=("$pid")
}

# newest_version TABLE-DIR: the number of the table's newest metadata version.
newest_version() {
	basename "$(newest_metadata "$1")" | sed 's/^v\([0-9]*\)\..*/\1/'
}

for table in logs access apps; do
	d="$T/$table"
	check "$table: two runs commit to every table" setup "$d"
	every_second "$d"
	meta="$d/wh/default/$table/metadata"
	newest=$(newest_metadata "$d/wh/default/$table")
	n=$(newest_version "$d/wh/default/$table")
	# Restored from a copy made before the last commit: the newest version gone, the
	# hint naming the one before.
	mv "$newest" "$d/newest.saved"
	echo $((n - 1)) >"$meta/version-hint.text"
	start_agent "$d"
	check "$table: the agent starts and says the table is behind it" \
		wait_log "$d/err" "$table.* is behind this agent: installation .* committed up to commit-seq 2 .* holds its commits up to commit-seq 1" 30
	check "$table: only that table's commits wait" grep -q "Only this table's commits wait" "$d/err"
	# access holds a third of the lines, logs the rest, and apps counts every line.
	others=0
	for t in logs access apps; do
		[ "$t" != "$table" ] || continue
		want=90
		[ "$t" != logs ] || want=60
		[ "$t" != access ] || want=30
		until_true 30 holds "$d" "$t" "$want" || others="$t"
	done
	check "$table: the agent reads on and commits the other tables ($others)" test "$others" = 0
	check "$table: it runs" kill -0 "$pid"
	check "$table: metrics.json counts the table behind" \
		until_true 10 test "$(metric "$d/state/metrics.json" table_behind)" = 1
	check "$table: metrics.json counts the entries waiting in its spool" \
		until_true 10 test "$(metric "$d/state/metrics.json" spool_entries)" -gt 0
	check "$table: a table held back is not a failing commit at every cycle" \
		test "$(metric "$d/state/metrics.json" commit_failures)" = 0
	rc=0
	"$FLOE_BIN" status -c "$d/floe.yaml" >"$d/status" || rc=$?
	check "$table: floe status names the table behind (exit $rc)" \
		grep -q "^table $table: BEHIND this agent's record of its commits" "$d/status"
	check "$table: and says the agent is unhealthy" grep -q "^health: unhealthy: 1 tables are behind" "$d/status"
	"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check" 2>&1 || true
	check "$table: floe check names it, with what was lost" \
		grep -q "^# table $table: BEHIND this agent: .*committed up to commit-seq 2 .*holds its commits up to commit-seq 1" "$d/check"
	mv "$d/newest.saved" "$newest"
	echo "$n" >"$meta/version-hint.text"
	check "$table: restored, the table is no longer behind" wait_log "$d/err" "$table.* is no longer behind" 30
	check "$table: and every line is in its table once" until_true 30 every_line_once_now "$d"
	check "$table: the table was named behind once, though read again at every commit" \
		test "$(grep -c "is behind this agent" "$d/err")" = 1
	check "$table: the agent stops cleanly" stop_pid "$pid"
	check "$table: metrics.json counts no table behind" test "$(metric "$d/state/metrics.json" table_behind)" = 0
	check "$table: every line in its table once, after the stop" every_line_once "$d"
done

# A history that went backwards in access (a stray copy of an older version past a
# missing one, which readers that probe take for the current version) holds back only
# access too: the agent starts, commits logs and apps, and access commits once the stray
# file is moved aside.
d="$T/stray"
check "stray: two runs commit to every table" setup "$d"
every_second "$d"
meta="$d/wh/default/access/metadata"
n=$(newest_version "$d/wh/default/access")
cp "$meta/v1.metadata.json" "$meta/v$((n + 2)).metadata.json"
start_agent "$d"
check "stray: the agent starts and names the stray file" \
	wait_log "$d/err" "table access: .*v$((n + 2)).metadata.json exists but v$((n + 1)).metadata.json does not.*Only this table's commits wait" 30
check "stray: the other tables commit" until_true 30 holds "$d" logs 60
check "stray: apps too" until_true 30 holds "$d" apps 90
check "stray: metrics.json counts the table" \
	until_true 10 test "$(metric "$d/state/metrics.json" table_behind)" = 1
mv "$meta/v$((n + 2)).metadata.json" "$d/stray.saved"
check "stray: moved aside, access commits again" wait_log "$d/err" "table access at .* is no longer behind" 30
check "stray: every line is in its table once" until_true 30 every_line_once_now "$d"
check "stray: the agent stops cleanly" stop_pid "$pid"

# other_engine_expiry TABLE-DIR: what Spark's expire_snapshots does after another
# engine's commit: a new snapshot (no floe keys) on the current one, the snapshots before
# it expired, and no floe.committed-seq property kept, in a new metadata version.
other_engine_expiry() {
	python3 - "$1" <<'PY'
import json, os, sys
d = sys.argv[1] + "/metadata"
n = int(open(d + "/version-hint.text").read().strip())
m = json.load(open("%s/v%d.metadata.json" % (d, n)))
cur = next(s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"])
seq = m["last-sequence-number"] + 1
ts = m["last-updated-ms"] + 1
snap = {"snapshot-id": cur["snapshot-id"] + 1, "parent-snapshot-id": cur["snapshot-id"],
        "sequence-number": seq, "timestamp-ms": ts, "manifest-list": cur["manifest-list"],
        "summary": {"operation": "replace", "engine-name": "other"}, "schema-id": cur.get("schema-id", 0)}
m["snapshots"] = [snap]
m["current-snapshot-id"] = snap["snapshot-id"]
m["refs"] = {"main": {"snapshot-id": snap["snapshot-id"], "type": "branch"}}
m["snapshot-log"] = [{"timestamp-ms": ts, "snapshot-id": snap["snapshot-id"]}]
m["last-sequence-number"] = seq
m["last-updated-ms"] = ts
m["metadata-log"] = m.get("metadata-log", []) + [
    {"timestamp-ms": ts, "metadata-file": "%s/metadata/v%d.metadata.json" % (m["location"], n)}]
m["properties"] = {k: v for k, v in m["properties"].items() if not k.startswith("floe.committed-seq.")}
with open("%s/v%d.metadata.json" % (d, n + 1), "x") as f:
    json.dump(m, f)
with open(d + "/version-hint.text", "w") as f:
    f.write("%d" % (n + 1))
PY
}

# Each table expired by another engine in turn (the agent stopped): not behind.
d="$T/expired"
check "expired: two runs commit to every table" setup "$d"
for t in logs access apps; do
	check "expired: another engine expires $t's snapshots" other_engine_expiry "$d/wh/default/$t"
	check "expired: floe's commit-seqs are gone from $t" \
		bash -c "! grep -q 'floe.commit-seq\|floe.committed-seq' '$(newest_metadata "$d/wh/default/$t")'"
done
gen "$d/logs/a.log" 60 30
check "expired: the agent commits on" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
check "expired: no table is taken for behind" bash -c "! grep -q 'behind this agent' '$d/err'"
check "expired: every line in its table once" every_line_once "$d"
gen "$d/logs/a.log" 90 30
check "expired: and again" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "expired: every line in its table once, again" every_line_once "$d"

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
