#!/usr/bin/env bash
# kill -9 during a schema change: a table at its first schema (status) gets a column
# renamed (status -> http_status, renamed_from) and one added (took) by a run that dies
# at each point around the change: at its start, after the schema is evolved in memory
# and before anything of it is stored (commit-after-evolve), before and after the
# metadata version that makes the schema current with no snapshot
# (reserve-before/after-metadata), after the new plan is saved (columns-after-save);
# then in its data commit, after the manifest, after the metadata version that adds the
# rows, and before the spool entries are removed. The
# restart commits what the dead run had read and the lines that came meanwhile: every
# line is in the table once (read by field id with DuckDB, arrow-rs and hyparquet), the
# schema has the renamed field under its old id and the added one under the next id,
# no id is used twice in any schema, and last-column-id is that id.
source "$(dirname "$0")/lib.sh"

points=(commit-after-evolve reserve-before-metadata reserve-after-metadata columns-after-save
	commit-after-manifest commit-after-metadata commit-before-spool-remove)
cfg() { # cfg DIR COLUMNS-YAML
	cat >"$1/v$3.yaml" <<YAML
agent: { id: typed-crash, state_dir: $1/state }
inputs: [ { type: tail, paths: ["$1/in/*.log"], start_at: beginning, parser: json } ]
tables:
  logs:
    columns:
$2
lake: { warehouse: $1/wh }
YAML
}
# The current schema's typed fields, last-column-id, and whether any schema has an id twice.
schema_state() {
	python3 - "$(newest_metadata "$1")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
dup = any(len({f["id"] for f in x["fields"]}) != len(x["fields"]) for x in m["schemas"])
print(" ".join("%d:%s:%s" % (f["id"], f["name"], f["type"]) for f in s["fields"] if f["id"] > 14),
      "last=%d" % m["last-column-id"], "dup" if dup else "unique")
PY
}

for point in "${points[@]}"; do
	d="$T/$point"
	mkdir -p "$d/in"
	cfg "$d" "      - { name: status, type: int }" 1
	cfg "$d" "      - { name: http_status, type: int, from: status, renamed_from: status }
      - { name: took, type: double }" 2
	echo '{"msg":"l1","status":200,"took":1.5}' >"$d/in/app.log"
	check "$point: the first schema is committed" "$FLOE_BIN" run -c "$d/v1.yaml" --once --log-level error
	printf '%s\n' '{"msg":"l2","status":404,"took":2.5}' '{"msg":"l3","status":500,"took":3.5}' >>"$d/in/app.log"
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" run -c "$d/v2.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "$point: the run changing the schema dies at the crash point" test $rc = 99
	echo '{"msg":"l4","status":503,"took":4.5}' >>"$d/in/app.log"
	check "$point: the restart succeeds" "$FLOE_BIN" run -c "$d/v2.yaml" --once --log-level warn
	check "$point: the schema: the rename under the old id, took the next id, no id twice" \
		test "$(schema_state "$d/wh/default/logs")" = "15:http_status:int 16:took:double last=16 unique"
	meta=$(newest_metadata "$d/wh/default/logs")
	mapfile -t files < <(live_files "$d/wh/default/logs")
	node "$READER/read_by_id.mjs" "$meta" "${files[@]}" >"$d/rows" 2>"$d/rows.err"
	check "$point: every line once, read by field id by three readers" diff - "$d/rows" <<'ROWS'
["offset","message","http_status:int","took:double"]
["0","l1","200",null]
["37","l2","404","2.5"]
["74","l3","500","3.5"]
["111","l4","503","4.5"]
ROWS
done
finish
