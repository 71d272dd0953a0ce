#!/usr/bin/env bash
# Partition fan-out (bench_partitions): 1, 8, 64 and 1,000 active partitions under
# bucket(N, host) and hour(ts), files, bytes, lines/s and RSS beside the 1-partition run.
# usage: tests/bench/partitions.sh [BUILD_DIR] [ROWS]
set -euo pipefail
BUILD=${1:-build}
ROWS=${2:-1000000}
D=$(mktemp -d /tmp/floe-bench-parts.XXXXXX)
trap 'rm -rf "$D"' EXIT
"$BUILD/tests/bench_partitions" "$D" "$ROWS"
