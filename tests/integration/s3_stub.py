#!/usr/bin/python3
"""A small in-memory S3 server with scripted misbehaviour, for floe's stop and deadline
tests (python3 standard library only).

Usage: s3_stub.py --control FILE --log FILE [--port N] [--dir DIR]

Listens on 127.0.0.1:N (0 or absent: any free port, named on the first output line:
"stub listening on 127.0.0.1:PORT"). Path-style requests only (/BUCKET/KEY); signatures
are not checked. It keeps objects in memory and answers PUT (If-None-Match: * honoured),
GET, HEAD, DELETE, DeleteObjects (quiet), ListObjectsV2 and an empty ListMultipartUploads:
enough for floe to create a table, commit to it and clean it up. With --dir the objects are files, DIR/BUCKET/KEY, read at
each request: a test may replace DIR's content while no request is under way (the
power-cut tests put the store back as it was at each crash point).

Misbehaviour, from the control file (lines of key=value, read again whenever it changes;
REGEX is matched against "METHOD PATH"):
  stall=REGEX        read the request, then never answer (until the client hangs up)
  deny=REGEX         answer 403 AccessDenied (a bucket policy that denies, say, DELETE)
  slowdown=REGEX     answer 503 SlowDown with Retry-After: retry_after (seconds, default 3)
  delay=REGEX        read the request, hold it delay_ms (default 3000), then serve it
  drip=REGEX         answer 200 with a 600-byte body sent at 2 bytes/s
  drip_count=N       only the first N matching requests drip (default: every one)
  redirect=REGEX     answer 307 Temporary Redirect with a Location in another region
  list=repeat        every ListObjectsV2 page says IsTruncated=true with the same token
  list=endless       every ListObjectsV2 page says IsTruncated=true with a new token
  refuse_create=1    answer 412 to every If-None-Match: * PUT, even for absent keys
  access_key=ID      answer 403 InvalidAccessKeyId (logged "REFUSED KEY METHOD PATH") to
                     every request not signed with access key id ID (the signature itself
                     is not checked): a key rotated on the server
  journal=DIR        every change (a PUT stored, a DELETE) is appended to DIR/index as
                     "SEQ METHOD BUCKET/KEY MARK", a PUT's body kept as DIR/SEQ; MARK is
                     the size of the file record= names when the request came (-1 when
                     none): the power-cut tests' recording of floe's file operations, so
                     that each change is placed among them
Every request is logged as "METHOD PATH" (the query included), and every scripted fault
as "FAULT KIND METHOD PATH" (a delayed one also as "DELAYED METHOD PATH" when it is
served), each line after the time it was written (seconds since the epoch).
"""
import argparse
import hashlib
import os
import re
import select
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape, unescape

HOLD_MAX_S = 120  # a stalled request is given up after this, whatever the client does


class Control:
    def __init__(self, path):
        self.path = path
        self.key = None
        self.lock = threading.Lock()
        self.values = {}
        self.drips = 0
        self.pages = 0

    def get(self, name):
        with self.lock:
            try:
                st = os.stat(self.path)
                key = (st.st_mtime_ns, st.st_size)
            except OSError:
                key = None
            if key != self.key:
                self.key = key
                values = {}
                if key is not None:
                    with open(self.path) as f:
                        for line in f:
                            k, sep, v = line.strip().partition("=")
                            if sep and not k.startswith("#"):
                                values[k] = v
                self.values = values
            return self.values.get(name, "")

    def matches(self, name, what):
        pattern = self.get(name)
        return bool(pattern) and re.search(pattern, what) is not None

    def take_drip(self):
        """Whether one more request may drip (drip_count)."""
        limit = self.get("drip_count")
        with self.lock:
            if limit and self.drips >= int(limit):
                return False
            self.drips += 1
            return True

    def next_page(self):
        with self.lock:
            self.pages += 1
            return self.pages


class Store:
    """Objects in memory, or as files under root (--dir)."""

    def __init__(self, root=None):
        self.lock = threading.Lock()
        self.objects = {}  # (bucket, key) -> bytes
        self.root = root

    def path(self, bucket, key):
        return os.path.join(self.root, bucket, key)

    def get(self, bucket, key):
        if self.root is None:
            return self.objects.get((bucket, key))
        try:
            with open(self.path(bucket, key), "rb") as f:
                return f.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    def put(self, bucket, key, body):
        if self.root is None:
            self.objects[(bucket, key)] = body
            return
        p = self.path(bucket, key)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p + ".stub-tmp", "wb") as f:
            f.write(body)
        os.replace(p + ".stub-tmp", p)

    def delete(self, bucket, key):
        if self.root is None:
            self.objects.pop((bucket, key), None)
            return
        try:
            os.unlink(self.path(bucket, key))
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            pass

    def keys(self, bucket, prefix):
        """Sorted (key, size) of bucket's objects under prefix."""
        if self.root is None:
            return sorted((k, len(v)) for (b, k), v in self.objects.items()
                          if b == bucket and k.startswith(prefix))
        top = os.path.join(self.root, bucket)
        out = []
        for d, _, files in os.walk(top):
            for name in files:
                p = os.path.join(d, name)
                k = os.path.relpath(p, top)
                if k.startswith(prefix) and not name.endswith(".stub-tmp"):
                    out.append((k, os.path.getsize(p)))
        return sorted(out)


def journal(ctl, method, bucket, key, body):
    """Appends a change to the control's journal= directory, if it names one."""
    jdir = ctl.get("journal")
    if not jdir:
        return
    try:
        mark = os.path.getsize(ctl.get("record")) if ctl.get("record") else -1
    except OSError:
        mark = -1
    os.makedirs(jdir, exist_ok=True)
    index = os.path.join(jdir, "index")
    seq = 0
    if os.path.exists(index):
        with open(index) as f:
            seq = sum(1 for _ in f)
    if method == "PUT":
        with open(os.path.join(jdir, str(seq)), "wb") as f:
            f.write(body)
    with open(index, "a") as f:
        f.write("%d %s %s/%s %d\n" % (seq, method, bucket, key, mark))


def xml_list(bucket, prefix, keys, truncated, token):
    parts = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">',
             "<Name>%s</Name><Prefix>%s</Prefix><KeyCount>%d</KeyCount>" % (escape(bucket), escape(prefix), len(keys)),
             "<MaxKeys>1000</MaxKeys><IsTruncated>%s</IsTruncated>" % ("true" if truncated else "false")]
    if token:
        parts.append("<NextContinuationToken>%s</NextContinuationToken>" % escape(token))
    for k, size in keys:
        parts.append("<Contents><Key>%s</Key><Size>%d</Size></Contents>" % (escape(k), size))
    parts.append("</ListBucketResult>")
    return "".join(parts).encode()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "s3stub"

    def log_message(self, fmt, *args):
        pass

    def note(self, text):
        with self.server.log_lock:
            self.server.log.write("%.3f %s\n" % (time.time(), text))
            self.server.log.flush()

    def answer(self, status, body=b"", headers=None, head=False):
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def error(self, status, code, head=False):
        body = ("<Error><Code>%s</Code><Message>%s</Message></Error>" % (code, code)).encode()
        self.answer(status, body, {"Content-Type": "application/xml"}, head)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def hold(self):
        """Never answers: waits until the client hangs up (or HOLD_MAX_S)."""
        end = time.monotonic() + HOLD_MAX_S
        sock = self.connection
        while time.monotonic() < end:
            r, _, _ = select.select([sock], [], [], 0.5)
            if r:
                try:
                    if not sock.recv(4096):
                        break
                except OSError:
                    break
        self.close_connection = True

    def drip(self):
        body = b"x" * 600
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.flush()
        try:
            for i in range(0, len(body), 2):
                self.wfile.write(body[i:i + 2])
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
        self.close_connection = True

    def route(self, method):
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query, keep_blank_values=True))
        path = urllib.parse.unquote(u.path)
        bucket, _, key = path.lstrip("/").partition("/")
        what = "%s %s" % (method, self.path)
        self.note(what)
        ctl = self.server.control
        body = self.read_body() if method in ("PUT", "POST") else b""
        self.body = body
        want = ctl.get("access_key")
        if want:
            m = re.search(r"Credential=([^/,\s]+)/", self.headers.get("Authorization") or "")
            if not m or m.group(1) != want:
                self.note("REFUSED %s %s" % (m.group(1) if m else "-", what))
                return self.error(403, "InvalidAccessKeyId", method == "HEAD")
        if ctl.matches("stall", what):
            self.note("FAULT stall " + what)
            return self.hold()
        if ctl.matches("slowdown", what):
            self.note("FAULT slowdown " + what)
            body = b"<Error><Code>SlowDown</Code><Message>Reduce your request rate.</Message></Error>"
            return self.answer(503, body, {"Content-Type": "application/xml",
                                           "Retry-After": ctl.get("retry_after") or "3"},
                               method == "HEAD")
        if ctl.matches("deny", what):
            self.note("FAULT deny " + what)
            return self.error(403, "AccessDenied", method == "HEAD")
        if ctl.matches("delay", what):
            self.note("FAULT delay " + what)
            time.sleep(int(ctl.get("delay_ms") or 3000) / 1000.0)
            self.note("DELAYED " + what)
        if ctl.matches("redirect", what):
            self.note("FAULT redirect " + what)
            loc = "https://%s.s3.eu-west-1.amazonaws.com/%s" % (bucket, urllib.parse.quote(key))
            return self.answer(307, b"<Error><Code>TemporaryRedirect</Code></Error>",
                               {"Location": loc, "x-amz-bucket-region": "eu-west-1"}, method == "HEAD")
        if ctl.matches("drip", what) and ctl.take_drip():
            self.note("FAULT drip " + what)
            return self.drip()
        store = self.server.store
        if not key:
            return self.bucket_op(method, bucket, q)
        if method == "PUT":
            with store.lock:
                exists = store.get(bucket, key) is not None
                if self.headers.get("If-None-Match") == "*":
                    if ctl.get("refuse_create") == "1":
                        self.note("FAULT refuse_create " + what)
                        return self.error(412, "PreconditionFailed")
                    if exists:
                        return self.error(412, "PreconditionFailed")
                journal(ctl, method, bucket, key, body)
                store.put(bucket, key, body)
            return self.answer(200, b"", {"ETag": '"%s"' % hashlib.md5(body).hexdigest()})
        with store.lock:
            data = store.get(bucket, key)
            if method == "DELETE":
                journal(ctl, method, bucket, key, b"")
                store.delete(bucket, key)
        if method == "DELETE":
            return self.answer(204)
        if data is None:
            return self.error(404, "NoSuchKey", method == "HEAD")
        return self.answer(200, data, {"ETag": '"%s"' % hashlib.md5(data).hexdigest()}, method == "HEAD")

    def bucket_op(self, method, bucket, q):
        ctl = self.server.control
        if method == "POST" and "delete" in q:
            return self.delete_objects(bucket)
        if method == "GET" and "uploads" in q:
            body = ('<?xml version="1.0" encoding="UTF-8"?><ListMultipartUploadsResult>'
                    "<Bucket>%s</Bucket><IsTruncated>false</IsTruncated>"
                    "</ListMultipartUploadsResult>" % escape(bucket)).encode()
            return self.answer(200, body, {"Content-Type": "application/xml"})
        if method != "GET" or q.get("list-type") != "2":
            return self.error(400, "InvalidRequest")
        prefix = q.get("prefix", "")
        mode = ctl.get("list")
        if mode in ("repeat", "endless"):
            n = ctl.next_page()
            token = "same-token" if mode == "repeat" else "token-%d" % n
            self.note("FAULT list-%s page %d" % (mode, n))
            return self.answer(200, xml_list(bucket, prefix, [], True, token))
        with self.server.store.lock:
            keys = self.server.store.keys(bucket, prefix)
        return self.answer(200, xml_list(bucket, prefix, keys, False, None))

    def delete_objects(self, bucket):
        """DeleteObjects in quiet mode: every key named goes, the answer lists no error."""
        body = self.body.decode()
        keys = [unescape(k) for k in re.findall(r"<Key>(.*?)</Key>", body, re.S)]
        store = self.server.store
        with store.lock:
            for k in keys:
                journal(self.server.control, "DELETE", bucket, k, b"")
                store.delete(bucket, k)
        out = ('<?xml version="1.0" encoding="UTF-8"?>'
               '<DeleteResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"></DeleteResult>')
        return self.answer(200, out.encode(), {"Content-Type": "application/xml"})

    def do_GET(self):
        self.route("GET")

    def do_HEAD(self):
        self.route("HEAD")

    def do_PUT(self):
        self.route("PUT")

    def do_DELETE(self):
        self.route("DELETE")

    def do_POST(self):
        self.route("POST")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--control", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--dir")
    a = ap.parse_args()
    srv = ThreadingHTTPServer(("127.0.0.1", a.port), Handler)
    srv.daemon_threads = True
    srv.control = Control(a.control)
    srv.store = Store(a.dir)
    srv.log = open(a.log, "a")
    srv.log_lock = threading.Lock()
    print("stub listening on 127.0.0.1:%d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    sys.exit(main())
