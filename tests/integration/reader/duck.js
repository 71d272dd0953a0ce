// Runs SQL statements in an in-memory DuckDB and prints the last one's rows, one JSON
// array per line (BigInts as strings). floe's integration tests use it as an independent
// Parquet reader. Usage: node duck.js "SQL" ["SQL" ...]
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const sql = process.argv.slice(2);
  if (sql.length === 0) {
    console.error('usage: node duck.js "SQL" ["SQL" ...]');
    process.exit(2);
  }
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  let rows = [];
  for (const q of sql) {
    const reader = await conn.runAndReadAll(q);
    rows = reader.getRows();
  }
  const out = rows.map((r) => JSON.stringify(r, (_, v) => (typeof v === 'bigint' ? v.toString() : v)));
  process.stdout.write(out.join('\n') + (out.length ? '\n' : ''));
}

main().catch((e) => {
  console.error(`duck.js: ${e.message}`);
  process.exit(1);
});
