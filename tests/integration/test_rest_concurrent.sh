#!/usr/bin/env bash
# 8 floe processes commit to one table through the test REST catalog at once, each its
# own installation (agent id, state_dir, log file): the catalog's requirement checks
# make all but one of each race fail with 409, and the losers rebuild on the new head
# and retry. Every line lands exactly once (DuckDB over the live files), the history is
# one line (each snapshot's parent is the one before), every process ends within its
# retry budget, and the catalog's OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"
N=${REST_WRITERS:-8}
LINES=${REST_LINES:-300}

start_rest_catalog "$T/cat"
for w in $(seq 1 "$N"); do
	mkdir -p "$T/logs$w"
	for i in $(seq 1 "$LINES"); do echo "writer $w line $i"; done >"$T/logs$w/a.log"
	cat >"$T/floe$w.yaml" <<YAML
agent: { id: edge-$w, state_dir: $T/state$w }
inputs:
  - { type: tail, paths: ["$T/logs$w/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
done
pids=()
for w in $(seq 1 "$N"); do
	"$FLOE_BIN" run -c "$T/floe$w.yaml" --once --log-level warn 2>"$T/run$w.log" &
	pids+=("$!")
	PIDS+=("$!")
done
ok=0
for p in "${pids[@]}"; do wait "$p" && ok=$((ok + 1)); done
check "all $N processes commit and end" test "$ok" = "$N"
conflicts=$(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":409' "$T/cat/requests.log" || true)
echo "  $N writers: $conflicts commits refused with 409 and retried"

curl -sf "$REST_URL/v1/ws/namespaces/edge/tables/logs" >"$T/table.json"
check "one line of history: $N snapshots, each the parent of the next" python3 - "$T/table.json" "$N" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
snaps = sorted(m["snapshots"], key=lambda s: s["sequence-number"])
assert len(snaps) == int(sys.argv[2]), f"{len(snaps)} snapshots"
for a, b in zip(snaps, snaps[1:]):
    assert b.get("parent-snapshot-id") == a["snapshot-id"], f"{b['snapshot-id']} does not follow {a['snapshot-id']}"
assert m["current-snapshot-id"] == snaps[-1]["snapshot-id"]
agents = sorted(s["summary"]["floe.agent-id"] for s in snaps)
assert len(set(agents)) == len(agents), f"an agent committed twice: {agents}"
PY
"$FLOE_BIN" inspect -c "$T/floe1.yaml" 2>/dev/null | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$T/files"
check "DuckDB reads every line of every writer exactly once" node "$READER/check_rows.js" "$T/files" "$T"/logs*/a.log
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
