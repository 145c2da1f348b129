// Per-document access (issue 28): one access database of --docs documents owned by --users users
// (docs/users each, loaded by the admin with _bulk_docs), then, as random users signed in with
// Basic auth, `_changes?since=0`, `_all_docs` and a sorted `_find` latencies (p50, p95) beside `GET /{db}`'s (the
// baseline of any request on the machine at that moment), and single-document PUT
// latency into the access database against a plain one (one client, sequential).
//
//   node src-it/bench/access-bench.mjs --url http://admin:pw@127.0.0.1:5984 [--docs 100000] [--users 1000] [--reads 300] [--puts 500] [--server-pid PID]
//     [--settle SECONDS] [--read-rounds N]
//
// Users are created in _users first (a few seconds for thousands: the password hash is PBKDF2).
// Prints one JSON line; figures go to docs/benchmarks.md. Node standard library only.
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf('--' + name); return i < 0 ? fallback : args[i + 1]; };
const url = new URL(opt('url', 'http://admin:admin@127.0.0.1:5984'));
const docs = Number(opt('docs', 100000));
const users = Number(opt('users', 1000));
const reads = Number(opt('reads', 300));
const puts = Number(opt('puts', 500));
const serverPid = opt('server-pid', null);
// The reads right after a load of 1,000,000 documents meet RocksDB compacting it and a cold JIT:
// --settle waits that many seconds first, --read-rounds repeats them (each round printed).
const settle = Number(opt('settle', 0));
const readRounds = Number(opt('read-rounds', 1));
const base = url.origin;
import { readFileSync } from 'node:fs';
/** The server's CPU seconds so far (utime + stime of /proc/PID/stat), or null without --server-pid. */
function cpu() {
  if (!serverPid) return null;
  const f = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}
/** {@code timed}, with the server's CPU milliseconds per call when --server-pid is given (robust on a busy machine). */
async function timedCpu(n, f) {
  const c0 = cpu();
  const t = await timed(n, f);
  if (c0 !== null) t.serverCpuMsPerCall = +((cpu() - c0) * 1000 / n).toFixed(3);
  return t;
}
const basic = (u, p) => 'Basic ' + Buffer.from(`${u}:${p}`).toString('base64');
const admin = basic(decodeURIComponent(url.username), decodeURIComponent(url.password));

async function call(auth, method, path, body) {
  const r = await fetch(base + path, { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return +s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2); };
async function timed(n, f) {
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await f(i);
    out.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return { p50: pct(out, 0.5), p95: pct(out, 0.95) };
}

const stamp = Date.now();
const dbName = `access-bench-${stamp}`;
const plainName = `plain-bench-${stamp}`;
const user = (i) => `u${stamp}-${i}`;
await call(admin, 'PUT', '/_node/_local/_config/per_doc_access/enable', 'true');
await fetch(base + '/_users', { method: 'PUT', headers: { Authorization: admin } });
// Users: the password hash is cheap with few iterations, as the bench measures documents, not sign-in.
await call(admin, 'PUT', '/_node/_local/_config/chttpd_auth/iterations', '1');
for (let i = 0; i < users; i += 100) {
  const batch = [];
  for (let k = i; k < Math.min(users, i + 100); k++) batch.push({ _id: `org.couchdb.user:${user(k)}`, name: user(k), password: 'pw', roles: [], type: 'user' });
  await call(admin, 'POST', '/_users/_bulk_docs', { docs: batch });
}
await call(admin, 'PUT', `/${dbName}?access=true`);
await call(admin, 'PUT', `/${dbName}/_security`, { members: { roles: ['_users'] }, admins: { roles: ['_admin'] } });
await call(admin, 'PUT', `/${plainName}`);
const load0 = Date.now();
for (let i = 0; i < docs; i += 1000) {
  const batch = [];
  for (let k = i; k < Math.min(docs, i + 1000); k++) batch.push({ _id: 'd' + String(k).padStart(8, '0'), n: k, text: 'x'.repeat(200), _access: [user(k % users)] });
  await call(admin, 'POST', `/${dbName}/_bulk_docs`, { docs: batch });
}
const loadSeconds = (Date.now() - load0) / 1000;
const pick = (i) => (i * 7919) % users;
const perUser = Math.floor(docs / users);
await new Promise((r) => setTimeout(r, settle * 1000));
let changes, allDocs, find, info;
for (let round = 1; round <= readRounds; round++) {
  changes = await timedCpu(reads, async (i) => {
    const r = await call(basic(user(pick(i)), 'pw'), 'GET', `/${dbName}/_changes?since=0`);
    if (r.results.length !== Math.floor(docs / users)) throw new Error(`changes: ${r.results.length}`);
  });
  allDocs = await timedCpu(reads, async (i) => {
    const r = await call(basic(user(pick(i + 1)), 'pw'), 'GET', `/${dbName}/_all_docs`);
    if (r.total_rows !== Math.floor(docs / users)) throw new Error(`all_docs: ${r.total_rows}`);
  });
  // A user's _find over their own documents, sorted in memory (no index serves a user): it reads their rows only.
  find = await timedCpu(reads, async (i) => {
    const r = await call(basic(user(pick(i + 3)), 'pw'), 'POST', `/${dbName}/_find`,
      { selector: { n: { $gte: 0 } }, sort: [{ n: 'desc' }], limit: 25, execution_stats: true });
    if (r.docs.length !== Math.min(25, perUser) || r.execution_stats.total_keys_examined !== perUser) throw new Error(`find: ${JSON.stringify(r.execution_stats)}`);
  });
  // The same user's GET /{db} (authentication, the door, a few KV reads): what the machine gives any request now.
  info = await timedCpu(reads, (i) => call(basic(user(pick(i + 2)), 'pw'), 'GET', `/${dbName}`));
  if (readRounds > 1) console.log(JSON.stringify({ readRound: round, changesSince0Ms: changes, allDocsMs: allDocs, findSortedMs: find, dbInfoAsUserMs: info }));
}
const me = basic(user(0), 'pw');
const putAccess = await timedCpu(puts, (i) => call(me, 'PUT', `/${dbName}/p${i}`, { n: i, text: 'x'.repeat(200), _access: [user(0)] }));
// Plain against access, by the same admin, alternating rounds; the first round of each warms up and is not reported.
let putPlain;
let putAccessAdmin;
for (let round = 0; round < 3; round++) {
  putPlain = await timedCpu(puts, (i) => call(admin, 'PUT', `/${plainName}/p${round}-${i}`, { n: i, text: 'x'.repeat(200), _access: [user(0)] }));
  putAccessAdmin = await timedCpu(puts, (i) => call(admin, 'PUT', `/${dbName}/q${round}-${i}`, { n: i, text: 'x'.repeat(200), _access: [user(0)] }));
}
console.log(JSON.stringify({ docs, users, perUser, loadSeconds, changesSince0Ms: changes, allDocsMs: allDocs, findSortedMs: find, dbInfoAsUserMs: info,
  putAccessAsUserMs: putAccess, putAccessAsAdminMs: putAccessAdmin, putPlainAsAdminMs: putPlain }));
