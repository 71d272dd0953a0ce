// A small Iceberg REST catalog for floe's tests (a fixture, not part of floe).
//
//   node server.js --port P --root DIR [--warehouse URI] [--prefix ws]
//                  [--client-id ID --client-secret S [--token-ttl SECONDS]]
//                  [--id-offset K] [--vend KEY=VALUE,...] [--omit-endpoint 'VERB /v1/...']...
//                  [--table-config KEY=VALUE,...] [--config-default KEY=VALUE,...]
//                  [--sigv4 ACCESS_KEY:SECRET:REGION:SERVICE] [--sign-keys ACCESS_KEY:SECRET]
//                  [--journal DIR --record FILE] [--no-commit-etag yes]
//                  [--remote-signing-config JSON] [--signer-path PATH] [--deny OPERATION]...
//
// Its pieces beside it: json.js (exact 64-bit numbers), openapi.js (the document's routes
// and checks), metadata.js (a table's metadata on create and commit), sigv4.js (request
// signatures checked and made) and http_error.js (the answers' errors).
//
// Listens on 127.0.0.1 only. Namespaces, tables and their current metadata locations are
// kept in DIR/catalog.json; metadata files are written under each table's location when it
// is a file:// URI or a plain path (an s3:// location is the store's: the server keeps its
// metadata under DIR/metadata-store/ and still hands out the s3:// location).
//
// Every request body and every JSON response is validated against the protocol's OpenAPI
// document (tests/data/iceberg-rest); a violation is appended to DIR/violations.log as
// one JSON line (requests that fail are answered 400), so a test can demand an empty log.
// --omit-endpoint leaves an endpoint out of the list /v1/config gives (repeatable), as a
// catalog that does not serve it would; the server still answers it. --vend is the storage
// credential a delegated load gets; --table-config goes into every LoadTableResult's config
// and --config-default into /v1/config's defaults (settings a credential may leave to
// them, such as s3.endpoint). --deny answers every request of that operation (an
// operationId such as createNamespace; repeatable) 403 ForbiddenException, whether or not
// what it names exists, as a catalog whose principal lacks that privilege does (Polaris
// checks the privilege first).
//
// With --sigv4 every request (but /_test/) must be signed with AWS Signature Version 4
// by that key for that region and service, its body's SHA-256 in x-amz-content-sha256
// and signed, within 15 minutes of the server's clock; anything else is answered 403.
// The check is written from AWS's description of SigV4 (the canonical request of a
// service other than S3: the path as received encoded once more, each query parameter
// decoded and encoded again and sorted, the signed headers lower-cased and trimmed).
//
// Every request is logged to DIR/requests.log (method, path, status, idempotency key, and
// whether an Authorization header came; never its value).
//
// Semantics kept from the spec: requirement checks answer 409 CommitFailedException; a
// table has a UUID and an ETag (If-None-Match gives 304); fresh field ids are assigned on
// create (from --id-offset + 1, so a client that assumes its own ids is caught);
// Idempotency-Key replays the first answer; OAuth2 client credentials give short-lived
// tokens (401 for an unknown token, 419 for an expired one).
//
// Faults for tests, through POST /_test/faults with a JSON object of counters, each
// consumed by the next commits: {"fail_after_apply": n, "status": 503} answers n commits
// with the status after applying them; {"cut_after_apply": n} closes the connection
// without an answer after applying; {"cut_before_apply": n} closes it before; {"stall": n}
// never answers (the connection stays open until the client gives up); {"throttle": n,
// "retry_after": s} answers the next n commits 503 with Retry-After: s, without applying;
// {"refuse_sign": n} answers the next n sign requests 403;
// {"interpose_field": FIELD} has another client add FIELD to the current schema just
// before the next commit is checked; {"interpose_snapshot": n} has another client append
// a snapshot (no new files: the current one's manifest list) before each of the next n
// commits is checked, so that their assert-ref-snapshot-id fails (409) on a new parent; {"malformed": {"kind": K, "op": OPERATION-ID, "n": N}}
// answers the next N requests of that operation (getConfig, loadTable, updateTable,
// loadCredentials; a commit is applied first) with a malformed 200 instead of the real
// one, K: garbage (not JSON), truncated (the answer cut in half), types (members of the
// wrong type), html (a proxy's HTML page), nometa (metadata missing required fields),
// huge (a 2 MiB answer), unknown (the real answer with members the spec does not know;
// well-formed). Malformed answers are not checked against the OpenAPI document. POST
// /_test/revoke drops every token; POST /_test/vend with a JSON object replaces the
// vended storage configuration.
//
// For the power-cut tests (tests/crash), whose catalog outlives the cut of floe's disk:
// --journal DIR appends every file the server writes (catalog.json, metadata files) to
// DIR/index as "SEQ PUT PATH MARK" with its bytes in DIR/SEQ, MARK being the size of the
// --record FILE (floe's recording of its file operations) when it was written, so that
// the catalog's changes are placed among floe's; POST /_test/journal {} stops the
// journal; POST /_test/reload reads catalog.json again after a test put back an older one.
'use strict';

// Snapshot ids are 64-bit: json.js parses and writes them exactly.
const { parseExact, toJson, plain } = require('./json');
const http = require('http');
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const { HttpError, errorBody } = require('./http_error');
const { freshIds, checkRequirement, applyUpdate } = require('./metadata');
const { verifySigv4, signS3 } = require('./sigv4');

function args() {
  const o = { prefix: 'ws', tokenTtl: 3600, idOffset: 0, vend: null, omit: [], deny: [], tableConfig: {}, configDefaults: {} };
  const kvs = (v) => Object.fromEntries(v.split(',').map((kv) => kv.split('=')));
  const a = process.argv.slice(2);
  for (let i = 0; i < a.length; i += 2) {
    const k = a[i], v = a[i + 1];
    if (k === '--port') o.port = Number(v);
    else if (k === '--root') o.root = v;
    else if (k === '--warehouse') o.warehouse = v;
    else if (k === '--prefix') o.prefix = v;
    else if (k === '--client-id') o.clientId = v;
    else if (k === '--client-secret') o.clientSecret = v;
    else if (k === '--token-ttl') o.tokenTtl = Number(v);
    else if (k === '--id-offset') o.idOffset = Number(v);
    else if (k === '--vend') o.vend = kvs(v);
    else if (k === '--table-config') o.tableConfig = kvs(v);
    else if (k === '--config-default') o.configDefaults = kvs(v);
    else if (k === '--sigv4') { const [ak, sk, region, service] = v.split(':'); o.sigv4 = { ak, sk, region, service }; }
    else if (k === '--omit-endpoint') o.omit.push(v);
    else if (k === '--deny') o.deny.push(v);
    else if (k === '--journal') o.journal = v;
    else if (k === '--record') o.record = v;
    else if (k === '--remote-signing-config') o.remoteSigning = JSON.parse(v);
    else if (k === '--signer-path') o.signerPath = v;
    else if (k === '--no-commit-etag') { o.noCommitEtag = v === 'yes'; }
    else if (k === '--sign-keys') { const [ak, sk] = v.split(':'); o.signKeys = { ak, sk }; }
    else throw new Error(`unknown option ${k}`);
  }
  if (!o.port || !o.root) throw new Error('--port and --root are required');
  o.warehouse = o.warehouse || `file://${path.resolve(o.root, 'warehouse')}`;
  return o;
}

const opt = args();
fs.mkdirSync(opt.root, { recursive: true });

// The OpenAPI document, its routes and checks (openapi.js).
const { spec, route, checkRequest, checkResponse } = require('./openapi')(path.join(opt.root, 'violations.log'));

// ---- catalog state ----

const statePath = path.join(opt.root, 'catalog.json');
const state = fs.existsSync(statePath)
  ? parseExact(fs.readFileSync(statePath, 'utf8'))
  : { namespaces: {}, tables: {} };
const tokens = new Map(); // token -> expiry ms
const idempotent = new Map(); // key -> [status, body]
const faults = { throttle: 0, retry_after: 3, refuse_sign: 0, interpose_snapshot: 0, fail_after_apply: 0, status: 503, cut_after_apply: 0, cut_before_apply: 0, stall: 0, malformed: null };

// A file the server wrote, in the journal when there is one (--journal).
function journal(file) {
  if (!opt.journal) return;
  let mark = -1;
  try { mark = opt.record ? fs.statSync(opt.record).size : -1; } catch (e) { mark = -1; }
  fs.mkdirSync(opt.journal, { recursive: true });
  const index = path.join(opt.journal, 'index');
  const seq = fs.existsSync(index) ? fs.readFileSync(index, 'utf8').split('\n').filter(Boolean).length : 0;
  fs.copyFileSync(file, path.join(opt.journal, String(seq)));
  fs.appendFileSync(index, `${seq} PUT ${path.resolve(file)} ${mark}\n`);
}

function save() {
  const tmp = statePath + '.tmp';
  fs.writeFileSync(tmp, toJson(state));
  fs.renameSync(tmp, statePath);
  journal(statePath);
}

function localPath(uri) {
  if (uri.startsWith('file://')) return uri.slice(7);
  if (uri.startsWith('/')) return uri;
  return path.join(opt.root, 'metadata-store', uri.replace(/^[a-z0-9]+:\/\//, ''));
}

function readMetadata(loc) {
  return parseExact(fs.readFileSync(localPath(loc), 'utf8'));
}

function writeMetadata(meta, version) {
  const loc = `${meta.location}/metadata/${String(version).padStart(5, '0')}-${crypto.randomUUID()}.metadata.json`;
  const file = localPath(loc);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, toJson(meta));
  journal(file);
  return loc;
}

const etagOf = (loc) => '"' + crypto.createHash('sha256').update(loc).digest('hex').slice(0, 32) + '"';
const nsKey = (ns) => ns.join('\x1f');

// ---- tables ----

function createTable(ns, req) {
  const key = nsKey(ns);
  if (!state.namespaces[key]) throw new HttpError(404, 'NoSuchNamespaceException', `namespace ${ns.join('.')} does not exist`);
  const tkey = key + '\x00' + req.name;
  if (state.tables[tkey]) throw new HttpError(409, 'AlreadyExistsException', `table ${req.name} already exists`);
  const next = { id: opt.idOffset };
  const { schema, map } = freshIds(req.schema, next);
  let pid = 999;
  const specFields = ((req['partition-spec'] || {}).fields || []).map((f) => {
    if (!map.has(f['source-id'])) throw new HttpError(400, 'BadRequestException', `partition source ${f['source-id']} is not in the schema`);
    return { name: f.name, transform: f.transform, 'source-id': map.get(f['source-id']), 'field-id': ++pid };
  });
  const location = req.location || `${opt.warehouse}/${ns.join('/')}/${req.name}`;
  const meta = {
    'format-version': 2,
    'table-uuid': crypto.randomUUID(),
    location,
    'last-sequence-number': 0,
    'last-updated-ms': Date.now(),
    'last-column-id': next.id,
    'current-schema-id': 0,
    schemas: [schema],
    'default-spec-id': 0,
    'partition-specs': [{ 'spec-id': 0, fields: specFields }],
    'last-partition-id': pid,
    'default-sort-order-id': 0,
    'sort-orders': [{ 'order-id': 0, fields: [] }],
    properties: req.properties || {},
    'current-snapshot-id': -1,
    refs: {},
    snapshots: [],
    'snapshot-log': [],
    'metadata-log': [],
  };
  const loc = writeMetadata(meta, 0);
  state.tables[tkey] = { loc, version: 0 };
  save();
  return { loc, meta };
}

function tableEntry(ns, name) {
  const key = nsKey(ns);
  if (!state.namespaces[key]) throw new HttpError(404, 'NoSuchNamespaceException', `namespace ${ns.join('.')} does not exist`);
  const t = state.tables[key + '\x00' + name];
  if (!t) throw new HttpError(404, 'NoSuchTableException', `table ${name} does not exist`);
  return t;
}

function commitTable(ns, name, req) {
  const t = tableEntry(ns, name);
  const meta = readMetadata(t.loc);
  for (const r of req.requirements) checkRequirement(meta, r);
  const ctx = {};
  const prevUpdated = meta['last-updated-ms'];
  for (const u of req.updates) applyUpdate(meta, u, ctx);
  meta['metadata-log'].push({ 'timestamp-ms': prevUpdated, 'metadata-file': t.loc });
  meta['last-updated-ms'] = Math.max(Date.now(), prevUpdated + 1);
  t.version += 1;
  t.loc = writeMetadata(meta, t.version);
  save();
  return { loc: t.loc, meta };
}

// Another client's schema change, committed just before the next commit is looked at:
// the current schema plus the field faults.interpose_field (with the id it names) becomes
// a new current schema, so the pending commit's assert-current-schema-id fails.
function interposeField(ns, name) {
  const f = faults.interpose_field;
  faults.interpose_field = null;
  const meta = readMetadata(tableEntry(ns, name).loc);
  const cur = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
  const schema = { type: 'struct', 'schema-id': 0, fields: [...cur.fields, f] };
  if (cur['identifier-field-ids']) schema['identifier-field-ids'] = cur['identifier-field-ids'];
  commitTable(ns, name, { requirements: [], updates: [{ action: 'add-schema', schema }, { action: 'set-current-schema', 'schema-id': -1 }] });
}

// Another client's append, committed just before the next commit is looked at: a
// snapshot of no new files (the current one's manifest list, its totals) on top of the
// current one, which moves the branch, so the pending commit's assert-ref-snapshot-id
// fails. A 63-bit random id, as writers pick them.
function interposeSnapshot(ns, name) {
  const meta = readMetadata(tableEntry(ns, name).loc);
  const cur = meta.snapshots.find((x) => x['snapshot-id'] === meta['current-snapshot-id']);
  if (!cur) return;
  const id = BigInt('0x' + crypto.randomBytes(8).toString('hex')) & 0x7fffffffffffffffn;
  const summary = { operation: 'append', 'added-data-files': '0', 'added-records': '0' };
  for (const [k, v] of Object.entries(cur.summary || {})) if (k.startsWith('total-')) summary[k] = v;
  const snapshot = {
    'snapshot-id': id, 'parent-snapshot-id': cur['snapshot-id'], 'sequence-number': meta['last-sequence-number'] + 1,
    'timestamp-ms': Math.max(Date.now(), cur['timestamp-ms'] + 1), 'manifest-list': cur['manifest-list'], summary,
    'schema-id': cur['schema-id'],
  };
  commitTable(ns, name, { requirements: [], updates: [{ action: 'add-snapshot', snapshot }, { action: 'set-snapshot-ref', 'ref-name': 'main', type: 'branch', 'snapshot-id': id }] });
}

function tableResult(loc, meta, delegated) {
  const r = { 'metadata-location': loc, metadata: meta, config: { ...opt.tableConfig } };
  if (delegated && opt.vend) r['storage-credentials'] = [{ prefix: meta.location, config: { ...opt.vend } }];
  if (opt.remoteSigning) r['remote-signing-config'] = opt.remoteSigning;
  return r;
}

// With --remote-signing-config, a sign request must carry its properties unchanged and
// its headers (a RemoteSigningConfig's MUSTs); a DeleteObjects must come with its body,
// as a catalog that authorizes each key it deletes wants it.
function checkSignRequest(req, body) {
  const rs = opt.remoteSigning;
  for (const [k, v] of Object.entries((rs && rs.properties) || {})) {
    if (!body.properties || body.properties[k] !== v) throw new HttpError(403, 'ForbiddenException', `sign request without the property ${k}`);
  }
  for (const [k, vs] of Object.entries((rs && rs.headers) || {})) {
    if ((req.headers[k.toLowerCase()] || '') !== vs.join(', ')) throw new HttpError(403, 'ForbiddenException', `sign request without the header ${k}`);
  }
  if (body.method === 'POST' && /[?&]delete(=|&|$)/.test(body.uri) && !body.body) throw new HttpError(403, 'ForbiddenException', 'a DeleteObjects to sign without its body');
}

// ---- HTTP ----

function authorize(req, pathname) {
  if (!opt.clientId || pathname === '/v1/oauth/tokens' || pathname === '/v1/config' || pathname.startsWith('/_test/')) return;
  const h = req.headers.authorization || '';
  const m = /^Bearer (.+)$/.exec(h);
  const exp = m && tokens.get(m[1]);
  if (!exp) throw new HttpError(401, 'NotAuthorizedException', 'not authorized');
  if (exp < Date.now()) throw new HttpError(419, 'AuthenticationTimeoutException', 'the token expired');
}

function issueToken(form) {
  const p = new URLSearchParams(form);
  if (p.get('grant_type') !== 'client_credentials' || p.get('client_id') !== opt.clientId || p.get('client_secret') !== opt.clientSecret) {
    return [401, { error: 'invalid_client', error_description: 'bad client credentials' }];
  }
  const token = crypto.randomBytes(24).toString('hex');
  tokens.set(token, Date.now() + opt.tokenTtl * 1000);
  return [200, { access_token: token, token_type: 'bearer', expires_in: opt.tokenTtl, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }];
}

function handle(req, body, res) {
  const url = new URL(req.url, 'http://127.0.0.1');
  const p = url.pathname;
  if (p === '/_test/faults') { Object.assign(faults, body); return [200, faults]; }
  if (p === '/_test/revoke') { tokens.clear(); return [200, {}]; }
  if (p === '/_test/vend') { opt.vend = body; return [200, {}]; }
  if (p === '/_test/journal') { opt.journal = body.dir; opt.record = body.record; return [200, {}]; }
  if (p === '/_test/reload') {
    const saved = fs.existsSync(statePath) ? parseExact(fs.readFileSync(statePath, 'utf8')) : { namespaces: {}, tables: {} };
    state.namespaces = saved.namespaces;
    state.tables = saved.tables;
    idempotent.clear();
    return [200, {}];
  }
  // A signer at a path of its own (the deprecated signer.uri/signer.endpoint settings
  // name it), outside the OpenAPI document's paths; its request is a RemoteSignRequest.
  if (opt.signerPath && p === opt.signerPath && req.method === 'POST') {
    authorize(req, p);
    const signOp = spec.paths['/v1/{prefix}/namespaces/{namespace}/tables/{table}/sign'].post;
    if (!checkRequest(signOp, body, 'POST (signer path)')) throw new HttpError(400, 'BadRequestException', 'not a RemoteSignRequest');
    checkSignRequest(req, body);
    return [200, signS3(body, opt.signKeys)];
  }
  const rt = route(req.method, p);
  if (!rt || !rt.op) throw new HttpError(404, 'NoSuchEndpointException', `no ${req.method} ${p}`);
  res.op = rt.op;
  if (p === '/v1/oauth/tokens') return issueToken(body);
  authorize(req, p);
  if (opt.deny.includes(rt.op.operationId)) throw new HttpError(403, 'ForbiddenException', `this principal may not ${rt.op.operationId}`);
  if (typeof body === 'object' && !checkRequest(rt.op, body, `${req.method} ${rt.template}`)) {
    throw new HttpError(400, 'BadRequestException', 'the request does not match the OpenAPI document');
  }
  const prefix = rt.params.prefix;
  if (prefix !== undefined && prefix !== opt.prefix) throw new HttpError(404, 'NoSuchWarehouseException', `no prefix ${prefix}`);
  const ns = rt.params.namespace ? rt.params.namespace.split('\x1f') : null;
  const delegated = /vended-credentials/.test(req.headers['x-iceberg-access-delegation'] || '');
  const key = req.headers['idempotency-key'];
  if (key && idempotent.has(key)) return idempotent.get(key);
  let out;
  switch (rt.op.operationId) {
    case 'getConfig':
      out = [200, { defaults: { ...opt.configDefaults }, overrides: { prefix: opt.prefix }, endpoints: Object.entries(spec.paths).flatMap(([tp, item]) => Object.keys(item).filter((m) => ['get', 'post', 'head', 'delete'].includes(m)).map((m) => `${m.toUpperCase()} ${tp}`)).filter((e) => !opt.omit.includes(e)), 'idempotency-key-lifetime': 'PT30M' }];
      break;
    case 'createNamespace': {
      const k = nsKey(body.namespace);
      if (state.namespaces[k]) throw new HttpError(409, 'AlreadyExistsException', `namespace ${body.namespace.join('.')} already exists`);
      state.namespaces[k] = body.properties || {};
      save();
      out = [200, { namespace: body.namespace, properties: state.namespaces[k] }];
      break;
    }
    case 'loadNamespaceMetadata':
    case 'namespaceExists': {
      const props = state.namespaces[nsKey(ns)];
      if (!props) throw new HttpError(404, 'NoSuchNamespaceException', `namespace ${ns.join('.')} does not exist`);
      out = rt.op.operationId === 'namespaceExists' ? [204, undefined] : [200, { namespace: ns, properties: props }];
      break;
    }
    case 'createTable': {
      const { loc, meta } = createTable(ns, body);
      out = [200, tableResult(loc, meta, delegated), { ETag: etagOf(loc) }];
      break;
    }
    case 'loadTable':
    case 'tableExists': {
      const t = tableEntry(ns, rt.params.table);
      if (rt.op.operationId === 'tableExists') return [204, undefined];
      if (req.headers['if-none-match'] === etagOf(t.loc)) return [304, undefined, { ETag: etagOf(t.loc) }];
      out = [200, tableResult(t.loc, readMetadata(t.loc), delegated), { ETag: etagOf(t.loc) }];
      break;
    }
    case 'signRequest': {
      tableEntry(ns, rt.params.table);
      if (faults.refuse_sign > 0) {
        faults.refuse_sign--;
        const e = new HttpError(403, 'ForbiddenException', 'signing refused (a fault the test asked for)');
        return [e.code, errorBody(e)];
      }
      checkSignRequest(req, body);
      out = [200, signS3(body, opt.signKeys)];
      break;
    }
    case 'loadCredentials': {
      const t = tableEntry(ns, rt.params.table);
      const meta = readMetadata(t.loc);
      out = [200, { 'storage-credentials': opt.vend ? [{ prefix: meta.location, config: { ...opt.vend } }] : [] }];
      break;
    }
    case 'updateTable': {
      if (faults.throttle > 0) { // not applied: 503 with Retry-After (the spec's "wait and retry")
        faults.throttle--;
        const e = new HttpError(503, 'SlowDownException', 'the catalog is busy (a fault the test asked for)');
        return [e.code, errorBody(e), { 'Retry-After': String(faults.retry_after) }];
      }
      if (faults.cut_before_apply > 0) { faults.cut_before_apply--; return 'cut'; }
      if (faults.stall > 0) { faults.stall--; return 'stall'; }
      if (faults.interpose_field) interposeField(ns, rt.params.table);
      if (faults.interpose_snapshot > 0) { faults.interpose_snapshot--; interposeSnapshot(ns, rt.params.table); }
      const { loc, meta } = commitTable(ns, rt.params.table, body);
      if (faults.cut_after_apply > 0) { faults.cut_after_apply--; return 'cut'; }
      if (faults.fail_after_apply > 0) {
        faults.fail_after_apply--;
        const e = new HttpError(faults.status, 'ServiceFailureException', 'the commit failed (a fault the test asked for)');
        return [e.code, errorBody(e)];
      }
      // The OpenAPI document gives a CommitTableResponse an ETag, for the committer's
      // next If-None-Match; --no-commit-etag plays a catalog that sends none.
      out = [200, { 'metadata-location': loc, metadata: meta }, opt.noCommitEtag ? {} : { ETag: etagOf(loc) }];
      break;
    }
    default:
      throw new HttpError(406, 'UnsupportedOperationException', `${rt.op.operationId} is not supported by the test catalog`);
  }
  if (key && req.method !== 'GET') idempotent.set(key, out);
  return malform(rt.op.operationId, out);
}

// The malformed answer faults.malformed asks for in place of out (see the top).
function malform(op, out) {
  const m = faults.malformed;
  if (!m || m.op !== op || !(m.n > 0)) return out;
  if (--m.n <= 0) faults.malformed = null;
  const payload = plain(out[1]);
  const json = (v) => ['raw', 200, 'application/json', JSON.stringify(v)];
  switch (m.kind) {
    case 'garbage': return ['raw', 200, 'application/json', 'this is not JSON {{{ "metadata": ]'];
    case 'truncated': { const t = toJson(out[1]); return ['raw', 200, 'application/json', t.slice(0, t.length >> 1)]; }
    case 'types': return json(op === 'getConfig' ? { ...payload, defaults: [1, 2], endpoints: 'all' }
      : { ...payload, metadata: 'a string', 'metadata-location': 42, 'storage-credentials': { prefix: 7 } });
    case 'html': return ['raw', 200, 'text/html', '<!DOCTYPE html><html><head><title>Sign in</title></head><body><h1>Proxy login</h1></body></html>'];
    case 'nometa': {
      const md = { ...payload.metadata };
      delete md['table-uuid'];
      delete md.schemas;
      delete md['current-schema-id'];
      return json({ ...payload, metadata: md });
    }
    case 'huge': return json({ ...payload, padding: 'x'.repeat(2 << 20) });
    case 'unknown': return ['raw', 200, 'application/json', toJson({ ...out[1], 'x-future-member': { a: [1, { b: null }] },
      ...(out[1].metadata ? { metadata: { ...out[1].metadata, 'x-future-field': true } } : {}) })];
    default: throw new Error(`unknown malformed kind ${m.kind}`);
  }
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let n = 0;
    req.on('data', (c) => { n += c.length; if (n > 64 << 20) reject(new Error('body too large')); else chunks.push(c); });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

const server = http.createServer(async (req, res) => {
  let status = 500;
  let body;
  try {
    const text = await readBody(req);
    if (opt.sigv4 && !req.url.startsWith('/_test/')) {
      try { verifySigv4(req, text, opt.sigv4); } catch (e) {
        if (!(e instanceof HttpError)) throw e;
        status = e.code;
        res.writeHead(e.code, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(errorBody(e)));
        return;
      }
    }
    if (text.length) {
      const ct = req.headers['content-type'] || '';
      if (ct.startsWith('application/x-www-form-urlencoded') && !req.url.startsWith('/_test/')) body = text;
      else {
        try { body = parseExact(text); } catch (e) { throw new HttpError(400, 'BadRequestException', `malformed JSON: ${e.message}`); }
      }
    }
    let out;
    try {
      out = handle(req, body, res);
    } catch (e) {
      if (!(e instanceof HttpError)) throw e;
      out = [e.code, errorBody(e)];
    }
    if (out === 'cut') {
      status = 0;
      req.socket.destroy();
      return;
    }
    if (out === 'stall') { // never answered: the connection stays open until the client goes
      status = -1;
      return;
    }
    if (out[0] === 'raw') { // a malformed answer a test asked for: sent as it is
      status = out[1];
      res.writeHead(out[1], { 'Content-Type': out[2] });
      res.end(out[3]);
      return;
    }
    const [code, payload, headers] = out;
    status = code;
    if (res.op && !req.url.startsWith('/_test/')) checkResponse(res.op, code, payload, `${req.method} ${new URL(req.url, 'http://x').pathname}`);
    res.writeHead(code, { 'Content-Type': 'application/json', ...(headers || {}) });
    res.end(payload === undefined ? undefined : toJson(payload));
  } catch (e) {
    status = 500;
    res.writeHead(500, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(errorBody(new HttpError(500, 'ServiceFailureException', String(e && e.message)))));
  } finally {
    fs.appendFileSync(path.join(opt.root, 'requests.log'), JSON.stringify({
      method: req.method, path: req.url, status,
      idempotency: req.headers['idempotency-key'] || null,
      authorized: Boolean(req.headers.authorization),
      delegation: req.headers['x-iceberg-access-delegation'] || null,
      t: Date.now() / 1000, // when it was answered (seconds)
      // a commit's requirements and updates by type (with a schema's, spec's or sort
      // order's id asserted)
      ...(body && Array.isArray(body.updates) ? {
        requirements: (body.requirements || []).map((r) => {
          const v = ['current-schema-id', 'default-spec-id', 'default-sort-order-id'].map((k) => r[k]).find((x) => x !== undefined);
          return r.type + (v !== undefined ? `=${v}` : '');
        }),
        updates: body.updates.map((u) => u.action),
      } : {}),
    }) + '\n');
  }
});

server.listen(opt.port, '127.0.0.1', () => {
  process.stdout.write(`listening 127.0.0.1:${opt.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
