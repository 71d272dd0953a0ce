#!/usr/bin/env bash
# tables.logs.sort_by: the rows of a data file come out sorted by the sort columns (ties
# in read order, so a file's lines keep their offset order) when the file is written in
# one run of the sort buffer, every line lands exactly once, and with a sort buffer far
# smaller than the data each run of the buffer is sorted on its own.
source "$(dirname "$0")/lib.sh"

# gen DIR LINES: three files (api, db, web) of JSON lines whose times interleave across
# the files, come in threes within a file (ties), and every seventh line jumps back in
# time; a few lines have no level (a null severity). With more than 1000 lines, line 1000
# is 100 KB, more than a 64 KiB sort buffer holds: it is written on its own. Writes
# DIR/expected (one line per input line: "path offset").
gen() {
	python3 - "$1" "$2" <<'PY'
import sys, os
d, n = sys.argv[1], int(sys.argv[2])
os.makedirs(d, exist_ok=True)
levels = ["info", "warn", "error", None, "debug"]
with open(os.path.join(d, "expected"), "w") as exp:
    for f, app in enumerate(["api", "db", "web"]):
        path = os.path.join(d, app + ".log")
        off = 0
        with open(path, "wb") as out:
            for j in range(n):
                sec = 3600 + (j // 3) * 2 + f % 2
                if j % 7 == 6:
                    sec -= 600
                hh, mm, ss = 10 + sec // 3600 - 1, sec // 60 % 60, sec % 60
                lvl = levels[(j * 2 + f) % len(levels)]
                body = '{"time":"2026-03-01T%02d:%02d:%02dZ","app":"%s",%s"seq":%d,"pad":"%s"}' % (
                    hh, mm, ss, app, '"level":"%s",' % lvl if lvl else "", j,
                    "x" * (100000 if n > 1000 and j == 1000 else j % 40))
                line = (body + "\n").encode()
                out.write(line)
                exp.write("%s %d\n" % (path, off))
                off += len(line)
PY
}

# cfg NAME SORT-KEYS-YAML
cfg() {
	write_config "$T/$1.yaml" "$T/state-$1" "$T/wh-$1" "[\"$T/$1/*.log\"]" "$2"
	sed -i 's/^    start_at: beginning$/&\n    parser: json\n    timestamp: { field: time, format: rfc3339 }/' \
		"$T/$1.yaml"
}

gen "$T/one" 60
gen "$T/sev" 60
gen "$T/runs" 2500
cfg one "    sort_by: [app, ts]"
cfg sev "    sort_by: [severity, source, ts]"
cfg runs "    sort_by: [app, ts]
    sort_buffer: 64KiB"
check "the runs data is much larger than 64 KiB" test "$(cat "$T"/runs/*.log | wc -c)" -gt 500000

for n in one sev runs; do
	check "$n: run succeeds" "$FLOE_BIN" run -c "$T/$n.yaml" --once --log-level warn
	live_files "$T/wh-$n/default/logs" >"$T/$n.files"
	check "$n: data files written" test -s "$T/$n.files"
done

list() { sed "s/.*/'&'/" "$T/$1.files" | paste -sd,; }

# Every input line is in the table exactly once: (source, offset) of every row equals the
# lines generated, with no duplicate.
exactly_once() {
	duck "select source || ' ' || \"offset\" from read_parquet([$(list "$1")])" |
		sed 's/^\["//; s/"\]$//' | sort >"$T/$1.got"
	sort "$T/$1/expected" >"$T/$1.want"
	cmp -s "$T/$1.got" "$T/$1.want"
}
for n in one sev runs; do
	check "$n: every line exactly once" exactly_once "$n"
done

# descents NAME FILE KEYS: rows of FILE, in file order, that come before the previous row
# in the order of KEYS (a SQL list), ties broken by offset within a source. DuckDB's
# varchar order is bytewise, as floe's; nulls first, as floe's.
descents() {
	local keys=$3
	duck "select count(*) from (
		select $keys as k, lag($keys) over w as pk, source, lag(source) over w as ps,
		       \"offset\" as o, lag(\"offset\") over w as po
		from read_parquet('$2', file_row_number = true)
		window w as (order by file_row_number))
	      where pk is not null and (k < pk or (k = pk and source = ps and o < po))" |
		tr -d '[]"'
}
# List comparison puts NULL last, so nulls are mapped below every value first.
SEV_SRC_TS="[coalesce(severity, -1)::varchar, source, lpad(cast(epoch_us(ts) as varchar), 20, '0')]"
APP_TS="[coalesce(app, ''), lpad(cast(epoch_us(ts) as varchar), 20, '0')]"

all_sorted() { # all_sorted NAME KEYS
	local f bad=0
	while read -r f; do
		[ "$(descents "$1" "$f" "$2")" = 0 ] || bad=1
	done <"$T/$1.files"
	[ "$bad" = 0 ]
}
check "one: each data file is in (app, ts) order, ties in offset order" all_sorted one "$APP_TS"
check "sev: each data file is in (severity, source, ts) order, nulls first" \
	all_sorted sev "$SEV_SRC_TS"
first_null() {
	[ "$(duck "select severity is null from read_parquet('$(head -1 "$T/sev.files")',
		file_row_number = true) order by file_row_number limit 1")" = '[true]' ]
}
check "sev: a null severity comes first" first_null

# With 64 KiB runs: each file is sorted in long stretches (a run holds about a hundred
# rows), but not as a whole, since no buffer held it all.
runs_check() {
	local total=0 desc=0 f c
	while read -r f; do
		c=$(descents runs "$f" "$APP_TS")
		desc=$((desc + c))
	done <"$T/runs.files"
	total=$(wc -l <"$T/runs/expected")
	echo "runs: $total rows, $desc descents"
	[ "$desc" -gt 0 ] && [ "$desc" -le $((total / 50)) ]
}
check "runs: sorted within runs of sort_buffer, not as a whole" runs_check
# For contrast: the same data without sort_by has a descent every seventh line.
cfg plain ""
mkdir -p "$T/plain" && cp "$T"/runs/*.log "$T/plain/"
check "plain: run succeeds" "$FLOE_BIN" run -c "$T/plain.yaml" --once --log-level warn
live_files "$T/wh-plain/default/logs" >"$T/plain.files"
plain_check() {
	local desc=0 f c
	while read -r f; do
		c=$(descents plain "$f" "$APP_TS")
		desc=$((desc + c))
	done <"$T/plain.files"
	echo "plain: $desc descents"
	[ "$desc" -gt $(($(wc -l <"$T/runs/expected") / 10)) ]
}
check "plain: unsorted input has many descents" plain_check

finish
