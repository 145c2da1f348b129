#!/usr/bin/env bash
# What HotSpot compiles in the first measured run after a start, phase by phase: the side-by-side
# protocol's first round (src-it/bench/side-by-side.sh) with JFR's compilation and deoptimization
# events. docs/benchmarks.md (issue 27, "first-round JIT") has runs of it.
#
#   src-it/bench/first-round-jit.sh <jar> <out dir> [port, default 26600] [JVM options...]
#
# As `./chaise start` runs on JDK 25: an AOT cache recorded by one training run (the server's
# warm-ups, then couchbench's small run of every phase), then a fresh server on it with its
# warm-ups on, couchbench's warm-up run (put,bulk), idle, and PUT, bulk, GET and the view build
# each as its own couchbench run. JFR records in both runs (the cache needs the same modules).
# TRAIN_OPTS: JVM options for the training run alone; RUN_OPTS, for the measured run alone.
# Prints each phase's rate, server CPU and JIT CPU, then src-it/bench/first-round-jit.py's account
# of what C2 compiled in it.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
# shellcheck source=src-it/bench/bench-server.sh
source "$here/bench-server.sh"
# shellcheck source=src-it/bench/wait-idle.sh
source "$here/wait-idle.sh"
jar="$1"; out="$2"; port="${3:-26600}"
shift $(( $# < 3 ? $# : 3 ))
rm -rf "$out"; mkdir -p "$out/train" "$out/run"
cat > "$out/jit.jfc" <<'JFC'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0">
  <event name="jdk.Compilation"><setting name="enabled">true</setting><setting name="threshold">0 ms</setting></event>
  <event name="jdk.Deoptimization"><setting name="enabled">true</setting><setting name="stackTrace">false</setting></event>
</configuration>
JFC
# A jar with the write-path warm-up (after the others, once the compilers are idle) logs its end too.
# (grep -c reads to the end: with -q, unzip could die of SIGPIPE and pipefail fail the test.)
writes=0
if unzip -p "$jar" dev/chaise/server/Main.class | grep -ac 'write path warmed' > /dev/null; then writes=1; fi
warmed() {
  for _ in $(seq 1 240); do
    if grep -q "JavaScript engine warmed" "$1/server.log" && grep -q "request path warmed" "$1/server.log"; then
      [ "$writes" = 0 ] && return 0
      grep -q "write path" "$1/server.log" && return 0
    fi
    sleep 0.5
  done
}
# shellcheck disable=SC2086 # TRAIN_OPTS is a list of options
BENCH_WARMUPS=1 start_bench_server "$jar" "$out/train" "$port" -XX:AOTCacheOutput="$out/chaise.aot" \
  "-XX:StartFlightRecording:filename=$out/train/rec.jfr,settings=$out/jit.jfc" ${TRAIN_OPTS:-} "$@"
warmed "$out/train"
node "$COUCHBENCH" --url "$url" --put-docs 2000 --bulk-docs 20000 --get-seconds 3 --cleanup > "$out/train/bench.txt" 2>&1
kill -TERM "$pid"; wait "$pid" || true
# shellcheck disable=SC2086 # RUN_OPTS is a list of options
BENCH_WARMUPS=1 start_bench_server "$jar" "$out/run" "$((port + 1))" -XX:AOTCache="$out/chaise.aot" \
  "-XX:StartFlightRecording:filename=$out/run/rec.jfr,settings=$out/jit.jfc" ${RUN_OPTS:-} "$@"
warmed "$out/run"
wait_idle "$pid" > /dev/null
node "$COUCHBENCH" --url "$url" --phases put,bulk --put-docs 2000 --bulk-docs 20000 --prefix warm --cleanup > "$out/run/warm.txt" 2>&1
wait_idle "$pid" > /dev/null
for phase in put bulk get view; do
  date +%s.%N > "$out/run/$phase.t0"
  j0=$(jit_cpu "$pid")
  node "$COUCHBENCH" --url "$url" --phases "$phase" --put-docs 5000 --bulk-docs 100000 --get-seconds 10 \
    --server-pid "$pid" --json "$out/run/$phase.json" > "$out/run/$phase.txt" 2>&1
  j1=$(jit_cpu "$pid")
  date +%s.%N > "$out/run/$phase.t1"
  echo "$phase: $(grep -E '^(PUT|BULK|GET|VIEW)' "$out/run/$phase.txt" | cut -c8-120) server_cpu_s $(grep -o '"server_cpu_s":[0-9.]*' "$out/run/$phase.txt" | cut -d: -f2) jit_cpu_s $(awk -v a="$j0" -v b="$j1" 'BEGIN { printf "%.2f", (b - a) / 100 }')"
done
kill "$pid"; wait "$pid" || true
echo "AOT cache errors: $(grep -c 'error\]\[aot' "$out/run/server.log" || true)"
"$jdk/bin/jfr" print --json --events jdk.Compilation,jdk.Deoptimization "$out/run/rec.jfr" > "$out/run/jit.json"
python3 "$here/first-round-jit.py" "$out/run"
