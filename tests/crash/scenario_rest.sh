# The REST scenario of the power-cut tests (sourced after scenario_tail.sh): the tail
# cycle through the test REST catalog (tests/integration/rest/server.js), the table's
# location in the local warehouse. floe's files there (data files, manifests, manifest
# lists) are cut; the catalog's (catalog.json, the metadata files it writes beside
# floe's) are another machine's disk and are not. The catalog journals every file it
# writes while the cycle is recorded, each placed among floe's recorded operations
# (store_journal.py); explore then lays, over each crash state of the local disk, every
# catalog state the cut allows (crash_remote) and has the catalog read it again.

# rest_crash_record DIR: starts the catalog, records the tail cycle through it.
rest_crash_record() {
	CRASH_JOURNAL=$1/journal
	REST_CAT=$1/cat
	# The table's directories are the catalog's (it makes them when it creates the
	# table): made here, they are in the image the states start from.
	mkdir -p "$1/disk/wh/crash/logs/metadata"
	start_rest_catalog "$1/cat" --warehouse "file://$1/disk/wh" --journal "$CRASH_JOURNAL" \
		--record "$1/rec.log" || { echo "the catalog did not start"; return 1; }
	CRASH_LAKE="lake:
  catalog: { type: rest, uri: \"$REST_URL\", namespace: crash }"
	tail_record "$1" || return 1
	# The restarts on the crash states change the catalog but are not journaled.
	curl -sf -X POST -H 'content-type: application/json' -d '{}' "$REST_URL/_test/journal" >/dev/null ||
		{ echo "the catalog's journal could not be stopped"; return 1; }
	[ -s "$CRASH_JOURNAL/index" ] || { echo "the catalog journaled no change"; return 1; }
	echo "the catalog journaled $(wc -l <"$CRASH_JOURNAL/index") files"
}

# crash_remote M: the catalog's files as its first M journaled writes left them (over the
# crash state crashgen just made), read again by the catalog.
crash_remote() {
	rm -f "$REST_CAT/catalog.json"
	/usr/bin/python3 "$FLOE_SRC/tests/crash/store_journal.py" image "$CRASH_JOURNAL" "$1" / &&
		curl -sf -X POST -H 'content-type: application/json' -d '{}' "$REST_URL/_test/reload" >/dev/null
}

# table_dir TABLE: the table's directory and, after "=", its current metadata file as the
# catalog says (for check_table.py); table_files TABLE: its live files, through the catalog.
table_dir() {
	/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["tables"].get("crash\x00" + sys.argv[2])
if t:
    loc = t["loc"].removeprefix("file://")
    print(loc.split("/metadata/")[0] + "=" + loc)' "$REST_CAT/catalog.json" "$1"
}
table_files() { "$FLOE_BIN" inspect -c "$d/floe.yaml" | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p'; }
