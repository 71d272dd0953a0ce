#!/usr/bin/env bash
# S3 keys from file: references (lake.s3.access_key_id: file:/path) that appear after the
# start and change while the agent runs, against s3_stub.py, which accepts one access key
# id at a time (access_key= in its control file). A device whose key files are provisioned
# after boot (an enrolment or Vault agent, a late mount, LoadCredential=) starts anyway:
# `floe check` warns and passes, `floe run` reads and spools, says once which file is
# missing, reports the store as refusing (/healthz, store_reachable 0), and commits every
# line exactly once when the files appear. A rotation (the server takes only the new key;
# the files are emptied, then written anew) takes effect without a restart, and no
# request is signed with anything but a whole key.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env # the environment's keys (STUBKEY) are not the files': the stub refuses them
export AWS_EC2_METADATA_DISABLED=true

d=$T/kf
mkdir -p "$d/in" "$d/keys"
stub_start "$d/stub" || { fail "the stub starts"; finish; exit 1; }
echo "access_key=KEYONE" >"$d/stub/ctl"
cat >"$d/floe.yaml" <<YAML
agent: { id: keyfile-test, state_dir: $d/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/kf
  catalog: { type: s3 }
  s3:
    endpoint: "http://127.0.0.1:$STUB_PORT"
    region: us-east-1
    path_style: true
    request_timeout: 2s
    access_key_id: "file:$d/keys/id"
    secret_access_key: "file:$d/keys/secret"
YAML

m() { metric "$d/state/metrics.json" "$1"; }
spooled() { [ -f "$d/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ] && [ "$(m seals)" -ge 1 ]; }
committed() { [ -f "$d/state/metrics.json" ] && [ "$(m rows_committed)" = "$1" ] && [ "$(m spool_bytes)" = 0 ]; }
healthz_says() { curl -s "http://127.0.0.1:$HPORT/healthz" >"$d/healthz" && grep -q "$1" "$d/healthz"; }
# keys ID: the key files as a provisioning agent writes them (a temporary file renamed).
keys() {
	printf '%s\n' "$1" >"$d/keys/id.tmp" && mv "$d/keys/id.tmp" "$d/keys/id"
	printf '%s\n' "secret-of-$1" >"$d/keys/secret.tmp" && mv "$d/keys/secret.tmp" "$d/keys/secret"
}
# rows KEY: the records of the table's live files, as floe inspect reads them with KEY.
rows() {
	AWS_ACCESS_KEY_ID=$1 "$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/kf/default/logs" 2>/dev/null |
		sed -n 's#^  s3://bkt/.*  records=\([0-9]*\).*#\1#p' | awk '{ s += $1 } END { print s + 0 }'
}
# Every key id a request was refused with: only the keys whole files held (KEYONE before
# the server's rotation), never an empty or partial one.
refused_keys() { sed -n 's/^[0-9.]* REFUSED \([^ ]*\) .*/\1/p' "$d/stub/stub.log" | sort -u | tr '\n' ' '; }

# floe check: a file that is not there yet is a warning, not an error.
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check.out" 2>"$d/check.err" || rc=$?
check "check passes with the key files missing (exit $rc)" test "$rc" = 0
check "check warns that run waits for the file, naming it" \
	grep -q "warning: S3 credentials are not available yet (static: file:$d/keys/id: No such file or directory.*floe run starts without them" "$d/check.err"

"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts and serves its status pages without the key files" wait_for 30 grep -q 'status: serving' "$d/err"
HPORT=$(logged_port "$d/err")
check "the agent runs" kill -0 "$pid"
check "it says once which files are missing ($(grep -c 'not available yet' "$d/err" || true))" \
	test "$(grep -c "S3 credentials are not available yet (static: file:$d/keys/id: No such file or directory; file:$d/keys/secret: No such file" "$d/err")" = 1
seq 1 50 | sed 's/^/before the keys line /' >>"$d/in/app.log"
check "the lines go to the spool" wait_for 30 spooled
check "/healthz says the store refuses for now, naming the missing file" wait_for 10 healthz_says "file:$d/keys/id: No such file"
sed 's/^/# /' "$d/healthz" 2>/dev/null || true
check "metrics.json: store_reachable 0" test "$(m store_reachable)" = 0
check "no request went out unsigned or with the environment's key ($(refused_keys))" test -z "$(refused_keys)"

keys KEYONE
check "every line is committed once the key files appear" wait_for 60 committed 50
check "store_reachable 1" test "$(m store_reachable)" = 1
check "the table holds the 50 lines once ($(rows KEYONE))" test "$(rows KEYONE)" = 50

# Rotation: the server takes only the new key from now on (the old one is refused: 403,
# waited out), then the files are emptied (a script that truncates first), then written
# anew.
echo "access_key=KEYTWO" >"$d/stub/ctl"
seq 1 50 | sed 's/^/during the rotation line /' >>"$d/in/app.log"
check "the old key is refused once the server rotated" wait_for 30 grep -q " REFUSED KEYONE " "$d/stub/stub.log"
check "/healthz says the store refuses" wait_for 10 healthz_says "store unreachable or refusing: .*403"
: >"$d/keys/id"
check "an emptied key file is reported, not used" wait_for 30 healthz_says "file:$d/keys/id: is empty"
check "the agent runs on" kill -0 "$pid"
keys KEYTWO
check "every line is committed with the new key, without a restart" wait_for 60 committed 100
check "the same process committed them" kill -0 "$pid"
check "the table holds the 100 lines once ($(rows KEYTWO))" test "$(rows KEYTWO)" = 100
check "requests were refused with whole keys only ($(refused_keys))" \
	bash -c "[ -z '$(refused_keys)' ] || [ '$(refused_keys)' = 'KEYONE ' ]"
kill -TERM "$pid" 2>/dev/null || true
wait "$pid" 2>/dev/null || true
check "nothing was lost or dropped" test "$(m rows_committed)" = 100
stub_stop
finish
