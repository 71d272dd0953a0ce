// Checks that a set of Parquet files written by floe holds every line of the source
// files exactly once: read with DuckDB, ordered by (source, offset), each row's message
// must equal the line of the file at that byte offset (lines split on LF, one trailing
// CR removed, the last line counted even without its LF).
// Usage: node check_rows.js FILELIST SOURCE...   (FILELIST: Parquet paths, one a line)
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

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
  const bySource = new Map();
  for (const [source, offset, message] of rows) {
    if (!bySource.has(source)) bySource.set(source, []);
    bySource.get(source).push([Number(offset), message]);
  }
  let failures = 0;
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
