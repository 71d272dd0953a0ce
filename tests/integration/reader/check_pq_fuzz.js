// Reads back the Parquet files the writer's fuzz target wrote (FLOE_FUZZ_PQ_OUT) with two
// independent readers, DuckDB and arrow-rs (the Rust Parquet reader, through
// parquet-wasm), and checks that each gives every row the target gave the writer, in
// order: ts, host, offset, severity, message and the attrs map (null, empty, or its pairs
// in order, null values included). Strings were given as raw bytes, possibly invalid
// UTF-8; the expected text is those bytes decoded by the WHATWG decoder, which replaces
// each maximal ill-formed subpart by U+FFFD, the rule floe's writer follows.
// Usage: node check_pq_fuzz.js DIR   (DIR holds NNNNNN.rows and NNNNNN.parquet)
const fs = require('fs');
const path = require('path');
const { DuckDBInstance } = require('@duckdb/node-api');
const parquet = require('parquet-wasm');
const arrow = require('apache-arrow');

const { readFuzzRows } = require('./fuzz_rows');

// A row in one comparable form: [ts, host, offset, severity, message, attrs].
const expected = (r) => [r.ts, r.host, r.offset, r.severity, r.message, r.attrs];

const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}n` : x));

async function duckRows(conn, file) {
  const q = `select epoch_us(ts), host, "offset", severity, message, attrs is null,
      map_keys(attrs), map_values(attrs)
    from read_parquet('${file}', file_row_number = true) order by file_row_number`;
  const rows = (await conn.runAndReadAll(q)).getRows();
  const items = (l) => (l === null ? [] : l.items);
  return rows.map(([ts, host, off, sev, msg, isNull, keys, vals]) => {
    const k = items(keys), v = items(vals);
    return [ts, host, off, sev, msg, isNull ? null : k.map((x, i) => [x, v[i]])];
  });
}

function arrowRows(file) {
  const t = arrow.tableFromIPC(parquet.readParquet(new Uint8Array(fs.readFileSync(file))).intoIPCStream());
  const out = [];
  for (const b of t.batches) {
    const ts = b.getChild('ts'), host = b.getChild('host'), off = b.getChild('offset');
    const sev = b.getChild('severity'), msg = b.getChild('message'), attrs = b.getChild('attrs');
    const raw = ts.data[0].values; // microseconds, as stored
    for (let i = 0; i < b.numRows; i++) {
      const m = attrs.get(i);
      const pairs = m === null ? null : [];
      if (m !== null) {
        for (const [k, v] of m) pairs.push([k, v === undefined ? null : v]);
      }
      const o = off.get(i);
      out.push([raw[ts.data[0].offset + i], host.get(i), o === null ? null : BigInt(o),
        sev.get(i), msg.get(i), pairs]);
    }
  }
  return out;
}

function compare(name, reader, want, got) {
  if (got.length !== want.length) {
    console.error(`${name}: ${reader} read ${got.length} rows, the writer took ${want.length}`);
    return 1;
  }
  for (let i = 0; i < want.length; i++) {
    if (show(got[i]) !== show(want[i])) {
      console.error(`${name}: ${reader}: row ${i} is ${show(got[i]).slice(0, 400)}, ` +
        `the writer took ${show(want[i]).slice(0, 400)}`);
      return 1;
    }
  }
  return 0;
}

async function main() {
  const dir = process.argv[2];
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.rows')).sort();
  if (names.length === 0) throw new Error(`no .rows files in ${dir}`);
  const db = await DuckDBInstance.create(':memory:', { threads: '1' });
  const conn = await db.connect();
  let failed = 0, files = 0, refused = 0, rows = 0;
  const seen = new Set();
  for (const n of names) {
    const { opts, result, rows: given } = readFuzzRows(path.join(dir, n));
    const name = `${n.replace('.rows', '')} (${opts.codec}/${opts.profile})`;
    if (result !== 0) {
      // The target itself stops on anything but a memory or size limit.
      refused++;
      continue;
    }
    seen.add(`${opts.codec}/${opts.profile}`);
    const want = given.map(expected);
    const file = path.join(dir, n.replace('.rows', '.parquet'));
    let f = 0;
    try {
      f += compare(name, 'DuckDB', want, await duckRows(conn, file));
    } catch (e) {
      console.error(`${name}: DuckDB: ${e.message}`);
      f++;
    }
    try {
      f += compare(name, 'arrow-rs', want, arrowRows(file));
    } catch (e) {
      console.error(`${name}: arrow-rs: ${e.message || e}`);
      f++;
    }
    failed += f ? 1 : 0;
    files++;
    rows += want.length;
  }
  console.log(`check_pq_fuzz: ${files} files, ${rows} rows, read by DuckDB and arrow-rs; ` +
    `${refused} inputs the writer refused (memory or size limit); ` +
    `codec/profile pairs: ${[...seen].sort().join(' ')}`);
  console.log(`${files - failed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((e) => {
  console.error(`check_pq_fuzz.js: ${e.message}`);
  process.exit(1);
});
