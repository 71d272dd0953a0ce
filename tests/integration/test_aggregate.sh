#!/usr/bin/env bash
# Aggregations end to end: the OpenSSH and Linux loghub samples, one input
# each, go through floe run --once into the raw table and an aggregate table per input
# (`from`); DuckDB computes the same GROUP BY (one-minute window, app) over the raw
# table, and count, sum, min and max must equal floe's exactly, per window and group.
# The samples are fed in two runs (a clean stop flushes open windows as partial rows;
# the second run adds rows for the same windows), so the rows are summed per window and
# group before comparing. The distinct count is within 2 % (+1) of DuckDB's exact one,
# windows closed by the watermark are not partial, and the sketch columns are there. A
# third aggregation takes both inputs: the samples' times do not overlap, so the one read
# second is late and dropped, and count plus late_events is every line. floe check prints
# the aggregations' memory. A third input reads a copy of the OpenSSH sample with
# raw: false: its aggregation (ssh_noraw) must equal DuckDB's over input 0's raw rows like
# ssh's, and the raw table holds none of its lines.
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"

d="$T/agg"
mkdir -p "$d/logs"
metrics='[count, {sum: pid}, {min: pid}, {max: pid}, {distinct: pid}, {quantiles: pid, q: [0.5]}, {top_k: msg, k: 3}]'
cat >"$d/floe.yaml" <<YAML
agent:
  id: it-agent
  state_dir: $d/state
  memory_limit: 192MiB
inputs:
  - type: tail
    paths: ["$d/logs/OpenSSH_2k.log"]
    start_at: beginning
    parser: regex
    pattern: '^(?<ts>[A-Z][a-z]{2} +[0-9]+ [0-9:]{8}) (?<node>[^ ]+) (?<app>[^:[]+)(\[(?<pid>[0-9]+)\])?: (?<msg>.*)$'
    timestamp: {field: ts, format: syslog, zone: UTC}
  - type: tail
    paths: ["$d/logs/Linux_2k.log"]
    start_at: beginning
    parser: regex
    pattern: '^(?<ts>[A-Z][a-z]{2} +[0-9]+ [0-9:]{8}) (?<node>[^ ]+) (?<app>[^:[]+)(\[(?<pid>[0-9]+)\])?: (?<msg>.*)$'
    timestamp: {field: ts, format: syslog, zone: UTC}
  - type: tail
    paths: ["$d/noraw/OpenSSH_2k.log"]
    raw: false
    start_at: beginning
    parser: regex
    pattern: '^(?<ts>[A-Z][a-z]{2} +[0-9]+ [0-9:]{8}) (?<node>[^ ]+) (?<app>[^:[]+)(\[(?<pid>[0-9]+)\])?: (?<msg>.*)$'
    timestamp: {field: ts, format: syslog, zone: UTC}
lake:
  warehouse: $d/wh
aggregations:
  - name: ssh
    from: [0]
    window: 1m
    allowed_lateness: 5s
    group_by: [app]
    metrics: $metrics
    max_groups: 200
  - {name: linux, from: [1], window: 1m, allowed_lateness: 5s, group_by: [app], metrics: $metrics,
     max_groups: 200}
  - {name: ssh_noraw, from: [2], window: 1m, allowed_lateness: 5s, group_by: [app],
     metrics: $metrics, max_groups: 200}
  - {name: both, from: [0, 1], window: 1m, metrics: [count]}
YAML
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check" 2>&1 || cat "$d/check"
check "floe check prints the aggregations' memory" \
	grep -q "^# memory: aggregations\[1\] 'linux' reserves .*MiB: 2 window(s) x 201 groups x" "$d/check"

# The first 1500 lines of each sample, then the rest in a second run.
mkdir -p "$d/noraw"
for f in OpenSSH_2k Linux_2k; do head -n 1500 "$DATA/$f.log" >"$d/logs/$f.log"; done
head -n 1500 "$DATA/OpenSSH_2k.log" >"$d/noraw/OpenSSH_2k.log"
check "first run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
for f in OpenSSH_2k Linux_2k; do tail -n +1501 "$DATA/$f.log" >>"$d/logs/$f.log"; done
tail -n +1501 "$DATA/OpenSSH_2k.log" >>"$d/noraw/OpenSSH_2k.log"
# Finished files: their last lines (without LF) are taken once idle (partial_line_timeout).
touch -d '-1 min' "$d"/logs/*.log "$d"/noraw/*.log
check "second run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn

live_files "$d/wh/default/logs" >"$d/raw"
check "the raw table has live files" test -s "$d/raw"
raw="[$(sed "s/.*/'&'/" "$d/raw" | paste -sd,)]"
duck "select count(*) filter (where source like '%/noraw/%'), count(*) from read_parquet($raw)" \
	>"$d/noraw.rows"
check "raw: false: the raw table holds no line of that input, and 4000 of the others" \
	grep -qx '\["0","4000"\]' "$d/noraw.rows"
for a in ssh linux ssh_noraw; do
	live_files "$d/wh/default/$a" >"$d/$a.files"
	check "$a: the aggregate table has a file per seal with closed windows" \
		bash -c "[ \$(wc -l <'$d/$a.files') -ge 2 ]"
	agg="[$(sed "s/.*/'&'/" "$d/$a.files" | paste -sd,)]"
	src=$([ $a = linux ] && echo Linux || echo OpenSSH)
	exact="select time_bucket(interval 1 minute, ts) w, attrs['app'] app, count(*) n,
	  sum(try_cast(attrs['pid'] as double)) s, min(try_cast(attrs['pid'] as double)) lo,
	  max(try_cast(attrs['pid'] as double)) hi, count(distinct attrs['pid']) nd
	  from read_parquet($raw) where source like '%$src%' group by all"
	floe="select window_start w, app, sum(count) n, sum(sum_pid) s, min(min_pid) lo,
	  max(max_pid) hi, max(distinct_pid) nd, count(*) nrows from read_parquet($agg) group by all"
	duck "SET TimeZone='UTC'" "select count(*) from ($exact)" >"$d/ngroups"
	check "$a: DuckDB finds 50+ window x app groups" bash -c "[ \$(tr -dc 0-9 <'$d/ngroups') -ge 50 ]"
	duck "SET TimeZone='UTC'" "select count(*) from ($exact) e full outer join ($floe) f
	  on e.w = f.w and e.app is not distinct from f.app
	  where e.n is distinct from f.n or e.s is distinct from f.s or e.lo is distinct from f.lo
	     or e.hi is distinct from f.hi" >"$d/diff"
	check "$a: count, sum, min and max equal DuckDB's for every window and group" \
		grep -qx '\["0"\]' "$d/diff"
	duck "select sum(count), sum(late_events) from read_parquet($agg)" >"$d/total"
	check "$a: every line is counted once (2000), none late" grep -qx '\["2000","0"\]' "$d/total"
	# Windows seen by one run only: their distinct count is that run's (within 2 %).
	duck "SET TimeZone='UTC'" "select count(*) from ($exact) e join ($floe) f
	  on e.w = f.w and e.app is not distinct from f.app
	  where f.nrows = 1 and abs(f.nd - e.nd) > 0.02 * e.nd + 1" >"$d/nd"
	check "$a: distinct within 2 % of DuckDB's exact count" grep -qx '\["0"\]' "$d/nd"
	duck "select count(*) filter (where partial), count(*) filter (where not partial),
	  count(*) filter (where pid_ddsketch is not null), count(*) from read_parquet($agg)" >"$d/flags"
	check "$a: partial rows only from the stops, DDSketch images" \
		python3 -c "
import json, sys
p, notp, dds, n = (int(x) for x in json.loads(open(sys.argv[1]).read()))
assert 0 < p <= 20 and notp > 0 and dds > 0, (p, notp, dds, n)" "$d/flags"
	# DataSketches' compact images of lgK 14: a LIST (under 8 coupons) or SET while the
	# group saw few values, whose coupon count is the distinct count, else HLL_8.
	duck "select hex(distinct_pid_hll), distinct_pid from read_parquet($agg)" >"$d/hll"
	check "$a: HLL images of p = 14: LIST or SET with the exact count, or HLL_8" \
		python3 -c "
import json, sys
forms = set()
for line in open(sys.argv[1]):
    h, nd = json.loads(line)
    b = bytes.fromhex(h)
    assert b[1:4] == bytes([1, 7, 14]) and b[7] >> 2 == 2, h[:16]
    mode = b[7] & 3
    forms.add(mode)
    if mode == 0:
        assert b[0] == 2 and len(b) == 8 + 4 * b[6] and b[6] == int(nd) <= 7, (h[:16], nd)
    elif mode == 1:
        n = int.from_bytes(b[8:12], 'little')
        assert b[0] == 3 and len(b) == 12 + 4 * n and n == int(nd) > 7, (h[:24], nd)
    else:
        assert b[0] == 10 and len(b) == 40 + 16384, h[:16]
assert 0 in forms, forms" "$d/hll"
	duck "select typeof(top_msg), typeof(partial), typeof(sum_pid), typeof(distinct_pid_hll)
	  from read_parquet($agg) limit 1" >"$d/types"
	check "$a: column types map(varchar, bigint), boolean, double, blob" \
		grep -qx '\["MAP(VARCHAR, BIGINT)","BOOLEAN","DOUBLE","BLOB"\]' "$d/types"
done
# The DDSketch columns, decoded and merged across every window by Datadog's sketches-js,
# give the median within 1 % of DuckDB's exact one over the raw rows.
agg="[$(sed "s/.*/'&'/" "$d/ssh.files" | paste -sd,)]"
duck "select hex(pid_ddsketch) from read_parquet($agg) where pid_ddsketch is not null" >"$d/dds"
duck "select quantile_disc(try_cast(attrs['pid'] as double), 0.5) from read_parquet($raw)
  where source like '%OpenSSH%'" >"$d/median"
check "ssh: sketches-js merges the DDSketch column to within 1 % of the exact median" \
	bash -c "cd '$READER' && node -e '
const fs = require(\"fs\");
const { DDSketch } = require(\"@datadog/sketches-js\");
const rows = fs.readFileSync(process.argv[1], \"utf8\").trim().split(\"\\n\").map(JSON.parse);
const exact = JSON.parse(fs.readFileSync(process.argv[2], \"utf8\"))[0];
let m = null;
for (const [hex] of rows) {
  const s = DDSketch.fromProto(new Uint8Array(Buffer.from(hex, \"hex\")));
  if (m) m.merge(s); else m = s;
}
const q = m.getValueAtQuantile(0.5);
if (rows.length < 10 || Math.abs(q - exact) > 0.01 * exact) {
  console.log(rows.length, q, exact);
  process.exit(1);
}' '$d/dds' '$d/median'"
live_files "$d/wh/default/both" >"$d/both.files"
agg="[$(sed "s/.*/'&'/" "$d/both.files" | paste -sd,)]"
duck "select sum(count) + sum(late_events), sum(late_events) > 0 from read_parquet($agg)" >"$d/both"
check "both: count + late_events is every line (4000), some late" grep -qx '\["4000",true\]' "$d/both"
finish
