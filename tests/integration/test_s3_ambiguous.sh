#!/usr/bin/env bash
# An ambiguous commit that did land: the proxy forwards floe's conditional PUT of the next
# metadata version to RGW (which applies it), cuts the response, then refuses every request
# for 8 s, so floe cannot read the object back and counts the commit as failed. Lines keep
# arriving meanwhile. Once the store returns, every line must be in the table exactly once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
s3_start 16480

d="$T/amb"
mkdir -p "$d/logs"
: >"$d/ctl"
proxy_start 0 "$d/ctl" "$d/proxy" 5
COMMIT_INTERVAL=1s s3_config "$d/floe.yaml" "$d/state" amb "[\"$d/logs/*.log\"]" "$PROXY_PORT"
s3_config "$d/direct.yaml" "$d/state-direct" amb "[\"$T/none/*.log\"]" "$S3PORT"
mapfile -t lines < <(cat "$DATA"/*.log | tr -d '\r')
printf '%s\n' "${lines[@]:0:100}" >"$d/logs/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>>"$d/err" &
FLOE_PID=$!
PIDS+=("$FLOE_PID")
check "floe makes its first commit" wait_for 30 grep -q '"rows_committed":100,' "$d/state/metrics.json"
# The next metadata PUT is applied but its answer is lost; then the store is down for 8 s.
printf 'once_cut=^PUT .*/metadata/v[0-9]+\\.metadata\\.json$\nonce_down_s=8\n' >"$d/ctl"
n=100
t_end=$(($(date +%s) + 14))
for burst in $(seq 1 60); do
	[ "$(date +%s)" -lt "$t_end" ] || break
	printf '%s\n' "${lines[@]:n:200}" >>"$d/logs/app.log"
	n=$((n + 200))
	sleep 0.25
done
total=$(wc -l <"$d/logs/app.log")
check "the proxy cut a metadata PUT that RGW applied" grep -q 'once_cut (upstream answered 200)' "$d/proxy"
check "floe drains ($total lines)" wait_for 60 bash -c "grep -q '\"lines\":$total,.*\"spool_bytes\":0,' '$d/state/metrics.json'"
kill -TERM "$FLOE_PID"
wait "$FLOE_PID" || true
proxy_stop
echo "# metrics.json: $(cat "$d/state/metrics.json")"
grep -E 'floe (error|warn)' "$d/err" | sed 's/^/# /' | head -8
check "the live files are fetched" s3_live "$d/direct.yaml" amb "$d/s3" "$d/files"
check "every line is in the table exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
grep -E '^  floe.commit-seq=|^  added-records=' "$d/files.inspect" | paste - - | sed 's/^/# /'
finish
