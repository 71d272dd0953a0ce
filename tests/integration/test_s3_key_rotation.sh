#!/usr/bin/env bash
# S3 keys rotated under a running agent (Ceph RGW on loopback): lake.s3 names the keys by
# file:/path references, which a secrets agent or an operator rewrites with a new key for
# the same user, and the old key is removed from the store. Before, the references were
# read once at the start: every request was refused (403 InvalidAccessKeyId) until someone
# restarted the agent. Now a refusal that says the store does not know the key
# (InvalidAccessKeyId, SignatureDoesNotMatch, an expired or invalid token) has the keys
# read again from their references, once per request: the agent says so, and every line,
# before and after the rotation, is in the table once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 18760
AK1=$AWS_ACCESS_KEY_ID SK1=$AWS_SECRET_ACCESS_KEY
d=$T/rot
mkdir -p "$d/logs" "$d/keys"
printf '%s' "$AK1" >"$d/keys/ak"
printf '%s' "$SK1" >"$d/keys/sk"
COMMIT_INTERVAL=1s s3_config "$d/floe.yaml" "$d/state" rot "[\"$d/logs/*.log\"]" "$S3PORT"
sed -i "s#path_style: true }#path_style: true, access_key_id: \"file:$d/keys/ak\", secret_access_key: \"file:$d/keys/sk\" }#" "$d/floe.yaml"
# No key of the environment's: only the files.
KEYS=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE
	HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" AWS_EC2_METADATA_DISABLED=true "$FLOE_BIN")
seq -f "before rotation %g" 1 50 >"$d/logs/a.log"
"${KEYS[@]}" run -c "$d/floe.yaml" --log-level info 2>"$d/run.log" &
pid=$!
PIDS+=("$pid")
rows_reach() { [ "$(sed -n 's/.*table: committed snapshot .* \([0-9]*\) rows) as .*/\1/p' "$d/run.log" | awk '{s += $1} END {print s + 0}')" -ge "$1" ]; }
check "the lines before the rotation land" wait_for 60 rows_reach 50

# Rotation: a new key for the same user written to the files, the old one removed.
AK2=$(od -An -tx1 -N10 /dev/urandom | tr -d ' \n' | tr a-f A-F)
SK2=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
radosgw-admin -c "$T/rgw/ceph.conf" key create --uid=floe --key-type=s3 --access-key="$AK2" --secret-key="$SK2" >/dev/null 2>&1
printf '%s' "$AK2" >"$d/keys/ak.new" && mv "$d/keys/ak.new" "$d/keys/ak"
printf '%s' "$SK2" >"$d/keys/sk.new" && mv "$d/keys/sk.new" "$d/keys/sk"
check "the old key is removed from RGW" \
	bash -c "radosgw-admin -c '$T/rgw/ceph.conf' key rm --uid=floe --key-type=s3 --access-key='$AK1' >/dev/null 2>&1"
seq -f "after rotation %g" 1 50 >>"$d/logs/a.log"
check "the lines after the rotation land, with the new key" wait_for 90 rows_reach 100
check "... the agent said it read the keys again" grep -q "S3 credentials: the keys of file:.* were read again" "$d/run.log"
stop_pid "$pid" || true
# The environment's key is gone from RGW: inspect reads with the files' keys too.
"${KEYS[@]}" inspect -c "$d/floe.yaml" >"$d/inspect" 2>"$d/inspect.err"
rows=$(sed -n 's#^  s3://.*  records=\([0-9]*\).*#\1#p' "$d/inspect" | awk '{s += $1} END {print s + 0}')
check "the table holds every line once ($rows of 100)" test "$rows" = 100
finish
