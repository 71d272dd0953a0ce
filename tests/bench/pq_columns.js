// Bytes per column of a set of Parquet files, from their footers (DuckDB's
// parquet_metadata): for each leaf column, the compressed and uncompressed bytes of its
// chunks summed over the files, per row, and the encodings used; then the footers' own
// bytes. It says where a table's bytes go, so that a size target is met by removing what
// is duplicated or badly encoded, not by guessing.
// Usage: node pq_columns.js 'GLOB' [ROWS]   (ROWS: divide by this, default the files' rows)
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function main() {
  const [glob, rowsArg] = process.argv.slice(2);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  const g = glob.replace(/'/g, "''");
  const rows = rowsArg ? Number(rowsArg)
    : Number((await c.runAndReadAll(`select sum(num_rows) from parquet_file_metadata('${g}')`)).getRows()[0][0]);
  const cols = (await c.runAndReadAll(
    `select path_in_schema, sum(total_compressed_size)::BIGINT, sum(total_uncompressed_size)::BIGINT,
            string_agg(distinct encodings, ' | '), min(column_id)
       from parquet_metadata('${g}') group by path_in_schema order by min(column_id)`)).getRows();
  const files = (await c.runAndReadAll(
    `select count(*), sum(footer_size)::BIGINT from parquet_file_metadata('${g}')`)).getRows()[0];
  let total = 0;
  console.log(`${'column'.padEnd(22)} ${'bytes'.padStart(12)} ${'B/row'.padStart(8)} ${'raw B/row'.padStart(10)}  encodings`);
  for (const [name, comp, raw, enc] of cols) {
    total += Number(comp);
    console.log(`${String(name).padEnd(22)} ${String(comp).padStart(12)} ${(Number(comp) / rows).toFixed(2).padStart(8)} ` +
      `${(Number(raw) / rows).toFixed(2).padStart(10)}  ${enc}`);
  }
  const footer = Number(files[1]);
  console.log(`${'footers'.padEnd(22)} ${String(footer).padStart(12)} ${(footer / rows).toFixed(2).padStart(8)}  (${files[0]} files)`);
  console.log(`${'total'.padEnd(22)} ${String(total + footer).padStart(12)} ${((total + footer) / rows).toFixed(2).padStart(8)}  (${rows} rows)`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
