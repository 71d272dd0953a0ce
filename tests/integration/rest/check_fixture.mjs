// The test catalog against an independent client (iceberg-js): namespaces, a table with
// fresh ids, commits with requirements (one refused with 409), ETags, tokens.
//   node check_fixture.mjs BASE_URL CLIENT_ID CLIENT_SECRET ID_OFFSET
import { IcebergRestCatalog, IcebergError } from 'iceberg-js';

const [base, clientId, secret, offset] = process.argv.slice(2);
const fail = (m) => { console.error(`FAIL: ${m}`); process.exit(1); };

const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'catalog' });
const tokRes = await fetch(`${base}/v1/oauth/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form });
const tok = await tokRes.json();
if (tokRes.status !== 200 || !tok.access_token) fail(`token: ${tokRes.status}`);
const bad = await fetch(`${base}/v1/oauth/tokens`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: 'wrong' }) });
if (bad.status !== 401) fail(`a wrong secret got ${bad.status}`);

const cat = new IcebergRestCatalog({ baseUrl: base, warehouse: 'w', auth: { type: 'bearer', token: tok.access_token } });
await cat.createNamespace({ namespace: ['edge', 'site 1'] });
const ns = { namespace: ['edge', 'site 1'] };
if (!(await cat.namespaceExists(ns))) fail('namespace not found after create');
const schema = { type: 'struct', fields: [
  { id: 1, name: 'ts', type: 'timestamptz', required: true },
  { id: 2, name: 'message', type: 'string', required: false },
  { id: 3, name: 'attrs', required: false, type: { type: 'map', 'key-id': 4, key: 'string', 'value-id': 5, value: 'string', 'value-required': false } },
] };
const created = await cat.createTableResult(ns, { name: 'logs', schema, 'partition-spec': { 'spec-id': 0, fields: [{ name: 'ts_day', transform: 'day', 'source-id': 1, 'field-id': 1000 }] } });
const f = created.metadata.schemas[0].fields;
const o = Number(offset);
if (f[0].id !== o + 1 || f[2].type['key-id'] !== o + 4 || created.metadata['partition-specs'][0].fields[0]['source-id'] !== o + 1) fail(`fresh ids not assigned: ${JSON.stringify(f)}`);
try { await cat.createTable(ns, { name: 'logs', schema }); fail('a second create succeeded'); } catch (e) { if (!(e instanceof IcebergError) || e.status !== 409) fail(`second create: ${e}`); }

const id = { namespace: ns.namespace, name: 'logs' };
const uuid = created.metadata['table-uuid'];
const snap = (sid, parent, seq) => ({ 'snapshot-id': sid, ...(parent ? { 'parent-snapshot-id': parent } : {}), 'sequence-number': seq, 'timestamp-ms': Date.now(), 'manifest-list': `${created.metadata.location}/metadata/snap-${sid}.avro`, summary: { operation: 'append', 'floe.commit-seq': String(seq) }, 'schema-id': 0 });
const commit = (sid, parent, seq, head) => cat.commitTable(id, {
  requirements: [{ type: 'assert-table-uuid', uuid }, { type: 'assert-ref-snapshot-id', ref: 'main', 'snapshot-id': head }],
  updates: [{ action: 'add-snapshot', snapshot: snap(sid, parent, seq) }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': sid }],
});
await commit(11, null, 1, null);
await commit(12, 11, 2, 11);
try { await commit(13, 11, 3, 11); fail('a stale commit succeeded'); } catch (e) { if (!(e instanceof IcebergError) || e.status !== 409) fail(`stale commit: ${e}`); }
const loaded = await cat.loadTableResult(id);
if (loaded.metadata['current-snapshot-id'] !== 12 || loaded.metadata.snapshots.length !== 2) fail('history after commits');
if ((await cat.loadTable(id, { ifNoneMatch: loaded.etag })) !== null) fail('If-None-Match did not give 304');
console.log(`ok: ${loaded.metadata.snapshots.length} snapshots, current ${loaded.metadata['current-snapshot-id']}, etag ${loaded.etag}`);
