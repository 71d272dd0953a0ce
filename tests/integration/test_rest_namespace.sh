#!/usr/bin/env bash
# A REST catalog whose principal may not create namespaces (the test catalog with --deny
# createNamespace: 403 whether or not the namespace exists, as Polaris answers a principal
# without the privilege). Before, floe asked to create the namespace before it loaded the
# table, at every start and every --once run: with the namespace made by the catalog's
# operator, and the table too, nothing was ever committed ("run failed: access denied").
# Now the table is loaded first, and the namespace is asked for only when creating the
# table finds it missing. (1) The namespace is missing: the run fails naming the
# namespace's creation as what was refused, and the lines stay in the spool. (2) The
# operator creates it: the next run creates the table and commits. (3) Further runs load
# the table and commit, and no run asked for the namespace again. DuckDB reads every line
# once; the catalog's OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"

start_rest_catalog "$T/cat" --deny createNamespace
mkdir -p "$T/logs"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-ns, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: fleet }
YAML
run() { # run N: one more line, one more --once run
	echo "line $1" >>"$T/logs/a.log"
	"$FLOE_BIN" run -c "$T/floe.yaml" --once >"$T/run$1.log" 2>&1
}
namespace_posts() { grep -c '"method":"POST","path":"/v1/ws/namespaces"' "$T/cat/requests.log" || true; }

rc=0
run 1 || rc=$?
check "(1) with the namespace missing and not to be made, the run fails (exit status $rc)" test "$rc" = 1
check "... naming the namespace's creation as refused" \
	grep -q "creating the missing namespace (create it in the catalog.*403 ForbiddenException" "$T/run1.log"
check "... and the line stays in the spool" grep -q "0 rows committed" "$T/run1.log"

# The catalog's operator creates the namespace.
python3 - "$T/cat/catalog.json" <<'PY'
import json, os, sys
p = sys.argv[1]
s = json.load(open(p)) if os.path.exists(p) else {"namespaces": {}, "tables": {}}
s["namespaces"]["fleet"] = {}
json.dump(s, open(p, "w"))
PY
curl -sf -X POST -H 'content-type: application/json' -d '{}' "$REST_URL/_test/reload" >/dev/null
before=$(namespace_posts)
check "(2) with the namespace made by the operator, the run creates the table and commits" run 2
check "... both lines" grep -q "2 rows committed" "$T/run2.log"
ok=true
for i in 3 4 5; do run "$i" || ok=false; done
check "(3) three more runs commit" $ok
after=$(namespace_posts)
check "... and no run asked for the namespace once it was there ($before, then $after)" test "$before" = "$after"
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
