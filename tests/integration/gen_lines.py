#!/usr/bin/python3
"""Appends unique, poorly compressible lines to a file: gen_lines.py FILE MEGABYTES [SEED].

Each line is "<byte offset, 12 digits> <base64 of random bytes>", so a reader can check that
a row's message is the line found at the row's offset. Writes in 1 MiB chunks (flushed, so
a tailing reader sees the file grow) and stops after MEGABYTES MiB. Prints the line count.
"""
import base64
import os
import random
import sys

path, mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
limit = mib << 20
with open(path, "ab") as f:
    off = f.tell()
    start = off
    n = 0
    chunk = []
    size = 0
    while off - start < limit:
        line = b"%012d %s\n" % (off, base64.b64encode(rng.randbytes(90)))
        chunk.append(line)
        off += len(line)
        size += len(line)
        n += 1
        if size >= 1 << 20:
            f.write(b"".join(chunk))
            f.flush()
            chunk, size = [], 0
    f.write(b"".join(chunk))
print(n)
