#!/usr/bin/env bash
# floe maintain through a REST catalog: a device with only the catalog's URI (keys, endpoint
# and region vended by the test catalog, data in Ceph RGW) appends many small files of a
# closed day; floe maintain (maintain.min_age 0s) compacts them through the catalog, with
# the agent still appending to that day: its replace snapshots are commits of the catalog
# (assert-ref-snapshot-id). Then a replace another writer's commit beats (409, retried on
# the new parent), one answered with a 503 after the catalog applied it, and one whose
# connection is cut after the request: the reload finds the snapshot landed, nothing is
# made twice and no file it lists is removed. Every line is in the table exactly once (DuckDB over the live files), the
# history is one line with replace snapshots in it (iceberg-js), and the catalog's
# OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
R="$FLOE_SRC/tests/integration/rest"
s3_start 18800
start_rest_catalog "$T/cat" --warehouse "s3://$S3_BUCKET/maint" --vend \
	"s3.access-key-id=$AWS_ACCESS_KEY_ID,s3.secret-access-key=$AWS_SECRET_ACCESS_KEY,s3.endpoint=$S3_ENDPOINT,client.region=$S3_REGION,s3.path-style-access=true"
mkdir -p "$T/logs"
# gen FIRST N: N JSON lines numbered from FIRST, with times on 2026-03-01 (a closed day).
gen() {
	local j
	for j in $(seq "$1" $(($1 + $2 - 1))); do
		printf '{"time":"2026-03-01T%02d:%02d:%02dZ","seq":%d}\n' $((j / 3600 % 24)) $((j / 60 % 60)) $((j % 60)) "$j"
	done >>"$T/logs/a.log"
}
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-maint, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning, parser: json, timestamp: { field: time, format: rfc3339 } }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
maintain: { min_age: 0s }
YAML
NOKEYS=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE
	HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" AWS_EC2_METADATA_DISABLED=true "$FLOE_BIN")
COMMIT='"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":200'
commits() { grep -c "$COMMIT" "$T/cat/requests.log" || true; }
commits_reach() { [ "$(commits)" -ge "$1" ]; }

check "floe maintain before the table exists fails: maintain never creates a table" \
	bash -c "! ${NOKEYS[*]} maintain -c '$T/floe.yaml' 2>'$T/m0.err'"
"${NOKEYS[@]}" run -c "$T/floe.yaml" --log-level info 2>"$T/run.log" &
pid=$!
PIDS+=("$pid")
n=0
for i in $(seq 1 8); do
	gen $n 40
	n=$((n + 40))
	wait_for 60 commits_reach "$i" || break
done
check "8 small appends through the catalog" commits_reach 8
"$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/before.inspect"
before=$(grep -c 'ts_day=2026-03-01/.*records=' "$T/before.inspect" || true)

# Compaction while the agent appends to the same day.
"${NOKEYS[@]}" maintain -c "$T/floe.yaml" --log-level info >"$T/m1.out" 2>"$T/m1.err" &
mpid=$!
PIDS+=("$mpid")
c0=$(commits)
for i in 1 2 3; do
	gen $n 40
	n=$((n + 40))
	wait_for 60 commits_reach $((c0 + i)) || break
done
rc=0
wait "$mpid" || rc=$?
echo "# $(cat "$T/m1.out")"
echo "# commits the catalog refused (409) during the run: $(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":409' "$T/cat/requests.log" || true)"
check "floe maintain through the catalog succeeds while the agent appends" test "$rc" = 0
check "it committed replace snapshots" grep -Eq 'in [1-9][0-9]* replace snapshots' "$T/m1.out"
check "each replace asserted the branch head it was built on" \
	grep -q 'assert-ref-snapshot-id' "$T/cat/requests.log"
c1=$(commits)
gen $n 40
n=$((n + 40))
check "the agent's appends after it land" wait_for 60 commits_reach $((c1 + 1))
stop_pid "$pid" || true
check "the agent is left with nothing spooled" "${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn

# A replace that another writer's commit beats (a 409 on a new parent, retried on it),
# then one the catalog applies and answers with a 503, then one whose connection it cuts
# (the outcome unknown: the reload shows the snapshot, and it is not made again).
for fault in '{"interpose_snapshot":1}' '{"fail_after_apply":1,"status":503}' '{"cut_after_apply":1}'; do
	for i in 1 2 3; do
		gen $n 20
		n=$((n + 20))
		"${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn || true
	done
	conflicts=$(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":409' "$T/cat/requests.log" || true)
	curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' -d "$fault" >/dev/null
	rc=0
	"${NOKEYS[@]}" maintain -c "$T/floe.yaml" --log-level info >"$T/m2.out" 2>"$T/m2.err" || rc=$?
	echo "# $fault: $(cat "$T/m2.out")"
	check "maintain succeeds ($fault)" test "$rc" = 0
	check "... and abandoned nothing" grep -q '; 0 abandoned' "$T/m2.out"
	check "... with one replace" grep -q 'in 1 replace snapshots' "$T/m2.out"
	case $fault in
	*interpose*)
		check "... retried after the catalog's 409" test "$(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":409' "$T/cat/requests.log")" -gt "$conflicts" ;;
	*) check "... the reload found the replace landed" grep -q 'had landed' "$T/m2.err" ;;
	esac
done

check "the live files are fetched from RGW" s3_live "$T/floe.yaml" maint/edge/logs "$T/s3" "$T/files"
after=$(grep -c 'ts_day=2026-03-01' "$T/files" || true)
echo "# the day's files: $before before compaction, $after after"
check "the day has fewer files than before" test "$after" -lt "$before"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "iceberg-js sees one line of history with the replaces in it" \
	node "$R/check_history.mjs" "$REST_URL" edge logs 4 "$(wc -l <"$T/logs/a.log")"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
