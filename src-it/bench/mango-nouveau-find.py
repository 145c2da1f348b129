#!/usr/bin/env python3
# _find on a Mango nouveau index next to a JSON index: 10,000 documents (name: two words, n: 0-1000, tags),
# a nouveau index on name:string and n:number and a JSON index on n, then 200 queries of each kind, limit 25:
# p50 and p90 wall-clock milliseconds (a loaded machine shows in them: give the load average with the numbers).
#   python3 src-it/bench/mango-nouveau-find.py http://127.0.0.1:PORT   (admin adm:pass; drops and creates /bench_nm)
import json, time, urllib.request, base64, random, sys
U = sys.argv[1]
AUTH = "Basic " + base64.b64encode(b"adm:pass").decode()
def req(method, path, body=None):
    r = urllib.request.Request(U + path, method=method, data=None if body is None else json.dumps(body).encode(),
                               headers={"Authorization": AUTH, "Content-Type": "application/json"})
    with urllib.request.urlopen(r) as resp:
        return json.loads(resp.read())
db = "/bench_nm"
try: req("DELETE", db)
except Exception: pass
req("PUT", db)
rnd = random.Random(1)
words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"]
for b in range(10):
    docs = [{"_id": "d%05d" % (b * 1000 + i), "name": rnd.choice(words) + " " + rnd.choice(words), "n": rnd.randint(0, 1000),
             "tags": [rnd.choice(words) for _ in range(3)]} for i in range(1000)]
    req("POST", db + "/_bulk_docs", {"docs": docs})
req("POST", db + "/_index", {"type": "nouveau", "index": {"fields": [{"name": "name", "type": "string"}, {"name": "n", "type": "number"}]}, "ddoc": "nv", "name": "nv"})
req("POST", db + "/_index", {"index": {"fields": ["n"]}, "ddoc": "js", "name": "js"})
t = time.time(); req("POST", db + "/_find", {"selector": {"n": {"$gt": 990}}, "use_index": "nv"}); print("first nouveau query (build of 10,000 docs): %.1f s" % (time.time() - t))
def run(label, body):
    ts = []
    for i in range(200):
        t = time.perf_counter(); r = req("POST", db + "/_find", body(i)); ts.append((time.perf_counter() - t) * 1000)
    ts.sort(); print("%-40s p50 %.1f ms  p90 %.1f ms  (%d docs last)" % (label, ts[100], ts[180], len(r["docs"])))
run("nouveau n $gt (limit 25)", lambda i: {"selector": {"n": {"$gt": i * 4}}, "use_index": "nv"})
run("json n $gt (limit 25)", lambda i: {"selector": {"n": {"$gt": i * 4}}, "use_index": "js"})
run("nouveau $text (limit 25)", lambda i: {"selector": {"$text": words[i % 8]}, "use_index": "nv"})
run("nouveau name eq (limit 25)", lambda i: {"selector": {"name": words[i % 8] + " " + words[(i // 8) % 8]}, "use_index": "nv"})
