// The Iceberg REST protocol's OpenAPI document (tests/data/iceberg-rest) for the test
// REST catalog (server.js): its paths as routes, and a validator per schema that checks
// request bodies and JSON answers, a violation appended to DIR/violations.log.
'use strict';

const fs = require('fs');
const path = require('path');
const YAML = require('yaml');
const Ajv2020 = require('ajv/dist/2020');
const addFormats = require('ajv-formats');
const { plain } = require('./json');

const specPath = path.join(__dirname, '..', '..', 'data', 'iceberg-rest', 'rest-catalog-open-api.yaml');
const spec = YAML.parse(fs.readFileSync(specPath, 'utf8'));
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema({ $id: 'spec', components: spec.components });

// Spec paths as regular expressions, with their operations.
const routes = Object.entries(spec.paths).map(([p, item]) => ({
  template: p,
  re: new RegExp('^' + p.replace(/\{[^}]+\}/g, '([^/]+)') + '$'),
  names: (p.match(/\{[^}]+\}/g) || []).map((s) => s.slice(1, -1)),
  item,
}));

function deref(o) {
  let guard = 0;
  while (o && o.$ref && guard++ < 16) {
    const parts = o.$ref.replace(/^#\//, '').split('/');
    o = parts.reduce((x, k) => x[k], spec);
  }
  return o;
}

// One compiled validator per schema object of the document. A reference is resolved in
// the document; an inline schema is compiled beside the document's components, so the
// references inside it resolve too.
const compiled = new Map();
function schemaValidator(schema) {
  if (!compiled.has(schema)) {
    compiled.set(schema, schema.$ref
      ? ajv.compile({ $ref: 'spec' + schema.$ref })
      : ajv.compile({ ...schema, components: spec.components }));
  }
  return compiled.get(schema);
}

// DIR/violations.log (server.js gives it): one JSON line per violation.
let violationsLog = null;
function violation(what, errors) {
  fs.appendFileSync(violationsLog, JSON.stringify({ what, errors }) + '\n');
}

function checkRequest(op, body, what) {
  const rb = op && op.requestBody && deref(op.requestBody);
  const media = rb && rb.content && rb.content['application/json'];
  if (!media || body === undefined) return true;
  const v = schemaValidator(media.schema);
  if (v(plain(body))) return true;
  violation(`request ${what}`, v.errors);
  return false;
}

function checkResponse(op, status, body, what) {
  if (!op || body === undefined) return;
  const r = op.responses && (op.responses[status] || op.responses[String(status)] || op.responses.default);
  const resp = r && deref(r);
  const media = resp && resp.content && resp.content['application/json'];
  if (!resp) {
    violation(`response ${what} ${status}`, [{ message: 'status not in the operation' }]);
    return;
  }
  if (!media) return;
  const v = schemaValidator(media.schema);
  if (!v(plain(body))) violation(`response ${what} ${status}`, v.errors);
}

function route(method, pathname) {
  for (const r of routes) {
    const m = r.re.exec(pathname);
    if (!m) continue;
    const op = r.item[method.toLowerCase()];
    const params = {};
    r.names.forEach((n, i) => { params[n] = decodeURIComponent(m[i + 1]); });
    return { template: r.template, op, params };
  }
  return null;
}

// The document and its checks, violations going to the file log.
module.exports = (log) => {
  violationsLog = log;
  return { spec, route, checkRequest, checkResponse };
};
