#!/usr/bin/env bash
# The REST catalog down (stopped by PID) for a while under a running floe: lines keep
# being read and sealed into the spool, which holds them; when the catalog is back (on
# the same state and port) everything lands, in order (commit-seqs increase along one
# line of history) and exactly once (DuckDB over the live files). REST_OUTAGE_S sizes the
# outage (default 20 s; the 10 minutes of a long run: REST_OUTAGE_S=600).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh" # wait_for
OUTAGE=${REST_OUTAGE_S:-20}
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat"
port=${REST_URL##*:}
mkdir -p "$T/logs"
for i in $(seq 1 100); do echo "before the outage $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-out, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
"$FLOE_BIN" run -c "$T/floe.yaml" --log-level info 2>"$T/run.log" &
pid=$!
PIDS+=("$pid")
commits() { grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":200' "$T/cat/requests.log"; }
commits_reach() { [ "$(commits)" -ge "$1" ]; }
m() { metric "$T/state/metrics.json" "$1"; }
spooled() { [ -f "$T/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ]; }
drained() { [ -f "$T/state/metrics.json" ] && [ "$(m spool_bytes)" = 0 ] && [ "$(m rows_committed)" = "$1" ]; }
check "the first lines land" wait_for 60 commits_reach 1

stop_pid "$REST_PID" || true
start=$(date +%s)
b=0
# The outage lasts OUTAGE seconds: a batch of lines every 2 s meanwhile.
while [ $(($(date +%s) - start)) -lt "$OUTAGE" ]; do
	b=$((b + 1))
	for i in $(seq 1 20); do echo "outage batch $b line $i"; done >>"$T/logs/a.log"
	sleep 2
done
check "the spool holds what was read during the outage" spooled
check "the agent is still running" kill -0 "$pid"
echo "  outage of ${OUTAGE} s: $b batches, $(m spool_bytes) spool bytes held, $(commits) commits"

node "$R/server.js" --port "$port" --root "$T/cat" >"$T/cat/server2.out" 2>&1 &
REST_PID=$!
PIDS+=("$REST_PID")
wait_log "$T/cat/server2.out" "^listening " 30
rows=$(wc -l <"$T/logs/a.log")
check "back: everything lands and the spool drains" wait_for 120 drained "$rows"
stop_pid "$pid" || true
"$FLOE_BIN" inspect -c "$T/floe.yaml" 2>/dev/null | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$T/files"
check "DuckDB reads every line exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
curl -sf "$REST_URL/v1/ws/namespaces/edge/tables/logs" >"$T/table.json"
check "in order: one line of history whose commit-seqs increase" python3 - "$T/table.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
snaps = sorted(m["snapshots"], key=lambda s: s["sequence-number"])
for a, b in zip(snaps, snaps[1:]):
    assert b.get("parent-snapshot-id") == a["snapshot-id"], "history forks"
    assert int(b["summary"]["floe.commit-seq"]) > int(a["summary"]["floe.commit-seq"]), "commit-seqs out of order"
PY
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
