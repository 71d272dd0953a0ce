#!/usr/bin/env bash
# A single writer through a REST catalog loads its table whole once, not at every commit:
# the commit's answer carries an ETag (the OpenAPI document gives CommitTableResponse
# one), and floe's next load sends it in If-None-Match, so the catalog answers 304 while
# nobody else commits. A commit by someone else in between (a set-properties here) makes
# the next load a full one again, and floe commits on it. A catalog that sends no ETag
# with its commit answers still works: floe then loads the table whole every cycle.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/logs"
config() { # FILE STATE
	cat >"$1" <<YAML
agent: { id: edge-e, state_dir: $2 }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
}
round() { # LOG WHAT: appends lines, waits for floe's next commit
	for i in $(seq 1 20); do echo "$2 line $i"; done >>"$T/logs/a.log"
	commits=$((commits + 1))
	check "$2: committed" log_has "$1" "table: committed snapshot" "$commits" "$FLOE_PID"
}
start_floe() { # LOG
	"$FLOE_BIN" run -c "$T/floe.yaml" --log-level debug 2>"$1" &
	FLOE_PID=$!
	PIDS+=("$FLOE_PID")
	commits=0
}
TABLE='"path":"/v1/ws/namespaces/edge/tables/logs"'
full_loads() { grep -F "$TABLE" "$1/requests.log" | grep -c '"method":"GET".*"status":200' || true; }
not_modified() { grep -F "$TABLE" "$1/requests.log" | grep -c '"method":"GET".*"status":304' || true; }

# --- (1) a catalog that gives its commit answers an ETag ------------------------------------
start_rest_catalog "$T/cat"
config "$T/floe.yaml" "$T/state"
start_floe "$T/run.log"
for r in 1 2 3 4 5; do round "$T/run.log" "(1) round $r"; done
full=$(full_loads "$T/cat")
echo "# (1) 5 commits: $full full loads, $(not_modified "$T/cat") answered 304"
check "(1) the table was loaded whole at most twice in 5 commits (it was once a commit)" test "$full" -le 2
check "(1) the loads after floe's own commits were 304" test "$(not_modified "$T/cat")" -ge 4

# Someone else commits (a property set through the catalog): the next load is whole.
curl -sf -X POST "$REST_URL/v1/ws/namespaces/edge/tables/logs" -H 'Content-Type: application/json' \
	-d '{"requirements":[],"updates":[{"action":"set-properties","updates":{"owner":"ops"}}]}' >/dev/null
round "$T/run.log" "(1) after another writer's commit"
check "(1) that commit made floe load the table whole again" test "$(full_loads "$T/cat")" -gt "$full"
check "(1) floe stops cleanly" stop_pid "$FLOE_PID"
check "(1) no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "(1) DuckDB reads every line once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "(1) the other writer's property is kept" \
	bash -c "curl -sf '$REST_URL/v1/ws/namespaces/edge/tables/logs' | grep -q '\"owner\":\"ops\"'"
stop_pid "$REST_PID" || true

# --- (2) a catalog whose commit answers carry no ETag ---------------------------------------
rm -f "$T/logs/a.log"
start_rest_catalog "$T/cat2" --no-commit-etag yes
config "$T/floe.yaml" "$T/state2"
start_floe "$T/run2.log"
for r in 1 2 3; do round "$T/run2.log" "(2) round $r"; done
check "(2) floe stops cleanly" stop_pid "$FLOE_PID"
check "(2) without the ETag each cycle after a commit loads the table whole" test "$(full_loads "$T/cat2")" -ge 2
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect2"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect2" >"$T/files2"
check "(2) DuckDB reads every line once" node "$READER/check_rows.js" "$T/files2" "$T/logs/a.log"
stop_pid "$REST_PID" || true
finish
