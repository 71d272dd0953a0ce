#!/usr/bin/env bash
# The harness can fail: for each fsync call site of platform/fs.c, a cycle of
# scenario_tail.sh is recorded with that fsync left out (FLOE_TEST_SKIP_FSYNC, honoured
# only by a FLOE_FS_RECORD build), and its crash states must show a fault: a damaged
# state file, a lost or duplicated line, a refusal to start or an unreadable table. The
# worst-case states are explored first, then those where one directory's unsynced names
# are lost and the others' kept (the faults of a missing directory sync are there, found
# whatever the seed), then the random ones, up to the first fault.
# rename-dir is needed for the aggregation's images (a spool fragment's rename is made
# durable by its entry's directory sync anyway), so its cycle is the aggregation's. The
# "dir" site (the spool's sync after removing committed entries) guards no invariant
# (platform/README.md, "Durability"), so it is not in the list.
: "${FLOE_CRASH_DIR_VARIANTS:=4}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"

for site in temp-file copy-file file publish-dir mkdir-dir rename-dir; do
	agg=0
	[ $site != rename-dir ] || agg=1
	if ! AGG=$agg FLOE_TEST_SKIP_FSYNC=$site tail_record "$T/$site" >"$T/$site.rec.txt" 2>&1; then
		# A run that fails outright without the fsync is a fault too, found sooner.
		pass "without the $site fsync: a recorded run fails ($(tail -1 "$T/$site.rec.txt"))"
		continue
	fi
	AGG=$agg EXPLORE_STOP=1 explore "no $site fsync" "$rec" >"$T/$site.txt"
	grep -m1 -A3 '^FAULT' "$T/$site.txt" || true
	tail -1 "$T/$site.txt"
	check "without the $site fsync some crash state is faulty" test "$EXPLORE_FAULTS" -gt 0
done

# Through a REST catalog, whose commits outlive the cut, a commit relies on floe's own
# files being durable before it is sent: without publish-dir the catalog may name a
# manifest list the cut lost. A long run (FLOE_CRASH_REST_SITES=publish-dir, about a
# minute a site) shows the REST cycle finds it.
if [ -n "${FLOE_CRASH_REST_SITES:-}" ]; then
	source "$(dirname "$0")/scenario_rest.sh"
	trap '! running_job "${REST_PID:-}" || { kill "$REST_PID"; wait "$REST_PID"; } 2>/dev/null; cleanup' EXIT
	for site in ${FLOE_CRASH_REST_SITES//,/ }; do
		mkdir -p "$T/rest-$site"
		if ! FLOE_TEST_SKIP_FSYNC=$site rest_crash_record "$T/rest-$site" >"$T/rest-$site.rec.txt" 2>&1; then
			pass "REST, without the $site fsync: a recorded run fails ($(tail -1 "$T/rest-$site.rec.txt"))"
			continue
		fi
		EXPLORE_STOP=1 explore "REST, no $site fsync" "$rec" >"$T/rest-$site.txt"
		grep -m1 -A3 '^FAULT' "$T/rest-$site.txt" || true
		tail -1 "$T/rest-$site.txt"
		check "REST, without the $site fsync some crash state is faulty" test "$EXPLORE_FAULTS" -gt 0
		kill "$REST_PID" && wait "$REST_PID" 2>/dev/null || true
		REST_PID=""
	done
fi
finish
