#!/usr/bin/env bash
# A store that asks floe to slow down: S3's 503 SlowDown with Retry-After (s3_stub.py's
# slowdown=, 3 s here). Neither the S3 client's retries nor the agent's next commit come
# sooner than asked: every two requests the store slowed down are at least 3 s apart (a
# lower bound, which a slow machine only widens). Before, the client retried after its
# backoff alone (0.1 to 1.6 s) and the agent's next commit came on its own backoff: 29
# requests in 20 s where 7 were allowed. Then the store takes requests again, and every
# line is committed once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
S="$T/stub"
stub_start "$S" || exit 1
ctl() { printf '%s\n' "$@" >"$S/ctl"; }

d="$T/a"
mkdir -p "$d/in"
cat >"$d/floe.yaml" <<YAML
agent: { id: retry-after, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/p
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true }
YAML
records() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/p/default/logs" 2>/dev/null |
		sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'
}

seq 1 100 | sed 's/^/line /' >"$d/in/a.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
PID=$!
PIDS+=($PID)
check "the agent commits" log_has "$d/err" "committed snapshot" 1 $PID
ctl "slowdown=^PUT .*/data/" "retry_after=3"
seq 101 200 | sed 's/^/line /' >>"$d/in/a.log"
check "the store slows it down (4 requests answered 503)" log_has "$S/stub.log" "FAULT slowdown" 4 $PID
check "and floe says it waits" log_has "$d/err" "Retry-After" 1 $PID
ctl ""
# The gaps between the requests slowed down, each at least 3 s (the stub's clock).
gaps=$(awk '/FAULT slowdown/ { if (t) printf "%.2f ", $1 - t; t = $1 }' "$S/stub.log")
check "no request sooner than asked (gaps: $gaps)" \
	awk -v g="$gaps" 'BEGIN { n = split(g, a, " "); for (i = 1; i <= n; i++) if (a[i] < 2.95) exit 1; exit n < 3 }'
all_in() { test "$(records)" = 200; }
check "every line committed once the store takes requests" wait_for 60 all_in
stop_pid $PID || true
check "200 records after the stop" test "$(records)" = 200
stub_stop
finish
