#!/usr/bin/env python3
# The DDSketch column's bytes on the small-groups data of tests/bench/aggregate.sh (the
# same events: seed 17, 100 a second, 5 hosts x ROUTES routes, one-minute windows), in
# the two store forms of the DDSketch protobuf: contiguousBinCounts from the lowest to
# the highest bucket, zeros included (what floe writes: @datadog/sketches-js reads only
# that form), and the binCounts map of the occupied buckets (which sketches-js decodes
# as an empty store, without an error). Each image is PLAIN-encoded (4-byte length, then
# the bytes) into 1 MiB pages compressed with zstd -3, as floe's Parquet writer does.
# Prints bytes per row for both; asserts nothing. Needs the zstd program.
# usage: tests/bench/aggregate_dds_forms.py [EVENTS] [ROUTES]   (2,000,000 and 1,000)
import collections
import math
import random
import struct
import subprocess
import sys

n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000000
routes = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
r = random.Random(17)
groups = collections.OrderedDict()
for i in range(n):
    minute = (10 * i) // 60000
    # The draws in aggregate.sh's order: host, route, latency, then the client's two.
    host, route = r.randrange(5), r.randrange(routes)
    lat = float("%.1f" % r.lognormvariate(3, 1))
    r.randrange(256)
    r.randrange(256)
    groups.setdefault((minute, host, route), []).append(lat)

ACC = 0.01
MULT = 1.0 / math.log1p(2 * ACC / (1 - ACC))  # floe's (and sketches-js's) mapping
GAMMA = 1 + 2 * ACC / (1 - ACC)


def varint(v):
    out = b""
    while True:
        b, v = v & 0x7F, v >> 7
        if not v:
            return out + bytes([b])
        out += bytes([b | 0x80])


def zigzag(v):
    return (v << 1) ^ (v >> 63)


def field(tag, wire, payload):
    if wire == 2:
        return varint(tag << 3 | 2) + varint(len(payload)) + payload
    return varint(tag << 3 | wire) + payload


MAPPING = field(1, 2, field(1, 1, struct.pack("<d", GAMMA)))


def sketch(store, vals):
    c = collections.Counter(math.ceil(math.log(v) * MULT) for v in vals if v > 0)
    zeros = sum(1 for v in vals if v <= 0)
    body = store(c) if c else b""
    zc = field(4, 1, struct.pack("<d", zeros)) if zeros else b""
    return MAPPING + field(2, 2, body) + field(3, 2, b"") + zc


def contiguous(c):
    lo, hi = min(c), max(c)
    counts = b"".join(struct.pack("<d", c.get(k, 0)) for k in range(lo, hi + 1))
    return field(2, 2, counts) + field(3, 0, varint(zigzag(lo)))


def bin_map(c):
    return b"".join(
        field(1, 2, field(1, 0, varint(zigzag(k))) + field(2, 1, struct.pack("<d", v)))
        for k, v in sorted(c.items()))


rows = list(groups.values())
print("5 hosts x %d routes, %d events: %d rows, %.2f events per row"
      % (routes, n, len(rows), n / len(rows)))
for name, store in (("contiguous", contiguous), ("binCounts map", bin_map)):
    raw = comp = 0
    page = bytearray()
    for i, vals in enumerate(rows):
        img = sketch(store, vals)
        raw += len(img)
        page += struct.pack("<I", len(img)) + img
        if len(page) >= 1 << 20 or i == len(rows) - 1:
            z = subprocess.run(["zstd", "-3", "-q", "-c"], input=bytes(page),
                               capture_output=True, check=True)
            comp += len(z.stdout)
            page = bytearray()
    print("%-14s %10d bytes before compression (%.1f per row), %9d after (%.2f per row)"
          % (name, raw, raw / len(rows), comp, comp / len(rows)))
