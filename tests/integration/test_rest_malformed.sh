#!/usr/bin/env bash
# (g) A REST catalog that answers malformed documents: garbage that is not JSON, an answer
# cut in half, members of the wrong type, a proxy's HTML page with 200, a table whose
# metadata lacks required fields, a 2 MiB configuration (over floe's 1 MiB cap), and a
# commit applied but answered with garbage. For each, floe run --once ends with a clear
# error naming what was wrong (no crash: no signal, no sanitizer report), the rows stay
# in the spool, and the next run, with the catalog answering again, commits them; an
# answer with members the spec does not know is taken as it is. At the end DuckDB reads
# every line exactly once and the table's history is one line with one snapshot per
# commit: the garbled commit answer was not committed twice.
source "$(dirname "$0")/lib.sh"
start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-mal, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
n=0
feed() { n=$((n + 1)); for i in $(seq 1 20); do echo "batch $n line $i"; done >>"$T/logs/a.log"; }
fault() { curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' \
	-d "{\"malformed\":{\"kind\":\"$1\",\"op\":\"$2\",\"n\":${3:-1}}}" >/dev/null; }
spooled() { ls "$T/state/spool/"*.parquet >/dev/null 2>&1; }
feed
check "a first run creates the table and commits" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
commits=1

# malformed KIND OP PATTERN: the run with the fault fails with an error matching PATTERN,
# keeps its rows, and the next one commits them.
malformed() {
	local kind=$1 op=$2 pattern=$3 rc=0
	feed
	fault "$kind" "$op" 3
	timeout 120 "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn 2>"$T/$kind-$op.log" || rc=$?
	check "$kind answer to $op: floe ends with an error, not a crash (exit $rc)" test "$rc" -ge 1 -a "$rc" -lt 124
	check "... that says what was wrong" grep -qiE "$pattern" "$T/$kind-$op.log"
	check "... and calls it a malformed answer, not a connection failure" grep -q 'run failed: malformed response' "$T/$kind-$op.log"
	check "... no sanitizer report" bash -c "! grep -q 'Sanitizer' '$T/$kind-$op.log'"
	check "... the rows stay in the spool" spooled
	curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' -d '{"malformed":null}' >/dev/null
	check "... and the next run commits them" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
	commits=$((commits + 1))
}
malformed garbage loadTable 'the loaded table: .*(JSON|parse|syntax)'
malformed truncated loadTable 'the loaded table: '
malformed types loadTable "the loaded table: .*'metadata'"
malformed html loadTable 'the loaded table: '
malformed nometa loadTable "the loaded table: not Iceberg table metadata: 'table-uuid' is missing"
malformed huge getConfig "/v1/config: answer over 1048576 bytes: not a catalog's answer"

# A commit the catalog applied and answered with garbage: the outcome is unknown, floe
# reloads and finds its snapshot there, and does not commit it again.
feed
fault garbage updateTable 1
check "a commit answered with garbage: floe finds it landed and ends well" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn 2>"$T/commit-garbage.log"
commits=$((commits + 1))
check "... having said it could not tell" grep -q 'may or may not have landed' "$T/commit-garbage.log"
check "... and nothing stays in the spool" bash -c "! ls '$T/state/spool/'*.parquet >/dev/null 2>&1"

# Members the spec does not (yet) have, in the table and its metadata: taken as they are.
feed
fault unknown loadTable 3
check "an answer with unknown members is taken as it is" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn

"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
check "one snapshot per commit ($commits): none made twice" grep -q "^snapshots $((commits + 1))\$" "$T/inspect"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
finish
