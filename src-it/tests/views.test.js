// Views through real clients: nano's view API and PouchDB's query() against Chaise's map/reduce.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Nano from 'nano';
import PouchDB from 'pouchdb';

const base = process.env.CHAISE_URL;
const auth = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const authedUrl = base.replace('://', `://${auth.username}:${encodeURIComponent(auth.password)}@`);
const unique = (p) => `${p}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

test('nano: map, reduce, group levels, keys and include_docs', async () => {
  const nano = Nano(authedUrl);
  const name = unique('views');
  await nano.db.create(name);
  const db = nano.use(name);
  const docs = [];
  for (let i = 0; i < 50; i++) docs.push({ _id: `d${String(i).padStart(2, '0')}`, type: ['apple', 'Banana', 'cherry'][i % 3], n: i, tags: [`t${i % 2}`] });
  await db.bulk({ docs });
  await db.insert({
    views: {
      byType: { map: 'function (doc) { if (doc.type) emit(doc.type, doc.n); }', reduce: '_stats' },
      byTag: { map: 'doc => { for (const t of doc.tags || []) emit([t, doc.type], 1); }', reduce: '_count' },
      js: { map: 'function (doc) { if (doc.n !== undefined) emit(doc.n % 5, doc.n); }', reduce: 'function (keys, values, rereduce) { return sum(values); }' },
    },
  }, '_design/v');

  const stats = await db.view('v', 'byType', { group: true });
  assert.deepEqual(stats.rows.map((r) => r.key), ['apple', 'Banana', 'cherry'], 'ICU order: case-insensitive first');
  assert.deepEqual(stats.rows[0].value, { sum: 408, count: 17, min: 0, max: 48, sumsqr: 13464 });

  const tags = await db.view('v', 'byTag', { group_level: 1 });
  assert.deepEqual(tags.rows, [{ key: ['t0'], value: 25 }, { key: ['t1'], value: 25 }]);

  const plain = await db.view('v', 'byType', { reduce: false, key: 'cherry', limit: 3, include_docs: true });
  assert.equal(plain.total_rows, 50);
  assert.deepEqual(plain.rows.map((r) => r.id), ['d02', 'd05', 'd08']);
  assert.equal(plain.rows[0].doc.n, 2);

  const byKeys = await db.view('v', 'js', { keys: [4, 0], group: true });
  assert.deepEqual(byKeys.rows, [{ key: 4, value: 4 + 9 + 14 + 19 + 24 + 29 + 34 + 39 + 44 + 49 }, { key: 0, value: 0 + 5 + 10 + 15 + 20 + 25 + 30 + 35 + 40 + 45 }]);
  const total = await db.view('v', 'js');
  assert.equal(total.rows[0].value, (49 * 50) / 2);

  await assert.rejects(db.view('v', 'nope'), (e) => e.statusCode === 404 && e.reason === 'missing_named_view');
  await assert.rejects(db.view('v', 'byType', { group: true, reduce: false }), (e) => e.statusCode === 400 && e.error === 'query_parse_error');

  // An edit shows in the next query.
  const d0 = await db.get('d00');
  await db.insert({ ...d0, type: 'zebra' });
  const after = await db.view('v', 'byType', { group: true });
  assert.deepEqual(after.rows.map((r) => r.key), ['apple', 'Banana', 'cherry', 'zebra']);
});

test('PouchDB: query() on a remote design document', async () => {
  const name = unique('pviews');
  const remote = new PouchDB(`${authedUrl}/${name}`);
  await remote.bulkDocs([{ _id: 'a', v: 3 }, { _id: 'b', v: 1 }, { _id: 'c', v: 2 }]);
  await remote.put({ _id: '_design/q', views: { byV: { map: 'function (doc) { emit(doc.v); }', reduce: '_count' } } });
  const res = await remote.query('q/byV', { reduce: false, descending: true });
  assert.deepEqual(res.rows.map((r) => r.id), ['a', 'c', 'b']);
  const count = await remote.query('q/byV');
  assert.equal(count.rows[0].value, 3);
  await remote.destroy();
});
