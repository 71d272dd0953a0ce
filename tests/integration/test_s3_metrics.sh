#!/usr/bin/env bash
# /metrics counts the S3 client's requests by kind, their errors by class and their
# retries: floe writes to a real S3 server (Ceph RGW on loopback) through the fault proxy,
# which answers 30 % of the requests 500 InternalError or 503 SlowDown for a while. Every
# 500 the proxy sent is an error of class 5xx in /metrics and every 503 one of class
# throttled, and promtool (or the strict format check) accepts the scrape.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 19780

PROMTOOL=$(command -v promtool || true)
[ -n "$PROMTOOL" ] || [ ! -x /opt/floe-bench/prometheus/usr/bin/promtool ] ||
	PROMTOOL=/opt/floe-bench/prometheus/usr/bin/promtool

d=$T/m
mkdir -p "$d/logs"
echo "rate=0" >"$d/ctl"
proxy_start 0 "$d/ctl" "$d/proxy" 5
COMMIT_INTERVAL=1s s3_config "$d/floe.yaml" "$d/state" metrics "[\"$d/logs/*.log\"]" "$PROXY_PORT" \
	"" "  http: { listen: 127.0.0.1:0 }"
# The listener goes under agent: (s3_config writes agent: first).
sed -i '/^  http: { listen/d' "$d/floe.yaml"
sed -i "s#^  state_dir: $d/state#&\n  http: { listen: 127.0.0.1:0 }#" "$d/floe.yaml"
printf 'first line\n' >"$d/logs/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")

# drained N: metrics.json shows N rows committed and an empty spool.
drained() {
	local m="$d/state/metrics.json"
	[ -f "$m" ] && [ "$(metric "$m" rows_committed)" = "$1" ] && [ "$(metric "$m" spool_bytes)" = 0 ]
}
check "floe starts and commits through the proxy" wait_for 30 drained 1
port=$(logged_port "$d/err")
check "the agent logs the port of its status pages" test -n "$port"
check "an S3 warehouse: libcurl is loaded (dlopen)" grep -q libcurl /proc/$pid/maps
# A healthy start and commit: the 404s of existence checks and a lost create's 412 are
# answers, not errors, so no error of any class is counted yet.
healthy_scrape() {
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/m0.txt" &&
		grep -q '^floe_s3_requests_total{kind="put"} [1-9]' "$d/m0.txt"
}
wait_for 10 healthy_scrape || true
check "a healthy run counts no S3 errors ($(grep '^floe_s3_errors_total' "$d/m0.txt" | grep -v ' 0$' | tr '\n' ' '))" \
	test -z "$(grep '^floe_s3_errors_total' "$d/m0.txt" | grep -v ' 0$')"
check "401 and 403 have a class of their own" grep -q '^floe_s3_errors_total{.*class="auth"} 0$' "$d/m0.txt"

# Faults on 30 % of the requests while lines arrive (bounded: 20 bursts).
printf 'rate=0.3\nweights=500:1,503:1\n' >"$d/ctl"
for burst in $(seq 1 20); do
	printf 'burst %d line %d\n' $(seq 1 50 | sed "s/^/$burst /") >>"$d/logs/app.log"
	sleep 0.3
done
echo "rate=0" >"$d/ctl"
total=$(wc -l <"$d/logs/app.log")
check "floe drains once the faults stop ($total lines)" wait_for 120 drained "$total"

# sum NAME REGEX: the sum of the samples of NAME whose labels match REGEX.
sum() { awk -v n="$1" -v re="$2" '{ l = $1; sub(/\{.*/, "", l) } l == n && $1 ~ re { s += $2 } END { print s + 0 }' "$d/m.txt"; }
# The faults the proxy injected, from its log (one line each, as they happen).
n500=$(grep -c '^[0-9.]* fault [0-9]* 500:' "$d/proxy" || true)
n503=$(grep -c '^[0-9.]* fault [0-9]* 503:' "$d/proxy" || true)
check "the proxy injected 500s and 503s ($n500, $n503)" test "$n500" -gt 0 -a "$n503" -gt 0
# The page is rendered by the main loop at most once a second, and the last requests of a
# commit run on the committer thread: scrape until it has caught up (bounded: 10 s).
scraped() {
	curl -sf "http://127.0.0.1:$port/metrics" >"$d/m.txt" &&
		[ "$(sum floe_s3_errors_total 'class="5xx"')" = "$n500" ] &&
		[ "$(sum floe_s3_errors_total 'class="throttled"')" = "$n503" ]
}
wait_for 10 scraped || true
proxy_stop
echo "# $(tail -1 "$d/proxy.out")"
check "every 500 is an error of class 5xx ($(sum floe_s3_errors_total 'class="5xx"'))" \
	test "$(sum floe_s3_errors_total 'class="5xx"')" = "$n500"
check "every 503 is an error of class throttled ($(sum floe_s3_errors_total 'class="throttled"'))" \
	test "$(sum floe_s3_errors_total 'class="throttled"')" = "$n503"
check "PUTs, GETs and HEADs are counted" test "$(sum floe_s3_requests_total 'kind="put"')" -gt 0 \
	-a "$(sum floe_s3_requests_total 'kind="get"')" -gt 0 -a "$(sum floe_s3_requests_total 'kind="head"')" -gt 0
check "retries are counted ($(sum floe_s3_retries_total .))" test "$(sum floe_s3_retries_total .)" -gt 0
check "no connection errors or timeouts without such faults" \
	test "$(sum floe_s3_errors_total 'class="(connection|timeout|tls)"')" = 0
grep '^floe_s3_' "$d/m.txt" | grep -v ' 0$' | sed 's/^/# /'
if [ -n "$PROMTOOL" ]; then
	rc=0
	"$PROMTOOL" check metrics <"$d/m.txt" >"$d/promtool.out" 2>&1 || rc=$?
	check "promtool check metrics: clean" test $rc = 0 -a ! -s "$d/promtool.out"
	cat "$d/promtool.out"
fi

kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
check "SIGTERM stops the agent (exit $rc)" test $rc = 0
finish
