#!/usr/bin/env bash
# Agent identity on a local warehouse. (a) Two installations (state dirs) configured with
# one agent.id run at once: the first to commit lands, the other stops with exit 2 naming
# the first installation and commits nothing; given its own agent.id it then commits, and
# every line of both is in the table exactly once. No object in the warehouse is ever
# replaced, by any run of this test. (b) A second installation refused, taking over with
# agent.replaces, after which the first stops. (c) A changed agent.id keeps the positions
# (start_at beginning and end). (d) A wiped state_dir is a new installation and stops the
# same way. (e) The default agent.id comes from /etc/machine-id (hashed), floe check shows
# the installation, and a second state_dir on the same machine (a clone) stops.
source "$(dirname "$0")/lib.sh"
WH="$T/wh"
TABLE="$WH/default/logs"

# config FILE STATE LOGS START [agent keys...]: a floe configuration; agent keys are
# YAML lines for the agent section ("id: x").
config() {
	local file=$1 state=$2 logs=$3 start=$4
	shift 4
	{
		echo "agent:"
		echo "  state_dir: $state"
		for k in "$@"; do echo "  $k"; done
		echo "inputs:"
		echo "  - { type: tail, paths: [\"$logs/*.log\"], start_at: $start }"
		echo "tables: { logs: { commit_interval: ${COMMIT_INTERVAL:-60s} } }"
		echo "lake: { warehouse: $WH }"
	} >"$file"
}

# objects: the checksum of every object in the warehouse but version-hint.text (a cache
# every writer rewrites, by the spec's design), sorted.
objects() {
	(cd "$WH" && find . -type f ! -name version-hint.text -print0 | sort -z | xargs -0 -r sha256sum)
}
# unchanged OLD: every object listed in OLD is still there with the same bytes.
unchanged() {
	objects >"$T/objects.now"
	comm -23 <(sort "$1") <(sort "$T/objects.now") >"$T/objects.changed"
	if [ -s "$T/objects.changed" ]; then
		echo "  replaced or removed:"
		sed 's/^/    /' "$T/objects.changed"
		return 1
	fi
}
installation() { sed -n 's/^# installation \([0-9a-f-]*\) .*/\1/p'; }

# --- (a) two installations, one agent.id, at once ---------------------------------------
for x in a b; do
	mkdir -p "$T/$x/logs"
	seq -f "$x line %g" 1 20000 >"$T/$x/logs/app.log"
	config "$T/$x/floe.yaml" "$T/$x/state" "$T/$x/logs" beginning "id: same"
done
"$FLOE_BIN" run -c "$T/a/floe.yaml" --once --log-level warn 2>"$T/a/err" &
pa=$!
PIDS+=("$pa")
"$FLOE_BIN" run -c "$T/b/floe.yaml" --once --log-level warn 2>"$T/b/err" &
pb=$!
PIDS+=("$pb")
ra=0 rb=0
wait "$pa" || ra=$?
wait "$pb" || rb=$?
if [ $ra = 0 ]; then won=a lost=b rl=$rb; else won=b lost=a rl=$ra; fi
check "(a) one installation commits, the other stops with exit 2 (exit codes $ra, $rb)" \
	bash -c "[ '$ra$rb' = 02 ] || [ '$ra$rb' = 20 ]"
check "(a) the stopped one names the installation that commits under the id" \
	grep -q "agent.id 'same' already commits from installation [0-9a-f-]*" "$T/$lost/err"
live_files "$TABLE" >"$T/files"
check "(a) the table holds the first one's lines exactly once and none of the other's" \
	node "$READER/check_rows.js" "$T/files" "$T/$won/logs/app.log"
objects >"$T/objects.a"
# The stopped one, given its own id, commits what its spool kept.
config "$T/$lost/floe.yaml" "$T/$lost/state" "$T/$lost/logs" beginning "id: other"
check "(a) with its own agent.id the other one commits" \
	"$FLOE_BIN" run -c "$T/$lost/floe.yaml" --once --log-level warn
live_files "$TABLE" >"$T/files"
check "(a) every line of both is in the table exactly once" \
	node "$READER/check_rows.js" "$T/files" "$T/a/logs/app.log" "$T/b/logs/app.log"
check "(a) no object was replaced" unchanged "$T/objects.a"
"$FLOE_BIN" inspect "$TABLE" >"$T/inspect"
check "(a) each snapshot names its installation" \
	test "$(grep -c '^  floe.installation-id=' "$T/inspect")" = 2
rm -rf "$WH"

# --- (b) refused, then taken over ------------------------------------------------------------
for x in a b; do config "$T/$x/floe.yaml" "$T/$x/state.b" "$T/$x/logs" beginning "id: dev"; done
check "(b) the first installation commits" "$FLOE_BIN" run -c "$T/a/floe.yaml" --once --log-level warn
objects >"$T/objects.b"
ia=$("$FLOE_BIN" check -c "$T/a/floe.yaml" | installation)
rc=0
"$FLOE_BIN" run -c "$T/b/floe.yaml" --once --log-level warn 2>"$T/b/err.b" || rc=$?
check "(b) a second installation under the id stops with exit 2" test $rc = 2
check "(b) it says how to take over (agent.replaces: $ia)" grep -q "set agent.replaces: $ia" "$T/b/err.b"
check "(b) and commits nothing" unchanged "$T/objects.b"
config "$T/b/floe.yaml" "$T/b/state.b" "$T/b/logs" beginning "id: dev" "replaces: $ia"
check "(b) with agent.replaces it commits" "$FLOE_BIN" run -c "$T/b/floe.yaml" --once --log-level warn
"$FLOE_BIN" inspect "$TABLE" >"$T/inspect.b"
check "(b) floe inspect lists both installations under the shared id" \
	test "$(grep -c '^  agent dev installation .* (agent id shared by several installations)$' "$T/inspect.b")" = 2
echo "a line after the takeover" >>"$T/a/logs/app.log"
rc=0
"$FLOE_BIN" run -c "$T/a/floe.yaml" --once --log-level warn 2>"$T/a/err.b" || rc=$?
check "(b) the replaced installation then stops (exit $rc)" test $rc = 2
check "(b) saying that two live agents share the id" grep -q "two live agents share the id" "$T/a/err.b"
check "(b) no object was replaced" unchanged "$T/objects.b"
rm -rf "$WH"

# --- (c) a changed agent.id keeps the positions ---------------------------------------------------
d="$T/c"
mkdir -p "$d/logs"
seq -f "c line %g" 1 1000 >"$d/logs/app.log"
config "$d/floe.yaml" "$d/state" "$d/logs" beginning "id: before"
check "(c) beginning: the first run" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
seq -f "c more %g" 1 100 >>"$d/logs/app.log"
config "$d/floe.yaml" "$d/state" "$d/logs" beginning "id: after"
check "(c) beginning: a run under a new agent.id" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level info \
	2>"$d/err"
check "(c) the change is logged" grep -q "agent.id changed from before to after; the positions are kept" "$d/err"
live_files "$TABLE" >"$d/files"
check "(c) beginning: 1,100 lines exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
rm -rf "$WH"
# start_at end: only a running agent reads anything. A file that appears while it runs is
# read from its beginning; its commit saves the end position of the file seen at start-up.
committed() { [ "$(metric "$e/state/metrics.json" rows_committed 2>/dev/null)" = "$1" ]; }
e="$T/e"
mkdir -p "$e/logs"
seq -f "e old %g" 1 1000 >"$e/logs/app.log"
COMMIT_INTERVAL=1s config "$e/floe.yaml" "$e/state" "$e/logs" end "id: before"
"$FLOE_BIN" run -c "$e/floe.yaml" --log-level warn 2>"$e/err" &
pe=$!
PIDS+=("$pe")
# metrics.json is first written after the start-up scan (by the first commit cycle).
check "(c) end: the agent is up" wait_for 30 test -f "$e/state/metrics.json"
seq -f "e new %g" 1 100 >"$e/logs/new.log"
check "(c) end: the running agent commits the new file's 100 lines" wait_for 30 committed 100
kill -TERM "$pe"
wait "$pe" || true
old_size=$(stat -c %s "$e/logs/app.log")
seq -f "e later %g" 1 100 >>"$e/logs/app.log"
COMMIT_INTERVAL=1s config "$e/floe.yaml" "$e/state" "$e/logs" end "id: after"
check "(c) end: a run under a new agent.id" "$FLOE_BIN" run -c "$e/floe.yaml" --once --log-level warn
live_files "$TABLE" >"$e/files"
list=$(sed "s/.*/'&'/" "$e/files" | paste -sd,)
duck "select count(*), count(distinct \"offset\"), min(\"offset\"), min(message), max(message)
	from read_parquet([$list]) where source = '$e/logs/app.log'" >"$e/rows"
check "(c) end: the 100 lines written while it was down are in the table, once (got $(cat "$e/rows"))" \
	grep -qx "\[\"100\",\"100\",\"$old_size\",\"e later 1\",\"e later 99\"\]" "$e/rows"
rm -rf "$WH"

# --- (d) a wiped state_dir --------------------------------------------------------------------
d="$T/d"
mkdir -p "$d/logs"
seq -f "d line %g" 1 500 >"$d/logs/app.log"
config "$d/floe.yaml" "$d/state" "$d/logs" beginning "id: device-7"
check "(d) the first installation commits" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
objects >"$T/objects.d"
rm -rf "$d/state"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "(d) after a wipe the agent stops with exit 2 (exit $rc)" test $rc = 2
check "(d) naming a wiped state_dir as one cause" grep -q "state_dir was wiped or replaced" "$d/err"
check "(d) and commits nothing" unchanged "$T/objects.d"
rm -rf "$WH"

# --- (e) the default agent id -----------------------------------------------------------------
if [ -s /etc/machine-id ]; then
	for x in f g; do
		mkdir -p "$T/$x/logs"
		seq -f "$x line %g" 1 100 >"$T/$x/logs/app.log"
		config "$T/$x/floe.yaml" "$T/$x/state" "$T/$x/logs" beginning
	done
	"$FLOE_BIN" check -c "$T/f/floe.yaml" >"$T/f/check"
	check "(e) floe check shows there is no installation yet" grep -q "^# installation: none yet" "$T/f/check"
	check "(e) floe check creates nothing" test ! -e "$T/f/state"
	check "(e) a run with the default agent.id" "$FLOE_BIN" run -c "$T/f/floe.yaml" --once --log-level warn
	inst=$("$FLOE_BIN" check -c "$T/f/floe.yaml" | installation)
	"$FLOE_BIN" inspect "$TABLE" >"$T/inspect.e"
	host=$(hostname | cut -c1-47 | tr -c 'A-Za-z0-9._\n-' '-')
	check "(e) the default agent.id is the host name and 16 hex digits" \
		grep -Eq "^  floe.agent-id=${host}-[0-9a-f]{16}$" "$T/inspect.e"
	check "(e) floe check shows the installation the snapshot names ($inst)" \
		grep -q "^  floe.installation-id=$inst$" "$T/inspect.e"
	check "(e) the machine id itself is not in it" bash -c "! grep -q \"\$(cat /etc/machine-id)\" '$T/inspect.e'"
	rc=0
	"$FLOE_BIN" run -c "$T/g/floe.yaml" --once --log-level warn 2>"$T/g/err" || rc=$?
	check "(e) a second state_dir on the same machine (a clone) stops with exit 2" test $rc = 2
fi
finish
