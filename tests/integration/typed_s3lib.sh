# Shared by the typed columns' S3 tests (test_s3_typed_*.sh), sourced after lib.sh and
# s3lib.sh: the stub, the agent's configuration, and what the tests look at. Each works
# in $d (set by typed_s3_start).

# typed_s3_start DIR: the stub (in DIR/stub) and DIR/in, DIR/got.
typed_s3_start() {
	d=$1
	stub_env
	export AWS_EC2_METADATA_DISABLED=true
	mkdir -p "$d/in" "$d/got"
	stub_start "$d/stub"
}

# typed_s3_config ID COLUMNS: $d/floe.yaml, a JSON tail into the stub's table with
# tables.logs.columns: [COLUMNS].
typed_s3_config() {
	cat >"$d/floe.yaml" <<YAML
agent: { id: $1, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning, parser: json }
tables:
  logs:
    commit_interval: 1s
    columns: [ $2 ]
YAML
	typed_s3_lake >>"$d/floe.yaml"
}

# typed_s3_lake: the lake section of a configuration on the stub's table.
typed_s3_lake() {
	cat <<YAML
lake:
  warehouse: s3://bkt/typed
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML
}

# inspect [TABLE]: floe inspect --json of the stub's table TABLE (logs).
inspect() { "$FLOE_BIN" inspect --json --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/typed/default/${1:-logs}" 2>/dev/null; }
m() { metric "$d/state/metrics.json" "$1"; }
spooled() { [ -f "$d/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ]; }
committed() { [ -f "$d/state/metrics.json" ] && [ "$(m rows_committed)" = "$1" ] && [ "$(m spool_bytes)" = 0 ]; }

# typed_s3_fetch [TABLE]: the table's (logs') live files into $d/got (their paths in
# $d/files), and $list for DuckDB's read_parquet.
typed_s3_fetch() {
	local i=0 uri
	inspect "${1:-logs}" | python3 -c 'import json,sys; [print(f["path"]) for f in json.load(sys.stdin)["files"]]' >"$d/files"
	while read -r uri; do
		i=$((i + 1))
		curl -sf "http://127.0.0.1:$STUB_PORT/${uri#s3://}" -o "$d/got/$i.parquet"
	done <"$d/files"
	list=$(ls "$d"/got/*.parquet | sed "s/.*/'&'/" | paste -sd,)
}

# typed_s3_schema NAME=ID:TYPE...: the table's schema has these fields, optional.
typed_s3_schema() {
	inspect | python3 -c '
import json, sys
s = json.load(sys.stdin)["schema"]
f = {x["name"]: "%d:%s" % (x["id"], x["type"]) for x in s["fields"] if not x["required"]}
want = dict(a.split("=", 1) for a in sys.argv[1:])
sys.exit(0 if all(f.get(k) == v for k, v in want.items()) else 1)' "$@"
}
