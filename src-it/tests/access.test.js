// Per-document access (issue 28): two users sync their own PouchDB 9 replicas with one access
// database, in both directions; a document moved from one to the other leaves the first replica
// and reaches the second; deletions travel both ways. A user's Mango query (nano) finds their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import PouchDB from 'pouchdb';
import memory from 'pouchdb-adapter-memory';
import Nano from 'nano';

PouchDB.plugin(memory);

const base = process.env.CHAISE_URL;
const admin = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const unique = (p) => `${p}${Date.now()}${Math.floor(Math.random() * 1e6)}`;

async function asAdmin(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: { 'Content-Type': 'application/json', Authorization: 'Basic ' + Buffer.from(`${admin.username}:${admin.password}`).toString('base64') },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** A user's remote view of the database (PouchDB's http adapter, signed in as them) and their own replica. */
function replica(user, dbName) {
  const remote = new PouchDB(`${base}/${dbName}`, {
    auth: { username: user, password: `pw-${user}` },
    fetch: async (url, opts) => {
      const res = await globalThis.fetch(url, opts);
      res.buffer = async () => Buffer.from(await res.arrayBuffer());
      return res;
    },
  });
  return { remote, local: new PouchDB(unique(`${user}-replica`), { adapter: 'memory' }) };
}

const ids = async (db) => (await db.allDocs()).rows.map((r) => r.id);

test('two users sync their own replicas of one access database, a document moves between them, deletions travel both ways', async () => {
  assert.equal((await asAdmin('PUT', '/_node/_local/_config/per_doc_access/enable', 'true')).status, 200);
  await asAdmin('PUT', '/_users');
  const alice = unique('alice');
  const bob = unique('bob');
  for (const u of [alice, bob]) {
    assert.equal((await asAdmin('PUT', `/_users/org.couchdb.user:${u}`, { name: u, password: `pw-${u}`, roles: [], type: 'user' })).status, 201);
  }
  const dbName = unique('access');
  assert.equal((await asAdmin('PUT', `/${dbName}?access=true`)).status, 201);
  assert.equal((await asAdmin('PUT', `/${dbName}/_security`, { members: { roles: ['_users'] }, admins: { roles: ['_admin'] } })).status, 200);

  const a = replica(alice, dbName);
  const b = replica(bob, dbName);
  await a.local.bulkDocs([{ _id: 'a1', v: 1, _access: [alice] }, { _id: 'moving', v: 1, _access: [alice] }]);
  await b.local.bulkDocs([{ _id: 'b1', v: 1, _access: [bob] }, { _id: 'b2', v: 1, _access: [bob] }]);

  // Both push their own documents and pull only their own.
  for (const r of [a, b]) {
    const res = await r.local.sync(r.remote);
    assert.equal(res.push.ok, true);
    assert.equal(res.pull.ok, true);
    assert.equal(res.push.doc_write_failures, 0, JSON.stringify(res.push.errors));
  }
  assert.deepEqual(await ids(a.local), ['a1', 'moving']);
  assert.deepEqual(await ids(b.local), ['b1', 'b2']);
  assert.deepEqual((await a.remote.allDocs()).rows.map((r) => r.id), ['a1', 'moving']);
  assert.equal((await a.remote.allDocs()).total_rows, 2); // alice's count, not the database's
  assert.equal((await asAdmin('GET', `/${dbName}/_all_docs`)).json.total_rows, 4);

  // The admin gives 'moving' to bob: alice's replica drops it, bob's gets it.
  const moving = (await asAdmin('GET', `/${dbName}/moving`)).json;
  assert.equal((await asAdmin('PUT', `/${dbName}/moving`, { ...moving, v: 2, _access: [bob] })).status, 201);
  await a.local.sync(a.remote);
  await b.local.sync(b.remote);
  assert.deepEqual(await ids(a.local), ['a1']);
  await assert.rejects(a.local.get('moving'), (e) => e.status === 404);
  assert.deepEqual(await ids(b.local), ['b1', 'b2', 'moving']);
  assert.equal((await b.local.get('moving')).v, 2);

  // Bob edits the moved document and deletes one of his; alice deletes hers: both travel up.
  const m = await b.local.get('moving');
  await b.local.put({ ...m, v: 3 });
  await b.local.remove(await b.local.get('b2'));
  await a.local.remove(await a.local.get('a1'));
  for (const r of [a, b]) {
    const res = await r.local.sync(r.remote);
    assert.equal(res.push.doc_write_failures, 0, JSON.stringify(res.push.errors));
  }
  const all = (await asAdmin('GET', `/${dbName}/_all_docs`)).json.rows.map((r) => r.id);
  assert.deepEqual(all, ['b1', 'moving']);
  assert.equal((await asAdmin('GET', `/${dbName}/moving`)).json.v, 3);
  assert.deepEqual(await ids(a.local), []);

  // A fresh replica of each user gets exactly their documents.
  const a2 = replica(alice, dbName);
  const b2 = replica(bob, dbName);
  await a2.local.replicate.from(a2.remote);
  await b2.local.replicate.from(b2.remote);
  assert.deepEqual(await ids(a2.local), []);
  assert.deepEqual(await ids(b2.local), ['b1', 'moving']);
});

test("a user's Mango query through nano finds their own documents only, sorted without an index", async () => {
  assert.equal((await asAdmin('PUT', '/_node/_local/_config/per_doc_access/enable', 'true')).status, 200);
  await asAdmin('PUT', '/_users');
  const carol = unique('carol');
  assert.equal((await asAdmin('PUT', `/_users/org.couchdb.user:${carol}`, { name: carol, password: `pw-${carol}`, roles: [], type: 'user' })).status, 201);
  const dbName = unique('access-find');
  assert.equal((await asAdmin('PUT', `/${dbName}?access=true`)).status, 201);
  assert.equal((await asAdmin('PUT', `/${dbName}/_security`, { members: { roles: ['_users'] }, admins: { roles: ['_admin'] } })).status, 200);
  const docs = [];
  for (let i = 0; i < 30; i++) docs.push({ _id: `d${i}`, n: (i * 7) % 30, _access: i % 3 === 0 ? [carol] : ['someone-else'] });
  assert.equal((await asAdmin('POST', `/${dbName}/_bulk_docs`, { docs })).status, 201);

  const url = new URL(base);
  url.username = carol;
  url.password = `pw-${carol}`;
  const db = Nano(url.toString().replace(/\/$/, '')).use(dbName);
  const mine = docs.filter((d) => d._access[0] === carol).sort((x, y) => y.n - x.n);
  const first = await db.find({ selector: { n: { $gte: 0 } }, sort: [{ n: 'desc' }], fields: ['_id', 'n'], limit: 4 });
  assert.deepEqual(first.docs, mine.slice(0, 4).map((d) => ({ _id: d._id, n: d.n })));
  const next = await db.find({ selector: { n: { $gte: 0 } }, sort: [{ n: 'desc' }], fields: ['_id', 'n'], limit: 100, bookmark: first.bookmark });
  assert.deepEqual(next.docs, mine.slice(4).map((d) => ({ _id: d._id, n: d.n })));
  await assert.rejects(db.createIndex({ index: { fields: ['n'] } }), (e) => e.statusCode === 403);
});
