#!/usr/bin/env bash
# Reading the table exactly: after floe maintain compacts a closed day, the files it
# replaced stay on disk until their snapshots expire, so a glob over data/ counts those
# rows twice. The README's recipe, DuckDB over the file list of `floe inspect --json`,
# counts each row once, and the JSON carries the current schema. Also: --json with -c,
# on an empty table, and anywhere on the command line.
source "$(dirname "$0")/lib.sh"
d="$T/ij"
tbl="$d/wh/default/logs"
mkdir -p "$d/logs"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i 's/^    start_at: beginning$/&\n    parser: json/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" inspect --json "$tbl" >"$d/none.json" 2>"$d/none.err" || rc=$?
check "no table yet: exit 1, nothing on stdout" test "$rc:$(wc -c <"$d/none.json")" = 1:0

n=0
for run in 1 2 3 4 5; do
	for i in $(seq 1 20); do
		n=$((n + 1))
		printf '{"time":"2026-03-01T10:%02d:%02dZ","msg":"line %d"}\n' $((n / 60)) $((n % 60)) $n
	done >>"$d/logs/a.log"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error
done
check "maintain compacts the day" "$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/maint.out" 2>&1
grep -q '^logs: compacted 1 partitions' "$d/maint.out" || cat "$d/maint.out"

# The old recipe: every file under data/, the replaced ones included.
glob=$(duck "select count(*) from read_parquet('$tbl/data/**/*.parquet')" | tr -d '[]"')
echo "# a glob over data/ counts $glob rows of $n"
check "the files compaction replaced are still on disk (a glob counts $glob, more than $n)" test "$glob" -gt "$n"

# The README's recipe, as written there.
"$FLOE_BIN" inspect --json "$tbl" >"$d/logs.json"
got=$(cd "$d" && duck "SET VARIABLE files = (SELECT list(f.path) FROM (SELECT unnest(files) AS f
	FROM read_json('logs.json', columns = {files: 'STRUCT(path VARCHAR, records BIGINT, size BIGINT)[]'})))" \
	"SELECT count(*), count(DISTINCT message) FROM read_parquet(getvariable('files'))" | tr -d '[]"')
check "the recipe over inspect --json counts each row once ($got)" test "$got" = "$n,$n"
got=$(duck "SELECT records, len(files), format_version = 2, schema.fields[3].name, schema.fields[12].type->>'type'
	FROM read_json('$d/logs.json', columns = {records: 'BIGINT', files: 'JSON[]', \"format-version\": 'INT',
	schema: 'STRUCT(fields STRUCT(id INT, name VARCHAR, type JSON)[])'})
	CROSS JOIN (SELECT \"format-version\" AS format_version FROM read_json('$d/logs.json'))" | tr -d '[]" ')
check "records, the file count, the format version and the schema ($got)" test "$got" = "$n,1,true,host,map"
check "-c FILE gives the same" cmp "$d/logs.json" <("$FLOE_BIN" inspect -c "$d/floe.yaml" --json)
check "the text output still lists the same files" test "$(live_files "$tbl" | wc -l)" = 1
finish
