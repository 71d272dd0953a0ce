#!/usr/bin/env bash
# Commits through the REST catalog whose outcome floe cannot see: the catalog applies the
# commit and then answers 503 or 502, or cuts the connection without an answer; or cuts
# it before applying. Each time floe reloads the table and looks for its snapshot (by id
# and floe.commit-seq) before anything else: no commit lands twice, none is lost, and
# every line is in the table exactly once. A commit the catalog never answers does not
# hold a stop. The catalog's OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --client-id c1 --client-secret sec
mkdir -p "$T/logs"
printf 'c1:sec\n' >"$T/cred"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-1, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge, credential: "file:$T/cred" }
YAML
round() { # N: appends lines of round N and runs floe once
	for i in $(seq 1 40); do echo "round $1 line $i"; done >>"$T/logs/a.log"
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level info 2>"$T/run$1.log"
}
fault() { curl -s -X POST "$REST_URL/_test/faults" -d "$1" >/dev/null; }

check "round 1: a plain commit" round 1
fault '{"fail_after_apply":1,"status":503}'
check "round 2: the commit is applied, then answered 503: floe succeeds" round 2
check "... after seeing that it may have landed" grep -q "may or may not have landed" "$T/run2.log"
check "... and finding it there (no second commit)" \
	test "$(grep -c 'POST","path":"/v1/ws/namespaces/edge/tables/logs"' "$T/cat/requests.log")" = 2
fault '{"fail_after_apply":1,"status":502}'
check "round 3: applied, then answered 502" round 3
fault '{"cut_after_apply":1}'
check "round 4: applied, then the connection cut without an answer" round 4
check "... seen as an unknown outcome" grep -q "may or may not have landed" "$T/run4.log"
fault '{"cut_before_apply":1}'
check "round 5: the connection cut before the commit was applied: committed again" round 5

# A catalog that never answers a commit: a stop still ends floe within its grace (the
# request is cut 2 s after SIGTERM; stop_pid gives 10 s before SIGKILL), the spool keeps
# the rows, and the next run commits them.
fault '{"stall":1}'
for i in $(seq 1 40); do echo "round 6 line $i"; done >>"$T/logs/a.log"
sed 's/^inputs:/tables:\n  logs: { commit_interval: 1s }\ninputs:/' "$T/floe.yaml" >"$T/floe-run.yaml"
"$FLOE_BIN" run -c "$T/floe-run.yaml" --log-level info 2>"$T/run6.log" &
FLOE_PID=$!
PIDS+=("$FLOE_PID")
check "round 6: the commit went out and the catalog holds it unanswered" \
	log_has "$T/cat/requests.log" '"path":"/v1/ws/namespaces/edge/tables/logs","status":-1' 1 "$FLOE_PID"
stopped=0
stop_pid "$FLOE_PID" || stopped=$?
check "... SIGTERM ends floe all the same (not killed: $stopped)" test "$stopped" != 124
check "round 7 commits (with the rows of round 6, if the stop left them in the spool)" round 7
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect"
# Round 6's rows land in the commit floe makes as it stops (once the stalled request was
# cut), or with round 7's: 6 or 7 snapshots, and either way every line once (below).
n=$(sed -n 's/^snapshots //p' "$T/inspect")
check "$n snapshots, one per commit: none twice, none lost" test "$n" = 6 -o "$n" = 7
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "iceberg-js sees the same $n snapshots" \
	node "$R/check_floe.mjs" "$REST_URL" c1 sec edge logs "$n" "$(wc -l <"$T/logs/a.log")"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
