#!/usr/bin/env bash
# The build without the optional libraries (FLOE_WITH_S3, FLOE_WITH_PCRE2 and FLOE_JOURNAL
# off), registered only there (the suite's minimal step): floe links neither libcurl,
# PCRE2 nor libsystemd, prints its stripped size, and runs --once over a sample log into
# a table.
source "$(dirname "$0")/lib.sh"

bin=$FLOE_BIN
check "links neither libcurl, PCRE2 nor libsystemd" \
	sh -c "readelf -d '$bin' | grep -q NEEDED && ! readelf -d '$bin' | grep -q 'libcurl\|libpcre2\|libsystemd'"
strip -o "$T/stripped" "$bin"
size=$(stat -c %s "$T/stripped")
echo "binary size, stripped, amd64, no S3, PCRE2, journal ($(sed -n 's/^CMAKE_BUILD_TYPE:STRING=//p' "$FLOE_BUILD/CMakeCache.txt") build): $size bytes"

SAMPLE=$FLOE_SRC/tests/data/loghub/Linux_2k.log
# Its last line has no newline: run --once takes it too (awk counts it, wc -l does not).
want=$(awk 'END { print NR }' "$SAMPLE")
cat >"$T/floe.yaml" <<YAML
agent: { state_dir: $T/state }
inputs: [ { type: tail, paths: ["$SAMPLE"], start_at: beginning } ]
YAML
rc=0
timeout -k 5 120 "$bin" run -c "$T/floe.yaml" --once >"$T/run.out" 2>&1 || rc=$?
check "run --once over a sample log" test $rc = 0
[ $rc = 0 ] || tail -20 "$T/run.out"
rows=$(snapshot_records "$T/state/warehouse/default/logs" "$bin")
check "the table holds the sample's $want lines ($rows)" test "$rows" = "$want"
finish
