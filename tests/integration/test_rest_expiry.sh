#!/usr/bin/env bash
# Snapshots expire through a REST catalog as they do without one: a commit that expires
# snapshots (history.expire.*, floe's own bound) sends remove-snapshots and the raised
# floe.committed-seq.<installation> property with its snapshot, in the same request, and
# then deletes the expired snapshots' manifest lists and the manifests no kept snapshot
# lists. A table in a catalog written for months then stays bounded with nothing done by
# hand (before, its snapshots and manifest lists grew with every commit, and floe loaded
# them all at each one). Twelve --once runs after the table's properties are set through
# the catalog (keep 3, expire at once): at most 3 snapshots and their manifest lists are
# left, the watermark is in the catalog's properties, DuckDB reads every line once
# through `floe inspect -c`, iceberg-js loads the table, and the catalog's OpenAPI check
# refused nothing.
source "$(dirname "$0")/lib.sh"
R="$FLOE_SRC/tests/integration/rest"

start_rest_catalog "$T/cat" --client-id c1 --client-secret Sekr1t-9
printf 'c1:Sekr1t-9\n' >"$T/cred"
mkdir -p "$T/logs"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-x, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: fleet, credential: "file:$T/cred" }
YAML
TABLE_URL="$REST_URL/v1/ws/namespaces/fleet/tables/logs"
run() { # run N: one more line, one more commit
	echo "line $1" >>"$T/logs/a.log"
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level info 2>>"$T/run.log"
}
check "the first run creates the table and commits" run 1
TOKEN=$(curl -sf -X POST "$REST_URL/v1/oauth/tokens" -d grant_type=client_credentials -d client_id=c1 \
	-d client_secret=Sekr1t-9 -d scope=catalog | python3 -c 'import json,sys; print(json.load(sys.stdin)["access_token"])')
AUTH="Authorization: Bearer $TOKEN"
curl -sf -X POST "$TABLE_URL" -H "$AUTH" -H 'Content-Type: application/json' -d '{"requirements":[],"updates":[
	{"action":"set-properties","updates":{"history.expire.max-snapshot-age-ms":"1","history.expire.min-snapshots-to-keep":"3"}}]}' \
	>/dev/null
ok=true
for i in $(seq 2 12); do run "$i" || ok=false; done
check "eleven more runs commit" $ok
curl -sf -H "$AUTH" "$TABLE_URL" >"$T/table.json"
state() {
	python3 - "$T/table.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["metadata"]
wm = [k for k in m.get("properties", {}) if k.startswith("floe.committed-seq.")]
print(len(m["snapshots"]), len(wm), m["properties"].get(wm[0], "-") if wm else "-")
PY
}
read -r nsnap nwm seq <<<"$(state)"
echo "# catalog: $nsnap snapshots, watermark of $nwm installation(s) at commit-seq $seq"
check "the catalog keeps 3 snapshots of 12" test "$nsnap" = 3
check "the expired commits' watermark is in the catalog's properties (commit-seq 9)" \
	test "$nwm $seq" = "1 9"
check "floe said so" grep -q "snapshots expired through the catalog" "$T/run.log"
lists=$(find "$T/cat/warehouse" -name 'snap-*.avro' | wc -l)
check "the expired snapshots' manifest lists are deleted ($lists left)" test "$lists" = 3
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "iceberg-js loads the table: 3 snapshots" \
	node "$R/check_floe.mjs" "$REST_URL" c1 Sekr1t-9 fleet logs 3 12

# A commit that expires a snapshot and whose answer is cut after the catalog applied it:
# the reload finds the snapshot landed, and the expired snapshot's files are deleted
# then (before, nothing ever deleted them: no later commit plans what is expired already).
curl -s -X POST "$REST_URL/_test/faults" -d '{"cut_after_apply":1}' >/dev/null
check "a run whose commit's answer is cut commits" run 13
check "... finding its snapshot landed, it deletes what it expired" \
	grep -q "had landed (its answer lost): deleting what it expired" "$T/run.log"
lists=$(find "$T/cat/warehouse" -name 'snap-*.avro' | wc -l)
check "3 manifest lists are left after the lost answer ($lists)" test "$lists" = 3
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line once after the lost answer" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
