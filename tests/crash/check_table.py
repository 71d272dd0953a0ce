#!/usr/bin/python3
"""Checks that a local Iceberg table is whole after a power cut: its newest metadata file
parses, and every manifest list, manifest and live data file that any of its snapshots
names is present and, for the Avro ones, reads in python3-avro and passes
tests/integration/check_avro.py's checks against the spec.

Usage: check_table.py TABLE-DIR[=METADATA]... Prints what it checked; exits 1 on the first fault.
METADATA names the current metadata file where a catalog keeps it (a REST catalog's).
An S3 table is read from a store kept as files (s3_stub.py --dir): CHECK_TABLE_S3_ROOT.
A table directory without metadata (nothing committed yet) passes."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import check_avro  # noqa: E402


def local(uri):
    """The local path of uri: a file:// one's own; an s3://BUCKET/KEY one's under the
    environment's CHECK_TABLE_S3_ROOT (a store kept as files, ROOT/BUCKET/KEY)."""
    if uri.startswith("s3://") and os.environ.get("CHECK_TABLE_S3_ROOT"):
        return os.path.join(os.environ["CHECK_TABLE_S3_ROOT"], uri[len("s3://"):])
    return uri[len("file://"):] if uri.startswith("file://") else uri


class Missing(Exception):
    pass


def present(uri, named_by, what):
    """The local path of uri, which named_by names as its what; Missing when absent."""
    path = local(uri)
    if not os.path.exists(path):
        raise Missing(f"FAULT {named_by}: names a missing {what} {path}")
    return path


def records(path, check):
    """Checks the Avro file at path with check (check_avro's) and yields its records."""
    check(path)
    r, _, _ = check_avro.open_reader(path)
    try:
        yield from r
    finally:
        r.close()


def main(table):
    table, _, current = table.partition("=")
    mdir = os.path.join(table, "metadata")
    versions = []
    if current:
        versions.append((0, local(current)))
    elif os.path.isdir(mdir):
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
    try:
        for snap in meta.get("snapshots", []):
            ml = present(snap["manifest-list"], newest, "manifest list")
            lists += 1
            for rec in records(ml, check_avro.check_list):
                mp = present(rec["manifest_path"], ml, "manifest")
                if mp in seen:
                    continue
                seen.add(mp)
                manifests += 1
                for e in records(mp, check_avro.check_manifest):
                    if e["status"] != 2:  # 2: deleted, the snapshot no longer holds it
                        present(e["data_file"]["file_path"], mp, "data file")
                        files += 1
    except Missing as e:
        print(e)
        return 1
    print(f"OK {newest}: {lists} manifest lists, {manifests} manifests, {files} data files present")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(max(main(t) for t in sys.argv[1:]))
    except check_avro.Mismatch as e:
        print(f"FAULT {e}")
        sys.exit(1)
    except Exception as e:  # unreadable: python3-avro or json rejected it
        print(f"FAULT {type(e).__name__}: {e}")
        sys.exit(1)
