#!/usr/bin/python3
"""Turns a state directory into the one an older floe left: the checkpoint into version 1
(no installation, committed sequence, committed version or table UUID) and every spool
entry into version 1 (no start positions, no XXH64 per file). Both formats are still
read (agent/run/runner_state.c, agent/lake/spool.c) and rewritten in the current one;
the power-cut tests' upgrade cycle starts from such a state.

Usage: old_state.py STATE-DIR. Each is a blob file (agent/state/blobfile.h): "FLCK",
u32 frame version 1, u64 payload length, u32 CRC32C of the payload, the payload (JSON)."""
import glob
import json
import os
import struct
import sys


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def rewrite(path, change):
    with open(path, "rb") as f:
        blob = f.read()
    magic, frame, n, crc = struct.unpack("<4sIQI", blob[:20])
    payload = blob[20:20 + n]
    if magic != b"FLCK" or frame != 1 or crc32c(payload) != crc:
        sys.exit(f"{path}: not a blob file")
    doc = json.loads(payload)
    change(doc)
    payload = json.dumps(doc, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<4sIQI", b"FLCK", 1, len(payload), crc32c(payload)) + payload)
        f.flush()
        os.fsync(f.fileno())
    print(f"{path}: version {doc['version']}")


def old_checkpoint(doc):
    for k in ("installation", "committed_seq", "committed_version", "table_uuid"):
        doc.pop(k, None)
    doc["version"] = 1


def old_entry(doc):
    doc.pop("from", None)
    for f in doc["files"]:
        f.pop("xxh64", None)
    doc["version"] = 1


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    state = sys.argv[1]
    rewrite(os.path.join(state, "checkpoint"), old_checkpoint)
    for e in sorted(glob.glob(os.path.join(state, "spool", "*.entry"))):
        rewrite(e, old_entry)


if __name__ == "__main__":
    main()
