# Helpers for the S3 integration tests (sourced after lib.sh): a private Ceph RGW on
# loopback, floe configurations for an S3 warehouse, the live files of a table fetched
# back with s3cmd, the fault proxy, and bounded polling.
# shellcheck shell=bash
RGW="$FLOE_SRC/packaging/dev/rgw"
PROXY_PY="$FLOE_SRC/tests/integration/s3_fault_proxy.py"
STUB_PY="$FLOE_SRC/tests/integration/s3_stub.py"

# s3_start BASE: starts RGW in $T/rgw on a port derived from BASE and $$ (the next one when
# taken), exports S3_ENDPOINT, AWS_* etc. and S3PORT, S3CFG. The server stops on exit, and
# its watchdog stops it if this shell dies unannounced.
s3_start() {
	S3PORT=${RGW_PORT:-$(($1 + $$ % 1000))}
	trap '"$RGW/stop.sh" "$T/rgw" || true; cleanup' EXIT
	local try rc
	for try in 1 2 3 4 5; do
		rc=0
		RGW_OWNER_PID=$$ "$RGW/start.sh" "$T/rgw" "$S3PORT" >"$T/rgw-start.out" 2>&1 || rc=$?
		if [ "$rc" != 3 ] || [ "$try" -ge 5 ]; then break; fi
		S3PORT=$((S3PORT + 1))
	done
	if [ "$rc" != 0 ]; then
		cat "$T/rgw-start.out"
		fail "RGW start (exit status $rc)"
		finish
		exit 1
	fi
	set -a
	# shellcheck disable=SC1091
	. "$T/rgw/env"
	set +a
	S3CFG="$T/rgw/s3cfg"
}

# s3_config FILE STATE PREFIX PATHS-YAML PORT [tables.logs keys] [top-level YAML]: a floe
# configuration for the table at s3://$S3_BUCKET/PREFIX through 127.0.0.1:PORT;
# INPUT_KEYS: more keys of the input (indented by four spaces), as write_config takes.
s3_config() {
	local file=$1 state=$2 prefix=$3 paths=$4 port=$5 extra=${6:-} top=${7:-}
	cat >"$file" <<YAML
agent:
  id: ${AGENT_ID:-it-agent}
  state_dir: $state
inputs:
  - type: tail
    paths: $paths
    start_at: beginning
${INPUT_KEYS:-}
tables:
  logs:
    commit_interval: ${COMMIT_INTERVAL:-60s}
$extra
$top
lake:
  warehouse: s3://$S3_BUCKET/$prefix
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$port", region: $S3_REGION, path_style: true }
YAML
}

# s3_fetch PREFIX DIR: copies every object under s3://$S3_BUCKET/PREFIX/ into DIR (three
# tries: s3cmd now and then fails with a spurious "Name or service not known").
s3_fetch() {
	mkdir -p "$2"
	local try
	for try in 1 2 3; do
		s3cmd -q -c "$S3CFG" sync "s3://$S3_BUCKET/$1/" "$2/" && return 0
		echo "  s3cmd sync failed (try $try)"
	done
	return 1
}

# s3_live CONFIG PREFIX DIR OUT [TABLE]: the table's live data files (floe inspect -c; the
# logs table, or raw table TABLE), fetched under DIR; their local paths go to OUT, the
# inspect output to OUT.inspect.
s3_live() {
	local cfg=$1 prefix=$2 dir=$3 out=$4
	"$FLOE_BIN" inspect -c "$cfg" ${5:-} >"$out.inspect" || return 1
	s3_fetch "$prefix" "$dir" || return 1
	sed -n "s#^  s3://$S3_BUCKET/$prefix/\([^ ]*\)  records=.*#$dir/\1#p" "$out.inspect" >"$out"
	local f
	while read -r f; do
		[ -f "$f" ] || { echo "  live file $f was not fetched"; return 1; }
	done <"$out"
}


# proxy_start PORT CONTROL LOG [SEED]: starts the fault proxy in front of RGW; sets
# PROXY_PID and PROXY_PORT (PORT 0: a free one). Its totals go to LOG.out on SIGTERM.
proxy_start() {
	/usr/bin/python3 "$PROXY_PY" "$1" "$S3PORT" --control "$2" --log "$3" --seed "${4:-1}" \
		>>"$3.out" 2>&1 &
	PROXY_PID=$!
	PIDS+=("$PROXY_PID")
	if ! wait_for 10 grep -q 'proxy listening' "$3.out"; then
		echo "  the proxy did not start: $(cat "$3.out")"
		return 1
	fi
	PROXY_PORT=$(sed -n 's/^proxy listening on 127.0.0.1:\([0-9]*\) .*/\1/p' "$3.out" | tail -1)
	wait_for 10 bash -c "(exec 3<>/dev/tcp/127.0.0.1/$PROXY_PORT) 2>/dev/null"
}

# proxy_stop: SIGTERM (the proxy prints its totals), then waits for it.
proxy_stop() {
	kill -TERM "$PROXY_PID" 2>/dev/null || true
	wait "$PROXY_PID" 2>/dev/null || true
}

# stub_env: for a test against s3_stub.py (which checks no signature): no ~/.aws of the
# machine's, no AWS settings from the environment, and keys for the stub.
stub_env() {
	export HOME="$T/home"
	mkdir -p "$HOME"
	unset AWS_SESSION_TOKEN AWS_PROFILE AWS_SHARED_CREDENTIALS_FILE AWS_ENDPOINT_URL AWS_ENDPOINT_URL_S3
	export AWS_ACCESS_KEY_ID=STUBKEY AWS_SECRET_ACCESS_KEY=stubsecret
}

# stub_start DIR [PORT]: an s3_stub.py with control file DIR/ctl and log DIR/stub.log, on
# PORT (default: a free one); sets STUB_PID and STUB_PORT.
stub_start() {
	mkdir -p "$1"
	: >"$1/ctl"
	/usr/bin/python3 "$STUB_PY" --control "$1/ctl" --log "$1/stub.log" --port "${2:-0}" \
		>"$1/stub.out" 2>&1 &
	STUB_PID=$!
	PIDS+=("$STUB_PID")
	wait_for 10 grep -q 'stub listening' "$1/stub.out" || { echo "  stub: $(cat "$1/stub.out")"; return 1; }
	STUB_PORT=$(sed -n 's/^stub listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$1/stub.out")
}

# stub_stop: SIGTERM, then waits for it.
stub_stop() {
	running_job "$STUB_PID" && kill -TERM "$STUB_PID" 2>/dev/null || true
	wait "$STUB_PID" 2>/dev/null || true
}
