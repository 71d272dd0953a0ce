// JSON with exact 64-bit numbers, for the test REST catalog (server.js).
'use strict';

// Snapshot ids are 64-bit: a Number keeps 53 bits, and a client that looks for its
// snapshot by id must get the id it sent. Numbers past 2^53 are parsed exactly (BigInt,
// from the number's source text: Node 20 has that behind the flag set here) and written
// back as they came; the OpenAPI checks see plain numbers.
require('v8').setFlagsFromString('--harmony-json-parse-with-source');
const parseExact = (text) => JSON.parse(text, (k, v, c) =>
  (typeof v === 'number' && c && !Number.isSafeInteger(v) && /^-?\d+$/.test(c.source) ? BigInt(c.source) : v));
const toJson = (v) => JSON.stringify(v, (k, x) => (typeof x === 'bigint' ? `\u0000big${x}` : x))
  .replace(/"\\u0000big(-?\d+)"/g, '$1');
const plain = (v) => JSON.parse(toJson(v));

module.exports = { parseExact, toJson, plain };
