#!/usr/bin/env bash
# Eight agents with differing column lists commit to one table at the same time, twice:
# each writes a different subset of the columns (status, took, user, region, code, lat),
# some adding columns the table lacks, one declaring code int where others say long,
# and one renaming its column (lat -> latency_ms, renamed_from) between the rounds. Every
# run ends well, every line is in the table exactly once, and every column keeps its id
# and type (code the long it was promoted to): read by field id with DuckDB, arrow-rs
# and hyparquet. A ninth agent declares user as long where they made it a string: it is
# refused, naming the table, the column and both types, before it reads a line (its
# lines wait in their file), and the table is as the eight left it; a daemon of the
# eight keeps running and committing meanwhile.
# With TYPED_AGENTS_S3=1 (test_s3_typed_agents.sh) the table is in an S3 warehouse
# (catalog s3: commits by conditional PUT) on the S3 stub.
source "$(dirname "$0")/lib.sh"
LAKE="{ warehouse: $T/wh }"
if [ "${TYPED_AGENTS_S3:-0}" = 1 ]; then
	source "$(dirname "$0")/s3lib.sh"
	source "$(dirname "$0")/typed_s3lib.sh"
	typed_s3_start "$T/s3"
	LAKE="{ warehouse: \"s3://bkt/typed\", catalog: { type: s3 }, s3: { endpoint: \"http://127.0.0.1:$STUB_PORT\", region: us-east-1, path_style: true } }"
fi

declare -A COLS=(
	[1]="{ name: status, type: int }"
	[2]="{ name: status, type: int }, { name: took, type: double }"
	[3]="{ name: took, type: double }, { name: user, type: string }"
	[4]="{ name: status, type: int }, { name: region, type: string }"
	[5]="{ name: code, type: long }"
	[6]="{ name: user, type: string }, { name: code, type: long }"
	[7]="{ name: region, type: string }, { name: code, type: int }, { name: status, type: int }"
	[8]="{ name: lat, type: double }"
	[9]="{ name: user, type: long }"
)
RENAMED="{ name: latency_ms, type: double, from: lat, renamed_from: lat }"
cfg() { # cfg K COLUMNS [EXTRA-AGENT-KEYS]
	mkdir -p "$T/a$1/in"
	cat >"$T/a$1.yaml" <<YAML
agent: { id: agent-$1, state_dir: $T/a$1/state ${3:-} }
inputs: [ { type: tail, paths: ["$T/a$1/in/*.log"], start_at: beginning, parser: json } ]
tables: { logs: { commit_interval: 1s, columns: [ $2 ] } }
lake: $LAKE
YAML
}
lines() { # lines K FROM TO: JSON lines of agent K with every field
	local i
	for i in $(seq "$2" "$3"); do
		printf '{"msg":"a%s-%d","status":%d,"took":%d.5,"user":"u%d","region":"r%d","code":%d,"lat":%d.25}\n' \
			"$1" "$i" $((200 + i)) "$i" "$i" "$i" "$i" "$i"
	done >>"$T/a$1/in/app.log"
}
# round N: the eight agents run --once at the same time; each must end well.
round() {
	local k pids=() rcs=()
	for k in $(seq 1 8); do
		"$FLOE_BIN" run -c "$T/a$k.yaml" --once --log-level warn 2>>"$T/a$k.err" &
		pids[k]=$!
	done
	for k in $(seq 1 8); do
		rc=0
		wait "${pids[k]}" || rc=$?
		rcs+=("$k:$rc")
	done
	check "round $1: every agent's run ends well" test "${rcs[*]}" = "1:0 2:0 3:0 4:0 5:0 6:0 7:0 8:0"
}

for k in $(seq 1 9); do cfg "$k" "${COLS[$k]}"; done
for k in $(seq 1 8); do lines "$k" 1 20; done
round 1
cfg 8 "$RENAMED"
for k in $(seq 1 8); do lines "$k" 21 40; done
round 2

# The conflict: agent 9 wants user as long, while agent 1 runs as a daemon.
cfg 1 "${COLS[1]}" ', http: { listen: "127.0.0.1:0" }'
run_serving "$T/a1.yaml" "$T/a1.err"
pid1=$pid
check "agent 1 runs as a daemon" test -n "$port"
lines 9 1 5
rc=0
"$FLOE_BIN" run -c "$T/a9.yaml" --once --log-level warn 2>"$T/a9.err" || rc=$?
check "agent 9 is refused" test $rc -ne 0
check "agent 9: the error names the table, the column and both types" \
	grep -q "table .*/default/logs: column 'user': the table has field [0-9]* 'user' as string; floe writes long" "$T/a9.err"
check "agent 9: nothing spooled, its lines wait in their file" \
	test -z "$(ls "$T/a9/state/spool/"*.entry 2>/dev/null)"
check "agent 1 keeps running" kill -0 $pid1
check "agent 1 stops well" stop_pid $pid1

if [ "${TYPED_AGENTS_S3:-0}" = 1 ]; then
	# The current metadata and the live files, fetched from the stub.
	typed_s3_fetch
	meta=$T/meta.json
	v=$(curl -sf "http://127.0.0.1:$STUB_PORT/bkt/typed/default/logs/metadata/version-hint.text")
	curl -sf "http://127.0.0.1:$STUB_PORT/bkt/typed/default/logs/metadata/v$v.metadata.json" -o "$meta"
	files=("$d"/got/*.parquet)
else
	TBL=$T/wh/default/logs
	meta=$(newest_metadata "$TBL")
	mapfile -t files < <(live_files "$TBL")
fi
python3 - "$meta" >"$T/schema.out" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(" ".join(sorted("%s:%s" % (f["name"], f["type"]) for f in s["fields"] if f["id"] > 14)))
# A field keeps its id in every schema it is in (under any name), and no id names two
# different fields' types but by promotion.
ids = {}
for x in m["schemas"]:
    for f in x["fields"]:
        ids.setdefault(f["id"], set()).add(json.dumps(f["type"]).strip("\""))
print("ids", "ok" if all(t <= {"int", "long"} or len(t) == 1 for t in ids.values()) else ids)
PY
check "every column kept with its type: code promoted to long, lat renamed, user a string" diff - "$T/schema.out" <<'OUT'
code:long latency_ms:double region:string status:int took:double user:string
ids ok
OUT
node "$READER/read_by_id.mjs" "$meta" "${files[@]}" >"$T/rows" 2>"$T/rows.err"
check "DuckDB, arrow-rs and hyparquet read the same rows by field id" grep -q "read the same 320 rows" "$T/rows.err"
# Per agent: 40 lines, each once, and exactly its own columns filled, with its values.
python3 - "$T/rows" >"$T/agents.out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
head, rows = rows[0], rows[1:]
names = [h.split(":")[0] for h in head]
cols = {1: {"status"}, 2: {"status", "took"}, 3: {"took", "user"}, 4: {"status", "region"},
        5: {"code"}, 6: {"user", "code"}, 7: {"region", "code", "status"}, 8: {"latency_ms"}}
want = {"status": lambda i: str(200 + i), "took": lambda i: "%d.5" % i, "user": lambda i: "u%d" % i,
        "region": lambda i: "r%d" % i, "code": lambda i: str(i), "latency_ms": lambda i: "%d.25" % i}
for k in range(1, 9):
    mine = [r for r in rows if r[1].startswith("a%d-" % k)]
    msgs = sorted(int(r[1].split("-")[1]) for r in mine)
    bad = 0
    for r in mine:
        i = int(r[1].split("-")[1])
        for n, v in zip(names[2:], r[2:]):
            if v != (want[n](i) if n in cols[k] else None):
                bad += 1
    print("agent %d: %s, %d values wrong" % (k, "lines 1-40 once" if msgs == list(range(1, 41)) else msgs, bad))
print("others:", len([r for r in rows if not any(r[1].startswith("a%d-" % k) for k in range(1, 9))]))
PY
check "every agent's lines once, its columns filled, the others null" diff - "$T/agents.out" <<'OUT'
agent 1: lines 1-40 once, 0 values wrong
agent 2: lines 1-40 once, 0 values wrong
agent 3: lines 1-40 once, 0 values wrong
agent 4: lines 1-40 once, 0 values wrong
agent 5: lines 1-40 once, 0 values wrong
agent 6: lines 1-40 once, 0 values wrong
agent 7: lines 1-40 once, 0 values wrong
agent 8: lines 1-40 once, 0 values wrong
others: 0
OUT
finish
