#!/usr/bin/env bash
# The command line: help, version, exit codes, and configuration errors that name
# file:line:column.
source "$(dirname "$0")/lib.sh"

expect_exit() { # expect_exit CODE command...
	local want=$1
	shift
	local got=0
	"$@" >"$T/out" 2>&1 || got=$?
	[ "$got" -eq "$want" ] || { echo "exit $got, wanted $want: $*"; cat "$T/out"; return 1; }
}

check "floe --help exits 0" expect_exit 0 "$FLOE_BIN" --help
check "floe without a command exits 2" expect_exit 2 "$FLOE_BIN"
check "unknown command exits 2" expect_exit 2 "$FLOE_BIN" frobnicate
for c in run check inspect version; do
	check "floe $c --help exits 0" expect_exit 0 "$FLOE_BIN" $c --help
done
check "floe version prints the version" bash -c "'$FLOE_BIN' version | grep -q '^floe [0-9]'"
check "run without -c exits 2" expect_exit 2 "$FLOE_BIN" run
check "run with a missing file exits 2" expect_exit 2 "$FLOE_BIN" run -c "$T/nope.yaml"

printf 'agent:\n  id: a\ntables:\n  logs:\n    codec: gzip\n' >"$T/bad.yaml"
check "a bad value exits 2" expect_exit 2 "$FLOE_BIN" check -c "$T/bad.yaml"
check "the message names file:line:column and the key" grep -q "bad.yaml:5:12: .*tables.logs.codec" "$T/out"

printf 'agent:\n  id: a\n  colour: blue\n' >"$T/unknown.yaml"
check "an unknown key exits 2" expect_exit 2 "$FLOE_BIN" check -c "$T/unknown.yaml"
check "the message names the unknown key" grep -q "unknown.yaml:3:3: .*colour" "$T/out"

# Every error of a file in one run, each with its position, as compilers report them.
printf 'agent:\n  id: a\n  colour: blue\ntables:\n  logs:\n    codec: gzip\ninputs:\n  - type: tail\n    paths: ["/x/*.log"]\n    start_at: middle\n' >"$T/many.yaml"
check "a file with three errors exits 2" expect_exit 2 "$FLOE_BIN" check -c "$T/many.yaml"
check "all three are reported, in document order, with file:line:column" \
	test "$(grep -o '^floe: [^ ]*many.yaml:[0-9]*:[0-9]*' "$T/out" | sed 's/.*many.yaml://' | paste -sd' ')" = "3:3 6:12 10:15"
check "and counted" grep -q '^floe: 3 errors$' "$T/out"
# With log_format: json, each is a JSON log line.
sed -i 's/^  id: a$/  id: a\n  log_format: json/' "$T/many.yaml"
check "log_format json: exit 2" expect_exit 2 "$FLOE_BIN" check -c "$T/many.yaml"
check "log_format json: each error is one JSON object (level error, position in msg)" python3 - "$T/out" <<'PY'
import json, re, sys
lines = open(sys.argv[1]).read().splitlines()
objs = [json.loads(l) for l in lines]
assert [o["level"] for o in objs] == ["error"] * 3, objs
assert [re.search(r"many\.yaml:(\d+:\d+):", o["msg"]).group(1) for o in objs] == ["4:3", "7:12", "11:15"], objs
PY

printf 'agent: [1, 2\n' >"$T/syntax.yaml"
check "a YAML syntax error exits 2" expect_exit 2 "$FLOE_BIN" check -c "$T/syntax.yaml"

write_config "$T/good.yaml" "$T/state" "$T/wh" "[\"$T/logs/*.log\"]"
check "a valid configuration passes check" expect_exit 0 "$FLOE_BIN" check -c "$T/good.yaml"
check "check prints effective values" grep -q "zstd" "$T/out"
check "inspect of a directory without a table exits 1" expect_exit 1 "$FLOE_BIN" inspect "$T"
check "inspect without a location exits 2" expect_exit 2 "$FLOE_BIN" inspect

# check resolves S3 credentials as run does (configuration, environment, shared file; no
# network): without any, both exit 2 with the same message, so ExecStartPre=floe check
# stops the unit. Port 9 on loopback: nothing is reached either way.
s3cfg() { # s3cfg FILE [s3 keys]
	printf 'agent:\n  id: a\n  state_dir: %s\ninputs:\n  - { type: tail, paths: ["%s/logs/*.log"] }\nlake:\n  warehouse: s3://bucket/p\n  catalog: { type: s3 }\n  s3: { endpoint: "http://127.0.0.1:9", region: r, path_style: true%s }\n' \
		"$T/s3state" "$T" "${2:-}" >"$1"
}
nocreds() { env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE \
	-u AWS_SHARED_CREDENTIALS_FILE -u AWS_WEB_IDENTITY_TOKEN_FILE -u AWS_CONTAINER_CREDENTIALS_FULL_URI \
	-u AWS_CONTAINER_CREDENTIALS_RELATIVE_URI HOME="$T/nohome" AWS_EC2_METADATA_DISABLED=true "$@"; }
s3cfg "$T/s3.yaml"
check "check without S3 credentials exits 2" expect_exit 2 nocreds "$FLOE_BIN" check -c "$T/s3.yaml"
check "check says that there are no S3 credentials" grep -q "no S3 credentials" "$T/out"
grep "no S3 credentials" "$T/out" | sed 's/^.*\(no S3 credentials\)/\1/' >"$T/check.msg"
check "run without S3 credentials exits 2 too" expect_exit 2 nocreds "$FLOE_BIN" run -c "$T/s3.yaml" --once
grep "no S3 credentials" "$T/out" | sed 's/^.*\(no S3 credentials\)/\1/' >"$T/run.msg"
check "check and run give the same message" cmp "$T/check.msg" "$T/run.msg"
check "check with keys in the environment passes" expect_exit 0 nocreds AWS_ACCESS_KEY_ID=AKIDEXAMPLE \
	AWS_SECRET_ACCESS_KEY=secret "$FLOE_BIN" check -c "$T/s3.yaml"
mkdir -p "$T/aws"
printf '[default]\naws_access_key_id = AKIDEXAMPLE\naws_secret_access_key = secret\n' >"$T/aws/credentials"
check "check with a shared credentials file passes" expect_exit 0 nocreds \
	AWS_SHARED_CREDENTIALS_FILE="$T/aws/credentials" "$FLOE_BIN" check -c "$T/s3.yaml"
s3cfg "$T/s3ref.yaml" ', access_key_id: "env:FLOE_TEST_NO_SUCH_KEY", secret_access_key: "env:FLOE_TEST_NO_SUCH_KEY"'
check "check with a reference that does not resolve exits 2" expect_exit 2 nocreds "$FLOE_BIN" check -c "$T/s3ref.yaml"
check "the message names the reference" grep -q "cannot resolve env:FLOE_TEST_NO_SUCH_KEY" "$T/out"
s3cfg "$T/s3imds.yaml" ', credentials: [env, imds]'
check "check with a remote source configured passes, saying it was not asked" expect_exit 0 nocreds AWS_EC2_METADATA_DISABLED=false \
	"$FLOE_BIN" check -c "$T/s3imds.yaml"
check "check says the remote sources are asked at start-up" grep -q "^# credentials: .*remote sources" "$T/out"

# A full or read-only state_dir is named as such, not as a failure to read an input.
# Needs a small file system of its own: a tmpfs where mounting is allowed.
mkdir -p "$T/full/in" "$T/full/state"
if mount -t tmpfs -o size=256k tmpfs "$T/full/state" 2>/dev/null; then
	trap 'umount "$T/full/state" 2>/dev/null || true; cleanup' EXIT
	python3 -c "
import random
random.seed(1)
with open('$T/full/in/a.log', 'w') as f:
    for i in range(20000):
        f.write('%x line %d %s\\n' % (random.getrandbits(128), i, 'x' * random.randint(10, 80)))
"
	write_config "$T/full.yaml" "$T/full/state" "$T/full/wh" "[\"$T/full/in/*.log\"]"
	check "a full state_dir exits 1" expect_exit 1 "$FLOE_BIN" run -c "$T/full.yaml" --once
	check "a full state_dir is named as the spool, not as reading the input" \
		grep -q "into the spool ($T/full/state/spool) failed: No space left" "$T/out"
	umount "$T/full/state"
	mount -t tmpfs -o ro tmpfs "$T/full/state"
	check "a read-only state_dir exits 1" expect_exit 1 "$FLOE_BIN" run -c "$T/full.yaml" --once
	check "a read-only state_dir is named" grep -q "$T/full/state/[a-z]*: Read-only file system" "$T/out"
	umount "$T/full/state"
else
	skip_part "a full state_dir (mounting a tmpfs is not allowed here)"
fi
finish
