// Partition queries against the size of the database (issue 29): a partitioned database of
// 100 documents per partition, grown in steps (--steps 10000,100000 documents); after each step,
// the latency of a partition's info, its _all_docs, a partitioned view query and a partitioned
// _find on a JSON index, each over random partitions. A partition query reads one range whatever
// the database's size, so the figures should not grow with it.
//
//   node src-it/bench/partition-bench.mjs --url http://admin:pass@127.0.0.1:5984 [--steps 10000,100000] [--requests 400]
//
// One client, sequential requests. Prints one JSON line per step and query; figures go to
// docs/benchmarks.md. Node standard library only.
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf('--' + name); return i < 0 ? fallback : args[i + 1]; };
const url = new URL(opt('url', 'http://admin:pass@127.0.0.1:5984'));
const steps = opt('steps', '10000,100000').split(',').map(Number);
const requests = Number(opt('requests', 400));
const PER_PARTITION = 100;
const auth = 'Basic ' + Buffer.from(decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password)).toString('base64');
const base = url.origin;

async function call(method, path, body) {
  const r = await fetch(base + path, { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

const partition = (i) => 'p' + String(Math.floor(i / PER_PARTITION)).padStart(5, '0');
function doc(i) {
  return { _id: `${partition(i)}:${String(i).padStart(7, '0')}`, n: i % PER_PARTITION, type: ['a', 'b', 'c'][i % 3], text: 'x'.repeat(200) };
}

function percentile(sorted, p) { return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]; }

async function measure(name, docs, make) {
  const parts = docs / PER_PARTITION;
  let x = 12345;
  const times = [];
  for (let r = 0; r < requests; r++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    const p = partition((x % parts) * PER_PARTITION);
    const [method, path, body, check] = make(p);
    const t0 = performance.now();
    const out = await call(method, path, body);
    times.push(performance.now() - t0);
    if (check && !check(out)) throw new Error(`${name}: unexpected answer for ${p}: ${JSON.stringify(out).slice(0, 200)}`);
  }
  times.sort((a, b) => a - b);
  console.log(JSON.stringify({ query: name, docs, partitions: parts, requests,
    p50_ms: +percentile(times, 0.5).toFixed(2), p90_ms: +percentile(times, 0.9).toFixed(2), p99_ms: +percentile(times, 0.99).toFixed(2) }));
}

const db = `partbench-${Date.now()}`;
await call('PUT', `/${db}?partitioned=true`);
await call('PUT', `/${db}/_design/v`, { views: { by_n: { map: 'function(doc) { emit(doc.n, null); }' } } });
await call('POST', `/${db}/_index`, { index: { fields: ['n'] }, ddoc: 'm', name: 'by_n' });
let loaded = 0;
for (const target of steps) {
  const t0 = performance.now();
  for (; loaded < target; loaded += 1000) {
    const batch = [];
    for (let i = loaded; i < Math.min(target, loaded + 1000); i++) batch.push(doc(i));
    await call('POST', `/${db}/_bulk_docs`, { docs: batch });
  }
  const loadS = (performance.now() - t0) / 1000;
  // bring the view and the index up to date before timing queries
  await call('GET', `/${db}/_partition/${partition(0)}/_design/v/_view/by_n?limit=1`);
  await call('POST', `/${db}/_partition/${partition(0)}/_find`, { selector: { n: { $gte: 0 } }, limit: 1 });
  console.log(JSON.stringify({ step: target, load_s: +loadS.toFixed(1) }));
  await measure('info', target, (p) => ['GET', `/${db}/_partition/${p}`, undefined, (o) => o.doc_count === PER_PARTITION]);
  await measure('all_docs', target, (p) => ['GET', `/${db}/_partition/${p}/_all_docs?limit=20`, undefined, (o) => o.rows.length === 20]);
  await measure('view', target, (p) => ['GET', `/${db}/_partition/${p}/_design/v/_view/by_n?start_key=40&limit=20`, undefined, (o) => o.rows.length === 20]);
  await measure('find', target, (p) => ['POST', `/${db}/_partition/${p}/_find`, { selector: { n: { $gte: 40 } }, limit: 20, use_index: ['m', 'by_n'] },
    (o) => o.docs.length === 20 && !o.warning]);
}
await call('DELETE', `/${db}`);
