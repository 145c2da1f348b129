// Mango through a real client: nano's createIndex, find and findAsStream, and _explain/_index
// through nano.request, against Chaise's JSON indexes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Nano from 'nano';

const base = process.env.CHAISE_URL;
const auth = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const authedUrl = base.replace('://', `://${auth.username}:${encodeURIComponent(auth.password)}@`);
const unique = (p) => `${p}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

test('nano: createIndex, find with sort, fields and bookmarks, explain', async () => {
  const nano = Nano(authedUrl);
  const name = unique('mango');
  await nano.db.create(name);
  const db = nano.use(name);
  const docs = [];
  for (let i = 0; i < 120; i++) docs.push({ _id: `p${String(i).padStart(3, '0')}`, kind: ['cat', 'dog', 'Eel'][i % 3], age: (i * 13) % 40, name: `n${i}` });
  await db.bulk({ docs });

  const created = await db.createIndex({ index: { fields: ['kind', 'age'] }, name: 'kind-age', ddoc: 'pets' });
  assert.deepEqual(created, { result: 'created', id: '_design/pets', name: 'kind-age' });
  assert.equal((await db.createIndex({ index: { fields: ['kind', 'age'] }, name: 'kind-age', ddoc: 'pets' })).result, 'exists');
  const generated = await db.createIndex({ index: { fields: ['name'] } });
  assert.match(generated.id, /^_design\/[0-9a-f]{40}$/, "CouchDB's generated design document name");
  assert.equal(generated.name, generated.id.slice('_design/'.length));

  const sorted = await db.find({ selector: { kind: 'dog', age: { $gte: 10 } }, sort: [{ kind: 'desc' }, { age: 'desc' }], fields: ['_id', 'age'], limit: 5, execution_stats: true });
  assert.equal(sorted.docs.length, 5);
  assert.deepEqual(sorted.docs.map((d) => Object.keys(d)), Array(5).fill(['_id', 'age']));
  for (let i = 1; i < 5; i++) assert.ok(sorted.docs[i - 1].age >= sorted.docs[i].age);
  assert.equal(sorted.warning, undefined, 'served by the index');
  assert.equal(sorted.execution_stats.total_docs_examined, 0, 'covering: answered from the index alone');

  // Pages by bookmark add up to the whole answer.
  const all = await db.find({ selector: { kind: { $gt: 'a' } }, sort: ['kind', 'age'], limit: 1000 });
  let bookmark;
  const paged = [];
  for (;;) {
    const page = await db.find({ selector: { kind: { $gt: 'a' } }, sort: ['kind', 'age'], limit: 25, bookmark });
    paged.push(...page.docs.map((d) => d._id));
    bookmark = page.bookmark;
    if (page.docs.length < 25) break;
  }
  assert.deepEqual(paged, all.docs.map((d) => d._id));
  assert.equal(paged.length, 120);

  const streamed = [];
  await new Promise((resolve, reject) => {
    let text = '';
    db.findAsStream({ selector: { kind: 'cat' }, fields: ['_id'], limit: 3 })
      .on('data', (chunk) => { text += chunk; })
      .on('end', () => { streamed.push(...JSON.parse(text).docs); resolve(); })
      .on('error', reject);
  });
  assert.equal(streamed.length, 3);

  const explain = await nano.request({ db: name, method: 'post', path: '_explain', body: { selector: { kind: 'cat', age: { $lt: 5 } }, fields: ['_id'] } });
  assert.equal(explain.index.ddoc, '_design/pets');
  assert.deepEqual(explain.mrargs.start_key, ['cat']);
  assert.deepEqual(explain.mrargs.end_key, ['cat', 5, '<MAX>']);
  assert.ok(Array.isArray(explain.index_candidates));
  assert.equal(explain.covering, true);

  const list = await nano.request({ db: name, path: '_index' });
  assert.equal(list.total_rows, 3);
  assert.deepEqual(list.indexes.map((i) => i.name).slice(0, 1), ['_all_docs']);
  await nano.request({ db: name, method: 'delete', path: '_index/pets/json/kind-age' });
  await assert.rejects(db.find({ selector: { kind: 'dog' }, sort: ['kind'] }), (e) => e.statusCode === 400 && e.error === 'no_usable_index');
  await assert.rejects(db.createIndex({ index: { fields: ['x'] }, type: 'text' }), (e) => e.statusCode === 501);
  await nano.db.destroy(name);
});
