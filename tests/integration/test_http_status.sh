#!/usr/bin/env bash
# agent.http.listen: a running agent serves /metrics (Prometheus text format, checked by
# promtool when Debian's prometheus package is there, else by a strict check of the
# format's lines here) and /healthz, with counters that follow what the agent did and the
# same counters as metrics.json, both ways; the server answers HEAD, refuses other
# methods, unknown paths and oversized requests, and neither a client that sends nothing
# nor eight holding every slot with half a request stop it from answering a probe. floe
# status prints the same facts from the state directory.
source "$(dirname "$0")/lib.sh"

PROMTOOL=$(command -v promtool || true)
[ -n "$PROMTOOL" ] || [ ! -x /opt/floe-bench/prometheus/usr/bin/promtool ] ||
	PROMTOOL=/opt/floe-bench/prometheus/usr/bin/promtool

mkdir -p "$T/in"
printf 'line %d\n' $(seq 1 50) >"$T/in/a.log"
cat >"$T/floe.yaml" <<YAML
agent:
  state_dir: $T/state
  http:
    listen: 127.0.0.1:0
inputs:
  - type: tail
    paths: ["$T/in/*.log"]
    start_at: beginning
tables:
  logs:
    commit_interval: 1s
YAML
# The kernel chose the port; the log says which (bounded wait: 10 s).
run_serving "$T/floe.yaml" "$T/run.err"
check "the agent logs the port it serves its status pages on" test -n "$port"
[ -n "$port" ] || { cat "$T/run.err"; finish; exit 1; }
URL=http://127.0.0.1:$port

# value NAME [LABELS]: a sample's value in the last scrape.
value() { awk -v n="$1${2:-}" '$1 == n { print $2 }' "$T/m.txt"; }

# The 50 lines committed: the counters say so within 20 s.
for i in $(seq 1 100); do
	curl -sf "$URL/metrics" >"$T/m.txt" || true
	[ "$(value floe_rows_committed_total)" = 50 ] && break
	sleep 0.2
done
check "/metrics: floe_rows_committed_total 50" test "$(value floe_rows_committed_total)" = 50
check "/metrics: floe_input_lines_total{input=\"1\"} 50" test "$(value floe_input_lines_total '{input="1"}')" = 50
check "/metrics: floe_commits_total >= 1" test "$(value floe_commits_total)" -ge 1
# The commits' duration as a sum and a count (metrics.json's commit_ms, commits_timed),
# the histogram's own in the same scrape.
check "/metrics: floe_commits_timed_total >= 1, the histogram's count" \
	test "$(value floe_commits_timed_total)" -ge 1 -a "$(value floe_commits_timed_total)" = "$(value floe_commit_duration_seconds_count)"
check "/metrics: floe_commit_seconds_total, the histogram's sum (to the ms)" \
	awk -v a="$(value floe_commit_seconds_total)" -v b="$(value floe_commit_duration_seconds_sum)" \
	-v n="$(value floe_commits_timed_total)" 'BEGIN { d = a - b; exit !(d < 0.001 * n + 0.001 && -d < 0.001 * n + 0.001) }'
check "/metrics: floe_memory_limit_bytes is agent.memory_limit (32MiB)" \
	test "$(value floe_memory_limit_bytes)" = $((32 << 20))
check "/metrics: floe_memory_used_bytes is below the limit" \
	test "$(value floe_memory_used_bytes)" -lt $((32 << 20))
check "/metrics: floe_healthy 1" test "$(value floe_healthy)" = 1
# libcurl is loaded only for an S3 warehouse (platform/s3/curl_dl.c): not here.
check "a local warehouse: libcurl is not loaded" bash -c "! grep -q libcurl /proc/$pid/maps"
curl -s -D "$T/h.txt" -o /dev/null "$URL/metrics"
check "/metrics: Content-Type text/plain; version=0.0.4" \
	grep -qi '^Content-Type: text/plain; version=0.0.4' "$T/h.txt"

if [ -n "$PROMTOOL" ]; then
	rc=0
	"$PROMTOOL" check metrics <"$T/m.txt" >"$T/promtool.out" 2>&1 || rc=$?
	check "promtool check metrics: clean" test $rc = 0 -a ! -s "$T/promtool.out"
	cat "$T/promtool.out"
else
	echo "promtool not found (packaging/dev/install-deps.sh test unpacks it): strict format check instead"
fi
# The format's lines, whatever promtool says: HELP and TYPE before each family's samples,
# counters named *_total, sample values integers, no family twice.
rc=0
awk '
/^# HELP / { if (seen[$3]++) { print "family twice: " $3; bad = 1 } help = $3; next }
/^# TYPE / { if ($3 != help || ($4 != "counter" && $4 != "gauge" && $4 != "histogram")) { print "TYPE without HELP: " $0; bad = 1 }
	if ($4 == "counter" && $3 !~ /_total$/) { print "counter not named _total: " $3; bad = 1 }
	fam = $3; hist = $4 == "histogram"; next }
/^#/ { print "stray comment: " $0; bad = 1; next }
{ name = $1; sub(/\{.*/, "", name)
  if (hist) sub(/_(bucket|sum|count)$/, "", name)
  if (name != fam) { print "sample outside its family: " $0; bad = 1 }
  if ($1 !~ /^[a-z_][a-z0-9_]*(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})?$/) { print "bad sample name: " $0; bad = 1 }
  if (NF != 2 || ($2 !~ /^[0-9]+$/ && !((hist && $1 ~ /_sum$/ || name ~ /_seconds_total$/) && $2 ~ /^[0-9]+\.[0-9]+$/))) { print "bad sample value: " $0; bad = 1 } }
END { exit bad }' "$T/m.txt" >"$T/format.out" || rc=$?
check "/metrics: every line follows the text format" test $rc = 0
check "/metrics: the commit latency histogram, attempts and conflicts are there" \
	grep -q '^floe_commit_duration_seconds_bucket{le="+Inf"} ' "$T/m.txt"
check "/metrics: commit attempts counted" grep -q '^floe_commit_attempts_total ' "$T/m.txt"
cat "$T/format.out"

# One counter table behind both documents: every metrics.json key (each input's too) is
# the family some HELP line names, and every family names a key metrics.json has, but
# for the status page's own (the histogram, S3's, the last commit's age, floe_healthy,
# floe_build_info); an input's type and name, and a table's name, are labels, not counters.
check "metrics.json and /metrics name the same counters, both ways" python3 - "$T/state/metrics.json" "$T/m.txt" <<'PY'
import json, re, sys
m = json.load(open(sys.argv[1]))
want = {k for k in m if k not in ("inputs", "tables")} | {"inputs[]." + k for i in m["inputs"] for k in i if k not in ("type", "name")}
want |= {"tables.NAME." + k for t in m.get("tables", {}).values() for k in t}
named, own = set(), set()
for line in open(sys.argv[2]):
    h = re.match(r"# HELP (\S+) .* metrics\.json: (\S+)\.$", line)
    if h:
        named.add(h.group(2))
    elif line.startswith("# HELP "):
        own.add(line.split()[2])
allowed = {"floe_commit_duration_seconds", "floe_last_commit_age_seconds",
           "floe_last_commit_timestamp_seconds", "floe_healthy", "floe_build_info"}
bad = (want - named) | (named - want) | {f for f in own - allowed if not f.startswith(("floe_s3_", "floe_http_"))}
print("only in metrics.json:", sorted(want - named), "only in /metrics:", sorted(named - want),
      "families naming no key:", sorted(own - allowed))
sys.exit(1 if bad else 0)
PY

# /healthz: 200 and "ok".
code=$(curl -s -o "$T/hz.txt" -w '%{http_code}' "$URL/healthz")
check "/healthz: 200 ok" test "$code" = 200 -a "$(cat "$T/hz.txt")" = ok

# A client that connects and sends nothing holds one slot, not the server.
exec 7<>/dev/tcp/127.0.0.1/$port
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/healthz")
check "/healthz answers while another client sends nothing" test "$code" = 200
exec 7>&-

# Eight clients holding every slot with half a request: a probe closes the oldest of them
# and is answered, rather than refused.
python3 - "$port" >"$T/slow.out" 2>&1 <<'PY' &
import signal, socket, sys
held = []
for i in range(8):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    try:
        s.sendall(b"GET /healthz HTTP/1.1\r\n")
    except OSError:
        pass
    held.append(s)
print("holding", flush=True)
signal.pause()  # until the test kills us
PY
SLOW=$!
PIDS+=($SLOW)
for i in $(seq 1 100); do grep -q holding "$T/slow.out" && break; sleep 0.1; done
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "$URL/healthz" || true)
check "/healthz answers while 8 clients hold every slot with half a request" test "$code" = 200
curl -sf "$URL/metrics" >"$T/m.txt" || true
for i in $(seq 1 50); do
	[ "$(value floe_http_evicted_total)" -ge 1 ] 2>/dev/null && break
	sleep 0.1
	curl -sf "$URL/metrics" >"$T/m.txt" || true
done
check "/metrics: floe_http_evicted_total counts the slow client closed for it" \
	test "$(value floe_http_evicted_total)" -ge 1
kill $SLOW 2>/dev/null || true
wait $SLOW 2>/dev/null || true

check "HEAD /metrics: 200, no body" \
	test "$(curl -s -I -o /dev/null -w '%{http_code} %{size_download}' "$URL/metrics")" = "200 0"
check "POST /metrics: 405" \
	test "$(curl -s -X POST -o /dev/null -w '%{http_code}' "$URL/metrics")" = 405
check "GET /nope: 404" test "$(curl -s -o /dev/null -w '%{http_code}' "$URL/nope")" = 404
long=$(head -c 9000 /dev/zero | tr '\0' a)
check "a request over 8 KiB: 431" \
	test "$(curl -s -o /dev/null -w '%{http_code}' -H "X-Big: $long" "$URL/metrics")" = 431

# More lines: the counters follow.
printf 'more %d\n' $(seq 1 7) >>"$T/in/a.log"
for i in $(seq 1 100); do
	curl -sf "$URL/metrics" >"$T/m.txt" || true
	[ "$(value floe_rows_committed_total)" = 57 ] && break
	sleep 0.2
done
check "/metrics follows the agent: 57 rows committed" test "$(value floe_rows_committed_total)" = 57

# Commits that fail while data waits: 503 with the reason after three commit intervals,
# 200 again once a commit goes through. The table's metadata directory replaced by a
# file makes every commit fail (whoever runs the test: root ignores permissions).
META=$T/state/warehouse/default/logs/metadata
mv "$META" "$META.away"
echo x >"$META"
echo "while failing" >>"$T/in/a.log"
for i in $(seq 1 100); do
	code=$(curl -s -o "$T/hz.txt" -w '%{http_code}' "$URL/healthz")
	[ "$code" = 503 ] && break
	sleep 0.2
done
check "/healthz: 503 once data waited 3 commit intervals: $(cat "$T/hz.txt")" \
	sh -c "test $code = 503 && grep -q '^no commit for .* while the spool holds' '$T/hz.txt'"
curl -sf "$URL/metrics" >"$T/m.txt" || true
check "/metrics: floe_healthy 0, floe_commit_failures_total >= 1" \
	test "$(value floe_healthy)" = 0 -a "$(value floe_commit_failures_total)" -ge 1
rm "$META"
mv "$META.away" "$META"
# The retry waits out its backoff (1, 2, 4, 8 s): up to 30 s.
for i in $(seq 1 150); do
	code=$(curl -s -o "$T/hz.txt" -w '%{http_code}' "$URL/healthz")
	[ "$code" = 200 ] && break
	sleep 0.2
done
check "/healthz: 200 again after a commit went through" test "$code" = 200
curl -sf "$URL/metrics" >"$T/m.txt" || true
check "/metrics: the waiting row committed (58)" test "$(value floe_rows_committed_total)" = 58

kill -TERM $pid
rc=0
wait $pid || rc=$?
check "SIGTERM stops the agent and its listener (exit $rc)" test $rc = 0
check "the port is closed after the stop" sh -c "! curl -s --max-time 2 '$URL/healthz' >/dev/null"

# floe status: the same facts from the state directory, without the listener.
rc=0
"$FLOE_BIN" status -c "$T/floe.yaml" >"$T/status.out" 2>&1 || rc=$?
check "floe status: exit 0 (healthy) just after the agent stopped" test $rc = 0
check "floe status: the rows committed and the input's lines" \
	sh -c "grep -q ' 58 rows committed' '$T/status.out' && grep -q '^  58 lines' '$T/status.out' &&
		grep -qx 'health: ok' '$T/status.out'"
[ $rc = 0 ] || cat "$T/status.out"
sed "s#state_dir: $T/state#state_dir: $T/never#" "$T/floe.yaml" >"$T/never.yaml"
rc=0
"$FLOE_BIN" status -c "$T/never.yaml" >"$T/status2.out" 2>&1 || rc=$?
check "floe status: exit 1 for a state_dir no agent ran with" \
	sh -c "test $rc = 1 && grep -q 'has not run' '$T/status2.out'"

# The key is checked like every other: a bad value names the line.
sed -i 's/listen: 127.0.0.1:0/listen: "localhost:99999"/' "$T/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >"$T/check.out" 2>&1 || rc=$?
check "floe check: a bad agent.http.listen is a configuration error (exit 2) with its line" \
	sh -c "test $rc = 2 && grep -q 'floe.yaml:4:.*agent.http.listen' '$T/check.out'"
[ $rc = 2 ] || cat "$T/check.out"
# An idle agent (commit interval 60 s, its files read, inotify watching) still refreshes
# its pages: the last-commit age a scrape sees moves with the clock, not only at the idle
# loop's 30 s deadlines.
mkdir -p "$T/idle"
echo "one line" >"$T/idle/a.log"
cat >"$T/idle.yaml" <<YAML
agent:
  state_dir: $T/idle-state
  http:
    listen: 127.0.0.1:0
inputs:
  - type: tail
    paths: ["$T/idle/*.log"]
    start_at: beginning
tables:
  logs:
    commit_interval: 60s
YAML
"$FLOE_BIN" run -c "$T/idle.yaml" 2>"$T/idle.err" &
PIDS+=($!)
ipid=$!
iport=$(serving_port "$T/idle.err" $ipid)
sleep 3 # idle by now: the loop sleeps until its next deadline
curl -sf "http://127.0.0.1:$iport/metrics" >"$T/m.txt" || true
age1=$(value floe_last_commit_age_seconds)
sleep 8
curl -sf "http://127.0.0.1:$iport/metrics" >"$T/m.txt" || true
age2=$(value floe_last_commit_age_seconds)
check "an idle agent's last-commit age follows the clock ($age1 s, then $age2 s 8 s later)" \
	test -n "$age1" -a -n "$age2" -a "${age2:-0}" -ge $((${age1:-0} + 5))
kill -TERM $ipid
wait $ipid || true

finish
