#!/usr/bin/env bash
# A reload (SIGHUP) keeps the agent whole: the counters of metrics.json and /metrics never
# go down (they count for the process, not for one configuration); the syslog listeners
# whose address and TLS files did not change stay open, so a UDP and a TCP sender that
# send through the reload lose nothing and are counted in full; a reload that changes a
# listener's port closes the old one and opens the new; a reload that changes nothing
# changes nothing observable.
source "$(dirname "$0")/lib.sh"

d="$T/reload_whole"
mkdir -p "$d/a"
U=$(free_port)
TP=$(free_port)
U2=$(free_port)
conf() { # conf UDP-PORT [MORE-INPUTS]
	cat >"$d/floe.yaml.new" <<YAML
agent: {id: reload-whole, state_dir: $d/state, http: {listen: "127.0.0.1:0"}}
inputs:
  - type: tail
    name: files
    paths: ["$d/a/*.log"]
    start_at: beginning
  - type: syslog
    name: net
    listen: ["udp://127.0.0.1:$1", "tcp://127.0.0.1:$TP"]
    max_message_bytes: 512
${2:-}
tables:
  logs:
    commit_interval: 1s
lake: {warehouse: $d/wh}
YAML
	mv "$d/floe.yaml.new" "$d/floe.yaml"
}
W="$d/wh/default/logs"
count() { rows_sql "$W" "SELECT count(*), count(DISTINCT message) FROM t WHERE $1"; }
m() { metric "$d/state/metrics.json" "$1" 2>/dev/null; }
# until_rows MIN: metrics.json says at least MIN rows were committed (20 s).
until_rows() {
	local i
	for i in $(seq 1 200); do
		[ "$(m rows_committed)" -ge "$1" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
scrape() { curl -sf "http://127.0.0.1:$(logged_port "$d/err")/metrics"; }

conf "$U"
for i in $(seq 1 100); do echo "a line $i"; done >"$d/a/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
PID=$!
PIDS+=($PID)
wait_log "$d/err" "agent .* started"
wait_log "$d/err" "listening on tcp://127.0.0.1:$TP"
# The status listener's log line.
wait_log "$d/err" "status: serving"
# Something in every kind of counter: lines read, rows committed, a message cut at
# max_message_bytes, one without a syslog header (a parse failure).
logger -n 127.0.0.1 -P "$U" -d --rfc5424 -t app "a syslog message"
printf 'no header at all' | python3 -c "
import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(sys.stdin.buffer.read(),('127.0.0.1',$U))"
python3 -c "
import socket; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM); s.sendto(b'<13>1 - h app - - - '+b'x'*2000,('127.0.0.1',$U))"
check "before the reload: the first rows are committed" until_rows 103
cp "$d/state/metrics.json" "$d/before.json"
scrape >"$d/before.prom"

# counters_kept BEFORE-JSON BEFORE-PROM: every counter (TYPE counter in /metrics, and
# its metrics.json key named in its HELP) is now at least what it was.
counters_kept() {
	scrape >"$d/now.prom"
	python3 - "$1" "$d/state/metrics.json" "$2" "$d/now.prom" <<'PY'
import json, re, sys
bj, nj, bp, np_ = sys.argv[1:]
def prom(path):
    kinds, keys, vals = {}, {}, {}
    for line in open(path):
        m = re.match(r'# HELP (\S+) .*metrics\.json: (\S+?)\.$', line)
        if m: keys[m.group(1)] = m.group(2); continue
        m = re.match(r'# TYPE (\S+) (\S+)', line)
        if m: kinds[m.group(1)] = m.group(2); continue
        m = re.match(r'([a-z_]+)(\{[^}]*\})? (\S+)$', line)
        if m: vals[m.group(1) + (m.group(2) or '')] = float(m.group(3))
    return kinds, keys, vals
bk, bkeys, bv = prom(bp)
nk, _, nv = prom(np_)
bad = []
for s, v in bv.items():
    fam = re.sub(r'(_bucket|_sum|_count)?\{.*', '', s) if '{' in s else s
    fam = re.sub(r'_(bucket|sum|count)$', '', fam) if bk.get(fam) is None else fam
    if bk.get(fam) in ('counter', 'histogram') and nv.get(s, -1) < v:
        bad.append('/metrics %s: %s then %s' % (s, v, nv.get(s)))
b, n = json.load(open(bj)), json.load(open(nj))
checked = 0
for fam, key in bkeys.items():
    if bk.get(fam) != 'counter':
        continue
    if key.startswith('inputs[].'):
        k = key[len('inputs[].'):]
        for bi in b['inputs']:
            ni = [x for x in n['inputs'] if x.get('name') == bi.get('name')]
            if k in bi and ni and ni[0].get(k, -1) < bi[k]:
                bad.append('metrics.json %s.%s: %s then %s' % (bi.get('name'), k, bi[k], ni[0].get(k)))
            checked += k in bi
    elif key in b:
        checked += 1
        if n.get(key, -1) < b[key]:
            bad.append('metrics.json %s: %s then %s' % (key, b[key], n.get(key)))
for x in bad: print(x)
sys.exit(1 if bad or checked < 20 else 0)
PY
}

# Reload 1: the same file. Three senders send through it without a pause: UDP datagrams,
# TCP messages each on a connection of its own (a refused connect is a lost message),
# and TCP messages on one connection kept open throughout (an error on it is a loss).
N=1500
python3 - "$U" "$TP" "$N" >"$d/sent" 2>&1 <<'PY' &
import socket, sys, time
u, t, n = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
us = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
keep = socket.create_connection(('127.0.0.1', t), timeout=10)
refused = broken = 0
for i in range(n):
    us.sendto(b'<13>1 - h snd - - - udp-%d' % i, ('127.0.0.1', u))
    try:
        c = socket.create_connection(('127.0.0.1', t), timeout=10)
        c.sendall(b'<13>1 - h snd - - - tcp-%d\n' % i)
        c.close()
    except OSError:
        refused += 1
    try:
        keep.sendall(b'<13>1 - h snd - - - stream-%d\n' % i)
    except OSError:
        broken += 1
    time.sleep(0.002)
keep.close()
print('refused', refused, 'broken', broken)
PY
SENDER=$!
PIDS+=($SENDER)
# And a scraper of /metrics through the reload (until 50 scrapes after the new
# configuration started): never refused, and floe_lines_total never lower than the
# scrape before.
python3 - "$(logged_port "$d/err")" "$d/err" >"$d/scraped" 2>&1 <<'PY' &
import re, sys, time, urllib.request
port, log = sys.argv[1], sys.argv[2]
failed = fell = after = 0
last = -1
for n in range(6000):
    if 'SIGHUP: starting again' in open(log).read():
        after += 1
        if after > 50:
            break
    try:
        body = urllib.request.urlopen('http://127.0.0.1:%s/metrics' % port, timeout=10).read().decode()
        v = float(re.search(r'^floe_lines_total (\S+)$', body, re.M).group(1))
        fell += v < last
        last = max(last, v)
    except Exception:
        failed += 1
    time.sleep(0.01)
print('failed', failed, 'fell', fell, 'scrapes', n)
PY
SCRAPER=$!
PIDS+=($SCRAPER)
# The reload comes while the senders are busy (once the first of their rows are in).
python3 -c "
import json,time
for _ in range(200):
    try:
        if json.load(open('$d/state/metrics.json'))['lines'] >= 200: break
    except Exception: pass
    time.sleep(0.1)"
kill -HUP $PID
check "reload 1 (nothing changed): the configuration takes over" \
	wait_log "$d/err" "SIGHUP: starting again with the new configuration"
check "reload 1: the syslog input is kept whole, listeners and connections" \
	log_has "$d/err" "input net: kept open across the reload, its connections and queue with it"
check "reload 1: no listener is bound again" test "$(grep -c "listening on" "$d/err")" = 2
check "reload 1: the status listener is kept too" \
	log_has "$d/err" "status: serving .* (kept open across the reload)"
wait $SCRAPER
echo "# scraping /metrics through the reload: $(cat "$d/scraped")"
check "no scrape refused, floe_lines_total never fell" grep -q '^failed 0 fell 0 ' "$d/scraped"
wait $SENDER
echo "# sent $N UDP, $N TCP (a connection each) and $N TCP (one connection) messages through the reload: $(cat "$d/sent")"
check "the TCP senders were never refused nor cut off" grep -qx 'refused 0 broken 0' "$d/sent"
check "every message of the three senders is committed" until_rows $((103 + 3 * N))
echo "# committed (count, distinct): UDP $(count "message LIKE 'udp-%'"), TCP $(count "message LIKE 'tcp-%'"), one connection $(count "message LIKE 'stream-%'")"
check "every UDP message once" test "$(count "message LIKE 'udp-%'")" = "[\"$N\",\"$N\"]"
check "every TCP message once" test "$(count "message LIKE 'tcp-%'")" = "[\"$N\",\"$N\"]"
check "every message of the kept connection once" \
	test "$(count "message LIKE 'stream-%'")" = "[\"$N\",\"$N\"]"
check "the syslog input counted every message and connection, lost none" python3 -c "
import json,sys; m=json.load(open('$d/state/metrics.json'))
i=[x for x in m['inputs'] if x.get('name')=='net'][0]
print('# net:', {k: i[k] for k in ('lines','connections','kernel_drops','lost_at_stop','dropped','at_close')})
sys.exit(0 if i['lines']==3+3*$N and i['connections']==1+$N and i['kernel_drops']==0 and i['lost_at_stop']==0 and i['dropped']==0 and i['at_close']==0 else 1)"
check "reload 1: no counter of metrics.json or /metrics went down" \
	counters_kept "$d/before.json" "$d/before.prom"
check "reload 1: the counters of the first configuration are still counted" python3 -c "
import json,sys; m=json.load(open('$d/state/metrics.json'))
i=[x for x in m['inputs'] if x.get('name')=='net'][0]
sys.exit(0 if i['truncated']==1 and i['parse_failures']==1 and m['lines']==103+3*$N else 1)"

# Reload 2: the UDP listener moves to another port; the TCP one stays.
cp "$d/state/metrics.json" "$d/before2.json"
scrape >"$d/before2.prom"
conf "$U2"
kill -HUP $PID
check "reload 2: the configuration takes over" \
	log_has "$d/err" "SIGHUP: starting again with the new configuration" 2
check "reload 2: the new port is opened" log_has "$d/err" "listening on udp://127.0.0.1:$U2$"
check "reload 2: the TCP listener is kept" \
	log_has "$d/err" "listening on tcp://127.0.0.1:$TP (kept open across the reload)"
check "reload 2: nothing listens on the old UDP port any more" python3 -c "
import socket,sys; s=socket.socket(socket.AF_INET,socket.SOCK_DGRAM)
try: s.bind(('127.0.0.1',$U))
except OSError: sys.exit(1)"
logger -n 127.0.0.1 -P "$U2" -d --rfc5424 -t app "on the new port"
check "reload 2: the new port's message is committed" until_rows $((104 + 3 * N))
check "reload 2: no counter went down" counters_kept "$d/before2.json" "$d/before2.prom"
# Reload 3: a configuration that passes its checks and cannot start (its new listener's
# socket path is a regular file, which floe leaves alone; a port another process holds is
# waited for instead, test_listen_taken): the previous one comes back, its input kept
# whole throughout.
touch "$d/not-a-socket"
conf "$U2" "  - type: syslog
    name: late
    listen: \"unix+stream://$d/not-a-socket\""
kill -HUP $PID
check "reload 3: the configuration that cannot start gives way to the previous one" \
	log_has "$d/err" "the previous configuration runs on"
check "reload 3: the previous one starts again" \
	log_has "$d/err" "agent .* started" 4
check "reload 3: its syslog input was kept whole through both" \
	log_has "$d/err" "input net: kept open across the reload, its connections and queue with it" 3
logger -n 127.0.0.1 -P "$U2" -d --rfc5424 -t app "after the failed reload"
check "reload 3: the kept input still takes messages" until_rows $((105 + 3 * N))
rc=0
stop_pid $PID || rc=$?
check "SIGTERM after the reloads: exit 0" test $rc = 0
check "every line of the file once, across the reloads" \
	test "$(count "message LIKE 'a line %'")" = '["100","100"]'
finish
