#!/usr/bin/env bash
# Typed columns of the logs table: a built-in parser's natural columns, a columns list,
# a value that does not convert (null, counted, its text kept in attrs), schema
# evolution over three runs (an added column, then a rename) read by field id, the
# manifests read by python3-avro, and a type change refused by check and by run.
source "$(dirname "$0")/lib.sh"

cfg() { # cfg NAME DIR PARSER-YAML [COLUMNS-YAML]
	cat >"$T/$1.yaml" <<YAML
agent: { id: typed-$1, state_dir: $T/state-$2 }
inputs:
  - type: tail
    paths: ["$T/$2/*.log"]
    start_at: beginning
$3
tables:
  logs:
${4:-    commit_interval: 60s}
lake: { warehouse: $T/wh-$2 }
YAML
}
tbl() { echo "$T/wh-$1/default/logs"; }
files() { live_list "$(tbl "$1")"; }
# The current schema's typed columns as DuckDB's read_parquet schema (field id -> name,
# type): files are read by field id, as an Iceberg reader does, whatever their names.
byid() {
	python3 - "$(newest_metadata "$(tbl "$1")")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
types = {"int": "INTEGER", "long": "BIGINT", "double": "DOUBLE", "float": "FLOAT",
         "boolean": "BOOLEAN", "string": "VARCHAR", "date": "DATE", "binary": "BLOB"}
cols = ["11: {name: 'message', type: 'VARCHAR', default_value: NULL}"]
for f in s["fields"]:
    if f["id"] > 14:
        cols.append("%d: {name: '%s', type: '%s', default_value: NULL}" % (f["id"], f["name"], types[f["type"]]))
print("map {" + ", ".join(cols) + "}")
PY
}
schemas() { # NAME: the number of schemas, the current one's typed fields as id:name:type
	python3 - "$(newest_metadata "$(tbl "$1")")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(len(m["schemas"]), " ".join("%d:%s:%s" % (f["id"], f["name"], f["type"]) for f in s["fields"] if f["id"] > 14))
PY
}

# 1. parser: apache_combined and no list: status int, bytes long ("-" is null), and the
# other fields string columns; attrs keeps nothing of a well-formed line.
mkdir -p "$T/natural"
cat >"$T/natural/access.log" <<'LOG'
10.1.2.3 - - [10/Oct/2026:13:55:36 +0000] "GET /a HTTP/1.1" 200 2326 "-" "curl/8.5"
10.1.2.3 - - [10/Oct/2026:13:55:37 +0000] "GET /b HTTP/1.1" 304 - "-" "curl/8.5"
LOG
cfg natural natural "    parser: apache_combined"
check "natural: run" "$FLOE_BIN" run -c "$T/natural.yaml" --once --log-level warn
duck "select typeof(status), typeof(bytes), status, bytes, path, cardinality(attrs)
      from read_parquet([$(files natural)]) order by \"offset\"" >"$T/natural.out"
check "natural: status INTEGER and bytes BIGINT, path a column, nothing in attrs" \
	grep -qx '\["INTEGER","BIGINT",200,"2326","/a","0"\]' "$T/natural.out"
check "natural: bytes '-' is null" grep -qx '\["INTEGER","BIGINT",304,null,"/b","0"\]' "$T/natural.out"
check "natural: the table's schema has them" grep -qx '2 15:status:int 16:bytes:long 17:client:string 18:user:string 19:method:string 20:path:string 21:protocol:string 22:referer:string 23:user_agent:string' <(schemas natural)
# columns: [] written in the file: none, the fields stay in attrs.
cfg none natural "    parser: apache_combined" "    columns: []"
sed -i "s#state-natural#state-none#; s#wh-natural#wh-none#" "$T/none.yaml"
check "none: run" "$FLOE_BIN" run -c "$T/none.yaml" --once --log-level warn
check "none: status and bytes stay in attrs" \
	grep -qx '\["200","2326"\]' <(duck "select attrs['status'], attrs['bytes'] from read_parquet([$(files none)]) order by \"offset\" limit 1")

# 2. A columns list with JSON: numbers and booleans keep their type; a value that does
# not convert is null, counted for its column and kept in attrs as text.
mkdir -p "$T/json"
cat >"$T/json/app.log" <<'LOG'
{"msg":"a","status":200,"latency":1.5,"ok":true,"day":"2026-03-01","user":"ann"}
{"msg":"b","status":"oops","latency":"-","ok":false,"day":"2026-02-30","user":"bob"}
LOG
cfg json json "    parser: json" "    columns:
      - { name: status, type: int }
      - { name: latency_ms, type: double, from: attrs.latency }
      - { name: ok, type: boolean }
      - { name: day, type: date }"
check "json: run" "$FLOE_BIN" run -c "$T/json.yaml" --once --log-level warn
duck "select status, latency_ms, ok, day::varchar, attrs['status'], attrs['day'], attrs['latency'], attrs['user']
      from read_parquet([$(files json)]) order by \"offset\"" >"$T/json.out"
check "json: typed values, the claimed fields gone from attrs" \
	grep -qx '\[200,1.5,true,"2026-03-01",null,null,null,"ann"\]' "$T/json.out"
check "json: bad values null, their text kept in attrs ('-' is null, not a failure)" \
	grep -qx '\[null,null,false,null,"oops","2026-02-30",null,"bob"\]' "$T/json.out"
check "json: failures counted per column in metrics.json" \
	grep -q '"conversion_failures":{"status":1,"latency_ms":0,"ok":0,"day":1}' "$T/state-json/metrics.json"

# timestamptz: RFC 3339 with its offset, to µs in UTC; a time without one does not convert.
mkdir -p "$T/tsz"
cat >"$T/tsz/app.log" <<'LOG'
{"msg":"a","at":"2026-03-01T12:00:00.25+01:00"}
{"msg":"b","at":"2026-03-01 12:00:00"}
LOG
cfg tsz tsz "    parser: json" "    columns: [{ name: seen, type: timestamptz, from: at }]"
check "tsz: run" "$FLOE_BIN" run -c "$T/tsz.yaml" --once --log-level warn
check "tsz: the table's column is timestamptz" grep -qx '2 15:seen:timestamptz' <(schemas tsz)
duck "select typeof(seen), epoch_us(seen), attrs['at'] from read_parquet([$(files tsz)]) order by \"offset\"" >"$T/tsz.out"
check "tsz: µs in UTC, the zoneless time null and kept in attrs" diff - "$T/tsz.out" <<<'["TIMESTAMP WITH TIME ZONE","1772362800250000",null]
["TIMESTAMP WITH TIME ZONE",null,"2026-03-01 12:00:00"]'

# 3. Evolution over three runs: status; then bytes added; then status renamed.
mkdir -p "$T/evo"
log() { echo "10.1.2.3 - - [10/Oct/2026:13:55:3$1 +0000] \"GET /$1 HTTP/1.1\" $2 $3 \"-\" \"curl\"" >>"$T/evo/access.log"; }
log 1 200 100
cfg evo1 evo "    parser: apache_combined" "    columns: [{ name: status, type: int }]"
check "evo 1: run" "$FLOE_BIN" run -c "$T/evo1.yaml" --once --log-level warn
check "evo 1: schema with status" grep -qx '2 15:status:int' <(schemas evo)
check "evo 1: bytes stays in attrs" \
	grep -qx '\["100"\]' <(duck "select attrs['bytes'] from read_parquet([$(files evo)])")
log 2 404 200
cfg evo2 evo "    parser: apache_combined" "    columns: [{ name: status, type: int }, { name: bytes, type: long }]"
check "evo 2: run" "$FLOE_BIN" run -c "$T/evo2.yaml" --once --log-level warn
check "evo 2: a second schema with bytes, made current" grep -qx '3 15:status:int 16:bytes:long' <(schemas evo)
log 3 500 300
cfg evo3 evo "    parser: apache_combined" "    columns:
      - { name: http_status, type: int, from: status, renamed_from: status }
      - { name: bytes, type: long }"
check "evo 3: check accepts the rename" "$FLOE_BIN" check -c "$T/evo3.yaml"
check "evo 3: run" "$FLOE_BIN" run -c "$T/evo3.yaml" --once --log-level warn
check "evo 3: the rename keeps the field id" grep -qx '4 15:http_status:int 16:bytes:long' <(schemas evo)
duck "select regexp_extract(message, 'GET /[0-9]'), http_status, bytes from read_parquet([$(files evo)], schema = $(byid evo)) order by 1" >"$T/evo.out"
check "evo: three files read by id: old rows under the new name, null in the added column" \
	diff - "$T/evo.out" <<<'["GET /1",200,null]
["GET /2",404,"200"]
["GET /3",500,"300"]'
check "evo: python3-avro reads every manifest and list" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$(tbl evo)"/metadata/*.avro
# A manifest names the schema its data files were written under: the evolved one, the
# same as the snapshot that adds it.
check "evo: each snapshot's new manifest carries the snapshot's schema" /usr/bin/python3 -c '
import avro.datafile, avro.io, glob, json, os, sys
warnings = __import__("warnings"); warnings.filterwarnings("ignore")
d = sys.argv[1]
meta = json.load(open(sorted(glob.glob(d + "/metadata/*.metadata.json"))[-1]))
bad = 0
for snap in meta["snapshots"]:
    lst = d + "/metadata/" + os.path.basename(snap["manifest-list"])
    for mf in avro.datafile.DataFileReader(open(lst, "rb"), avro.io.DatumReader()):
        if mf["added_snapshot_id"] != snap["snapshot-id"]:
            continue
        r = avro.datafile.DataFileReader(open(d + "/metadata/" + os.path.basename(mf["manifest_path"]), "rb"), avro.io.DatumReader())
        sid = int(r.get_meta("schema-id"))
        ids = sorted(f["id"] for f in json.loads(r.get_meta("schema"))["fields"])
        want = [s for s in meta["schemas"] if s["schema-id"] == snap["schema-id"]][0]
        if sid != snap["schema-id"] or ids != sorted(f["id"] for f in want["fields"]):
            print("snapshot", snap["snapshot-id"], "schema", snap["schema-id"], "manifest", sid); bad = 1
sys.exit(bad)' "$(tbl evo)"

# 4. A type change the table cannot take: refused by check and by run, naming the
# table, the column and both types; the lines stay unread in their file.
log 4 200 400
cfg evo4 evo "    parser: apache_combined" "    columns:
      - { name: http_status, type: int, from: status }
      - { name: bytes, type: string }"
rc=0
"$FLOE_BIN" check -c "$T/evo4.yaml" >/dev/null 2>"$T/check4.err" || rc=$?
check "refused: check exits with a usage error" test $rc -eq 2
check "refused: check names the column and both types" \
	grep -q "tables.logs.columns: table default/logs in .* cannot take them: column 'bytes': the table has field 16 'bytes' as long; floe writes string" "$T/check4.err"
rc=0
"$FLOE_BIN" run -c "$T/evo4.yaml" --once --log-level warn 2>"$T/run4.err" || rc=$?
check "refused: run fails" test $rc -ne 0
check "refused: run names the table, the column and both types" \
	grep -q "table file://.*/default/logs: column 'bytes': the table has field 16 'bytes' as long; floe writes string" "$T/run4.err"
check "refused: nothing new committed" test "$(schemas evo)" = '4 15:http_status:int 16:bytes:long'
check "refused: the rows of before are all there" \
	test "$(duck "select count(*) from read_parquet([$(files evo)])")" = '["3"]'

# 5. Another writer adds a column between a running agent's start and its commit: the
# agent's start made its column's id the table's (a schema committed before any file
# carries it), so the other writer's column gets the next id, and both commit.
mkdir -p "$T/race" "$T/raceb"
echo '{"msg":"a","status":"200"}' >"$T/race/app.log"
echo '{"msg":"b","other":"y"}' >"$T/raceb/app.log"
cat >"$T/race-a.yaml" <<YAML
agent: { id: race-a, state_dir: $T/state-race-a, http: { listen: "127.0.0.1:0" } }
inputs: [ { type: tail, paths: ["$T/race/*.log"], start_at: beginning, parser: json } ]
tables: { logs: { commit_interval: 1h, columns: [ { name: status, type: int } ] } }
lake: { warehouse: $T/wh-race }
YAML
cat >"$T/race-b.yaml" <<YAML
agent: { id: race-b, state_dir: $T/state-race-b }
inputs: [ { type: tail, paths: ["$T/raceb/*.log"], start_at: beginning, parser: json } ]
tables: { logs: { columns: [ { name: other, type: string } ] } }
lake: { warehouse: $T/wh-race }
YAML
run_serving "$T/race-a.yaml" "$T/race-a.err"
check "race: agent a serves /metrics" test -n "$port"
check "race: a's start committed its column's id" test "$(schemas race)" = '2 15:status:int'
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" | grep -qx 'floe_lines_total 1' && break
	sleep 0.1
done
check "race: agent a read its line" bash -c "curl -sf http://127.0.0.1:$port/metrics | grep -qx 'floe_lines_total 1'"
check "race: agent b commits 'other' under the next id" "$FLOE_BIN" run -c "$T/race-b.yaml" --once --log-level warn
check "race: ... 16" test "$(schemas race)" = '3 15:status:int 16:other:string'
check "race: a's stop commits" stop_pid "$pid"
check "race: a's spool is empty" test -z "$(ls "$T/state-race-a/spool/"*.entry 2>/dev/null)"
check "race: both rows in the table, each column under its id" \
	test "$(duck "select count(*), count(status), count(other) from read_parquet([$(files race)], schema = $(byid race))")" = '["2","1","1"]'

# 6. A record no parser made: syslog's structured data by the same rule (one that
# converts, one that does not and stays in attrs, counted).
mkdir -p "$T/sl"
U=$(free_port)
cat >"$T/sl.yaml" <<YAML
agent: { id: sl, state_dir: $T/state-sl, http: { listen: "127.0.0.1:0" } }
inputs: [ { type: syslog, listen: "tcp://127.0.0.1:$U" } ]
tables:
  logs:
    columns:
      - { name: took_ms, type: int, from: "ex@32473.ms" }
lake: { warehouse: $T/wh-sl }
YAML
run_serving "$T/sl.yaml" "$T/sl.err"
check "syslog: serves /metrics" test -n "$port"
python3 - "$U" <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
for ms, text in (("12", "fast"), ("soon", "slow")):
    m = ('<14>1 2026-03-01T10:00:00Z h app 1 - [ex@32473 ms="%s"] %s' % (ms, text)).encode()
    s.sendall(str(len(m)).encode() + b" " + m)
s.close()
PY
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" | grep -qx 'floe_lines_total 2' && break
	sleep 0.1
done
check "syslog: a failure counted in /metrics by column" \
	bash -c "curl -sf http://127.0.0.1:$port/metrics | grep -qx 'floe_column_conversion_failures_total{column=\"took_ms\"} 1'"
check "syslog: SIGTERM commits" stop_pid "$pid"
duck "select message, took_ms, element_at(attrs, 'ex@32473.ms')[1] from read_parquet([$(files sl)]) order by message" >"$T/sl.out"
check "syslog: structured data in a typed column, the bad value in attrs" \
	diff - "$T/sl.out" <<<'["fast",12,null]
["slow",null,"soon"]'
finish
