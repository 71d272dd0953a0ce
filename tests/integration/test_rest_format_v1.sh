#!/usr/bin/env bash
# A table of a REST catalog that another engine keeps at Iceberg format version 1 (its
# metadata file rewritten as a version 1 table's, with "schema" and "partition-spec").
# Before, floe opened it and each commit failed with "unsupported feature or version"
# alone, "retrying later", for ever. Now the run fails naming the table's format version
# and the upgrade that lets floe write (its readers would not take floe's version 2
# manifests), and the line stays in the spool; once the operator upgrades the table
# through the catalog (upgrade-format-version), the next run commits both lines, and
# DuckDB reads each once.
source "$(dirname "$0")/lib.sh"

start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-v1, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: fleet }
YAML
TU="$REST_URL/v1/ws/namespaces/fleet/tables/logs"
run() { # run N: one more line, one more --once run
	echo "line $1" >>"$T/logs/a.log"
	"$FLOE_BIN" run -c "$T/floe.yaml" --once >"$T/run$1.log" 2>&1
}
check "the first run creates the table and commits" run 1
loc=$(curl -sf "$TU" | python3 -c 'import json, sys; print(json.load(sys.stdin)["metadata-location"])')
python3 - "${loc#file://}" <<'PY'
import json, sys
p = sys.argv[1]
m = json.load(open(p))
m["format-version"] = 1
m["schema"] = [s for s in m["schemas"] if s["schema-id"] == m["current-schema-id"]][0]
m["partition-spec"] = [s for s in m["partition-specs"] if s["spec-id"] == m["default-spec-id"]][0]["fields"]
json.dump(m, open(p, "w"))
PY
rc=0
run 2 || rc=$?
check "a run on the version 1 table fails (exit status $rc)" test "$rc" = 1
check "... naming the format version and the upgrade" \
	grep -q "is Iceberg format version 1, and floe writes version 2: upgrade the table" "$T/run2.log"
check "... and commits nothing" grep -q "0 rows committed" "$T/run2.log"
curl -sf -X POST "$TU" -H 'Content-Type: application/json' \
	-d '{"requirements":[],"updates":[{"action":"upgrade-format-version","format-version":2}]}' >/dev/null
check "after the upgrade, a run commits" run 3
check "... the line the refused run kept as well" grep -q "2 rows committed" "$T/run3.log"
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
