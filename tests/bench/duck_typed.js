// DuckDB's side of the typed-columns benchmark: times one selective filter over a
// table's Parquet files, on the typed column and on the same field in attrs, with one
// thread, best of five runs each (the files are read warm, as a dashboard's would be).
// Usage: node duck_typed.js 'GLOB-TYPED' 'GLOB-MAP'
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function best(c, q) {
  let min = Infinity, rows = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = process.hrtime.bigint();
    rows = (await c.runAndReadAll(q)).getRows()[0][0];
    min = Math.min(min, Number(process.hrtime.bigint() - t0) / 1e9);
  }
  return { min, rows };
}

async function main() {
  const [typed, map] = process.argv.slice(2);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  const a = await best(c, `select count(*) from read_parquet('${typed}') where status >= 500`);
  const b = await best(c, `select count(*) from read_parquet('${map}') where cast(attrs['status'] as int) >= 500`);
  console.log(`typed_s=${a.min.toFixed(4)} typed_rows=${a.rows} map_s=${b.min.toFixed(4)} map_rows=${b.rows}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
