#!/usr/bin/env bash
# tables.logs.message: unparsed leaves the message out of the lines a parser took apart
# (their fields hold what they said) and keeps it for every line the parser did not
# match, so nothing is lost: with an access-log parser and its typed columns, with
# json, and with columns: [] (every field in attrs). The table's message field becomes
# optional (and it alone: ts, received_at, host and source stay required), the files
# declare it optional, and the default (keep) still writes every line's message.
source "$(dirname "$0")/lib.sh"

cfg() { # cfg NAME PARSER-YAML TABLE-YAML
	mkdir -p "$T/$1"
	AGENT_ID=msg-$1 INPUT_KEYS="    $2" write_config "$T/$1.yaml" "$T/state-$1" "$T/wh-$1" \
		"[\"$T/$1/*.log\"]" "$3"
}
tbl() { echo "$T/wh-$1/default/logs"; }
files() { live_list "$(tbl "$1")"; }
# The current schema's message field, required or optional, and the required fields' ids.
message_field() {
	python3 - "$(newest_metadata "$(tbl "$1")")" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
f = [x for x in s["fields"] if x["id"] == 11][0]
print(f["name"], "required" if f["required"] else "optional",
      "required:" + ",".join(str(x["id"]) for x in s["fields"] if x["required"]))
PY
}

access() {
	cat >"$T/$1/access.log" <<'LOG'
10.1.2.3 - - [10/Oct/2026:13:55:36 +0000] "GET /a HTTP/1.1" 200 2326 "-" "curl/8.5"
this line is not an access log line
10.1.2.4 - - [10/Oct/2026:13:55:37 +0000] "POST /b HTTP/1.1" 500 - "https://x/" "curl/8.5"
LOG
}

# 1. apache_combined with its typed columns: parsed lines without a message, the line
# the parser did not match with its own; every field of the parsed ones is kept.
cfg typed "parser: apache_combined" "    message: unparsed"
access typed
check "typed: check shows the key" grep -q 'message.*unparsed' <("$FLOE_BIN" check -c "$T/typed.yaml" 2>&1)
check "typed: run" "$FLOE_BIN" run -c "$T/typed.yaml" --once --log-level error
duck "select message, status, bytes, client, method, path, referer
      from read_parquet([$(files typed)]) order by \"offset\"" >"$T/typed.out"
check "typed: parsed lines have no message, their fields are all there; the other line keeps its text" \
	diff - "$T/typed.out" <<<'[null,200,"2326","10.1.2.3","GET","/a",null]
["this line is not an access log line",null,null,null,null,null,null]
[null,500,null,"10.1.2.4","POST","/b","https://x/"]'
check "typed: the unmatched line is counted as a parse failure" \
	grep -q '"parse_failures":1' "$T/state-typed/metrics.json"
check "typed: the table's message field is optional, ts, received_at, host and source stay required" \
	test "$(message_field typed)" = "message optional required:1,2,3,4"
check "typed: the files declare message optional" test "$(duck "select distinct repetition_type from parquet_schema([$(files typed)]) where name = 'message'")" = '["OPTIONAL"]'

# 2. json: the message came from the msg field, which stays in attrs.
cfg json "parser: json" "    message: unparsed"
printf '%s\n' '{"msg":"started","level":"info","user":"ann"}' 'not json at all' >"$T/json/app.log"
check "json: run" "$FLOE_BIN" run -c "$T/json.yaml" --once --log-level error
duck "select message, attrs['msg'], attrs['user'] from read_parquet([$(files json)]) order by \"offset\"" >"$T/json.out"
check "json: msg kept in attrs, the line that is not json keeps its message" diff - "$T/json.out" <<<'[null,"started","ann"]
["not json at all",null,null]'

# 3. columns: [] (no typed column): the table is still relaxed by the commit.
cfg attrs "parser: apache_combined" "    message: unparsed
    columns: []"
access attrs
check "attrs: run" "$FLOE_BIN" run -c "$T/attrs.yaml" --once --log-level error
duck "select message is null, attrs['status'] from read_parquet([$(files attrs)]) order by \"offset\"" >"$T/attrs.out"
check "attrs: parsed lines without a message, fields in attrs" diff - "$T/attrs.out" <<<'[true,"200"]
[false,null]
[true,"500"]'
check "attrs: the table's message field is optional, the others stay required" \
	test "$(message_field attrs)" = "message optional required:1,2,3,4"

# 4. The default keeps every line's message, and the table's field stays required.
cfg keep "parser: apache_combined" "    columns: []"
access keep
check "keep: run" "$FLOE_BIN" run -c "$T/keep.yaml" --once --log-level error
check "keep: every line has its message" \
	test "$(duck "select count(*) from read_parquet([$(files keep)]) where message like '%/a HTTP%' or message like 'this line%' or message like '%/b HTTP%'")" = '["3"]'
check "keep: the table's message field stays required" test "$(message_field keep)" = "message required required:1,2,3,4,11"
finish
