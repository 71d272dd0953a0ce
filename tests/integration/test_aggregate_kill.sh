#!/usr/bin/env bash
# Aggregates exactly once across kill -9: a generated JSON stream (event time
# 10 ms apart, five apps, 300 users, an integer latency so that sums are exact in any
# order) is appended in bursts while floe runs and is killed at random moments,
# AGG_KILLS times (default 10; the issue's long run is 30), then a final run --once reads
# the rest. The aggregate table must then hold what DuckDB's GROUP BY over the raw table
# says, per 10 s window and app: count, sum, min and max exactly, one row each (a kill
# leaves no partial row), distinct users within 2 % (+1) and the median and p99 within
# 1 % of the exact ones (a rank either side), no event late. Before open windows were
# checkpointed with the positions they cover, each kill lost them. First, the crash
# points around a seal (after the open windows' image, before and after the raw entry,
# and before the very first raw entry) between --once runs: there each stop flushes
# partial rows, so only count, sum, min and max are compared, summed over a window's
# rows. Then the same with the input's raw: false (AGG_KILLS_NORAW kills, default 5):
# every seal is then one without raw rows, whose positions and image the checkpoint
# records; the aggregates are compared with DuckDB's over the raw table of a run with
# raw on over the same lines, and the raw table gets no row and no snapshot.
source "$(dirname "$0")/lib.sh"
KILLS=${AGG_KILLS:-10}
KILLS_NORAW=${AGG_KILLS_NORAW:-5}
LINES_PER_ROUND=2000

# config DIR [RAW]: an input of DIR/logs/*.log (JSON, event time in ts; raw: RAW, default
# true) and the aggregation.
config() {
	mkdir -p "$1/logs"
	cat >"$1/floe.yaml" <<YAML
agent:
  id: it-agent
  state_dir: $1/state
  memory_limit: 64MiB
inputs:
  - type: tail
    paths: ["$1/logs/*.log"]
    raw: ${2:-true}
    start_at: beginning
    parser: json
    timestamp: {field: ts, format: rfc3339}
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $1/wh
aggregations:
  - name: apps
    window: 10s
    allowed_lateness: 2s
    idle_timeout: 1h
    group_by: [app]
    metrics: [count, {sum: lat}, {min: lat}, {max: lat}, {distinct: user},
              {quantiles: lat, q: [0.5, 0.99]}]
    max_groups: 100
YAML
}

python3 - "$T/all" $(((KILLS > KILLS_NORAW ? KILLS : KILLS_NORAW) * LINES_PER_ROUND + 3000)) <<'PY'
import json, random, sys, time
rnd = random.Random(17)
t0 = 1764547200000  # 2025-12-01T00:00:00Z, in ms
with open(sys.argv[1], "w") as f:
    for i in range(int(sys.argv[2])):
        ms = t0 + 10 * i
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms // 1000)) + ".%03dZ" % (ms % 1000)
        f.write(json.dumps({"ts": ts, "app": "a%d" % rnd.randrange(5),
                            "lat": int(rnd.lognormvariate(5, 1)),
                            "user": "u%d" % rnd.randrange(300)}) + "\n")
PY

# compare DIR LABEL ONE-ROW [RAW-DIR]: the aggregate table of DIR against DuckDB over the
# raw table of RAW-DIR (default DIR) (ONE-ROW = 1: each window and app has one row, and
# its sketches are checked too).
compare() {
	local d=$1 what=$2 one=$3 rd=${4:-$1}
	live_files "$rd/wh/default/logs" >"$d/raw.files"
	live_files "$d/wh/default/apps" >"$d/agg.files"
	check "$what: the raw table holds every line exactly once" \
		node "$READER/check_rows.js" "$d/raw.files" "$rd/logs/app.log"
	local raw="[$(sed "s/.*/'&'/" "$d/raw.files" | paste -sd,)]"
	local agg="[$(sed "s/.*/'&'/" "$d/agg.files" | paste -sd,)]"
	local lat="try_cast(attrs['lat'] as double)"
	local exact="select time_bucket(interval 10 second, ts) w, attrs['app'] app, count(*) n,
	  sum($lat) s, min($lat) lo, max($lat) hi, count(distinct attrs['user']) nd,
	  quantile_disc($lat, 0.49) p50lo, quantile_disc($lat, 0.51) p50hi,
	  quantile_disc($lat, 0.98) p99lo, quantile_disc($lat, 1.0) p99hi
	  from read_parquet($raw) group by all"
	local floe="select window_start w, app, sum(count) n, sum(sum_lat) s, min(min_lat) lo,
	  max(max_lat) hi, max(distinct_user) nd, max(lat_p50) p50, max(lat_p99) p99,
	  count(*) nrows from read_parquet($agg) group by all"
	duck "SET TimeZone='UTC'" "select count(*) from ($exact)" >"$d/groups"
	check "$what: DuckDB finds 15+ window x app groups" \
		bash -c "[ \$(tr -dc 0-9 <'$d/groups') -ge 15 ]"
	duck "select sum(count), sum(late_events) from read_parquet($agg)" >"$d/total"
	check "$what: every event is counted once, none late" \
		grep -qx "\[\"$(wc -l <"$d/logs/app.log")\",\"0\"\]" "$d/total"
	duck "SET TimeZone='UTC'" "select count(*) from ($exact) e full outer join ($floe) f
	  on e.w = f.w and e.app is not distinct from f.app
	  where e.n is distinct from f.n or e.s is distinct from f.s or e.lo is distinct from f.lo
	     or e.hi is distinct from f.hi or ($one = 1 and f.nrows is distinct from 1)" >"$d/diff"
	check "$what: count, sum, min and max equal DuckDB's for every window and app" \
		grep -qx '\["0"\]' "$d/diff"
	if [ "$one" = 1 ]; then
		duck "SET TimeZone='UTC'" "select count(*) from ($exact) e join ($floe) f
		  on e.w = f.w and e.app = f.app
		  where abs(f.nd - e.nd) > 0.02 * e.nd + 1
		     or f.p50 < 0.99 * e.p50lo or f.p50 > 1.01 * e.p50hi
		     or f.p99 < 0.99 * e.p99lo or f.p99 > 1.01 * e.p99hi" >"$d/approx"
		check "$what: distinct within 2 %, median and p99 within 1 % of DuckDB's" \
			grep -qx '\["0"\]' "$d/approx"
	fi
	if ! grep -qx '\["0"\]' "$d/diff"; then
		duck "SET TimeZone='UTC'" "select e.w, e.app, e.n, f.n, f.nrows from ($exact) e
		  full outer join ($floe) f on e.w = f.w and e.app = f.app
		  where e.n is distinct from f.n or f.nrows is distinct from 1 order by 1, 2 limit 10"
	fi
}

# Crash points: 1000 lines in a first run, 1000 more in a run that dies at the point in
# its first seal, then the restart; and a first run that dies before its first seal's
# raw entry (its aggregate entry then belongs to no durable seal).
for c in agg-before-windows seal-before-entry seal-before-checkpoint first-seal; do
	d="$T/$c"
	config "$d"
	point=$c
	if [ "$c" = first-seal ]; then
		point=seal-before-entry
		head -n 2000 "$T/all" >"$d/logs/app.log"
	else
		head -n 1000 "$T/all" >"$d/logs/app.log"
		check "$c: the first run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
		sed -n '1001,2000p' "$T/all" >>"$d/logs/app.log"
	fi
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "$c: the run dies at $point" test $rc = 99
	sed -n '2001,3000p' "$T/all" >>"$d/logs/app.log"
	check "$c: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	compare "$d" "$c" 0
done

# kill_rounds DIR ROUNDS: ROUNDS continuous runs of DIR's agent, each killed with -9 at a
# random moment while the stream is appended in four bursts; then the rest of the stream
# arrives while floe is down. Sets kills to the number of kills that hit a live agent.
kill_rounds() {
	local dir=$1 rounds=$2 n=0 round burst pid
	kills=0
	for round in $(seq 1 "$rounds"); do
		"$FLOE_BIN" run -c "$dir/floe.yaml" --log-level error 2>>"$dir/err" &
		pid=$!
		PIDS+=($pid)
		for burst in 1 2 3 4; do
			sed -n "$((n + 1)),$((n + LINES_PER_ROUND / 4))p" "$T/all" >>"$dir/logs/app.log"
			n=$((n + LINES_PER_ROUND / 4))
			sleep 0.$((RANDOM % 4 + 1))
		done
		kill -9 "$pid" 2>/dev/null && kills=$((kills + 1))
		wait "$pid" 2>/dev/null || true
	done
	sed -n "$((n + 1)),\$p" "$T/all" >>"$dir/logs/app.log"
}

# kill -9 at random moments of continuous runs while the stream is appended.
d="$T/kill"
config "$d"
kill_rounds "$d" "$KILLS"
echo "# $kills kills, $(wc -l <"$d/logs/app.log") lines; floe errors: $(grep -c 'floe error' "$d/err" || true)"
check "floe was killed $KILLS times (not exited early)" test "$kills" = "$KILLS"
check "after the kills a final run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
compare "$d" "kill -9" 1

# raw_off DIR LABEL: DIR's input had raw: false. Its raw table got no row and no snapshot,
# and its aggregates equal DuckDB's over the raw table of a run with raw on (DIR/ref) over
# the same lines.
raw_off() {
	local d=$1 what=$2
	check "$what: the raw table gets no row and no snapshot" \
		bash -c "[ -z \"\$(find '$d/wh/default/logs' -name '*.parquet' -o -name 'snap-*')\" ]"
	config "$d/ref"
	cp "$d/logs/app.log" "$d/ref/logs/app.log"
	check "$what: the reference run with raw on succeeds" \
		"$FLOE_BIN" run -c "$d/ref/floe.yaml" --once --log-level warn
	compare "$d" "$what" "${3:-0}" "$d/ref"
}

# raw: false, crash points around a seal without raw rows: before the open windows'
# image, and after it but before the checkpoint that records its positions (also in the
# very first run, which has no checkpoint yet).
for c in agg-before-windows rowless-before-checkpoint first-rowless; do
	d="$T/noraw-$c"
	config "$d" false
	point=$c
	if [ "$c" = first-rowless ]; then
		point=rowless-before-checkpoint
		head -n 2000 "$T/all" >"$d/logs/app.log"
	else
		head -n 1000 "$T/all" >"$d/logs/app.log"
		check "raw: false, $c: the first run succeeds" \
			"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
		sed -n '1001,2000p' "$T/all" >>"$d/logs/app.log"
	fi
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "raw: false, $c: the run dies at $point" test $rc = 99
	sed -n '2001,3000p' "$T/all" >>"$d/logs/app.log"
	check "raw: false, $c: the restart succeeds" \
		"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	raw_off "$d" "raw: false, $c"
done

# raw: false, kill -9 at random moments.
d="$T/kill-noraw"
config "$d" false
kill_rounds "$d" "$KILLS_NORAW"
echo "# raw: false: $kills kills, $(wc -l <"$d/logs/app.log") lines; floe errors: $(grep -c 'floe error' "$d/err" || true)"
check "raw: false: floe was killed $KILLS_NORAW times" test "$kills" = "$KILLS_NORAW"
check "raw: false: after the kills a final run succeeds" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
raw_off "$d" "raw: false, kill -9" 1
finish
