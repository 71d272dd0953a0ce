// DuckDB's side of the Parquet benchmark: loads the rows (from an uncompressed Parquet
// file, untimed) into a table, then times COPY ... TO parquet with one thread.
// Usage: node duck_copy.js IN.parquet OUT.parquet CODEC LEVEL ROW_GROUP_SIZE
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function main() {
  const [input, output, codec, level, rowGroup] = process.argv.slice(2);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  await c.run(`create table t as select * from read_parquet('${input}')`);
  const opts = [`FORMAT parquet`, `COMPRESSION ${codec}`, `ROW_GROUP_SIZE ${rowGroup}`];
  if (codec === 'zstd') opts.push(`COMPRESSION_LEVEL ${level}`);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await c.run(`copy t to '${output}' (${opts.join(', ')})`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  const cpu = (cu.user + cu.system) / 1e6;
  const rows = (await c.runAndReadAll('select count(*) from t')).getRows()[0][0];
  console.log(`rows=${rows} seconds=${secs.toFixed(3)} bytes=${fs.statSync(output).size} cpu=${cpu.toFixed(3)}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
