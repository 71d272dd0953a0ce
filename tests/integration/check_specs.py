#!/usr/bin/python3
"""Checks that a table's manifests follow its partition specs, with python3-avro.

Usage: check_specs.py TABLE-DIR | METADATA.json
Reads the current metadata (version-hint.text, or the metadata file given), the current snapshot's manifest list and
every manifest in it. A manifest holds the files of one spec: its header's
partition-spec-id is the list's partition_spec_id for it, its partition-spec is that
spec's fields in the metadata, its partition struct is that spec's (field ids and
names), and each data file's path names that spec's partition fields. Prints one JSON
line: {"specs": [[id, [transform(source)...]]...], "default": id, "last_partition_id": n,
"manifests": {spec id: manifests}, "files": {spec id: files}, "records": {spec id: rows},
"sort_orders": [...], "default_sort_order": id, "sort_order_ids": [ids on data files],
"writers": {spec id: [data file name prefixes up to the first '-': the agent ids]}}.
Exits 1 on a mismatch.
"""
import json
import os
import sys
import warnings

import avro.datafile
import avro.io

warnings.filterwarnings("ignore")


def local(uri):
    return uri[len("file://"):] if uri.startswith("file://") else uri


def read(path):
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        meta = {k: v.decode("utf-8", "replace") for k, v in r.meta.items()}
        schema = json.loads(meta["avro.schema"])
        return schema, meta, list(r)


def main(table):
    path = local(table)
    if not path.endswith(".json"):
        md = os.path.join(path, "metadata")
        with open(os.path.join(md, "version-hint.text")) as f:
            path = os.path.join(md, f"v{f.read().strip()}.metadata.json")
    with open(path) as f:
        m = json.load(f)
    specs = {s["spec-id"]: s["fields"] for s in m["partition-specs"]}
    cur = m["current-snapshot-id"]
    snap = next(s for s in m["snapshots"] if s["snapshot-id"] == cur)
    _, _, lst = read(local(snap["manifest-list"]))
    out = {"manifests": {}, "files": {}, "records": {}, "sort_order_ids": [], "writers": {}}
    for e in lst:
        sid = e["partition_spec_id"]
        path = local(e["manifest_path"])
        schema, meta, entries = read(path)
        if int(meta["partition-spec-id"]) != sid:
            sys.exit(f"{path}: header spec {meta['partition-spec-id']}, list says {sid}")
        if sid not in specs:
            sys.exit(f"{path}: spec {sid} is not in the metadata")
        hdr = json.loads(meta["partition-spec"])
        if hdr != specs[sid]:
            sys.exit(f"{path}: header spec {hdr} is not spec {sid} {specs[sid]}")
        part = schema["fields"][4]["type"]["fields"][3]["type"]
        got = [(f["field-id"], f["name"]) for f in part["fields"]]
        want = [(f["field-id"], f["name"]) for f in specs[sid]]
        if got != want:
            sys.exit(f"{path}: partition struct {got}, spec {sid} has {want}")
        key = str(sid)
        out["manifests"][key] = out["manifests"].get(key, 0) + 1
        for en in entries:
            if en["status"] == 2:
                continue
            d = en["data_file"]
            if list(d["partition"].keys()) != [n for _, n in want]:
                sys.exit(f"{path}: file partition {d['partition']}")
            for _, n in want:
                if f"/{n}=" not in d["file_path"]:
                    sys.exit(f"{path}: {d['file_path']} does not name {n}")
            out["files"][key] = out["files"].get(key, 0) + 1
            out["records"][key] = out["records"].get(key, 0) + d["record_count"]
            out["sort_order_ids"].append(d.get("sort_order_id"))
            writer = os.path.basename(d["file_path"]).split("-")[0]
            out["writers"].setdefault(key, [])
            if writer not in out["writers"][key]:
                out["writers"][key] = sorted(out["writers"][key] + [writer])
    out["specs"] = [[i, [f"{f['transform']}({f['source-id']})" for f in specs[i]]] for i in sorted(specs)]
    out["field_ids"] = [[f["field-id"] for f in specs[i]] for i in sorted(specs)]
    out["default"] = m["default-spec-id"]
    out["last_partition_id"] = m["last-partition-id"]
    out["sort_orders"] = [[o["order-id"], [f"{f['transform']}({f['source-id']}) {f['direction']}"
                                           for f in o["fields"]]] for o in m["sort-orders"]]
    out["default_sort_order"] = m["default-sort-order-id"]
    print(json.dumps(out, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
