// Real CouchDB clients against Chaise. NodeClientsTest starts the server and sets CHAISE_URL etc.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Nano from 'nano';
import PouchDB from 'pouchdb';

const base = process.env.CHAISE_URL;
const auth = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const authedUrl = base.replace('://', `://${auth.username}:${encodeURIComponent(auth.password)}@`);
const unique = (p) => `${p}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

test('server root and auth', async () => {
  const root = await (await fetch(base + '/')).json();
  assert.equal(root.couchdb, 'Welcome');
  assert.equal((await fetch(base + '/_all_dbs')).status, 401, 'no admin party');
  const nano = Nano(authedUrl);
  const session = await nano.request({ path: '_session' });
  assert.deepEqual(session.userCtx.roles.includes('_admin'), true);
});

test('nano: database and document CRUD with CouchDB errors', async () => {
  const nano = Nano(authedUrl);
  const name = unique('nano');
  await nano.db.create(name);
  await assert.rejects(nano.db.create(name), (e) => e.statusCode === 412 && e.error === 'file_exists');
  await assert.rejects(nano.db.create('Bad Name'), (e) => e.statusCode === 400 && e.error === 'illegal_database_name');
  const db = nano.use(name);
  const r1 = await db.insert({ a: 1 }, 'd1');
  assert.ok(r1.ok && /^1-[0-9a-f]{32}$/.test(r1.rev));
  const d = await db.get('d1');
  assert.deepEqual(d, { _id: 'd1', _rev: r1.rev, a: 1 });
  await assert.rejects(db.insert({ a: 3 }, 'd1'), (e) => e.statusCode === 409 && e.error === 'conflict');
  const r2 = await db.insert({ a: 2, _rev: r1.rev }, 'd1');
  assert.match(r2.rev, /^2-/);
  const bulk = await db.bulk({ docs: [{ _id: 'b1', n: 1 }, { _id: 'b2', n: 2 }, { _id: 'd1', a: 9 }] });
  assert.equal(bulk[0].ok, true);
  assert.equal(bulk[2].error, 'conflict');
  const list = await db.list({ include_docs: true });
  assert.equal(list.total_rows, 3);
  assert.deepEqual(list.rows.map((r) => r.id), ['b1', 'b2', 'd1']);
  assert.equal(list.rows[0].doc.n, 1);
  const some = await db.list({ startkey: 'b2', limit: 1 });
  assert.deepEqual(some.rows.map((r) => r.id), ['b2']);
  const keys = await db.fetch({ keys: ['b1', 'nope'] });
  assert.equal(keys.rows[1].error, 'not_found');
  const ch = await db.changes({ since: 0 });
  assert.equal(ch.results.length, 3);
  assert.equal(ch.last_seq, ch.results[2].seq);
  assert.equal((await db.changes({ since: ch.last_seq })).results.length, 0);
  const info = await db.info();
  assert.equal(info.doc_count, 3);
  await db.destroy('d1', r2.rev);
  await assert.rejects(db.get('d1'), (e) => e.statusCode === 404 && e.reason === 'deleted');
  await assert.rejects(db.get('never'), (e) => e.statusCode === 404 && e.reason === 'missing');
  assert.equal((await db.info()).doc_del_count, 1);
});

test('nano: _local documents have 0-N revisions', async () => {
  const nano = Nano(authedUrl);
  const name = unique('local');
  await nano.db.create(name);
  const db = nano.use(name);
  const r = await db.insert({ cp: 1 }, '_local/checkpoint');
  assert.equal(r.rev, '0-1');
  const got = await db.get('_local/checkpoint');
  assert.deepEqual(got, { _id: '_local/checkpoint', _rev: '0-1', cp: 1 });
});

test('PouchDB over HTTP: put, get, bulkDocs, allDocs, changes, conflicts, remove', async () => {
  const db = new PouchDB(`${base}/${unique('pouch')}`, { auth });
  const info = await db.info(); // creates the database, as PouchDB does
  assert.equal(info.doc_count, 0);
  const put = await db.put({ _id: 'p1', v: 1 });
  assert.ok(put.ok);
  assert.equal((await db.get('p1')).v, 1);
  const bulk = await db.bulkDocs([{ _id: 'p2' }, { _id: 'p3' }]);
  assert.ok(bulk.every((x) => x.ok));
  const all = await db.allDocs({ include_docs: true, startkey: 'p2' });
  assert.deepEqual(all.rows.map((r) => r.id), ['p2', 'p3']);
  const changes = await db.changes({ since: 0, include_docs: true });
  assert.equal(changes.results.length, 3);
  await db.bulkDocs([{ _id: 'p1', _rev: '1-ffffffffffffffffffffffffffffffff', v: 9 }], { new_edits: false });
  const withConflicts = await db.get('p1', { conflicts: true });
  assert.equal(withConflicts._rev, '1-ffffffffffffffffffffffffffffffff', 'the higher rev hash wins');
  assert.deepEqual(withConflicts._conflicts, [put.rev]);
  const removed = await db.remove(await db.get('p2'));
  assert.ok(removed.ok);
  await assert.rejects(db.get('p2'), (e) => e.status === 404);
});

test('nano: find on the special _all_docs index, paged by bookmark', async () => {
  const nano = Nano(authedUrl);
  const name = unique('find');
  await nano.db.create(name);
  const db = nano.use(name);
  await db.bulk({ docs: Array.from({ length: 12 }, (_, i) => ({ _id: `k${String(i).padStart(2, '0')}`, even: i % 2 === 0, i })) });
  const first = await db.find({ selector: { even: true, i: { $gte: 2 } }, fields: ['_id', 'i'], limit: 3 });
  assert.deepEqual(first.docs, [{ _id: 'k02', i: 2 }, { _id: 'k04', i: 4 }, { _id: 'k06', i: 6 }]);
  assert.match(first.warning, /No matching index found/);
  const next = await db.find({ selector: { even: true, i: { $gte: 2 } }, fields: ['_id'], limit: 3, bookmark: first.bookmark });
  assert.deepEqual(next.docs.map((d) => d._id), ['k08', 'k10']);
  await assert.rejects(db.find({ selector: {}, sort: ['i'] }), (e) => e.statusCode === 400 && e.error === 'no_usable_index');
});
