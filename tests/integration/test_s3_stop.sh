#!/usr/bin/env bash
# Every S3 loop ends, and S3 errors name the right thing. Against s3_stub.py (a small
# in-memory S3 on loopback that misbehaves on request):
# (a) SIGTERM ends `floe run` within 5 s while a data file upload is stalled, (b) while the
#     commit (the metadata PUT) is stalled, (c) while a listing never ends or the credential
#     fetch (STS) is stalled; after (a) and (b) the spool holds what was sealed and the next
#     start commits it.
# (d) A listing that repeats its continuation token fails at once, naming bucket and prefix.
# (e) A server that sends headers and then 2 bytes/s is cut by the deadline and retried.
# (f) A 307 is reported with its Location and the likely cause; a store answering 412 to
#     every create is named as such (not "File exists").
# (g) Configuration errors exit 2: a missing environment variable,
#     no credentials from any source (and IMDS is not probed unless listed); an http://
#     endpoint on a host that is not loopback needs lake.s3.allow_http (then check warns).
# (h) `floe inspect s3://BUCKET/PREFIX` reads a table on a real S3 server (Ceph RGW).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
# ctl DIR LINES...: the stub's control file (it reads it again when it changes; the mtime
# has nanoseconds, and the size changes with every setting used here).
ctl() {
	local d=$1
	shift
	printf '%s\n' "$@" >"$d/ctl"
}

# config FILE DIR PREFIX [lake.s3 keys]: a configuration for s3://bkt/PREFIX on the stub,
# reading DIR/in/*.log.
config() {
	local file=$1 d=$2 prefix=$3 extra=${4:-}
	cat >"$file" <<YAML
agent: { id: stop-test, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/$prefix
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true$extra }
YAML
}

# stop_within SECONDS PID: SIGTERM, then at most SECONDS for PID to exit; returns its exit
# code, or 124 if it did not exit in time (it is killed then). Sets STOP_MS.
stop_within() {
	local secs=$1 pid=$2 i t0
	t0=$(date +%s%N)
	kill -TERM "$pid" 2>/dev/null || true
	for i in $(seq 1 $((secs * 20))); do
		if ! kill -0 "$pid" 2>/dev/null; then
			STOP_MS=$((($(date +%s%N) - t0) / 1000000))
			wait "$pid"
			return $?
		fi
		sleep 0.05
	done
	STOP_MS=timeout
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	return 124
}

# records PREFIX: the live records of the table at s3://bkt/PREFIX on the stub.
records() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/$1/default/logs" 2>/dev/null |
		sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'
}

S="$T/stub"
stub_start "$S"

# --- (a), (b) SIGTERM while the upload or the commit is stalled ------------------------------
# stalled_stop CASE REGEX: a running agent commits once, then requests matching REGEX stall;
# a new line is sealed and its commit stalls; SIGTERM must end the agent within 5 s, exit 0,
# keep the entry in the spool, and the next start commits it.
stalled_stop() {
	local name=$1 regex=$2 d="$T/$1"
	mkdir -p "$d/in"
	printf 'first %s\n' 1 2 3 >"$d/in/a.log"
	config "$d/floe.yaml" "$d" "$name"
	ctl "$S"
	"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
	local pid=$!
	PIDS+=("$pid")
	check "($name) the first commit lands" wait_for 20 grep -q 'committed snapshot' "$d/err"
	ctl "$S" "stall=$regex"
	echo "stalled line" >>"$d/in/a.log"
	check "($name) the next commit stalls at '$regex'" \
		wait_for 20 grep -qE "FAULT stall .*$name/default/logs/" "$S/stub.log"
	local rc=0
	stop_within 5 "$pid" || rc=$?
	check "($name) SIGTERM ends floe run within 5 s (exit $rc after $STOP_MS ms)" test "$rc" = 0
	check "($name) it says the spool keeps the entry for the next start" \
		grep -q 'the spool holds 1 entries' "$d/err"
	check "($name) the entry is in the spool" test -n "$(ls "$d/state/spool/"*.entry 2>/dev/null)"
	ctl "$S"
	check "($name) the next start commits it" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	check "($name) the table holds every line ($(records "$name"))" test "$(records "$name")" = 4
}
stalled_stop a '^PUT .*/data/'
stalled_stop b '^PUT .*/metadata/v[0-9]+\.metadata\.json'

# --- (c) SIGTERM while a listing never ends --------------------------------------------------
d="$T/c"
mkdir -p "$d/in"
echo "a line" >"$d/in/a.log"
config "$d/floe.yaml" "$d" c
ctl "$S" list=endless
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "(c) the listing goes on (20 pages)" \
	wait_for 20 bash -c "[ \$(grep -c 'FAULT list-endless' '$S/stub.log') -ge 20 ]"
rc=0
stop_within 5 "$pid" || rc=$?
check "(c) SIGTERM ends floe run within 5 s (exit $rc after $STOP_MS ms)" test "$rc" = 0
check "(c) it says it stopped while starting" grep -q 'stopped while starting' "$d/err"

# SIGTERM while the credential fetch (STS for a web identity, 15 s timeout) is stalled.
echo "a.jwt.token" >"$d/token"
ctl "$S" 'stall=^POST /'
env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY AWS_WEB_IDENTITY_TOKEN_FILE="$d/token" \
	AWS_ROLE_ARN=arn:aws:iam::123456789012:role/floe AWS_ENDPOINT_URL_STS="http://127.0.0.1:$STUB_PORT" \
	"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err-sts" &
pid=$!
PIDS+=("$pid")
check "(c) the credential fetch stalls" wait_for 20 grep -q 'FAULT stall POST /' "$S/stub.log"
rc=0
stop_within 5 "$pid" || rc=$?
check "(c) SIGTERM during a stalled credential fetch ends floe run within 5 s (exit $rc after $STOP_MS ms)" \
	test "$rc" = 0

# --- (d) a repeated continuation token --------------------------------------------------------
d="$T/d"
mkdir -p "$d/in"
config "$d/floe.yaml" "$d" d
ctl "$S" list=repeat
: >"$S/stub.log"
t0=$(date +%s)
rc=0
timeout -k 2 20 "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "(d) a repeated token fails the run (exit $rc) within 5 s" \
	test "$rc" = 1 -a $(($(date +%s) - t0)) -le 5
check "(d) the error names the bucket, the prefix and the repeated token" \
	grep -q 'listing s3://bkt/d/default/logs/metadata/v: page 2 repeats a continuation token' "$d/err"
check "(d) two list requests were made ($(grep -c 'list-type=2' "$S/stub.log"))" \
	test "$(grep -c 'list-type=2' "$S/stub.log")" = 2

# --- (e) a server dripping 2 bytes/s ---------------------------------------------------------
d="$T/e"
mkdir -p "$d/in"
echo "a line" >"$d/in/a.log"
config "$d/floe.yaml" "$d" e ", request_timeout: 2s"
ctl "$S" 'drip=^GET .*/e/default/logs/metadata/version-hint' drip_count=1
t0=$(date +%s)
rc=0
timeout -k 2 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "(e) the dripping answer is cut and the run succeeds (exit $rc) within 15 s" \
	test "$rc" = 0 -a $(($(date +%s) - t0)) -le 15
check "(e) the cut is logged with the key and the elapsed time" \
	grep -qE 'GET s3://bkt/e/default/logs/metadata/version-hint.text: no complete answer within its deadline: cut after 2\.[0-9] s' "$d/err"
check "(e) the line is in the table" test "$(records e)" = 1

# --- (f) a redirect, a store refusing creates ----------------------------------------------
d="$T/f"
mkdir -p "$d/in"
config "$d/floe.yaml" "$d" f
ctl "$S" 'redirect=.'
rc=0
timeout -k 2 20 "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "(f) a 307 fails the run (exit $rc)" test "$rc" = 1
check "(f) the 307 is named with its Location and the likely cause" \
	grep -q 'answered 307 TemporaryRedirect (Location: https://bkt.s3.eu-west-1.amazonaws.com/.*; bucket region: eu-west-1): the bucket is likely in another region or served by another endpoint' "$d/err"
check "(f) not as an unexpected HTTP status" bash -c "! grep -q 'unexpected HTTP status' '$d/err'"
ctl "$S" refuse_create=1
rc=0
timeout -k 2 20 "$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err" || rc=$?
check "(f) a store refusing every create fails the run (exit $rc)" test "$rc" = 1
check "(f) it is named as refusing conditional creates" \
	grep -q 'refuses every conditional create' "$d/err"
check "(f) not as 'File exists'" bash -c "! grep -q 'File exists' '$d/err'"
ctl "$S"

# --- (g) configuration errors ----------------------------------------------------------------
d="$T/g"
mkdir -p "$d/in"
# exit_of CMD...: the exit code of CMD (output to $d/err).
exit_of() {
	local rc=0
	timeout -k 2 20 "$@" 2>"$d/err" >/dev/null || rc=$?
	echo "$rc"
}
# (A missing secret file is not one: the agent waits for it, test_s3_key_files.sh.)
config "$d/env.yaml" "$d" g ', access_key_id: "env:FLOE_TEST_NO_SUCH_AK", secret_access_key: "env:FLOE_TEST_NO_SUCH_SK"'
check "(g) a missing environment variable exits 2" test "$(exit_of "$FLOE_BIN" run -c "$d/env.yaml" --once)" = 2
check "(g) ... naming the variable" grep -q 'cannot resolve env:FLOE_TEST_NO_SUCH_AK: the environment variable is not set' "$d/err"
# No credentials anywhere; IMDS pointed at the stub, which logs any request to it.
config "$d/none.yaml" "$d" g
: >"$S/stub.log"
check "(g) no credentials from any source exits 2" test "$(exit_of env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$STUB_PORT" "$FLOE_BIN" run -c "$d/none.yaml" --once)" = 2
check "(g) ... with every source's reason" grep -q 'no S3 credentials: .*env: .*shared-file: .*container: ' "$d/err"
check "(g) the instance metadata service is not probed by default" bash -c "! grep -q 'api/token' '$S/stub.log'"
config "$d/imds.yaml" "$d" g ', credentials: [env, imds]'
exit_of env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY \
	AWS_EC2_METADATA_SERVICE_ENDPOINT="http://127.0.0.1:$STUB_PORT" "$FLOE_BIN" run -c "$d/imds.yaml" --once >/dev/null
check "(g) ... and is when listed in lake.s3.credentials" grep -q 'PUT /latest/api/token' "$S/stub.log"
# From a configuration whose credentials resolve (the environment's): check resolves them.
sed "s#http://127.0.0.1:$STUB_PORT#http://192.0.2.10:9000#" "$d/none.yaml" >"$d/http.yaml"
check "(g) check refuses http:// to a host that is not loopback (exit 2)" \
	test "$(exit_of "$FLOE_BIN" check -c "$d/http.yaml")" = 2
check "(g) ... saying why and naming lake.s3.allow_http" \
	grep -q "key 'lake.s3.endpoint': 'http://192.0.2.10:9000' is plain HTTP to a host that is not loopback.*lake.s3.allow_http: true" "$d/err"
sed 's#path_style: true#path_style: true, allow_http: true#' "$d/http.yaml" >"$d/http-ok.yaml"
check "(g) with allow_http: true check passes" test "$(exit_of "$FLOE_BIN" check -c "$d/http-ok.yaml")" = 0
check "(g) ... and warns" grep -q 'warning: lake.s3.endpoint http://192.0.2.10:9000 is plain HTTP' "$d/err"
stub_stop

# --- (h) floe inspect s3:// against RGW ------------------------------------------------------
s3_start 13480
d="$T/h"
mkdir -p "$d/in"
printf 'rgw line %s\n' 1 2 3 4 5 >"$d/in/a.log"
s3_config "$d/floe.yaml" "$d/state" insp "[\"$d/in/*.log\"]" "$S3PORT"
check "(h) floe run --once against RGW" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
rc=0
AWS_ENDPOINT_URL="$S3_ENDPOINT" AWS_REGION="$S3_REGION" \
	"$FLOE_BIN" inspect "s3://$S3_BUCKET/insp/default/logs" >"$d/inspect" 2>"$d/err" || rc=$?
check "(h) floe inspect s3://$S3_BUCKET/insp/default/logs works (exit $rc)" test "$rc" = 0
check "(h) ... and shows the live file with its 5 records" \
	grep -q "^live files=1 records=5 " "$d/inspect"
check "(h) ... as floe inspect -c does" \
	bash -c "diff <('$FLOE_BIN' inspect -c '$d/floe.yaml') '$d/inspect'"
finish
