#!/usr/bin/python3
"""Checks Iceberg manifests and manifest lists with an independent reader (python3-avro).

Usage: check_avro.py [--older] [--manifest PATH]... [--list PATH]... [PATH]...
A bare PATH is classified by its Avro record name (manifest_entry or manifest_file).
Every record is decoded with avro.datafile.DataFileReader, and the schema's field ids,
field order, record names and header metadata are compared against the Iceberg v2 spec
(Java's V2Metadata). Prints one line per file; exits 1 on the first mismatch.
--older also accepts files of older Java writers (data_file without field 143), for
checking third-party files; floe's own output must pass without it.
"""
import json
import sys
import warnings

import avro.datafile
import avro.io

warnings.filterwarnings("ignore")  # python3-avro warns about logicalType "map"

LIST_IDS = [500, 501, 502, 517, 515, 516, 503, 504, 505, 506, 512, 513, 514, 507]
LIST_OPTIONAL_TAIL = [519, 520]
SUMMARY_IDS = [509, 518, 510, 511]
ENTRY_IDS = [0, 1, 3, 4, 2]
DATA_FILE_IDS = [134, 100, 101, 102, 103, 104, 108, 109, 110, 137, 125, 128, 131, 132, 135, 140, 143]
MAPS = {108: (117, 118), 109: (119, 120), 110: (121, 122), 137: (138, 139), 125: (126, 127), 128: (129, 130)}
LISTS = {132: 133, 135: 136}


OLDER = False


class Mismatch(Exception):
    pass


def fail(path, msg):
    raise Mismatch(f"{path}: {msg}")


def ids_of(fields):
    return [f.get("field-id") for f in fields]


def unwrap(t):
    """The non-null branch of an optional type."""
    if isinstance(t, list):
        rest = [b for b in t if b != "null"]
        return rest[0] if len(rest) == 1 else t
    return t


def open_reader(path):
    f = open(path, "rb")
    r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
    schema = json.loads(r.meta["avro.schema"].decode())
    meta = {k: v.decode("utf-8", "replace") for k, v in r.meta.items()}
    return r, schema, meta


def check_list(path):
    r, schema, meta = open_reader(path)
    if schema.get("name") != "manifest_file":
        fail(path, f"record name {schema.get('name')!r}, want 'manifest_file'")
    ids = ids_of(schema["fields"])
    head, tail = ids[: len(LIST_IDS)], ids[len(LIST_IDS):]
    if head != LIST_IDS or tail != LIST_OPTIONAL_TAIL[: len(tail)]:
        fail(path, f"manifest_file field ids {ids}, want {LIST_IDS} + optional {LIST_OPTIONAL_TAIL}")
    parts = next(f for f in schema["fields"] if f["field-id"] == 507)
    arr = unwrap(parts["type"])
    if arr.get("element-id") != 508:
        fail(path, f"partitions element-id {arr.get('element-id')}, want 508")
    rec = arr["items"]
    if rec.get("name") != "r508":
        fail(path, f"field_summary record name {rec.get('name')!r}, want 'r508'")
    if ids_of(rec["fields"]) != SUMMARY_IDS:
        fail(path, f"field_summary ids {ids_of(rec['fields'])}, want {SUMMARY_IDS}")
    for key in ("snapshot-id", "parent-snapshot-id", "sequence-number", "format-version"):
        if key not in meta:
            fail(path, f"header metadata lacks {key!r}")
    if meta["format-version"] != "2":
        fail(path, f"format-version {meta['format-version']!r}, want '2'")
    n = 0
    for rec in r:
        n += 1
        if not isinstance(rec["manifest_path"], str) or rec["manifest_length"] <= 0:
            fail(path, f"record {n}: bad manifest_path/manifest_length {rec!r}")
        if rec["content"] not in (0, 1) or rec["sequence_number"] < rec["min_sequence_number"]:
            fail(path, f"record {n}: bad content or sequence numbers {rec!r}")
    r.close()
    print(f"OK manifest list {path}: {n} manifests")


def check_manifest(path):
    r, schema, meta = open_reader(path)
    if schema.get("name") != "manifest_entry":
        fail(path, f"record name {schema.get('name')!r}, want 'manifest_entry'")
    if ids_of(schema["fields"]) != ENTRY_IDS:
        fail(path, f"manifest_entry field ids {ids_of(schema['fields'])}, want {ENTRY_IDS}")
    df = schema["fields"][4]["type"]
    if df.get("name") != "r2":
        fail(path, f"data_file record name {df.get('name')!r}, want 'r2'")
    got = ids_of(df["fields"])
    if got != DATA_FILE_IDS and not (OLDER and got == DATA_FILE_IDS[:-1]):
        fail(path, f"data_file field ids {ids_of(df['fields'])}, want {DATA_FILE_IDS}")
    for f in df["fields"]:
        fid = f["field-id"]
        t = unwrap(f["type"])
        if fid in MAPS:
            k, v = MAPS[fid]
            items = t["items"]
            if t.get("logicalType") != "map" or items.get("name") != f"k{k}_v{v}" or ids_of(items["fields"]) != [k, v]:
                fail(path, f"map field {fid} is not k{k}_v{v} with ids [{k}, {v}]: {t}")
        if fid in LISTS and t.get("element-id") != LISTS[fid]:
            fail(path, f"list field {fid} element-id {t.get('element-id')}, want {LISTS[fid]}")
    for key in ("schema", "partition-spec", "partition-spec-id", "format-version", "content"):
        if key not in meta:
            fail(path, f"header metadata lacks {key!r}")
    part = df["fields"][3]["type"]
    if part.get("name") != "r102":
        fail(path, f"partition record name {part.get('name')!r}, want 'r102'")
    spec = json.loads(meta["partition-spec"])
    want = [p["field-id"] for p in spec]
    if ids_of(part["fields"]) != want:
        fail(path, f"partition field ids {ids_of(part['fields'])}, want {want} from partition-spec")
    json.loads(meta["schema"])
    n = 0
    for rec in r:
        n += 1
        d = rec["data_file"]
        if rec["status"] not in (0, 1, 2) or not isinstance(d["file_path"], str):
            fail(path, f"entry {n}: bad status or file_path {rec!r}")
        if d["record_count"] < 0 or d["file_size_in_bytes"] <= 0:
            fail(path, f"entry {n}: bad record_count/file_size_in_bytes")
        if set(d["partition"].keys()) != {f["name"] for f in part["fields"]}:
            fail(path, f"entry {n}: partition keys {sorted(d['partition'])}")
    r.close()
    print(f"OK manifest {path}: {n} entries")


def main(argv):
    global OLDER
    todo = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--manifest", "--list") and i + 1 < len(argv):
            todo.append((a[2:], argv[i + 1]))
            i += 2
            continue
        if a == "--older":
            OLDER = True
            i += 1
            continue
        if a.startswith("-"):
            print(__doc__, file=sys.stderr)
            return 2
        todo.append((None, a))
        i += 1
    if not todo:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        for kind, path in todo:
            if kind is None:
                _, schema, _ = open_reader(path)
                kind = "list" if schema.get("name") == "manifest_file" else "manifest"
            (check_list if kind == "list" else check_manifest)(path)
    except Mismatch as e:
        print(f"MISMATCH {e}", file=sys.stderr)
        return 1
    except Exception as e:  # unreadable file: python3-avro rejected it
        print(f"ERROR {path}: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
