#!/usr/bin/env bash
# A REST catalog reconfigured under a running agent: it comes back (same state, same port)
# serving its tables under another prefix (/v1/config's overrides.prefix: ws, then ws2;
# the old one answers 404 NoSuchWarehouseException), as after a catalog's warehouse was
# renamed or moved. Before, the agent read /v1/config only at its start: every commit
# failed ("loading the table answered 404 NoSuchWarehouseException: no prefix ws") until
# someone restarted it. Now a failed load or commit has the next one read /v1/config
# again: the agent says the prefix changed and commits its spool on; every line is in
# the table exactly once (DuckDB over the live files), on one line of history.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh" # wait_for
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --prefix ws
port=${REST_URL##*:}
mkdir -p "$T/logs"
for i in $(seq 1 20); do echo "before $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-re, state_dir: $T/state }
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
commits() { grep -c "\"method\":\"POST\",\"path\":\"/v1/$1/namespaces/edge/tables/logs\",\"status\":200" "$T/cat/requests.log"; }
commits_reach() { [ "$(commits "$1")" -ge "$2" ]; }
m() { metric "$T/state/metrics.json" "$1"; }
drained() { [ -f "$T/state/metrics.json" ] && [ "$(m spool_bytes)" = 0 ] && [ "$(m rows_committed)" = "$1" ]; }
check "the first lines land under prefix ws" wait_for 60 commits_reach ws 1

stop_pid "$REST_PID" || true
node "$R/server.js" --port "$port" --root "$T/cat" --prefix ws2 >"$T/cat/server2.out" 2>&1 &
REST_PID=$!
PIDS+=("$REST_PID")
wait_log "$T/cat/server2.out" "^listening " 30
for i in $(seq 1 20); do echo "after $i"; done >>"$T/logs/a.log"
rows=$(wc -l <"$T/logs/a.log")
check "the catalog under prefix ws2: everything lands and the spool drains" wait_for 120 drained "$rows"
check "... committed under ws2" commits_reach ws2 1
check "... the agent said the prefix changed" grep -q "the catalog's prefix is now 'ws2' (was 'ws')" "$T/run.log"
stop_pid "$pid" || true
"$FLOE_BIN" inspect -c "$T/floe.yaml" 2>/dev/null | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$T/files"
check "DuckDB reads every line exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
curl -sf "$REST_URL/v1/ws2/namespaces/edge/tables/logs" >"$T/table.json"
check "one line of history whose commit-seqs increase" python3 - "$T/table.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
snaps = sorted(m["snapshots"], key=lambda s: s["sequence-number"])
for a, b in zip(snaps, snaps[1:]):
    assert b.get("parent-snapshot-id") == a["snapshot-id"], "history forks"
    assert int(b["summary"]["floe.commit-seq"]) > int(a["summary"]["floe.commit-seq"]), "commit-seqs out of order"
PY
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
