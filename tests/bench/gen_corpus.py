#!/usr/bin/env python3
"""Log corpora for the compression benchmark (tests/bench/corpora.sh), each of a character
the suite's own generator (loghub templates, every digit random, a request id) does not
have. Deterministic: the same KIND, LINES and SEED give the same bytes.

usage: gen_corpus.py KIND LINES OUT [--seed N] [--from FILE]
  families  log families the loghub samples lack: web access logs, kernel/dmesg, firewall
            drops, PostgreSQL and MySQL slow queries, Java errors with their stack frames,
            Kubernetes events, audit records; every digit of every line random
  json      JSON lines from services (varying key sets, nested objects, trace ids); every
            digit random
  zipf      plain log lines whose parameters (users, hosts, paths, ids, error codes) are
            drawn from fixed vocabularies with a Zipf distribution, so values repeat the
            way real ones do; timestamps advance, nothing else is random
  vary      the lines of --from FILE (a real log) over and over, in order, every digit
            random: one real log's families at any size
"""
import random
import re
import sys

DIGITS = "0123456789"


class DigitVarier:
    """Replaces every ASCII digit with a uniformly random one (the suite's rule), drawing
    the digits from rng in blocks: a callback per digit run, not per character."""

    def __init__(self, rng):
        self.rng, self.pool, self.pos = rng, "", 0
        self.run = re.compile("[0-9]+")

    def take(self, m):
        n = m.end() - m.start()
        if self.pos + n > len(self.pool):
            self.pool, self.pos = "".join(self.rng.choices(DIGITS, k=1 << 16)), 0
        self.pos += n
        return self.pool[self.pos - n:self.pos]

    def __call__(self, s):
        return self.run.sub(self.take, s)


PATHS = ["/", "/index.html", "/api/v1/users/123", "/api/v1/orders/4567/items", "/static/js/app.12ab34.js",
         "/static/css/main.9f8e.css", "/login", "/logout", "/search?q=shoes&page=2", "/healthz",
         "/wp-login.php", "/.env", "/api/v2/cart/checkout", "/images/products/8812/thumb.jpg",
         "/favicon.ico", "/robots.txt", "/api/v1/sessions/refresh", "/graphql", "/metrics",
         "/account/settings?tab=billing", "/download/report-2023-10.pdf", "/cgi-bin/luci"]
AGENTS = ["Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/118.0.0.0 Safari/537.36",
          "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1",
          "Mozilla/5.0 (X11; Linux x86_64; rv:109.0) Gecko/20100101 Firefox/119.0",
          "curl/7.88.1", "python-requests/2.31.0", "Go-http-client/1.1",
          "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
          "kube-probe/1.27", "Prometheus/2.47.0", "okhttp/4.11.0"]
METHODS = ["GET", "GET", "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH"]
REFERERS = ["-", "https://shop.example.com/", "https://www.google.com/", "https://shop.example.com/cart",
            "https://m.example.org/app/home"]
TABLES = ["orders", "customers", "order_items", "invoices", "sessions", "products", "inventory",
          "audit_events", "payments"]
COLS = ["id", "customer_id", "created_at", "status", "total_cents", "sku", "warehouse_id", "email",
        "updated_at", "amount"]
CLASSES = ["com.example.orders.OrderService", "com.example.payments.StripeGateway",
           "org.springframework.web.servlet.DispatcherServlet", "com.example.inventory.StockRepository",
           "io.netty.channel.AbstractChannelHandlerContext", "org.hibernate.engine.jdbc.spi.SqlExceptionHelper",
           "com.zaxxer.hikari.pool.HikariPool", "org.apache.kafka.clients.consumer.internals.Fetcher",
           "com.example.auth.JwtFilter", "java.util.concurrent.ThreadPoolExecutor$Worker"]
METHODS_J = ["process", "handle", "doFilter", "invoke", "run", "execute", "fetchRecords", "getConnection",
             "validate", "lambda$submit$0", "apply", "call"]
EXCEPTIONS = ["java.lang.NullPointerException: Cannot invoke \"String.length()\" because \"name\" is null",
              "java.sql.SQLTransientConnectionException: HikariPool-1 - Connection is not available, request timed out after 30000ms.",
              "java.lang.IllegalStateException: Order 4821 is already settled",
              "org.apache.kafka.common.errors.TimeoutException: Timeout of 60000ms expired before the position for partition events-3 could be determined",
              "java.net.SocketTimeoutException: Read timed out",
              "com.fasterxml.jackson.databind.exc.MismatchedInputException: Cannot deserialize value of type `java.lang.Long` from String \"abc\""]
K8S_REASONS = [("Normal", "Scheduled", "Successfully assigned {ns}/{pod} to node-{n}"),
               ("Normal", "Pulled", "Container image \\\"registry.example.com/{app}:1.4.2\\\" already present on machine"),
               ("Normal", "Created", "Created container {app}"),
               ("Normal", "Started", "Started container {app}"),
               ("Warning", "BackOff", "Back-off restarting failed container {app} in pod {pod}_{ns}({uid})"),
               ("Warning", "Unhealthy", "Readiness probe failed: Get \\\"http://10.244.1.17:8080/healthz\\\": dial tcp 10.244.1.17:8080: connect: connection refused"),
               ("Normal", "Killing", "Stopping container {app}"),
               ("Warning", "FailedScheduling", "0/12 nodes are available: 3 Insufficient memory, 9 node(s) didn't match Pod's node affinity/selector.")]
APPS = ["checkout", "cart", "payments", "search", "frontend", "recommender", "ledger", "mailer", "auth"]
NAMESPACES = ["default", "prod", "staging", "kube-system", "monitoring"]
DMESG = ["usb 1-1.2: new high-speed USB device number 5 using ehci-pci",
         "EXT4-fs (sda1): mounted filesystem with ordered data mode. Opts: (null)",
         "IPv4: martian source 10.0.0.255 from 10.0.0.17, on dev eth0",
         "Out of memory: Killed process 2314 (java) total-vm:8123456kB, anon-rss:4123456kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:9876kB oom_score_adj:0",
         "e1000e 0000:00:19.0 eth0: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx",
         "nvme nvme0: I/O 123 QID 4 timeout, aborting",
         "TCP: request_sock_TCP: Possible SYN flooding on port 443. Sending cookies.  Check SNMP counters.",
         "CPU3: Core temperature above threshold, cpu clock throttled (total events = 17)",
         "docker0: port 2(veth3a9f1c2) entered forwarding state",
         "blk_update_request: I/O error, dev sdb, sector 123456789 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"]


def web(rng):
    return ('{ip} - {user} [10/Oct/2023:13:55:36 +0000] "{m} {p} HTTP/1.1" {st} {b} "{ref}" "{ua}" rt=0.123 uct=0.001'
            .format(ip="203.0.113.45", user=rng.choice(["-", "-", "alice", "svc-batch"]), m=rng.choice(METHODS),
                    p=rng.choice(PATHS), st=rng.choice(["200", "200", "200", "304", "404", "500", "301"]),
                    b="5123", ref=rng.choice(REFERERS), ua=rng.choice(AGENTS)))


def dmesg(rng):
    return "[ 1234.567890] " + rng.choice(DMESG)


def firewall(rng):
    return ("Oct 10 13:55:36 gw01 kernel: [UFW BLOCK] IN=eth0 OUT= MAC=00:16:3e:5a:7b:01:00:1b:21:3c:4d:5e:08:00 "
            "SRC=198.51.100.23 DST=192.0.2.10 LEN=60 TOS=0x00 PREC=0x00 TTL=52 ID=54321 {df}PROTO={pr} SPT=44123 DPT={dpt} "
            "WINDOW=29200 RES=0x00 SYN URGP=0").format(df=rng.choice(["DF ", ""]), pr=rng.choice(["TCP", "UDP"]),
                                                       dpt=rng.choice(["22", "23", "445", "3389", "8080"]))


def postgres(rng):
    t, c = rng.choice(TABLES), rng.choice(COLS)
    q = rng.choice([
        "SELECT * FROM {t} WHERE {c} = 48213 ORDER BY created_at DESC LIMIT 50",
        "UPDATE {t} SET status = 'shipped', updated_at = now() WHERE id = 9912345",
        "INSERT INTO {t} ({c}, created_at) VALUES (4411, '2023-10-10 13:55:36')",
        "SELECT count(*) FROM {t} t JOIN customers c ON c.id = t.customer_id WHERE t.{c} > 1200",
        "DELETE FROM {t} WHERE created_at < now() - interval '90 days'"]).format(t=t, c=c)
    return rng.choice([
        "2023-10-10 13:55:36.123 UTC [12345] app@shop LOG:  duration: 1234.567 ms  statement: " + q,
        "2023-10-10 13:55:36.123 UTC [12345] app@shop ERROR:  deadlock detected",
        "2023-10-10 13:55:36.123 UTC [12345] app@shop DETAIL:  Process 12345 waits for ShareLock on transaction 987654; blocked by process 12346.",
        "2023-10-10 13:55:36.123 UTC [12345] LOG:  checkpoint complete: wrote 1234 buffers (7.5%); 0 WAL file(s) added, 0 removed, 3 recycled; write=269.812 s, sync=0.012 s, total=269.857 s",
        "# Query_time: 2.123456  Lock_time: 0.000123 Rows_sent: 10  Rows_examined: 123456",
        "SET timestamp=1696946136; " + q + ";"])


def java(rng):
    cls = rng.choice(CLASSES)
    short = cls.rsplit(".", 1)[1].split("$")[0]
    return rng.choice([
        "2023-10-10 13:55:36,123 ERROR [http-nio-8080-exec-5] {cls} - Failed to process request 7f3a: {e}",
        "\tat {cls}.{m}({short}.java:123)", "\tat {cls}.{m}({short}.java:123)", "\tat {cls}.{m}({short}.java:123)",
        "\tat {cls}.{m}({short}.java:123)", "Caused by: {e}", "\t... 42 more",
        "2023-10-10 13:55:36,123 INFO  [main] {cls} - Started in 12.345 seconds (process running for 13.2)",
        "2023-10-10 13:55:36,123 WARN  [pool-3-thread-7] {cls} - Retrying after 250 ms (attempt 2 of 5)"]).format(
        cls=cls, short=short, m=rng.choice(METHODS_J), e=rng.choice(EXCEPTIONS))


def k8s(rng):
    ty, reason, msg = rng.choice(K8S_REASONS)
    app, ns = rng.choice(APPS), rng.choice(NAMESPACES)
    pod = app + "-7d4b9c8f6d-" + "".join(rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(5))
    msg = msg.format(ns=ns, pod=pod, app=app, n=1, uid="3f2a9c1e-77b0-4e52-9a1d-5c0e8b7f6a21")
    return ('I1010 13:55:36.123456       1 event.go:294] "Event occurred" object="{ns}/{pod}" kind="Pod" '
            'apiVersion="v1" type="{ty}" reason="{r}" message="{msg}"').format(ns=ns, pod=pod, ty=ty, r=reason, msg=msg)


def audit(rng):
    return rng.choice([
        'type=SYSCALL msg=audit(1696946136.123:4567): arch=c000003e syscall=59 success=yes exit=0 a0=55d5c a1=55d5d a2=55d5e a3=0 items=2 ppid=1234 pid=1235 auid=1000 uid=0 gid=0 euid=0 suid=0 fsuid=0 egid=0 sgid=0 fsgid=0 tty=pts0 ses=3 comm="sudo" exe="/usr/bin/sudo" key="priv_esc"',
        'audit: type=1400 audit(1696946136.123:456): apparmor="DENIED" operation="open" profile="/usr/sbin/cupsd" name="/etc/ssl/private/" pid=1234 comm="cupsd" requested_mask="r" denied_mask="r" fsuid=0 ouid=0',
        'type=USER_LOGIN msg=audit(1696946136.123:4568): pid=2345 uid=0 auid=1001 ses=4 msg=\'op=login id=1001 exe="/usr/sbin/sshd" hostname=? addr=192.0.2.44 terminal=sshd res=success\''])


FAMILIES = [(web, 5), (dmesg, 2), (firewall, 2), (postgres, 2), (java, 3), (k8s, 2), (audit, 1)]


def families(rng, n, out):
    funcs = [f for f, w in FAMILIES for _ in range(w)]
    vary = DigitVarier(rng)
    for _ in range(n):
        out.write(vary(rng.choice(funcs)(rng)) + "\n")


JSON_MSGS = ["request completed", "request started", "cache miss", "retrying upstream call", "payment authorized",
             "user signed in", "rate limit exceeded", "job finished", "slow query", "connection reset by peer"]


def json_line(rng):
    svc = rng.choice(APPS)
    fields = ['"ts":"2023-10-10T13:55:36.123456Z"', '"level":"%s"' % rng.choice(["info", "info", "info", "warn", "error", "debug"]),
              '"service":"%s"' % svc, '"msg":"%s"' % rng.choice(JSON_MSGS),
              '"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"', '"span_id":"00f067aa0ba902b7"']
    kind = rng.randrange(4)
    if kind == 0:
        fields += ['"http":{"method":"%s","path":"%s","status":200,"duration_ms":12.345,"bytes":51234}'
                   % (rng.choice(METHODS), rng.choice(PATHS)), '"client_ip":"198.51.100.23"']
    elif kind == 1:
        fields += ['"db":{"table":"%s","rows":123,"duration_ms":45.678}' % rng.choice(TABLES), '"pool":"primary"']
    elif kind == 2:
        fields += ['"user_id":123456', '"tenant":"acme-%d"' % rng.randrange(10), '"attempt":2', '"error":"%s"'
                   % rng.choice(EXCEPTIONS).replace('"', '\\"')]
    else:
        fields += ['"queue":"events-3"', '"offset":123456789', '"lag":42', '"partition":7']
    if rng.random() < 0.3:
        fields.append('"k8s":{"namespace":"%s","pod":"%s-7d4b9c8f6d-x2k9p","node":"node-17"}' % (rng.choice(NAMESPACES), svc))
    return "{" + ",".join(fields) + "}"


def jsonl(rng, n, out):
    vary = DigitVarier(rng)
    for _ in range(n):
        out.write(vary(json_line(rng)) + "\n")


def zipf_picker(rng, values, s=1.1):
    """A function that returns values[k] with probability proportional to 1/(k+1)^s."""
    import bisect
    import itertools
    weights = [1.0 / (k + 1) ** s for k in range(len(values))]
    cum = list(itertools.accumulate(weights))
    total = cum[-1]
    return lambda: values[bisect.bisect_left(cum, rng.random() * total)]


def zipf(rng, n, out):
    vr = random.Random(rng.random())
    users = zipf_picker(rng, ["user%04d" % vr.randrange(10000) for _ in range(5000)])
    ips = zipf_picker(rng, ["%d.%d.%d.%d" % tuple(vr.randrange(1, 255) for _ in range(4)) for _ in range(20000)])
    paths = zipf_picker(rng, ["/api/v%d/%s/%d" % (vr.randrange(1, 3), vr.choice(TABLES), vr.randrange(100000))
                              for _ in range(50000)])
    codes = zipf_picker(rng, ["200", "304", "404", "500", "302", "401", "403", "503", "201", "204"], 2.0)
    errs = zipf_picker(rng, EXCEPTIONS + ["E%04d" % k for k in range(300)])
    hosts = zipf_picker(rng, ["node-%03d" % k for k in range(400)])
    ms = zipf_picker(rng, [str(k) for k in range(1, 5000)], 0.9)
    t = 1696946136.0
    for _ in range(n):
        t += rng.expovariate(2000.0)
        sec = int(t)
        ts = "2023-10-10 %02d:%02d:%02d.%03d" % ((sec // 3600) % 24, (sec // 60) % 60, sec % 60, int((t - sec) * 1000))
        k = rng.randrange(5)
        if k == 0:
            line = "%s INFO http %s %s %s %s %sms user=%s" % (ts, ips(), rng.choice(METHODS), paths(), codes(), ms(), users())
        elif k == 1:
            line = "%s WARN auth failed login for %s from %s reason=%s" % (ts, users(), ips(), rng.choice(["bad_password", "locked", "mfa_timeout"]))
        elif k == 2:
            line = "%s ERROR worker %s job=%s error=%s" % (ts, hosts(), paths(), errs())
        elif k == 3:
            line = "%s INFO cache %s key=%s hit=%s size=%s" % (ts, hosts(), paths(), rng.choice(["true", "false"]), ms())
        else:
            line = "%s DEBUG session %s user=%s ip=%s ttl=%s" % (ts, hosts(), users(), ips(), ms())
        out.write(line + "\n")


def vary_file(src):
    with open(src, encoding="utf-8", errors="replace") as f:
        lines = [line.rstrip("\r\n") for line in f if line.strip("\r\n")]

    def gen(rng, n, out):
        vary = DigitVarier(rng)
        for k in range(n):
            out.write(vary(lines[k % len(lines)]) + "\n")
    return gen


def option(args, name, default):
    if name not in args:
        return default
    i = args.index(name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


def main():
    args = sys.argv[1:]
    seed = int(option(args, "--seed", "1"))
    src = option(args, "--from", None)
    kinds = {"families": families, "json": jsonl, "zipf": zipf}
    if src:
        kinds["vary"] = vary_file(src)
    if len(args) != 3 or args[0] not in kinds:
        sys.stderr.write(__doc__)
        return 2
    kind, n, path = args[0], int(args[1]), args[2]
    rng = random.Random("%s-%d" % (kind, seed))
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        kinds[kind](rng, n, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
