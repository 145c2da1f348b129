// The replicator against real peers: Chaise servers from the jar and pouchdb-server from npm.
// Each test says what it proves. CHAISE_SLOW=1 adds the heaviest cases (see the `slow` flags).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { Chaise, PouchServer, CountingProxy, waitFor, snapshot, sleep } from './peers.mjs';

const SLOW = process.env.CHAISE_SLOW === '1';
// Short timings so backoff and lease expiry show within a test: 1 s crash backoff, leases of 2 s.
const FAST = 'replicator_backoff_base_ms = 1000\nreplicator_activity_timeout_ms = 2000\nreplicator_heartbeat_ms = 500\nreplicator_docs_rescan_ms = 2000';
const servers = [];
after(async () => { for (const s of servers) await s.close(); });

async function chaise(name, opts = {}) {
  const c = await new Chaise(name, { ini: FAST, ...opts }).start();
  servers.push(c);
  return c;
}

const pad = (i) => String(i).padStart(6, '0');

/**
 * n documents, every 20th with a conflict (a second branch written as a replicator would), every
 * 20th+1 deleted, every 100th+2 with a small attachment, and, if `big`, one attachment of `big` bytes.
 */
async function populate(server, db, n, big = 0) {
  await server.req('PUT', `/${db}`);
  for (let i = 0; i < n; i += 1000) {
    const docs = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) {
      const d = { _id: `doc${pad(j)}`, i: j, text: `document ${j} `.padEnd(200, 'x') };
      if (j % 100 === 2) d._attachments = { 'note.txt': { content_type: 'text/plain', data: Buffer.from(`attachment ${j}`).toString('base64') } };
      docs.push(d);
    }
    const r = await server.req('POST', `/${db}/_bulk_docs`, { docs });
    assert.equal(r.status, 201, r.text);
  }
  const conflicts = [];
  const deletions = [];
  const revs = await server.req('POST', `/${db}/_all_docs`, { keys: Array.from({ length: n }, (_, j) => `doc${pad(j)}`) });
  revs.json.rows.forEach((row, j) => {
    if (j % 20 === 0) conflicts.push({ _id: row.id, _rev: `1-${createHash('md5').update(row.id).digest('hex')}`, i: j, branch: 'other' });
    if (j % 20 === 1) deletions.push({ _id: row.id, _rev: row.value.rev, _deleted: true });
  });
  assert.equal((await server.req('POST', `/${db}/_bulk_docs`, { docs: conflicts, new_edits: false })).status, 201);
  assert.equal((await server.req('POST', `/${db}/_bulk_docs`, { docs: deletions })).status, 201);
  if (big > 0) {
    const blob = randomBytes(big);
    const r = await server.req('PUT', `/${db}/big/blob.bin`, blob, { 'Content-Type': 'application/octet-stream' });
    assert.equal(r.status, 201, r.text);
    return createHash('md5').update(blob).digest('base64');
  }
  return null;
}

async function replicate(on, body, status = 200) {
  const r = await on.req('POST', '/_replicate', body);
  assert.equal(r.status, status, r.text);
  return r.json;
}

async function attachmentMd5(server, path) {
  const r = await fetch(server.base + path, { headers: { Authorization: server.auth } });
  assert.equal(r.status, 200);
  return createHash('md5').update(Buffer.from(await r.arrayBuffer())).digest('base64');
}

test('two Chaise servers, both directions: 10,000 documents with conflicts, deletions and attachments (one of 20 MB) end the same', async () => {
  // Proves: pull (remote source, local target) and push (local source, remote target) copy every
  // leaf with its _revisions, deletions, _conflicts and attachment digests; the 20 MB body streams
  // through open_revs multipart and a multipart/related PUT.
  const a = await chaise('a');
  const b = await chaise('b');
  const md5 = await populate(a, 'big', 10_000, 20 * 1024 * 1024);
  const pull = await replicate(b, { source: a.url('big'), target: 'big', create_target: true });
  assert.equal(pull.ok, true);
  assert.equal(pull.history[0].doc_write_failures, 0);
  assert.deepEqual(await snapshot(b, 'big'), await snapshot(a, 'big'));
  assert.equal(await attachmentMd5(b, '/big/big/blob.bin'), md5);
  const info = (await b.req('GET', '/big')).json;
  assert.equal(info.doc_count, 9501);
  assert.equal(info.doc_del_count, 500);

  // now b moves on: edits, deletions and conflicts of its own, pushed back to a
  const all = (await b.req('GET', '/big/_all_docs?limit=300&startkey="doc000100"')).json.rows;
  const edits = all.slice(0, 100).map((r) => ({ _id: r.id, _rev: r.value.rev, edited: true }));
  const dels = all.slice(100, 150).map((r) => ({ _id: r.id, _rev: r.value.rev, _deleted: true }));
  const conf = all.slice(150, 200).map((r) => ({ _id: r.id, _rev: `2-${createHash('md5').update('b' + r.id).digest('hex')}`, _revisions: { start: 2, ids: [createHash('md5').update('b' + r.id).digest('hex'), r.value.rev.split('-')[1]] }, side: 'b' }));
  assert.equal((await b.req('POST', '/big/_bulk_docs', { docs: [...edits, ...dels] })).status, 201);
  assert.equal((await b.req('POST', '/big/_bulk_docs', { docs: conf, new_edits: false })).status, 201);
  const push = await replicate(b, { source: 'big', target: a.url('big') });
  assert.equal(push.history[0].docs_written, 200, JSON.stringify(push.history[0]));
  assert.deepEqual(await snapshot(a, 'big'), await snapshot(b, 'big'));
});

test('Chaise to pouchdb-server and back: the same documents, conflicts and attachments', async () => {
  // Proves: the replicator speaks to another implementation of the protocol in both directions
  // (pouchdb-server's _changes, _revs_diff, _bulk_docs and open_revs, in memory).
  const a = await chaise('p');
  const p = await new PouchServer().start();
  servers.push(p);
  await populate(a, 'tp', 500);
  const out = await replicate(a, { source: 'tp', target: p.url('tp'), create_target: true });
  assert.equal(out.history[0].doc_write_failures, 0, JSON.stringify(out));
  const back = await replicate(a, { source: p.url('tp'), target: 'back', create_target: true });
  assert.equal(back.history[0].doc_write_failures, 0, JSON.stringify(back));
  assert.deepEqual(await snapshot(a, 'back'), await snapshot(a, 'tp'));
  // and written on pouchdb-server's side, pulled into the existing database
  await p.req('PUT', '/tp/frompouch', { v: 1 });
  const again = await replicate(a, { source: p.url('tp'), target: 'tp' });
  assert.ok(again.history[0].docs_written >= 1, JSON.stringify(again));
  assert.equal((await a.req('GET', '/tp/frompouch')).json.v, 1);
  const pInfo = (await p.req('GET', '/tp')).json;
  assert.equal(pInfo.doc_count, (await a.req('GET', '/tp')).json.doc_count);
});

test('continuous: a write on the source appears on the target within 2 s, and keeps doing so', async () => {
  // Proves: a continuous pull follows the source's live feed (longpoll/continuous) and writes at once.
  const a = await chaise('ca');
  const b = await chaise('cb');
  await a.req('PUT', '/live');
  const r = await replicate(b, { source: a.url('live'), target: 'live', create_target: true, continuous: true }, 202);
  assert.match(r._local_id, /\+continuous\+create_target$/);
  await waitFor(async () => (await b.req('GET', '/live')).status === 200, 10_000, 'target created');
  for (let k = 0; k < 3; k++) {
    const t0 = Date.now();
    assert.equal((await a.req('PUT', `/live/w${k}`, { k })).status, 201);
    await waitFor(async () => (await b.req('GET', `/live/w${k}`)).status === 200, 2_000, `w${k} on the target`);
    assert.ok(Date.now() - t0 <= 2_000);
  }
  const jobs = (await b.req('GET', '/_scheduler/jobs')).json;
  assert.equal(jobs.jobs.find((j) => j.id === r._local_id).history[0].type, 'started');
  assert.equal((await b.req('POST', '/_replicate', { replication_id: r._local_id, cancel: true })).status, 200);
});

test('filtered by doc_ids, by a selector and by a JavaScript filter', async () => {
  // Proves: each filter reaches the remote source as CouchDB's replicator sends it (_doc_ids and
  // _selector by POST, filter=ddoc/name with query_params) and only matching documents are copied.
  const a = await chaise('fa');
  const b = await chaise('fb');
  await populate(a, 'f', 300);
  await a.req('PUT', '/f/_design/app', { filters: { big: 'function(doc, req) { return doc.i >= Number(req.query.from); }' } });
  await replicate(b, { source: a.url('f'), target: 'ids', create_target: true, doc_ids: ['doc000005', 'doc000006', 'nope'] });
  assert.deepEqual((await b.req('GET', '/ids/_all_docs')).json.rows.map((r) => r.id), ['doc000005', 'doc000006']);
  await replicate(b, { source: a.url('f'), target: 'sel', create_target: true, selector: { i: { $gte: 295 } } });
  assert.deepEqual((await b.req('GET', '/sel/_all_docs')).json.rows.map((r) => r.id), ['doc000295', 'doc000296', 'doc000297', 'doc000298', 'doc000299']);
  await replicate(b, { source: a.url('f'), target: 'js', create_target: true, filter: 'app/big', query_params: { from: '297' } });
  assert.deepEqual((await b.req('GET', '/js/_all_docs')).json.rows.map((r) => r.id), ['doc000297', 'doc000298', 'doc000299']);
});

test('a server killed with SIGKILL mid-replication resumes from its checkpoint and sends no copied document again', { timeout: 300_000 }, async () => {
  // Proves: checkpoints in _local/{id} on both sides let a restarted job resume; a proxy in front
  // of the source records every document the replicator fetched, and none fetched before the
  // checkpoint is fetched again after the restart.
  const n = SLOW ? 40_000 : 12_000;
  const a = await chaise('ka');
  await populate(a, 'src', n);
  const proxy = await new CountingProxy(a.port).start();
  servers.push(proxy);
  const b = await chaise('kb', { onDisk: true });
  // a local target in a _replicator document is reached as its user_ctx (CouchDB 2's rule; CouchDB 3 allows URLs only)
  const doc = { source: proxy.url('src', a.password), target: 'dst', create_target: true, checkpoint_interval: 300, worker_batch_size: 200, worker_processes: 1, user_ctx: { name: 'admin', roles: ['_admin'] } };
  assert.equal((await b.req('PUT', '/_replicator/kill', doc)).status, 201);
  await waitFor(async () => ((await b.req('GET', '/dst')).json?.doc_count ?? 0) >= n / 3, 120_000, 'a third copied');
  await b.kill('SIGKILL');
  const before = proxy.fetched.length;
  assert.ok(before < n, 'killed mid-replication');
  // the checkpoint the source holds: every change up to it was copied
  const locals = (await a.req('GET', '/src/_local_docs?include_docs=true')).json.rows;
  assert.equal(locals.length, 1, 'one checkpoint on the source');
  const checkpointed = locals[0].doc.source_last_seq;
  const covered = new Set();
  for (const row of (await a.req('GET', '/src/_changes')).json.results) {
    covered.add(row.id);
    if (row.seq === checkpointed) break;
  }
  assert.ok(covered.size > 0 && covered.size < n, `checkpoint covers ${covered.size}`);
  proxy.fetched.length = 0;
  await b.start(); // same data, same port
  await waitFor(async () => (await b.req('GET', '/_scheduler/docs/_replicator/kill')).json?.state === 'completed', 120_000, 'completed after restart');
  // ids, not requests: a conflicted document is asked for once per leaf, one with attachments by
  // _bulk_get and then by open_revs
  const after = new Set(proxy.fetched);
  const again = [...after].filter((id) => covered.has(id));
  console.log(`# SIGKILL: ${n} documents, ${before} fetched before the kill, the checkpoint covered ${covered.size}, ${after.size} fetched after the restart, ${again.length} of them again`);
  assert.deepEqual(again, [], 'nothing covered by the checkpoint was fetched again');
  assert.ok(after.size <= n - covered.size, `fetched ${after.size} after restart, ${n - covered.size} were left`);
  assert.deepEqual(await snapshot(b, 'dst'), await snapshot(a, 'src'));
});

test('a source that goes away: the job is crashing with backoff, then recovers by itself', { timeout: 180_000 }, async () => {
  // Proves: a _replicator job whose source dies is shown `crashing` (error_count, the reason) and
  // retried with backoff, and resumes when the source is back, without anyone touching it.
  const src = await chaise('gone', { onDisk: true });
  const b = await chaise('gb');
  await src.req('PUT', '/s');
  await src.req('PUT', '/s/first', { v: 1 });
  await b.req('PUT', '/_replicator/follow', { source: src.url('s'), target: b.url('t'), create_target: true, continuous: true, retries_per_request: 1 });
  await waitFor(async () => (await b.req('GET', '/t/first')).status === 200, 30_000, 'first copied');
  await src.kill('SIGKILL');
  const crashing = await waitFor(async () => {
    const d = (await b.req('GET', '/_scheduler/docs/_replicator/follow')).json;
    return d.state === 'crashing' ? d : null;
  }, 60_000, 'crashing');
  assert.ok(crashing.error_count >= 1, JSON.stringify(crashing));
  assert.ok(crashing.info?.error, JSON.stringify(crashing));
  await src.start();
  await src.req('PUT', '/s/second', { v: 2 });
  await waitFor(async () => (await b.req('GET', '/t/second')).status === 200, 60_000, 'second copied after the source came back');
  await waitFor(async () => (await b.req('GET', '/_scheduler/docs/_replicator/follow')).json.state === 'running', 30_000, 'running again');
});

test('bad input gets CouchDB\'s errors and nothing else is affected', async () => {
  // Proves: unknown databases, bad URLs, bad credentials and malformed _replicator documents are
  // answered with CouchDB's status and error, and the server goes on replicating.
  const a = await chaise('ea');
  await a.req('PUT', '/ok');
  await a.req('PUT', '/ok/d', { v: 1 });
  const cases = [
    [{ source: 'missing-db', target: 'x' }, 404, 'db_not_found'],
    [{ source: a.url('missing-db'), target: 'x' }, 404, 'db_not_found'],
    [{ source: 'http://', target: 'x' }, 400, 'invalid_replication'],
    [{ source: 'ftp://host/db', target: 'x' }, 400, 'invalid_replication'],
    [{ source: `http://admin:wrong@127.0.0.1:${a.port}/ok`, target: 'x' }, 401, 'unauthorized'],
    [{ source: 'ok', target: 'x', continuous: 'yes' }, 400, 'bad_request'],
    [{ source: 'ok', target: 'x', doc_ids: ['a'], selector: { a: 1 } }, 400, 'bad_request'],
    [{ target: 'x' }, 400, 'bad_request'],
    [{ source: 'ok', target: 'x', filter: 'nodesign/nofilter' }, 404, 'not_found'],
  ];
  for (const [body, status, error] of cases) {
    const r = await a.req('POST', '/_replicate', body);
    assert.equal(r.status, status, `${JSON.stringify(body)} -> ${r.text}`);
    assert.equal(r.json.error, error, r.text);
    assert.equal(typeof r.json.reason, 'string', r.text);
  }
  const anon = await fetch(`${a.base}/_replicate`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"source":"ok","target":"y"}' });
  assert.equal(anon.status, 401);
  // a malformed _replicator document is refused; one that slips in by replication is `failed`
  const bad = await a.req('PUT', '/_replicator/bad', { source: 'ok', target: 'http://' });
  assert.equal(bad.status, 403, bad.text);
  assert.equal(bad.json.error, 'forbidden');
  await a.req('POST', '/_replicator/_bulk_docs', { new_edits: false, docs: [{ _id: 'slipped', _rev: '1-abc', source: 42, target: 'x' }] });
  const failed = await waitFor(async () => {
    const d = (await a.req('GET', '/_scheduler/docs/_replicator/slipped')).json;
    return d.state === 'failed' ? d : null;
  }, 20_000, 'failed');
  assert.equal(failed.info.error, 'endpoint has an invalid url');
  // nothing else was affected
  const good = await replicate(a, { source: 'ok', target: 'ok2', create_target: true });
  assert.equal(good.history[0].docs_written, 1);
  assert.equal((await a.req('GET', '/_up')).status, 200);
});
