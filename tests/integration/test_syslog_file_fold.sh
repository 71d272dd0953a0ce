#!/usr/bin/env bash
# A traditional syslog file (times without a year or zone, zone: local, TZ
# Europe/Berlin) read weeks after it was written: the spring forward, the fall back whose
# hour 02:00-03:00 comes twice, and a month's end, a line every 30 s. Before, the
# repeated hour was read at the offset nearer the receive time, the same for both
# passes (a month later both readings are as far): the first pass was put an hour late,
# on top of the second (120 of 1,560 times wrong), and an aggregation took 110 of them as
# late and dropped them. Now the line before it decides (a log is written in time
# order): every time equals the one the line says it was written at (in UTC in its
# text), no event is late, and the aggregates' counts sum to every line. The same for an
# application's log of local times read by the timestamp option (zone: local).
source "$(dirname "$0")/lib.sh"

[ -e /usr/share/zoneinfo/Europe/Berlin ] || skip "no tzdata (/usr/share/zoneinfo/Europe/Berlin)"
d="$T/fold"
mkdir -p "$d/logs"
TZ=Europe/Berlin python3 - "$d/logs/syslog" "$d/logs/app.log" <<'PY'
import sys, time
out, app = [], []
def run(start, hours):
    for k in range(hours * 120):
        t = start + 30 * k
        local = time.strftime("%b %e %H:%M:%S", time.localtime(t))
        utc = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(t))
        out.append("%s host1 app%d[1]: written at %s" % (local, len(out) % 3, utc))
        app.append("%s app%d written at %s" % (time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t)), len(app) % 3, utc))
run(1774738800, 4)  # 2026-03-28 23:00 UTC: the spring forward at 01:00 UTC
run(1792879200, 5)  # 2026-10-24 22:00 UTC: the fall back at 01:00 UTC
run(1793484000, 4)  # 2026-10-31 22:00 UTC: midnight, a month's end
open(sys.argv[1], "w").write("\n".join(out) + "\n")
open(sys.argv[2], "w").write("\n".join(app) + "\n")
PY
cat >"$d/floe.yaml" <<YAML
agent: { id: fold, state_dir: $d/state }
inputs:
  - type: tail
    paths: ["$d/logs/syslog"]
    start_at: beginning
    parser: syslog_file
    zone: local
  - type: tail
    paths: ["$d/logs/app.log"]
    start_at: beginning
    timestamp: { field: message, format: "%Y-%m-%d %H:%M:%S", zone: local }
tables:
  logs: {}
lake: { warehouse: $d/wh }
aggregations:
  - { name: per_app, from: [0], window: 5m, group_by: [app], metrics: [count] }
  - { name: per_app2, from: [1], window: 5m, metrics: [count] }
YAML
rc=0
TZ=Europe/Berlin "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "run --once: exit 0" test $rc = 0
check "every line is read (2 x 1,560)" test "$(snapshot_records "$d/wh/default/logs")" = 3120
right=$(rows_sql "$d/wh/default/logs" "SELECT count(*) FROM t WHERE strftime(ts AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S') || '+00:00' = regexp_extract(message, 'written at (.*)', 1)")
check "every time is the one the line was written at ($right of 3,120)" test "$right" = '["3120"]'
check "no event is late" test "$(metric "$d/state/metrics.json" agg_late)" = 0
check "the aggregate's counts sum to every line" \
	test "$(rows_sql "$d/wh/default/per_app" "SELECT sum(count)::BIGINT::VARCHAR FROM t")" = '["1560"]' -a "$(rows_sql "$d/wh/default/per_app2" "SELECT sum(count)::BIGINT::VARCHAR FROM t")" = '["1560"]'
finish
