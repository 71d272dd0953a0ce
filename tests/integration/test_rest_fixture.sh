#!/usr/bin/env bash
# The test REST catalog (tests/integration/rest/server.js) against an independent client,
# iceberg-js: namespaces, fresh field ids on create, commits checked by their
# requirements, ETags, OAuth2 tokens; then the faults the catalog client's tests rely on
# (a 503 after the commit was applied, a cut connection, an expired and a revoked token),
# and the OpenAPI check itself (a malformed request is refused and recorded). No request
# or answer of the client's may break the OpenAPI document.
source "$(dirname "$0")/lib.sh"

R="$FLOE_SRC/tests/integration/rest"
start_rest_catalog "$T/cat" --client-id c1 --client-secret s1 --id-offset 100 --token-ttl 3600
check "iceberg-js: create, commit, 409 on a stale head, 304 on an unchanged table" \
	node "$R/check_fixture.mjs" "$REST_URL" c1 s1 100
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"

token() {
	curl -s -X POST "$REST_URL/v1/oauth/tokens" -H 'Content-Type: application/x-www-form-urlencoded' \
		--data "grant_type=client_credentials&client_id=c1&client_secret=s1" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])'
}
TOK=$(token)
TABLE="$REST_URL/v1/ws/namespaces/edge%1Fsite%201/tables/logs"
status() { curl -s -o "$T/body" -w '%{http_code}' "$@"; }
head_id() { curl -s -H "Authorization: Bearer $TOK" "$TABLE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["current-snapshot-id"])'; }
uuid=$(curl -s -H "Authorization: Bearer $TOK" "$TABLE" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["table-uuid"])')
commit_body() { # SNAPSHOT PARENT SEQ
	printf '{"requirements":[{"type":"assert-table-uuid","uuid":"%s"},{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":%s}],' "$uuid" "$2"
	printf '"updates":[{"action":"add-snapshot","snapshot":{"snapshot-id":%s,"parent-snapshot-id":%s,"sequence-number":%s,"timestamp-ms":%s,"manifest-list":"m.avro","summary":{"operation":"append"}}},' "$1" "$2" "$3" "$(date +%s%3N)"
	printf '{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":%s}]}' "$1"
}
commit() { status -X POST -H "Authorization: Bearer $TOK" -H 'Content-Type: application/json' "$@" "$TABLE"; }

curl -s -X POST "$REST_URL/_test/faults" -d '{"fail_after_apply":1,"status":503}' >/dev/null
check "a 503 the test asked for" test "$(commit --data "$(commit_body 21 12 3)")" = 503
check "... was applied all the same" test "$(head_id)" = 21
curl -s -X POST "$REST_URL/_test/faults" -d '{"cut_after_apply":1}' >/dev/null
check "a connection cut after the commit gives no answer" test "$(commit --data "$(commit_body 22 21 4)")" = 000
check "... and the commit landed" test "$(head_id)" = 22
curl -s -X POST "$REST_URL/_test/faults" -d '{"cut_before_apply":1}' >/dev/null
commit --data "$(commit_body 23 22 5)" >/dev/null || true
check "a connection cut before the commit: it did not land" test "$(head_id)" = 22
check "an Idempotency-Key retry gets the first answer, not a 409" \
	test "$(commit -H 'Idempotency-Key: k1' --data "$(commit_body 23 22 5)")$(commit -H 'Idempotency-Key: k1' --data "$(commit_body 23 22 5)")" = 200200
check "a malformed commit is refused (400)" test "$(commit --data '{"requirements":5}')" = 400
check "... and recorded as an OpenAPI violation" grep -q 'request POST' "$T/cat/violations.log"
check "an unknown token: 401" test "$(status -H 'Authorization: Bearer nope' "$TABLE")" = 401
curl -s -X POST "$REST_URL/_test/revoke" >/dev/null
check "a revoked token: 401" test "$(status -H "Authorization: Bearer $TOK" "$TABLE")" = 401
stop_pid "$REST_PID" || true

start_rest_catalog "$T/cat2" --client-id c1 --client-secret s1 --token-ttl 0
TOK=$(token)
check "an expired token: 419" test "$(status -H "Authorization: Bearer $TOK" "$REST_URL/v1/ws/namespaces/x")" = 419
check "the catalog's log never holds a token" bash -c "! grep -q '$TOK' '$T/cat2/requests.log'"
stop_pid "$REST_PID" || true
finish
