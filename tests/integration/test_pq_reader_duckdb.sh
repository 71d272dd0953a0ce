#!/usr/bin/env bash
# floe's Parquet reader on files DuckDB writes: the logs table's schema (timestamps with
# time zone, strings with empty and non-ASCII values, nulls, maps that are null, empty
# or hold null values) written by DuckDB's COPY in ZSTD (format v1 and v2, whose pages
# are DATA_PAGE_V2 with DELTA_BINARY_PACKED and DELTA_LENGTH_BYTE_ARRAY), small row
# groups, LZ4 and uncompressed: the reader must give every row DuckDB reads, equal and in
# order. The typed columns' kinds too (FLOAT, DOUBLE with both zeros and infinities,
# BOOLEAN, DATE before and after 1970, BLOB), plain and dictionary-encoded, v1 and v2
# pages (whose booleans are RLE). What floe does not read (Snappy, GZIP, LIST columns)
# must be refused as unsupported, naming it. floe's own files (the fuzz target's seed corpus,
# every codec x profile) are compared with DuckDB's reading of them too. The reader is
# driven through the fuzz target's replay driver (FLOE_FUZZ_PQR_OUT dumps the rows).
source "$(dirname "$0")/lib.sh"
REPLAY=${FLOE_BUILD:-$(dirname "$FLOE_BIN")}/tests/fuzz_pq_reader_replay
[ -x "$REPLAY" ] || { echo "missing $REPLAY (build the fuzz_pq_reader_replay target)"; exit 1; }
ROWS=${ROWS:-20000}

cat >"$T/table.sql" <<SQL
CREATE TABLE t AS SELECT
  to_timestamp(0) + to_microseconds(1764633600000000 + i * 1000 + (hash(i) % 1000)::BIGINT) AS ts,
  to_timestamp(0) + to_microseconds(1764633600000000 + i * 1000 + 2000) AS received_at,
  ['edge-01', 'edge-02', 'edge-03', ''][(i % 4) + 1] AS host,
  '/var/log/app' || (i % 3) || '.log' AS source,
  (CASE WHEN i % 9 = 0 THEN NULL ELSE i * 117 END)::BIGINT AS "offset",
  (CASE WHEN i % 4 = 0 THEN NULL ELSE i % 24 END)::INTEGER AS facility,
  (CASE WHEN i % 5 = 1 THEN NULL WHEN i % 17 = 0 THEN -2147483648 ELSE i % 8 END)::INTEGER AS severity,
  CASE WHEN i % 6 = 0 THEN NULL ELSE ['sshd', 'kernel', 'nginx', ''][(i % 4) + 1] END AS app,
  CASE WHEN i % 3 = 0 THEN NULL ELSE (hash(i) % 70000)::VARCHAR END AS proc_id,
  CASE WHEN i % 10 <> 0 THEN NULL ELSE 'ID' || (i % 47) END AS msg_id,
  CASE WHEN i % 101 = 0 THEN '' WHEN i % 103 = 0 THEN repeat('héllo ✓ ', 300)
       ELSE 'session ' || hash(i) || ' opened for user u' || (i % 97) END AS message,
  CASE WHEN i % 7 = 0 THEN NULL WHEN i % 5 = 0 THEN MAP([]::VARCHAR[], []::VARCHAR[])
       ELSE MAP(['k' || (i % 3), 'empty', 'nullv'], ['v' || i, '', NULL::VARCHAR]) END AS attrs
FROM range($ROWS) t(i)
SQL
cat >"$T/typed.sql" <<SQL
CREATE TABLE typed AS SELECT
  CASE WHEN i % 7 = 0 THEN NULL ELSE ((hash(i) % 2001)::INTEGER - 1000)::FLOAT / 8 END AS ratio,
  CASE WHEN i % 11 = 0 THEN NULL WHEN i % 89 = 0 THEN '-0.0'::DOUBLE WHEN i % 97 = 0 THEN 'inf'::DOUBLE
       WHEN i % 3 = 0 THEN (i % 5)::DOUBLE * 0.5 ELSE (hash(i) % 1000000)::DOUBLE / 3 - 1e5 END AS score,
  CASE WHEN i % 5 = 0 THEN NULL ELSE i % 3 = 0 END AS ok,
  CASE WHEN i % 13 = 0 THEN NULL ELSE DATE '1970-01-01' + ((i * 37) % 40000 - 10000)::INTEGER END AS day,
  CASE WHEN i % 4 = 0 THEN NULL WHEN i % 9 = 0 THEN ''::BLOB
       ELSE ('\x' || lpad(format('{:x}', (hash(i) % 65536)::BIGINT), 4, '0') || '\x80\xFF')::BLOB END AS blob
FROM range($ROWS) t(i)
SQL
copy() { echo "COPY $1 TO '$T/$2.parquet' (FORMAT parquet, $3)"; }
check "DuckDB writes the files" duck "SET TimeZone='UTC'" "$(cat "$T/table.sql")" \
	"$(copy t zstd 'COMPRESSION zstd')" \
	"$(copy t zstd_v2 'COMPRESSION zstd, PARQUET_VERSION V2')" \
	"$(copy t zstd_small_row_groups 'COMPRESSION zstd, ROW_GROUP_SIZE 1000')" \
	"$(copy t lz4 'COMPRESSION lz4')" \
	"$(copy t uncompressed 'COMPRESSION uncompressed')" \
	"$(copy t snappy 'COMPRESSION snappy')" \
	"$(copy t gzip 'COMPRESSION gzip')" \
	"$(cat "$T/typed.sql")" \
	"$(copy typed typed 'COMPRESSION zstd')" \
	"$(copy typed typed_v2 'COMPRESSION zstd, PARQUET_VERSION V2')" \
	"$(copy typed typed_small_row_groups 'COMPRESSION uncompressed, ROW_GROUP_SIZE 100')" \
	"$(copy "(SELECT [1, 2] AS l)" list 'COMPRESSION zstd')" \
	"SELECT 1"

# read FILE: the reader's rows and result in FILE.dump.
read_file() { FLOE_FUZZ_PQR_OUT="$1.dump" "$REPLAY" "$1" >/dev/null; }

for f in zstd zstd_v2 zstd_small_row_groups lz4 uncompressed typed typed_v2 typed_small_row_groups; do
	read_file "$T/$f.parquet"
	check "DuckDB $f: the reader gives DuckDB's $ROWS rows" \
		node "$READER/check_pq_reader.js" "$T/$f.parquet" "$T/$f.parquet.dump"
done
check "DuckDB v2 pages use the delta encodings" bash -c "node '$READER/duck.js' \
	\"select distinct encodings from parquet_metadata('$T/zstd_v2.parquet')\" | grep -q DELTA_BINARY_PACKED"
for f in snappy:SNAPPY gzip:GZIP list:nested; do
	read_file "$T/${f%%:*}.parquet"
	check "DuckDB ${f%%:*}: refused, naming ${f##*:}" \
		node "$READER/check_pq_reader.js" "$T/${f%%:*}.parquet" "$T/${f%%:*}.parquet.dump" \
		refuse "${f##*:}"
done

for f in "$FLOE_SRC"/tests/fuzz/corpus/fuzz_pq_reader/{uncompressed,zstd,lz4_raw}_{default,compact}; do
	cp "$f" "$T/floe_$(basename "$f").parquet"
	read_file "$T/floe_$(basename "$f").parquet"
	check "floe $(basename "$f"): the reader gives DuckDB's rows" \
		node "$READER/check_pq_reader.js" "$T/floe_$(basename "$f").parquet" \
		"$T/floe_$(basename "$f").parquet.dump"
done
finish
