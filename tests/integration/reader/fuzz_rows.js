// Reads a .rows file of the Parquet writer's fuzz target (FLOE_FUZZ_PQ_OUT): its options,
// the writer's result and the rows it took, strings decoded from their hex as a reader
// must give them back: by the WHATWG decoder, which replaces each maximal ill-formed
// subpart of invalid UTF-8 by U+FFFD, the rule floe's writer follows.
const fs = require('fs');

const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: true });
const text = (h) => decoder.decode(Buffer.from(h, 'hex'));

function readFuzzRows(path) {
  const lines = fs.readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const rows = lines.slice(1, -1).map((r) => ({
    ts: BigInt(r.ts), host: text(r.host), offset: r.offset === null ? null : BigInt(r.offset),
    severity: r.severity, message: text(r.message),
    attrs: r.attrs === null ? null : r.attrs.map(([k, v]) => [text(k), v === null ? null : text(v)]),
  }));
  return { opts: lines[0], result: lines[lines.length - 1].result, rows };
}

module.exports = { readFuzzRows };
