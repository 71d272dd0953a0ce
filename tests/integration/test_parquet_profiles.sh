#!/usr/bin/env bash
# Parquet profiles and options against DuckDB: the benchmark's writer (tests/bench/
# bench_parquet) writes the same generated log rows in every codec x profile, with bloom
# filters on host and app, small pages and a memory budget (so there are several pages
# and row groups). DuckDB must read the same rows as from the uncompressed default file,
# parquet_metadata must show the codec, the encodings and the bloom filters, the bloom
# probe must find a present host and rule out an absent one, and the page index (which
# DuckDB does not expose) is checked by pq_pageindex.py and, with the statistics and
# bloom filters against the rows, by hyparquet (check_pq_index.mjs).
source "$(dirname "$0")/lib.sh"
BENCH=${BENCH:-${FLOE_BUILD:-$(dirname "$FLOE_BIN")}/tests/bench_parquet}
[ -x "$BENCH" ] || { echo "missing $BENCH (build the bench_parquet target)"; exit 1; }
ROWS=${ROWS:-40000}
write() { # write OUT CODEC [options]
	local out=$1 codec=$2
	shift 2
	"$BENCH" "$ROWS" "$codec" "$out" --samples "$FLOE_SRC/tests/data/loghub" "$@" >/dev/null
}
fingerprint() {
	duck "select count(*), sum(hash(message)), min(ts), max(ts), sum(hash(ts)),
		sum(hash(received_at)), sum(hash(host)), sum(hash(source)), sum(hash(\"offset\")),
		sum(hash(severity)), sum(hash(app)), count(facility), count(attrs)
		from read_parquet('$1')"
}
encodings() { # encodings FILE COLUMN: the distinct encodings lists of that column
	duck "select distinct encodings from parquet_metadata('$1') where path_in_schema = '$2'"
}

write "$T/ref.parquet" uncompressed
fingerprint "$T/ref.parquet" >"$T/ref.fp"
check "reference: DuckDB reads $ROWS rows" grep -q "^\[\"$ROWS\"," "$T/ref.fp"

for codec in zstd lz4_raw uncompressed; do
	for profile in default compact; do
		f="$T/$codec-$profile.parquet"
		k="$codec/$profile"
		# A budget that makes a few row groups of some thousand rows each.
		write "$f" "$codec" --profile "$profile" --bloom host,app --page-size 65536 \
			--budget 65536
		fingerprint "$f" >"$T/fp"
		check "$k: the same rows as the reference" cmp -s "$T/fp" "$T/ref.fp"
		duck "select count(distinct row_group_id) > 1, string_agg(distinct compression, ',')
			from parquet_metadata('$f')" >"$T/meta"
		want=$(echo "$codec" | tr a-z A-Z)
		check "$k: several row groups, all $want" grep -qx "\[true,\"$want\"\]" "$T/meta"
		encodings "$f" ts >"$T/ts"
		encodings "$f" message >"$T/msg"
		encodings "$f" host >"$T/host"
		if [ "$profile" = compact ]; then
			check "$k: ts is DELTA_BINARY_PACKED" grep -q 'DELTA_BINARY_PACKED' "$T/ts"
			check "$k: message is delta-encoded" \
				grep -qx '\["RLE, DELTA_\(LENGTH_\)\?BYTE_ARRAY"\]' "$T/msg"
			duck "select count(*) from read_parquet('$f')" >/dev/null
		else
			check "$k: ts is PLAIN" bash -c "grep -q PLAIN '$T/ts' && ! grep -q DELTA '$T/ts'"
			check "$k: message is PLAIN" grep -qx '\["PLAIN, RLE"\]' "$T/msg"
		fi
		check "$k: host is dictionary-encoded" grep -q RLE_DICTIONARY "$T/host"
		duck "select path_in_schema, bool_and(bloom_filter_offset is not null),
			bool_and(bloom_filter_length > 0) from parquet_metadata('$f')
			where path_in_schema in ('host', 'app', 'message') group by 1 order by 1" >"$T/bloom"
		check "$k: bloom filters on host and app only" diff -u - "$T/bloom" <<'JSON'
["app",true,true]
["host",true,true]
["message",false,null]
JSON
		duck "select bool_or(bloom_filter_excludes) from parquet_bloom_probe('$f', 'host', 'edge-03')" >"$T/p1"
		duck "select bool_and(bloom_filter_excludes) from parquet_bloom_probe('$f', 'host', 'edge-99')" >"$T/p2"
		duck "select bool_or(bloom_filter_excludes) from parquet_bloom_probe('$f', 'app', 'nginx')" >"$T/p3"
		check "$k: bloom probe finds host edge-03 and app nginx" \
			bash -c "grep -qx '\[false\]' '$T/p1' && grep -qx '\[false\]' '$T/p3'"
		check "$k: bloom probe rules out host edge-99" grep -qx '\[true\]' "$T/p2"
		check "$k: page index covers every data page" python3 \
			"$FLOE_SRC/tests/integration/pq_pageindex.py" "$f"
		check "$k: hyparquet finds the statistics, page index and bloom filters true" \
			node "$READER/check_pq_index.mjs" "$f"
	done
done

# Page index off; the ZSTD level and page size options; the defaults without options.
f="$T/noindex.parquet"
write "$f" zstd --profile compact --no-page-index
check "no-page-index: no chunk has a page index" python3 \
	"$FLOE_SRC/tests/integration/pq_pageindex.py" --none "$f"
fingerprint "$f" >"$T/fp"
check "no-page-index: the same rows" cmp -s "$T/fp" "$T/ref.fp"
write "$T/l1.parquet" zstd --level 1 --page-size 16384
write "$T/l19.parquet" zstd --level 19 --page-size 16384
check "zstd level 19 writes a smaller file than level 1" \
	test "$(stat -c %s "$T/l19.parquet")" -lt "$(stat -c %s "$T/l1.parquet")"
fingerprint "$T/l19.parquet" >"$T/fp"
check "zstd level 19: the same rows" cmp -s "$T/fp" "$T/ref.fp"
duck "select count(*) from parquet_metadata('$T/l1.parquet') where path_in_schema = 'message'" >"$T/n1"
duck "select count(*) from parquet_metadata('$T/zstd-default.parquet') where path_in_schema = 'message'" >/dev/null
check "a small page size makes many pages" python3 -c "
import subprocess, sys
out = subprocess.run(['python3', '$FLOE_SRC/tests/integration/pq_pageindex.py', '$T/l1.parquet'],
    capture_output=True, text=True).stdout
sys.exit(0 if int(out.split()[3]) > 100 else 1)"
finish
