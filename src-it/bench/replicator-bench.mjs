// The replicator measured (not timed in a test): docs/s and peak RSS of both processes for
// 100,000 documents of ~300 bytes one-shot Chaise -> Chaise into an empty target (pull and push),
// the same workload with pouchdb-server's replicator, 1 GB of attachments pushed by a server at
// -Xmx512m, and the CPU an idle continuous replication costs. Results go to docs/benchmarks.md.
//
//   cd src-it && node bench/replicator-bench.mjs [--docs 100000] [--att-mb 10] [--atts 100] [--idle-s 60] [--phases docs,pouch,atts,idle]
//
// Needs server/target/chaise.jar (./mvnw -pl server -am package -DskipTests) and src-it/replicator's
// node_modules (npm ci --ignore-scripts there). Peak RSS is VmHWM from /proc, reset (clear_refs 5)
// before each measured phase, so it is the phase's own peak; this needs Linux and the right to write
// /proc/PID/clear_refs (root or the same user).
import { readFileSync, writeFileSync } from 'node:fs';
import { Chaise, PouchServer, sleep } from '../replicator/peers.mjs';

const args = Object.fromEntries(process.argv.slice(2).reduce((acc, a, i, all) => (a.startsWith('--') ? [...acc, [a.slice(2), all[i + 1]]] : acc), []));
const N = Number(args.docs ?? 100_000);
const ATT_MB = Number(args['att-mb'] ?? 10);
const ATTS = Number(args.atts ?? 100);
const IDLE_S = Number(args['idle-s'] ?? 60);
const PHASES = (args.phases ?? 'docs,pouch,atts,idle').split(',');
const procs = [];
const out = (o) => console.log(JSON.stringify(o));

const hwmMb = (pid) => Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;
const resetHwm = (pid) => { try { writeFileSync(`/proc/${pid}/clear_refs`, '5'); } catch { /* not allowed: the peak then includes loading */ } };
const ticks = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' '); return Number(f[11]) + Number(f[12]); };

function docsBatch(from, to) {
  const docs = [];
  for (let i = from; i < to; i++) {
    docs.push({ _id: `doc-${String(i).padStart(8, '0')}`, type: ['a', 'b', 'c'][i % 3], n: i, title: `document number ${i}`,
      tags: ['alpha', 'beta', 'gamma'], text: 'lorem ipsum dolor sit amet '.repeat(7).slice(0, 180) });
  }
  return docs;
}

async function load(server, db) {
  const r0 = await server.req('PUT', `/${db}`);
  if (r0.status >= 300) throw new Error(r0.text);
  for (let i = 0; i < N; i += 1000) {
    const r = await server.req('POST', `/${db}/_bulk_docs`, { docs: docsBatch(i, Math.min(N, i + 1000)) });
    if (r.status !== 201) throw new Error(r.text);
  }
}

/**
 * One replication, timed: docs/s, each process's peak RSS during it, and the CPU each used
 * (seconds of one core), which on a shared machine says more than the wall time: at two free
 * cores the same work would run at about docs / (total CPU seconds / 2).
 */
async function timed(label, on, body, pids, count) {
  pids.forEach(resetHwm);
  const c0 = pids.map(ticks);
  const t0 = process.hrtime.bigint();
  const r = await on.req('POST', '/_replicate', body);
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  if (r.status !== 200) throw new Error(`${label}: ${r.text}`);
  const cpu = pids.map((p, i) => (ticks(p) - c0[i]) / 100);
  const h = r.json.history?.[0] ?? {};
  const n = count ?? h.docs_written;
  const total = cpu.reduce((a, b) => a + b, 0);
  out({ phase: label, docs_written: h.docs_written, seconds: +s.toFixed(2), docs_per_s: Math.round(n / s), peak_rss_mb: pids.map((p) => Math.round(hwmMb(p))),
    cpu_s: cpu.map((c) => +c.toFixed(1)), cpu_us_per_doc: Math.round((total * 1e6) / n), docs_per_s_at_two_free_cores: Math.round(n / (total / 2)) });
  return { s, r };
}

try {
  if (PHASES.includes('docs') || PHASES.includes('idle')) {
    const a = await new Chaise('bench-a', { onDisk: true }).start();
    const b = await new Chaise('bench-b', { onDisk: true }).start();
    procs.push(a, b);
    await load(a, 'src');
    const size = (await a.req('GET', '/src')).json.sizes.external;
    out({ phase: 'load', docs: N, avg_json_bytes: Math.round(size / N) });
    if (PHASES.includes('docs')) {
      await timed('chaise pull (replicator on the target)', b, { source: a.url('src'), target: 'pulled', create_target: true }, [a.proc.pid, b.proc.pid]);
      await timed('chaise push (replicator on the source)', a, { source: 'src', target: b.url('pushed'), create_target: true }, [a.proc.pid, b.proc.pid]);
      await timed('chaise local to local', a, { source: 'src', target: 'copy', create_target: true }, [a.proc.pid]);
    }
    if (PHASES.includes('idle')) {
      const measure = async (label) => {
        const t0 = [ticks(a.proc.pid), ticks(b.proc.pid)];
        await sleep(IDLE_S * 1000);
        const t1 = [ticks(a.proc.pid), ticks(b.proc.pid)];
        // USER_HZ is 100 on Linux: ticks per second of one core
        out({ phase: label, seconds: IDLE_S, core_percent: t1.map((t, i) => +((t - t0[i]) / IDLE_S).toFixed(2)) });
      };
      await sleep(10_000);
      await measure('idle servers, no replication');
      const r = await b.req('POST', '/_replicate', { source: a.url('src'), target: 'pulled', continuous: true });
      await sleep(10_000);
      await measure('idle servers, one continuous replication a -> b');
      await b.req('POST', '/_replicate', { replication_id: r.json._local_id, cancel: true });
      const r2 = await a.req('POST', '/_replicate', { source: 'src', target: 'copy2', continuous: true, create_target: true });
      await sleep(20_000);
      await measure('idle servers, one continuous local replication on a');
      await a.req('POST', '/_replicate', { replication_id: r2.json._local_id, cancel: true });
    }
    await a.close();
    await b.close();
  }

  if (PHASES.includes('pouch')) {
    const p1 = await new PouchServer().start();
    const p2 = await new PouchServer().start();
    procs.push(p1, p2);
    await load(p1, 'src');
    await timed('pouchdb-server pull (its replicator on the target)', p2, { source: p1.url('src'), target: 'pulled', create_target: true }, [p1.proc.pid, p2.proc.pid], N);
    await p1.close();
    await p2.close();
  }

  if (PHASES.includes('atts')) {
    const a = await new Chaise('bench-atts-a', { onDisk: true, jvmOpts: '-Xmx512m' }).start();
    const b = await new Chaise('bench-atts-b', { onDisk: true, jvmOpts: '-Xmx512m' }).start();
    procs.push(a, b);
    await a.req('PUT', '/atts');
    const blob = Buffer.alloc(ATT_MB * 1024 * 1024);
    for (let i = 0; i < ATTS; i++) {
      blob.writeUInt32BE(i, 0); // each body its own digest
      for (let k = 4; k < blob.length; k += 4096) blob[k] = (i * 31 + k) & 0xff;
      const r = await a.req('PUT', `/atts/doc-${i}/body.bin`, blob, { 'Content-Type': 'application/octet-stream' });
      if (r.status !== 201) throw new Error(r.text);
    }
    const mb = ATTS * ATT_MB;
    const { s } = await timed(`chaise push of ${mb} MB of attachments (${ATTS} x ${ATT_MB} MB), both at -Xmx512m`, a,
      { source: 'atts', target: b.url('atts'), create_target: true }, [a.proc.pid, b.proc.pid], ATTS);
    out({ phase: 'attachments throughput', mb_per_s: +(mb / s).toFixed(1) });
    const { s: s2 } = await timed(`chaise pull of ${mb} MB of attachments, both at -Xmx512m`, b,
      { source: a.url('atts'), target: 'atts2', create_target: true }, [a.proc.pid, b.proc.pid], ATTS);
    out({ phase: 'attachments throughput (pull)', mb_per_s: +(mb / s2).toFixed(1) });
    await a.close();
    await b.close();
  }
} finally {
  for (const p of procs) { try { await p.close(); } catch { /* gone */ } }
}
