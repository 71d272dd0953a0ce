#!/usr/bin/env bash
# floe maintain looks after every table of the configuration: the logs table, a routed
# table (access, unpartitioned: its files are closed by their newest ts) and an
# aggregation's table (closed by window_end), each by its own settings.
# The tables and lines are routes_lib.sh's three_yaml and three_lines.
# (1) After many tiny commits of a closed day, one maintain compacts each table: the
#     file count drops in each, every row stays exactly once (EXCEPT ALL both ways), and
#     state_dir/maintain/metrics.json records each table's figures, which the agent's
#     metrics.json and /metrics show (labelled table="...").
# (2) --table NAME maintains that table only; an unknown name is a usage error (2).
# (3) A table that fails (its metadata damaged) is reported, recorded as failed, and
#     does not stop the others; the exit status is 1.
# (4) maintain killed at each crash point in turn, in the second table and in the third,
#     leaves every table readable and exact; a run after compacts what is left.
# (5) maintain over every table killed -9 at random moments (MAINT_TABLES_KILLS, 6 by
#     default), new small files committed before each run: every table stays exact.
source "$(dirname "$0")/lib.sh"
COMMITS=${MAINT_TABLES_COMMITS:-12}

source "$(dirname "$0")/routes_lib.sh"
gen() { three_lines "$@"; }
conf() { three_yaml "$1" "{warehouse: $1/wh}"; }

TABLES="logs access apps"
files() { live_files "$1/wh/default/$2" | wc -l; }
rows() { rows_sql "$1/wh/default/$2" "SELECT count(*) FROM t"; }
# digest DIR TABLE: the table's row count and a digest of every value of its live rows.
digest() {
	local files
	files=$(live_list "$1/wh/default/$2")
	duck "SELECT count(*), sum(hash(columns(*)))::VARCHAR FROM read_parquet([$files])" 2>/dev/null ||
		duck "SELECT count(*) FROM read_parquet([$files])"
}
# same_rows DIR TAG: every table holds the rows it held at remember TAG.
same_rows() {
	local t
	for t in $TABLES; do
		[ "$(digest "$1" "$t")" = "$(cat "$1/$2.$t")" ] || { echo "table $t differs"; return 1; }
	done
}
remember() { local t; for t in $TABLES; do digest "$1" "$t" >"$1/$2.$t"; done; }

# commits DIR: COMMITS runs of --once, each a few lines more.
commits() {
	local i failed=0
	for i in $(seq 0 $((COMMITS - 1))); do
		gen "$1/logs/a.log" $((i * 60)) 60
		"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level error || failed=$((failed + 1))
	done
	test "$failed" = 0
}

# ---- (1) every table compacted ----
d="$T/all"
mkdir -p "$d/logs"
conf "$d"
check "$COMMITS tiny commits into three tables" commits "$d"
for t in $TABLES; do echo "# $t: $(files "$d" "$t") files, $(rows "$d" "$t") rows before"; done
for t in $TABLES; do
	check "$t has a small file per commit" test "$(files "$d" "$t")" -ge "$COMMITS"
done
remember "$d" before
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>"$d/err" || rc=$?
cat "$d/out" | sed 's/^/# /'
check "maintain succeeds (exit 0)" test "$rc" = 0
for t in $TABLES; do
	check "$t: maintain says what it did" grep -q "^$t: compacted 1 partitions: [0-9]* files" "$d/out"
	check "$t: the file count dropped ($(files "$d" "$t"))" test "$(files "$d" "$t")" -le 2
done
check "every table holds the same rows, exactly once" same_rows "$d" before
rec="$d/state/maintain/metrics.json"
check "maintain recorded its run" test -s "$rec"
check "the record holds each table's figures" python3 - "$rec" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = m["tables"]
assert set(t) == {"logs", "access", "apps"}, t
for name, v in t.items():
    assert v["failed"] == 0 and v["files_rewritten"] >= 12 and v["files_written"] >= 1, (name, v)
    assert v["bytes_rewritten"] > 0 and v["replace_commits"] >= 1 and "error" not in v, (name, v)
PY
# The agent of this state_dir shows the record.
gen "$d/logs/a.log" 900000 3
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error
check "the agent's metrics.json holds the record" python3 - "$d/state/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
assert m["maintain"]["tables"]["access"]["files_rewritten"] >= 12, m.get("maintain")
assert "lines" in m and "inputs" in m
PY
"$FLOE_BIN" status -c "$d/floe.yaml" >"$d/status" || true
check "floe status shows the last maintain run" grep -q "^maintain: last run ended [0-9]* s ago, over 3 tables" "$d/status"
check "... with a line per table" grep -q "^maintain access: [1-9][0-9]* files ([0-9]* bytes) rewritten into 1 " "$d/status"
sed -i "s#^agent: {id: three-tables, state_dir: \(.*\)}#agent: {id: three-tables, state_dir: \1, http: {listen: \"127.0.0.1:0\"}}#" "$d/floe.yaml"
run_serving "$d/floe.yaml" "$d/serve.log"
if [ -n "$port" ]; then
	curl -s "http://127.0.0.1:$port/metrics" >"$d/prom"
	check "/metrics shows maintain's figures by table" grep -q '^floe_maintain_files_rewritten{table="apps"} [1-9]' "$d/prom"
	check "/metrics shows when maintain ran" grep -q '^floe_maintain_last_run_timestamp_seconds [1-9]' "$d/prom"
	check "/metrics shows no failure" grep -q '^floe_maintain_failed{table="logs"} 0$' "$d/prom"
else
	fail "the agent serves /metrics"
fi
stop_pid "$pid" 30
sed -i 's#, http: {listen: "127.0.0.1:0"}}#}#' "$d/floe.yaml"

# ---- (2) --table ----
d="$T/one"
mkdir -p "$d/logs"
conf "$d"
commits "$d"
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" --table access >"$d/out" 2>"$d/err" || rc=$?
check "--table access succeeds" test "$rc" = 0
check "--table access maintains access" test "$(files "$d" access)" -le 2
check "--table access leaves logs" test "$(files "$d" logs)" -ge "$COMMITS"
check "--table access leaves apps" test "$(files "$d" apps)" -ge "$COMMITS"
check "only access is reported" test "$(cut -d: -f1 "$d/out" | tr '\n' ' ')" = "access "
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" --table nosuch >/dev/null 2>"$d/err" || rc=$?
check "--table with an unknown name is a usage error (2)" test "$rc" = 2
check "... which names the tables there are" grep -q "logs access apps" "$d/err"

# ---- (3) one table fails, the others are maintained ----
meta=$(newest_metadata "$d/wh/default/logs")
cp "$meta" "$d/meta.saved"
echo '{"format-version": 2, "broken' >"$meta"
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>"$d/err" || rc=$?
check "a failing table makes the exit status 1" test "$rc" = 1
check "the failure names the table" grep -q "table logs" "$d/err"
check "apps is maintained all the same" test "$(files "$d" apps)" -le 2
check "the record says logs failed and why" python3 - "$d/state/maintain/metrics.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tables"]
assert t["logs"]["failed"] == 1 and t["logs"]["error"], t["logs"]
assert t["apps"]["failed"] == 0 and t["apps"]["files_rewritten"] >= 12, t["apps"]
PY
"$FLOE_BIN" status -c "$d/floe.yaml" >"$d/status" || true
check "floe status names the table maintain failed on, and why" grep -q "^maintain logs: FAILED: ." "$d/status"
cp "$d/meta.saved" "$meta"
check "with its metadata back, logs is maintained" "$FLOE_BIN" maintain -c "$d/floe.yaml" --table logs
check "... and compacted" test "$(files "$d" logs)" -le 2

# ---- (4) maintain killed in the middle of the tables ----
for point in maintain-after-output maintain-before-replace replace-after-manifest; do
	for nth in 2 3; do
		d="$T/kill-$point-$nth"
		mkdir -p "$d/logs"
		conf "$d"
		commits "$d"
		remember "$d" before
		# The tables before the nth are compacted first, so that a run over all of them
		# passes them with nothing to write and dies at the point in the nth.
		rc=0
		for t in $(echo $TABLES | cut -d' ' -f1-$((nth - 1))); do
			"$FLOE_BIN" maintain -c "$d/floe.yaml" --table "$t" >/dev/null 2>&1 || rc=$?
		done
		nthname=$(echo $TABLES | cut -d' ' -f$nth)
		FLOE_CRASH_AT=$point "$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>&1 || rc=$?
		check "$point in table $nthname: maintain died there" test "$rc" = 99
		check "$point in table $nthname: every table readable and exact" same_rows "$d" before
		check "$point in table $nthname: a run after succeeds" "$FLOE_BIN" maintain -c "$d/floe.yaml"
		check "$point in table $nthname: and every table is compacted and exact" \
			bash -c "for t in $TABLES; do test \$(live_files '$d/wh/default/'\$t | wc -l) -le 2 || exit 1; done"
		check "$point in table $nthname: rows still exact" same_rows "$d" before
	done
done

# ---- (5) kill -9 of a run over every table, at random moments ----
d="$T/kill9"
mkdir -p "$d/logs"
conf "$d"
bad=0
for k in $(seq 1 "${MAINT_TABLES_KILLS:-6}"); do
	commits "$d" || bad=$((bad + 1))
	remember "$d" before
	# Any point of the run, in any table.
	kill_at_random 6 "$FLOE_BIN" maintain -c "$d/floe.yaml"
	same_rows "$d" before || { echo "# not exact after kill $k"; bad=$((bad + 1)); }
done
check "after each kill -9 every table is readable and exact" test "$bad" = 0
check "a run after the kills succeeds" "$FLOE_BIN" maintain -c "$d/floe.yaml"
check "and every table is exact" same_rows "$d" before
finish
