#!/usr/bin/env bash
# The server's first and second view builds of 100,000 documents as `./chaise start` runs it:
# bin/jvm.options, the start-up warm-ups on, and an AOT cache (JDK 25: JEPs 483, 514, 515) recorded
# by a training run or used. docs/benchmarks.md (issue 27, "view-build, second session") has runs of it.
#
#   src-it/bench/aot-view.sh <jar> record <cache> <out dir> <port> [training phases, default put,bulk,get,view]
#   src-it/bench/aot-view.sh <jar> use|none <cache> <out dir> <port>
#
# record: start with -XX:AOTCacheOutput, wait for the warm-ups, run couchbench's training phases
# (20,000 documents), stop with SIGTERM (the cache is written at exit). use (or none: no cache):
# wait for the warm-ups, run what side-by-side.sh runs before the view phase (a warm-up run, then
# put, bulk of 100,000 and get), then the view phase (build 1), a second database and its build
# (build 2); each build's server CPU, its JIT compiler threads' share, and the load average.
# The cache must be used with the jar path it was recorded with. JVM_OPTS adds JVM options.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
jar="$1"; mode="$2"; cache="$3"; dir="$4"; port="$5"; train="${6:-put,bulk,get,view}"
rm -rf "$dir"; mkdir -p "$dir"
case "$mode" in
  none) aot=() ;;
  record) rm -f "$cache"; aot=(-XX:AOTCacheOutput="$cache") ;;
  use) aot=(-XX:AOTCache="$cache") ;;
  *) echo "mode: record, use or none" >&2; exit 2 ;;
esac
# shellcheck disable=SC2086 # JVM_OPTS: extra JVM options, split on spaces
BENCH_WARMUPS=1 start_bench_server "$jar" "$dir" "$port" ${JVM_OPTS:-} "${aot[@]}"
for _ in $(seq 1 600); do grep -q "JavaScript engine warmed" "$dir/server.log" && break; sleep 0.5; done
echo "start and warm-ups: server CPU $(( $(awk '{print $14 + $15}' /proc/"$pid"/stat) * 10 )) ms"
# measure <label> <couchbench options...>: one couchbench run, the server's CPU over it and the JIT's part
measure() {
  local label="$1" c0 c1 jit
  shift
  thread_ticks > "$dir/$label.t0"; c0=$(awk '{print $14 + $15}' /proc/"$pid"/stat)
  node "$COUCHBENCH" --url "$url" "$@" > "$dir/$label.txt" 2>&1
  c1=$(awk '{print $14 + $15}' /proc/"$pid"/stat); thread_ticks > "$dir/$label.t1"
  jit=$(join "$dir/$label.t0" "$dir/$label.t1" | awk '$1 ~ /Compiler/ { s += $3 - $2 } END { print s * 10 }')
  echo "$label: $(grep -h '^VIEW' "$dir/$label.txt" | grep -o '"build_seconds":[0-9.]*'), server CPU $(( (c1 - c0) * 10 )) ms, JIT $jit ms, less JIT $(( (c1 - c0) * 10 - jit )) ms, load $(cut -d' ' -f1 /proc/loadavg)"
}
if [ "$mode" = record ]; then
  measure train --phases "$train" --put-docs 2000 --bulk-docs 20000 --get-seconds 3 --view-queries 20 --prefix train --cleanup
  kill -TERM "$pid"; wait "$pid" || true
  ls -l "$cache"
  exit 0
fi
node "$COUCHBENCH" --url "$url" --phases put,bulk --put-docs 2000 --bulk-docs 20000 --prefix warm --cleanup > "$dir/warm.txt" 2>&1
node "$COUCHBENCH" --url "$url" --phases put,bulk,get --put-docs 5000 --bulk-docs 100000 --get-seconds 5 > "$dir/before-view.txt" 2>&1
measure build1 --phases view --bulk-docs 100000 --view-queries 20
node "$COUCHBENCH" --url "$url" --phases bulk --bulk-docs 100000 --prefix second > "$dir/bulk2.txt" 2>&1
measure build2 --phases view --bulk-docs 100000 --view-queries 20 --prefix second
kill -TERM "$pid"; wait "$pid" || true
rm -rf "$dir/data"
