#!/usr/bin/env bash
# Credentials for the REST catalog that change under a running agent. (1) OAuth2 client
# credentials with 2-second tokens: floe asks for a new token before each one expires and
# keeps committing. (1b) With tokens of an hour, every token is revoked: the catalog
# answers 401, floe asks for a new one and the commit goes through (with 2-second tokens
# floe often renews before it uses the revoked one, so the 401 would be left to chance).
# (2) A bearer token in a file: revoked, and the file
# rewritten with a new one: floe reads the file again and commits. Every line lands
# exactly once, and no token or secret is in floe's log.
source "$(dirname "$0")/lib.sh"
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --client-id c1 --client-secret Sekr1t-9 --token-ttl 2
mkdir -p "$T/logs"
printf 'c1:Sekr1t-9\n' >"$T/cred"
config() { # FILE STATE AUTH-KEY
	cat >"$1" <<YAML
agent: { id: edge-1, state_dir: $2 }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge, $3 }
YAML
}
round() { # LOG WHAT: appends lines, waits for floe's next commit
	for i in $(seq 1 20); do echo "$2 line $i"; done >>"$T/logs/a.log"
	commits=$((commits + 1))
	check "$2: committed" log_has "$1" "table: committed snapshot" "$commits" "$FLOE_PID"
}
tokens() { grep -c '"path":"/v1/oauth/tokens","status":200' "$T/cat/requests.log"; }

# The requests the catalog logged after line $1, for the checks of one step.
since() { tail -n "+$(($1 + 1))" "$T/cat/requests.log"; }
lines() { wc -l <"$T/cat/requests.log"; }
start_floe() { # LOG
	"$FLOE_BIN" run -c "$T/floe.yaml" --log-level debug 2>"$1" &
	FLOE_PID=$!
	PIDS+=("$FLOE_PID")
	commits=0
}

# --- (1) OAuth2 client credentials: tokens that expire --------------------------------------
config "$T/floe.yaml" "$T/state" "credential: \"file:$T/cred\""
start_floe "$T/run.log"
for r in 1 2 3 4; do round "$T/run.log" "(1) round $r"; done
check "(1) tokens were renewed as they expired ($(tokens) asked for)" test "$(tokens)" -ge 2
check "(1) floe stops cleanly" stop_pid "$FLOE_PID"

# --- (1b) a token revoked under a running agent ---------------------------------------------
# Tokens that last an hour, so that floe still holds the revoked one when it next asks:
# the catalog restarts on the same state with that lifetime (and a new port).
stop_pid "$REST_PID" || true
start_rest_catalog "$T/cat" --client-id c1 --client-secret Sekr1t-9 --token-ttl 3600
config "$T/floe.yaml" "$T/state" "credential: \"file:$T/cred\""
start_floe "$T/run1b.log"
round "$T/run1b.log" "(1b) with a token of an hour"
mark=$(lines)
curl -s -X POST "$REST_URL/_test/revoke" >/dev/null
round "$T/run1b.log" "(1b) after every token was revoked"
refused_then_renewed() { since "$mark" | grep -q '"status":401' && since "$mark" | grep -q '"path":"/v1/oauth/tokens","status":200'; }
check "(1b) the revoked token was refused (401), a new one asked for, and the commit made" refused_then_renewed
check "(1b) floe stops cleanly" stop_pid "$FLOE_PID"

# --- (2) a bearer token from a file ----------------------------------------------------------
token() {
	curl -s -X POST "$REST_URL/v1/oauth/tokens" --data "grant_type=client_credentials&client_id=c1&client_secret=Sekr1t-9" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
token >"$T/token"
config "$T/floe.yaml" "$T/state" "token: \"file:$T/token\""
start_floe "$T/run2.log"
round "$T/run2.log" "(2) with the token of the file"
curl -s -X POST "$REST_URL/_test/revoke" >/dev/null
token >"$T/token.new" && mv "$T/token.new" "$T/token"
round "$T/run2.log" "(2) after the token was revoked and the file rewritten"
check "(2) floe stops cleanly" stop_pid "$FLOE_PID"

"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "every line is in the table exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
check "no token or secret in floe's debug logs" \
	bash -c "! grep -q 'Sekr1t\|Bearer\|$(cat "$T/token")' '$T/run.log' '$T/run1b.log' '$T/run2.log'"
finish
