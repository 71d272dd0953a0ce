#!/usr/bin/env bash
# A spooled Parquet file damaged between seal and commit is never
# committed: its check against the size and XXH64 its entry recorded fails, it goes to
# quarantine (counted in metrics.json), and its rows are read again from the input
# positions the entry recorded, so that the table holds every line exactly once. When
# the input no longer holds those bytes, the rows are counted lost and the loss is
# logged with the file and byte range; the agent goes on with the other entries.
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"

# 1. The issue's reproduction: one seal, damaged after it, before its commit.
d="$T/one"
mkdir -p "$d/logs"
for f in OpenSSH_2k.log Linux_2k.log; do sed -e '$a\' "$DATA/$f" >"$d/logs/$f"; done
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
rc=0
FLOE_CRASH_AT=seal-before-checkpoint "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "one: the first run dies after the seal" test $rc = 99
spooled=$(ls "$d"/state/spool/*.parquet)
damage "$spooled"
check "one: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
live_files "$d/wh/default/logs" >"$d/files"
check "one: every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
check "one: the damaged file is in quarantine" test -f "$d/state/spool/quarantine/$(basename "$spooled")"
check "one: counted as damaged, quarantined and rebuilt" test \
	"$(metric "$d/state/metrics.json" spool_damaged) $(metric "$d/state/metrics.json" quarantined) $(metric "$d/state/metrics.json" spool_reread_entries) $(metric "$d/state/metrics.json" spool_lost_rows)" = "1 1 1 0"
check "one: logged once with the path and what did not match" \
	test "$(grep -c "damaged: $spooled has XXH64 [0-9a-f]* over [0-9]* bytes, its entry records" "$d/err")" = 1
check "one: inspect prints the size distribution" \
	grep -q "^live file-sizes count=1 min=" <("$FLOE_BIN" inspect "$d/wh/default/logs")

# 2. Several seals; the middle one is damaged; more lines arrive while the agent is down.
d="$T/several"
mkdir -p "$d/logs"
python3 "$FLOE_SRC/tests/integration/gen_lines.py" "$d/logs/a.log" 3 >/dev/null
sed -e '$a\' "$DATA/Apache_2k.log" | tr -d '\r' >"$d/logs/b.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]" "    target_file_size: 1MiB"
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "several: the first run dies before the upload" test $rc = 99
mapfile -t entries < <(ls "$d"/state/spool/*.entry)
check "several: at least three seals" test "${#entries[@]}" -ge 3
mid=$(basename "${entries[1]}" .entry)
damage "$(ls "$d/state/spool/$mid"-*.parquet | head -1)"
python3 "$FLOE_SRC/tests/integration/gen_lines.py" "$d/logs/a.log" 1 2 >/dev/null
check "several: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
live_files "$d/wh/default/logs" >"$d/files"
check "several: every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
check "several: one entry rebuilt" test "$(metric "$d/state/metrics.json" spool_reread_entries)" = 1

# 3. The input is gone by then: the rows are lost, counted and logged with the range.
d="$T/gone"
mkdir -p "$d/logs"
python3 "$FLOE_SRC/tests/integration/gen_lines.py" "$d/logs/a.log" 3 >/dev/null
sed -e '$a\' "$DATA/Linux_2k.log" >"$d/logs/b.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/a.log\", \"$d/logs/b.log\"]" "    target_file_size: 1MiB"
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "gone: the first run dies before the upload" test $rc = 99
first=$(ls "$d"/state/spool/*.entry | head -1)
first=$(basename "$first" .entry)
damage "$(ls "$d/state/spool/$first"-*.parquet | head -1)"
lines_a=$(wc -l <"$d/logs/a.log")
lines_b=$(wc -l <"$d/logs/b.log")
rm "$d/logs/a.log"
check "gone: the restart goes on (exit 0)" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
lost=$(metric "$d/state/metrics.json" spool_lost_rows)
committed=$(metric "$d/state/metrics.json" rows_committed)
check "gone: one entry lost, counted" test "$(metric "$d/state/metrics.json" spool_lost_entries)" = 1
check "gone: the lost rows and the committed rows make up the input" \
	test "$((lost + committed))" = "$((lines_a + lines_b))"
check "gone: the loss is logged with the file and its byte range" \
	grep -q "input 1: $d/logs/a.log bytes 0-[0-9]* cannot be read again" "$d/err"
check "gone: and with the rows lost" grep -q "$lost rows LOST" "$d/err"
check "gone: the damaged entry is in quarantine" test -f "$d/state/spool/quarantine/$first.entry"
# 3b. The input was rewritten in place since (truncated, other lines written): the bytes
# before the seal's positions are not the ones read, so nothing is trusted from it.
d="$T/rewritten"
mkdir -p "$d/logs"
sed -e '$a\' "$DATA/OpenSSH_2k.log" >"$d/logs/a.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "rewritten: the first run dies before the upload" test $rc = 99
damage "$(ls "$d"/state/spool/*.parquet | head -1)"
lines=$(wc -l <"$d/logs/a.log")
: >"$d/logs/a.log"
sed -e '$a\' "$DATA/Linux_2k.log" >>"$d/logs/a.log"
check "rewritten: the restart goes on" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
check "rewritten: the entry's rows are counted lost" test "$(metric "$d/state/metrics.json" spool_lost_rows)" = "$lines"
check "rewritten: logged as such" grep -q "a.log bytes 0-[0-9]* cannot be read again (the file no longer holds the bytes it had: rotated away, truncated or rewritten)" "$d/err"

# 4. An input that groups lines into records (multiline): rebuilt through a fresh
# assembler, the records come back whole, each at its first line's offset.
d="$T/multiline"
mkdir -p "$d/logs"
python3 - "$d/logs/app.log" "$d/expected" <<'PY'
import hashlib, random, sys
rnd, off, recs, exp = random.Random(7), 0, [], []
for i in range(3000):
    lines = ["2026-03-01T10:%02d:%02dZ ERROR request failed: id=%d" % (i // 60 % 60, i % 60, i)]
    lines += ["\tat com.example.Service.call(Service.java:%d)" % rnd.randrange(1, 999) for _ in range(rnd.randrange(0, 6))]
    text = "\n".join(lines)
    recs.append(text + "\n")
    exp.append("%s %d %s\n" % (sys.argv[1], off, hashlib.md5(text.encode()).hexdigest()))
    off += len(text.encode()) + 1
open(sys.argv[1], "w").write("".join(recs))
open(sys.argv[2], "w").write("".join(sorted(exp)))
PY
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i 's/^    start_at: beginning$/&\n    multiline: { start: "^[0-9]{4}-" }/' "$d/floe.yaml"
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "multiline: the first run dies before the upload" test $rc = 99
damage "$(ls "$d"/state/spool/*.parquet | head -1)"
check "multiline: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
list=$(live_files "$d/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select source || ' ' || \"offset\" || ' ' || md5(message) from read_parquet([$list])" |
	sed 's/^\["//; s/"\]$//' | sort >"$d/got"
check "multiline: every record once, whole" cmp -s "$d/expected" "$d/got"
check "multiline: rebuilt" test "$(metric "$d/state/metrics.json" spool_reread_entries)" = 1

# A sealed entry deleted while the agent was down (its positions are in the checkpoint,
# past its lines): the loss cannot be undone, but it is said and counted, not silent.
d="$T/deleted"
mkdir -p "$d/logs"
seq 1 1000 | sed 's/^/line /' >"$d/logs/a.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
rc=0
FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "deleted entry: the first run dies before the upload" test $rc = 99
rm -f "$d"/state/spool/*.entry "$d"/state/spool/*.parquet
check "deleted entry: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
check "deleted entry: the loss is logged with the entries" \
	grep -q "1 sealed spool entries from 1 to 1 are missing from $d/state/spool" "$d/err"
check "deleted entry: the loss is counted" test "$(metric "$d/state/metrics.json" spool_lost_entries)" = 1
finish
