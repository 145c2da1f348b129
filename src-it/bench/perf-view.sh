#!/usr/bin/env bash
# Where a view build spends its CPU, with Linux perf (as perf-phases.sh: Java, RocksDB and kernel
# frames by thread). One warm-up round (bulk 100,000 documents, build the view), then a second
# database loaded and its build recorded; couchbench's build_seconds and server CPU are printed.
#
#   [PERF=0] [WARM_ROUNDS=1] [JVM_OPTS=...] src-it/bench/perf-view.sh <jar> <out dir> [port, default 26421] [docs, default 100000]
#
# Read with
#   cp <out>/view.map /tmp/perf-<pid>.map; perf script -i <out>/view.data > view.script
#   python3 src-it/bench/perf-frames.py view.script [--under FRAME]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
jar="$1"; out="$2"; port="${3:-26421}"; docs="${4:-100000}"
rm -rf "$out"; mkdir -p "$out"
# shellcheck disable=SC2086 # JVM_OPTS: extra JVM options, split on spaces
start_bench_server "$jar" "$out" "$port" -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints ${JVM_OPTS:-}
# WARM_ROUNDS=n: n warm-up rounds, each on a database of its own (the build recorded is then the n+1-th)
for w in $(seq 1 "${WARM_ROUNDS:-1}"); do
  node "$COUCHBENCH" --url "$url" --phases bulk,view --bulk-docs "$docs" --view-queries 20 --prefix "warm$w" > "$out/warm$w.txt" 2>&1
  echo "== warm-up $w (build $w): $(grep -h 'VIEW' "$out/warm$w.txt" | grep -o '"build_seconds":[0-9.]*')"
done
node "$COUCHBENCH" --url "$url" --phases bulk --bulk-docs "$docs" > "$out/bulk.txt" 2>&1
echo "-- view phase starts" >> "$out/server.log"
"$jdk/bin/jcmd" "$pid" Compiler.perfmap > /dev/null
thread_ticks > "$out/view.t0"
cpu0=$(awk '{print $14 + $15}' /proc/"$pid"/stat)
# PERF=0: no recording, for A/B runs of the CPU figures alone
if [ "${PERF:-1}" != 0 ]; then
  perf record -F 997 -g -p "$pid" -o "$out/view.data" 2> "$out/view.perf.log" &
  perf_pid=$!
  sleep 0.5
fi
node "$COUCHBENCH" --url "$url" --phases view --bulk-docs "$docs" --view-queries 20 > "$out/view.txt" 2>&1
if [ "${PERF:-1}" != 0 ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
cpu1=$(awk '{print $14 + $15}' /proc/"$pid"/stat)
thread_ticks > "$out/view.t1"
"$jdk/bin/jcmd" "$pid" Compiler.perfmap > /dev/null
cp "/tmp/perf-$pid.map" "$out/view.map"
echo "== view (build $(( ${WARM_ROUNDS:-1} + 1 )), warm): $(grep -h 'VIEW' "$out/view.txt" | grep -o '"build_seconds":[0-9.]*'), server CPU over the phase $(( (cpu1 - cpu0) * 10 )) ms"
jit=$(join "$out/view.t0" "$out/view.t1" | awk '$1 ~ /Compiler/ { s += $3 - $2 } END { print s * 10 }')
echo "   less JIT: $(( (cpu1 - cpu0) * 10 - jit )) ms (JIT $jit ms)"
echo "   CPU by thread (1/100 s): $(thread_top "$out/view.t0" "$out/view.t1")"
kill "$pid"; wait "$pid" || true
echo "server pid was $pid (for /tmp/perf-$pid.map)"
