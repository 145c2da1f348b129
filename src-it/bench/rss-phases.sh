#!/usr/bin/env bash
# Peak RSS of one server jar over couchbench's full workload, run twice, and where it goes: per
# phase the highest VmRSS sampled while it ran (every 0.2 s) and VmHWM after it, and after each
# run /proc/PID/smaps_rollup and, with NMT=1, the JVM's own account (jcmd VM.native_memory summary).
#
#   src-it/bench/rss-phases.sh <jar> <dir> <port> [JVM options after bin/jvm.options...]
#
# A fresh data directory in <dir>; the server's own warm-ups on (the defaults, as ./chaise start
# runs it); the environment (MALLOC_ARENA_MAX=2, say) passes to the server. Prints one line per phase: "run phase max_rss_mb hwm_mb". docs/benchmarks.md (issue 27,
# rss) has its figures.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
: "${NMT:=0}"
jar="$1" dir="$2" port="$3"
shift 3
rm -rf "$dir"
mkdir -p "$dir"
nmt=()
[ "$NMT" = 1 ] && nmt=(-XX:NativeMemoryTracking=summary)
BENCH_WARMUPS=1 start_bench_server "$jar" "$dir" "$port" "${nmt[@]}" "$@"
echo "$pid" > "$dir/pid"
kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
echo "start $(( $(kb VmRSS) / 1024 )) $(( $(kb VmHWM) / 1024 ))"
for run in 1 2; do
  for phase in root put bulk get view reduce find changes; do
    ( while :; do kb VmRSS; sleep 0.2; done ) > "$dir/rss-$run-$phase.txt" 2>/dev/null &
    sampler=$!
    node "$COUCHBENCH" --url "$url" --phases "$phase" --server-pid "$pid" > "$dir/out-$run-$phase.txt" 2>&1
    kill "$sampler"; wait "$sampler" 2>/dev/null || true
    echo "$run $phase $(( $(sort -n "$dir/rss-$run-$phase.txt" | tail -1) / 1024 )) $(( $(kb VmHWM) / 1024 ))"
  done
  cat "/proc/$pid/smaps_rollup" > "$dir/smaps-$run.txt"
  [ "$NMT" = 1 ] && "$jdk/bin/jcmd" "$pid" VM.native_memory summary > "$dir/nmt-$run.txt"
done
echo "peak $(( $(kb VmHWM) / 1024 )) MiB ($(kb VmHWM) kB)"
kill "$pid"; wait "$pid" 2>/dev/null || true
