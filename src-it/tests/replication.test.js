// PouchDB 9 replicating with Chaise as its CouchDB peer: push, pull, conflicts, live sync, resume.
// Local databases use the memory adapter, so nothing is written to disk.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import memory from 'pouchdb-adapter-memory';

PouchDB.plugin(memory);

const base = process.env.CHAISE_URL;
const auth = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const unique = (p) => `${p}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
const local = (p) => new PouchDB(unique(p), { adapter: 'memory' });

/** A remote database whose requests are recorded: [{method, path, search, body, status}]. */
function remote(name, log = []) {
  const db = new PouchDB(`${base}/${name}`, {
    auth,
    fetch: async (url, opts) => {
      const u = new URL(url);
      const entry = { method: opts.method || 'GET', path: u.pathname, search: u.searchParams, body: opts.body };
      log.push(entry);
      const res = await globalThis.fetch(url, opts);
      entry.status = res.status;
      // PouchDB's http adapter reads attachments with res.buffer() when it exists (node-fetch, its
      // default in Node); Node's own fetch has only blob(), whose Blob the memory adapter cannot hash.
      res.buffer = async () => Buffer.from(await res.arrayBuffer());
      return res;
    },
  });
  return { db, log };
}

const jsonBodies = (log, suffix) => log.filter((r) => r.method === 'POST' && r.path.endsWith(suffix)).map((r) => JSON.parse(r.body));

/** Every document with its winner, conflicts and body, for comparing two databases. */
async function snapshot(db) {
  const all = await db.allDocs({ include_docs: true, conflicts: true });
  return all.rows.map((r) => ({ id: r.id, rev: r.value.rev, doc: r.doc, conflicts: [...(r.doc._conflicts || [])].sort() }));
}

const docs = (n, prefix = 'd') => Array.from({ length: n }, (_, i) => ({ _id: `${prefix}${String(i).padStart(5, '0')}`, i, text: `doc ${i}`, nested: { even: i % 2 === 0, tags: [i, 'x'] } }));

test('push 1,000 documents, pull them into an empty database, same documents', async () => {
  // Every 50th document carries an attachment; digests and bytes must survive both trips.
  const source = local('src');
  const withAtts = docs(1000).map((d) => (d.i % 50 === 0
    ? { ...d, _attachments: { 'note.txt': { content_type: 'text/plain', data: Buffer.from(`attachment of ${d._id}`).toString('base64') } } }
    : d));
  await source.bulkDocs(withAtts);
  await source.put({ _id: 'gone', v: 1 }).then((r) => source.remove('gone', r.rev));
  const name = unique('push');
  const { db: server, log } = remote(name);
  const push = await source.replicate.to(server);
  assert.equal(push.ok, true);
  assert.equal(push.docs_written, 1001);
  assert.ok(jsonBodies(log, '/_revs_diff').length > 0, 'PouchDB asked the server what it lacks');

  const info = await server.info();
  assert.equal(info.doc_count, 1000);
  assert.equal(info.doc_del_count, 1);

  const target = local('dst');
  const pull = await target.replicate.from(server);
  assert.equal(pull.ok, true);
  assert.equal(pull.docs_written, 1001);
  const bulkGets = log.filter((r) => r.method === 'POST' && r.path.endsWith('/_bulk_get'));
  assert.ok(bulkGets.length > 0 && bulkGets.every((r) => r.status === 200), 'PouchDB fetched the documents with _bulk_get');
  assert.ok(log.some((r) => r.path.endsWith('/_changes') && r.search.get('style') === 'all_docs'), 'and read _changes?style=all_docs');
  assert.deepEqual(await snapshot(target), await snapshot(source));
  const att = await target.getAttachment('d00050', 'note.txt');
  assert.equal(att.toString(), 'attachment of d00050');
  const meta = (await target.get('d00050'))._attachments['note.txt'];
  assert.equal(meta.digest, (await source.get('d00050'))._attachments['note.txt'].digest);
  const authHeader = { Authorization: 'Basic ' + Buffer.from(`${auth.username}:${auth.password}`).toString('base64') };
  const served = await fetch(`${base}/${name}/d00100/note.txt`, { headers: authHeader });
  assert.equal(await served.text(), 'attachment of d00100');
  const deleted = await target.get('gone', { revs: true, open_revs: 'all' });
  assert.equal(deleted[0].ok._deleted, true);

  // Nothing new: a second pull writes nothing.
  assert.equal((await target.replicate.from(server)).docs_written, 0);
});

test('conflicts made on both sides sync to the same winners and _conflicts', async () => {
  const a = local('a');
  const { db: b } = remote(unique('conflicts'));
  await a.bulkDocs([{ _id: 'x', v: 0 }, { _id: 'y', v: 0 }, { _id: 'z', v: 0 }]);
  await a.sync(b);
  // Each side edits every document independently; z is deleted on one side and edited on the other.
  for (const id of ['x', 'y']) {
    const la = await a.get(id);
    await a.put({ ...la, v: 'local' });
    const lb = await b.get(id);
    await b.put({ ...lb, v: 'remote', more: 1 });
  }
  const y = await a.get('y');
  await a.put({ ...y, v: 'local again' }); // a longer branch on one side
  await a.remove(await a.get('z'));
  const zb = await b.get('z');
  await b.put({ ...zb, v: 'remote' });
  await b.put({ _id: 'only-remote', v: 1 });
  await a.put({ _id: 'only-local', v: 1 });

  const result = await a.sync(b);
  assert.equal(result.push.ok, true);
  assert.equal(result.pull.ok, true);

  const sa = await snapshot(a);
  const sb = await snapshot(b);
  assert.deepEqual(sb, sa);
  const byId = Object.fromEntries(sa.map((r) => [r.id, r]));
  assert.equal(byId.x.conflicts.length, 1, 'x has one conflict');
  assert.match(byId.y.rev, /^3-/, 'the longer branch wins');
  assert.equal(byId.y.doc.v, 'local again');
  assert.equal(byId.z.doc.v, 'remote', 'a live leaf beats a deleted one');
  for (const id of ['x', 'y', 'z']) {
    const leavesA = (await a.get(id, { open_revs: 'all' })).map((r) => r.ok._rev).sort();
    const leavesB = (await b.get(id, { open_revs: 'all' })).map((r) => r.ok._rev).sort();
    assert.deepEqual(leavesB, leavesA, `${id}: the same leaves, deleted ones included`);
    assert.equal(leavesA.length, 2);
  }

  // Resolving the conflict on one side reaches the other.
  await a.remove('x', byId.x.conflicts[0]);
  await a.sync(b);
  assert.equal((await b.get('x', { conflicts: true }))._conflicts, undefined);
});

test('an interrupted replication resumes from its checkpoint', async () => {
  const source = local('resume');
  await source.bulkDocs(docs(300, 'r'));
  const name = unique('resume');

  const first = remote(name);
  const rep = source.replicate.to(first.db, { batch_size: 50 });
  let cancelled = false;
  rep.on('change', (info) => {
    if (info.docs_written >= 100 && !cancelled) {
      cancelled = true;
      rep.cancel();
    }
  });
  const firstResult = await rep;
  assert.equal(cancelled, true);
  const sentFirst = jsonBodies(first.log, '/_bulk_docs').reduce((n, b) => n + b.docs.length, 0);
  assert.ok(sentFirst >= 100 && sentFirst < 300, `the first run stopped part way (${sentFirst} sent)`);
  const checkpoints = first.log.filter((r) => r.method === 'PUT' && r.path.includes('/_local/'));
  assert.ok(checkpoints.length > 0, 'checkpoints were written to the server');

  const second = remote(name);
  const done = await source.replicate.to(second.db, { batch_size: 50 });
  assert.equal(done.ok, true);
  const asked = jsonBodies(second.log, '/_revs_diff').reduce((n, b) => n + Object.keys(b).length, 0);
  const sent = jsonBodies(second.log, '/_bulk_docs').reduce((n, b) => n + b.docs.length, 0);
  // From the checkpoint: what the first run did not finish, and at most the one batch in flight again.
  assert.ok(asked <= 300 - sentFirst + 50, `resumed: asked about ${asked} documents after ${sentFirst} were sent`);
  assert.equal(sentFirst + sent >= 300, true);
  assert.ok(sent < 300);
  assert.equal((await second.db.info()).doc_count, 300);
  assert.ok(firstResult.docs_written + done.docs_written >= 300);
});

test('a live sync sees a remote write within a second', async () => {
  const a = local('live');
  const name = unique('live');
  const { db: b } = remote(name);
  await b.info(); // create it
  const sync = a.sync(b, { live: true, retry: true });
  try {
    await new Promise((resolve) => sync.on('paused', resolve)); // caught up and waiting on the server's feed
    const arrived = new Promise((resolve) => {
      sync.on('change', (c) => {
        if (c.direction === 'pull' && c.change.docs.some((d) => d._id === 'hello')) resolve(Date.now());
      });
    });
    // Written by another client, straight to the server.
    const started = Date.now();
    const put = await globalThis.fetch(`${base}/${name}/hello`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from(`${auth.username}:${auth.password}`).toString('base64') },
      body: JSON.stringify({ greeting: 'hi' }),
    });
    assert.equal(put.status, 201);
    // A generous wait: this checks that the change arrives through the live feed, not how fast.
    const at = await Promise.race([arrived, new Promise((_, reject) => setTimeout(() => reject(new Error('no change within 10 s')), 10_000))]);
    const ms = at - started;
    console.log(`live sync: remote write seen locally after ${ms} ms`);
    assert.ok(ms < 1000, `seen after ${ms} ms; the live feed should deliver it within a second`);
    assert.equal((await a.get('hello')).greeting, 'hi');
  } finally {
    sync.cancel();
  }
});
