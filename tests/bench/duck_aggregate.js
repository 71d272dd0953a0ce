// DuckDB's side of the aggregation benchmark: loads the events bench_aggregate wrote
// (CSV, untimed) into a table, then times the same GROUP BY with one thread: one-minute
// windows by three keys, count, sum, approx_quantile (0.5, 0.9, 0.99) and
// approx_count_distinct.
// Usage: node duck_aggregate.js EVENTS.csv
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function main() {
  const [input] = process.argv.slice(2);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  await c.run(`create table t as select * from read_csv('${input}', header = true,
    columns = {'ts': 'BIGINT', 'a': 'VARCHAR', 'b': 'VARCHAR', 'c': 'VARCHAR', 'v': 'BIGINT', 'u': 'VARCHAR'})`);
  const q = `create table r as select ts // 60000000 as w, a, b, c, count(*) n, sum(v) s,
    approx_quantile(v, [0.5, 0.9, 0.99]) q, approx_count_distinct(u) d from t group by all`;
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await c.run(q);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  const cpu = (cu.user + cu.system) / 1e6;
  const events = (await c.runAndReadAll('select count(*) from t')).getRows()[0][0];
  const rows = (await c.runAndReadAll('select count(*) from r')).getRows()[0][0];
  const rss = (process.resourceUsage().maxRSS / 1024).toFixed(1);
  console.log(`events=${events} rows=${rows} seconds=${secs.toFixed(3)} cpu=${cpu.toFixed(3)} peak_rss_mib=${rss}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
