// AWS Signature Version 4 for the test REST catalog (server.js): a request to the
// catalog checked (--sigv4), and an S3 request signed for the remote signer (--sign-keys).
'use strict';

const crypto = require('crypto');
const { HttpError } = require('./http_error');

// RFC 3986 encoding as SigV4 wants it: every byte but A-Z a-z 0-9 - _ . ~ as %XX.
const sigEncode = (s, keepSlash) => Array.from(Buffer.from(s, 'utf8')).map((b) => {
  const c = String.fromCharCode(b);
  return /[A-Za-z0-9\-_.~]/.test(c) || (keepSlash && c === '/') ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
}).join('');
const hmac = (key, s) => crypto.createHmac('sha256', key).update(s, 'utf8').digest();
const sha256 = (s) => crypto.createHash('sha256').update(s, 'utf8').digest('hex');

// k: the key the requests must be signed with (--sigv4: ak, sk, region, service).
function verifySigv4(req, text, k) {
  const forbid = (why) => { throw new HttpError(403, 'ForbiddenException', `SigV4: ${why}`); };
  const m = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/
    .exec(req.headers.authorization || '');
  if (!m) forbid('no AWS4-HMAC-SHA256 Authorization header');
  const [, ak, day, region, service, signed, signature] = m;
  if (ak !== k.ak) forbid('unknown access key');
  if (region !== k.region || service !== k.service) forbid(`scope ${region}/${service}, not ${k.region}/${k.service}`);
  const date = req.headers['x-amz-date'] || '';
  const dm = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(date);
  if (!dm || !date.startsWith(day)) forbid('x-amz-date missing or not the scope\'s day');
  const when = Date.UTC(dm[1], dm[2] - 1, dm[3], dm[4], dm[5], dm[6]);
  if (Math.abs(when - Date.now()) > 15 * 60 * 1000) forbid('x-amz-date more than 15 minutes off');
  const names = signed.split(';');
  for (const need of ['host', 'x-amz-date', 'x-amz-content-sha256']) if (!names.includes(need)) forbid(`${need} is not signed`);
  const bodyHash = sha256(text);
  if (req.headers['x-amz-content-sha256'] !== bodyHash) forbid('x-amz-content-sha256 is not the body\'s');
  const q = req.url.indexOf('?');
  const rawPath = q < 0 ? req.url : req.url.slice(0, q);
  const query = q < 0 ? '' : req.url.slice(q + 1);
  const params = query ? query.split('&').map((kv) => {
    const i = kv.indexOf('=');
    const [n, v] = i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
    return [sigEncode(decodeURIComponent(n)), sigEncode(decodeURIComponent(v))];
  }) : [];
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const headers = names.map((n) => {
    const v = req.headers[n];
    if (v === undefined) forbid(`signed header ${n} is absent`);
    return `${n}:${String(v).trim().replace(/\s+/g, ' ')}\n`;
  }).join('');
  const canonical = [req.method, sigEncode(rawPath, true), params.map(([n, v]) => `${n}=${v}`).join('&'),
    headers, signed, bodyHash].join('\n');
  const scope = `${day}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${k.sk}`, day), region), service), 'aws4_request');
  const want = hmac(key, toSign).toString('hex');
  if (!crypto.timingSafeEqual(Buffer.from(want), Buffer.from(signature))) forbid('the signature does not match');
}

// The remote signer (POST .../tables/{table}/sign, with --sign-keys AK:SK as keys): the S3
// request it is given (region, uri, method, headers) signed with SigV4 for service s3 with the
// keys only the catalog holds, every header given signed; the answer is those headers
// with the Authorization added. S3's canonical path is the path as sent (not encoded
// again).
function signS3(body, keys) {
  if (!keys) throw new HttpError(403, 'ForbiddenException', 'this catalog does not sign requests');
  const u = new URL(body.uri);
  const hs = Object.fromEntries(Object.entries(body.headers).map(([n, v]) => [n.toLowerCase(), v.join(',')]));
  const date = hs['x-amz-date'] || '';
  if (!/^\d{8}T\d{6}Z$/.test(date) || !hs['x-amz-content-sha256'] || !hs.host) throw new HttpError(400, 'BadRequestException', 'host, x-amz-date and x-amz-content-sha256 are needed');
  const params = u.search ? u.search.slice(1).split('&').map((kv) => {
    const i = kv.indexOf('=');
    const [n, v] = i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
    return [sigEncode(decodeURIComponent(n)), sigEncode(decodeURIComponent(v))];
  }) : [];
  params.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0));
  const names = Object.keys(hs).sort();
  const canonical = [body.method, u.pathname, params.map(([n, v]) => `${n}=${v}`).join('&'),
    names.map((n) => `${n}:${hs[n].trim().replace(/\s+/g, ' ')}\n`).join(''), names.join(';'), hs['x-amz-content-sha256']].join('\n');
  const day = date.slice(0, 8);
  const scope = `${day}/${body.region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', date, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${keys.sk}`, day), body.region), 's3'), 'aws4_request');
  const auth = `AWS4-HMAC-SHA256 Credential=${keys.ak}/${scope}, SignedHeaders=${names.join(';')}, Signature=${hmac(key, toSign).toString('hex')}`;
  return { uri: body.uri, headers: { ...body.headers, Authorization: [auth] } };
}

module.exports = { verifySigv4, signS3 };
