// Compares what floe's Parquet reader read from a file (the fuzz_pq_reader replay's
// FLOE_FUZZ_PQR_OUT dump: one JSON array a line, integers as strings, strings as
// upper-case hex, maps as [key, value] pairs, then {"result":N,"error":"..."}) with
// DuckDB's own reading of the same file, row by row in file order.
// Usage: node check_pq_reader.js FILE.parquet DUMP            the rows must be equal
//        node check_pq_reader.js FILE.parquet DUMP refuse WORD  floe must refuse the file
//                                                              as unsupported, naming WORD
const fs = require('fs');
const { DuckDBInstance } = require('@duckdb/node-api');

function fail(msg) {
  console.error(`check_pq_reader: ${msg}`);
  process.exit(1);
}

// The dump's form of one column, as a DuckDB expression.
function expr(name, type) {
  const c = `"${name.replace(/"/g, '""')}"`;
  if (type === 'TIMESTAMP WITH TIME ZONE') return `epoch_us(${c})::VARCHAR`;
  if (type === 'BIGINT' || type === 'INTEGER' || type === 'BOOLEAN') return `${c}::VARCHAR`;
  if (type === 'VARCHAR' || type === 'BLOB') return `hex(${c})`;
  if (type === 'DOUBLE' || type === 'FLOAT') return `printf('%.17g', ${c}::DOUBLE)`;
  if (type === 'DATE') return `(${c} - DATE '1970-01-01')::VARCHAR`;
  if (type === 'MAP(VARCHAR, VARCHAR)') return `list_transform(map_entries(${c}), x -> [hex(x.key), hex(x.value)])`;
  fail(`column ${name}: no dump form for DuckDB type ${type}`);
}

async function main() {
  const [file, dump, mode, word] = process.argv.slice(2);
  if (!file || !dump) fail('usage: check_pq_reader.js FILE DUMP [refuse WORD]');
  const lines = fs.readFileSync(dump, 'utf8').split('\n').filter((l) => l.length);
  const result = JSON.parse(lines.pop());
  if (mode === 'refuse') {
    if (result.result !== -4006) fail(`${file}: expected FLOE_EUNSUPPORTED, got ${JSON.stringify(result)}`);
    if (!result.error.includes(word)) fail(`${file}: the message does not name ${word}: ${result.error}`);
    console.log(`${file}: refused: ${result.error}`);
    return;
  }
  if (result.result !== 0) fail(`${file}: floe's reader failed: ${JSON.stringify(result)}`);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  await conn.run("SET TimeZone='UTC'");
  const src = `read_parquet('${file.replace(/'/g, "''")}')`;
  const cols = (await conn.runAndReadAll(`DESCRIBE SELECT * FROM ${src}`)).getRows();
  const sel = cols.map(([name, type]) => expr(name, type)).join(', ');
  const rows = (await conn.runAndReadAll(`SELECT json_array(${sel})::VARCHAR FROM ${src}`)).getRows();
  if (rows.length !== lines.length) fail(`${file}: DuckDB reads ${rows.length} rows, floe ${lines.length}`);
  for (let i = 0; i < rows.length; i++) {
    const want = JSON.stringify(JSON.parse(rows[i][0]));
    const got = JSON.stringify(JSON.parse(lines[i]));
    if (want !== got) fail(`${file}: row ${i} differs:\n  duckdb ${want}\n  floe   ${got}`);
  }
  console.log(`${file}: ${rows.length} rows equal`);
}

main().catch((e) => fail(e.message));
