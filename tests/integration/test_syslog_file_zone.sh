#!/usr/bin/env bash
# Debian's rsyslog writes /var/log/syslog in its traditional format: local time without
# an offset. On a device whose zone is not UTC (here central Europe, as a POSIX TZ rule so
# that no tz database is needed), `parser: syslog_file` read those times as UTC: every
# ts an hour off (two in summer), and an aggregation over them dropped every event as too
# far ahead of the clock. A tail input's zone is now the system's (zone: local) unless
# given: the lines written a minute ago are a minute old, the aggregation takes them all,
# and `zone: UTC` still reads them as UTC. An application's log in local time is read
# with `timestamp: {zone: local}`.
source "$(dirname "$0")/lib.sh"
d="$T/zone"
mkdir -p "$d/logs"
export TZ="CET-1CEST,M3.5.0,M10.5.0/3"
now=$(date +%s)
for i in 1 2 3 4 5; do
	echo "$(date -d "@$((now - 60 + i))" '+%b %e %H:%M:%S') dev app[1]: line $i"
done >"$d/logs/syslog"
conf() { # conf NAME [ZONE-KEY]
	cat >"$d/$1.yaml" <<YAML
agent: { id: zone-$1, state_dir: $d/$1/state }
inputs:
  - { type: tail, paths: ["$d/logs/syslog"], start_at: beginning, parser: syslog_file ${2:-} }
lake: { warehouse: $d/$1/wh }
aggregations:
  - { name: per, from: [0], window: 1m, metrics: [count] }
YAML
}
conf local
conf utc ", zone: UTC"
# An application's log in local time without an offset, read with a timestamp option.
for i in 1 2 3 4 5; do
	echo "$(date -d "@$((now - 60 + i))" '+%Y-%m-%d %H:%M:%S'),123 INFO line $i"
done >"$d/logs/app.log"
cat >"$d/app.yaml" <<YAML
agent: { id: zone-app, state_dir: $d/app/state }
inputs:
  - type: tail
    paths: ["$d/logs/app.log"]
    start_at: beginning
    timestamp: { field: message, format: "%Y-%m-%d %H:%M:%S,%f", zone: local }
lake: { warehouse: $d/app/wh }
YAML
"$FLOE_BIN" check -c "$d/local.yaml" >"$d/check" 2>&1 || true
check "floe check shows the zone a tail input takes" grep -q '^    zone: "local"' "$d/check"
check "run --once (local)" "$FLOE_BIN" run -c "$d/local.yaml" --once --log-level info >"$d/local.log" 2>&1
check "run --once (UTC)" "$FLOE_BIN" run -c "$d/utc.yaml" --once --log-level info >"$d/utc.log" 2>&1
check "local: the aggregation takes every line" grep -q "aggregation per: 5 events .* 0 late (0 dropped, 0 too far ahead" "$d/local.log"
check "UTC: an hour ahead, every line too far ahead of the clock" grep -q "aggregation per: 5 events .* 5 late (5 dropped, 5 too far ahead" "$d/utc.log"
rows_sql "$d/local/wh/default/logs" \
	"select min(epoch(ts))::bigint, max(epoch(ts))::bigint from t" >"$d/ts"
check "local: ts are the lines' UTC times ($(cat "$d/ts"))" \
	grep -q "^\[\"$((now - 59))\",\"$((now - 55))\"\]$" "$d/ts"
check "run --once (an application's log, timestamp.zone: local)" \
	"$FLOE_BIN" run -c "$d/app.yaml" --once --log-level warn
rows_sql "$d/app/wh/default/logs" "select min(epoch_ms(ts)), max(epoch_ms(ts)) from t" >"$d/ts-app"
check "timestamp.zone local: ts are the lines' UTC times ($(cat "$d/ts-app"))" \
	grep -q "^\[\"$(((now - 59) * 1000 + 123))\",\"$(((now - 55) * 1000 + 123))\"\]$" "$d/ts-app"
rows_sql "$d/utc/wh/default/logs" "select min(epoch(ts))::bigint from t" >"$d/ts-utc"
off=$(date -d "@$now" +%z) # +0100 or +0200
secs=$(((10#${off:1:2} * 60 + 10#${off:3:2}) * 60))
check "UTC: ts are the local times read as UTC ($(cat "$d/ts-utc"))" \
	grep -q "^\[\"$((now - 59 + secs))\"\]$" "$d/ts-utc"
finish
