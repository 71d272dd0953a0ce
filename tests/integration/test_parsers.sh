#!/usr/bin/env bash
# Parsers fill attrs, the timestamp option sets ts, a level field sets severity and an
# app or service field app; lines that do not parse are kept whole and counted.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/json" "$T/logfmt" "$T/regex"
cat >"$T/json/app.log" <<'LOG'
{"time":"2026-03-01T10:00:00.250Z","level":"error","msg":"disk full","dev":{"name":"sda","free":0}}
{"time":"2026-03-01T10:00:01Z","level":"info","msg":"retry ok","tags":["a","b"],"service":"api"}
not json at all
LOG
cat >"$T/logfmt/app.log" <<'LOG'
ts=2026-03-01T10:00:02+02:00 level=warn msg="slow \"query\"" took=1.5s
ts=bogus level=debug msg=x
LOG
printf '%s\n' 'Dec 10 06:55:46 LabSZ sshd[24200]: Invalid user webmaster' >"$T/regex/auth.log"

cfg() { # cfg NAME PARSER-YAML TIMESTAMP-YAML
	cat >"$T/$1.yaml" <<YAML
agent: { id: p-$1, state_dir: $T/state-$1 }
inputs:
  - type: tail
    paths: ["$T/$1/*.log"]
    start_at: beginning
$2
$3
lake: { warehouse: $T/wh-$1 }
YAML
}
cfg json "    parser: json" "    timestamp: { field: time, format: rfc3339 }"
cfg logfmt "    parser: logfmt" "    timestamp: { field: ts, format: rfc3339 }"
cfg regex '    parser: regex
    pattern: "^(?<when>[A-Z][a-z]{2} [ 0-9]{2} [0-9:]{8}) (?<host>[^ ]+) (?<app>[a-z]+)\\[(?<pid>[0-9]+)\\]: (?<text>.*)$"' \
	"    timestamp: { field: when, format: syslog }"
# A pattern written in the Perl style (\d, \s, [\w.]) as many users write it.
mkdir -p "$T/perl"
printf '%s\n' '10.1.2.3 - - [10/Oct/2026:13:55:36 +0000] "GET /a.gif HTTP/1.1" 200 2326' >"$T/perl/access.log"
cfg perl '    parser: regex
    pattern: '"'"'^(?P<client>\d+\.\d+\.\d+\.\d+) \S+ \S+ \[(?P<time>[^]]+)\] "(?P<method>[A-Z]+) (?P<path>[\w./-]+) [^"]+" (?P<status>\d{3}) (?P<bytes>\d+)$'"'" ""
# The built-in access-log parser: the same fields without a pattern, ts from the line;
# an error-log line among them is kept and counted.
mkdir -p "$T/nginx"
cat >"$T/nginx/access.log" <<'LOG'
10.1.2.3 - bob [10/Oct/2026:13:55:36 +0200] "GET /a.gif?x=1 HTTP/1.1" 200 2326 "-" "curl/8.5"
[Sun Dec 04 04:47:44 2005] [notice] workerEnv.init() ok
LOG
cfg nginx "    parser: nginx_combined" ""
# The built-in syslog_file parser on the line the regex case parses with a pattern.
mkdir -p "$T/sysfile"
cp "$T/regex/auth.log" "$T/sysfile/auth.log"
cfg sysfile "    parser: syslog_file" ""
for n in json logfmt regex perl nginx sysfile; do
	check "$n: run succeeds" "$FLOE_BIN" run -c "$T/$n.yaml" --once --log-level warn 2>"$T/$n.err"
	live_files "$T/wh-$n/default/logs" >"$T/$n.files"
done
check "json: a parse failure is logged with the line" \
	grep -q 'input 1: the json parser failed on: "not json at all"' "$T/json.err"
check "logfmt: a timestamp failure is logged with the line" \
	grep -q 'input 1: the timestamp failed on: "ts=bogus level=debug msg=x"' "$T/logfmt.err"
q() { # q NAME SQL-SELECT
	local list
	list=$(sed "s/.*/'&'/" "$T/$1.files" | paste -sd,)
	duck "select $2 from read_parquet([$list]) order by \"offset\""
}
q json "epoch_ms(ts), severity, attrs['msg'], attrs['dev.name'], attrs['dev.free'], attrs['tags'], app" >"$T/json.out"
check "json: fields, flattened keys, arrays as JSON, ts and severity" \
	grep -qx '\["1772359200250",3,"disk full","sda","0",null,null\]' "$T/json.out"
check "json: second line" grep -qx '\["1772359201000",6,"retry ok",null,null,"\[\\"a\\",\\"b\\"\]","api"\]' "$T/json.out"
check "json: a line that is not JSON is kept with no attrs and receive time" \
	bash -c "sed -n 3p '$T/json.out' | grep -q '^\[\"[0-9]*\",null,null,null,null,null,null\]$'"
check "json: metrics count one parse failure" grep -q '"parse_failures":1,' "$T/state-json/metrics.json"
q logfmt "epoch_ms(ts), severity, attrs['msg'], attrs['took']" >"$T/logfmt.out"
check "logfmt: quoted values, offsets in timestamps, level" \
	grep -qx '\["1772352002000",4,"slow \\"query\\"","1.5s"\]' "$T/logfmt.out"
check "logfmt: a bad timestamp keeps the receive time and is counted" \
	grep -q '"ts_failures":1,' "$T/state-logfmt/metrics.json"
q regex "attrs['app'], attrs['pid'], attrs['text'], month(ts), day(ts), app" >"$T/regex.out"
check "regex: named groups, a syslog timestamp, the app column" \
	grep -qx '\["sshd","24200","Invalid user webmaster","12","10","sshd"\]' "$T/regex.out"
q perl "attrs['client'], attrs['method'], attrs['path'], attrs['status'], attrs['bytes']" >"$T/perl.out"
check "regex: Perl-style escapes (\\d, \\S, [\\w./-]) match" \
	grep -qx '\["10.1.2.3","GET","/a.gif","200","2326"\]' "$T/perl.out"
check "regex: Perl-style escapes leave no parse failure" grep -q '"parse_failures":0,' "$T/state-perl/metrics.json"

q nginx "epoch_ms(ts), client, user, method, path, protocol, status, bytes, referer, user_agent, cardinality(attrs)" >"$T/nginx.out"
check "nginx_combined: fields, the request split, ts from the line, every field a column (status and bytes typed), attrs empty" \
	grep -qx '\["1791633336000","10.1.2.3","bob","GET","/a.gif?x=1","HTTP/1.1",200,"2326",null,"curl/8.5","0"\]' "$T/nginx.out"
check "nginx_combined: an error-log line is counted" grep -q '"parse_failures":1,' "$T/state-nginx/metrics.json"
q sysfile "attrs['host'], attrs['app'], pid, attrs['msg'], month(ts), day(ts), app, proc_id" >"$T/sysfile.out"
check "syslog_file: host, tag, pid (an int column), text, a syslog timestamp, the app and proc_id columns" \
	grep -qx '\["LabSZ","sshd",24200,"Invalid user webmaster","12","10","sshd","24200"\]' "$T/sysfile.out"

# A parser failing on every line says so once a minute, with a sample, not once a line.
mkdir -p "$T/many"
for i in $(seq 1 500); do echo "plain line $i"; done >"$T/many/app.log"
cfg many "    parser: json" ""
"$FLOE_BIN" run -c "$T/many.yaml" --once --log-level warn 2>"$T/many.err"
check "500 failures: one log line" test "$(grep -c 'the json parser failed' "$T/many.err")" = 1
check "500 failures: all counted" grep -q '"parse_failures":500,' "$T/state-many/metrics.json"
finish
