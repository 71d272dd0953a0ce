#!/usr/bin/env bash
# floe through an Iceberg REST catalog (the test catalog, tests/integration/rest/server.js,
# with OAuth2 client credentials): `floe run --once` creates the namespace and the table in
# the catalog and commits, a second run appends on the reloaded table; DuckDB reads every
# line back exactly once from the live files `floe inspect -c` lists through the catalog;
# iceberg-js, an independent client, sees floe's snapshots and schema; the catalog's
# OpenAPI check refused nothing. A catalog that assigns field ids of its own is refused
# with a clear error (floe takes the ids from the catalog's answer, never its own).
source "$(dirname "$0")/lib.sh"
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --client-id c1 --client-secret S3cr3t-xyz
mkdir -p "$T/logs"
for i in $(seq 1 300); do echo "line $i of the first run"; done >"$T/logs/a.log"
printf 'c1:S3cr3t-xyz\n' >"$T/cred"
rest_config() { # FILE STATE URL NAMESPACE
	cat >"$1" <<YAML
agent: { id: edge-1, state_dir: $2 }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$3", namespace: $4, credential: "file:$T/cred" }
YAML
}
rest_config "$T/floe.yaml" "$T/state" "$REST_URL" edge.site1

check "floe check accepts the catalog's keys" "$FLOE_BIN" check -c "$T/floe.yaml"
sed "s#file:$T/cred#file:$T/nocred#" "$T/floe.yaml" >"$T/bad.yaml"
check "floe check: a credential reference that does not resolve is a configuration error (2)" \
	bash -c "'$FLOE_BIN' check -c '$T/bad.yaml' >/dev/null 2>'$T/bad.err'; test \$? = 2 && grep -q 'lake.catalog.credential: cannot resolve file:$T/nocred' '$T/bad.err'"
printf 'S3cr3t-xyz\n' >"$T/nocred"
check "floe check: a credential without client_id: is one too, and the secret is not shown" \
	bash -c "'$FLOE_BIN' check -c '$T/bad.yaml' >/dev/null 2>'$T/bad.err'; test \$? = 2 && grep -q 'does not hold client_id:client_secret' '$T/bad.err' && ! grep -q S3cr3t '$T/bad.err'"
check "(a) floe run --once creates the namespace and table and commits" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level debug 2>"$T/run1.log"
for i in $(seq 1 50); do echo "appended line $i"; done >>"$T/logs/a.log"
check "(a) a second run appends on the reloaded table" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
check "(a) floe inspect -c reads the table through the catalog" grep -q '^snapshots 2$' "$T/inspect"
check "(a) its location is the one the catalog gave" \
	grep -q "^table file://$T/cat/warehouse/edge.site1/logs\$\|^table file://$T/cat/warehouse/edge%1Fsite1/logs\$\|^table file://$T/cat/warehouse/edge/site1/logs\$" "$T/inspect"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "(a) DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
rows=$(wc -l <"$T/logs/a.log")
check "(a) iceberg-js sees floe's 2 snapshots, its summary and schema" \
	node "$R/check_floe.mjs" "$REST_URL" c1 S3cr3t-xyz edge.site1 logs 2 "$rows"
check "(a) the catalog's requests: config, token, namespace, create, load with ETag, commit" \
	bash -c "grep -q '\"status\":304' '$T/cat/requests.log' && grep -q 'POST\",\"path\":\"/v1/ws/namespaces/edge%1Fsite1/tables/logs\",\"status\":200' '$T/cat/requests.log'"
check "(a) no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
check "(a) no token or secret in floe's debug log or the catalog's" \
	bash -c "! grep -q 'S3cr3t\|Bearer\|access_token' '$T/run1.log' '$T/cat/requests.log'"
check "floe maintain works on the catalog's table (nothing closed to compact), making no table of its own" \
	bash -c "'$FLOE_BIN' maintain -c '$T/floe.yaml' 2>/dev/null | grep -q '^logs: compacted 0 partitions' && ! test -e '$T/state/warehouse/edge'"
stop_pid "$REST_PID" || true

# A catalog that assigns its own field ids (from 101): floe must not write its own ids
# into a table whose schema says otherwise.
start_rest_catalog "$T/cat2" --client-id c1 --client-secret S3cr3t-xyz --id-offset 100
rest_config "$T/floe2.yaml" "$T/state2" "$REST_URL" edge
check "a table with the catalog's own field ids is refused" \
	bash -c "! '$FLOE_BIN' run -c '$T/floe2.yaml' --once --log-level warn >'$T/run2.out' 2>&1"
check "... saying which field" grep -q "field with id 1 " "$T/run2.out"
check "... and nothing was committed" \
	bash -c "! grep -q 'POST\",\"path\":\"/v1/ws/namespaces/edge/tables/logs\"' '$T/cat2/requests.log'"
stop_pid "$REST_PID" || true

# A catalog that does not list the namespace endpoints in /v1/config: floe does not call
# them; it creates its table in the namespace someone made, and says what it does.
start_rest_catalog "$T/cat3" --omit-endpoint 'POST /v1/{prefix}/namespaces'
curl -s -X POST "$REST_URL/v1/ws/namespaces" -H 'Content-Type: application/json' -d '{"namespace":["made"]}' >/dev/null
cat >"$T/floe3.yaml" <<YAML
agent: { id: edge-3, state_dir: $T/state3 }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: made }
YAML
check "endpoints not listed: floe commits without calling them" \
	"$FLOE_BIN" run -c "$T/floe3.yaml" --once --log-level info 2>"$T/run3.log"
check "... and it never asked about the namespace that was there" \
	bash -c "! grep -q 'does not create namespaces' '$T/run3.log'"
sed 's/namespace: made/namespace: absent/; s#state3#state3b#' "$T/floe3.yaml" >"$T/floe3b.yaml"
check "a namespace nobody made: the run fails" \
	bash -c "! '$FLOE_BIN' run -c '$T/floe3b.yaml' --once --log-level info 2>'$T/run3b.log'"
check "... saying that floe does not create it, and that it is missing" bash -c \
	"grep -q 'does not create namespaces: using absent as it is' '$T/run3b.log' && grep -q 'NoSuchNamespaceException' '$T/run3b.log'"
check "... and its only POST to the namespaces was the test's" \
	test "$(grep -c '"method":"POST","path":"/v1/ws/namespaces",' "$T/cat3/requests.log")" = 1
check "... the commit carried an Idempotency-Key (the catalog advertises one)" \
	grep -q '"path":"/v1/ws/namespaces/made/tables/logs","status":200,"idempotency":"[0-9a-f-]\{36\}"' "$T/cat3/requests.log"
stop_pid "$REST_PID" || true
finish
