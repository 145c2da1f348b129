// Load test (slow suite): at once, 1,000 kept-alive connections doing GETs, 200 slow clients
// sending their request heads a byte at a time, and 500 continuous _changes feeds, while a writer
// adds documents. Every feed must get every change exactly once; a probe opens a fresh connection
// for GET / twice a second and records its latency; the server's RSS is sampled. HttpLoadTest runs
// it against the jar (CHAISE_URL, CHAISE_ADMIN, CHAISE_PASSWORD, CHAISE_PID). LOAD_SECONDS (90)
// sets the length: past the 60 s request_head_timeout, so the slow clients are seen closed.
import net from 'node:net';
import http from 'node:http';
import fs from 'node:fs';
import { execFile } from 'node:child_process';

const base = new URL(process.env.CHAISE_URL);
const HOST = base.hostname;
const PORT = Number(base.port);
const AUTH = 'Basic ' + Buffer.from(`${process.env.CHAISE_ADMIN}:${process.env.CHAISE_PASSWORD}`).toString('base64');
const PID = process.env.CHAISE_PID;
const SECONDS = Number(process.env.LOAD_SECONDS || 90);
const GETTERS = Number(process.env.LOAD_GETTERS || 1000);
const SLOW = Number(process.env.LOAD_SLOW || 200);
const FEEDS = Number(process.env.LOAD_FEEDS || 500);
const DB = 'load';

const rssOf = (field = 'VmRSS') => {
  try {
    const m = fs.readFileSync(`/proc/${PID}/status`, 'utf8').match(new RegExp(`${field}:\\s+(\\d+) kB`));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
};
let peakRss = 0;
const sampler = setInterval(() => { peakRss = Math.max(peakRss, rssOf()); }, 250);
let stopping = false;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function request(method, path, body, agent = false) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: HOST, port: PORT, method, path, agent, headers: { Authorization: AUTH, 'Content-Type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    r.on('error', reject);
    r.setTimeout(30_000, () => r.destroy(new Error('timeout')));
    if (body) r.write(body);
    r.end();
  });
}

// ---------------------------------------------------------------- 1,000 kept-alive GETters on raw sockets
const getters = { open: 0, requests: 0, errors: 0, non200: 0 };
function getter(i) {
  const sock = net.connect({ host: HOST, port: PORT });
  let buf = Buffer.alloc(0);
  const send = () => sock.write(`GET /${DB}/seed${i % 10} HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH}\r\n\r\n`);
  sock.on('connect', () => { getters.open++; send(); });
  sock.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buf.subarray(0, end).toString('latin1');
      const len = Number((head.match(/content-length: (\d+)/i) || [0, 0])[1]);
      if (buf.length < end + 4 + len) return;
      if (!head.startsWith('HTTP/1.1 200')) getters.non200++;
      getters.requests++;
      buf = buf.subarray(end + 4 + len);
      if (!stopping) setTimeout(send, 500 + Math.random() * 1000);
    }
  });
  sock.on('error', () => { getters.errors++; });
  sock.on('close', () => { getters.open--; if (!stopping) getters.errors++; });
  return sock;
}

// ---------------------------------------------------------------- 200 slow clients
const slow = { open: 0, closedByServer: 0 };
function slowClient() {
  const sock = net.connect({ host: HOST, port: PORT });
  const head = `GET /${DB} HTTP/1.1\r\nHost: x\r\nX-Slow: ${'a'.repeat(1000)}\r\n\r\n`;
  let i = 0;
  let timer;
  sock.on('connect', () => {
    slow.open++;
    const drip = () => {
      if (stopping || i >= head.length - 4) return; // never finishes its head
      sock.write(head[i++]);
      timer = setTimeout(drip, 5_000);
    };
    drip();
  });
  sock.on('error', () => {});
  sock.on('close', () => {
    clearTimeout(timer);
    slow.open--;
    if (!stopping) {
      slow.closedByServer++;
      slowClient(); // and comes back
    }
  });
  return sock;
}

// ---------------------------------------------------------------- 500 continuous feeds
const feeds = [];
function feed(n) {
  const f = { seen: new Map(), lines: 0, errors: 0, ended: false };
  const req = http.get({ host: HOST, port: PORT, agent: false, path: `/${DB}/_changes?feed=continuous&since=0&heartbeat=5000`, headers: { Authorization: AUTH } }, (res) => {
    let rest = '';
    res.setEncoding('utf8');
    res.on('data', (d) => {
      rest += d;
      let nl;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, nl).trim();
        rest = rest.slice(nl + 1);
        if (!line) continue;
        const c = JSON.parse(line);
        if (c.id) f.seen.set(c.id, (f.seen.get(c.id) || 0) + 1);
        f.lines++;
      }
    });
    res.on('end', () => { f.ended = true; });
    res.on('error', () => { f.errors++; });
  });
  req.on('error', () => { f.errors++; f.ended = true; });
  f.req = req;
  feeds.push(f);
}

// ---------------------------------------------------------------- the probe
const probe = { count: 0, failures: 0, worstMs: 0, worstAfterRampMs: 0, over1s: 0, latencies: [] };
let rampedAt = Infinity; // 10 s after every connection was opened
// LOAD_DUMP_DIR: a probe pending for 2 s takes the server's thread dump there (once), to see what it waits on.
let dumped = false;
async function prober() {
  while (!stopping) {
    const t0 = process.hrtime.bigint();
    const watch = process.env.LOAD_DUMP_DIR && !dumped ? setTimeout(() => {
      dumped = true;
      const jcmd = process.env.JAVA_HOME ? `${process.env.JAVA_HOME}/bin/jcmd` : 'jcmd';
      execFile(jcmd, [PID, 'Thread.print'], { maxBuffer: 64 << 20 }, (e, out) => fs.writeFileSync(`${process.env.LOAD_DUMP_DIR}/stall-threads.txt`, e ? String(e) : out));
    }, 2000) : null;
    try {
      const r = await request('GET', '/');
      if (r.status !== 200) probe.failures++;
    } catch {
      probe.failures++;
    }
    clearTimeout(watch);
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    probe.count++;
    probe.latencies.push(ms);
    probe.worstMs = Math.max(probe.worstMs, ms);
    if (Date.now() > rampedAt) probe.worstAfterRampMs = Math.max(probe.worstAfterRampMs, ms);
    if (ms > 1000) probe.over1s++;
    await sleep(500);
  }
}

// ---------------------------------------------------------------- the writer
const written = [];
let writeErrors = 0;
async function writer() {
  let i = 0;
  while (!stopping) {
    const id = `w${String(i++).padStart(6, '0')}`;
    try {
      const r = await request('PUT', `/${DB}/${id}`, JSON.stringify({ i }));
      if (r.status === 201) written.push(id);
      else writeErrors++;
    } catch {
      writeErrors++;
    }
    await sleep(50);
  }
}

async function main() {
  await request('PUT', `/${DB}`);
  for (let i = 0; i < 10; i++) await request('PUT', `/${DB}/seed${i}`, JSON.stringify({ i }));
  const t0 = Date.now();
  for (let i = 0; i < FEEDS; i++) feed(i);
  const sockets = [];
  for (let i = 0; i < GETTERS; i++) sockets.push(getter(i));
  for (let i = 0; i < SLOW; i++) sockets.push(slowClient());
  rampedAt = Date.now() + 10_000;
  const probing = prober();
  const writing = writer();
  let heldMin = Infinity;
  let lastLog = 0;
  while (Date.now() - t0 < SECONDS * 1000) {
    await sleep(1000);
    if (Date.now() - t0 > 10_000) heldMin = Math.min(heldMin, getters.open);
    if (Date.now() - lastLog > 15_000) {
      lastLog = Date.now();
      console.log(`# ${Math.round((Date.now() - t0) / 1000)} s: getters open ${getters.open}, ${getters.requests} GETs; slow open ${slow.open}, closed by server ${slow.closedByServer}; feeds ${feeds.filter((f) => !f.ended).length}; written ${written.length}; probe worst ${probe.worstMs.toFixed(0)} ms; RSS ${(rssOf() / 1048576).toFixed(0)} MB`);
    }
  }
  // Writes stop; feeds get until they have caught up (at most 60 s).
  const stopWrites = Date.now();
  stopping = true;
  await writing;
  await probing;
  const wanted = new Set(written);
  for (let i = 0; i < 10; i++) wanted.add(`seed${i}`);
  while (Date.now() - stopWrites < 60_000 && feeds.some((f) => !f.ended && f.seen.size < wanted.size)) await sleep(500);
  const heldAtEnd = getters.open;
  let lost = 0;
  let duplicated = 0;
  let feedsEnded = 0;
  for (const f of feeds) {
    if (f.ended) feedsEnded++;
    for (const id of wanted) if (!f.seen.has(id)) lost++;
    for (const n of f.seen.values()) if (n > 1) duplicated++;
    f.req.destroy();
  }
  for (const s of sockets) s.destroy();
  clearInterval(sampler);
  const hwm = rssOf('VmHWM');
  const sorted = probe.latencies.slice().sort((a, b) => a - b);
  const summary = {
    seconds: SECONDS, getters: GETTERS, getters_held_min: heldMin, getters_held_at_end: heldAtEnd, gets: getters.requests, get_errors: getters.errors, get_non200: getters.non200,
    slow_clients: SLOW, slow_closed_by_server: slow.closedByServer, feeds: FEEDS, feeds_ended_early: feedsEnded, docs_written: written.length, write_errors: writeErrors,
    feed_changes_lost: lost, feed_changes_duplicated: duplicated, probe_count: probe.count, probe_failures: probe.failures,
    probe_worst_ms: Math.round(probe.worstMs), probe_worst_after_first_10s_ms: Math.round(probe.worstAfterRampMs), probe_p50_ms: Math.round(sorted[Math.floor(sorted.length / 2)] || 0), probe_p99_ms: Math.round(sorted[Math.floor(sorted.length * 0.99)] || 0),
    probe_over_1s: probe.over1s, peak_rss_mb: Math.round(Math.max(peakRss, hwm) / 1048576),
  };
  console.log('LOAD-SUMMARY ' + JSON.stringify(summary));
  const failures = [];
  if (lost || duplicated) failures.push(`feeds lost ${lost} and duplicated ${duplicated} changes`);
  if (feedsEnded) failures.push(`${feedsEnded} feeds ended`);
  if (probe.failures) failures.push(`${probe.failures} probes failed`);
  if (heldMin < GETTERS) failures.push(`kept-alive connections dropped to ${heldMin}`);
  if (getters.non200) failures.push(`${getters.non200} GETs were not 200`);
  if (SLOW && slow.closedByServer < SLOW && SECONDS > 70) failures.push(`only ${slow.closedByServer} slow clients were closed`);
  if (Math.max(peakRss, hwm) >= 1 << 30) failures.push('RSS reached 1 GB');
  if (probe.over1s) console.log(`NOTE ${probe.over1s} probes took over 1 s (recorded, not asserted: timing depends on the machine)`);
  for (const f of failures) console.log('FAIL ' + f);
  console.log(failures.length ? '0 passed, 1 failed' : '1 passed, 0 failed');
  process.exit(failures.length ? 1 : 0);
}
main().catch((e) => {
  console.log('FAIL ' + (e.stack || e));
  process.exit(1);
});
