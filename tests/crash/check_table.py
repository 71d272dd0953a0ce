#!/usr/bin/python3
"""Checks that a local Iceberg table is whole after a power cut: its newest metadata file
parses, and every manifest list, manifest and live data file that any of its snapshots
names is present and, for the Avro ones, reads in python3-avro and passes
tests/integration/check_avro.py's checks against the spec.

Usage: check_table.py TABLE-DIR. Prints what it checked; exits 1 on the first fault.
A table directory without metadata (nothing committed yet) passes."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import check_avro  # noqa: E402


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def main(table):
    mdir = os.path.join(table, "metadata")
    versions = []
    if os.path.isdir(mdir):
        for n in os.listdir(mdir):
            m = re.fullmatch(r"v(\d+)\.metadata\.json", n)
            if m:
                versions.append((int(m.group(1)), n))
    if not versions:
        print(f"OK {table}: no metadata yet")
        return 0
    newest = os.path.join(mdir, max(versions)[1])
    with open(newest) as f:
        meta = json.load(f)
    lists = manifests = files = 0
    seen = set()
    for snap in meta.get("snapshots", []):
        ml = local(snap["manifest-list"])
        if not os.path.exists(ml):
            print(f"FAULT {newest}: snapshot {snap['snapshot-id']} names a missing manifest list {ml}")
            return 1
        check_avro.check_list(ml)
        lists += 1
        r, _, _ = check_avro.open_reader(ml)
        for rec in r:
            mp = local(rec["manifest_path"])
            if mp in seen:
                continue
            seen.add(mp)
            if not os.path.exists(mp):
                print(f"FAULT {ml}: names a missing manifest {mp}")
                return 1
            check_avro.check_manifest(mp)
            manifests += 1
            mr, _, _ = check_avro.open_reader(mp)
            for e in mr:
                if e["status"] == 2:
                    continue  # deleted: the snapshot no longer holds it
                dp = local(e["data_file"]["file_path"])
                if not os.path.exists(dp):
                    print(f"FAULT {mp}: names a missing data file {dp}")
                    return 1
                files += 1
            mr.close()
        r.close()
    print(f"OK {newest}: {lists} manifest lists, {manifests} manifests, {files} data files present")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1]))
    except check_avro.Mismatch as e:
        print(f"FAULT {e}")
        sys.exit(1)
    except Exception as e:  # unreadable: python3-avro or json rejected it
        print(f"FAULT {type(e).__name__}: {e}")
        sys.exit(1)
