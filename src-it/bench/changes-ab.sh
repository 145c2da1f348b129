#!/usr/bin/env bash
# An A/B of two server jars on couchbench's _changes phase (GET /couchbench_bulk/_changes?since=0,
# 100,000 rows), alternating: per run a fresh server and data directory (bench-server.sh), one
# couchbench bulk load, then WARM + RUNS changes phases on the warm server, of which the last RUNS
# count. ab-jars.sh measures the phase once, right after the load, mostly the JIT's work; this
# measures the warm feed. docs/benchmarks.md (issue 27, changes) has a run of it.
#
#   src-it/bench/changes-ab.sh before=/path/a.jar after=/path/b.jar [rounds, default 2]
#
# Environment: COUCHBENCH, WORK, PORT_BASE (default 26500), WARM (default 5), RUNS (default 10),
# OPTS_<label>, as in ab-jars.sh. Prints per run the median and range of rows/s and the server's
# CPU per response, all threads and less the JIT compiler threads.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
: "${WORK:=$(mktemp -d)}"
: "${PORT_BASE:=26500}"
: "${WARM:=5}"
: "${RUNS:=10}"
rounds="${3:-2}"
i=0
for _ in $(seq 1 "$rounds"); do
  for pair in "$1" "$2"; do
    i=$((i + 1))
    ab_side "$pair" "$i"
    start_bench_server "$jar" "$dir" "$((PORT_BASE + i))" "${side[@]}"
    node "$COUCHBENCH" --url "$url" --phases bulk --bulk-docs 100000 > "$dir/bulk.txt" 2>&1
    : > "$dir/changes.tsv"
    for n in $(seq 1 $((WARM + RUNS))); do
      j0=$(jit_cpu "$pid")
      node "$COUCHBENCH" --url "$url" --phases changes --server-pid "$pid" --json "$dir/changes-$n.json" > /dev/null 2>&1
      j1=$(jit_cpu "$pid")
      [ "$n" -gt "$WARM" ] && node -e '
        const r = JSON.parse(require("fs").readFileSync(process.argv[1]));
        const c = r.changes, cpu = (r.cpu && r.cpu.changes) || c.cpu || {};
        console.log([c.rows_per_s, cpu.server_cpu_s, (process.argv[2] - 0) / 100].join("\t"));' "$dir/changes-$n.json" "$((j1 - j0))" >> "$dir/changes.tsv"
    done
    kill "$pid"
    wait "$pid" || true
    sort -n "$dir/changes.tsv" | awk -v label="$label" -v run="$i" -v load="$(cut -d' ' -f1 /proc/loadavg)" '
      { rate[NR] = $1; cpu += $2; jit += $3 }
      END { printf "== run %d %s: rows/s median %.0f (%.0f-%.0f); server CPU per response %.0f ms, less JIT %.0f ms; load %s\n",
                   run, label, rate[int((NR + 1) / 2)], rate[1], rate[NR], cpu * 1000 / NR, (cpu - jit) * 1000 / NR, load }'
  done
done
