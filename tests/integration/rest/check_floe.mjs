// An independent REST client (iceberg-js) reads the table floe committed to through the
// test catalog: its snapshots, in one line of history, carry floe's summary, and its
// schema is floe's logs schema.
//   node check_floe.mjs BASE_URL CLIENT_ID CLIENT_SECRET NAMESPACE TABLE SNAPSHOTS ROWS
// Snapshot ids are compared through their floe.commit-seq: JavaScript numbers cannot hold
// every 64-bit id exactly.
import { IcebergRestCatalog } from 'iceberg-js';

const [base, clientId, secret, ns, name, snapshots, rows] = process.argv.slice(2);
const fail = (m) => { console.error(`FAIL: ${m}`); process.exit(1); };

const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'catalog' });
const tok = await (await fetch(`${base}/v1/oauth/tokens`, { method: 'POST', body: form })).json();
const cat = new IcebergRestCatalog({ baseUrl: base, warehouse: 'w', auth: { type: 'bearer', token: tok.access_token } });
const t = await cat.loadTableResult({ namespace: ns.split('.'), name });
const m = t.metadata;
if (m.snapshots.length !== Number(snapshots)) fail(`${m.snapshots.length} snapshots, expected ${snapshots}`);
const seqs = m.snapshots.map((s) => Number(s.summary['floe.commit-seq']));
if (seqs.some((s, i) => i && s <= seqs[i - 1])) fail(`commit-seqs not increasing: ${seqs}`);
for (const s of m.snapshots) {
  if (s.summary.operation !== 'append' || !s.summary['floe.agent-id'] || !s.summary['floe.installation-id']) fail(`snapshot without floe's summary: ${JSON.stringify(s.summary)}`);
}
const last = m.snapshots[m.snapshots.length - 1];
if (last.summary['total-records'] !== rows) fail(`total-records ${last.summary['total-records']}, expected ${rows}`);
if (!m.refs.main) fail('no main branch');
const names = m.schemas.find((s) => s['schema-id'] === m['current-schema-id']).fields.map((f) => f.name);
for (const want of ['ts', 'received_at', 'host', 'source', 'message', 'attrs']) if (!names.includes(want)) fail(`schema without ${want}: ${names}`);
console.log(`ok: ${m.snapshots.length} snapshots (commit-seqs ${seqs.join(',')}), ${rows} rows, schema ${names.join(',')}`);
