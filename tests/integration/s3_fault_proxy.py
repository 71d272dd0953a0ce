#!/usr/bin/python3
"""A fault-injecting HTTP/1.1 proxy for floe's S3 tests (python3 standard library only).

Usage: s3_fault_proxy.py LISTEN_PORT UPSTREAM_PORT [--seed N] [--control FILE] [--log FILE]

Listens on 127.0.0.1:LISTEN_PORT (0: any free port, named on the first output line) and relays every request byte for byte (Host header and
body untouched, so SigV4 signatures stay valid) to 127.0.0.1:UPSTREAM_PORT. It parses only
what it needs to find where a request and a response end (request line, headers,
Content-Length or chunked bodies). The proxy answers "Expect: 100-continue" itself and
forwards the request whole; interim 1xx answers from upstream are not relayed.

Faults, drawn per request with a seeded RNG at the rate the control file sets:
  drop   close the client connection before forwarding (the request is not applied)
  500    answer 500 InternalError without forwarding
  503    answer 503 SlowDown without forwarding
  stall  hold the request for `stall_s` seconds, then forward it normally
  cut    forward the request, wait for upstream's response head (so the request WAS
         applied), then close the client connection without a byte of the answer

Control file (re-read whenever it changes), lines of key=value:
  rate=0.15                  fraction of requests that get a fault
  weights=drop:1,500:1,503:1,stall:0.2,cut:2
  stall_s=2
  once_cut=REGEX             cut the first request whose "METHOD PATH" matches REGEX
                             (after forwarding it), then act as down for once_down_s
  once_down_s=5
  down=1                     close every connection at once (the store looks down)
Every injected fault is logged with its number; totals are printed on SIGTERM/SIGINT.
"""
import os
import random
import re
import signal
import socket
import sys
import threading
import time

MAX_HEAD = 64 * 1024


class Config:
    def __init__(self, path, seed):
        self.path = path
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.mtime = None
        self.rate = 0.0
        self.weights = {"drop": 1.0, "500": 1.0, "503": 1.0, "stall": 0.2, "cut": 2.0}
        self.stall_s = 2.0
        self.once_cut = None
        self.once_down_s = 5.0
        self.down = False
        self.down_until = 0.0
        self.counts = {k: 0 for k in ("requests", "drop", "500", "503", "stall", "cut", "once_cut", "refused")}

    def reload(self):
        if not self.path:
            return
        try:
            st = os.stat(self.path)
        except OSError:
            return
        key = (st.st_mtime_ns, st.st_size)
        if key == self.mtime:
            return
        self.mtime = key
        with open(self.path) as f:
            for line in f:
                line = line.strip()
                if not line or line.startswith("#") or "=" not in line:
                    continue
                k, v = line.split("=", 1)
                if k == "rate":
                    self.rate = float(v)
                elif k == "weights":
                    w = {}
                    for item in v.split(","):
                        name, _, val = item.partition(":")
                        w[name.strip()] = float(val)
                    self.weights = w
                elif k == "stall_s":
                    self.stall_s = float(v)
                elif k == "once_cut":
                    self.once_cut = re.compile(v) if v else None
                elif k == "once_down_s":
                    self.once_down_s = float(v)
                elif k == "down":
                    self.down = v.strip() == "1"

    def is_down(self):
        with self.lock:
            self.reload()
            return self.down or time.monotonic() < self.down_until

    def choose(self, what):
        """The fault for a request ("METHOD PATH"), or None."""
        with self.lock:
            self.reload()
            self.counts["requests"] += 1
            if self.once_cut is not None and self.once_cut.search(what):
                self.once_cut = None
                return "once_cut"
            if self.rate <= 0 or self.rng.random() >= self.rate:
                return None
            total = sum(self.weights.values())
            x = self.rng.random() * total
            for name, w in self.weights.items():
                x -= w
                if x < 0:
                    return name
            return None

    def count(self, name):
        with self.lock:
            self.counts[name] += 1
            return self.counts[name]


class Closed(Exception):
    pass


class Reader:
    """Buffered reads from a socket."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise Closed()
        self.buf += data

    def head(self):
        while True:
            i = self.buf.find(b"\r\n\r\n")
            if i >= 0:
                h, self.buf = self.buf[: i + 4], self.buf[i + 4:]
                return h
            if len(self.buf) > MAX_HEAD:
                raise Closed()
            self.fill()

    def exact(self, n):
        while len(self.buf) < n:
            self.fill()
        d, self.buf = self.buf[:n], self.buf[n:]
        return d

    def line(self):
        while True:
            i = self.buf.find(b"\r\n")
            if i >= 0:
                ln, self.buf = self.buf[: i + 2], self.buf[i + 2:]
                return ln
            self.fill()

    def chunked(self):
        """The raw bytes of a chunked body, trailers included."""
        out = []
        while True:
            ln = self.line()
            out.append(ln)
            size = int(ln.split(b";")[0].strip(), 16)
            if size == 0:
                while True:
                    t = self.line()
                    out.append(t)
                    if t == b"\r\n":
                        return b"".join(out)
            out.append(self.exact(size + 2))

    def rest(self):
        out = [self.buf]
        self.buf = b""
        while True:
            d = self.sock.recv(65536)
            if not d:
                return b"".join(out)
            out.append(d)


def headers_of(head):
    lines = head.split(b"\r\n")
    hs = {}
    for ln in lines[1:]:
        if b":" in ln:
            k, v = ln.split(b":", 1)
            hs[k.strip().lower()] = v.strip()
    return lines[0], hs


def read_body(r, hs):
    if hs.get(b"transfer-encoding", b"").lower() == b"chunked":
        return r.chunked()
    n = int(hs.get(b"content-length", b"0"))
    return r.exact(n)


def error_response(code, text, s3code):
    body = ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>%s</Code>"
            "<Message>injected by s3_fault_proxy</Message></Error>" % s3code).encode()
    return ("HTTP/1.1 %d %s\r\nContent-Type: application/xml\r\nContent-Length: %d\r\n"
            "Connection: close\r\n\r\n" % (code, text, len(body))).encode() + body


def log(cfg, logf, msg):
    with cfg.lock:
        logf.write("%.3f %s\n" % (time.time(), msg))
        logf.flush()


def serve(client, cfg, upstream_port, logf):
    up = None
    upr = None
    try:
        cr = Reader(client)
        while True:
            head = cr.head()
            # Checked once the request is in: an idle keep-alive connection must not
            # outlive the start of an outage.
            if cfg.is_down():
                cfg.count("refused")
                return
            reqline, hs = headers_of(head)
            parts = reqline.split(b" ")
            method = parts[0].decode("latin-1")
            path = parts[1].decode("latin-1") if len(parts) > 1 else "?"
            what = "%s %s" % (method, path)
            expect = hs.get(b"expect", b"").lower() == b"100-continue"
            fault = cfg.choose(what)
            if fault == "drop":
                log(cfg, logf, "fault %d drop: %s" % (cfg.count("drop"), what))
                return
            if expect:
                client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body = read_body(cr, hs)
            if fault in ("500", "503"):
                log(cfg, logf, "fault %d %s: %s" % (cfg.count(fault), fault, what))
                if fault == "500":
                    client.sendall(error_response(500, "Internal Server Error", "InternalError"))
                else:
                    client.sendall(error_response(503, "Service Unavailable", "SlowDown"))
                return
            if fault == "stall":
                log(cfg, logf, "fault %d stall %.1fs: %s" % (cfg.count("stall"), cfg.stall_s, what))
                time.sleep(cfg.stall_s)
            if up is None:
                up = socket.create_connection(("127.0.0.1", upstream_port), timeout=120)
                upr = Reader(up)
            up.sendall(head + body)
            # Skip interim answers: the client already had its 100 Continue from us.
            while True:
                rhead = upr.head()
                status, rhs = headers_of(rhead)
                code = int(status.split(b" ")[1])
                if code >= 200:
                    break
            if fault in ("cut", "once_cut"):
                n = cfg.count(fault)
                if fault == "once_cut":
                    with cfg.lock:
                        cfg.down_until = time.monotonic() + cfg.once_down_s
                log(cfg, logf, "fault %d %s (upstream answered %d): %s" % (n, fault, code, what))
                return
            close = rhs.get(b"connection", b"").lower() == b"close"
            if method == "HEAD" or code in (204, 304):
                rbody = b""
            elif b"content-length" in rhs or rhs.get(b"transfer-encoding", b"").lower() == b"chunked":
                rbody = read_body(upr, rhs)
            else:
                rbody = upr.rest()
                close = True
            client.sendall(rhead + rbody)
            if close or hs.get(b"connection", b"").lower() == b"close":
                return
    except (Closed, OSError, ValueError, IndexError):
        return
    finally:
        for s in (client, up):
            if s is not None:
                try:
                    s.close()
                except OSError:
                    pass


def main():
    args = sys.argv[1:]
    if len(args) < 2:
        sys.stderr.write(__doc__)
        sys.exit(2)
    listen_port, upstream_port = int(args[0]), int(args[1])
    seed, control, logpath = 1, None, None
    i = 2
    while i < len(args):
        if args[i] == "--seed":
            seed = int(args[i + 1])
        elif args[i] == "--control":
            control = args[i + 1]
        elif args[i] == "--log":
            logpath = args[i + 1]
        else:
            sys.stderr.write("unknown argument %s\n" % args[i])
            sys.exit(2)
        i += 2
    cfg = Config(control, seed)
    logf = open(logpath, "a") if logpath else sys.stderr
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", listen_port))
    ls.listen(128)

    def stop(signum, frame):
        with cfg.lock:
            c = dict(cfg.counts)
        faults = sum(v for k, v in c.items() if k not in ("requests", "refused"))
        print("proxy totals: requests=%d faults=%d %s" % (c["requests"], faults, " ".join(
            "%s=%d" % (k, v) for k, v in c.items() if k != "requests")), flush=True)
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    # LISTEN_PORT 0 picks a free port: the first line of output names it.
    print("proxy listening on 127.0.0.1:%d -> 127.0.0.1:%d (seed %d)" % (ls.getsockname()[1], upstream_port, seed),
          flush=True)
    while True:
        try:
            c, _ = ls.accept()
        except InterruptedError:
            continue
        if cfg.is_down():
            cfg.count("refused")
            c.close()
            continue
        c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(c, cfg, upstream_port, logf), daemon=True).start()


if __name__ == "__main__":
    main()
