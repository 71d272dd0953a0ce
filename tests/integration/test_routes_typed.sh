#!/usr/bin/env bash
# Typed columns on every raw table, each with its own plan: an input written to `access`
# with parser apache_combined gives that table its parser's natural columns (status int,
# bytes long) at parse time; a routed logfmt input's records are converted once routed,
# under the plan of the table they go to: `security` declares uid as int, `logs` declares
# nothing and keeps every field in attrs. DuckDB reads the typed columns; a value that
# does not convert is null, kept in attrs and counted. Each table's plan is saved beside
# its spool. A restart with a column added to security's list evolves security's schema
# only.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/routes_lib.sh"

d="$T/rt"
mkdir -p "$d/logs"
# accesslines FILE FROM N / authlines FILE FROM N: unique lines FROM..FROM+N-1.
accesslines() {
	python3 - "$@" <<'PY'
import sys
f, a, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, "a") as out:
    for i in range(a, a + n):
        out.write('10.0.0.%d - - [10/Oct/2026:13:55:%02d +0000] "GET /r%d HTTP/1.1" %d %d "-" "curl/8.5"\n'
                  % (i % 250, i % 60, i, [200, 404, 500][i % 3], i + 1))
PY
}
authlines() {
	python3 - "$@" <<'PY'
import sys
f, a, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, "a") as out:
    for i in range(a, a + n):
        app = "sshd" if i % 2 == 0 else "cron"
        out.write(f"app={app} uid={i} n={i * 10} status=x{i}\n")
PY
}
conf() { # conf SECURITY-COLUMNS
	cat >"$d/floe.yaml" <<YAML
agent: {id: routes-typed, state_dir: $d/state}
inputs:
$(access_and_auth "$d")
tables:
  logs: { commit_interval: 1s }
  access: { partition_by: [], commit_interval: 1s }
  security: { partition_by: [], commit_interval: 1s, columns: $1 }
lake: {warehouse: $d/wh}
YAML
}
accesslines "$d/logs/access.log" 0 300
authlines "$d/logs/auth.log" 0 200
echo "app=sshd uid=oops n=1" >>"$d/logs/auth.log"
conf "[{name: uid, type: int}]"
check "floe check accepts columns on a table other than logs" "$FLOE_BIN" check -c "$d/floe.yaml"
check "run --once" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
q() { rows_sql "$d/wh/default/$1" "$2"; }
check "access: status INTEGER and bytes BIGINT, from the parser's natural types" \
	test "$(q access "select typeof(status), typeof(bytes), count(*), sum(bytes) from t group by all")" \
	= '["INTEGER","BIGINT","300","45150"]'
check "access: status is no longer in attrs" \
	test "$(q access "select count(*) from t where attrs['status'] is not null")" = '["0"]'
check "access: 100 rows of each status" \
	test "$(q access "select count(distinct status), min(status), max(status) from t where status in (200, 404, 500)")" \
	= '["3",200,500]'
check "security: uid INTEGER (converted once routed), 101 sshd rows" \
	test "$(q security "select typeof(uid), count(*), sum(uid) from t group by all")" \
	= '["INTEGER","101","9900"]'
check "security: uid that does not convert is null, its text kept in attrs" \
	test "$(q security "select count(*) from t where uid is null and attrs['uid'] = 'oops'")" = '["1"]'
check "security: fields no column takes stay in attrs (n, status)" \
	test "$(q security "select count(*) from t where attrs['n'] is not null and attrs['status'] like 'x%'")" \
	= '["100"]'
check "logs: the 100 cron rows, every field in attrs" \
	test "$(q logs "select count(*) from t where attrs['uid'] is not null and attrs['status'] is not null")" \
	= '["100"]'
check "the conversion failure is counted in metrics.json" \
	grep -q '"conversion_failures":{[^}]*"uid":1' "$d/state/metrics.json"
check "each table's plan is saved beside its spool" \
	test -s "$d/state/tables/access/columns" -a -s "$d/state/tables/security/columns"
check "logs, with no typed column, has no plan" test ! -e "$d/state/columns"

# schemas TABLE: its schemas' count and its current schema's fields after the built-in ones.
schemas() {
	python3 - "$d/wh/default/$1" <<'PY'
import json, sys, glob, re
meta = sorted(glob.glob(sys.argv[1] + "/metadata/v*.metadata.json"),
              key=lambda p: int(re.search(r"v(\d+)\.metadata", p).group(1)))[-1]
m = json.load(open(meta))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(len(m["schemas"]), " ".join("%s:%s" % (f["name"], f["type"]) for f in s["fields"][12:]))
PY
}
schemas access >"$d/access.before"
schemas logs >"$d/logs.before"
check "security's schema has uid" grep -q ' uid:int$' <(schemas security)

# A restart with n added to security's list: security evolves, the others do not.
conf "[{name: uid, type: int}, {name: n, type: long}]"
accesslines "$d/logs/access.log" 300 30
authlines "$d/logs/auth.log" 300 20
check "restart with a column added to security" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "security's schema has uid and n now" grep -q ' uid:int n:long$' <(schemas security)
check "access's schema is unchanged" test "$(schemas access)" = "$(cat "$d/access.before")"
check "logs' schema is unchanged" test "$(schemas logs)" = "$(cat "$d/logs.before")"
check "security: n BIGINT on the new rows, null on the old ones" \
	test "$(duck "select typeof(n), count(n), sum(n), count(*) from read_parquet([$(live_list \
		"$d/wh/default/security")], union_by_name = true) group by all")" \
	= '["BIGINT","10","30900","111"]'
check "access holds every access line once" \
	test "$(q access "select count(*), count(distinct path) from t")" = '["330","330"]'
finish
