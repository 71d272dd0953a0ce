#!/usr/bin/env bash
# Crashes against a real S3 server (Ceph RGW on loopback): every named crash point of sealing
# and committing (platform/crash.c) once, each followed by a restart with more lines:
# afterwards the table holds every input line exactly once. (kill -9 at random moments is
# test_s3_kill.sh.wip, out of the suite until the recovery bug it shows is fixed.)
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
s3_start 14480

points=(seal-before-entry seal-before-checkpoint commit-after-manifest commit-after-metadata
	commit-before-spool-remove)
for point in "${points[@]}"; do
	d="$T/$point"
	mkdir -p "$d/logs"
	for f in OpenSSH_2k.log Linux_2k.log; do sed -e '$a\' "$DATA/$f" >"$d/logs/$f"; done
	s3_config "$d/floe.yaml" "$d/state" "crash-$point" "[\"$d/logs/*.log\"]" "$S3PORT"
	rc=0
	FLOE_CRASH_AT=$point timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "$point: the first run dies at the crash point" test $rc = 99
	head -100 "$DATA/Apache_2k.log" | tr -d '\r' >>"$d/logs/Linux_2k.log"
	check "$point: the restart succeeds" timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	check "$point: the live files are fetched" s3_live "$d/floe.yaml" "crash-$point" "$d/s3" "$d/files"
	check "$point: every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
done

finish
