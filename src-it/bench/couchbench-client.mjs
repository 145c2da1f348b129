// What the load scripts here share: an authenticated JSON client, and couchbench's bulk-phase
// documents (about 300 bytes each, ids b0000000..., the same every run) as _bulk_docs bodies of 1,000.
export const TYPES = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta', 'theta', 'iota', 'kappa'];

/** A client of the server at `url` (credentials in it): call(method, path, body) gives the parsed JSON, throws on >= 300. */
export function client(url) {
  const auth = 'Basic ' + Buffer.from(decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password)).toString('base64');
  const base = url.origin;
  return async function call(method, path, body) {
    const r = await fetch(base + path, { method, headers: { Authorization: auth, 'Content-Type': 'application/json' }, body: body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body)) });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${path} -> ${r.status} ${text.slice(0, 200)}`);
    return JSON.parse(text);
  };
}

const FILL = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
function rng(seed) { let x = seed >>> 0 || 1; return () => { x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0; return x / 4294967296; }; }
function makeDoc(i, rand) {
  const d = { _id: 'b' + String(i).padStart(7, '0'), type: TYPES[i % TYPES.length], n: i, score: Math.floor(rand() * 1e6),
    tags: [TYPES[(i * 7) % 10], 'x' + (i % 100)], name: 'user-' + i, created: '2024-01-01T00:00:00Z', text: '' };
  let t = '';
  for (let k = Buffer.byteLength(JSON.stringify(d)); k < 300; k++) t += FILL[Math.floor(rand() * FILL.length)];
  d.text = t;
  return d;
}

/** `docs` documents as _bulk_docs bodies of 1,000. */
export function bulkBatches(docs) {
  const batches = [];
  const rand = rng(67890);
  for (let s = 0; s < docs; s += 1000) {
    const b = [];
    for (let i = s; i < Math.min(docs, s + 1000); i++) b.push(makeDoc(i, rand));
    batches.push(JSON.stringify({ docs: b }));
  }
  return batches;
}
