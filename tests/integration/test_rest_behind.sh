#!/usr/bin/env bash
# A table of a REST catalog behind this agent's record of its commits: the catalog is
# restored from a backup taken before the agent's last commit (catalog.json put back, the
# server told to read it again). floe check names the table BEHIND; floe run starts,
# reads on, holds that table's commits back (counted in table_behind, not as failing
# commits) and commits by itself once the newer catalog state is back: every line is then
# in the table exactly once (DuckDB over the live files).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh" # wait_for

start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
for i in $(seq 1 30); do echo "first $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-behind, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
m() { metric "$T/state/metrics.json" "$1"; }
committed() { [ -f "$T/state/metrics.json" ] && [ "$(m rows_committed)" = "$1" ]; }
is() { [ -f "$T/state/metrics.json" ] && [ "$(m "$1")" "$2" "$3" ]; }
reload() { curl -sf -X POST -H 'content-type: application/json' -d '{}' "$REST_URL/_test/reload" >/dev/null; }
start() {
	"$FLOE_BIN" run -c "$T/floe.yaml" --log-level info 2>>"$T/run.log" &
	pid=$!
	PIDS+=("$pid")
}

start
check "the first lines are committed" wait_for 60 committed 30
cp "$T/cat/catalog.json" "$T/backup.json"
for i in $(seq 1 30); do echo "second $i"; done >>"$T/logs/a.log"
check "the next lines are committed after the backup" wait_for 60 committed 60
check "the agent stops" stop_pid "$pid"

# The catalog restored from the backup: its table's current metadata lacks the last commit.
cp "$T/cat/catalog.json" "$T/newer.json"
cp "$T/backup.json" "$T/cat/catalog.json"
reload
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >"$T/check" 2>&1 || rc=$?
check "floe check names the table behind (exit $rc)" \
	grep -q "^# table logs: BEHIND this agent: .*committed up to commit-seq 2 .*holds its commits up to commit-seq 1" "$T/check"

start
for i in $(seq 1 30); do echo "third $i"; done >>"$T/logs/a.log"
check "the agent starts and says the table is behind it" wait_log "$T/run.log" "logs.* is behind this agent" 30
check "metrics.json counts the table behind" wait_for 20 is table_behind = 1
check "its rows wait in the spool" wait_for 20 is spool_entries -gt 0
check "it runs" kill -0 "$pid"
check "a table held back is not a failing commit at every cycle" test "$(m commit_failures)" = 0

cp "$T/newer.json" "$T/cat/catalog.json"
reload
check "restored, the table is no longer behind" wait_log "$T/run.log" "logs.* is no longer behind" 30
check "and the spool drains into it" wait_for 60 is spool_entries = 0
check "metrics.json counts no table behind" is table_behind = 0
check "the agent stops" stop_pid "$pid"
check "the table was named behind once" test "$(grep -c "is behind this agent" "$T/run.log")" = 1
"$FLOE_BIN" inspect -c "$T/floe.yaml" 2>/dev/null | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$T/files"
check "DuckDB reads every line exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
