#!/usr/bin/env bash
# floe maintain: compaction of the small files of closed partitions.
# (1) Many tiny commits into one past day are rewritten into files of about
#     target_file_size: DuckDB reads every line exactly once, every column value is the
#     same (EXCEPT ALL both ways against the old files), each source's rows keep their
#     order, the file count drops, >= 90 % of the day's bytes are in files of at least
#     half the target, today's (open) partition is left alone, and a second run does
#     nothing. Exit codes 0/1/2.
# (2) maintain killed (kill -9 at random moments, and at each crash point in turn)
#     MAINT_KILLS times (10 by default): after each kill the table is readable and exact;
#     a run after the kills deletes the output files the killed runs left that no
#     snapshot lists (maintain.min_age 0s here) and keeps every file a snapshot lists.
# (3) 2 agents (COMPACT_AGENTS) append into a closed day while two maintain loops compact
#     it: no line lost or duplicated, and some replaces committed.
# (4) maintain with nothing to compact still expires snapshots by the properties of its
#     configuration, in a metadata version of its own, and deletes what they needed.
# (5) with sort_by, the files are merged: every new file is sorted by the sort keys, ties
#     in the order of the old files and of their rows (offsets grow), and every row is
#     there exactly once with every value the same.
source "$(dirname "$0")/lib.sh"
COMMITS=${COMPACT_COMMITS:-30}
KILLS=${MAINT_KILLS:-10}
AGENTS=${COMPACT_AGENTS:-2}

# gen FILE FIRST N DAY: N JSON lines numbered from FIRST with times in DAY (YYYY-MM-DD),
# each with 200 random hex digits (so that files do not compress to nothing).
gen() {
	python3 - "$@" <<'PY'
import random, sys
path, first, n, day = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(first * 7919 + len(path))
with open(path, "a") as f:
    for j in range(first, first + n):
        s = j % 86000
        f.write('{"time":"%sT%02d:%02d:%02dZ","app":"app%d","seq":%d,"pad":"%s"}\n' % (
            day, s // 3600, s // 60 % 60, s % 60, j % 5, j, "%x" % r.getrandbits(800)))
PY
}

# cfg FILE STATE WAREHOUSE DIR: JSON lines of DIR/*.log with their own times, 1 MiB files.
cfg() {
	write_config "$1" "$2" "$3" "[\"$4/*.log\"]" "    target_file_size: 1MiB"
	sed -i 's/^    start_at: beginning$/&\n    parser: json\n    timestamp: { field: time, format: rfc3339 }/' "$1"
}

# exact TABLE SOURCE...: the live files hold every line of the sources exactly once.
exact() {
	live_files "$1" >"$T/exact.files" && node "$READER/check_rows.js" "$T/exact.files" "${@:2}" >"$T/exact.out" 2>&1
}

quote_list() { sed "s/.*/'&'/" "$1" | paste -sd, -; }

# unlisted TABLE_DIR: compaction output files under data/ that no manifest of any
# snapshot of the newest metadata lists (read with python3-avro), one a line.
unlisted() {
	/usr/bin/python3 - "$1" <<'PY'
import glob, json, os, sys, warnings
import avro.datafile, avro.io
warnings.filterwarnings("ignore")
t = sys.argv[1]
# The newest version: version-hint.text may lag it (a crash between the two writes).
v = max(int(os.path.basename(p)[1:].split(".")[0])
        for p in glob.glob(os.path.join(t, "metadata", "v*.metadata.json")))
meta = json.load(open(os.path.join(t, "metadata", "v%d.metadata.json" % v)))
def records(uri):
    with open(uri[len("file://"):] if uri.startswith("file://") else uri, "rb") as f:
        return list(avro.datafile.DataFileReader(f, avro.io.DatumReader()))
listed, seen = set(), set()
for s in meta.get("snapshots", []):
    for m in records(s["manifest-list"]):
        if m["manifest_path"] in seen:
            continue
        seen.add(m["manifest_path"])
        for e in records(m["manifest_path"]):
            p = e["data_file"]["file_path"]
            listed.add(p[len("file://"):] if p.startswith("file://") else p)
for p in sorted(glob.glob(os.path.join(t, "data", "**", "compact-*.parquet"), recursive=True)):
    if p not in listed:
        print(p)
PY
}

# ---- (1) one closed day of many tiny commits ----
d="$T/one"
tbl="$d/wh/default/logs"
mkdir -p "$d/logs"
cfg "$d/floe.yaml" "$d/state" "$d/wh" "$d/logs"
failed=0
for i in $(seq 0 $((COMMITS - 1))); do
	gen "$d/logs/a.log" $((i * 400)) 400 2026-03-01
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error || failed=$((failed + 1))
done
today=$(date -u +%F)
for i in 0 1; do
	gen "$d/logs/a.log" $((900000 + i * 50)) 50 "$today"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error || failed=$((failed + 1))
done
check "$COMMITS tiny commits succeed" test "$failed" = 0
live_files "$tbl" | grep 'ts_day=2026-03-01' >"$d/before"
v_before=$(cat "$tbl/metadata/version-hint.text")
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>"$d/err" || rc=$?
check "maintain succeeds (exit 0)" test "$rc" = 0
grep -q "^logs: compacted 1 partitions: $COMMITS files" "$d/out" || { cat "$d/out" "$d/err"; fail "maintain reports the day's $COMMITS files"; }
live_files "$tbl" | grep 'ts_day=2026-03-01' >"$d/after"
echo "# $(wc -l <"$d/before") files before, $(wc -l <"$d/after") after: $(cat "$d/out")"
check "the file count dropped" test "$(wc -l <"$d/after")" -lt "$(($(wc -l <"$d/before") / 4))"
check "every line exactly once (DuckDB and arrow-rs)" exact "$tbl" "$d/logs/a.log"
same=$(duck "create view o as select * from read_parquet([$(quote_list "$d/before")])" \
	"create view n as select * from read_parquet([$(quote_list "$d/after")])" \
	"select (select count(*) from (select * from o except all select * from n)),
	        (select count(*) from (select * from n except all select * from o)), (select count(*) from n)")
check "every column value is the same, row for row (got $same)" test "$same" = "[\"0\",\"0\",\"$((COMMITS * 400))\"]"
# Rows of one source keep their order: read in the new files' order (their names count
# up in the order they were written), offsets only grow.
back=$(duck "select count(*) from (select \"offset\", lag(\"offset\") over (partition by source
	order by regexp_extract(filename, '-([0-9]+)\\.parquet\$', 1)::int, file_row_number) as prev
	from read_parquet([$(quote_list "$d/after")], filename = true, file_row_number = true)) where prev >= \"offset\"")
check "each source's rows keep their order (rows out of order: $back)" test "$back" = '["0"]'
big=$(xargs stat -c %s <"$d/after" | awk '{t += $1; if ($1 >= 524288) b += $1} END {printf "%d", t ? 100 * b / t : 0}')
check ">= 90 % of the day's bytes are in files of at least half target_file_size ($big %)" test "$big" -ge 90
check "today's open partition is left alone" test "$(live_files "$tbl" | grep -c "ts_day=$today")" = 2
check "python3-avro decodes every manifest and list" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$tbl"/metadata/*.avro
check "the snapshot is a replace with the spec's summary" \
	grep -q "operation=replace" <("$FLOE_BIN" inspect "$tbl")
check "the old files stay until their snapshots expire" test "$(xargs ls <"$d/before" | wc -l)" = "$(wc -l <"$d/before")"
v_after=$(cat "$tbl/metadata/version-hint.text")
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out2" 2>&1 || true
check "a second run finds nothing to do" test "$(cat "$tbl/metadata/version-hint.text")" = "$v_after"
check "one replace was committed" test "$v_after" = $((v_before + 1))
rc=0; "$FLOE_BIN" maintain >/dev/null 2>&1 || rc=$?
check "maintain without -c is a usage error (2)" test "$rc" = 2
printf 'maintain: {min_age: soon}\n' >"$d/bad.yaml"
rc=0; "$FLOE_BIN" maintain -c "$d/bad.yaml" >/dev/null 2>&1 || rc=$?
check "a bad maintain.min_age is a configuration error (2)" test "$rc" = 2
cfg "$d/none.yaml" "$d/state-none" "$d/nowhere" "$d/logs"
rc=0; "$FLOE_BIN" maintain -c "$d/none.yaml" >/dev/null 2>&1 || rc=$?
check "maintain on a missing table fails (1) and creates nothing" test "$rc:$(ls "$d/nowhere" 2>/dev/null | wc -l)" = 1:0

# ---- (2) kill -9 during maintain ----
d="$T/kill"
tbl="$d/wh/default/logs"
mkdir -p "$d/logs"
cfg "$d/floe.yaml" "$d/state" "$d/wh" "$d/logs"
# The run after the kills takes every output file older than 0 s for an orphan; the killed
# runs keep the default hour, so that what they left stays until then.
{ cat "$d/floe.yaml"; printf 'maintain:\n  min_age: 0s\n'; } >"$d/clean.yaml"
points=(maintain-after-output maintain-before-replace replace-after-manifest replace-before-metadata
	replace-after-metadata)
bad=0 n=0
for k in $(seq 1 "$KILLS"); do
	for c in 1 2 3 4 5 6; do
		gen "$d/logs/k.log" $(((k * 6 + c) * 300)) 300 2026-03-02
		"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error || bad=$((bad + 1))
	done
	if [ $((k % 2)) = 0 ]; then
		FLOE_CRASH_AT=${points[$(((k / 2 - 1) % ${#points[@]}))]} "$FLOE_BIN" maintain -c "$d/floe.yaml" \
			>/dev/null 2>&1 || true
	else
		kill_at_random 4 "$FLOE_BIN" maintain -c "$d/floe.yaml"
	fi
	n=$((n + 1))
	"$FLOE_BIN" inspect "$tbl" >/dev/null 2>&1 || { echo "# unreadable after kill $k"; bad=$((bad + 1)); }
	exact "$tbl" "$d/logs/k.log" || { echo "# not exact after kill $k: $(cat "$T/exact.out")"; bad=$((bad + 1)); }
done
check "after each of $n kills the table is readable and exact" test "$bad" = 0
unlisted "$tbl" >"$d/orphans"
echo "# $(wc -l <"$d/orphans") output files of killed runs that no snapshot lists"
check "a run after the kills completes" "$FLOE_BIN" maintain -c "$d/clean.yaml"
check "and the table is exact" exact "$tbl" "$d/logs/k.log"
check "no file of a killed run is left in state_dir/maintain (its lock and the run's record aside)" \
	test -z "$(ls "$d/state/maintain" | grep -vx -e lock -e metrics.json)"
check "the kills left output files that no snapshot lists" test -s "$d/orphans"
check "and the run after the kills deleted every one" test -z "$(unlisted "$tbl")"

# ---- (3) agents append while maintain compacts ----
d="$T/busy"
tbl="$d/wh/default/logs"
for a in $(seq 1 "$AGENTS"); do
	mkdir -p "$d/l$a"
	cfg "$d/a$a.yaml" "$d/s$a" "$d/wh" "$d/l$a"
	sed -i "s/^  id: .*/  id: agent-$a/" "$d/a$a.yaml"
done
cfg "$d/m1.yaml" "$d/m1" "$d/wh" "$d/none"
cfg "$d/m2.yaml" "$d/m2" "$d/wh" "$d/none"
gen "$d/l1/x.log" 0 10 2026-03-03
"$FLOE_BIN" run -c "$d/a1.yaml" --once --log-level error
for a in $(seq 1 "$AGENTS"); do
	(
		for i in $(seq 1 15); do
			gen "$d/l$a/x.log" $((i * 200)) 200 2026-03-03
			"$FLOE_BIN" run -c "$d/a$a.yaml" --once --log-level error || echo "agent $a commit $i failed"
		done
	) >"$d/out$a" 2>&1 &
	AG+=($!)
	PIDS+=($!)
done
for m in 1 2; do
	(
		for i in $(seq 1 200); do
			[ -e "$d/done" ] && break
			"$FLOE_BIN" maintain -c "$d/m$m.yaml" --log-level warn || echo "maintain $m run $i failed"
		done
	) >"$d/mout$m" 2>&1 &
	MS+=($!)
	PIDS+=($!)
done
for p in "${AG[@]}"; do wait "$p" || true; done
touch "$d/done"
for p in "${MS[@]}"; do wait "$p" || true; done
PIDS=()
check "every agent commit succeeds" test -z "$(cat "$d"/out*)"
check "every maintain run succeeds" test -z "$(grep failed "$d"/mout* || true)"
echo "# $(grep -c 'operation=replace' <("$FLOE_BIN" inspect "$tbl")) replaces committed, $(cat "$d"/mout* | sed -n 's/.* \([0-9]*\) abandoned,.*/\1/p' | awk '{t += $1} END {print t + 0}') abandoned (another run replaced their files first)"
check "replaces were committed while the agents appended" grep -q "operation=replace" <("$FLOE_BIN" inspect "$tbl")
check "every line of every agent exactly once" exact "$tbl" "$d"/l*/x.log
check "a last maintain succeeds" "$FLOE_BIN" maintain -c "$d/m1.yaml" --log-level warn
check "and the table is exact after it" exact "$tbl" "$d"/l*/x.log

# ---- (4) expiry without compaction ----
d="$T/expire"
tbl="$d/wh/default/logs"
mkdir -p "$d/logs"
cfg "$d/floe.yaml" "$d/state" "$d/wh" "$d/logs"
write_config "$d/m.yaml" "$d/m" "$d/wh" "[\"$d/none/*.log\"]" "    properties:
      history.expire.max-snapshot-age-ms: 1ms
      history.expire.min-snapshots-to-keep: 2"
for i in 1 2 3 4 5; do
	gen "$d/logs/e.log" $((i * 10)) 10 "$today"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error
done
v=$(cat "$tbl/metadata/version-hint.text")
lists=$(ls "$tbl/metadata" | grep -c '^snap-')
"$FLOE_BIN" maintain -c "$d/m.yaml" >"$d/out" 2>&1 || true
check "maintain expires 3 of 5 snapshots without compacting ($(tail -1 "$d/out"))" \
	grep -q "^logs: compacted 0 partitions.*; 3 more snapshots expired$" "$d/out"
check "in one new metadata version" test "$(cat "$tbl/metadata/version-hint.text")" = $((v + 1))
check "2 snapshots are kept" test "$("$FLOE_BIN" inspect "$tbl" | sed -n 's/^snapshots //p')" = 2
check "the expired snapshots' lists are deleted" test "$(ls "$tbl/metadata" | grep -c '^snap-')" = $((lists - 3))
check "every line still there exactly once" exact "$tbl" "$d/logs/e.log"
"$FLOE_BIN" maintain -c "$d/m.yaml" >/dev/null 2>&1 || true
check "a second run writes nothing" test "$(cat "$tbl/metadata/version-hint.text")" = $((v + 1))
# ---- (5) sort_by: the files are merged ----
d="$T/sorted"
tbl="$d/wh/default/logs"
mkdir -p "$d/logs"
cfg "$d/floe.yaml" "$d/state" "$d/wh" "$d/logs"
sed -i 's/^    target_file_size: 1MiB$/&\n    sort_by: [app, ts]/' "$d/floe.yaml"
# N lines numbered from FIRST at random seconds of a 5-minute span of one day (so that
# every file spans the whole range, and equal (app, ts) pairs come within and across
# files), 200 random hex digits each.
gen_sorted() {
	python3 - "$@" <<'PY'
import random, sys
path, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(first)
with open(path, "a") as f:
    for j in range(first, first + n):
        s = 36000 + r.randrange(300)
        f.write('{"time":"2026-03-04T%02d:%02d:%02dZ","app":"app%d","seq":%d,"pad":"%s"}\n' % (
            s // 3600, s // 60 % 60, s % 60, r.randrange(5), j, "%x" % r.getrandbits(800)))
PY
}
for i in $(seq 0 19); do
	gen_sorted "$d/logs/s.log" $((i * 400)) 400
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error
done
live_files "$tbl" >"$d/before"
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>&1 || { cat "$d/out"; fail "maintain with sort_by"; }
live_files "$tbl" >"$d/after"
echo "# sort_by: $(wc -l <"$d/before") files before, $(wc -l <"$d/after") after: $(cat "$d/out")"
check "sort_by: the files were rewritten" test "$(wc -l <"$d/after")" -lt 5
# Rows of a new file, in file order, that come before the previous row by (app, ts), or
# that tie with it but come from an earlier offset of the one source.
unsorted=$(duck "select count(*) from (select app, ts, \"offset\",
	lag(app) over w as papp, lag(ts) over w as pts, lag(\"offset\") over w as poff
	from read_parquet([$(quote_list "$d/after")], filename = true, file_row_number = true)
	window w as (partition by filename order by file_row_number))
	where papp > app or (papp = app and (pts > ts or (pts = ts and poff >= \"offset\")))")
check "sort_by: each new file is sorted by (app, ts), ties in offset order (rows out of order: $unsorted)" \
	test "$unsorted" = '["0"]'
same=$(duck "create view o as select * from read_parquet([$(quote_list "$d/before")])" \
	"create view n as select * from read_parquet([$(quote_list "$d/after")])" \
	"select (select count(*) from (select * from o except all select * from n)),
	        (select count(*) from (select * from n except all select * from o)), (select count(*) from n)")
check "sort_by: every column value is the same, row for row (got $same)" test "$same" = '["0","0","8000"]'
check "sort_by: every line exactly once (DuckDB and arrow-rs)" exact "$tbl" "$d/logs/s.log"
finish
