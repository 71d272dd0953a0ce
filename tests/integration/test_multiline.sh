#!/usr/bin/env bash
# Multiline grouping and container log formats, read back with DuckDB as whole records:
# Java stack traces grouped by a start pattern (files interleaved, never mixed), CRI lines
# with partial pieces, Docker json-file lines; and exactly-once while groups are held
# across seals: a crash between a seal and its checkpoint, and kill -9 of a continuous
# run while a writer appends traces.
source "$(dirname "$0")/lib.sh"

# gen.py OUT-DIR NAME RECORDS SEED FIRST-DAY [DAYS]: writes OUT-DIR/NAME (appending) with
# RECORDS Java-style records (a start line "YYYY-MM-DDTHH:MM:SSZ ...", then 0..12
# continuation lines) over DAYS days, and appends "name offset md5" of each record to
# OUT-DIR/expected (offsets continue after what the file holds).
cat >"$T/gen.py" <<'PY'
import hashlib, os, random, sys
out, name, n, seed, first = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
days = int(sys.argv[6]) if len(sys.argv) > 6 else 1
rnd = random.Random(seed)
path = os.path.join(out, name)
off = os.path.getsize(path) if os.path.exists(path) else 0
recs, exp = [], []
for i in range(n):
    day = first + i * days // n
    lines = ["2026-03-%02dT10:%02d:%02dZ ERROR [%s-%d] request failed: id=%d" % (day, i // 60 % 60, i % 60, name, seed, i)]
    for k in range(rnd.randrange(0, 13)):
        lines.append(rnd.choice(["\tat com.example.Service.call(Service.java:%d)" % rnd.randrange(1, 999),
                                 "Caused by: java.io.IOException: broken pipe #%d" % k,
                                 "\t... %d more" % rnd.randrange(1, 40)]))
    text = "\n".join(lines)
    recs.append(text + "\n")
    exp.append("%s %d %s" % (path, off, hashlib.md5(text.encode()).hexdigest()))
    off += len(text.encode()) + 1
with open(path, "a") as f:
    f.write("".join(recs))
with open(os.path.join(out, "expected"), "a") as f:
    f.write("".join(e + "\n" for e in exp))
PY
gen() { python3 "$T/gen.py" "$@"; }

# conf NAME EXTRA-INPUT-YAML [EXTRA-TABLE-YAML]
conf() {
	mkdir -p "$T/$1/logs"
	cat >"$T/$1/floe.yaml" <<YAML
agent: { id: ml-$1, state_dir: $T/$1/state }
inputs:
  - type: tail
    paths: ["$T/$1/logs/*.log"]
    start_at: beginning
$2
tables:
  logs:
    commit_interval: 1s
${3:-}
lake: { warehouse: $T/$1/wh }
YAML
}
# got NAME: "path offset md5(message)" of every row, sorted.
got() {
	local list
	list=$(live_files "$T/$1/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
	duck "select source || ' ' || \"offset\" || ' ' || md5(message) from read_parquet([$list])" |
		sed 's/^\["//; s/"\]$//' | sort
}
same_records() { # same_records NAME: the table holds exactly the expected records
	got "$1" >"$T/$1/got"
	sort "$T/$1/logs/expected" >"$T/$1/want"
	if cmp -s "$T/$1/got" "$T/$1/want"; then return 0; fi
	echo "  want $(wc -l <"$T/$1/want") rows, got $(wc -l <"$T/$1/got"); first differences:"
	diff "$T/$1/want" "$T/$1/got" | head -5
	return 1
}
ML='    multiline: { start: "^[0-9]{4}-" }'

# --- stack traces in two files --------------------------------------------------------
conf traces "$ML
    timestamp: { format: rfc3339 }"
# Six days, partitioned by day: the batch takes every day's records (its partitions are
# bounded by memory, not by a count), a file a day.
gen "$T/traces/logs" a.log 300 1 1 6
gen "$T/traces/logs" b.log 200 2 1 6
check "traces: run succeeds" "$FLOE_BIN" run -c "$T/traces/floe.yaml" --once --log-level warn
check "traces: every record once, whole, at its first line's offset" same_records traces
list=$(live_files "$T/traces/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select message, epoch_ms(ts) from read_parquet([$list]) where \"offset\" = 0 and source like '%/a.log'" >"$T/traces/first"
check "traces: the first record's text and its parsed time" \
	grep -q '^\["2026-03-01T10:00:00Z ERROR \[a.log-1\] request failed: id=0.*","1772359200000"\]$' "$T/traces/first"
check "traces: metrics count records, not lines" grep -q '"lines":500,' "$T/traces/state/metrics.json"
check "traces: one seal, a file for each of the six days" \
	test "$(grep -o '"seals":[0-9]*' "$T/traces/state/metrics.json"),$(echo "$list" | tr ',' '\n' | wc -l)" = '"seals":1,6'

# --- CRI ------------------------------------------------------------------------------
conf cri "    format: cri"
{
	printf '%s\n' '2026-03-01T10:00:00.123456789Z stdout F hello'
	printf '%s\n' '2026-03-01T10:00:01.5Z stdout P first part, '
	printf '%s\n' '2026-03-01T10:00:01.6Z stdout P second part, '
	printf '%s\n' '2026-03-01T10:00:01.7Z stdout F last part'
	printf '%s\n' '2026-03-01T10:00:02Z stderr F boom'
	printf '%s\n' 'not a CRI line'
} >"$T/cri/logs/pod.log"
check "cri: run succeeds" "$FLOE_BIN" run -c "$T/cri/floe.yaml" --once --log-level warn
list=$(live_files "$T/cri/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select \"offset\", message, case when attrs['stream'] is null then 0 else epoch_us(ts) end, attrs['stream'] from read_parquet([$list]) order by \"offset\"" >"$T/cri/out"
cat >"$T/cri/want" <<'OUT'
["0","hello","1772359200123456","stdout"]
["46","first part, second part, last part","1772359201500000","stdout"]
["179","boom","1772359202000000","stderr"]
["214","not a CRI line","0",null]
OUT
check "cri: partial pieces joined, runtime time and stream kept" cmp "$T/cri/want" "$T/cri/out"
check "cri: the line not in the format is counted" \
	grep -q '"container_format_errors":1,' "$T/cri/state/metrics.json"

# --- Docker json-file -----------------------------------------------------------------
conf docker "    format: docker
    parser: logfmt"
{
	printf '%s\n' '{"log":"level=info msg=\"up\"\n","stream":"stdout","time":"2026-03-02T08:00:00.25Z"}'
	printf '%s\n' '{"log":"level=error msg=\"a long ","stream":"stderr","time":"2026-03-02T08:00:01Z"}'
	printf '%s\n' '{"log":"line\" code=7\n","stream":"stderr","time":"2026-03-02T08:00:02Z"}'
} >"$T/docker/logs/c-json.log"
check "docker: run succeeds" "$FLOE_BIN" run -c "$T/docker/floe.yaml" --once --log-level warn
list=$(live_files "$T/docker/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select \"offset\", message, epoch_ms(ts), attrs['stream'], attrs['msg'], attrs['code'], severity from read_parquet([$list]) order by \"offset\"" >"$T/docker/out"
cat >"$T/docker/want" <<'OUT'
["0","up","1772438400250","stdout","up",null,6]
["85","a long line","1772438401000","stderr","a long line","7",3]
OUT
check "docker: partial lines joined, parser fields merged with the stream" cmp "$T/docker/want" "$T/docker/out"

# --- a crash between a seal and its checkpoint, with groups held ----------------------
# Six days of records, partitioned by day: the fifth day does not fit the batch's four
# partitions, so a seal comes in the middle of the input while the next group is held.
conf crash "$ML
    timestamp: { format: rfc3339 }"
gen "$T/crash/logs" a.log 600 3 1 6
gen "$T/crash/logs" b.log 400 4 1 6
rc=0
FLOE_CRASH_AT=seal-before-checkpoint "$FLOE_BIN" run -c "$T/crash/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "crash: the first run dies at the crash point" test $rc = 99
check "crash: the spool entry was written" bash -c "ls '$T/crash/state/spool' | grep -q ."
gen "$T/crash/logs" a.log 50 5 7
check "crash: the restart succeeds" "$FLOE_BIN" run -c "$T/crash/floe.yaml" --once --log-level warn
check "crash: every record exactly once and whole" same_records crash
check "crash: the seal before the crash went into the table" \
	test "$(ls "$T"/crash/wh/default/logs/data/*/ml-crash-*-00000000000000000001-* | wc -l)" -ge 4

# --- kill -9 of a continuous run while traces are appended ----------------------------
# The flush timeout is long: a burst's last record stays held until the next burst, so
# every seal and every kill happens with groups held.
conf kill "    multiline: { start: \"^[0-9]{4}-\", flush_timeout: 1h }"
for round in $(seq 1 5); do
	"$FLOE_BIN" run -c "$T/kill/floe.yaml" --log-level error 2>>"$T/kill/err" &
	pid=$!
	PIDS+=($pid)
	for burst in 1 2 3; do
		gen "$T/kill/logs" app.log 150 $((round * 10 + burst)) $round
		gen "$T/kill/logs" other.log 40 $((round * 10 + burst + 5)) $round
		sleep 0.$((RANDOM % 5 + 2))
	done
	kill -9 $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
done
check "kill: a final run succeeds" "$FLOE_BIN" run -c "$T/kill/floe.yaml" --once --log-level warn
check "kill: every record exactly once and whole" same_records kill
finish
