// Nouveau full-text search over couchbench's 100,000 bulk-phase documents (about 300 bytes each,
// 1,000 per _bulk_docs, one client):
//   1. load them into a database with no index (docs/s);
//   2. save the design document below and time the first query, which builds the index;
//   3. query latency, `--queries` of each kind, one client, after a warm-up:
//        term   q=type:<one of ten>            limit=25  (a string field)
//        text   q=name:<a number>              limit=25  (a text field: "user-123" is two tokens)
//        range  q=score:[a TO a+1000]          limit=25  (a double field)
//        facet  q=*:*  counts=["type"]  ranges={"score": five bands}  limit=25
//   4. load them again into a database that has the design document, while autoupdate keeps the
//      index current in the background (docs/s; the loss against 1.), and how long after the load
//      the index answers a query with update=true.
//
// With --server-pid, each latency line also gives the server's CPU per query (all its threads,
// from /proc: JIT and GC included), the figure to compare on a loaded machine.
//
//   node src-it/bench/nouveau-bench.mjs --url http://admin:admin@127.0.0.1:5984 [--docs 100000] [--queries 500] [--server-pid <pid>]
//     [--query-db <name>: only 3., on a database of an earlier run, e.g. to compare two jars on the same index]
//
// Prints one JSON line per figure; figures go to docs/benchmarks.md. Node standard library only.
import { readFileSync, readdirSync } from 'node:fs';
import { client, bulkBatches, TYPES } from './couchbench-client.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf('--' + name); return i < 0 ? fallback : args[i + 1]; };
const url = new URL(opt('url', 'http://admin:admin@127.0.0.1:5984'));
const docs = Number(opt('docs', 100000));
const queries = Number(opt('queries', 500));
const pid = opt('server-pid', null);
const call = client(url);
const batches = bulkBatches(docs);

const DDOC = { nouveau: { idx: { default_analyzer: 'standard', index: `function (doc) {
  if (!doc.type) return;
  index('string', 'type', doc.type, {store: true});
  index('double', 'score', doc.score);
  index('text', 'name', doc.name);
  for (var i = 0; i < doc.tags.length; i++) index('string', 'tags', doc.tags[i]);
}` } } };

function memory() {
  if (!pid) return {};
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
  const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)[1]);
  return { rss_mb: Math.round(rss / 1024), rss_peak_mb: Math.round(hwm / 1024) };
}

async function load(db) {
  const t0 = performance.now();
  for (const b of batches) await call('POST', `/${db}/_bulk_docs`, b);
  return docs / ((performance.now() - t0) / 1000);
}

// The server's CPU time (user + system, ms) from /proc, all threads and those less the JIT compiler
// threads: per query these are figures the machine's load does not inflate.
function cpuMs() {
  if (!pid) return null;
  let all = 0, jit = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat, comm;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      comm = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8');
    } catch { continue; } // the thread ended
    const f = stat.split(') ')[1].split(' ');
    const ms = (Number(f[11]) + Number(f[12])) * 10; // utime, stime in clock ticks of 10 ms
    all += ms;
    if (/^C[12] Compi/.test(comm)) jit += ms;
  }
  return { all, jit };
}

function pct(xs, p) { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; }

async function latency(db, kind, make) {
  for (let i = 0; i < 50; i++) await call('POST', `/${db}/_design/d/_nouveau/idx`, make(i)); // warm-up
  const ms = [];
  const cpu0 = cpuMs();
  for (let i = 0; i < queries; i++) {
    const t0 = performance.now();
    await call('POST', `/${db}/_design/d/_nouveau/idx`, make(i));
    ms.push(performance.now() - t0);
  }
  const cpu1 = cpuMs();
  const cpu = pid ? { server_cpu_ms_per_query: +((cpu1.all - cpu0.all) / queries).toFixed(2),
    less_jit: +((cpu1.all - cpu1.jit - cpu0.all + cpu0.jit) / queries).toFixed(2) } : {};
  console.log(JSON.stringify({ kind, queries, p50_ms: +pct(ms, 0.5).toFixed(2), p99_ms: +pct(ms, 0.99).toFixed(2), ...cpu, ...memory() }));
}

const stamp = Date.now();
// --query-db <name>: only the query latencies (3.), over a database an earlier run loaded and indexed.
const only = opt('query-db', null);
const plain = only ?? `nouveaubench-plain-${stamp}`;
let plainRate;
if (!only) {
  await call('PUT', '/' + plain);
  plainRate = await load(plain);
  console.log(JSON.stringify({ kind: 'load, no index', docs, docs_per_s: Math.round(plainRate), ...memory() }));
  await call('PUT', `/${plain}/_design/d`, DDOC);
}
let t0 = performance.now();
const all = await call('POST', `/${plain}/_design/d/_nouveau/idx`, { q: '*:*', limit: 1 });
console.log(JSON.stringify({ kind: only ? 'first query' : 'first build', docs, seconds: +((performance.now() - t0) / 1000).toFixed(1), total_hits: all.total_hits, ...memory() }));

await latency(plain, 'term', i => ({ q: `type:${TYPES[i % 10]}`, limit: 25 }));
await latency(plain, 'text', i => ({ q: `name:${(i * 7919) % docs}`, limit: 25 }));
await latency(plain, 'range', i => { const a = (i * 9973) % 999000; return { q: `score:[${a} TO ${a + 1000}]`, limit: 25 }; });
await latency(plain, 'facet', () => ({ q: '*:*', limit: 25, counts: ['type'],
  ranges: { score: [0, 1, 2, 3, 4].map(k => ({ label: 'b' + k, min: k * 200000, max: (k + 1) * 200000, max_inclusive: false })) } }));

if (only) process.exit(0);
const kept = `nouveaubench-kept-${stamp}`;
await call('PUT', '/' + kept);
await call('PUT', `/${kept}/_design/d`, DDOC);
const keptRate = await load(kept);
t0 = performance.now();
await call('POST', `/${kept}/_design/d/_nouveau/idx`, { q: '*:*', limit: 1 });
console.log(JSON.stringify({ kind: 'load, index kept current in the background', docs, docs_per_s: Math.round(keptRate),
  loss_pct: Math.round((1 - keptRate / plainRate) * 100), current_after_s: +((performance.now() - t0) / 1000).toFixed(1), ...memory() }));
