#!/usr/bin/env bash
# Conversion failures are counted per raw table: access (apache_combined, status int from
# the parser) converts every status; security and logs each declare status int and get
# logfmt values that do not convert, in different numbers. metrics.json counts each
# table's column under tables.NAME.conversion_failures and keeps the total per column
# name; /metrics labels each table's counter table="NAME",column="status" and keeps the
# total by column.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/routes_lib.sh"

d="$T/conv"
mkdir -p "$d/logs"
python3 - "$d/logs" <<'PY'
import sys
d = sys.argv[1]
with open(d + "/access.log", "w") as out:
    for i in range(30):
        out.write('10.0.0.%d - - [10/Oct/2026:13:55:%02d +0000] "GET /r%d HTTP/1.1" %d %d "-" "curl/8.5"\n'
                  % (i, i, i, [200, 404, 500][i % 3], i + 1))
with open(d + "/auth.log", "w") as out:
    # 7 sshd lines to security, 3 of them with a status that is no int; 5 cron lines to
    # logs, 2 of them with one.
    for i in range(7):
        out.write("app=sshd n=%d status=%s\n" % (i, "x%d" % i if i < 3 else "%d" % (200 + i)))
    for i in range(5):
        out.write("app=cron n=%d status=%s\n" % (i, "y%d" % i if i < 2 else "%d" % (300 + i)))
PY
cat >"$d/floe.yaml" <<YAML
agent: {id: conv-tables, state_dir: $d/state, http: {listen: "127.0.0.1:0"}}
inputs:
$(access_and_auth "$d")
tables:
  logs: { commit_interval: 1s, columns: [{name: status, type: int}] }
  access: { partition_by: [], commit_interval: 1s }
  security: { partition_by: [], commit_interval: 1s, columns: [{name: status, type: int}] }
lake: {warehouse: $d/wh}
YAML
check "run --once" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "metrics.json counts each table's status apart, and the total" python3 - "$d/state/metrics.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
t = m["tables"]
got = {n: t[n].get("conversion_failures", {}).get("status") for n in ("logs", "access", "security")}
assert got == {"logs": 2, "access": 0, "security": 3}, got
assert m["conversion_failures"]["status"] == 5, m["conversion_failures"]
PY
echo "app=sshd n=99 status=zz" >>"$d/logs/auth.log"
run_serving "$d/floe.yaml" "$d/err"
check "the agent serves /metrics" test -n "$port"
# The counters of the start: the new line is counted once it is read and committed.
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/prom" || true
	grep -q 'floe_table_column_conversion_failures_total{table="security",column="status"} 1$' "$d/prom" && break
	sleep 0.1
done
check "/metrics: security's status, labelled by table" \
	grep -qx 'floe_table_column_conversion_failures_total{table="security",column="status"} 1' "$d/prom"
check "/metrics: access's status, apart" \
	grep -qx 'floe_table_column_conversion_failures_total{table="access",column="status"} 0' "$d/prom"
check "/metrics: logs' status, apart" \
	grep -qx 'floe_table_column_conversion_failures_total{table="logs",column="status"} 0' "$d/prom"
check "/metrics: the total by column is kept" \
	grep -qx 'floe_column_conversion_failures_total{column="status"} 1' "$d/prom"
stop_pid "$pid" 30
finish
