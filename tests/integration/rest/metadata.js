// The test REST catalog's changes to a table's metadata, pure functions of the document
// (server.js reads and writes the files): fresh field ids on create, a commit's
// requirements checked and its updates applied, each refusal an HttpError as a catalog
// answers it.
'use strict';

const { HttpError } = require('./http_error');

// Fresh ids, as a catalog assigns them on create: top-level fields first, then each
// nested type's children, breadth first.
function freshIds(schema, next) {
  const map = new Map();
  const queue = [];
  const fields = schema.fields.map((f) => {
    const id = ++next.id;
    map.set(f.id, id);
    const g = { ...f, id };
    queue.push(g);
    return g;
  });
  while (queue.length) {
    const f = queue.shift();
    const t = f.type;
    if (t && typeof t === 'object' && t.type === 'map') {
      const k = ++next.id, v = ++next.id;
      map.set(t['key-id'], k);
      map.set(t['value-id'], v);
      f.type = { ...t, 'key-id': k, 'value-id': v };
    } else if (t && typeof t === 'object' && t.type === 'list') {
      const e = ++next.id;
      map.set(t['element-id'], e);
      f.type = { ...t, 'element-id': e };
    } else if (t && typeof t === 'object' && t.type === 'struct') {
      throw new HttpError(400, 'BadRequestException', 'nested structs are not supported by the test catalog');
    }
  }
  return { schema: { type: 'struct', 'schema-id': 0, fields }, map };
}

function checkRequirement(meta, r) {
  const fail = (msg) => { throw new HttpError(409, 'CommitFailedException', `Requirement failed: ${msg}`); };
  switch (r.type) {
    case 'assert-create': fail('table already exists'); break;
    case 'assert-table-uuid': if (r.uuid !== meta['table-uuid']) fail('UUID does not match'); break;
    case 'assert-ref-snapshot-id': {
      const ref = meta.refs[r.ref];
      if (r['snapshot-id'] === null || r['snapshot-id'] === undefined) {
        if (ref) fail(`branch ${r.ref} was created concurrently`);
      } else if (!ref || ref['snapshot-id'] !== r['snapshot-id']) {
        fail(`branch ${r.ref} has changed: expected id ${r['snapshot-id']} != ${ref ? ref['snapshot-id'] : 'none'}`);
      }
      break;
    }
    case 'assert-current-schema-id': if (meta['current-schema-id'] !== r['current-schema-id']) fail('current schema changed'); break;
    case 'assert-last-assigned-field-id': if (meta['last-column-id'] !== r['last-assigned-field-id']) fail('last assigned field id changed'); break;
    case 'assert-default-spec-id': if (meta['default-spec-id'] !== r['default-spec-id']) fail('default spec changed'); break;
    case 'assert-last-assigned-partition-id': if (meta['last-partition-id'] !== r['last-assigned-partition-id']) fail('last assigned partition id changed'); break;
    case 'assert-default-sort-order-id': if (meta['default-sort-order-id'] !== r['default-sort-order-id']) fail('default sort order changed'); break;
    default: throw new HttpError(400, 'BadRequestException', `unknown requirement ${r.type}`);
  }
}

const maxId = (t) => {
  if (!t || typeof t !== 'object') return 0;
  let m = 0;
  for (const k of ['key-id', 'value-id', 'element-id']) if (t[k] > m) m = t[k];
  for (const k of ['key', 'value', 'element']) m = Math.max(m, maxId(t[k]));
  for (const f of t.fields || []) m = Math.max(m, f.id, maxId(f.type));
  return m;
};

function applyUpdate(meta, u, ctx) {
  switch (u.action) {
    case 'add-snapshot': {
      const s = u.snapshot;
      if (meta.snapshots.some((x) => x['snapshot-id'] === s['snapshot-id'])) throw new HttpError(400, 'BadRequestException', `snapshot ${s['snapshot-id']} already exists`);
      if (s['sequence-number'] !== undefined && s['sequence-number'] <= meta['last-sequence-number']) throw new HttpError(400, 'BadRequestException', 'sequence number is not above the last');
      meta.snapshots.push(s);
      meta['last-sequence-number'] = s['sequence-number'] !== undefined ? s['sequence-number'] : meta['last-sequence-number'] + 1;
      ctx.added = s;
      break;
    }
    case 'set-snapshot-ref': {
      const { action, 'ref-name': name, ...ref } = u;
      void action;
      if (!meta.snapshots.some((x) => x['snapshot-id'] === ref['snapshot-id'])) throw new HttpError(400, 'BadRequestException', `snapshot ${ref['snapshot-id']} does not exist`);
      meta.refs[name] = ref;
      if (name === 'main') {
        meta['current-snapshot-id'] = ref['snapshot-id'];
        const s = meta.snapshots.find((x) => x['snapshot-id'] === ref['snapshot-id']);
        meta['snapshot-log'].push({ 'timestamp-ms': s['timestamp-ms'], 'snapshot-id': s['snapshot-id'] });
      }
      break;
    }
    case 'add-schema': {
      const ids = meta.schemas.map((s) => s['schema-id']);
      const same = meta.schemas.find((s) => JSON.stringify(s.fields) === JSON.stringify(u.schema.fields));
      const id = same ? same['schema-id'] : Math.max(...ids) + 1;
      if (!same) meta.schemas.push({ ...u.schema, 'schema-id': id });
      meta['last-column-id'] = Math.max(meta['last-column-id'], maxId(u.schema));
      ctx.lastSchema = id;
      break;
    }
    case 'set-current-schema': {
      const id = u['schema-id'] === -1 ? ctx.lastSchema : u['schema-id'];
      if (id === undefined || !meta.schemas.some((s) => s['schema-id'] === id)) throw new HttpError(400, 'BadRequestException', `schema ${u['schema-id']} does not exist`);
      meta['current-schema-id'] = id;
      break;
    }
    case 'add-spec': {
      // Checked as a catalog would: each field's source is a column of the current schema,
      // its transform one the spec names, and its field id either the one an earlier spec
      // gave the same source and transform or above last-partition-id (never reused).
      const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
      const known = new Map();
      for (const sp of meta['partition-specs']) for (const f of sp.fields) known.set(f['field-id'], `${f['source-id']}/${f.transform}`);
      const seen = new Set();
      for (const f of u.spec.fields) {
        if (!schema.fields.some((c) => c.id === f['source-id'])) throw new HttpError(400, 'BadRequestException', `partition field ${f.name}: source ${f['source-id']} is not a column`);
        if (!/^(identity|year|month|day|hour|void|bucket\[\d+\]|truncate\[\d+\])$/.test(f.transform)) throw new HttpError(400, 'BadRequestException', `partition field ${f.name}: unknown transform ${f.transform}`);
        const id = f['field-id'];
        if (id === undefined || seen.has(id) || seen.has(f.name)) throw new HttpError(400, 'BadRequestException', `partition field ${f.name}: missing or repeated field id or name`);
        seen.add(id); seen.add(f.name);
        const was = known.get(id);
        if (was !== undefined ? was !== `${f['source-id']}/${f.transform}` : id <= meta['last-partition-id']) throw new HttpError(400, 'BadRequestException', `partition field ${f.name}: field id ${id} was used for another field`);
      }
      const same = meta['partition-specs'].find((sp) => JSON.stringify(sp.fields) === JSON.stringify(u.spec.fields));
      const id = same ? same['spec-id'] : Math.max(...meta['partition-specs'].map((sp) => sp['spec-id'])) + 1;
      if (!same) meta['partition-specs'].push({ 'spec-id': id, fields: u.spec.fields });
      meta['last-partition-id'] = Math.max(meta['last-partition-id'], ...u.spec.fields.map((f) => f['field-id']));
      ctx.lastSpec = id;
      break;
    }
    case 'set-default-spec': {
      const id = u['spec-id'] === -1 ? ctx.lastSpec : u['spec-id'];
      if (id === undefined || !meta['partition-specs'].some((sp) => sp['spec-id'] === id)) throw new HttpError(400, 'BadRequestException', `partition spec ${u['spec-id']} does not exist`);
      meta['default-spec-id'] = id;
      break;
    }
    case 'add-sort-order': {
      const o = u['sort-order'];
      const schema = meta.schemas.find((s) => s['schema-id'] === meta['current-schema-id']);
      for (const f of o.fields) if (!schema.fields.some((c) => c.id === f['source-id'])) throw new HttpError(400, 'BadRequestException', `sort field: source ${f['source-id']} is not a column`);
      const same = meta['sort-orders'].find((x) => JSON.stringify(x.fields) === JSON.stringify(o.fields));
      const id = same ? same['order-id'] : o.fields.length === 0 ? 0 : Math.max(0, ...meta['sort-orders'].map((x) => x['order-id'])) + 1;
      if (!same) meta['sort-orders'].push({ 'order-id': id, fields: o.fields });
      ctx.lastOrder = id;
      break;
    }
    case 'set-default-sort-order': {
      const id = u['sort-order-id'] === -1 ? ctx.lastOrder : u['sort-order-id'];
      if (id === undefined || !meta['sort-orders'].some((x) => x['order-id'] === id)) throw new HttpError(400, 'BadRequestException', `sort order ${u['sort-order-id']} does not exist`);
      meta['default-sort-order-id'] = id;
      break;
    }
    case 'set-properties': Object.assign(meta.properties, u.updates); break;
    case 'upgrade-format-version':
      if (u['format-version'] < meta['format-version']) throw new HttpError(400, 'BadRequestException', 'cannot downgrade a table');
      meta['format-version'] = u['format-version'];
      break;
    case 'remove-properties': for (const k of u.removals) delete meta.properties[k]; break;
    case 'remove-snapshots': {
      const drop = new Set(u['snapshot-ids']);
      meta.snapshots = meta.snapshots.filter((s) => !drop.has(s['snapshot-id']));
      meta['snapshot-log'] = meta['snapshot-log'].filter((s) => !drop.has(s['snapshot-id']));
      break;
    }
    case 'remove-snapshot-ref': delete meta.refs[u['ref-name']]; break;
    default: throw new HttpError(400, 'BadRequestException', `update ${u.action} is not supported by the test catalog`);
  }
}

module.exports = { freshIds, checkRequirement, applyUpdate };
