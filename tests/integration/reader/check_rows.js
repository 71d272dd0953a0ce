// Checks that a set of Parquet files written by floe holds every line of the source
// files exactly once: read with DuckDB, ordered by (source, offset), each row's message
// must equal the line of the file at that byte offset (lines split on LF, one trailing
// CR removed, the last line counted even without its LF). arrow-rs (parquet-wasm), a
// second independent reader, must read the same (source, offset, message) rows.
// Usage: node check_rows.js FILELIST SOURCE...   (FILELIST: Parquet paths, one a line)
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');
const parquet = require('parquet-wasm');
const arrow = require('apache-arrow');

// The files' (source, offset, message) rows as arrow-rs reads them, in DuckDB's order.
function arrowRows(files) {
  const rows = [];
  for (const f of files) {
    const t = arrow.tableFromIPC(parquet.readParquet(new Uint8Array(fs.readFileSync(f)),
      { columns: ['source', 'offset', 'message'] }).intoIPCStream());
    for (const b of t.batches) {
      const s = b.getChild('source'), o = b.getChild('offset'), m = b.getChild('message');
      for (let i = 0; i < b.numRows; i++) rows.push([s.get(i), o.get(i), m.get(i)]);
    }
  }
  const key = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
  return rows.sort((a, b) => key(a[0], b[0]) || key(a[1], b[1]));
}

function splitLines(buf) {
  const lines = [];
  let start = 0;
  for (let i = 0; i <= buf.length; i++) {
    if (i === buf.length || buf[i] === 0x0a) {
      if (i === buf.length && start === buf.length) break;
      let end = i;
      if (end > start && buf[end - 1] === 0x0d) end--;
      lines.push({ offset: start, text: buf.slice(start, end).toString('utf8') });
      start = i + 1;
    }
  }
  return lines;
}

async function main() {
  const [listFile, ...sources] = process.argv.slice(2);
  const files = fs.readFileSync(listFile, 'utf8').split('\n').filter((l) => l.length > 0);
  if (files.length === 0) throw new Error('no data files listed');
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  const list = files.map((f) => `'${f.replace(/'/g, "''")}'`).join(',');
  const reader = await conn.runAndReadAll(
    `select source, "offset", message from read_parquet([${list}]) order by source, "offset"`);
  const rows = reader.getRows();
  let failures = 0;
  const other = arrowRows(files);
  const same = other.length === rows.length && rows.every((r, i) =>
    r[0] === other[i][0] && BigInt(r[1]) === BigInt(other[i][1]) && r[2] === other[i][2]);
  if (!same) {
    console.error(`arrow-rs reads ${other.length} rows that differ from DuckDB's ${rows.length}`);
    failures++;
  }
  const bySource = new Map();
  for (const [source, offset, message] of rows) {
    if (!bySource.has(source)) bySource.set(source, []);
    bySource.get(source).push([Number(offset), message]);
  }
  let total = 0;
  for (const src of sources) {
    const expected = splitLines(fs.readFileSync(src));
    const got = bySource.get(src) || [];
    bySource.delete(src);
    total += expected.length;
    if (got.length !== expected.length) {
      console.error(`${src}: ${got.length} rows in the table, ${expected.length} lines in the file`);
      failures++;
    }
    const n = Math.min(got.length, expected.length);
    for (let i = 0; i < n; i++) {
      if (got[i][0] !== expected[i].offset || got[i][1] !== expected[i].text) {
        console.error(`${src}: row ${i}: table has (${got[i][0]}, ${JSON.stringify(got[i][1]).slice(0, 200)}), ` +
          `file has (${expected[i].offset}, ${JSON.stringify(expected[i].text).slice(0, 200)})`);
        failures++;
        break;
      }
    }
  }
  for (const [src, got] of bySource) {
    console.error(`${src}: ${got.length} rows from a source that was not expected`);
    failures++;
  }
  console.log(`check_rows: ${rows.length} rows in ${files.length} files, ${total} lines in ${sources.length} sources`);
  console.log(`${sources.length - Math.min(failures, sources.length)} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => {
  console.error(`check_rows.js: ${e.message}`);
  process.exit(1);
});
