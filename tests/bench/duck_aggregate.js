// DuckDB's side of the aggregation benchmark: loads the events bench_aggregate wrote
// (CSV, untimed) into a table, then times the same GROUP BY with one thread: one-minute
// windows by three keys, count, sum, approx_quantile (0.5, 0.9, 0.99) and
// approx_count_distinct. With "typed", the table's keys a and b are INTEGER and u BIGINT
// (bench_aggregate's typed events), and the same GROUP BY is also timed exact, with
// quantile_disc and count(DISTINCT): its CPU seconds are printed as exact_cpu.
// With RESULTS (typed only: LABEL=FILE[,LABEL=FILE...], the rows bench_aggregate wrote),
// the sketches' errors against the exact answer are printed, one line each for DuckDB's
// approx and for every floe run: distinct's and the quantiles' relative error over the
// groups (root mean square and largest), and the rows whose count or sum differ from the
// exact ones (there should be none).
// Usage: node duck_aggregate.js EVENTS.csv [typed [RESULTS]]
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
  const [input, mode, floeRuns] = process.argv.slice(2);
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
  if (typed && floeRuns) {
    await c.run(`create table ra as select w, a, b, c, n, s, q[1] q50, q[2] q90, q[3] q99, d from r`);
    console.log(await errors(c, 'duckdb-approx', 'ra'));
    for (const run of floeRuns.split(',')) {
      const [label, file] = run.split('=');
      await c.run(`create or replace table f as select * from read_csv('${file}', header = false,
        columns = {'w': 'BIGINT', 'a': 'INTEGER', 'b': 'INTEGER', 'c': 'VARCHAR', 'n': 'BIGINT',
        's': 'DOUBLE', 'q50': 'DOUBLE', 'q90': 'DOUBLE', 'q99': 'DOUBLE', 'd': 'BIGINT'})`);
      console.log(await errors(c, label, 'f'));
    }
  }
}

// One line of errors of table t (w, a, b, c, n, s, q50, q90, q99, d) against the exact x.
async function errors(c, label, t) {
  const pct = (v) => (100 * Number(v)).toFixed(2);
  const row = (await c.runAndReadAll(`with j as (select t.*, x.n xn, x.s xs, x.d xd,
      x.q[1] x50, x.q[2] x90, x.q[3] x99 from ${t} t join x using (w, a, b, c)),
    e as (select *, abs(d - xd) / xd ed, abs(q50 - x50) / x50 e50, abs(q90 - x90) / x90 e90,
      abs(q99 - x99) / x99 e99 from j)
    select count(*), sqrt(avg(ed * ed)), max(ed),
      sqrt(avg((e50 * e50 + e90 * e90 + e99 * e99) / 3)), greatest(max(e50), max(e90), max(e99)),
      count(*) filter (where n <> xn or abs(s - xs) > 1e-9 * abs(xs)), avg(xd)
    from e`)).getRows()[0];
  return `error ${label}: ${row[0]} groups (${Number(row[6]).toFixed(0)} distinct values each on average):` +
    ` distinct rms=${pct(row[1])}% max=${pct(row[2])}%; quantiles rms=${pct(row[3])}%` +
    ` max=${pct(row[4])}%; count or sum differing: ${row[5]}`;
}

main().catch((e) => { console.error(e.message); process.exit(1); });
