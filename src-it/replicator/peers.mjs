// Real peers for the replicator's end-to-end tests: Chaise servers started from the built jar (as
// users run it, in memory or on disk, killed with any signal and started again on the same port
// and data), pouchdb-server in memory, and a counting proxy. Every process is ours and stopped at exit.
import { spawn } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import { createServer as netServer } from 'node:net';
import { mkdtempSync, writeFileSync, rmSync, openSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const JAR = process.env.CHAISE_JAR ?? join(here, '..', '..', 'server', 'target', 'chaise.jar');
const JAVA = process.env.CHAISE_JAVA ?? 'java';
const LOGS = process.env.CHAISE_LOGS ?? join(here, '..', 'target');
const children = new Set();
process.on('exit', () => { for (const c of children) { try { c.kill('SIGKILL'); } catch { /* gone */ } } });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function freePort() {
  return new Promise((resolve) => {
    const s = netServer();
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

async function waitUp(url, proc, what) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}`);
    try {
      const r = await fetch(url);
      if (r.status < 500) return;
    } catch { /* not listening yet */ }
    await sleep(200);
  }
  throw new Error(`${what} did not come up within 90 s`);
}

/** A Chaise server from the jar; `onDisk` keeps its data across kill and start, on the same port. */
export class Chaise {
  constructor(name, { onDisk = false, ini = '', jvmOpts = '' } = {}) {
    this.name = name;
    this.jvmOpts = jvmOpts;
    this.onDisk = onDisk;
    this.extraIni = ini;
    this.password = 'pw' + Math.floor(Math.random() * 1e9);
    this.dir = mkdtempSync(join(tmpdir(), `chaise-${name}-`));
  }

  async start() {
    this.port ??= await freePort();
    const storage = this.onDisk ? `storage = embedded\ndata_dir = ${join(this.dir, 'data')}` : 'storage = embedded-memory';
    const ini = join(this.dir, 'local.ini');
    writeFileSync(ini, `[chaise]\n${storage}\njs_warmup_docs = 0\n${this.extraIni}\n[chttpd]\nbind_address = 127.0.0.1\nport = ${this.port}\n`);
    const log = openSync(join(LOGS, `replicator-${this.name}.log`), 'a');
    this.proc = spawn(JAVA, ['--enable-native-access=ALL-UNNAMED', ...`${process.env.CHAISE_JVM_OPTS ?? ''} ${this.jvmOpts}`.split(' ').filter(Boolean), '-jar', JAR, '--config', ini], {
      env: { ...process.env, COUCHDB_USER: 'admin', COUCHDB_PASSWORD: this.password },
      stdio: ['ignore', log, log],
    });
    children.add(this.proc);
    this.proc.on('exit', () => children.delete(this.proc));
    await waitUp(`http://127.0.0.1:${this.port}/_up`, this.proc, `chaise ${this.name}`);
    return this;
  }

  /** Stops the process with `signal` and waits for it to be gone. */
  async kill(signal = 'SIGTERM') {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode) return;
    const gone = new Promise((r) => this.proc.once('exit', r));
    this.proc.kill(signal);
    await gone;
  }

  async close() {
    await this.kill('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }

  get base() { return `http://127.0.0.1:${this.port}`; }
  /** A database's URL with the admin's credentials, as a replication names a remote endpoint. */
  url(db) { return `http://admin:${this.password}@127.0.0.1:${this.port}/${encodeURIComponent(db)}`; }
  get auth() { return 'Basic ' + Buffer.from(`admin:${this.password}`).toString('base64'); }

  async req(method, path, body, headers = {}) {
    const h = { Authorization: this.auth, Accept: 'application/json', ...headers };
    let payload = body;
    if (body !== undefined && !(body instanceof Uint8Array) && typeof body !== 'string') {
      payload = JSON.stringify(body);
      h['Content-Type'] ??= 'application/json';
    }
    const r = await fetch(this.base + path, { method, headers: h, body: payload });
    const text = await r.text();
    let json;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: r.status, json, text };
  }
}

/** pouchdb-server from npm, every database in memory. */
export class PouchServer {
  async start() {
    this.port = await freePort();
    const bin = join(here, 'node_modules', 'pouchdb-server', 'bin', 'pouchdb-server');
    this.dir = mkdtempSync(join(tmpdir(), 'pouchdb-server-'));
    const log = openSync(join(LOGS, 'replicator-pouchdb-server.log'), 'a');
    this.proc = spawn(process.execPath, [bin, '--in-memory', '--port', String(this.port), '--host', '127.0.0.1', '--dir', this.dir], {
      cwd: this.dir, stdio: ['ignore', log, log],
    });
    children.add(this.proc);
    await waitUp(`http://127.0.0.1:${this.port}/`, this.proc, 'pouchdb-server');
    return this;
  }

  get base() { return `http://127.0.0.1:${this.port}`; }
  url(db) { return `${this.base}/${encodeURIComponent(db)}`; }

  async req(method, path, body) {
    const r = await fetch(this.base + path, {
      method, headers: { 'Content-Type': 'application/json', Accept: 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: r.status, json, text };
  }

  async close() {
    if (this.proc.exitCode === null) {
      const gone = new Promise((r) => this.proc.once('exit', r));
      this.proc.kill('SIGKILL');
      await gone;
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/**
 * A proxy in front of a server that records which document ids the replicator fetched
 * (_bulk_get bodies, open_revs GETs), so a test can count what was sent twice.
 */
export class CountingProxy {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.fetched = [];
  }

  async start() {
    this.server = createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const u = new URL(req.url, 'http://x');
        if (u.pathname.endsWith('/_bulk_get')) {
          try { for (const d of JSON.parse(body).docs) this.fetched.push(d.id); } catch { /* not ours to judge */ }
        } else if (req.method === 'GET' && u.searchParams.has('open_revs')) {
          this.fetched.push(decodeURIComponent(u.pathname.split('/').slice(2).join('/')));
        }
        const up = httpRequest({ host: '127.0.0.1', port: this.targetPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode, r.headers);
          r.pipe(res);
        });
        up.on('error', () => { res.destroy(); });
        up.end(body);
      });
    });
    await new Promise((r) => this.server.listen(0, '127.0.0.1', r));
    this.port = this.server.address().port;
    return this;
  }

  url(db, password) { return `http://admin:${password}@127.0.0.1:${this.port}/${encodeURIComponent(db)}`; }

  async close() { this.server.closeAllConnections?.(); await new Promise((r) => this.server.close(r)); }
}

export async function waitFor(check, ms, what = 'condition') {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await sleep(100);
  }
  throw new Error(`${what} not reached within ${ms} ms (last: ${JSON.stringify(last)})`);
}

/**
 * Every document of a database as a replication must keep it: all leaves with bodies,
 * _revisions and attachment digests (revpos left out: it is where the attachment was added on
 * this server), and each winner's _conflicts; fetched with _bulk_get in pages.
 */
export async function snapshot(server, db) {
  const out = {};
  const all = await server.req('GET', `/${db}/_all_docs?include_docs=true&conflicts=true`);
  const changes = await server.req('GET', `/${db}/_changes?style=all_docs`);
  const ids = changes.json.results.map((r) => r.id).sort();
  const conflicts = Object.fromEntries(all.json.rows.map((r) => [r.id, (r.doc._conflicts ?? []).slice().sort()]));
  for (let i = 0; i < ids.length; i += 500) {
    const page = ids.slice(i, i + 500);
    const r = await server.req('POST', `/${db}/_bulk_get?revs=true`, { docs: page.map((id) => ({ id })) });
    for (const res of r.json.results) {
      const leaves = res.docs.map((d) => {
        const doc = d.ok;
        if (!doc) return JSON.stringify(d);
        if (doc._attachments) {
          for (const a of Object.values(doc._attachments)) { delete a.revpos; delete a.stub; delete a.encoding; delete a.encoded_length; }
        }
        return JSON.stringify(sortKeys(doc));
      }).sort();
      out[res.id] = { leaves, conflicts: conflicts[res.id] ?? null };
    }
  }
  return out;
}

function sortKeys(v) {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sortKeys(v[k])]));
  return v;
}
