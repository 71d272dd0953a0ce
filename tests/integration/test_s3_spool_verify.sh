#!/usr/bin/env bash
# A spooled file damaged between seal and upload, with the warehouse on a real S3 server
# (Ceph RGW on loopback): the check before the upload finds it, quarantines it and the
# rows are read again from the input, so that the table holds every line exactly once
# (test_spool_verify.sh covers the same on a local warehouse).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
s3_start 17480

metric() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }

d="$T/s3"
mkdir -p "$d/logs"
for f in OpenSSH_2k.log Linux_2k.log; do sed -e '$a\' "$DATA/$f" >"$d/logs/$f"; done
s3_config "$d/floe.yaml" "$d/state" verify "[\"$d/logs/*.log\"]" "$S3PORT"
rc=0
FLOE_CRASH_AT=commit-before-upload timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error \
	2>/dev/null || rc=$?
check "the first run dies before the upload" test $rc = 99
spooled=$(ls "$d"/state/spool/*.parquet)
size=$(stat -c %s "$spooled")
printf 'XXXX' | dd of="$spooled" bs=1 seek=$((size / 2)) conv=notrunc status=none
check "the restart succeeds" timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "the live files are fetched" s3_live "$d/floe.yaml" verify "$d/s3" "$d/files"
check "every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
check "counted as damaged and rebuilt" test \
	"$(metric "$d/state/metrics.json" spool_damaged) $(metric "$d/state/metrics.json" spool_reread_entries)" = "1 1"
check "the damaged file is in quarantine" test -f "$d/state/spool/quarantine/$(basename "$spooled")"
finish
