#!/usr/bin/env bash
# Parsed fields that name a column fill it (README, inputs[].parser): JSON events from
# three hosts that are not this machine, partitioned by host and aggregated by host.
# The host column, the partitions and the aggregate's groups are the events' hosts,
# never the agent's; message is the msg field and ts the event's time. A logfmt line
# whose ts is not RFC 3339 keeps the receive time and is counted.
source "$(dirname "$0")/lib.sh"
d="$T/pc"
mkdir -p "$d/logs"
for i in $(seq 0 29); do
	printf '{"time":"2026-03-01T10:%02d:00Z","host":"dev-%d","msg":"event %d","level":"info"}\n' \
		"$i" $((i % 3)) "$i"
done >"$d/logs/app.log"
printf '%s\n' 'ts=1772359200 host=dev-9 msg=epoch' >"$d/logs/other.log"
cat >"$d/floe.yaml" <<YAML
agent: { id: pc-agent, state_dir: $d/state }
inputs:
  - type: tail
    paths: ["$d/logs/app.log"]
    start_at: beginning
    parser: json
  - type: tail
    paths: ["$d/logs/other.log"]
    start_at: beginning
    parser: logfmt
tables:
  logs: { partition_by: [host] }
aggregations:
  - { name: by_host, from: [0], window: 1h, group_by: [host], metrics: [count] }
lake: { warehouse: $d/wh }
YAML
check "run --once succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
list=$(live_files "$d/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select host, count(*), min(message), epoch_ms(min(ts)) from read_parquet([$list])
	where source like '%app.log' group by host order by host" >"$d/hosts"
cat >"$d/want" <<'OUT'
["dev-0","10","event 0","1772359200000"]
["dev-1","10","event 1","1772359260000"]
["dev-2","10","event 11","1772359320000"]
OUT
check "the host column is the event's host, message its msg, ts its time" cmp "$d/want" "$d/hosts"
[ -f "$d/want" ] && ! cmp -s "$d/want" "$d/hosts" && cat "$d/hosts"
parts=$(live_files "$d/wh/default/logs" | sed -n 's#.*/data/\(host=[^/]*\)/.*#\1#p' | sort -u | paste -sd' ')
check "partitioned by the events' hosts ($parts)" test "$parts" = "host=dev-0 host=dev-1 host=dev-2 host=dev-9"
alist=$(live_files "$d/wh/default/by_host" | sed "s/.*/'&'/" | paste -sd,)
got=$(duck "select host, sum(count) from read_parquet([$alist]) group by host order by host" | paste -sd' ')
check "group_by [host] groups by the events' hosts ($got)" \
	test "$got" = '["dev-0","10"] ["dev-1","10"] ["dev-2","10"]'
got=$(duck "select host, message, attrs['ts'], ts = received_at from read_parquet([$list])
	where source like '%other.log'" | paste -sd' ')
check "a ts that is not RFC 3339 keeps the receive time ($got)" \
	test "$got" = '["dev-9","epoch","1772359200",true]'
check "it is counted" grep -q '"ts_failures":1,' "$d/state/metrics.json"
check "and logged, with the way out" grep -q "set the input's timestamp option" "$d/err"
finish
