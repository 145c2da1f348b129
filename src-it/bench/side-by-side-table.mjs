// The table of docs/benchmarks.md's side-by-side runs, from side-by-side.sh's results:
//   node src-it/bench/side-by-side-table.mjs WORK [reference label, default couchdb]
// Per server and phase: the range over rounds of the throughput (or p50), and the server's CPU
// per request or document where couchbench measured it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, ref = 'couchdb'] = process.argv.slice(2);
const runs = {};
for (const f of readdirSync(dir)) {
  const m = /^(.+)-(\d+)\.json$/.exec(f);
  if (!m) continue;
  (runs[m[1]] ??= []).push(JSON.parse(readFileSync(join(dir, f), 'utf8')));
}
const cpu = (p, n, unit) => (p?.cpu?.server_cpu_s && n ? (p.cpu.server_cpu_s / n) * unit : null);
// [name, figure, higher is better, server CPU per unit, unit name]
const rows = [
  ['PUT, docs/s', r => r.put?.docs_per_s, true, r => cpu(r.put, r.put?.docs, 1e3), 'ms/PUT'],
  ['_bulk_docs, docs/s', r => r.bulk?.docs_per_s, true, r => cpu(r.bulk, r.bulk?.docs, 1e6), 'µs/doc'],
  ['GET, req/s', r => r.get?.req_per_s, true, r => cpu(r.get, r.get?.requests, 1e6), 'µs/GET'],
  ['view build, s', r => r.view?.build_seconds, false, () => null],
  ['view query group=true p50, ms', r => r.view?.query_group_true?.p50_ms, false, () => null],
  ['reduce _stats range p50, ms', r => r.reduce?.query_range_stats?.p50_ms, false, () => null],
  ['reduce JS all p50, ms', r => r.reduce?.query_all_js?.p50_ms, false, () => null],
  ['_find sorted limit 25 p50, ms', r => r.find?.query_sorted_limit25?.p50_ms, false, () => null],
  ['_changes, rows/s', r => r.changes?.rows_per_s, true, () => null],
];
const labels = Object.keys(runs);
const fmt = v => (v == null ? '–' : v >= 100 ? Math.round(v).toLocaleString('en') : String(+v.toFixed(2)));
const range = vs => {
  const xs = vs.filter(v => v != null);
  if (!xs.length) return null;
  return [Math.min(...xs), Math.max(...xs)];
};
const show = r => (r ? (fmt(r[0]) === fmt(r[1]) ? fmt(r[0]) : `${fmt(r[0])}–${fmt(r[1])}`) : '–');
console.log(`| phase | ${labels.join(' | ')} | ${labels.filter(l => l !== ref).map(l => `${l} ÷ ${ref}`).join(' | ')} |`);
console.log(`|---|${labels.map(() => '---').join('|')}|${labels.filter(l => l !== ref).map(() => '---').join('|')}|`);
for (const [name, f, higher, c, unit] of rows) {
  const cells = labels.map(l => {
    const fig = show(range(runs[l].map(f)));
    const cp = range(runs[l].map(c));
    return cp ? `${fig} (${show(cp)} ${unit})` : fig;
  });
  const refR = runs[ref] ? range(runs[ref].map(f)) : null;
  const ratios = labels.filter(l => l !== ref).map(l => {
    const me = range(runs[l].map(f));
    if (!me || !refR) return '–';
    const lo = higher ? me[0] / refR[1] : refR[0] / me[1];
    const hi = higher ? me[1] / refR[0] : refR[1] / me[0];
    return `${lo.toFixed(1)}–${hi.toFixed(1)}×`;
  });
  console.log(`| ${name} | ${cells.join(' | ')} | ${ratios.join(' | ')} |`);
}
