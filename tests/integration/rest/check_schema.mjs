// The schemas of a table in the test catalog, as an independent client (iceberg-js) loads
// them: the first line is the number of schemas and the current one's typed fields (ids
// past floe's 14 built-in ones) as id:name:type; the second is the current schema as
// DuckDB's read_parquet schema map (message and the typed fields, by field id), to read
// files written under older schemas as an Iceberg reader does.
//   node check_schema.mjs BASE_URL CLIENT_ID CLIENT_SECRET NAMESPACE TABLE
import { IcebergRestCatalog } from 'iceberg-js';

const [base, clientId, secret, ns, name] = process.argv.slice(2);
const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: clientId, client_secret: secret, scope: 'catalog' });
const tok = await (await fetch(`${base}/v1/oauth/tokens`, { method: 'POST', body: form })).json();
const cat = new IcebergRestCatalog({ baseUrl: base, warehouse: 'w', auth: { type: 'bearer', token: tok.access_token } });
const m = (await cat.loadTableResult({ namespace: ns.split('.'), name })).metadata;
const cur = m.schemas.find((s) => s['schema-id'] === m['current-schema-id']);
const typed = cur.fields.filter((f) => f.id > 14);
console.log([m.schemas.length, ...typed.map((f) => `${f.id}:${f.name}:${f.type}`)].join(' '));
const duck = { int: 'INTEGER', long: 'BIGINT', double: 'DOUBLE', float: 'FLOAT', boolean: 'BOOLEAN', string: 'VARCHAR', date: 'DATE' };
const msg = cur.fields.find((f) => f.name === 'message');
const cols = [msg, ...typed].map((f) => `${f.id}: {name: '${f.name}', type: '${duck[f.type]}', default_value: NULL}`);
console.log(`map {${cols.join(', ')}}`);
