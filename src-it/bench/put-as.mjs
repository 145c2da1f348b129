// One client's sequential single-document PUTs as one user, with `_access` naming that user (issue
// 28: the cost of an access database's rules against a plain one, for an admin and for a user).
//   node src-it/bench/put-as.mjs URL USER:PASSWORD DB N     -> p50 and p90 of N PUTs
// Server CPU per PUT: read the server's utime+stime from /proc/PID/stat before and after.
// Node standard library only.
import http from 'node:http';
const [url, auth, db, n] = process.argv.slice(2);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const u = new URL(url);
function req(method, path, body) {
  return new Promise((res, rej) => {
    const r = http.request({ host: u.hostname, port: u.port, method, path, agent,
      headers: { 'Authorization': 'Basic ' + Buffer.from(auth).toString('base64'), 'Content-Type': 'application/json' } }, (s) => {
      let d = ''; s.on('data', c => d += c); s.on('end', () => res([s.statusCode, d]));
    });
    r.on('error', rej); if (body) r.write(body); r.end();
  });
}
const times = [];
for (let i = 0; i < +n; i++) {
  const t = process.hrtime.bigint();
  const [st, d] = await req('PUT', `/${db}/${auth.split(':')[0]}-${Date.now()}-${i}`, JSON.stringify({ v: i, _access: [auth.split(':')[0]] }));
  if (st >= 300) { console.log(st, d); process.exit(1); }
  times.push(Number(process.hrtime.bigint() - t) / 1e6);
}
times.sort((a, b) => a - b);
console.log(auth.split(':')[0], db, 'p50', times[times.length >> 1].toFixed(2), 'ms', 'p90', times[Math.floor(times.length * 0.9)].toFixed(2));
