// Users from the _users database and validate_doc_update, through nano and PouchDB.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Nano from 'nano';
import PouchDB from 'pouchdb';
import memory from 'pouchdb-adapter-memory';

PouchDB.plugin(memory);

const base = process.env.CHAISE_URL;
const admin = { username: process.env.CHAISE_ADMIN, password: process.env.CHAISE_PASSWORD };
const withAuth = (u, p) => base.replace('://', `://${encodeURIComponent(u)}:${encodeURIComponent(p)}@`);
const unique = (p) => `${p}${Date.now()}${Math.floor(Math.random() * 1e6)}`;

test('nano: _users as CouchDB 3.5 has it (admin-only), a user signs in and is held to a validate_doc_update', async () => {
  const root = Nano(withAuth(admin.username, admin.password));
  await root.db.create('_users').catch((e) => assert.equal(e.statusCode, 412));
  const name = unique('user');

  // No sign-up without credentials: _users is admin-only, as CouchDB 3.5 creates it.
  await assert.rejects(Nano(base).use('_users').insert({ name, password: 'pw-' + name, roles: [], type: 'user' }, 'org.couchdb.user:' + name),
    (e) => e.statusCode === 401 && e.reason === 'You are not authorized to access this db.');
  // An admin creates the user; the password is stored hashed, and _auth's rules still hold.
  const created = await root.use('_users').insert({ name, password: 'pw-' + name, roles: [], type: 'user' }, 'org.couchdb.user:' + name);
  assert.ok(created.ok);
  await assert.rejects(root.use('_users').insert({ name: 'x' + name, password: 'p', roles: ['_admin'], type: 'user' }, 'org.couchdb.user:x' + name),
    (e) => e.statusCode === 403 && e.reason === 'No system roles (starting with underscore) in users db.');
  const stored = await root.use('_users').get('org.couchdb.user:' + name);
  assert.equal(stored.password, undefined);
  assert.equal(stored.password_scheme, 'pbkdf2');

  // Sign-in through nano.auth (POST /_session); the user may not read even their own document.
  const login = await Nano(base).auth(name, 'pw-' + name);
  assert.equal(login.name, name);
  await assert.rejects(Nano(withAuth(name, 'pw-' + name)).use('_users').get('org.couchdb.user:' + name),
    (e) => e.statusCode === 403 && e.reason === 'You are not allowed to access this db.');

  // A database the user belongs to, whose design document insists on authorship.
  const dbName = unique('vdu');
  await root.db.create(dbName);
  await root.request({ db: dbName, path: '_security', method: 'PUT', body: { members: { names: [name] } } });
  await root.use(dbName).insert({
    validate_doc_update: "function (doc, old, user) { if (!doc._deleted && doc.author !== user.name) throw {forbidden: 'author must be ' + user.name}; }",
  }, '_design/authors');
  const db = Nano(withAuth(name, 'pw-' + name)).use(dbName);
  await assert.rejects(db.insert({ text: 'anonymous' }), (e) => e.statusCode === 403 && e.error === 'forbidden' && e.reason === 'author must be ' + name);
  assert.ok((await db.insert({ text: 'signed', author: name }, 'ok')).ok);
  const rows = await db.bulk({ docs: [{ _id: 'b1', author: name }, { _id: 'b2' }] });
  assert.equal(rows[0].ok, true);
  assert.equal(rows[1].error, 'forbidden');

  // PouchDB pushing into it: the rejected document is a 'denied' event and a write failure, the rest arrives.
  const local = new PouchDB(unique('local'), { adapter: 'memory' });
  await local.bulkDocs([{ _id: 'p1', author: name }, { _id: 'p2', author: 'someone else' }]);
  const remote = new PouchDB(`${base}/${dbName}`, { auth: { username: name, password: 'pw-' + name } });
  const denied = [];
  const result = await local.replicate.to(remote).on('denied', (e) => denied.push(e));
  assert.equal(result.docs_written, 1);
  assert.equal(result.doc_write_failures, 1);
  assert.equal(denied.length, 1);
  assert.equal((await remote.get('p1')).author, name);
  await assert.rejects(remote.get('p2'), (e) => e.status === 404);
});
