#!/usr/bin/python3
"""Appends JSON lines of three apps to a file: gen_app_lines.py FILE LABEL FROM COUNT [HOURS].

Line i (FROM <= i < FROM + COUNT) is {"time": 2026-03-01 at hour 10 + i % HOURS (1 by
default), minute i % 60, "service": "app<i % 3>", "msg": "LABEL line i"}: every message is
unique per label, and the lines spread over HOURS hours and three apps, for the partition
tests (partition_by day(ts), hour(ts), app).
"""
import json
import sys

path, label, first, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
hours = int(sys.argv[5]) if len(sys.argv) > 5 else 1
with open(path, "a") as f:
    for i in range(first, first + count):
        f.write(json.dumps({"time": "2026-03-01T%02d:%02d:00Z" % (10 + i % hours, i % 60),
                            "service": "app%d" % (i % 3), "msg": "%s line %d" % (label, i)}) + "\n")
