#!/usr/bin/env bash
# A REST catalog that asks floe to slow down: its commits answered 503 with Retry-After
# (the test catalog's throttle fault, 3 s here, nothing applied). floe's next commit
# does not come sooner than asked: every two throttled commits are at least 3 s apart
# (a lower bound, which a slow machine only widens). Before, the next commit came on the
# agent's own backoff from a 1 s commit interval. Then the catalog takes the commit, and
# every line is in the table once.
source "$(dirname "$0")/lib.sh"

start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-ra, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
fault() { curl -s -X POST "$REST_URL/_test/faults" -d "$1" >/dev/null; }
commits() { grep '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs"' "$T/cat/requests.log"; }

seq 1 50 | sed 's/^/line /' >"$T/logs/a.log"
"$FLOE_BIN" run -c "$T/floe.yaml" 2>"$T/run.log" &
PID=$!
PIDS+=("$PID")
check "the agent commits" log_has "$T/run.log" "committed snapshot" 1 "$PID"
fault '{"throttle":4,"retry_after":3}'
seq 51 100 | sed 's/^/line /' >>"$T/logs/a.log"
check "the catalog throttles 4 commits" log_has "$T/cat/requests.log" '"status":503' 4 "$PID"
check "floe says it waits" log_has "$T/run.log" "Retry-After" 1 "$PID"
check "then commits" log_has "$T/run.log" "committed snapshot" 2 "$PID"
gaps=$(commits | grep '"status":503' | sed 's/.*"t":\([0-9.]*\).*/\1/' |
	awk '{ if (t) printf "%.2f ", $1 - t; t = $1 }')
check "no commit sooner than asked (gaps: $gaps)" \
	awk -v g="$gaps" 'BEGIN { n = split(g, a, " "); for (i = 1; i <= n; i++) if (a[i] < 2.95) exit 1; exit n < 3 }'
stop_pid "$PID" || true
check "every line committed once" grep -q "100 lines read, .* 100 rows committed" "$T/run.log"
finish
