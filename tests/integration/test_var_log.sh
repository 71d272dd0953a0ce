#!/usr/bin/env bash
# The configuration an operator writes to ship a whole log directory, `paths:
# ["/var/log/*"]`, over what such a directory holds on a device: a text log in which a
# power cut left 8 KiB of zeros where its last blocks were to be (the writer went on
# after them, the line it was writing cut by the hole), and the binary files beside it:
# the login records wtmp, btmp.1 and faillog, and lastlog, sparse (1 GiB that reads as
# zeros). The default exclude leaves the binary files alone; in the text log the zeros
# end the cut line and are skipped, said once and counted. Before, the zeros became one
# line glued to the next, and lastlog alone made 1,024 rows of 1 MiB of NULs.
source "$(dirname "$0")/lib.sh"
d="$T/varlog"
mkdir -p "$d/log"
{
	for i in $(seq 1 49); do echo "Dec  7 10:00:$((i % 60)) dev app[1]: line $i"; done
	printf 'Dec  7 10:00:50 dev app[1]: line 50 cut by the ho'
	head -c 8192 /dev/zero
	for i in $(seq 51 100); do echo "Dec  7 10:01:$((i % 60)) dev app[1]: line $i"; done
} >"$d/log/syslog"
head -c 38400 /dev/urandom >"$d/log/wtmp"
head -c 3840 /dev/urandom >"$d/log/btmp.1"
head -c 6400 /dev/zero >"$d/log/faillog"
truncate -s 1G "$d/log/lastlog"
printf 'root\0\0\0\0tty1' | dd of="$d/log/lastlog" bs=1 seek=292 conv=notrunc status=none
cat >"$d/floe.yaml" <<YAML
agent: { id: varlog-agent, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/log/*"], start_at: beginning }
lake: { warehouse: $d/wh }
YAML
check "run --once succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level info >"$d/run.log" 2>&1
check "every text line is a row, the cut one too" test "$(snapshot_records "$d/wh/default/logs")" = 100
rows_sql "$d/wh/default/logs" \
	"select count(*) filter (where contains(message, chr(0))), count(distinct source),
	        count(*) filter (where message like '%line 50 cut by the ho'),
	        count(*) filter (where message like '%line 51')
	 from t" >"$d/rows"
check "no NUL in any row, every row from the text log, the cut line and the next whole ($(cat "$d/rows"))" \
	grep -q '^\["0","1","1","1"\]$' "$d/rows"
check "the zeros are said once" test "$(grep -c "syslog: NUL bytes from offset 1795 skipped" "$d/run.log")" = 1
check "and counted" test "$(metric "$d/state/metrics.json" nul_bytes_skipped)" = 8192
check "the binary files are not read" test "$(metric "$d/state/metrics.json" bytes)" = "$(stat -c %s "$d/log/syslog")"
finish
