// What JSON indexes cost writers: _bulk_docs throughput into a database with no index, then into
// one with three JSON indexes (created before the load, so the server keeps them current as the
// writes go: background builds, or with --interactive in each write's own transaction), and how
// long after the load the indexes are current (a _find that must bring them up to date).
//
//   node src-it/bench/mango-bulk-bench.mjs --url http://admin:admin@127.0.0.1:5984 [--docs 100000] [--interactive] [--rounds 2]
//
// Documents are couchbench's (about 300 bytes, 1,000 per request, one client). Prints one JSON line
// per database; figures go to docs/benchmarks.md. Node standard library only.
import { client, bulkBatches } from './couchbench-client.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf('--' + name); return i < 0 ? fallback : args[i + 1]; };
const url = new URL(opt('url', 'http://admin:admin@127.0.0.1:5984'));
const docs = Number(opt('docs', 100000));
const rounds = Number(opt('rounds', 2));
const interactive = args.includes('--interactive');
const call = client(url);
const batches = bulkBatches(docs);

async function load(indexes) {
  const db = `mangobulk-${indexes}-${Date.now()}`;
  await call('PUT', '/' + db);
  const fields = [['type', 'score'], ['name'], ['n']].slice(0, indexes);
  for (const f of fields) await call('POST', `/${db}/_index`, { index: { fields: f }, ...(interactive ? { interactive: true } : {}) });
  const t0 = performance.now();
  for (const b of batches) await call('POST', `/${db}/_bulk_docs`, b);
  const seconds = (performance.now() - t0) / 1000;
  let current = 0;
  if (indexes > 0) {
    const t1 = performance.now();
    for (const f of fields) await call('POST', `/${db}/_find`, { selector: { [f[0]]: { $gt: null } }, limit: 1 });
    current = (performance.now() - t1) / 1000;
  }
  await call('DELETE', '/' + db);
  return { indexes, interactive: indexes > 0 && interactive, docs, seconds: +seconds.toFixed(3), docs_per_s: Math.round(docs / seconds),
    indexes_current_after_s: +current.toFixed(3) };
}

for (let r = 0; r < rounds; r++) {
  for (const n of [0, 3]) console.log(JSON.stringify(await load(n)));
}
