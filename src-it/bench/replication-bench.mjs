// Replication throughput: PouchDB 9 (memory adapter, in this process) pushing N documents to a
// CouchDB-compatible server, then pulling them into an empty local database.
//
//   node src-it/bench/replication-bench.mjs --url http://admin:admin@127.0.0.1:5984 [--docs 20000] [--atts 0]
//
// Run it from src-it/ (or with NODE_PATH=src-it/node_modules) so PouchDB resolves. --atts N gives
// every Nth document a 1 KB attachment. Prints one JSON line per phase; figures go to docs/benchmarks.md.
import PouchDB from 'pouchdb';
import memory from 'pouchdb-adapter-memory';

PouchDB.plugin(memory);
const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const url = new URL(args.url ?? 'http://admin:admin@127.0.0.1:5984');
const n = Number(args.docs ?? 20000);
const attsEvery = Number(args.atts ?? 0);
const auth = { username: decodeURIComponent(url.username), password: decodeURIComponent(url.password) };
url.username = '';
url.password = '';
const base = url.toString().replace(/\/$/, '');
const name = `replbench-${Date.now()}`;
const fetchWithBuffer = async (u, o) => {
  const res = await globalThis.fetch(u, o);
  res.buffer = async () => Buffer.from(await res.arrayBuffer());
  return res;
};
const remote = new PouchDB(`${base}/${name}`, auth.username ? { auth, fetch: fetchWithBuffer } : { fetch: fetchWithBuffer });

const source = new PouchDB(`src-${name}`, { adapter: 'memory' });
const blob = Buffer.alloc(1024, 7).toString('base64');
const docs = [];
for (let i = 0; i < n; i++) {
  const d = { _id: `doc-${String(i).padStart(8, '0')}`, type: ['a', 'b', 'c'][i % 3], n: i, text: `document number ${i}`, tags: ['x', 'y'] };
  if (attsEvery > 0 && i % attsEvery === 0) d._attachments = { 'a.bin': { content_type: 'application/octet-stream', data: blob } };
  docs.push(d);
}
for (let i = 0; i < n; i += 1000) await source.bulkDocs(docs.slice(i, i + 1000));

let t = process.hrtime.bigint();
const push = await source.replicate.to(remote, { batch_size: 500 });
let s = Number(process.hrtime.bigint() - t) / 1e9;
console.log(JSON.stringify({ phase: 'push', docs: push.docs_written, seconds: +s.toFixed(3), docs_per_s: +(push.docs_written / s).toFixed(1) }));

const target = new PouchDB(`dst-${name}`, { adapter: 'memory' });
t = process.hrtime.bigint();
const pull = await target.replicate.from(remote, { batch_size: 500 });
s = Number(process.hrtime.bigint() - t) / 1e9;
console.log(JSON.stringify({ phase: 'pull', docs: pull.docs_written, seconds: +s.toFixed(3), docs_per_s: +(pull.docs_written / s).toFixed(1) }));
await remote.destroy();
