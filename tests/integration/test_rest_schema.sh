#!/usr/bin/env bash
# Typed columns (tables.logs.columns) on a table in an Iceberg REST catalog (the test
# catalog, tests/integration/rest/server.js): the table floe creates through the catalog
# gets the configured columns at floe's start, by a commit of add-schema and
# set-current-schema alone asserting the schema it was built on (the ids are the table's
# before a file carries them), then the rows' commit; an added column in a second run is
# a further schema; a column another client adds just before floe's schema commit makes
# that commit fail its assertion (409), and the retry merges both. iceberg-js, an independent
# client, sees every schema; DuckDB reads the rows by field id; the catalog's OpenAPI check
# refused nothing.
source "$(dirname "$0")/lib.sh"
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --client-id c1 --client-secret S3cr3t-xyz
printf 'c1:S3cr3t-xyz\n' >"$T/cred"
mkdir -p "$T/logs"
cfg() { # COLUMNS-YAML
	cat >"$T/floe.yaml" <<YAML
agent: { id: edge-typed, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning, parser: json }
tables:
  logs:
    columns: $1
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge, credential: "file:$T/cred" }
YAML
}
schemas() { node "$R/check_schema.mjs" "$REST_URL" c1 S3cr3t-xyz edge logs; }
commits() { grep '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs"' "$T/cat/requests.log"; }
files() {
	"$FLOE_BIN" inspect -c "$T/floe.yaml" 2>/dev/null | sed -n "s#^  file://\([^ ]*\)  records=.*#'\1'#p" | paste -sd,
}

echo '{"msg":"one","status":200}' >"$T/logs/app.log"
cfg "[{ name: status, type: int }]"
check "1: floe creates the table through the catalog and commits the typed column" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
check "1: iceberg-js sees the column, under the id floe planned, in the current schema" \
	grep -qx '2 15:status:int' <(schemas | head -1)
check "1: the start sent add-schema and set-current-schema, asserting the schema it was built on, before the rows" \
	grep -q '"requirements":\["assert-table-uuid","assert-current-schema-id=0"\],"updates":\["add-schema","set-current-schema"\]' <(commits | head -1)
check "1: then the rows' commit" \
	grep -q '"requirements":\["assert-table-uuid","assert-ref-snapshot-id"\],"updates":\["add-snapshot","set-snapshot-ref"\]' <(commits | tail -1)

echo '{"msg":"two","status":404,"took":2.5}' >>"$T/logs/app.log"
cfg "[{ name: status, type: int }, { name: took, type: double }]"
check "2: a second run with an added column" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
check "2: a further schema with both columns, made current" grep -qx '3 15:status:int 16:took:double' <(schemas | head -1)
check "2: it asserted schema 1" grep -q 'assert-current-schema-id=1"' <(commits | grep add-schema | tail -1)

# Another client adds a column (id 40) just before floe's next commit is checked: floe's
# assertion of schema 2 fails, it reloads and evolves the new schema again.
curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' \
	-d '{"interpose_field":{"id":40,"name":"zone","required":false,"type":"string"}}' >/dev/null
echo '{"msg":"three","status":500,"took":3.5,"level":"warn"}' >>"$T/logs/app.log"
cfg "[{ name: status, type: int }, { name: took, type: double }, { name: level, type: string }]"
check "3: a third run adds a column while another client adds one" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level info 2>"$T/run3.log"
check "3: its first commit was refused (409) for the schema it asserted" \
	grep -q '"status":409.*"assert-current-schema-id=2"' <(commits)
check "3: the retry merged both: the other client's column kept, floe's added under the id its file has" \
	grep -qx '5 15:status:int 16:took:double 40:zone:string 17:level:string' <(schemas | head -1)

duck "select message, status, took, level from read_parquet([$(files)], schema = $(schemas | tail -1)) order by status" >"$T/rows.out"
check "DuckDB reads the three rows by field id, null where a file predates its column" \
	diff - "$T/rows.out" <<<'["one",200,null,null]
["two",404,2.5,null]
["three",500,3.5,"warn"]'
check "iceberg-js sees floe's 3 snapshots" node "$R/check_floe.mjs" "$REST_URL" c1 S3cr3t-xyz edge logs 3 3
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
