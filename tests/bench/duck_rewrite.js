// DuckDB's side of the Parquet read benchmark: times, with one thread, the rewrite
// compaction makes: COPY (SELECT * FROM read_parquet(IN)) TO OUT (FORMAT parquet).
// Usage: node duck_rewrite.js IN.parquet OUT.parquet CODEC LEVEL ROW_GROUP_SIZE
// (IN as @LIST: the files named in LIST, one a line, into one OUT: a compaction.)
// Prints rows, seconds, bytes, CPU seconds and the process's peak RSS (node included).
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function main() {
  const [input, output, codec, level, rowGroup] = process.argv.slice(2);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  const opts = [`FORMAT parquet`, `COMPRESSION ${codec}`, `ROW_GROUP_SIZE ${rowGroup}`];
  if (codec === 'zstd') opts.push(`COMPRESSION_LEVEL ${level}`);
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  const files = input.startsWith('@')
    ? fs.readFileSync(input.slice(1), 'utf8').split('\n').filter((l) => l).map((f) => `'${f}'`).join(',')
    : `'${input}'`;
  await c.run(`copy (select * from read_parquet([${files}])) to '${output}' (${opts.join(', ')})`);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  const cpu = (cu.user + cu.system) / 1e6;
  const rows = (await c.runAndReadAll(`select count(*) from read_parquet('${output}')`)).getRows()[0][0];
  const rss = process.resourceUsage().maxRSS;
  console.log(`rows=${rows} seconds=${secs.toFixed(3)} bytes=${fs.statSync(output).size} cpu=${cpu.toFixed(3)} rss_kib=${rss}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
