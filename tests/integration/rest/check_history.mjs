// An independent REST client (iceberg-js) loads a table that floe maintain compacted
// through the test catalog: its history is one line (each snapshot's parent is the one
// before it, and the main branch is the last), at least MIN_REPLACES of its snapshots are
// replaces, and the current snapshot's total-records is ROWS.
//   node check_history.mjs BASE_URL NAMESPACE TABLE MIN_REPLACES ROWS
// (a catalog without OAuth2: no token.) Ids are compared as JavaScript numbers: rounded
// alike on both sides, so a broken link still shows.
import { IcebergRestCatalog } from 'iceberg-js';

const [base, ns, name, minReplaces, rows] = process.argv.slice(2);
const fail = (m) => { console.error(`FAIL: ${m}`); process.exit(1); };

const cat = new IcebergRestCatalog({ baseUrl: base, warehouse: 'w' });
const t = await cat.loadTableResult({ namespace: ns.split('.'), name });
const m = t.metadata;
const s = [...m.snapshots].sort((a, b) => a['sequence-number'] - b['sequence-number']);
for (let i = 1; i < s.length; i++)
  if (s[i]['parent-snapshot-id'] !== s[i - 1]['snapshot-id']) fail(`snapshot ${i} does not follow snapshot ${i - 1}`);
if (!m.refs.main || m.refs.main['snapshot-id'] !== s[s.length - 1]['snapshot-id']) fail('main is not the last snapshot');
const ops = s.map((x) => x.summary.operation);
const replaces = ops.filter((o) => o === 'replace').length;
if (replaces < Number(minReplaces)) fail(`${replaces} replace snapshots, expected at least ${minReplaces}`);
const last = s[s.length - 1];
if (last.summary['total-records'] !== rows) fail(`total-records ${last.summary['total-records']}, expected ${rows}`);
console.log(`ok: ${s.length} snapshots in one line (${replaces} replaces), ${rows} rows`);
