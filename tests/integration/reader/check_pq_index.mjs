// Checks the statistics, page index and bloom filters of Parquet files written by floe
// with hyparquet, a third independent reader (pure JavaScript; its own Thrift decoder,
// page index and bloom filter code). For every column chunk:
// - the offset index: one location per data page, contiguous from the chunk's first data
//   page to its end, first row 0 and increasing;
// - the column index: per page, null_pages and null_counts equal to the page's nulls, and
//   min/max bounds of its values (exact for integers; for strings a prefix of the least
//   value and not below the greatest, as truncation allows), boundary_order true;
// - the chunk statistics: the same over the row group;
// - the bloom filter, where there is one: it contains every value of the row group, and
//   when it has 8 bits or more per distinct value, rules out at least 90 % of 1,000
//   absent ones.
// The values come from FILE's .rows sidecar when there is one (the fuzz target's record
// of what it gave the writer), else from hyparquet's own reading (then map columns with
// pairs are checked for structure only: hyparquet folds maps into objects).
// Usage: node check_pq_index.mjs FILE...
import fs from 'fs';
import { parquetMetadata, parquetReadObjects, readColumnIndex, readOffsetIndex } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { readBloomFilter, hashParquetValue, sbbfContains } from 'hyparquet/src/bloom.js';
import fuzzRows from './fuzz_rows.js';

const { readFuzzRows } = fuzzRows;

const id = (v) => v;
const parsers = { timestampFromMilliseconds: id, timestampFromMicroseconds: id, timestampFromNanoseconds: id };
const UNKNOWN = Symbol('unknown');

// Bytewise for strings (UTF-8 order is code point order), numeric for integers.
function cmp(a, b) {
  if (typeof a === 'string') return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
  const x = BigInt(a), y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// A row's values for a leaf column, by path: [v] for a top-level column, the keys or
// values of a map (one null for a null or empty map), or UNKNOWN.
function leafValues(row, path) {
  const v = row[path[0]];
  if (path.length === 1) return [v === undefined ? null : v];
  if (v === null || v === undefined) return [null];
  const pairs = Array.isArray(v) ? v : Object.entries(v);
  if (pairs.length === 0) return [null];
  if (!Array.isArray(v)) return UNKNOWN; // an object: repeated keys were folded
  return pairs.map((p) => (path[2] === 'key' ? p[0] : p[1]));
}

function sidecarRows(file) {
  const side = file.replace(/\.parquet$/, '.rows');
  return fs.existsSync(side) ? readFuzzRows(side).rows : null;
}

let problems = 0;
function fail(where, what) {
  problems++;
  if (problems <= 20) console.error(`${where}: ${what}`);
}

const show = (v) => JSON.stringify(v, (_, x) => (typeof x === 'bigint' ? `${x}` : x)).slice(0, 120);

// Checks bounds [min, max] against the values (nulls excluded); tag names them.
function checkBounds(where, tag, min, max, vals, isString) {
  if (vals.length === 0) return;
  let lo = vals[0], hi = vals[0];
  for (const v of vals) {
    if (cmp(v, lo) < 0) lo = v;
    if (cmp(v, hi) > 0) hi = v;
  }
  if (min === undefined || max === undefined || min === null || max === null) {
    fail(where, `${tag}: no min/max for ${vals.length} values`);
    return;
  }
  if (isString) {
    const mb = Buffer.from(min, 'utf8'), lb = Buffer.from(lo, 'utf8');
    if (!(mb.length <= lb.length && lb.subarray(0, mb.length).equals(mb)))
      fail(where, `${tag}: min ${show(min)} is not a prefix of the least value ${show(lo)}`);
    if (cmp(max, hi) < 0) fail(where, `${tag}: max ${show(max)} is below the greatest value ${show(hi)}`);
  } else {
    if (cmp(min, lo) !== 0) fail(where, `${tag}: min ${show(min)}, least value ${show(lo)}`);
    if (cmp(max, hi) !== 0) fail(where, `${tag}: max ${show(max)}, greatest value ${show(hi)}`);
  }
}

// The bloom filter at offset: every value present in it, and when it has 8 bits or more
// per distinct value, at least 90 % of 1,000 absent strings ruled out. Returns 1 if read.
function checkBloom(where, view, offset, el, all, isString, salt) {
  const bf = readBloomFilter({ view, offset });
  if (!bf) {
    fail(where, 'bloom filter not readable');
    return 0;
  }
  const present = all.filter((v) => v !== null);
  for (const v of present) {
    const h = hashParquetValue(v, el);
    if (h === undefined || !sbbfContains(bf.blocks, h)) {
      fail(where, `bloom filter lacks ${show(v)}`);
      return 1;
    }
  }
  const distinct = new Set(present.map((v) => `${v}`));
  if (isString && bf.numBytes * 8 >= 8 * distinct.size) {
    let hits = 0;
    for (let i = 0; i < 1000; i++) {
      const probe = `absent-${i}-${salt}`;
      if (!distinct.has(probe) && sbbfContains(bf.blocks, hashParquetValue(probe, el))) hits++;
    }
    if (hits > 100) fail(where, `bloom filter passes ${hits} of 1000 absent values`);
  }
  return 1;
}

async function checkFile(file) {
  const buf = fs.readFileSync(file);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength);
  const view = new DataView(ab);
  const md = parquetMetadata(ab, { parsers });
  const rows = sidecarRows(file) ||
    await parquetReadObjects({ file: ab, compressors, parsers });
  if (rows.length !== Number(md.num_rows)) fail(file, `${rows.length} rows read, ${md.num_rows} in the footer`);
  const leaves = md.schema.filter((s) => s.num_children === undefined || s.num_children === 0);
  let first = 0, chunks = 0, pages = 0, blooms = 0;
  for (const [g, rg] of md.row_groups.entries()) {
    const n = Number(rg.num_rows);
    const rgRows = rows.slice(first, first + n);
    first += n;
    for (const [c, col] of rg.columns.entries()) {
      const m = col.meta_data;
      const path = m.path_in_schema;
      const where = `${file} rg ${g} ${path.join('.')}`;
      const el = leaves[c];
      const isString = m.type === 'BYTE_ARRAY';
      chunks++;
      const perRow = rgRows.map((r) => leafValues(r, path));
      const known = perRow.every((v) => v !== UNKNOWN);
      const all = known ? perRow.flat() : null;
      // Chunk statistics.
      const st = m.statistics;
      if (known && st) {
        const nulls = all.filter((v) => v === null).length;
        if (st.null_count !== undefined && Number(st.null_count) !== nulls)
          fail(where, `statistics null_count ${st.null_count}, ${nulls} nulls`);
        checkBounds(where, 'statistics', st.min_value, st.max_value, all.filter((v) => v !== null), isString);
      }
      // Bloom filter.
      if (m.bloom_filter_offset !== undefined && known)
        blooms += checkBloom(where, view, Number(m.bloom_filter_offset), el, all, isString, `${g}-${c}`);
      // Offset index.
      if (col.offset_index_offset === undefined) {
        if (col.column_index_offset !== undefined) fail(where, 'a column index without an offset index');
        continue;
      }
      const oi = readOffsetIndex({ view, offset: Number(col.offset_index_offset) });
      const locs = oi.page_locations;
      const start = Number(m.data_page_offset);
      const end = Number(m.dictionary_page_offset ?? m.data_page_offset) + Number(m.total_compressed_size);
      if (locs.length === 0) fail(where, 'offset index without pages');
      let at = start;
      for (const [p, l] of locs.entries()) {
        if (Number(l.offset) !== at) fail(where, `page ${p} at ${l.offset}, expected ${at}`);
        at = Number(l.offset) + l.compressed_page_size;
        const fr = Number(l.first_row_index);
        if (p === 0 ? fr !== 0 : fr <= Number(locs[p - 1].first_row_index) || fr >= n)
          fail(where, `page ${p} first_row_index ${fr}`);
      }
      if (at !== end) fail(where, `the pages end at ${at}, the chunk at ${end}`);
      pages += locs.length;
      // Column index, page by page.
      if (col.column_index_offset === undefined) continue;
      const ci = readColumnIndex({ view, offset: Number(col.column_index_offset) }, el, parsers);
      if (ci.null_pages.length !== locs.length) fail(where, `${ci.null_pages.length} column index entries, ${locs.length} pages`);
      let prevMin, prevMax, asc = true, desc = true;
      for (let p = 0; p < locs.length && known; p++) {
        const r0 = Number(locs[p].first_row_index);
        const r1 = p + 1 < locs.length ? Number(locs[p + 1].first_row_index) : n;
        const vals = perRow.slice(r0, r1).flat();
        const nonnull = vals.filter((v) => v !== null);
        const tag = `page ${p}`;
        if (ci.null_pages[p] !== (nonnull.length === 0))
          fail(where, `${tag}: null_pages ${ci.null_pages[p]} with ${nonnull.length} values`);
        if (ci.null_counts && Number(ci.null_counts[p]) !== vals.length - nonnull.length)
          fail(where, `${tag}: null_counts ${ci.null_counts[p]}, ${vals.length - nonnull.length} nulls`);
        if (ci.null_pages[p]) continue;
        checkBounds(where, tag, ci.min_values[p], ci.max_values[p], nonnull, isString);
        if (prevMin !== undefined) {
          if (cmp(ci.min_values[p], prevMin) < 0 || cmp(ci.max_values[p], prevMax) < 0) asc = false;
          if (cmp(ci.min_values[p], prevMin) > 0 || cmp(ci.max_values[p], prevMax) > 0) desc = false;
        }
        prevMin = ci.min_values[p];
        prevMax = ci.max_values[p];
      }
      if (known && ((ci.boundary_order === 'ASCENDING' && !asc) || (ci.boundary_order === 'DESCENDING' && !desc)))
        fail(where, `boundary_order ${ci.boundary_order} does not hold`);
    }
  }
  return { chunks, pages, blooms };
}

let files = 0, chunks = 0, pages = 0, blooms = 0;
for (const f of process.argv.slice(2)) {
  try {
    const r = await checkFile(f);
    files++;
    chunks += r.chunks;
    pages += r.pages;
    blooms += r.blooms;
  } catch (e) {
    fail(f, `hyparquet: ${e.message || e}`);
  }
}
console.log(`check_pq_index: ${files} files, ${chunks} column chunks, ${pages} pages in offset ` +
  `indexes, ${blooms} bloom filters checked with hyparquet; ${problems} problems`);
process.exit(problems || files === 0 ? 1 : 0);
