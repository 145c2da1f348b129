// HTTP fuzz suite: malformed requests of every kind over raw sockets. HttpFuzzTest starts the
// server jar with the README's defaults and runs this with CHAISE_URL, CHAISE_ADMIN,
// CHAISE_PASSWORD and CHAISE_PID. Every request must get a status line within 10 s, and none a
// 5xx other than 501; afterwards the server must answer GET / and a write and read of a known
// document; the server's resident memory (VmRSS, sampled, and VmHWM at the end) must stay under
// 1 GB. FUZZ_REQUESTS (default 1,500; 10,500 with CHAISE_SLOW=1) and FUZZ_SEED choose the run.
// Node's standard library only.
import net from 'node:net';
import fs from 'node:fs';
import zlib from 'node:zlib';

const base = new URL(process.env.CHAISE_URL);
const HOST = base.hostname;
const PORT = Number(base.port);
const AUTH = 'Basic ' + Buffer.from(`${process.env.CHAISE_ADMIN}:${process.env.CHAISE_PASSWORD}`).toString('base64');
const PID = process.env.CHAISE_PID;
const SLOW = process.env.CHAISE_SLOW === '1';
const N = Number(process.env.FUZZ_REQUESTS || (SLOW ? 10_500 : 1_500));
const SEED = Number(process.env.FUZZ_SEED || 20251125);
const CONCURRENCY = Number(process.env.FUZZ_CONCURRENCY || 16);
const DEADLINE_MS = 10_000;
const RSS_LIMIT = 1 << 30;

// ---------------------------------------------------------------- a seeded generator (mulberry32)
let state = SEED >>> 0;
const rand = () => {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const int = (n) => Math.floor(rand() * n);
const pick = (a) => a[int(a.length)];
const chance = (p) => rand() < p;

// ---------------------------------------------------------------- memory of the server
let peakSampled = 0;
function rss(field = 'VmRSS') {
  if (!PID) return 0;
  try {
    const m = fs.readFileSync(`/proc/${PID}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}
const sampler = setInterval(() => { peakSampled = Math.max(peakSampled, rss()); }, 200);

// ---------------------------------------------------------------- one request on its own socket
/** Sends `parts` (Buffers, written in order) and resolves with the first final status line, or an error. */
function exchange(parts) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let done = false;
    let got = Buffer.alloc(0);
    const sock = net.connect({ host: HOST, port: PORT });
    const finish = (r) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.destroy();
      resolve({ ...r, ms: Date.now() - t0 });
    };
    const timer = setTimeout(() => finish({ error: 'no status line within 10 s' }), DEADLINE_MS);
    sock.on('data', (d) => {
      got = Buffer.concat([got, d]).subarray(-65536);
      // Skip interim answers (100 Continue): the final one counts.
      for (;;) {
        const s = got.toString('latin1');
        const m = s.match(/^HTTP\/1\.[01] (\d{3})[^\r\n]*\r\n/);
        if (!m) {
          if (got.length > 16 && !s.startsWith('HTTP/')) finish({ error: 'not an HTTP answer: ' + JSON.stringify(s.slice(0, 60)) });
          return;
        }
        const status = Number(m[1]);
        if (status >= 200) return finish({ status, head: s.slice(0, 2000) });
        const end = s.indexOf('\r\n\r\n');
        if (end < 0) return;
        got = got.subarray(end + 4);
      }
    });
    sock.on('error', (e) => finish({ error: 'socket: ' + e.code }));
    sock.on('close', () => finish({ error: 'closed without a status line' }));
    sock.on('connect', async () => {
      sock.setNoDelay(true);
      for (const p of parts) {
        if (done) return;
        if (!Buffer.isBuffer(p)) {
          await new Promise((r) => setTimeout(r, p.pause));
          continue;
        }
        const ok = sock.write(p);
        if (!ok) await new Promise((r) => sock.once('drain', r));
      }
    });
  });
}

// ---------------------------------------------------------------- what the requests are made of
const B = (x) => (Buffer.isBuffer(x) ? x : Buffer.from(String(x), 'latin1'));
const U = (s) => Buffer.from(s, 'utf8');

const DB = 'fuzz';
const enc = (s) => encodeURIComponent(s);
const CTL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).concat(['\x7f']);
const hex = (c) => '%' + c.charCodeAt(0).toString(16).padStart(2, '0').toUpperCase();
const ctlName = () => {
  const k = int(4);
  const c = pick(CTL);
  return k === 0 ? hex(c) : k === 1 ? 'a' + hex(c) + 'b' : k === 2 ? hex(c) + hex(pick(CTL)) : 'x' + hex(c);
};
const badUtf8Seg = () => pick(['%FF', '%C3%28', '%E2%82', '%F0%28%8C%BC', '%C0%AF', '%ED%A0%80', 'a%80b', '%F8%88%80%80%80']);

const PATHS = [
  '/', '/_up', '/_uuids', '/_all_dbs', '/_dbs_info', '/_session', '/_active_tasks', '/_membership', '/_replicate',
  '/_node/_local/_config', '/_node/_local/_config/chttpd/port', '/_users', '/_users/org.couchdb.user:fuzz',
  `/${DB}`, `/${DB}/_all_docs`, `/${DB}/_bulk_docs`, `/${DB}/_bulk_get`, `/${DB}/_changes`, `/${DB}/_find`, `/${DB}/_index`,
  `/${DB}/_explain`, `/${DB}/_purge`, `/${DB}/_revs_diff`, `/${DB}/_missing_revs`, `/${DB}/_security`, `/${DB}/_revs_limit`,
  `/${DB}/_compact`, `/${DB}/_design_docs`, `/${DB}/_local_docs`, `/${DB}/known`, `/${DB}/known/att`, `/${DB}/_local/l`,
  `/${DB}/_design/d`, `/${DB}/_design/d/_view/v`, `/${DB}/_design/d/_view/r`, `/${DB}/_design/d/att`, `/${DB}/newdoc`,
];
const QUERIES = [
  '', '?limit=-1', '?limit=1e400', '?limit=99999999999999999999999', '?skip=x', '?startkey=%7B', '?key=%22%00%22', '?keys=%5B1,%5D',
  '?descending=maybe', '?include_docs=true&conflicts=1', '?feed=continuous&timeout=50', '?feed=longpoll&timeout=50', '?since=-1',
  '?since=%FF', '?rev=1-%00', '?rev=', '?open_revs=%5B%22x%22', '?open_revs=all&latest=true', '?count=-5', '?count=1e9',
  '?group_level=-1', '?reduce=x', '?update=maybe', '?stale=now', '?heartbeat=-1', '?filter=%00', '?style=%FF', '?batch=ok',
  '?new_edits=0', '?attachments=true&atts_since=%5B1%5D', '?a=%', '?%=%%', '?x=' + 'y'.repeat(7000), '?&&&==&', '?limit=0x10',
];
const METHODS_OK = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'COPY', 'OPTIONS', 'PATCH'];
const JSON_BAD = [
  '', '{', '}', '[', ']', '{"a":}', '{"a" 1}', '{a:1}', "{'a':1}", '[1,]', '{"a":1,}', 'nul', 'tru', 'NaN', 'Infinity', '-',
  '01', '1.', '.5', '1e', '"\\x"', '"\\u12"', '"\\ud800"', '{"a":"b"}{}', '\u0000', '\ufeff{}', '{"a":1}garbage', '/* c */{}',
  '{"__proto__":{}}', '{"a":"\t"}', '"unterminated', '{"a":[1,2}', '[[[[', ']]]]', '{"":""}', '{"a":1}\u0000',
];
const JSON_WRONG = [
  '{"docs":1}', '{"docs":[1,"x",null,[]]}', '{"docs":{"a":1}}', '{"keys":"x"}', '{"keys":[{"a":1}]}', '{"selector":[]}',
  '{"selector":{"a":{"$regex":1}}}', '{"selector":{"a":{"$regex":"(a+)+$"}},"limit":"x"}', '{"selector":{},"sort":{}}',
  '{"selector":{"$or":{}}}', '{"selector":{"a":{"$in":1}}}', '{"_id":1}', '{"_id":["x"]}', '{"_rev":1}', '{"_rev":"bad"}',
  '{"_deleted":"yes"}', '{"_attachments":[]}', '{"_attachments":{"a":1}}', '{"_attachments":{"a":{"data":1}}}',
  '{"_attachments":{"a":{"data":"!!!"}}}', '{"_attachments":{"_a":{"data":"aGk="}}}', '{"_attachments":{"a":{"stub":true}}}',
  '{"_revisions":{"start":"x","ids":1}}', '{"_revisions":{"start":-1,"ids":[]}}', '{"admins":[]}', '{"members":{"names":"x"}}',
  '{"admins":{"names":[1,{}]}}', '{"name":1,"password":[]}', '{"source":1,"target":{}}', '{"source":"http://%00","target":"x"}',
  '{"new_edits":"x","docs":[]}', '{"all_or_nothing":1,"docs":[{}]}', '{"doc_ids":"x"}', '{"doc_ids":[1,null]}', '[]', '1', '"x"',
  'null', 'true', '{"views":1}', '{"views":{"v":{"map":1}}}', '{"views":{"v":{"map":"function(d){while(1){}}"}}}',
  '{"validate_doc_update":1}', '{"index":1}', '{"index":{"fields":[1]}}', '{"index":{"fields":{}}},"name":1}', '{"x":{"$gt":1}}',
];
const NUMBERS = ['1e400', '-1e400', '1e-400', '123456789012345678901234567890', '-0', '0.0000000000000000000000001',
  '9'.repeat(5000), '1' + '0'.repeat(400), '1.' + '5'.repeat(3000), '18446744073709551616', '-9223372036854775809', '1E+99999'];

function jsonBody(path) {
  const k = int(8);
  if (k === 0) return pick(JSON_BAD);
  if (k === 1) return pick(JSON_WRONG);
  if (k === 2) { // huge numbers where numbers go
    const n = pick(NUMBERS);
    return pick([`{"limit":${n}}`, `{"a":${n}}`, `{"docs":[{"_id":"n","v":${n}}]}`, `{"count":${n}}`, `{"_revs_limit":${n}}`, n, `{"selector":{"a":{"$gt":${n}}}}`, `{"keys":[${n}]}`]);
  }
  if (k === 3) { // deep nesting
    const d = pick([500, 999, 1001, 5000, 100_000]);
    return pick([
      () => '['.repeat(d) + ']'.repeat(d),
      () => '{"a":'.repeat(d) + '1' + '}'.repeat(d),
      () => '{"docs":[' + '{"a":'.repeat(d) + '1' + '}'.repeat(d) + ']}',
      () => '{"selector":' + '{"$and":['.repeat(Math.min(d, 20000)) + '{}' + ']}'.repeat(Math.min(d, 20000)) + '}',
      () => '['.repeat(d), // unterminated
    ])();
  }
  if (k === 4) { // a valid body mutated byte by byte
    const good = pick(['{"docs":[{"_id":"a","v":1},{"_id":"b"}]}', '{"selector":{"v":{"$gt":1}}}', '{"keys":["a","b"]}', '{"a":1,"b":[true,null,"x"]}']);
    const b = Buffer.from(good);
    for (let i = 0, n = 1 + int(4); i < n; i++) b[int(b.length)] = int(256);
    return b;
  }
  if (k === 5) { // truncated
    const good = '{"docs":[{"_id":"t","_attachments":{"a":{"data":"aGVsbG8="}}}],"new_edits":true}';
    return good.slice(0, int(good.length));
  }
  if (k === 6) { // NUL and control characters inside strings and names
    const c = pick(CTL);
    return pick([`{"_id":"a${c}b"}`, `{"${c}":1}`, `{"docs":[{"_id":"${c}"}]}`, `{"keys":["${c}"]}`, `{"_attachments":{"a${c}":{"data":"aGk="}}}`]);
  }
  return '{"_id":"ok' + int(1000) + '","v":' + int(10) + '}';
}
let BOMB;
const badUtf8Body = () => Buffer.concat([B('{"_id":"'), Buffer.from([pick([0xff, 0xc3, 0xed, 0xf8, 0x80, 0xc0]), pick([0x28, 0xa0, 0x80, 0xaf, 0x00])]), B('"}')]);

function head(method, target, headers) {
  let s = `${method} ${target} HTTP/1.1\r\nHost: ${HOST}:${PORT}\r\n`;
  for (const [k, v] of headers) s += `${k}: ${v}\r\n`;
  return B(s + '\r\n');
}
function req(method, target, body, headers = [], auth = chance(0.8)) {
  const b = body === undefined ? null : Buffer.isBuffer(body) ? body : U(body);
  const h = [];
  if (auth) h.push(['Authorization', AUTH]);
  if (b) h.push(['Content-Type', pick(['application/json', 'application/json', 'application/json; charset=utf-8', 'text/plain', 'multipart/related; boundary=x', 'application/x-www-form-urlencoded'])]);
  if (b && !headers.some(([k]) => /content-length|transfer-encoding/i.test(k))) h.push(['Content-Length', b.length]);
  h.push(...headers);
  return b ? [head(method, target, h), b] : [head(method, target, h)];
}

const KINDS = {
  badJson: () => { const p = pick(PATHS); return req(pick(['POST', 'PUT']), p + pick(QUERIES.slice(0, 4)), jsonBody(p)); },
  wrongTypes: () => req(pick(['POST', 'PUT']), pick(PATHS), pick(JSON_WRONG)),
  hugeNumbers: () => req(pick(['POST', 'PUT', 'GET']), pick(PATHS) + pick(['?limit=', '?skip=', '?count=', '?since=', '?group_level=', '?timeout=', '?heartbeat=']) + enc(pick(NUMBERS).slice(0, 3000)), chance(0.5) ? `{"limit":${pick(NUMBERS)}}` : undefined),
  deepNesting: () => { const d = pick([1001, 5000, 50_000]); return req('POST', pick([`/${DB}/_bulk_docs`, `/${DB}/_find`, `/${DB}/_all_docs`, `/${DB}`, `/${DB}/_revs_diff`, `/${DB}/_design/d/_view/v`]), pick(['['.repeat(d) + ']'.repeat(d), '{"a":'.repeat(d) + '0' + '}'.repeat(d)])); },
  badUtf8: () => chance(0.5)
    ? req(pick(METHODS_OK), `/${DB}/` + badUtf8Seg() + pick(['', '/att', '/' + badUtf8Seg()]), chance(0.5) ? '{}' : undefined)
    : req(pick(['POST', 'PUT']), pick([`/${DB}`, `/${DB}/u8`, `/${DB}/_bulk_docs`, `/${DB}/_find`, `/${DB}/_local/u8`, `/${DB}/_security`]), badUtf8Body()),
  ctlInNames: () => {
    const n = ctlName();
    return pick([
      () => req('PUT', `/${DB}/doc${int(1e6)}/${n}`, 'hello', [['Content-Type', 'text/plain']]),
      () => req('PUT', `/${DB}/${n}`, '{}'),
      () => req('GET', `/${DB}/${n}`),
      () => req('PUT', `/${n}`),
      () => req('PUT', `/${DB}/_local/${n}`, '{}'),
      () => req('PUT', `/${DB}/_design/${n}`, '{}'),
      () => req('GET', `/${DB}/known/${n}`),
      () => req('DELETE', `/${DB}/known/${n}?rev=1-x`),
      () => req('GET', `/${DB}/_design/d/_view/${n}`),
      () => req('PUT', `/${DB}/_design/d/${n}`, 'x'),
      () => req('COPY', `/${DB}/known`, undefined, [['Destination', 'x' + n]]),
      () => req('GET', `/${DB}/known`, undefined, [['X-Couch-Request-ID', 'a\tb']]),
      () => [B(`GET /${DB}/a${pick(CTL.filter((c) => c !== '\r' && c !== '\n'))}b HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`)],
    ])();
  },
  badMethod: () => [B(`${pick(['GETT', 'get', 'G\x00T', 'PROPFIND', 'TRACE', 'CONNECT', 'M'.repeat(300), 'BREW', 'PUT PUT', '', 'POST\t', 'DELETE', 'MKCOL'])} ${pick(PATHS)} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 0\r\n\r\n`)],
  badHeaders: () => pick([
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nX: ${'a'.repeat(70_000)}\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\n` + Array.from({ length: 2000 }, (_, i) => `X-${i}: ${i}\r\n`).join('') + '\r\n')],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nX: a\x00b\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n`)], // obs-fold
    () => [B(`GET / HTTP/1.1\r\nHost: x\nX: lf-only\n\n`)],
    () => [B(`GET / HTTP/1.1\r\n: empty-name\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n`)],
    () => req(pick(['GET', 'POST']), pick(PATHS), '{}', [['Content-Type', pick([';;;', 'application/json; charset=ebcdic', '\x01', 'a/b/c', 'multipart/related', 'multipart/related; boundary='])]]),
    () => req('GET', pick(PATHS), undefined, [['Accept', pick(['*/*;q=x', 'text/html', '', 'multipart/mixed;;'])], ['If-None-Match', pick(['"x"', '*', '\x7f', 'W/'])]]),
    () => req('GET', `/${DB}/known/att`, undefined, [['Range', pick(['bytes=', 'bytes=5-1', 'bytes=-0', 'bytes=0-0,0-0,' + '1-1,'.repeat(100), 'bytes=99999999999999999999-', 'lines=1-2', 'bytes=a-b'])]]),
    () => req('POST', '/_session', 'name=a&password=b', [['Content-Type', 'application/x-www-form-urlencoded'], ['X-HTTP-Method-Override', pick(['BREW', 'DELETE', '\x00'])]]),
    () => req('GET', '/', undefined, [['Origin', pick(['null', 'http://%00', 'x'.repeat(5000)])], ['Access-Control-Request-Method', 'PUT']]),
  ])(),
  badLengths: () => pick([
    () => [B(`POST /${DB}/_bulk_docs HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: -1\r\n\r\n{}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: abc\r\n\r\n{}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 99999999999999999999999\r\n\r\n{}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 9000000000\r\n\r\n{}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nContent-Length: 1\r\n\r\n{"_id":"short"}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 0x10\r\n\r\n`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: +2\r\n\r\n{}`)],
    () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)],
    () => [B(`GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello`)],
  ])(),
  badEncodings: () => {
    const gz = zlib.gzipSync(Buffer.from('{"docs":[{"_id":"gz"}]}'));
    const bomb = () => (BOMB ??= zlib.gzipSync(Buffer.alloc(200 << 20, 0x20))); // inflates past the buffered-body limit
    return pick([
      () => req('POST', `/${DB}/_bulk_docs`, gz, [['Content-Encoding', 'gzip']]),
      () => req('POST', `/${DB}/_bulk_docs`, gz.subarray(0, 10), [['Content-Encoding', 'gzip']]),
      () => req('POST', `/${DB}/_bulk_docs`, '{"docs":[]}', [['Content-Encoding', pick(['gzip', 'br', 'deflate', 'x-gzip', 'identity, gzip', '\x01'])]]),
      () => req('POST', `/${DB}/_bulk_docs`, bomb(), [['Content-Encoding', 'gzip']]),
      () => req('PUT', `/${DB}/gzatt${int(1e6)}/a`, gz, [['Content-Encoding', pick(['gzip', 'compress'])]]),
      () => [B(`POST /${DB} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nTransfer-Encoding: ${pick(['gzip', 'identity', 'gzip, chunked', 'chunked, gzip', 'x'])}\r\n\r\n2\r\n{}\r\n0\r\n\r\n`)],
    ])();
  },
  badChunking: () => {
    const h = `POST /${DB}/_bulk_docs HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n`;
    return [B(h + pick([
      'zz\r\n{}\r\n0\r\n\r\n', 'ffffffffffffffffffff\r\n{}\r\n0\r\n\r\n', '-1\r\n{}\r\n0\r\n\r\n', '2\r\n{}0\r\n\r\n', '2;ext=1\r\n{}\r\n0\r\n\r\n',
      '2\r\n{}\r\n0\r\nTrailer: x\r\n\r\n', '1\r\n{\r\n1\r\n}\r\n0\r\n\r\n', '5\r\n{}\r\n0\r\n\r\n', '\r\n\r\n', '2 \r\n{}\r\n0\r\n\r\n',
      '0000000000000002\r\n{}\r\n0\r\n\r\n', '2\r\n{}\r\n0\r\nbad trailer\r\n\r\n', '2\n{}\n0\n\n',
    ]))];
  },
  badAuth: () => req(pick(['GET', 'PUT', 'POST']), pick([`/${DB}`, `/${DB}/known`, '/_session', '/_all_dbs', '/_node/_local/_config']), chance(0.5) ? '{}' : undefined, [
    pick([['Authorization', pick(['Basic', 'Basic ', 'Basic ????', 'Basic ' + Buffer.from('nocolon').toString('base64'), 'Basic ' + Buffer.from([0xff, 0x3a, 0xfe]).toString('base64'),
      'Basic ' + 'A'.repeat(20000), 'Bearer x', 'Digest username="a"', 'basic ' + Buffer.from('admin:wrong').toString('base64'), 'Basic ' + Buffer.from(':').toString('base64'),
      'Basic ' + Buffer.from('admin\x00:x').toString('base64'), 'Basic =', 'Basic ' + Buffer.from('a:' + 'p'.repeat(10000)).toString('base64')])],
    ['Cookie', pick(['AuthSession=', 'AuthSession=%%%', 'AuthSession=' + Buffer.from('admin:zz:yy').toString('base64'), 'AuthSession=' + 'x'.repeat(5000), '=;=;;', 'AuthSession=YWRtaW46NjVFNjoA'])]]),
  ], false),
  badRequestLine: () => [B(pick([
    'GET\r\n\r\n', 'GET /\r\n\r\n', 'GET / HTTP/2.0\r\nHost: x\r\n\r\n', 'GET / HTTP/0.9\r\n\r\n', 'GET / HTTP/1.1 extra\r\nHost: x\r\n\r\n',
    'GET  /  HTTP/1.1\r\nHost: x\r\n\r\n', 'GET http://h:1/_up HTTP/1.1\r\nHost: x\r\n\r\n', 'OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /' + 'a'.repeat(9000) + ' HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /a b HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n',
    'GET /% HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /#frag HTTP/1.1\r\nHost: x\r\n\r\n', 'GET ../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n',
    '\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n', '\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
    'GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /?' + '%00'.repeat(100) + ' HTTP/1.1\r\nHost: x\r\n\r\n',
  ]))],
  badQuery: () => req(pick(['GET', 'POST', 'HEAD']), pick(PATHS) + pick(QUERIES), chance(0.3) ? '{}' : undefined),
  expect: () => {
    const body = pick(['{}', '{"docs":[{}]}', 'x'.repeat(2000)]);
    return req(pick(['PUT', 'POST']), pick([`/${DB}/exp${int(1e6)}`, `/${DB}/_bulk_docs`, '/_session', `/${DB}/known/att2`, `/nope/x`]), body, [['Expect', pick(['100-continue', '100-Continue', 'teapot', ''])]]);
  },
  attachments: () => pick([
    () => req('PUT', `/${DB}/att${int(1e6)}/${pick(['a', '_a', '%5Fa', 'a/b/c', ctlName(), badUtf8Seg()])}`, 'data', [['Content-Type', pick(['text/plain', '\x7f', 'a'.repeat(60000)])]]),
    () => req('PUT', `/${DB}/known/att?rev=${pick(['1-x', '', '0-0', '999999999999999999999-a'])}`, 'data'),
    () => req('PUT', `/${DB}/_local/l/att`, 'data'),
    () => req('DELETE', `/${DB}/known/${pick(['att', '_att', 'nope'])}`, undefined, [['If-Match', pick(['"x"', '', '\x01'])]]),
    () => req('PUT', `/${DB}/mp${int(1e6)}`, '--x\r\nContent-Type: application/json\r\n\r\n{"_attachments":{"a":{"follows":true,"length":5}}}\r\n--x\r\n\r\nhel\r\n--x--', [['Content-Type', 'multipart/related; boundary=x']]),
  ])(),
  big: () => {
    // Large bodies, rare: the ones that ended in resets.
    const mb = pick([5, 8]);
    const target = pick([`/${DB}/_purge`, '/_uuids', `/${DB}/_index`, '/_replicate', `/${DB}/big${int(1e6)}/att`, `/${DB}/_find`, `/${DB}/_bulk_docs`, `/nope/x/att`]);
    const body = Buffer.alloc(mb << 20, 0x61);
    body[0] = 0x7b;
    return req(target.endsWith('att') ? 'PUT' : 'POST', target, body);
  },
  pipelined: () => {
    const a = req('GET', pick(PATHS)).concat(req(pick(['PUT', 'POST']), pick(PATHS), jsonBody('')));
    return [Buffer.concat(a)];
  },
  trickle: () => {
    // A head in pieces, a little slowly (far below the head timeout).
    const whole = Buffer.concat(req('GET', pick(PATHS)));
    const parts = [];
    for (let i = 0, n; i < whole.length; i += n) {
      n = 1 + int(40);
      parts.push(whole.subarray(i, i + n), { pause: int(20) });
    }
    return parts;
  },
};
const WEIGHTS = { badJson: 16, wrongTypes: 10, hugeNumbers: 6, deepNesting: 4, badUtf8: 8, ctlInNames: 12, badMethod: 4, badHeaders: 8,
  badLengths: 5, badEncodings: 4, badChunking: 5, badAuth: 6, badRequestLine: 5, badQuery: 8, expect: 3, attachments: 6, pipelined: 3, trickle: 1, big: 0.15 };
const BAG = Object.entries(WEIGHTS).flatMap(([k, w]) => Array(Math.max(1, Math.round(w * 20))).fill(k));

// ---------------------------------------------------------------- the run
async function plain(method, path, body) {
  const r = await fetch(`${base.origin}${path}`, { method, headers: { Authorization: AUTH, 'Content-Type': 'application/json' }, body });
  return { status: r.status, json: await r.json().catch(() => null) };
}

async function main() {
  await plain('PUT', `/${DB}`);
  await plain('PUT', `/${DB}/known`, JSON.stringify({ v: 0 }));
  await plain('PUT', `/${DB}/_design/d`, JSON.stringify({ views: { v: { map: 'function(d){emit(d.v,1)}' }, r: { map: 'function(d){emit(d._id,1)}', reduce: '_count' } } }));
  const counts = {};
  const statuses = {};
  const failures = [];
  let sent = 0;
  let hangs = 0;
  let fivexx = 0;
  let bigs = 0;
  const bigLimit = Math.max(4, Math.round(N / 500));
  let next = 0;
  const t0 = Date.now();
  async function worker() {
    while (next < N) {
      const i = next++;
      let kind = pick(BAG);
      if (kind === 'big' && bigs >= bigLimit) kind = 'badJson';
      if (kind === 'big') bigs++;
      const parts = KINDS[kind]();
      const r = await exchange(parts);
      sent++;
      counts[kind] = (counts[kind] || 0) + 1;
      const first = parts.find((p) => Buffer.isBuffer(p));
      const what = `#${i} ${kind}: ${JSON.stringify(first.toString('latin1').slice(0, 120))}`;
      if (r.error) {
        hangs++;
        failures.push(`${what} -> ${r.error}`);
      } else {
        statuses[r.status] = (statuses[r.status] || 0) + 1;
        if (r.status >= 500 && r.status !== 501) {
          fivexx++;
          failures.push(`${what} -> ${r.head.split('\r\n')[0]} ${r.head.slice(r.head.indexOf('\r\n\r\n') + 4, r.head.indexOf('\r\n\r\n') + 200)}`);
        }
      }
      if (sent % 1000 === 0) console.log(`# ${sent} sent, ${hangs} unanswered, ${fivexx} 5xx, RSS ${(rss() / 1048576).toFixed(0)} MB`);
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const seconds = (Date.now() - t0) / 1000;
  // The server still serves: GET /, and a write and a read of a known document.
  const root = await plain('GET', '/');
  const known = await plain('GET', `/${DB}/known`);
  const put = await plain('PUT', `/${DB}/known`, JSON.stringify({ _rev: known.json?._rev, v: 1 }));
  const again = await plain('GET', `/${DB}/known`);
  clearInterval(sampler);
  const hwm = rss('VmHWM');
  const peak = Math.max(peakSampled, hwm);
  const summary = { seed: SEED, sent, seconds, unanswered: hangs, server_errors_5xx: fivexx, statuses, kinds: counts, peak_rss_mb: Math.round(peak / 1048576),
    sampled_peak_rss_mb: Math.round(peakSampled / 1048576), vm_hwm_mb: Math.round(hwm / 1048576), after: { root: root.status, read: known.status, write: put.status, reread: again.json?.v } };
  console.log('FUZZ-SUMMARY ' + JSON.stringify(summary));
  for (const f of failures.slice(0, 30)) console.log('FAIL ' + f);
  const ok = hangs === 0 && fivexx === 0 && root.status === 200 && known.status === 200 && put.status === 201 && again.json?.v === 1 && sent >= N
    && (!PID || peak < RSS_LIMIT);
  if (PID && peak >= RSS_LIMIT) console.log(`FAIL peak RSS ${Math.round(peak / 1048576)} MB is over 1 GB`);
  console.log(ok ? '1 passed, 0 failed' : '0 passed, 1 failed');
  process.exit(ok ? 0 : 1);
}
main().catch((e) => {
  console.log('FAIL ' + (e.stack || e));
  process.exit(1);
});
