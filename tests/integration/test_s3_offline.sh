#!/usr/bin/env bash
# A device that boots offline starts anyway: with the S3 endpoint unreachable (a port
# nothing listens on), `floe run` reads, spools and listens (syslog over UDP), says on
# /healthz and in the metrics that the store is unreachable, and commits every line
# exactly once when the store comes up on that port (s3_stub.py, in memory). Twice: on a
# first boot (the table does not exist yet: it is created at the first contact), and on a
# restart with existing state (the positions hold: nothing is read twice). The S3 error
# counts stay clean: the existence checks' 404s are not 4xx errors.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true

d=$T/off
mkdir -p "$d/in"
SPORT=$(free_port)
UPORT=$(free_port)
cat >"$d/floe.yaml" <<YAML
agent: { id: offline-test, state_dir: $d/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
  - { type: syslog, listen: "udp://127.0.0.1:$UPORT" }
tables:
  logs: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/off
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$SPORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML

m() { metric "$d/state/metrics.json" "$1"; }
spooled() { [ -f "$d/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ] && [ "$(m seals)" -ge "$1" ]; }
committed() { [ -f "$d/state/metrics.json" ] && [ "$(m rows_committed)" = "$1" ] && [ "$(m spool_bytes)" = 0 ]; }
healthz_down() { curl -s "http://127.0.0.1:$HPORT/healthz" >"$d/healthz" && grep -q "store unreachable" "$d/healthz"; }
# rows PREFIX: the records of the table's live files, as floe inspect reads them.
rows() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$SPORT" "s3://bkt/$1/default/logs" 2>/dev/null |
		sed -n 's#^  s3://bkt/.*  records=\([0-9]*\).*#\1#p' | awk '{ s += $1 } END { print s + 0 }'
}
# phase NAME N0: writes 50 file lines and 50 UDP messages with the store down, checks the
# agent is up and says so, brings the store up and checks every line lands once.
phase() {
	local name=$1 err=$d/err.$1
	"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$err" &
	pid=$!
	PIDS+=("$pid")
	check "($name) the agent starts and serves its status pages" wait_for 30 grep -q 'status: serving' "$err"
	HPORT=$(logged_port "$err")
	check "($name) the agent runs with the store unreachable" kill -0 "$pid"
	check "($name) it says it starts without the store, naming the URL and curl's reason" \
		grep -q "cannot reach the S3 warehouse.*http://127.0.0.1:$SPORT/bkt/.*: Couldn.t connect.*starting without it" "$err"
	seq 1 50 | sed "s/^/$name file line /" >>"$d/in/app.log"
	local i
	for i in $(seq 1 50); do
		printf '<13>Dec  6 04:00:00 host app: %s udp message %d' "$name" "$i" >/dev/udp/127.0.0.1/$UPORT
	done
	check "($name) the lines go to the spool" wait_for 30 spooled 1
	check "($name) /healthz says the store is unreachable" wait_for 10 healthz_down
	sed 's/^/# /' "$d/healthz" 2>/dev/null || true
	curl -s "http://127.0.0.1:$HPORT/metrics" >"$d/m.$name" || true
	check "($name) /metrics: floe_store_reachable 0" grep -q '^floe_store_reachable 0$' "$d/m.$name"
	check "($name) metrics.json: store_reachable 0" test "$(m store_reachable)" = 0
	local lost
	lost=$(grep -c 'the store is away or refuses' "$err" || true)
	check "($name) a store that stays away is logged once, not at every retry ($lost)" test "$lost" -le 1
	stub_start "$d/stub.$name" "$SPORT"
	local want=$(( $(m rows_committed) + 100 ))
	check "($name) every line is committed once the store answers" wait_for 120 committed "$want"
	check "($name) the store is reachable again in the metrics" test "$(m store_reachable)" = 1
	# The table's creation asked for objects that do not exist yet: answers, not errors.
	wait_for 10 bash -c "curl -s http://127.0.0.1:$HPORT/metrics >'$d/m2.$name' && grep -q '^floe_store_reachable 1$' '$d/m2.$name'" || true
	check "($name) the unreachable store counted connection errors" \
		grep -q '^floe_s3_errors_total{kind="put",class="connection"} [1-9]' "$d/m2.$name"
	check "($name) no 4xx error counted for the existence checks ($(grep 'class="4xx"' "$d/m2.$name" | grep -v ' 0$' | tr '\n' ' '))" \
		test -z "$(grep '^floe_s3_errors_total{.*class="4xx"}' "$d/m2.$name" | grep -v ' 0$')"
	check "($name) the table holds the 100 lines of this phase exactly once ($(rows off))" \
		test "$(rows off)" = 100
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	stub_stop
}

phase first
# A restart with existing state, the store down again (the in-memory stub forgot its
# table: the new one must hold only this phase's lines, the earlier ones are not read
# again).
phase restart
finish
