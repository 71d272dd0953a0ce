#!/usr/bin/env bash
# Agent identity on a real S3 server (Ceph RGW on loopback): two installations (state dirs)
# configured with one agent.id run at once against one table. The first to commit lands;
# the other stops with exit 2 naming the first installation and commits nothing; given its
# own agent.id it then commits, and every line of both is in the table exactly once. No
# object is ever replaced: every object but version-hint.text keeps its bytes through all
# runs, including a restart after a crash between uploading the data files and committing
# (the retry finds its own upload under its own name).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 15480
PREFIX=ident

# objects DIR: the checksum of every fetched object but version-hint.text, sorted.
objects() {
	rm -rf "$1" && s3_fetch "$PREFIX" "$1" >/dev/null &&
		(cd "$1" && find . -type f ! -name version-hint.text -print0 | sort -z | xargs -0 -r sha256sum)
}
# unchanged OLD: every object listed in OLD is still there with the same bytes.
unchanged() {
	objects "$T/fetch.now" >"$T/objects.now" || return 1
	comm -23 <(sort "$1") <(sort "$T/objects.now") >"$T/objects.changed"
	if [ -s "$T/objects.changed" ]; then
		echo "  replaced or removed:"
		sed 's/^/    /' "$T/objects.changed"
		return 1
	fi
}

for x in a b; do
	mkdir -p "$T/$x/logs"
	seq -f "$x line %g" 1 20000 >"$T/$x/logs/app.log"
	AGENT_ID=same s3_config "$T/$x/floe.yaml" "$T/$x/state" "$PREFIX" "[\"$T/$x/logs/*.log\"]" "$S3PORT"
done
timeout 120 "$FLOE_BIN" run -c "$T/a/floe.yaml" --once --log-level warn 2>"$T/a/err" &
pa=$!
PIDS+=("$pa")
timeout 120 "$FLOE_BIN" run -c "$T/b/floe.yaml" --once --log-level warn 2>"$T/b/err" &
pb=$!
PIDS+=("$pb")
ra=0 rb=0
wait "$pa" || ra=$?
wait "$pb" || rb=$?
if [ $ra = 0 ]; then won=a lost=b; else won=b lost=a; fi
check "one installation commits, the other stops with exit 2 (exit codes $ra, $rb)" \
	bash -c "[ '$ra$rb' = 02 ] || [ '$ra$rb' = 20 ]"
check "the stopped one names the installation that commits under the id" \
	grep -q "agent.id 'same' already commits from installation [0-9a-f-]*" "$T/$lost/err"
check "the live files are fetched" s3_live "$T/$won/floe.yaml" "$PREFIX" "$T/s3.1" "$T/files"
check "the table holds the first one's lines exactly once and none of the other's" \
	node "$READER/check_rows.js" "$T/files" "$T/$won/logs/app.log"
objects "$T/fetch.1" >"$T/objects.1"

# The stopped one, under its own id, crashes after uploading, then commits on restart.
AGENT_ID=other s3_config "$T/$lost/floe.yaml" "$T/$lost/state" "$PREFIX" "[\"$T/$lost/logs/*.log\"]" "$S3PORT"
rc=0
FLOE_CRASH_AT=commit-after-manifest timeout 120 "$FLOE_BIN" run -c "$T/$lost/floe.yaml" --once \
	--log-level error 2>/dev/null || rc=$?
check "under its own agent.id, it crashes after uploading (exit $rc)" test $rc = 99
check "the restart commits" timeout 120 "$FLOE_BIN" run -c "$T/$lost/floe.yaml" --once --log-level info \
	2>"$T/$lost/err.restart"
check "it finds its own upload and keeps it" grep -q "is already there (an earlier attempt of this installation)" \
	"$T/$lost/err.restart"
check "the live files are fetched again" s3_live "$T/$won/floe.yaml" "$PREFIX" "$T/s3.2" "$T/files"
check "every line of both is in the table exactly once" \
	node "$READER/check_rows.js" "$T/files" "$T/a/logs/app.log" "$T/b/logs/app.log"
check "no object was replaced" unchanged "$T/objects.1"
check "two snapshots, each naming its installation" \
	test "$(grep -c '^  floe.installation-id=' "$T/files.inspect")" = 2
finish
