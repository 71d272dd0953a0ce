#!/usr/bin/env bash
# Commit latency p50/p99 and metadata bytes written per commit as one agent's table
# ages: tests/bench/bench_commit.c commits tiny batches through the agent's commit path
# (floe_table_commit) into a local warehouse, with a simulated clock moving INTERVAL
# seconds per commit, and prints figures over the last 500 commits before each
# checkpoint (and the files and bytes in metadata/ at the checkpoint, and CPU per commit).
# Four series, each on a fresh table:
#   defaults: a configuration without properties: the table floe creates gets floe's
#             properties for an unattended writer (1 h snapshot age, old metadata files
#             deleted, see README "Table properties");
#   on, 5 d:  merging and expiry with Iceberg's defaults (history.expire.max-snapshot-age-ms
#             5 days: at one commit a minute the table keeps 7,200 snapshots);
#   on, 1 h:  the same with a 1-hour snapshot age (60 snapshots kept at one a minute);
#   off:      no merging, no expiry (floe before manifest merging and expiry on commit): grows quadratically.
# A series stops at the first checkpoint reached after BUDGET seconds (default 180) and
# says so. Prints figures only; asserts nothing.
# usage: tests/bench/commit_latency.sh [CHECKPOINT...]   (default 1000 2000; the issue's
#        figures: 1000 10000 50000)
# Needs bench_commit (BUILD default build-test/gcc, built in $BUILD/tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
BIN=${BENCH_COMMIT:-$BUILD/tests/bench_commit}
[ -x "$BIN" ] || { echo "build $BIN first (or set BENCH_COMMIT)"; exit 2; }
INTERVAL=${INTERVAL:-60}
BUDGET=${BUDGET:-180}
[ $# -gt 0 ] || set -- 1000 2000
W=$(mktemp -d /tmp/floe-bench-commit.XXXXXX)
trap 'rm -rf "$W"' EXIT
echo "== one commit of 3 rows every $INTERVAL s (simulated), figures over the last 500 commits =="
run() {
	local name=$1 mode=$2 age=$3
	shift 3
	rm -rf "$W/t" && mkdir -p "$W/t"
	echo "-- $name"
	"$BIN" "$W/t" "$mode" "$INTERVAL" "$age" "$BUDGET" "$@" | sed "s/^/   /"
}
run "no properties configured (floe's on the table it creates)" defaults 0 "$@"
run "merging and expiry on, Iceberg defaults (5 d snapshot age)" on 0 "$@"
run "merging and expiry on, 1 h snapshot age" on 3600000 "$@"
run "merging and expiry off" off 0 "$@"
