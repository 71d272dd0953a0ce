#!/usr/bin/env python3
"""Inputs for the Parquet writer's fuzz target (tests/fuzz/fuzz_pq_writer.c), made to
cover every codec x profile with several page sizes, row group sizes, memory budgets,
bloom filter sets and the page index on and off, with rows of log-like text: repeated
hosts and keys (dictionaries), UTF-8 of 1 to 4 bytes a character, invalid UTF-8, empty
strings, null and empty maps, null map values, repeated keys, nulls in optional columns
and refused nulls in the required one. Plus inputs of random bytes. Deterministic.

usage: gen_pq_fuzz.py DIR [--seed N] [--random N]
The input format is the target's: three option bytes, then rows of a flags byte, three
ts bytes, host, offset byte, severity byte, message, and up to 7 key/value pairs, each
string a length byte (0..63, low 6 bits) and that many bytes."""
import argparse
import os
import random

WORDS = ["GET", "POST", "/api/v1/items", "200", "404", "sshd", "session", "opened",
         "for", "user", "root", "kernel:", "eth0", "link", "up", "café", "naïve", "Ünïcödé",
         "日本語", "ログ", "😀", "🚀", "x=1", "latency_ms=12", "\t", "\"quoted\"", "a\\b",
         "", " ", "\x00", "\x1b[0m"]
HOSTS = ["edge-01", "edge-02", "edge-03", "gw.example.net", "ホスト", ""]
KEYS = ["user", "path", "status", "trace_id", "région", "k", ""]
BAD = [b"\xff", b"\xc0\x80", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\x80\x80",
       b"\xf0\x9f\x98", b"\xc3"]


def string(rng, vocab, bad_rate=0.1, max_words=8):
    """A log-like string of at most 63 bytes: words of vocab, sometimes invalid UTF-8."""
    out = b""
    for _ in range(rng.randint(0, max_words)):
        part = rng.choice(vocab).encode()
        if rng.random() < bad_rate:
            part = rng.choice(BAD) + part if rng.random() < 0.5 else part + rng.choice(BAD)
        if len(out) + len(part) + 1 > 63:
            break
        out += (b" " if out else b"") + part
    if rng.random() < 0.05:
        out = bytes(rng.randrange(256) for _ in range(rng.randint(0, 63)))
    return out


def put(buf, s, odd=None):
    """A string as the target reads it; odd forces the length's parity (a key of odd
    length makes its value null)."""
    n = len(s)
    if odd is not None and (n & 1) != odd:
        s = s + b"_" if n < 63 else s[:-1]
        n = len(s)
    buf.append(n)
    buf.extend(s)


def rows(rng, count, buf):
    for i in range(count):
        nattr = rng.choice([0, 0, 1, 2, 3, 7])
        f = rng.getrandbits(3) | (nattr << 3)
        if rng.random() < 0.02:
            f |= 0xC0  # a null in the required ts: refused, then the row is added
        buf.append(f)
        buf.extend(bytes([rng.randrange(256), (i >> 8) & 255, i & 255]))
        put(buf, rng.choice(HOSTS).encode() if rng.random() < 0.9 else string(rng, WORDS, 0.3, 2))
        buf.append(rng.randrange(256))
        buf.append(rng.randrange(256))
        put(buf, string(rng, WORDS))
        for _ in range(nattr):
            key = rng.choice(KEYS).encode() if rng.random() < 0.8 else string(rng, KEYS, 0.3, 2)
            put(buf, key, odd=1 if rng.random() < 0.2 else 0)
            put(buf, string(rng, WORDS, 0.1, 3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--random", type=int, default=8)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    k = 0
    for codec in range(3):  # o0 % 3: uncompressed, zstd, lz4_raw
        for profile in range(2):  # o2 & 1
            for variant in range(4):
                # o0: codec, and the dictionary cap 16 << 4..15 bits; o1: page size
                # 64 << 0..7, row group 512 << 0..7, bloom size; o2: profile, no page
                # index, bloom columns, budget on and its size.
                x = rng.randrange(252)
                o0 = x - x % 3 + codec
                o1 = rng.randrange(256)
                o2 = profile | (variant & 1) << 1 | rng.getrandbits(3) << 2 | \
                    (variant >> 1) << 5 | rng.getrandbits(2) << 6
                buf = bytearray([o0, o1, o2])
                rows(rng, rng.randint(200, 2500), buf)
                with open(os.path.join(a.dir, "gen%03d" % k), "wb") as f:
                    f.write(buf)
                k += 1
    for i in range(a.random):
        with open(os.path.join(a.dir, "random%03d" % i), "wb") as f:
            f.write(bytes(rng.randrange(256) for _ in range(rng.randint(3, 20000))))


if __name__ == "__main__":
    main()
