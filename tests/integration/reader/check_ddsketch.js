// Decodes floe's DDSketch protobuf images with Datadog's sketches-js and checks them.
// Usage: node check_ddsketch.js DIR EXACT.json
//   DIR holds bench_sketch dds-interop's output (wN.pb, wN.txt, signed.pb, c.json);
//   EXACT.json is DuckDB's quantile_disc over the union of the windows' raw values.
// Checks: each window's quantiles from sketches-js equal floe's (same buckets, same
// rank rule); each is within the accuracy of the exact quantile of its raw values; the
// windows merged by sketches-js equal floe's merged sketch and are within the accuracy
// of DuckDB's exact answer; the mixed-sign sketch decodes to floe's quantiles.
// Prints "ok - ..." / "FAIL - ..." lines and a closing count; exits 1 on any failure.
const fs = require('fs');
const path = require('path');
const { DDSketch } = require('@datadog/sketches-js');

const [dir, exactFile] = process.argv.slice(2);
const c = JSON.parse(fs.readFileSync(path.join(dir, 'c.json'), 'utf8'));
// duck.js prints a DuckDB list as {"items": [...]}.
const exactCell = JSON.parse(fs.readFileSync(exactFile, 'utf8').trim().split('\n')[0])[0];
const exactUnion = Array.isArray(exactCell) ? exactCell : exactCell.items;
const ACC = 0.01;
let passed = 0;
let failed = 0;

function check(what, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok - ${what}`);
  } else {
    failed++;
    console.log(`FAIL - ${what}: ${detail}`);
  }
}

// Same value up to floating-point noise (JS computes gamma^k with pow, floe with exp).
const same = (a, b) => a === b || Math.abs(a - b) <= 1e-9 * Math.max(Math.abs(a), Math.abs(b));
const within = (est, exact) => Math.abs(est - exact) <= ACC * Math.abs(exact) + 1e-12;

function load(name) {
  return DDSketch.fromProto(new Uint8Array(fs.readFileSync(path.join(dir, name))));
}

function compare(what, sketch, want, test) {
  const bad = [];
  c.qs.forEach((q, i) => {
    const got = sketch.getValueAtQuantile(q);
    if (!test(got, want[i])) bad.push(`q=${q}: sketches-js ${got}, want ${want[i]}`);
  });
  check(what, bad.length === 0, bad.join('; '));
}

let merged = null;
let worst = 0;
c.windows.forEach((want, w) => {
  const s = load(`w${w}.pb`);
  compare(`window ${w}: sketches-js quantiles equal floe's`, s, want, same);
  const raw = fs.readFileSync(path.join(dir, `w${w}.txt`), 'utf8').trim().split('\n').map(Number);
  raw.sort((a, b) => a - b);
  const exact = c.qs.map((q) => raw[Math.floor(q * (raw.length - 1))]);
  compare(`window ${w}: within ${ACC * 100} % of the exact quantiles`, s, exact, within);
  check(`window ${w}: count ${raw.length}`, s.count === raw.length, `decoded ${s.count}`);
  if (merged === null) merged = s;
  else merged.merge(s);
});
compare('merged by sketches-js: equal to floe\'s merged sketch', merged, c.merged, same);
compare(`merged by sketches-js: within ${ACC * 100} % of DuckDB's exact quantiles over the union`,
  merged, exactUnion, within);
c.qs.forEach((q, i) => {
  const got = merged.getValueAtQuantile(q);
  worst = Math.max(worst, exactUnion[i] === 0 ? Math.abs(got) : Math.abs(got / exactUnion[i] - 1));
});
console.log(`# worst relative error of the merged quantiles against DuckDB: ${(worst * 100).toFixed(4)} %`);
compare('mixed-sign sketch: sketches-js quantiles equal floe\'s', load('signed.pb'), c.signed, same);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
