// Reads an Iceberg table's data files the way an Iceberg reader must: each file's columns
// are resolved by their Parquet field ids against the table's current schema (from its
// metadata), never by name, so a file written before a rename reads under today's name,
// a column added since reads as null, and an int written before a promotion reads as
// the long it now is. Three independent Parquet readers do it, each from its own reading
// of the file's field ids: DuckDB, arrow-rs (parquet-wasm) and hyparquet (pure
// JavaScript). They must give the same rows; these are printed, one JSON array a line
// ([offset, message, then the current schema's typed columns in field order]), ordered
// by offset, for the test to compare with what it wrote.
// Usage: node read_by_id.mjs METADATA.json FILE.parquet...
import fs from 'fs';
import { createRequire } from 'module';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

const require = createRequire(import.meta.url);
const { DuckDBInstance } = require('@duckdb/node-api');
const parquet = require('parquet-wasm');
const arrow = require('apache-arrow');

function fail(msg) {
  console.error(`read_by_id: ${msg}`);
  process.exit(1);
}

// The fields read: offset and message (built in), then every typed column (ids above
// 14, the logs table's last built-in id), as the current schema names and types them.
function wanted(meta) {
  const s = meta.schemas.find((x) => x['schema-id'] === meta['current-schema-id']);
  if (!s) fail('no current schema');
  return s.fields.filter((f) => f.id === 5 || f.id === 11 || f.id > 14)
    .map((f) => ({ id: f.id, name: f.name, type: f.type }));
}

// The resolver the readers share: from a file's columns as one reader sees them
// ([{name, id}]), which file column holds each wanted field (null: the file lacks it).
function resolve(fileCols, fields) {
  const byId = new Map();
  for (const c of fileCols) {
    if (c.id === undefined || c.id === null || Number.isNaN(c.id)) continue;
    if (byId.has(c.id)) fail(`field id ${c.id} twice in one file`);
    byId.set(c.id, c.name);
  }
  return fields.map((f) => (byId.has(f.id) ? byId.get(f.id) : null));
}

// One value in the form every reader's value is compared in, by the table's type (an
// int file column read as the long it was promoted to reads the same).
function norm(v, type) {
  if (v === null || v === undefined) return null;
  if (type === 'int' || type === 'long') return BigInt(v).toString();
  if (type === 'float' || type === 'double') return String(Number(v));
  if (type === 'boolean') return String(Boolean(v));
  return String(v);
}

function rowsOf(records, fields, cols) {
  return records.map((get) => fields.map((f, i) => (cols[i] === null ? null : norm(get(cols[i]), f.type))));
}

async function duckdb(files, fields) {
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const c = await db.connect();
  const out = [];
  for (const f of files) {
    const src = `'${f.replace(/'/g, "''")}'`;
    // parquet_schema's field_id is the file's own; the root and nested leaves are skipped
    // by wanting top-level ids only.
    const schema = (await c.runAndReadAll(`select name, field_id from parquet_schema(${src})`)).getRows()
      .map(([name, id]) => ({ name, id: id === null ? null : Number(id) }));
    const cols = resolve(schema, fields);
    const sel = cols.map((n) => (n === null ? 'NULL' : `"${n.replace(/"/g, '""')}"`)).join(', ');
    const rows = (await c.runAndReadAll(`select ${sel} from read_parquet(${src})`)).getRows();
    out.push(...rowsOf(rows.map((r) => (name) => r[cols.indexOf(name)]), fields, cols));
  }
  return out;
}

function arrowRs(files, fields) {
  const out = [];
  for (const f of files) {
    const t = arrow.tableFromIPC(parquet.readParquet(new Uint8Array(fs.readFileSync(f))).intoIPCStream());
    const schema = t.schema.fields.map((x) => ({ name: x.name, id: Number(x.metadata.get('PARQUET:field_id')) }));
    const cols = resolve(schema, fields);
    const vecs = new Map(cols.filter((n) => n !== null).map((n) => [n, t.getChild(n)]));
    for (let i = 0; i < t.numRows; i++)
      out.push(fields.map((fd, k) => (cols[k] === null ? null : norm(vecs.get(cols[k]).get(i), fd.type))));
  }
  return out;
}

async function hyparquet(files, fields) {
  const out = [];
  for (const f of files) {
    const buf = fs.readFileSync(f);
    const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
    const md = parquetMetadata(ab);
    const schema = md.schema.slice(1).map((e) => ({ name: e.name, id: e.field_id }));
    const cols = resolve(schema, fields);
    const names = cols.filter((n) => n !== null);
    const recs = await parquetReadObjects({ file: ab, compressors, columns: names });
    out.push(...rowsOf(recs.map((r) => (name) => r[name]), fields, cols));
  }
  return out;
}

async function main() {
  const [metaPath, ...files] = process.argv.slice(2);
  if (!metaPath || !files.length) fail('usage: read_by_id.mjs METADATA.json FILE...');
  const fields = wanted(JSON.parse(fs.readFileSync(metaPath, 'utf8')));
  const order = (rows) => rows.map((r) => JSON.stringify(r))
    .sort((a, b) => Number(BigInt(JSON.parse(a)[0]) - BigInt(JSON.parse(b)[0])));
  const got = {
    duckdb: order(await duckdb(files, fields)),
    'arrow-rs': order(arrowRs(files, fields)),
    hyparquet: order(await hyparquet(files, fields)),
  };
  for (const [name, rows] of Object.entries(got))
    if (rows.join('\n') !== got.duckdb.join('\n'))
      fail(`${name} reads other rows than DuckDB:\n${rows.join('\n')}\n-- DuckDB:\n${got.duckdb.join('\n')}`);
  console.log(JSON.stringify(['offset', 'message', ...fields.slice(2).map((f) => `${f.name}:${f.type}`)]));
  for (const r of got.duckdb) console.log(r);
  console.error(`read_by_id: DuckDB, arrow-rs and hyparquet read the same ${got.duckdb.length} rows by field id from ${files.length} files`);
}

main().catch((e) => fail(e.stack || e.message));
