#!/usr/bin/env bash
# Where a warm server spends its CPU, phase by phase (PUT, bulk, GET), with Linux perf: Java frames
# (a JIT perf map from jcmd Compiler.perfmap), RocksDB's native frames and the kernel's, by
# thread. docs/benchmarks.md (issue 27) has a run of it.
#
#   src-it/bench/perf-phases.sh <jar> <out dir> [port, default 26411]
#
# PHASES (default "put bulk get", space or comma separated) picks the phases profiled.
#
# Warm-up: three couchbench put,bulk runs and 15 s of GETs (one leaves the JIT compiling through
# the measured phases). Then, per phase, `perf record -g` on the server while couchbench runs it,
# the perf map saved beside the data, and /proc's CPU per thread before and after. Read with
#   cp <out>/<phase>.map /tmp/perf-<pid>.map; perf script -i <out>/<phase>.data > <phase>.script
#   python3 src-it/bench/perf-frames.py <phase>.script
# The profile runs with -XX:+PreserveFramePointer (perf walks Java stacks by frame pointer).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
jar="$1"; out="$2"; port="${3:-26411}"
: "${PHASES:=put bulk get}"
rm -rf "$out"; mkdir -p "$out"
start_bench_server "$jar" "$out" "$port" -XX:+PreserveFramePointer -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints
for _ in 1 2 3; do node "$COUCHBENCH" --url "$url" --phases put,bulk --put-docs 5000 --bulk-docs 20000 --prefix warm > "$out/warm.txt" 2>&1; done
node "$COUCHBENCH" --url "$url" --phases get --get-seconds 15 --bulk-docs 20000 --prefix warm >> "$out/warm.txt" 2>&1
for phase in ${PHASES//,/ }; do
  thread_ticks > "$out/$phase.t0"
  perf record -F 997 -g -p "$pid" -o "$out/$phase.data" 2> "$out/$phase.perf.log" &
  perf_pid=$!
  sleep 0.5
  node "$COUCHBENCH" --url "$url" --phases "$phase" --put-docs 5000 --bulk-docs 100000 --get-seconds 10 --server-pid "$pid" > "$out/$phase.txt" 2>&1
  kill -INT "$perf_pid"; wait "$perf_pid" || true
  thread_ticks > "$out/$phase.t1"
  "$jdk/bin/jcmd" "$pid" Compiler.perfmap > /dev/null
  cp "/tmp/perf-$pid.map" "$out/$phase.map"
  echo "== $phase: $(grep -h '"server_cpu_s"' "$out/$phase.txt" | sed 's/^ *//')"
  echo "   CPU by thread (1/100 s): $(thread_top "$out/$phase.t0" "$out/$phase.t1")"
done
kill "$pid"; wait "$pid" || true
echo "server pid was $pid (for /tmp/perf-$pid.map)"
