#!/usr/bin/env bash
# A table this agent committed to that is missing from a local warehouse is not created
# again: an operator who moved it away and a warehouse mount that did not come up (an
# empty mount point) look the same, and a table made on the root file system would take
# the commits meant for the mounted one. The agent reads into the spool, says so, shows
# it (table_missing in metrics.json and /metrics, store_reachable 0) and retries; the
# operator who meant it sets lake.recreate_tables. Three cases:
#  moved:   the table is moved away; a run refuses to make a new one and keeps the lines in
#           its spool; with lake.recreate_tables a new table takes them, once each.
#  mount:   the warehouse is an empty mount point when a daemon starts; it commits nothing
#           and makes nothing there; when the mount comes back, it commits every line once.
#  deleted: the table is deleted under a running daemon: said as such, not made again.
source "$(dirname "$0")/lib.sh"

rows() {
	"$FLOE_BIN" inspect "$1" 2>/dev/null | sed -n 's#^live files=[0-9]* records=\([0-9]*\).*#\1#p'
}

# setup DIR: 100 lines committed to DIR/wh/default/logs.
setup() {
	mkdir -p "$1/logs"
	seq 1 100 | sed 's/^/line /' >"$1/logs/app.log"
	COMMIT_INTERVAL=1s write_config "$1/floe.yaml" "$1/state" "$1/wh" "[\"$1/logs/*.log\"]"
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level error && test "$(rows "$1/wh/default/logs")" = 100
}

# 1. Moved away.
d="$T/moved"
check "moved: 100 lines committed" setup "$d"
mv "$d/wh/default/logs" "$d/moved-logs"
before=$(cd "$d/moved-logs" && find . -type f | sort | xargs md5sum)
seq 101 150 | sed 's/^/line /' >>"$d/logs/app.log"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "moved: --once cannot commit (exit $rc)" test $rc != 0
check "moved: no new table is made" test ! -e "$d/wh/default/logs"
check "moved: said so" grep -q "table .*/logs is missing, though this agent committed to it" "$d/err"
check "moved: table_missing in metrics.json" test "$(metric "$d/state/metrics.json" table_missing)" = 1
check "moved: the lines wait in the spool" test "$(metric "$d/state/metrics.json" spool_entries)" -ge 1
check "moved: floe check says it" \
	bash -c "'$FLOE_BIN' check -c '$d/floe.yaml' 2>/dev/null | grep -q '^# table logs: MISSING from '"
sed -i "s#^  warehouse: .*#&\n  recreate_tables: true#" "$d/floe.yaml"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err2" || rc=$?
check "moved: with lake.recreate_tables the run commits (exit 0)" test $rc = 0
check "moved: the new table holds the 50 new lines" test "$(rows "$d/wh/default/logs")" = 50
check "moved: the moved one is left as it was" \
	test "$(cd "$d/moved-logs" && find . -type f | sort | xargs md5sum)" = "$before"
check "moved: table_missing is 0 again" test "$(metric "$d/state/metrics.json" table_missing)" = 0

# 2. An empty mount point, then the mount comes back.
d="$T/mount"
check "mount: 100 lines committed" setup "$d"
sed -i "s#^  state_dir: .*#&\n  http: { listen: \"127.0.0.1:0\" }#" "$d/floe.yaml"
mv "$d/wh" "$d/wh.real"
mkdir "$d/wh"
seq 101 150 | sed 's/^/line /' >>"$d/logs/app.log"
run_serving "$d/floe.yaml" "$d/err"
check "mount: the daemon serves" test -n "$port"
check "mount: says the table is missing" wait_log "$d/err" "is missing, though this agent committed to it"
check "mount: /metrics has floe_table_missing 1" prom_is "floe_table_missing 1"
check "mount: nothing made on the empty mount point" test -z "$(ls -A "$d/wh")"
check "mount: the agent runs" kill -0 "$pid"
rmdir "$d/wh"
mv "$d/wh.real" "$d/wh"
check "mount: commits once the mount is back" wait_log "$d/err" "the store answers again" 60
check "mount: every line once" test "$(rows "$d/wh/default/logs")" = 150
check "mount: /metrics has floe_table_missing 0" prom_is "floe_table_missing 0"
check "mount: the agent stops cleanly" stop_pid "$pid"
check "mount: every line once after the stop" test "$(rows "$d/wh/default/logs")" = 150

# 3. Deleted while a daemon runs (rm -rf of the table): the log says what happened and
# what comes next, no table is made again, the lines wait in the spool.
d="$T/deleted"
check "deleted: 100 lines committed" setup "$d"
sed -i "s#^  state_dir: .*#&\n  http: { listen: \"127.0.0.1:0\" }#" "$d/floe.yaml"
run_serving "$d/floe.yaml" "$d/err"
check "deleted: the daemon serves" test -n "$port"
rm -rf "$d/wh/default/logs"
seq 101 150 | sed 's/^/line /' >>"$d/logs/app.log"
check "deleted: says the table was deleted" \
	wait_log "$d/err" "is gone and no metadata file is left: the table was deleted"
check "deleted: then that it is missing" wait_log "$d/err" "is missing, though this agent committed to it"
check "deleted: /metrics has floe_table_missing 1" prom_is "floe_table_missing 1"
check "deleted: no table made again" test ! -e "$d/wh/default/logs/metadata"
check "deleted: the agent stops cleanly" stop_pid "$pid"
check "deleted: the lines wait in the spool" test "$(metric "$d/state/metrics.json" spool_entries)" -ge 1

finish
