#!/usr/bin/env bash
# A route rule or an aggregation's where on a numeric field (severity, facility, offset)
# compares the field's number: written as a syslog name ("err", "warning") or with a
# leading zero ("04"), it takes what it names (it took nothing before, and every record
# went silently to the input's table); a value the field can never have (severity 9, a
# name of no severity), or a pattern that matches no severity's number, is refused by
# floe check (exit 2) with the key and the range, and logged by floe run, which runs
# with the rule taking nothing.
source "$(dirname "$0")/lib.sh"

d="$T/sev"
mkdir -p "$d/logs"
# Parsed levels give the severity column: error and err are 3, warning 4, info 6, and a
# rule names them as the parsers do (fatal is 0, as a parsed level=fatal).
printf '%s\n' 'level=error msg=a' 'level=info msg=b' 'level=warning msg=c' 'level=err msg=d' \
	'level=debug msg=e' >"$d/logs/app.log"
conf() {
	cat >"$d/floe.yaml" <<YAML
agent: {id: sev, state_dir: $d/state}
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: logfmt
    route:
      - { field: severity, equals: $1, table: alerts }
      - { field: severity, equals: "04", table: alerts }
tables:
  alerts: { partition_by: [] }
aggregations:
  - { name: errors, window: 1h, where: { field: severity, equals: $2 }, metrics: [count] }
lake: {warehouse: $d/wh}
YAML
}

conf err Error
check "floe check accepts severity names and a leading zero" "$FLOE_BIN" check -c "$d/floe.yaml"
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check.out" 2>&1 || true
check "and shows them as the numbers compared" \
	test "$(grep -c 'equals: "[34]"' "$d/check.out")" = 3
check "run --once" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "alerts holds the err and warning lines (a, c, d)" \
	test "$(rows_sql "$d/wh/default/alerts" "SELECT string_agg(message, ',' ORDER BY message) FROM t")" = '["a,c,d"]'
check "logs holds the others (b, e)" \
	test "$(rows_sql "$d/wh/default/logs" "SELECT string_agg(message, ',' ORDER BY message) FROM t")" = '["b,e"]'
check "the aggregation's where counts the two err lines" \
	test "$(rows_sql "$d/wh/default/errors" "SELECT sum(count) FROM t")" = '["2"]'

# Values no severity has: refused, with the key and what the field takes.
conf 9 err
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/bad.out" 2>&1 || rc=$?
check "floe check refuses severity 9 (exit 2)" test $rc = 2
check "naming the key and the range" grep -q \
	"key 'inputs\[0\].route\[0\].equals': severity is a number, 0 (emerg) to 7 (debug), or a level's name: '9' is neither" \
	"$d/bad.out"
# A running agent logs it and runs with the rule as written, taking nothing: an earlier
# release took such a file without a word, and refusing it at run would stop a device,
# whose last good copy has the same rule, at the upgrade.
rm -rf "$d/state" "$d/wh"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once >"$d/run9.out" 2>&1 || rc=$?
check "floe run runs with severity 9 (exit 0)" test $rc = 0
check "and logs it as a warning with the key" grep -q \
	"warn.*key 'inputs\[0\].route\[0\].equals': severity is a number.*never equals it (floe check refuses it" \
	"$d/run9.out"
check "the warning line (severity 4) went by the second rule, the rest to logs" \
	test "$(rows_sql "$d/wh/default/logs" "SELECT count(*) FROM t")" = '["4"]'
conf err severe
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/bad.out" 2>&1 || rc=$?
check "floe check refuses a where on a name no severity has (exit 2)" test $rc = 2
check "naming the aggregation's key" grep -q "key 'aggregations\[0\].where.equals': severity is a number" \
	"$d/bad.out"
conf err err
sed -i 's/equals: "04"/matches: "^(warning|notice)$"/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/bad.out" 2>&1 || rc=$?
check "floe check refuses a pattern of names on severity (exit 2)" test $rc = 2
check "saying it is matched as its number" grep -q \
	"key 'inputs\[0\].route\[1\].matches': severity is matched as its number, 0 to 7" "$d/bad.out"
finish
