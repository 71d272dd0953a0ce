// DuckDB's side of the aggregation benchmark: loads the events bench_aggregate wrote
// (CSV, untimed) into a table, then times the same GROUP BY with one thread: one-minute
// windows by three keys, count, sum, approx_quantile (0.5, 0.9, 0.99) and
// approx_count_distinct. With "typed", the table's keys a and b are INTEGER and u BIGINT
// (bench_aggregate's typed events), and the same GROUP BY is also timed exact, with
// quantile_disc and count(DISTINCT): its CPU seconds are printed as exact_cpu.
// Usage: node duck_aggregate.js EVENTS.csv [typed]
const path = require('path');
const { DuckDBInstance } = require(path.join(__dirname, '../integration/reader/node_modules/@duckdb/node-api'));

async function timed(c, q) {
  const t0 = process.hrtime.bigint();
  const c0 = process.cpuUsage();
  await c.run(q);
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  const cu = process.cpuUsage(c0);
  return { secs, cpu: (cu.user + cu.system) / 1e6 };
}

async function main() {
  const [input, mode] = process.argv.slice(2);
  const typed = mode === 'typed';
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  const kt = typed ? 'INTEGER' : 'VARCHAR';
  await c.run(`create table t as select * from read_csv('${input}', header = true,
    columns = {'ts': 'BIGINT', 'a': '${kt}', 'b': '${kt}', 'c': 'VARCHAR', 'v': 'BIGINT',
    'u': '${typed ? 'BIGINT' : 'VARCHAR'}'})`);
  const approx = await timed(c, `create table r as select ts // 60000000 as w, a, b, c,
    count(*) n, sum(v) s, approx_quantile(v, [0.5, 0.9, 0.99]) q, approx_count_distinct(u) d
    from t group by all`);
  let exact = '';
  if (typed) {
    const e = await timed(c, `create table x as select ts // 60000000 as w, a, b, c,
      count(*) n, sum(v) s, quantile_disc(v, [0.5, 0.9, 0.99]) q, count(distinct u) d
      from t group by all`);
    exact = ` exact_seconds=${e.secs.toFixed(3)} exact_cpu=${e.cpu.toFixed(3)}`;
  }
  const events = (await c.runAndReadAll('select count(*) from t')).getRows()[0][0];
  const rows = (await c.runAndReadAll('select count(*) from r')).getRows()[0][0];
  const rss = (process.resourceUsage().maxRSS / 1024).toFixed(1);
  console.log(`events=${events} rows=${rows} seconds=${approx.secs.toFixed(3)} cpu=${approx.cpu.toFixed(3)}${exact} peak_rss_mib=${rss}`);
}

main().catch((e) => { console.error(e.message); process.exit(1); });
